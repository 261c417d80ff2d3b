"""Python side effects in a compiled step's own code, found by reading its bytecode.

A replay runs the step's array work and nothing else, so Python statements that change the
world outside the step would run on the traced calls only: a step counter, a history list,
an attribute of an outside object, an optimizer setting changed by hand. torch.compile
finds these by analysing the frame's bytecode as it runs; minigrad reads the bytecode of
the function once, before the first replay, and keeps the step eager when it finds one:

- assignments to a global (`global count; count += 1`) or an enclosing function's variable
  (`nonlocal`);
- assignments to an attribute or an item of an object that came from outside (a global,
  an enclosing variable, an argument, or a name taken from one: `for g in
  opt.param_groups: g["lr"] *= 0.9`), except `.grad`, which the trace records;
- calls of a mutating list, dict or set method on such an object (`history.append(...)`);
- print();
- calls of Python's or NumPy's random numbers and clocks (`random.random()`,
  `np.random.rand()`, `rng.normal()` on a captured generator, `time.time()`): a new value
  on every call, which a replay would keep at its traced value.

The functions the step calls are read the same way, with what they saw while the step was
traced (called.py).
"""

from __future__ import annotations

import ast
import builtins
import copy
import dis
import functools
import inspect
import random
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

MUTATORS = frozenset(
    "append extend insert pop remove clear update setdefault popitem add discard sort "
    "reverse appendleft extendleft write writelines put put_nowait send sendall "
    "__setitem__ __delitem__ __setattr__ __delattr__ __iadd__ __isub__ __imul__ "
    "__ior__ __iand__ "
    # a Module's own setters (register_buffer in forward replaces the buffer each call)
    "register_buffer register_parameter register_module add_module".split()
)
_NAME_LOADS = {"LOAD_GLOBAL": "global", "LOAD_DEREF": "closure", "LOAD_NAME": "global"}
# The instructions by which a replayed write (writes.py) writes: on its line, no effect.
_WRITES = frozenset(("STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "STORE_DEREF", "LOAD_METHOD",
                     "LOAD_ATTR"))
_RECORDED_ATTRIBUTES = {"grad"}  # the trace records .grad assignments and replays them
_SIDE_EFFECT = (
    ": a Python side effect, which a replay would not repeat (it would run on the traced "
    "calls only); move it out of the compiled step, or return what it needs and do it "
    "after the call"
)
# Modules whose functions give a new value on every call.
_CHANGING = ("random", "time", "secrets", "uuid", "numpy.random")


@functools.lru_cache(maxsize=1024)
def instructions_of(code: types.CodeType) -> list:
    """The bytecode of `code`, read once: every traced call asks again, and a step's code
    (or a helper's) is the same object from call to call. Callers only read the list.
    Python 3.12 folded LOAD_METHOD into LOAD_ATTR (the low bit of its argument): named
    LOAD_METHOD here, as 3.11 names it, so one reading serves both."""
    found = list(dis.get_instructions(code))
    if sys.version_info >= (3, 12):
        found = [
            ins._replace(opname="LOAD_METHOD") if ins.opname == "LOAD_ATTR" and ins.arg & 1
            else ins
            for ins in found
        ]
    return found


def per_code(analysis: Callable) -> Callable:
    """Keep what `analysis(fn, *options, **settings)` found for each code object: it reads only fn's
    source, which a code object fixes, and a loop's step (or a cell run again with the
    same code) asks on every trace. A copy is handed out, so a caller may change it."""
    found: dict = {}

    @functools.wraps(analysis)
    def cached(fn: Any, *options: Any, **settings: Any) -> Any:
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if not isinstance(code, types.CodeType):
            return analysis(fn, *options, **settings)
        key = (code, inspect.ismethod(fn), options, tuple(sorted(settings.items())))
        if key not in found:
            if len(found) > 512:  # code objects of notebook cells come and go
                found.clear()
            found[key] = analysis(fn, *options, **settings)
        return copy.copy(found[key])

    return cached


def code_of(fn: Callable) -> object | None:
    """The code object a call of `fn` runs; None when there is none (a builtin)."""
    function = function_of(fn)
    return None if function is None else function.__code__


def find(fn: Callable, replayed: frozenset = frozenset()) -> list[str]:
    """Each side effect in `fn`'s own code, as "line N of fn does what", and what to do;
    but the writes on the lines `replayed`, which the replay repeats (writes.py)."""
    code = code_of(fn)
    if code is None:
        return []
    return find_in(code, _namespace(fn), replayed)


def find_in(
    code: types.CodeType, names: dict[str, Any], replayed: frozenset = frozenset()
) -> list[str]:
    """Each side effect in `code`, whose builtins, globals and enclosing values are `names`
    (a function the step calls: called.py); writes on the lines `replayed` aside."""
    instructions = instructions_of(code)
    parameters = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    outside_locals: set[str] = set()
    found: list[str] = []

    def origin(index: int) -> str | None:
        """Where the object the instructions ending at `index` compute comes from: the
        name it is built from when that is outside the step, else None."""
        while index >= 0:
            ins = instructions[index]
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                index -= 1
            elif ins.opname == "BINARY_SUBSCR":
                index -= 2  # the key (one instruction), then the container
            elif ins.opname in _NAME_LOADS:
                return f"the {_NAME_LOADS[ins.opname]} {ins.argval}"
            elif ins.opname in ("LOAD_FAST", "LOAD_FAST_CHECK"):
                if ins.argval in parameters:
                    return f"the argument {ins.argval}"
                if ins.argval in outside_locals:
                    return f"{ins.argval} (taken from outside)"
                return None
            else:
                return None
        return None

    lines = _lines(instructions)
    for index, ins in enumerate(instructions):
        where = f"line {lines[index]} of {code.co_name}"
        if lines[index] in replayed and ins.opname in _WRITES:
            continue  # a write the replay repeats (writes.py)
        mutating = _mutating_callable(instructions, index, names)
        if mutating is not None:
            found.append(f"{where} calls {mutating}, which changes an object outside the "
                         f"step" + _SIDE_EFFECT)
        changing = _changing_value(instructions, index, names)
        if changing is not None:
            found.append(
                f"{where} calls {changing}, which gives a new value on every call (a replay "
                f"would keep the traced one): pass the value in as an argument, or draw it "
                f"from minigrad's generator (minigrad.rand, randn_like, ...), which each "
                f"replay draws from again"
            )
        if ins.opname == "STORE_GLOBAL":
            found.append(f"{where} assigns the global {ins.argval}" + _SIDE_EFFECT)
        elif ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars:
            found.append(
                f"{where} assigns {ins.argval} of an enclosing function (nonlocal)" + _SIDE_EFFECT
            )
        elif ins.opname == "STORE_FAST" and index > 0:
            before = index - 1
            if instructions[before].opname == "FOR_ITER":
                before = _previous(instructions, before, "GET_ITER") - 1
            if origin(before) is not None:
                outside_locals.add(ins.argval)
        elif ins.opname == "STORE_ATTR" and ins.argval not in _RECORDED_ATTRIBUTES:
            start = _augmented(instructions, index, "COPY", 1)
            before = start - 1 if start is not None else index - 1
            target = origin(before)
            if target is None and instructions[before].opname in ("CALL", "CALL_FUNCTION"):
                target = "an object a call returned (type(self), a getter)"
            if target is not None:
                found.append(f"{where} sets the attribute .{ins.argval} of {target}" + _SIDE_EFFECT)
        elif ins.opname in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            start = _augmented(instructions, index, "COPY", 2)
            target = origin((start - 1 if start is not None else index - 1) - 1)
            if target is not None:
                found.append(f"{where} changes an item of {target}" + _SIDE_EFFECT)
        elif ins.opname in ("LOAD_METHOD", "LOAD_ATTR") and ins.argval in MUTATORS:
            target = origin(index - 1)
            next_op = instructions[index + 1].opname if index + 1 < len(instructions) else ""
            if target is not None and next_op not in ("STORE_FAST", "RETURN_VALUE"):
                found.append(f"{where} calls .{ins.argval}() on {target}" + _SIDE_EFFECT)
        elif ins.opname == "LOAD_GLOBAL" and ins.argval == "print":
            found.append(f"{where} prints" + _SIDE_EFFECT)
        elif ins.opname == "GET_ITER" and index and _is_iterator(instructions[index - 1], names):
            found.append(f"{where} iterates over {instructions[index - 1].argval}, an iterator "
                         f"from outside the step, which a replay would not advance"
                         + _SIDE_EFFECT)
        elif (ins.opname == "LOAD_GLOBAL" and ins.argval == "next" and index + 2 < len(instructions)
              and instructions[index + 2].opname in ("PRECALL", "CALL")):
            target = origin(index + 1)
            if target is not None:
                found.append(f"{where} calls next() on {target}, an iterator from outside "
                             f"the step, which a replay would not advance" + _SIDE_EFFECT)
    return found


def _namespace(fn: Callable) -> dict[str, Any]:
    """The values of the builtins, globals and enclosing variables `fn`'s own code reads."""
    names = dict(vars(builtins))
    names.update((name, read()) for name, _, read in name_readers(fn))
    return names


def _changing_value(instructions: list, index: int, names: dict[str, Any]) -> str | None:
    """When the name loaded at `index`, with the attributes read after it, is a random
    number or clock function (random.random, np.random.rand, rng.normal, time.time): its
    dotted name; else None."""
    for value, dotted, _ in _dotted_values(instructions, index, names):
        if callable(value) and _is_changing(value):
            return f"{dotted}()"
    return None


def _dotted_values(instructions: list, index: int, names: dict[str, Any]) -> Any:
    """(value, dotted name, whether it is the name itself) for the global or enclosing
    name loaded at `index` and each attribute read after it (np, np.random, np.random.rand)."""
    ins = instructions[index]
    if ins.opname not in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME") or ins.argval not in names:
        return
    value, dotted = names[ins.argval], ins.argval
    yield value, dotted, True
    for step in instructions[index + 1 :]:
        if step.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
            return
        value = getattr(value, step.argval, None)
        dotted += f".{step.argval}"
        yield value, dotted, False


def _is_iterator(load: Any, names: dict[str, Any]) -> bool:
    """Whether the name `load` loads (a global or an enclosing variable) holds an iterator,
    which a loop over it advances (a list does not change when iterated)."""
    if load.opname not in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME") or load.argval not in names:
        return False
    return hasattr(type(names[load.argval]), "__next__")


def _mutating_callable(instructions: list, index: int, names: dict[str, Any]) -> str | None:
    """When the name loaded at `index`, with the attributes read after it, is a function
    that writes into its argument (setattr, operator.setitem, heapq.heappush, np.copyto)
    or a list's, dict's or file's writing method kept under another name (`log =
    history.append`): its dotted name; else None."""
    for value, dotted, itself in _dotted_values(instructions, index, names):
        # A method looked up on an object here (`history.append`) is for the check on
        # calls of mutating methods; a bound one kept under a name (`log`) is not.
        if _writes(value, aliased=itself):
            return f"{dotted}()"
    return None


def _writes(value: Any, aliased: bool) -> bool:
    if not callable(value) or isinstance(value, type):
        return False
    try:
        if value in _WRITING:
            return True
    except TypeError:  # unhashable callables
        return False
    if not aliased:
        return False
    owner = getattr(value, "__self__", None)
    name = getattr(value, "__name__", "")
    bound = isinstance(value, (types.BuiltinMethodType, types.MethodWrapperType))
    return bound and not isinstance(owner, types.ModuleType) and name in MUTATORS


def _writing_callables() -> frozenset:
    """Functions that write into an object they are given."""
    import bisect
    import heapq
    import operator

    import numpy as np

    found = {setattr, delattr, np.copyto, np.put, np.place, np.putmask, np.put_along_axis,
             np.fill_diagonal, bisect.insort, bisect.insort_left, bisect.insort_right}
    found |= {getattr(heapq, name) for name in
              ("heappush", "heappop", "heapify", "heapreplace", "heappushpop")}
    found |= {getattr(operator, name) for name in (
        "setitem delitem iadd iand iconcat ifloordiv ilshift imatmul imod imul ior ipow "
        "irshift isub itruediv ixor".split())}
    return frozenset(found)


_WRITING = _writing_callables()


def _is_changing(value: Any) -> bool:
    if isinstance(value, types.ModuleType):
        return False
    owner = getattr(value, "__self__", None)
    if isinstance(owner, random.Random) or type(owner).__module__.startswith("numpy.random"):
        return True
    module = getattr(value, "__module__", None) or ""
    return any(module == name or module.startswith(name + ".") for name in _CHANGING)


def _lines(instructions: list) -> list:
    """The source line of each instruction."""
    lines, line = [], None
    for ins in instructions:
        positions = getattr(ins, "positions", None)  # Python 3.11+
        if positions is not None and positions.lineno is not None:
            line = positions.lineno
        elif ins.starts_line is not None:
            line = ins.starts_line
        lines.append(line)
    return lines


def _previous(instructions: list, index: int, opname: str) -> int:
    while index > 0 and instructions[index].opname != opname:
        index -= 1
    return index


def _augmented(instructions: list, index: int, opname: str, argument: int) -> int | None:
    """For an augmented assignment (`a.b += 1`, `a[k] *= 2`) ending at `index`: the index of
    the first COPY that duplicated its target (the target's code ends just before it, or
    before its key); None for a plain assignment."""
    if index == 0 or instructions[index - 1].opname != "SWAP":
        return None
    lines = _lines(instructions)
    start = index - 1
    while start > 0 and lines[start - 1] == lines[index]:
        start -= 1
        if instructions[start].opname == opname and instructions[start].argval == argument:
            earlier = instructions[start - 1]
            if earlier.opname == opname and earlier.argval == argument:
                return start - 1
            return start
    return None


def definition_of(fn: Any) -> tuple[types.CodeType, ast.AST] | None:
    """fn's code object and the `def` of its source (parsed once per code object; a
    decorated function is read through functools.wraps); None without readable source."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    definition = _parsed(code, fn)
    return None if definition is None else (code, definition)


def definition_lines(fn: Any) -> tuple[types.CodeType, ast.AST, int] | None:
    """definition_of(fn) and the number to add to an AST node's line to get the line the
    code object numbers it with (co_firstlineno is the first decorator's line)."""
    read = definition_of(fn)
    if read is None:
        return None
    code, definition = read
    first = min([definition.lineno, *(node.lineno for node in definition.decorator_list)])
    return code, definition, code.co_firstlineno - first


_DEFINITIONS: dict[types.CodeType, Any] = {}


def _parsed(code: types.CodeType, fn: Any) -> ast.AST | None:
    if code in _DEFINITIONS:
        return _DEFINITIONS[code]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        tree = None
    definition = None if tree is None else next(
        (node for node in ast.walk(tree)
         if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
         and node.name == code.co_name),
        None,
    )  # fmt: skip
    if len(_DEFINITIONS) > 256:  # code objects of notebook cells come and go
        _DEFINITIONS.clear()
    _DEFINITIONS[code] = definition
    return definition


def function_of(fn: Callable) -> Callable | None:
    """The Python function a call of `fn` runs (a function, a method, a partial, an object
    with __call__), for its code, globals and cells; None for a builtin."""
    fn = inspect.unwrap(fn)
    while hasattr(fn, "func") and not hasattr(fn, "__code__"):  # functools.partial
        fn = fn.func
    fn = getattr(fn, "__func__", fn)  # a bound method
    if not hasattr(fn, "__code__") and callable(fn):
        call = type(fn).__call__  # an object with __call__
        fn = getattr(call, "__func__", call)
    return fn if hasattr(fn, "__code__") else None


def read_names(fn: Callable) -> tuple[list[str], list[str]]:
    """The globals and the enclosing functions' variables `fn`'s own code reads."""
    code = code_of(fn)
    if code is None:
        return [], []
    return _names_read(code)


def _is_empty(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading it is the test)
    except ValueError:
        return True
    return False


def name_readers(fn: Callable) -> list[tuple[str, bool, Callable[[], Any]]]:
    """(name, whether it is a global, a function that reads its value now) for each global
    and enclosing variable `fn`'s own code reads and that holds a value (builtins and
    empty cells left out): what the guards watch."""
    function = function_of(fn)
    if function is None:
        return []
    global_names, cell_names = read_names(fn)
    namespace = function.__globals__
    found = [
        (name, True, functools.partial(namespace.__getitem__, name))
        for name in global_names
        if name in namespace
    ]
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    for name in cell_names:
        cell = cells.get(name)
        if cell is None or _is_empty(cell):  # no such cell, or not assigned yet
            continue
        found.append((name, False, lambda cell=cell: cell.cell_contents))
    return found


@functools.lru_cache(maxsize=256)
def _names_read(code: types.CodeType) -> tuple[list[str], list[str]]:
    # Read once per code object: every traced call of a step asks again.
    globals_read, cells_read = [], []
    for ins in instructions_of(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in globals_read:
            globals_read.append(ins.argval)
        elif ins.opname in ("LOAD_DEREF", "LOAD_CLOSURE") and ins.argval in code.co_freevars:
            if ins.argval not in cells_read:
                cells_read.append(ins.argval)
    return globals_read, cells_read


# ------------------------------------------------------------------ reads, as access paths

_ROOTS = {"LOAD_GLOBAL": "global", "LOAD_NAME": "global", "LOAD_DEREF": "closure"}


@functools.lru_cache(maxsize=512)
def access_paths(code: types.CodeType, receiver: str | None = None) -> tuple[tuple, ...]:
    """The paths `code` reads through, as Dynamo's guards name them: a global, an
    enclosing variable, the object a method runs on (its first parameter, `receiver`), a
    module imported in the function, or an argument, then attributes and constant keys
    (`cfg["a"]["b"]`, `mod.SCALE`, `self.scale`, `weights[0]`) and, last, a method looked
    up (`a.f(...)`): (root kind, root name, ((step kind, name or key), ...)). Read once
    per code object."""
    instructions = instructions_of(code)
    parameters = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    imported = {  # `import helpers as h` in the function: h is that module
        instructions[at + 1].argval: ins.argval
        for at, ins in enumerate(instructions[:-1])
        if ins.opname == "IMPORT_NAME" and instructions[at + 1].opname == "STORE_FAST"
    }
    found: list[tuple] = []
    for index, ins in enumerate(instructions):
        local = ins.opname in ("LOAD_FAST", "LOAD_FAST_CHECK")
        call = _call_after(instructions, index)
        if (ins.opname == "LOAD_GLOBAL" and ins.argval == "globals" and call is not None
                and instructions[call].argval == 0):
            root, index = ("globals()", "globals"), call  # globals()["NAME"]
        elif ins.opname in _ROOTS:
            root = (_ROOTS[ins.opname], ins.argval)
        elif local and receiver is not None and ins.argval == receiver:
            root = ("self", receiver)
        elif local and ins.argval in imported:
            root = ("module", imported[ins.argval])
        elif local and ins.argval in parameters:
            root = ("argument", ins.argval)
        else:
            continue
        steps: list[tuple] = []
        at = index + 1
        while at < len(instructions):
            step = instructions[at]
            if step.opname == "LOAD_ATTR":
                steps.append(("attr", step.argval))
                at += 1
            elif step.opname == "LOAD_METHOD":
                steps.append(("method", step.argval))
                break
            elif (step.opname == "LOAD_CONST" and at + 1 < len(instructions)
                  and instructions[at + 1].opname == "BINARY_SUBSCR" and _key(step.argval)):
                steps.append(("item", step.argval))
                at += 2
            else:
                break
        path = (*root, tuple(steps))
        if path not in found:
            found.append(path)
    return tuple(found)


def _call_after(instructions: list, index: int) -> int | None:
    """The index of the CALL right after instruction `index` (PRECALL, CALL on 3.11; CALL
    alone from 3.12), or None."""
    names = [ins.opname for ins in instructions[index + 1 : index + 3]]
    if names[:1] == ["CALL"]:
        return index + 1
    if names == ["PRECALL", "CALL"]:
        return index + 2
    return None


def _key(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_key(item) for item in value)
    return isinstance(value, (str, int, bytes, type(None)))


def follow(value: Any, steps: tuple) -> Any:
    """The value at the end of an access path's steps, from its root's value."""
    for kind, name in steps:
        if kind == "item":
            value = value[name]
        else:
            value = getattr(value, name)
    return value

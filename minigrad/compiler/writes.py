"""Python writes a replay repeats: `history.append(loss.item())` and `self.calls += 1`.

A replay runs no Python, so a write to state that outlives the call keeps a step eager
(side_effects.py). Two writes are common enough, and simple enough, to be repeated by the
replay instead, after its array work:

- a list outside the step that the step's own code appends a number read with `.item()`
  to (a loss history): the replay appends the number it computed;
- a counter the step or a function it calls adds a constant to (`self.calls += 1`,
  `stats["steps"] += 1`, `global count; count += 1`), as a statement of the function's
  body (run once per call of the function): the replay adds the constant times the
  number of calls the traced run made.

Both only when nothing else the step runs reads that list or counter (a branch on the
count would need Python): each is written by one statement, and read nowhere else in the
code the compiler analysed. The writes' lines are then no side effects for
side_effects.find, and the guards on those entries check their type, not their value.
"""

from __future__ import annotations

import ast
import functools
import types
from dataclasses import dataclass
from typing import Any

from minigrad.compiler.side_effects import definition_lines, instructions_of, per_code


@dataclass(frozen=True)
class Write:
    """One write a replay repeats: `kind` "append" (of an .item() on `item_line`) or
    "add" (of `amount`); `target` is ("name", name), ("attr", root, attribute) or
    ("item", root, key), where root is a global or enclosing name or "self" (the object
    the method runs on, named `receiver` in its code)."""

    kind: str
    code: types.CodeType
    line: int
    target: tuple
    amount: Any = 0
    item_line: int = 0
    receiver: str | None = None


@per_code
def writes_in(fn: Any, receiver: str | None = None, appends: bool = True) -> list[Write]:
    """The writes a replay could repeat in fn's own body (appends only when `appends`:
    the step's own code). Empty when the source cannot be read."""
    read = definition_lines(fn)
    if read is None:
        return []
    code, definition, offset = read
    local = set(code.co_varnames)
    declared = {
        name
        for node in ast.walk(definition)
        if isinstance(node, (ast.Global, ast.Nonlocal))
        for name in node.names
    }
    found: list[Write] = []
    for statement in _body(definition.body):
        line = statement.lineno + offset
        if isinstance(statement, ast.AugAssign):
            target = _counter(statement, local, declared, receiver)
            if target is not None:
                amount = statement.value.value
                amount = amount if isinstance(statement.op, ast.Add) else -amount
                found.append(Write("add", code, line, target, amount, receiver=receiver))
        elif appends and isinstance(statement, ast.Expr):
            target = _append(statement.value, local)
            if target is not None:
                item_line = statement.value.args[0].lineno + offset
                found.append(Write("append", code, line, target, item_line=item_line))
    return found


def _body(statements: list) -> list:
    """The statements run once per call: the body's, and those of its `with` blocks."""
    found = []
    for statement in statements:
        if isinstance(statement, ast.With):
            found += _body(statement.body)
        else:
            found.append(statement)
    return found


def _counter(
    statement: ast.AugAssign, local: set, declared: set, receiver: str | None
) -> tuple | None:
    """("name", n) / ("attr", root, a) / ("item", root, key) for `target += constant`."""
    if not isinstance(statement.op, (ast.Add, ast.Sub)):
        return None
    value = statement.value
    if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
        return None
    target = statement.target
    if isinstance(target, ast.Name):
        return ("name", target.id) if target.id in declared else None
    if not isinstance(getattr(target, "value", None), ast.Name):
        return None
    root = target.value.id
    if root == receiver:
        root = "self"
    elif root in local:
        return None  # a local object: nothing outlives the call through it
    if isinstance(target, ast.Attribute):
        return ("attr", root, target.attr)
    key = target.slice
    if isinstance(target, ast.Subscript) and isinstance(key, ast.Constant) and root != "self":
        return ("item", root, key.value)
    return None


def _append(call: Any, local: set) -> tuple | None:
    """("name", n) for `n.append(something.item())`, n a global or enclosing list."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr != "append" or len(call.args) != 1 or call.keywords:
        return None
    owner = call.func.value
    if not isinstance(owner, ast.Name) or owner.id in local:
        return None
    value = call.args[0]
    is_item = (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
               and value.func.attr == "item" and not value.args and not value.keywords)
    return ("name", owner.id) if is_item else None


def read_elsewhere(write: Write, codes: list[types.CodeType]) -> bool:
    """Whether the code the compiler analysed (`codes`) may read what `write` writes
    anywhere but in the write itself: by the name of its list or counter (each write
    loads its root once), by its attribute's name (each attribute write reads it once),
    or by that name as a string (getattr)."""
    kind, *rest = write.target
    if kind == "attr":
        name = rest[1]
        loads = sum(_count(code, ("LOAD_ATTR", "LOAD_METHOD"), name) for code in codes)
        as_string = any(name in code.co_consts for code in codes)
        return loads > 1 or as_string
    name = rest[0]
    loads = sum(_count(code, ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME"), name) for code in codes)
    return loads > 1


def _count(code: types.CodeType, opnames: tuple, name: str) -> int:
    counts = _name_counts(code)
    return sum(counts.get((opname, name), 0) for opname in opnames)


@functools.lru_cache(maxsize=1024)
def _name_counts(code: types.CodeType) -> dict:
    """(opname, argval) -> how often `code` has that instruction; read once per code."""
    counts: dict = {}
    for ins in instructions_of(code):
        if isinstance(ins.argval, str):
            key = (ins.opname, ins.argval)
            counts[key] = counts.get(key, 0) + 1
    return counts


# ------------------------------------------------------------------ at build time


def receiver_name(fn: Any) -> str | None:
    """The name a bound method's code gives the object it runs on (its first parameter)."""
    import inspect

    if not inspect.ismethod(fn):
        return None
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return code.co_varnames[0] if code is not None and code.co_argcount else None


def holder_of(write: Write, namespace: dict, cells: dict, receiver: Any) -> tuple:
    """(the object written to, the attribute name or key, how) for a write, from the
    function's globals, its cells (name -> cell) and the object its method runs on:
    how is "attr", "item", "cell" or "global"."""
    kind, *rest = write.target
    if kind == "name":
        name = rest[0]
        if name in cells:
            return cells[name], "cell_contents", "attr"
        return namespace, name, "item"
    root, key = rest
    if root == "self":
        owner = receiver
    elif root in cells:
        owner = cells[root].cell_contents
    else:
        owner = namespace[root]
    return owner, key, kind


def repeat(write: Write, holder: tuple, calls: int, items_at: dict) -> Any:
    """The function the replay calls after its array work to repeat `write`, `calls`
    times (a float counter adds the constant once per call, as eager does, so the sums
    round alike); None when the write cannot be repeated (its .item() was not traced)."""
    owner, key, how = holder
    if write.kind == "append":
        array = items_at.get((write.code.co_filename, write.item_line, write.code.co_name))
        if array is None:
            return None
        target = owner[key] if how == "item" else getattr(owner, key)

        def append() -> None:
            target.append(array.item())

        return append
    amount = write.amount

    if how == "item":
        def add() -> None:
            for _ in range(calls):
                owner[key] += amount
    else:
        def add() -> None:
            for _ in range(calls):
                setattr(owner, key, getattr(owner, key) + amount)

    return add


def yours(owner: Any) -> bool:
    """An object of a class you wrote (no library code reads its attributes behind the
    compiler's back), a dict or list, or a cell."""
    kind = type(owner)
    if kind in (dict, list) or kind.__name__ == "cell":
        return True
    for base in kind.__mro__:
        module = getattr(base, "__module__", "") or ""
        if base is object or base.__qualname__ == "Module" and module == "minigrad.nn.module":
            continue
        if module.startswith(("minigrad", "numpy", "builtins")):
            return False
    return True

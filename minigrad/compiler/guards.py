"""Guards: what a replay assumed about the world, checked before each replay.

Two kinds:

- the key of a call: for each argument its shape, dtype and requires_grad (a Variable)
  and which earlier argument, if any, is the same array (the replay copies each argument
  into its own buffer, so `step(x, x)` and `step(x, z)` need their own traces), its
  value and type (an int, a NumPy scalar, a str, None; a Python float by its type only,
  since the replay reads it live, until one is found used in plain Python), the same for
  each item of a tuple, list or dict (a batch), or its identity (any other object, held
  so that its id cannot be reused); and grad mode.
  Calls with another key get their own trace (a variant).
- the parameter groups of each optimizer the step calls (their sizes);
- the state of the Variables the step found outside (parameters, captured inputs),
  checked on every replay: the same data array, the same requires_grad, .grad present or
  not as when traced, no hooks; and anomaly mode off. Their values may change (an
  optimizer outside the step, an evaluation after a training epoch): the replay reads
  these arrays live.

Each check that fails says what it checked, so that `explain()` can tell why a step
was traced again.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
from typing import Any

import numpy as np

from minigrad.core.grad_mode import is_grad_enabled, state
from minigrad.core.variable import Variable


def key_of(
    args: tuple, kwargs: dict, floats_by_value: bool = False, int_tests: dict | None = None
) -> tuple:
    """What a call's variant is chosen by (see the module's docstring). A Python float is
    keyed by its type alone (the replay reads it live, see replay.Replay.floats) unless
    `floats_by_value`; an int argument the step uses only in `if` tests, by the tests'
    outcomes (`int_tests`, from int_tests.tests_of)."""
    if not args and not kwargs:  # a step that closes over everything it reads
        return (("grad mode", is_grad_enabled()),)
    parts: list[Any] = [("grad mode", is_grad_enabled())]
    items = [(str(index), value) for index, value in enumerate(args)]
    items += sorted(kwargs.items())
    seen: dict[int, str] = {}  # id(array or float) -> the first argument that holds it
    for name, value in items:
        if int_tests and name in int_tests and type(value) is int:
            outcomes = _outcomes(int_tests[name], value)
            if outcomes is not None:
                parts.append((name, "int tests", Outcomes(outcomes, value, int_tests[name])))
                continue
        _add_parts(parts, name, value, seen, floats_by_value)
    return tuple(parts)


class Outcomes:
    """A key part for an int used only in `if` tests: equal to another when the tests'
    outcomes are, whatever the value (kept for messages)."""

    __slots__ = ("outcomes", "value", "tests")

    def __init__(self, outcomes: tuple, value: int, tests: list) -> None:
        self.outcomes, self.value, self.tests = outcomes, value, tests

    def __eq__(self, other: object) -> bool:
        return type(other) is Outcomes and other.outcomes == self.outcomes

    def __hash__(self) -> int:
        return hash(self.outcomes)

    def __repr__(self) -> str:
        shown = ", ".join(f"`{test.source}` is {outcome}"
                          for test, outcome in zip(self.tests, self.outcomes))
        return f"{self.value} ({shown})" if shown else f"{self.value} (a seed)"


def _outcomes(tests: list, value: int) -> tuple | None:
    try:
        return tuple(test(value) for test in tests)
    except Exception:  # a test that fails to evaluate here: key by value instead
        return None


def _add_parts(
    parts: list, name: str, value: Any, seen: dict[int, str], floats_by_value: bool
) -> None:
    """The key's parts for one argument: containers (a batch as a tuple, list or dict) are
    walked, so each Variable in them is keyed like an argument of its own."""
    if type(value) is float and not floats_by_value:
        # The same float object passed twice is one value in the trace: keep that apart.
        same_as = seen.setdefault(id(value), name)
        parts.append((name, "float", None if same_as == name else same_as))
    elif isinstance(value, Variable):
        data = value._data
        kind = type(data).__name__
        same_as = seen.setdefault(id(data), name)
        # The dtype object, not its str (slow to make): this runs before every replay.
        dtype = data.dtype if kind == "ndarray" else str(value.dtype)
        parts.append((name, "Variable", kind, np.shape(data), dtype,
                      value._requires_grad, None if same_as == name else same_as))  # fmt: skip
    elif value is None or isinstance(value, (bool, int, str)):
        parts.append((name, "value", type(value).__name__, value))
    elif isinstance(value, float):
        # By repr: nan equals itself there, and -0.0 stays apart from 0.0.
        parts.append((name, "value", "float", repr(value)))
    elif isinstance(value, np.generic):
        # A NumPy scalar by its type and bytes, never by id(): a new np.float32(w) may
        # reuse a freed one's id while holding another value.
        parts.append((name, "value", type(value).__name__, value.tobytes()))
    elif type(value) in (tuple, list):
        parts.append((name, type(value).__name__, len(value)))
        for index, item in enumerate(value):
            _add_parts(parts, f"{name}[{index}]", item, seen, floats_by_value)
    elif type(value) is dict and all(isinstance(key, str) for key in value):
        parts.append((name, "dict", tuple(value)))
        for key, item in value.items():
            _add_parts(parts, f"{name}[{key!r}]", item, seen, floats_by_value)
    else:
        parts.append((name, "object", _Same(value)))


class _Same:
    """Any other argument, by identity; it holds the object, so no later object can reuse
    its id while a variant keyed by it exists."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def describe_key_change(old: tuple, new: tuple) -> str:
    """The first difference between two keys, in words."""
    for before, after in zip(old, new):
        if before != after:
            if after[0] == "grad mode":
                return f"grad mode changed: {_words(before)} -> {_words(after)}"
            if before[0] != after[0]:  # step(x, 3), then step(x, k=3)
                return (f"argument {before[0]} is passed as {after[0]} now (by position or by "
                        f"keyword: each way is keyed apart)")
            return f"argument {after[0]} changed: {_words(before)} -> {_words(after)}"
    return "the number of arguments changed"


def _words(part: tuple) -> str:
    if part[0] == "grad mode":
        return f"grad mode {'on' if part[1] else 'off'}"
    if part[1] == "Variable":
        alias = "" if part[6] is None else f", the same array as argument {part[6]}"
        return f"shape {part[3]}, dtype {part[4]}, requires_grad={part[5]}{alias}"
    if part[1] == "value":
        return repr(part[3]) if part[2] != "float" else part[3]
    if part[1] == "int tests":
        return repr(part[2])
    if part[1] == "float":
        alias = "" if part[2] is None else f", the same object as argument {part[2]}"
        return f"a float, read live{alias}"
    if part[1] in ("tuple", "list"):
        return f"a {part[1]} of {part[2]}"
    if part[1] == "dict":
        return f"a dict with keys {list(part[2])}"
    return f"the {type(part[2].value).__name__} object {part[2].value!r:.60}"


class StateGuard:
    """The state of one outside Variable the replay reads or writes."""

    __slots__ = ("variable", "data", "requires_grad", "has_grad")

    def __init__(self, variable: Variable, has_grad: bool) -> None:
        self.variable = variable
        self.data = variable._data
        self.requires_grad = variable._requires_grad
        self.has_grad = has_grad

    def failure(self) -> str | None:
        """None when the Variable is as the replay expects it; else what changed."""
        variable = self.variable
        if variable._data is not self.data:
            return f"the data of a {self.data.shape} Variable was replaced (.data = ...)"
        if variable._requires_grad != self.requires_grad:
            return f"requires_grad of a {self.data.shape} Variable changed"
        if (variable._grad is not None) != self.has_grad:
            state = "has a .grad" if variable._grad is not None else "has no .grad"
            return f"a {self.data.shape} Variable now {state} at the start of the step"
        edge = variable._accumulator_edge
        if variable._retains_grad or (edge is not None and edge[0]._pre_hooks):
            return f"a {self.data.shape} Variable has a hook now"
        return None


class ItemGuard:
    """A number the step read with .item() from a Variable it neither made nor changes (a
    constant): the replay uses the traced number while the Variable still holds it."""

    __slots__ = ("variable", "data", "value")

    def __init__(self, variable: Variable, data: Any, value: Any) -> None:
        self.variable, self.data, self.value = variable, data, value

    def failure(self) -> str | None:
        if self.variable._data is not self.data:
            return f"the data of a {self.data.shape} Variable read with .item() was replaced"
        now = self.data.item()
        if type(now) is not type(self.value) or now != self.value:
            return (f"a {self.data.shape} Variable read with .item() in the step holds "
                    f"{now!r} now, not {self.value!r}")
        return None


class OptimizerGuard:
    """The parameter groups of an optimizer the step calls: the replay updates (and
    zero_grad() clears) the parameters each group had when traced, in that order."""

    __slots__ = ("optimizer", "params", "groups", "group_list")

    def __init__(self, optimizer: Any) -> None:
        self.optimizer = optimizer
        self.params = [list(group["params"]) for group in optimizer.param_groups]
        # The replay's update() is bound to these group dicts: the same ones, in a list
        # that is the same one too (`opt.param_groups[0] = {...}` makes a new group).
        self.group_list = optimizer.param_groups
        self.groups = list(optimizer.param_groups)

    def _same(self) -> bool:
        groups = self.optimizer.param_groups
        if groups is not self.group_list or len(groups) != len(self.params):
            return False
        if not all(map(operator.is_, groups, self.groups)):
            return False
        for group, traced in zip(groups, self.params):
            params = group["params"]
            # By identity: == on Variables compares their values.
            if len(params) != len(traced) or not all(map(operator.is_, params, traced)):
                return False
        return True

    def failure(self) -> str | None:
        if not self._same():
            name = type(self.optimizer).__name__
            return (
                f"the parameter groups of {name} changed (add_param_group, a group's list "
                f"edited, or a group or the list of groups replaced)"
            )
        return None


def anomaly_mode_failure() -> str | None:
    return "anomaly mode is on" if state.anomaly_enabled else None


# What a ValueGuard watches: plain values a trace turns into constants.
_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.generic)


class ValueGuard:
    """A name the step's own code reads from a global or from an enclosing function (as
    Dynamo guards the globals a frame reads). A plain value (a number, a str) became a
    constant of the trace: another value needs another trace. Any other object (a model,
    an optimizer, a loss function, a Variable) was bound into the replay: the name must
    still hold that very object."""

    __slots__ = ("read", "label", "raw", "value", "contents", "live", "counted")

    def __init__(self, read: Any, label: str, value: Any) -> None:
        self.read = read
        self.label = label
        self.raw = value  # the very object: while it is still there, nothing changed
        self.value = _comparable(value) if isinstance(value, _PLAIN) else None
        # A small NumPy array or set of plain values: its contents, which change in place.
        self.contents = _contents(value)
        self.live = False  # a float the replay reads at each call (see float_sources)
        self.counted = False  # a counter the replay adds to (writes.py): a number, any

    def float_sources(self) -> list[tuple]:
        """(the float object, how to read it now, its name, how to stop guarding its value)
        when the name holds a float, which a replay may read live."""
        if type(self.raw) is not float:
            return []
        return [(self.raw, self.read, self.label, self.read_live, _place_of(self.read))]

    def read_live(self) -> None:
        """The replay reads this float at each call: only its type is guarded now."""
        self.live = True

    def failure(self) -> str | None:
        try:
            current = self.read()
        except (KeyError, ValueError, NameError):
            return f"{self.label} is gone"
        if current is self.raw:
            if self.contents is not None and _contents(current) != self.contents:
                return f"{self.label} changed its contents"
            return None
        if self.live:
            return None if type(current) is float else f"{self.label} is no longer a float"
        if self.counted:
            if type(current) in (int, float):
                return None
            return f"{self.label} is no longer a number"
        if self.value is None:
            return (
                f"{self.label} names another object now (a new {type(current).__name__} "
                f"where the trace used a {type(self.raw).__name__})"
            )
        if _comparable(current) != self.value:
            return f"{self.label} changed: {self.value[1]} -> {_comparable(current)[1]}"
        return None


def _contents(value: Any) -> tuple | None:
    if type(value) is np.ndarray and value.size <= 4096:
        return (value.dtype.str, value.shape, value.tobytes())
    if type(value) in (set, frozenset) and len(value) <= 64 and all(
        isinstance(item, _PLAIN) for item in value
    ):
        return (frozenset(repr(item) for item in value),)
    return None


def _place_of(read: Any) -> tuple:
    """Where a ValueGuard's name is held: (id of the globals dict, name), or the cell."""
    if isinstance(read, functools.partial) and read.args:
        key = read.args[0]
        if not isinstance(key, (str, int)):  # a cell
            return (id(key), "cell")
        return (id(getattr(read.func, "__self__", read.func)), key)
    cell = (getattr(read, "__defaults__", None) or (None,))[0]
    return (id(cell), "cell") if cell is not None else (id(read), "read")


def _comparable(value: Any) -> tuple:
    if isinstance(value, np.generic):
        return (type(value).__name__, repr(value.item()), value.tobytes())
    return (type(value).__name__, repr(value))


def value_guards(fn: Any) -> list[ValueGuard]:
    """A ValueGuard for each name `fn`'s own code reads from a global or a cell (modules
    and builtins aside: rebinding `np` is not a thing steps do)."""
    from minigrad.compiler.side_effects import name_readers

    found = []
    for name, is_global, read in name_readers(fn):
        value = read()
        if _guarded(value):
            label = f"the global {name}" if is_global else f"{name} of the enclosing function"
            found.append(ValueGuard(read, label, value))
    return found


def _guarded(value: Any) -> bool:
    return not isinstance(value, types.ModuleType)


class ModeGuard:
    """The training mode of a Module the step's code reaches: Dropout (or a layer of
    yours) acts on `training`, which the trace read as it was (model.train() / eval())."""

    __slots__ = ("module", "training", "label")

    def __init__(self, module: Any, training: bool, label: str) -> None:
        self.module = module
        self.training = training
        self.label = label

    def failure(self) -> str | None:
        if self.module.training != self.training:
            now = "train()" if self.module.training else "eval()"
            return f"{self.label} was switched to {now} mode outside the step"
        return None


def module_modes(fn: Any) -> list[tuple]:
    """(module, its training flag, a label) for every nn.Module inside the globals and
    enclosing variables `fn`'s own code reads, as they are now."""
    from minigrad.compiler.side_effects import name_readers
    from minigrad.nn.module import Module

    values = [
        (f"the global {name}" if is_global else name, read())
        for name, is_global, read in name_readers(fn)
    ]
    owner = fn.__self__ if inspect.ismethod(fn) else None  # a bound method's object too
    if owner is not None and hasattr(owner, "__dict__"):
        values.append(("self", owner))
    found, seen = [], set()
    for label, value in values:
        roots = [value] if isinstance(value, Module) else []
        if not roots and owner is not None and owner is value:
            roots = [item for item in vars(value).values() if isinstance(item, Module)]
        for root in roots:
            for module in root.modules():
                if id(module) not in seen:
                    seen.add(id(module))
                    found.append((module, module.training, label))
    return found


def mode_guards(modes: list[tuple], events: list) -> list[ModeGuard]:
    """ModeGuards for `modes` (module_modes() before the traced call), but for the modules
    the step sets itself with train() or eval(), which the replay calls again."""
    from minigrad.nn.module import Module

    set_by_step = set()
    for event in events:
        call = getattr(event, "call", None)
        owner = call.args[0] if call is not None and call.args else None
        if isinstance(owner, Module) and call.func is Module.train.__wrapped__:
            set_by_step.update(id(module) for module in owner.modules())
    return [
        ModeGuard(module, training, label)
        for module, training, label in modes
        if id(module) not in set_by_step
    ]

"""A trace's signature: what two eager runs of a step must share for a replay to be right.

minigrad.compile traces a step twice and compares. Arrays are named by their role (made by
the k-th output of the run, argument i, a constant with these bytes, or that very array
found outside); everything else by its value. Two runs with equal signatures did the same
calls on the same kinds of arrays with the same Python numbers. A number that differs (a
learning rate the Python code changes, a value read with .item() that steers a branch) or
an array made fresh outside minigrad's operations shows up as a difference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # NumPy 2 moved it; minigrad supports NumPy >= 1.24
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # pragma: no cover
    from numpy import byte_bounds

from minigrad.compiler.trace import (
    Accumulate,
    Assume,
    Call,
    CopyInto,
    Item,
    Opaque,
    Ref,
    SetGrad,
    Trace,
    describe_place,
)


def signature(trace: Trace, arguments: dict[int, Any], live: dict | None = None) -> list[tuple]:
    """`live`: id(float) -> name, for the floats a replay reads from where they are (a
    config entry): named, not valued, so a new value compares equal."""
    made: dict[int, int] = {}
    floats = getattr(arguments, "floats", {})
    live = live or {}
    # A number .item() read, passed on as it is (scheduler.step(loss.item())): named by
    # which .item() it is, not by its value.
    read = {id(event.value): index for index, event in enumerate(trace.events)
            if type(event) is Item and type(event.value) is float}

    def role(array: np.ndarray) -> tuple:
        key = id(array)
        if key in made:
            return ("made", made[key])
        if key in arguments:
            return ("argument", arguments[key])
        if key in trace.constants:
            return ("constant", array.shape, array.dtype, array.tobytes())
        if key in trace.grads_of:  # another array each call: named by its leaf
            return (".grad from before the step", id(trace.grads_of[key]))
        return ("outside", key)

    def spec(value: Any) -> Any:
        kind = type(value)
        if kind in _PLAIN:  # most arguments past the arrays: ints, bools, strs, None
            return ("value", kind.__name__, value)
        if kind is Ref:
            key = id(value.array)
            if value.raw and key not in made and key not in arguments:
                array = value.array
                view = view_of_argument(array, arguments)
                if view is not None:  # not a constant; the replay refuses it
                    return ("argument view", view)
                parent = made_holder(array, by_owner)
                if parent is not None:  # a view of a value the step computed
                    offset = (array.__array_interface__["data"][0]
                              - parent.__array_interface__["data"][0])
                    return ("view of made", made[id(parent)], offset, array.shape, array.strides)
                # A NumPy array the Python code built: a constant, compared by its values.
                return ("array", array.shape, array.dtype, array.tobytes())
            return role(value.array)
        if kind in (list, tuple) or isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple([spec(item) for item in value]))
        if type(value) is float and id(value) in floats:
            # A float argument, passed on as it is: the replay reads it at each call.
            return ("float argument", floats[id(value)])
        if type(value) is float and id(value) in live:
            return ("read live", live[id(value)])
        if type(value) is float and id(value) in read:
            return (".item() value", read[id(value)])
        if type(value) is float and id(value) in made:
            # A float a custom Function's forward kept on its ctx, read by its backward.
            return ("kept float", made[id(value)])
        try:
            hash(value)
        except TypeError:
            return ("value", type(value).__name__, repr(value))
        return ("value", type(value).__name__, value)

    def make(array: np.ndarray | None) -> None:
        if array is not None:
            made[id(array)] = len(made)
            if type(array) is np.ndarray:  # (a custom Function's kept float is made too)
                by_owner.setdefault(id(memory_owner(array)), []).append(array)

    by_owner: dict[int, list] = {}  # made arrays by the array owning their memory

    tokens = []
    for event in trace.events:
        if type(event) is Call:
            arguments_spec = tuple([spec(value) for value in event.args])
            keywords = (tuple(sorted([(name, spec(value)) for name, value in event.kwargs.items()]))
                        if event.kwargs else ())
            shapes = tuple([
                None if array is None else (array.shape, array.dtype)
                for array in event.outputs
            ])
            places = tuple([place for place, _ in event.extras]) if event.extras else ()
            tokens.append((event.function.__qualname__, arguments_spec, keywords, shapes, places))
            for array in event.outputs:
                make(array)
            for _, array in event.extras:
                make(array)
        elif type(event) is Accumulate:
            tokens.append(("accumulate into", id(event.variable), role(event.gradient)))
            make(event.result)
        elif type(event) is SetGrad:
            if event.array is None:
                value = None
            elif id(event.array) in made:
                value = role(event.array)
            else:  # made by Python code in the step (zeros): by its values, then by place
                value = (event.array.shape, event.array.dtype, event.array.tobytes())
                make(event.array)
            tokens.append(("set .grad", id(event.variable), value))
        elif type(event) is CopyInto:
            # A Variable made in the step (a .grad clipped in place) by its array's place in
            # the trace: it is another object on every run.
            data = event.variable._data
            target = role(data) if id(data) in made else id(event.variable)
            tokens.append(("in-place update", target, role(event.source)))
        elif type(event) is Opaque:
            call = event.call
            owner = call.args[0] if call.args else None
            # Its settings (lr, ...) are read when it is called again: not part of the trace.
            passed = tuple(spec(value) for value in event.arguments)
            keywords = tuple(sorted((name, spec(value)) for name, value in event.keywords.items()))
            seed = seed_argument(event, arguments)
            if seed is not None:  # manual_seed(k), k an argument: seeded from it each call
                owner = ("seed argument", seed)
            tokens.append(("call", call.func.__qualname__,
                           owner if seed is not None else id(owner), passed, keywords))
        elif type(event) is Item:
            tokens.append((".item()", role(event.array)))
        elif type(event) is Assume:
            tokens.append(("assume", event.what, spec(Ref(event.array, raw=True))))
    return tokens


_PLAIN = frozenset((int, bool, str, type(None)))


def seed_argument(event: Opaque, arguments: Any) -> tuple | None:
    """The path of the int argument a `manual_seed(k)` event took its seed from, when the
    step's code passes that argument there (compiled.py fills `arguments.seeds` with
    (path, value, places) for each); else None."""
    seeds = getattr(arguments, "seeds", ())
    if not seeds or event.call.func.__qualname__ != "_reseed" or not event.call.args:
        return None
    for path, value, places in seeds:
        if event.where in places and event.call.args[0] == value:
            return path
    return None


def memory_owner(array: np.ndarray) -> np.ndarray:
    """The array that owns `array`'s memory (NumPy's .base chain to its end)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def made_holder(array: np.ndarray, by_owner: dict[int, list]) -> np.ndarray | None:
    """The first made array (`by_owner`: id of a memory owner -> the made arrays over its
    memory, in order) whose memory holds all of `array`'s: `array` is a NumPy view of it
    (NumPy's .base names the memory's owner, which may be no made array). None if none."""
    if array.base is None:
        return None
    candidates = by_owner.get(id(memory_owner(array)), ())
    if not candidates:
        return None
    low, high = byte_bounds(array)
    for candidate in candidates:
        if candidate is array or candidate.dtype != array.dtype:
            continue
        start, end = byte_bounds(candidate)
        if start <= low and high <= end and np.shares_memory(array, candidate):
            return candidate
    return None


def view_of_argument(array: np.ndarray, arguments: Any) -> tuple | None:
    """Where the argument is when `array` is a NumPy array over an argument's memory (as
    F.cross_entropy's labels.reshape(-1)); None otherwise. Such an array is no constant,
    and Python code may have branched on its values (cross_entropy's ignore_index)."""
    overlapping = [
        (path, source)
        for path, source in getattr(arguments, "arrays", {}).items()
        if array is not source and np.shares_memory(array, source)
    ]
    if len(overlapping) > 1:
        # Arguments that overlap (tokens[:-1] and tokens[1:] of one sequence): the one
        # whose memory the array spans exactly, or none can be told.
        bounds = byte_bounds(array)
        overlapping = [item for item in overlapping if byte_bounds(item[1]) == bounds]
        if len(overlapping) != 1:
            return ("ambiguous", None)
    return overlapping[0][0] if overlapping else None


def first_difference(first: list[tuple], second: list[tuple], events: list | None = None) -> str:
    """What differs between two signatures, in words; with the second run's events, also
    the user's line that made the differing one."""
    for index, (a, b) in enumerate(zip(first, second)):
        if a != b:
            what = a[0] if a[0] == b[0] else f"{a[0]} / {b[0]}"
            detail = _detail(a, b)
            place = getattr(events[index], "where", None) if events else None
            at = f" (at {describe_place(place)})" if place is not None else ""
            return f"event {index} ({what}){at} differs between the last two traced runs{detail}"
    return f"the last two traced runs did {len(first)} and {len(second)} things"


def _detail(a: tuple, b: tuple) -> str:
    if a[0] != b[0] or len(a) != len(b):
        return ""
    if a[0] == "accumulate into":
        return (
            ": gradients go into the .grad of a different Variable in each run (a leaf made "
            "in the step, as x.clone().requires_grad_() on a batch); pass it in as an "
            "argument that requires grad"
        )
    if a[0] == "assume":
        return (
            f": library code branched on array values ({a[1]}) and took another branch "
            f"in one of the runs (a batch with an ignored or another label); batches that "
            f"alternate between branches keep the step eager"
        )
    for part_a, part_b in zip(a[1:], b[1:]):
        if part_a != part_b:
            if "outside" in repr(part_b):
                return (
                    ": it reads an array made outside minigrad's operations, a new one each "
                    "call (NumPy work or minigrad.tensor(...) in the step, or a global "
                    "Variable rebound between calls), whose values a replay would "
                    "not compute again; compute it from the step's inputs with operations, or "
                    "pass it in as an argument"
                )
            if isinstance(part_a, tuple) and isinstance(part_b, tuple):
                for item_a, item_b in zip(part_a, part_b):
                    if item_a != item_b:
                        first, second = _spec_words(item_a), _spec_words(item_b)
                        return f": {first} in one run, {second} in the other"
            return f": {_short(part_a)} vs {_short(part_b)}"
    return ""


def _spec_words(spec: Any) -> str:
    """One argument of a traced call, as a signature holds it, in words."""
    if isinstance(spec, tuple) and len(spec) == 3 and spec[0] == "value":
        return f"the constant {spec[2]!r}"
    if isinstance(spec, tuple) and spec and spec[0] == "made":
        return "a value computed in the step"
    return _short(spec)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."

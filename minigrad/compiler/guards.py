"""Guards: what a replay assumed about the world, checked before each replay.

Two kinds:

- the key of a call: for each argument its shape, dtype and requires_grad (a Variable)
  and which earlier argument, if any, is the same array (the replay copies each argument
  into its own buffer, so `step(x, x)` and `step(x, z)` need their own traces), its
  value (a number, a str, None) or its identity (any other object); and grad mode.
  Calls with another key get their own trace (a variant).
- the state of the Variables the step found outside (parameters, captured inputs),
  checked on every replay: the same data array, the same requires_grad, .grad present or
  not as when traced, the version an in-place change outside the step would bump, no
  hooks; and anomaly mode off.

Each check that fails says what it checked, so that `explain()` can tell why a step
was traced again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.autodiff import anomaly
from minigrad.autodiff.grad_mode import is_grad_enabled
from minigrad.variable import Variable


def key_of(args: tuple, kwargs: dict) -> tuple:
    """What a call's variant is chosen by (see the module's docstring)."""
    parts: list[Any] = [("grad mode", is_grad_enabled())]
    items = [(str(index), value) for index, value in enumerate(args)]
    items += sorted(kwargs.items())
    seen: dict[int, str] = {}  # id(array) -> the first argument that holds it
    for name, value in items:
        if isinstance(value, Variable):
            data = value._data
            kind = type(data).__name__
            same_as = seen.setdefault(id(data), name)
            parts.append((name, "Variable", kind, np.shape(data), str(value.dtype),
                          value._requires_grad, None if same_as == name else same_as))  # fmt: skip
        elif value is None or isinstance(value, (bool, int, float, str)):
            parts.append((name, "value", type(value).__name__, value))
        else:
            parts.append((name, "object", id(value)))
    return tuple(parts)


def describe_key_change(old: tuple, new: tuple) -> str:
    """The first difference between two keys, in words."""
    for before, after in zip(old, new):
        if before != after:
            if after[0] == "grad mode":
                return f"grad mode changed: {_words(before)} -> {_words(after)}"
            return f"argument {after[0]} changed: {_words(before)} -> {_words(after)}"
    return "the number of arguments changed"


def _words(part: tuple) -> str:
    if part[0] == "grad mode":
        return f"grad mode {'on' if part[1] else 'off'}"
    if part[1] == "Variable":
        alias = "" if part[6] is None else f", the same array as argument {part[6]}"
        return f"shape {part[3]}, dtype {part[4]}, requires_grad={part[5]}{alias}"
    if part[1] == "value":
        return repr(part[3])
    return "another object"


class StateGuard:
    """The state of one outside Variable the replay reads or writes."""

    __slots__ = ("variable", "data", "requires_grad", "has_grad", "counter", "version")

    def __init__(self, variable: Variable, has_grad: bool) -> None:
        self.variable = variable
        self.data = variable._data
        self.requires_grad = variable._requires_grad
        self.has_grad = has_grad
        self.counter = variable._shared_version_counter()
        self.version = self.counter.value

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
        if self.counter.value != self.version:
            return f"a {self.data.shape} Variable was changed in place outside the step"
        edge = variable._accumulator_edge
        if variable._retains_grad or (edge is not None and edge[0]._pre_hooks):
            return f"a {self.data.shape} Variable has a hook now"
        return None

    def settle(self) -> None:
        """After any run of the step (of any variant): remember the version it left."""
        self.version = self.counter.value


def anomaly_mode_failure() -> str | None:
    return "anomaly mode is on" if anomaly._enabled else None

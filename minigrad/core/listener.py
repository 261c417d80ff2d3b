"""Listener: who else hears this thread's operations, besides the engine.

`state.listener` (minigrad/core/state.py) is QUIET, a Listener whose hooks do nothing,
unless a tool plugs in: minigrad.compile's Recorder (minigrad/compiler/trace.py) while
it records a step, or forward_ad's dual level (minigrad/autodiff/forward_ad.py), which
pushes tangents forward. The core calls each hook unconditionally; it never asks who is
listening. The hooks: `Function.apply`, `.data` and `.grad =`, the engine's seed gradients,
zeros and leaf accumulation, in-place assignment, `.item()` and friends, and an
optimizer's or a scheduler's `step()` (run as one call).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class Listener:
    """What a listener is told; each hook does nothing unless a listener overrides it."""

    # True for a tool that must hear every operation as a Function call (the compiler
    # replays them, forward_ad pushes tangents through them): library code then takes
    # the path made of Functions rather than a shortcut on raw arrays.
    watching = False

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        """A `Function.apply` call: run it (a listener also notes what it did)."""
        return cls._apply_eagerly(args, kwargs)

    def opaque(self, call: functools.partial) -> Any:
        """A method call to run as a whole (an optimizer's step()), not op by op."""
        return call.func(*call.args, **call.keywords)  # the method, with the caller's arguments

    def accumulate(self, variable: Any, previous: Any, gradient: Any) -> None:
        """The engine added `gradient` into a leaf's .grad (which was `previous`)."""

    def set_grad(self, variable: Any, value: Any) -> None:
        """`variable.grad = value` is about to happen."""

    def copy_into(self, variable: Any, source: Any) -> None:
        """An in-place update is about to write the array `source` into `variable`."""

    def constants(self, variables: list) -> None:
        """Variables the engine made from nothing (seed gradients, zeros)."""

    def item(self, variable: Any, value: Any) -> None:
        """`.item()` read `value` out of `variable`."""

    def escape(self, variable: Any, how: str) -> None:
        """`.data`, `.numpy()`, ... handed a Variable's raw array out."""

    def raw_read(self, op: str) -> None:
        """`numeric()` read array values outside a Function's forward."""

    def unsupported(self, reason: str) -> None:
        """Something a listener cannot follow happened (hooks, grad(), ...)."""

    def assume(self, array: Any, holds: Callable[[Any], bool], what: str) -> None:
        """Library code chose a branch from `array`'s values (cross_entropy's class labels):
        `holds(values)` is True while the same branch would be taken; `what` says so."""


# The listener of a thread nobody listens to: every hook does nothing.
QUIET = Listener()

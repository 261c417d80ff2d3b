"""The core's per-thread state, in one object: `state`.

Each thread has its own copy, so `no_grad()` in one thread never changes what another
thread records. A new thread starts with every switch at its class value below.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

# ------------------------------------------------------------------------- listener
#
# Listener: who else hears this thread's operations, besides the engine.
#
# `state.listener` (minigrad/core/state.py) is QUIET, a Listener whose hooks do nothing,
# unless a tool plugs in: minigrad.compile's Recorder (minigrad/compiler/trace.py) while
# it records a step, or forward_ad's dual level (minigrad/autodiff/forward_ad.py), which
# pushes tangents forward. The core calls each hook unconditionally; it never asks who is
# listening. The hooks: `Function.apply`, `.data` and `.grad =`, the engine's seed gradients,
# zeros and leaf accumulation, in-place assignment, `.item()` and friends, and an
# optimizer's or a scheduler's `step()` (run as one call).

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




class ThreadState(threading.local):
    """What the core reads at every operation, per thread."""

    # grad_mode.py: record a graph for backward? (no_grad turns it off)
    grad_enabled: bool = True
    # anomaly.py: keep each node's forward stack and check each gradient for NaN?
    anomaly_enabled: bool = False
    # listener.py: who else hears each operation (minigrad.compile, forward_ad); QUIET if none
    listener: Listener = QUIET
    # grad_assignments.py: the `x.grad = g` made by the backward formulas now running
    grad_assignments: Any = None
    # saved.py: the (pack_hook, unpack_hook) pairs of open saved_tensors_hooks, innermost
    # last; a tuple, so that threads never share one
    saved_tensors_hooks: tuple = ()
    # function.py: a backward runs on NumPy arrays (Function.backward_on_arrays): saved
    # values are read as their arrays
    saved_as_arrays: bool = False


state = ThreadState()


def unheard(call: Callable[[], Any]) -> Any:
    """Run `call` with no listener (what runs inside one reported call is not reported
    again), then give the listener back."""
    listener = state.listener
    state.listener = QUIET
    try:
        return call()
    finally:
        state.listener = listener


def traced_as_one_call(method: Callable) -> Callable:
    """Wrap a method (an optimizer's step) so that a listener hears it as one opaque call,
    replayed by calling it again, instead of the operations inside it."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return state.listener.opaque(functools.partial(method, self, *args, **kwargs))

    return run

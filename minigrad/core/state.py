"""The core's per-thread state, in one object: `state`.

Each thread has its own copy, so `no_grad()` in one thread never changes what another
thread records. A new thread starts with every switch at its class value below.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from minigrad.core.listener import QUIET, Listener


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

"""Who listens to this thread's operations: `tracer.recorder`, a Listener or None.

While `minigrad.compile` runs a step eagerly to record it, the listener is its Recorder
(minigrad/compiler/trace.py); inside `forward_ad.dual_level()` it is the dual level, which
pushes tangents forward (minigrad/autodiff/forward_ad.py). At every other time it is None,
and each place that reports to it costs one attribute read. The places: `Function.apply`,
the `.grad` setter and `.data`, `numeric()`, the engine's seed gradients and leaf
accumulation, in-place assignment, `.item()` and friends, and an optimizer's or a
scheduler's `step()` (run as one call).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any


class _Tracer(threading.local):
    # A class attribute, so every new thread starts with nothing traced.
    recorder: Any = None


tracer = _Tracer()


def unheard(call: Callable[[], Any]) -> Any:
    """Run `call` with no listener (what runs inside one reported call is not reported
    again), then give the listener back."""
    listener = tracer.recorder
    tracer.recorder = None
    try:
        return call()
    finally:
        tracer.recorder = listener


class Listener:
    """What a listener is told; each hook does nothing unless a listener overrides it."""

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        """A `Function.apply` call: run it (unheard), and note what it did."""
        return unheard(lambda: cls.apply(*args, **kwargs))

    def opaque(self, call: Callable[[], Any]) -> Any:
        """A call to run as a whole (an optimizer's step()), not operation by operation."""
        return unheard(call)

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


def traced_as_one_call(method: Callable) -> Callable:
    """Wrap a method (an optimizer's step) so that a trace records it as one opaque call,
    replayed by calling it again, instead of the operations inside it."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = tracer.recorder
        if recorder is None:
            return method(self, *args, **kwargs)
        return recorder.opaque(functools.partial(method, self, *args, **kwargs))

    return run

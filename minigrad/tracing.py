"""Where minigrad.compile listens: the recorder of the step being traced, if any.

While `minigrad.compile` runs a step eagerly to record it, `tracer.recorder` is its
Recorder (minigrad/compiler/trace.py); at every other time it is None, and each place
that reports to it costs one attribute read. The places: `Function.apply`, the `.grad`
setter and `.data`, the engine's seed gradients and leaf accumulation, in-place
assignment, `.item()` and friends, and an optimizer's `step()` (run as one call).
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

"""detect_anomaly(): find the operation whose backward produced NaN.

While it is on, every recorded node keeps the stack of the forward call that made it,
and the engine checks each gradient a backward returns. The first NaN raises an error
that names the node and shows where its forward ran.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.grad_mode import in_mode
from minigrad.core.state import state

# The folder of the minigrad package: a stack frame in a file under it is minigrad's own.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class detect_anomaly:  # noqa: N801 (PyTorch's name)
    """Context manager (and decorator, with or without parentheses) that turns it on."""

    def __new__(cls, check_nan: Any = True):
        # `@detect_anomaly` without parentheses calls the class with the function itself.
        if callable(check_nan):
            return cls()(check_nan)
        return super().__new__(cls)

    def __init__(self, check_nan: bool = True) -> None:
        if callable(check_nan):
            return  # __new__ already returned the decorated function
        if not isinstance(check_nan, bool):
            raise TypeError(
                f"detect_anomaly(check_nan=...) expects True or False; got {check_nan!r}."
            )
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._previous = state.anomaly_enabled
        state.anomaly_enabled = self.check_nan

    def __exit__(self, *exc_info: Any) -> None:
        state.anomaly_enabled = self._previous

    def __call__(self, func: Callable) -> Callable:
        check_nan = self.check_nan
        return in_mode(func, lambda: detect_anomaly(check_nan))


def _in_package(frame: str) -> bool:
    """Whether a formatted stack frame ('  File "path", line n, in f') is minigrad's code."""
    path = frame.split('"')[1] if frame.count('"') >= 2 else ""
    return os.path.abspath(path).startswith(_PACKAGE)


def check_gradients(node: Any, grads: tuple) -> None:
    """Raise if a numeric gradient that `node`'s backward returned holds NaN."""
    for index, grad in enumerate(grads):
        if grad is None or grad.is_text or not np.isnan(grad.data).any():
            continue
        where = ""
        if node._forward_trace:
            # The learner's own lines: drop the frames inside the minigrad package (by its
            # path, so a learner's checkout that is itself called minigrad still shows).
            frames = [f for f in node._forward_trace if not _in_package(f)]
            where = "\nThe forward call that made this node:\n" + "".join(frames[-4:])
        raise RuntimeError(
            f"Function '{node.name()}' returned nan values in its {index}th output "
            f"(the gradient for input {index}).{where}"
        )

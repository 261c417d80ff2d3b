"""detect_anomaly(): find the operation whose backward produced NaN.

While it is on, every recorded node keeps the stack of the forward call that made it,
and the engine checks each gradient a backward returns. The first NaN raises an error
that names the node and shows where its forward ran.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

_enabled = False


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
        global _enabled
        self._previous = _enabled
        _enabled = self.check_nan

    def __exit__(self, *exc_info: Any) -> None:
        global _enabled
        _enabled = self._previous

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def run_detecting(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)

        return run_detecting


def check_gradients(node: Any, grads: tuple) -> None:
    """Raise if a numeric gradient that `node`'s backward returned holds NaN."""
    for index, grad in enumerate(grads):
        if grad is None or grad.is_text or not np.isnan(grad.data).any():
            continue
        where = ""
        if node._forward_trace:
            # The learner's own lines: drop the frames inside minigrad.
            frames = [f for f in node._forward_trace if "/minigrad/" not in f.split(",")[0]]
            where = "\nThe forward call that made this node:\n" + "".join(frames[-4:])
        raise RuntimeError(
            f"Function '{node.name()}' returned nan values in its {index}th output "
            f"(the gradient for input {index}).{where}"
        )

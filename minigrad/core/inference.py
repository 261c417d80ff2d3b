"""inference_mode: PyTorch's faster no_grad for pure inference; here a grad mode like no_grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minigrad.core.grad_mode import _GradModeContext, in_mode, set_grad_enabled


class inference_mode(_GradModeContext):  # noqa: N801 (PyTorch's name)
    """PyTorch's faster no_grad for pure inference. `inference_mode()` is no_grad here;
    `inference_mode(False)` turns recording on, as PyTorch's does (even inside no_grad).

    PyTorch also marks results as inference tensors that may never enter a graph later;
    minigrad keeps the simpler rule: results are ordinary Variables that do not require grad.
    """

    def __new__(cls, mode: Any = True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: Any = True) -> None:
        if callable(mode):
            return
        if not isinstance(mode, bool):
            raise TypeError(
                f"inference_mode expects True or False; got {mode!r} ({type(mode).__name__})."
            )
        self.mode = not mode  # the grad mode inside: inference means no recording

    def __call__(self, func: Callable) -> Callable:
        recording = self.mode
        return in_mode(func, lambda: set_grad_enabled(recording))

    def __repr__(self) -> str:
        return f"inference_mode(mode={not self.mode})"

"""The autodiff core: Function, the engine, grad modes, gradcheck, anomaly detection.

The same package is importable under PyTorch's name, `minigrad.autograd`.
"""

from minigrad.autodiff import function
from minigrad.autodiff.anomaly import detect_anomaly
from minigrad.autodiff.engine import backward, grad
from minigrad.autodiff.function import BackwardNode, Function, FunctionCtx, once_differentiable
from minigrad.autodiff.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from minigrad.autodiff.gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "BackwardNode",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "function",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]

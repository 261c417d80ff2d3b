"""PyTorch's name for minigrad.autodiff: `torch.autograd.Function` code runs unchanged."""

from minigrad.autodiff import (
    BackwardNode,
    Function,
    FunctionCtx,
    GradcheckError,
    backward,
    detect_anomaly,
    enable_grad,
    grad,
    gradcheck,
    gradgradcheck,
    inference_mode,
    is_grad_enabled,
    no_grad,
    once_differentiable,
    set_grad_enabled,
)
from minigrad.autograd import function

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

"""The autodiff core: Function, the engine, grad modes, gradcheck, anomaly detection.

The same package is importable under PyTorch's name, `minigrad.autograd`.
"""

from minigrad.autodiff import function, graph
from minigrad.autodiff.anomaly import detect_anomaly
from minigrad.autodiff.engine import backward
from minigrad.autodiff.errors import (
    BackwardTwiceError,
    GradientCountError,
    GradientShapeError,
    InplaceModifiedError,
    NoGradFnError,
)
from minigrad.autodiff.function import BackwardNode, Function, FunctionCtx
from minigrad.autodiff.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.autodiff.gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad.autodiff.gradients import grad
from minigrad.autodiff.inference import inference_mode
from minigrad.autodiff.once import once_differentiable

__all__ = [
    "BackwardNode",
    "BackwardTwiceError",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "GradientCountError",
    "GradientShapeError",
    "InplaceModifiedError",
    "NoGradFnError",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "function",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]

"""The autodiff core: Function, the engine, grad modes; and the tools on it: gradcheck,
anomaly detection, forward_ad, functional, graph.

The same package, every submodule included, is `minigrad.autograd`, PyTorch's name.
"""

import importlib
from typing import Any

from minigrad.autodiff import forward_ad, function, graph
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
from minigrad.missing import missing_name
from minigrad.variable import Variable  # torch.autograd.Variable, PyTorch's old name


def __getattr__(name: str) -> Any:
    # functional is a tool built on the ops, which import this package: it loads on first
    # use (minigrad.autograd.functional.jacobian), so the ops never wait on it.
    if name == "functional":
        return importlib.import_module("minigrad.autodiff.functional")
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    raise missing_name("torch.autograd", name, __all__)

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
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
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

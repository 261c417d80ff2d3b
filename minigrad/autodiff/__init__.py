"""PyTorch's torch.autograd: the core's names (minigrad/core/) and the tools built on it:
gradcheck, forward_ad, functional, graph.

The same package, every submodule included, is `minigrad.autograd`, PyTorch's name.
"""

import importlib
import sys
from typing import Any

from minigrad.autodiff import forward_ad, graph
from minigrad.autodiff.gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad.autodiff.package_alias import alias_submodule
from minigrad.core import function, grad_mode
from minigrad.core.engine import backward, grad
from minigrad.core.errors import (
    BackwardTwiceError,
    GradientCountError,
    GradientShapeError,
    InplaceModifiedError,
    NoGradFnError,
    missing_name,
)
from minigrad.core.function import BackwardNode, Function, FunctionCtx, once_differentiable
from minigrad.core.grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from minigrad.core.variable import Variable  # torch.autograd.Variable, PyTorch's old name

# PyTorch's module paths into the core: torch.autograd.function, .grad_mode, .anomaly_mode.
alias_submodule(sys.modules[__name__], "function", function)
alias_submodule(sys.modules[__name__], "grad_mode", grad_mode)
alias_submodule(sys.modules[__name__], "anomaly_mode", grad_mode)


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

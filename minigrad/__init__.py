"""minigrad: a small, readable automatic differentiation engine, numeric and textual.

    import minigrad
    x = minigrad.Variable([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad          # Variable([2., 4.])

Names follow PyTorch (`import minigrad as torch`) and afnio for text.
"""

import importlib
from typing import Any

# Variable first: the autodiff core and the operations all build on it.
from minigrad.core.variable import Parameter, Tensor, Variable
from minigrad.missing import missing_name

# isort: split
# Variable's conversions and display, attached to the class by these modules.
from minigrad import conversions, display, hooks  # noqa: F401

# isort: split
from math import e, inf, nan, pi  # PyTorch's torch.inf, torch.pi, ...

from minigrad import amp, autodiff, backends, ops, text
from minigrad.amp import autocast
from minigrad.autodiff import (
    BackwardNode,
    BackwardTwiceError,
    Function,
    FunctionCtx,
    GradcheckError,
    GradientCountError,
    GradientShapeError,
    InplaceModifiedError,
    NoGradFnError,
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
from minigrad.compiler import compile
from minigrad.devices import device, get_default_device, set_default_device

# PyTorch's dtype names: minigrad.float, minigrad.int and minigrad.bool shadow the builtins
# only as attributes of this module, as torch.float does.
from minigrad.dtypes import (
    bool,
    bool_,
    double,
    float,
    float16,
    float32,
    float64,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
)
from minigrad.factories import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.ops.table import functions as _op_functions
from minigrad.package_alias import alias
from minigrad.serialization import load, save

# PyTorch's name for the autodiff package: the same package, every submodule under both
# names (minigrad.autograd.functional is minigrad.autodiff.functional).
alias("minigrad.autograd", "minigrad.autodiff")
autograd = autodiff

# The top-level functions of the op table: minigrad.exp(x), minigrad.cat([...]), ...
globals().update(_op_functions())

__version__ = "0.1.0"

# Subpackages that pull in heavy libraries (numba, graphviz, matplotlib) load on first use.
_LAZY_SUBPACKAGES = ("kernels", "nn", "optim", "viz", "course", "utils", "cuda")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBPACKAGES:
        try:
            return importlib.import_module(f"minigrad.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"minigrad.{name}":
                raise  # the subpackage exists but something it needs is missing
            raise AttributeError(
                f"minigrad.{name} is not part of this version of minigrad yet"
            ) from None
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad' has no attribute {name!r}")
    raise missing_name("torch", name, globals())


__all__ = [
    "BackwardNode",
    "BackwardTwiceError",
    "Function",
    "FunctionCtx",
    "GradientCountError",
    "GradientShapeError",
    "InplaceModifiedError",
    "NoGradFnError",
    "GradcheckError",
    "Parameter",
    "Tensor",
    "Variable",
    "amp",
    "arange",
    "autocast",
    "as_tensor",
    "autodiff",
    "autograd",
    "backends",
    "backward",
    "bool",
    "bool_",
    "compile",
    "detect_anomaly",
    "device",
    "double",
    "empty",
    "empty_like",
    "enable_grad",
    "eye",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "get_default_device",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "half",
    "inference_mode",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "is_grad_enabled",
    "linspace",
    "load",
    "logspace",
    "long",
    "manual_seed",
    "multinomial",
    "no_grad",
    "normal",
    "once_differentiable",
    "ones",
    "ones_like",
    "ops",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "save",
    "set_default_device",
    "set_grad_enabled",
    "short",
    "tensor",
    "text",
    "uint8",
    "zeros",
    "zeros_like",
]
__all__ += ["e", "inf", "nan", "pi"]
__all__ += sorted(_op_functions())

"""minigrad: a small, readable automatic differentiation engine, numeric and textual.

    import minigrad
    x = minigrad.Variable([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad          # Variable([2., 4.])

Names follow PyTorch (`import minigrad as torch`) and afnio for text.
"""

import importlib as _importlib

from minigrad.core.errors import missing_name as _missing_name

# Variable first: the autodiff core and the operations all build on it.
from minigrad.core.variable import Parameter, Tensor, Variable

# isort: split
from math import e, inf, nan, pi  # PyTorch's torch.inf, torch.pi, ...

from minigrad import amp, autodiff, backends, ops, text
from minigrad.amp import autocast
from minigrad.autodiff.package_alias import alias as _alias
from minigrad.compiler import compile
from minigrad.devices import device, get_default_device, set_default_device

# PyTorch's dtype names: minigrad.float, minigrad.int and minigrad.bool shadow the builtins
# only as attributes of this module, as torch.float does.
from minigrad.dtypes import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
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
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.func import vmap  # torch.vmap is torch.func.vmap
from minigrad.generator import Generator
from minigrad.ops.operators import Size
from minigrad.ops.table import functions as _op_functions
from minigrad.serialization import load, save

# PyTorch's name for the autodiff package: the same package, every submodule under both
# names (minigrad.autograd.functional is minigrad.autodiff.functional).
_alias("minigrad.autograd", "minigrad.autodiff")
autograd = autodiff

# PyTorch's top-level autodiff names (torch.no_grad, torch.enable_grad, ...): every class
# and function in minigrad.autodiff's export list, which is written there, once.
_AUTODIFF_NAMES = [name for name in autodiff.__all__ if callable(vars(autodiff).get(name))]
globals().update({name: getattr(autodiff, name) for name in _AUTODIFF_NAMES})

# The top-level functions of the op table: minigrad.exp(x), minigrad.cat([...]), ...
globals().update(_op_functions())

__version__ = "0.1.0"

# Subpackages that pull in heavy libraries (numba, graphviz, matplotlib) load on first use.
_LAZY_SUBPACKAGES = (
    "kernels", "nn", "optim", "viz", "course", "utils", "cuda", "distributions", "special"
)


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBPACKAGES:
        try:
            return _importlib.import_module(f"minigrad.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"minigrad.{name}":
                raise  # the subpackage exists but something it needs is missing
            raise AttributeError(
                f"minigrad.{name} is not part of this version of minigrad yet"
            ) from None
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad' has no attribute {name!r}")
    raise _missing_name("torch", name, globals())


__all__ = [
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "Generator",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "Parameter",
    "Size",
    "ShortTensor",
    "Tensor",
    "Variable",
    "amp",
    "arange",
    "autocast",
    "as_tensor",
    "autodiff",
    "autograd",
    "backends",
    "bool",
    "bool_",
    "compile",
    "device",
    "double",
    "empty",
    "empty_like",
    "eye",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "func",
    "full_like",
    "get_default_device",
    "half",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "linspace",
    "load",
    "logspace",
    "long",
    "manual_seed",
    "multinomial",
    "normal",
    "ones",
    "ones_like",
    "ops",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "save",
    "set_default_device",
    "short",
    "tensor",
    "text",
    "uint8",
    "vmap",
    "zeros",
    "zeros_like",
]
__all__ += ["e", "inf", "nan", "pi"]
__all__ += [name for name in _AUTODIFF_NAMES if name not in __all__]
__all__ += sorted(_op_functions())

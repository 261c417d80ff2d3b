"""Initialisation of weights, in place, with PyTorch's formulas.

Each function fills a Variable under no_grad (initialising is not part of the model's
computation) and returns it. Given `x.data` (a DataArray, minigrad/core/data_array.py) or
another writable NumPy array, it fills that array in place and returns it, as PyTorch fills
`m.weight.data`. Random numbers come from the global generator, so
`minigrad.manual_seed(s)` makes them repeatable, or from the `generator=` given (a
minigrad.Generator).

A weight of shape (out, in, *kernel) has fan_in = in·k and fan_out = out·k (k the product
of the kernel sizes): the number of inputs that reach one output unit, and of outputs one
input unit reaches. The schemes below scale their random numbers by these fans so that
activations (fan_in) or gradients (fan_out) keep their variance from layer to layer.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import devices, factories
from minigrad.core import errors
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.generator import Generator
from minigrad.ops.op_error import OpError

# The names calculate_gain knows, as PyTorch lists them.
_LINEAR_GAINS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)
_NONLINEARITIES = (*_LINEAR_GAINS, "tanh", "relu", "leaky_relu", "selu")


# --------------------------------------------------------------------------- helpers


def _target(tensor: Any, caller: str) -> Variable:
    """The Variable to fill: numeric, else a TypeError naming the function."""
    if not isinstance(tensor, Variable) or tensor.is_text:
        got = "a text Variable" if isinstance(tensor, Variable) else type(tensor).__name__
        raise TypeError(
            f"{caller} fills a numeric Variable; got {got}. (A NumPy array, such as a "
            f"Variable's .data, is filled in place too.)"
        )
    return tensor


def _random_target(tensor: Any, generator: Any, caller: str) -> Variable:
    """The Variable to fill with random numbers, and a minigrad.Generator or None to draw
    them from; else a TypeError (the kinds of the arguments are checked first, as PyTorch
    does, and the values after)."""
    _target(tensor, caller)
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            f"{caller}: generator must be a minigrad.Generator (or None, for the global "
            f"generator that minigrad.manual_seed seeds); got {type(generator).__name__}. "
            f"Make one with g = minigrad.Generator().manual_seed(seed)."
        )
    return tensor


def _floating(tensor: Variable, caller: str) -> None:
    """PyTorch's NotImplementedError unless tensor is floating: random floats written into
    integers would lose their fractions."""
    factories._floating(f"{caller}()", tensor.dtype, from_input=True)


def _real(value: Any, name: str, caller: str) -> float:
    """A real number (not a bool), else a TypeError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{caller}: {name} must be a number; got {type(value).__name__}.")
    return float(value)


def _dimensions(tensor: Variable, allowed: tuple[int, ...], caller: str) -> None:
    """PyTorch's ValueError unless the tensor has one of the `allowed` numbers of dims."""
    if tensor.ndim not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise ValueError(
            f"{caller}: only Variables with {wanted} dimensions are supported; got shape "
            f"{tuple(tensor.shape)}."
        )


def _source(generator: Generator | None, tensor: Variable, caller: str) -> np.random.Generator:
    """Where the random numbers come from: `generator`, or the global generator that
    minigrad.manual_seed seeds (`generator=None`)."""
    if generator is not None and generator.device.type != tensor.device.type:
        raise RuntimeError(
            f"{caller}: Expected a '{tensor.device.type}' device type for generator but "
            f"found '{generator.device.type}'. Pass a Generator made for the Variable's "
            f"device: minigrad.Generator(device={tensor.device.type!r})."
        )
    return factories.numpy_generator(generator)


def _fill(tensor: Variable, values: np.ndarray) -> Variable:
    """Write values (made on the host) into tensor, in its dtype and on its device, outside
    any graph; returns tensor."""
    values = np.asarray(values).astype(tensor.dtype, copy=False)
    if tensor.device.type != "cpu":
        values = devices.move(values, tensor.device.type)
    with no_grad():
        tensor.copy_(values)
    return tensor


def _fills_arrays_too(function: Callable[..., Variable]) -> Callable[..., Any]:
    """`function`, also taking a NumPy array (`m.weight.data`, the DCGAN idiom) where it takes
    the Variable to fill: the array is filled in place, through a Variable over its memory
    (so the Variable it came from sees the numbers), and returned."""
    caller = function.__name__

    @functools.wraps(function)
    def fill(*args: Any, **kwargs: Any) -> Any:
        array = args[0] if args else kwargs.get("tensor")
        if not isinstance(array, np.ndarray):
            return function(*args, **kwargs)
        if not array.flags.writeable:
            raise ValueError(
                f"{caller} fills its argument in place, but this NumPy array is read-only. "
                f"Pass a writable one (array.copy()) or the Variable itself."
            )
        if array.dtype.kind not in "biufc":
            raise TypeError(
                f"{caller} fills a numeric Variable or array; got an array of dtype "
                f"{array.dtype}."
            )
        over_array = Variable._make(np.asarray(array))  # shares the memory, records nothing
        if args:
            function(over_array, *args[1:], **kwargs)
        else:
            function(**{**kwargs, "tensor": over_array})
        return array

    return fill


# --------------------------------------------------------------------------- plain fills


@_fills_arrays_too
def uniform_(
    tensor: Variable, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Variable:
    """Fill with values drawn uniformly from [a, b)."""
    _random_target(tensor, generator, "uniform_")
    a, b = _real(a, "a", "uniform_"), _real(b, "b", "uniform_")
    _floating(tensor, "uniform_")
    if not a <= b:
        raise OpError(
            f"uniform_ expects a <= b, the ends of the range [a, b); got a={a}, b={b}. "
            f"Swap them."
        )
    drawn = _source(generator, tensor, "uniform_").uniform(a, b, tensor.shape)
    return _fill(tensor, drawn)


@_fills_arrays_too
def normal_(
    tensor: Variable, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Variable:
    """Fill with values drawn from N(mean, std²)."""
    _random_target(tensor, generator, "normal_")
    mean, std = _real(mean, "mean", "normal_"), _real(std, "std", "normal_")
    _floating(tensor, "normal_")
    if std < 0:
        raise OpError(f"normal_ expects std >= 0; got std={std}.")
    drawn = _source(generator, tensor, "normal_").normal(mean, std, tensor.shape)
    return _fill(tensor, drawn)


@_fills_arrays_too
def trunc_normal_(
    tensor: Variable,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Variable:
    """Fill with values from N(mean, std²) conditioned on lying in [a, b]: the normal's
    density, cut off outside [a, b] and rescaled to integrate to one."""
    _random_target(tensor, generator, "trunc_normal_")
    mean, std = _real(mean, "mean", "trunc_normal_"), _real(std, "std", "trunc_normal_")
    a, b = _real(a, "a", "trunc_normal_"), _real(b, "b", "trunc_normal_")
    _floating(tensor, "trunc_normal_")
    if not std > 0:
        raise ValueError(f"trunc_normal_ expects std > 0; got std={std}.")
    if not a <= b:
        raise OpError(
            f"trunc_normal_ expects a <= b, the cut-offs of [a, b]; got a={a}, b={b}. "
            f"Swap them."
        )
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution "
            "of values may be incorrect.",
            stacklevel=3,  # past _fills_arrays_too's wrapper, to the caller
        )
    source = _source(generator, tensor, "trunc_normal_")
    size = int(np.prod(tensor.shape, dtype=np.int64))
    kept = _normal_mass(mean, std, a, b)
    if kept > 0.3:
        values = _redrawn_normals(source, mean, std, a, b, size)
    else:
        values = _accepted_uniforms(source, mean, std, a, b, size)
    return _fill(tensor, values.reshape(tensor.shape))


def _normal_mass(mean: float, std: float, a: float, b: float) -> float:
    """P(a <= X <= b) for X ~ N(mean, std²): Φ((b - mean)/std) - Φ((a - mean)/std)."""

    def cdf(z: float) -> float:
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))

    return cdf((b - mean) / std) - cdf((a - mean) / std)


def _redrawn_normals(
    source: np.random.Generator, mean: float, std: float, a: float, b: float, size: int
) -> np.ndarray:
    """Normals, each one outside [a, b] drawn again: fast when most of the mass is inside."""
    values = source.normal(mean, std, size)
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = source.normal(mean, std, int(outside.sum()))
        outside = (values < a) | (values > b)
    return values


def _accepted_uniforms(
    source: np.random.Generator, mean: float, std: float, a: float, b: float, size: int
) -> np.ndarray:
    """Rejection sampling for a small mass inside [a, b]: propose x uniform on [a, b], keep it
    with probability density(x) / density's highest point on [a, b]."""
    peak = min(max(mean, a), b)  # where the density is highest inside [a, b]
    log_peak = -0.5 * ((peak - mean) / std) ** 2
    values = np.empty(size)
    pending = np.ones(size, dtype=bool)
    while pending.any():
        count = int(pending.sum())
        proposals = source.uniform(a, b, count)
        log_density = -0.5 * ((proposals - mean) / std) ** 2
        accepted = np.log(source.uniform(0.0, 1.0, count)) <= log_density - log_peak
        positions = np.flatnonzero(pending)[accepted]
        values[positions] = proposals[accepted]
        pending[positions] = False
    return values


@_fills_arrays_too
def constant_(tensor: Variable, val: float) -> Variable:
    """Fill with `val`."""
    _target(tensor, "constant_")
    return _fill(tensor, np.full(tensor.shape, _real(val, "val", "constant_")))


@_fills_arrays_too
def zeros_(tensor: Variable) -> Variable:
    """Fill with 0."""
    return constant_(tensor, 0.0)


@_fills_arrays_too
def ones_(tensor: Variable) -> Variable:
    """Fill with 1."""
    return constant_(tensor, 1.0)


@_fills_arrays_too
def eye_(tensor: Variable) -> Variable:
    """Fill a 2-D Variable with the identity matrix (ones on the diagonal, a rectangle
    keeps min(rows, cols) of them), so a Linear layer starts as the identity."""
    _target(tensor, "eye_")
    _dimensions(tensor, (2,), "eye_")
    return _fill(tensor, np.eye(*tensor.shape))


@_fills_arrays_too
def dirac_(tensor: Variable, groups: int = 1) -> Variable:
    """Fill a convolution weight (3, 4 or 5 dims) with Dirac deltas: output channel d of each
    group sees input channel d at the centre of the kernel only, so the layer copies its
    input through (as many channels as fit)."""
    _target(tensor, "dirac_")
    _dimensions(tensor, (3, 4, 5), "dirac_")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"dirac_: groups must be a positive int; got {groups!r}.")
    out_channels, in_channels = tensor.shape[0], tensor.shape[1]
    if out_channels % groups != 0:
        raise ValueError(
            f"dirac_: dim 0 must be divisible by groups; got {out_channels} output channels "
            f"and groups={groups}."
        )
    per_group = out_channels // groups
    centre = tuple(size // 2 for size in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    for group in range(groups):
        for channel in range(min(per_group, in_channels)):
            values[(group * per_group + channel, channel, *centre)] = 1.0
    return _fill(tensor, values)


# --------------------------------------------------------------------------- fans and gains


def _calculate_fan_in_and_fan_out(tensor: Variable) -> tuple[int, int]:
    """fan_in = inputs per output unit, fan_out = outputs per input unit.

    A weight of shape (out, in, *kernel) has fan_in = in·k and fan_out = out·k, where k is
    the product of the kernel sizes (1 for a linear layer).
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out can not be computed for a Variable with fewer than 2 "
            f"dimensions (got shape {tuple(tensor.shape)}); they are defined for weights."
        )
    receptive_field = 1
    for size in tensor.shape[2:]:
        receptive_field *= size
    fan_in = tensor.shape[1] * receptive_field
    fan_out = tensor.shape[0] * receptive_field
    return fan_in, fan_out


def _calculate_correct_fan(tensor: Variable, mode: str) -> int:
    """fan_in or fan_out, as `mode` says (in any case: 'FAN_OUT' works, as in PyTorch)."""
    chosen = mode.lower() if isinstance(mode, str) else None
    if chosen not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out'; got {mode!r}.")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if chosen == "fan_in" else fan_out


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through a nonlinearity: 1 for
    linear layers and sigmoid, 5/3 for tanh, √2 for relu, √(2 / (1 + slope²)) for leaky_relu
    (slope = param, default 0.01), 3/4 for selu."""
    name = nonlinearity if isinstance(nonlinearity, str) else None  # else unsupported
    if name in _LINEAR_GAINS:
        return 1.0
    if name == "tanh":
        return 5.0 / 3
    if name == "relu":
        return math.sqrt(2.0)
    if name == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise ValueError(
                f"calculate_gain('leaky_relu', param): param is the negative slope, a number; "
                f"got {param!r} ({type(param).__name__})."
            )
        return math.sqrt(2.0 / (1 + float(slope) ** 2))
    if name == "selu":
        return 3.0 / 4  # found empirically (PyTorch's value)
    raise ValueError(
        f"unsupported nonlinearity {nonlinearity!r}; use one of {', '.join(_NONLINEARITIES)}."
    )


# --------------------------------------------------------------------------- schemes


def _empty_warned(tensor: Variable) -> bool:
    """True, with PyTorch's warning, when tensor has no element: nothing to fill."""
    if 0 in tensor.shape:
        # 4: past the scheme and _fills_arrays_too's wrapper, to the caller
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=4)
        return True
    return False


@_fills_arrays_too
def kaiming_uniform_(
    tensor: Variable,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Variable:
    """He initialisation: uniform on [-bound, bound], bound = gain·sqrt(3 / fan).

    With the default leaky_relu gain sqrt(2 / (1 + a²)); `a` is the negative slope.
    """
    _random_target(tensor, generator, "kaiming_uniform_")
    _floating(tensor, "kaiming_uniform_")
    if _empty_warned(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    # Through uniform_ itself, so that every uniform fill goes one way.
    if generator is None:
        return uniform_(tensor, -bound, bound)
    return uniform_(tensor, -bound, bound, generator)


@_fills_arrays_too
def kaiming_normal_(
    tensor: Variable,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Variable:
    """He initialisation from N(0, std²), std = gain / sqrt(fan)."""
    _random_target(tensor, generator, "kaiming_normal_")
    _floating(tensor, "kaiming_normal_")
    if _empty_warned(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    if generator is None:
        return normal_(tensor, 0.0, std)
    return normal_(tensor, 0.0, std, generator)


@_fills_arrays_too
def xavier_uniform_(
    tensor: Variable, gain: float = 1.0, generator: Generator | None = None
) -> Variable:
    """Glorot initialisation: uniform on [-bound, bound], bound = gain·sqrt(6 / (fan_in +
    fan_out)), so a layer keeps the variance of its inputs and of its gradients alike."""
    _random_target(tensor, generator, "xavier_uniform_")
    gain = _real(gain, "gain", "xavier_uniform_")
    _floating(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if fan_in + fan_out == 0:
        return tensor  # an empty weight: nothing to fill
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    if generator is None:
        return uniform_(tensor, -bound, bound)
    return uniform_(tensor, -bound, bound, generator)


@_fills_arrays_too
def xavier_normal_(
    tensor: Variable, gain: float = 1.0, generator: Generator | None = None
) -> Variable:
    """Glorot initialisation from N(0, std²), std = gain·sqrt(2 / (fan_in + fan_out))."""
    _random_target(tensor, generator, "xavier_normal_")
    gain = _real(gain, "gain", "xavier_normal_")
    _floating(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if fan_in + fan_out == 0:
        return tensor
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    if generator is None:
        return normal_(tensor, 0.0, std)
    return normal_(tensor, 0.0, std, generator)


@_fills_arrays_too
def orthogonal_(
    tensor: Variable, gain: float = 1.0, generator: Generator | None = None
) -> Variable:
    """Fill with a (semi-)orthogonal matrix times gain: viewed as (rows, cols) (dims after
    the first flattened), W Wᵀ = gain²·I when rows <= cols, and Wᵀ W = gain²·I otherwise.

    Q of the QR factorisation of a Gaussian matrix, its columns' signs fixed by R's diagonal
    so that Q is uniformly distributed over orthogonal matrices.
    """
    _random_target(tensor, generator, "orthogonal_")
    gain = _real(gain, "gain", "orthogonal_")
    _floating(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(
            f"orthogonal_: only Variables with 2 or more dimensions are supported; got shape "
            f"{tuple(tensor.shape)}."
        )
    rows = tensor.shape[0]
    size = int(np.prod(tensor.shape, dtype=np.int64))
    if size == 0:
        return tensor
    cols = size // rows
    gaussian = _source(generator, tensor, "orthogonal_").standard_normal((rows, cols))
    wide = rows < cols
    if wide:  # QR of the tall transpose: Q gets orthonormal columns, transposed back
        gaussian = gaussian.T
    q, r = np.linalg.qr(gaussian)
    q = q * np.sign(np.diag(r))
    if wide:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


@_fills_arrays_too
def sparse_(
    tensor: Variable, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Variable:
    """Fill a 2-D Variable from N(0, std²), then zero ceil(sparsity·rows) randomly chosen
    entries of each column (Martens, 2010)."""
    _random_target(tensor, generator, "sparse_")
    sparsity = _real(sparsity, "sparsity", "sparse_")
    std = _real(std, "std", "sparse_")
    _floating(tensor, "sparse_")
    _dimensions(tensor, (2,), "sparse_")
    if not 0.0 <= sparsity <= 1.0:
        raise ValueError(
            f"sparse_: sparsity is the fraction of each column set to zero, in [0, 1]; got "
            f"{sparsity}."
        )
    if std < 0:
        raise OpError(f"sparse_ expects std >= 0; got std={std}.")
    source = _source(generator, tensor, "sparse_")
    rows, cols = tensor.shape
    values = source.normal(0.0, std, (rows, cols))
    zeros_per_column = math.ceil(sparsity * rows)
    for column in range(cols):
        chosen = source.permutation(rows)[:zeros_per_column]
        values[chosen, column] = 0.0
    return _fill(tensor, values)


# --------------------------------------------------------------------------- old names


def _deprecated(function: Callable[..., Variable]) -> Callable[..., Variable]:
    """PyTorch's old name without the trailing underscore: the same fill, with a warning."""
    new_name = function.__name__
    old_name = new_name[:-1]

    def old_spelling(*args: Any, **kwargs: Any) -> Variable:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return function(*args, **kwargs)

    old_spelling.__name__ = old_name
    old_spelling.__qualname__ = old_name
    old_spelling.__doc__ = f"Deprecated: use nn.init.{new_name}."
    return old_spelling


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.nn.init' has no attribute {name!r}")
    raise errors.missing_name("torch.nn.init", name, __all__)

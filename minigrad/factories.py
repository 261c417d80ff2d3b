"""Factories: new leaf Variables filled with zeros, ones, a value, a range or random numbers.

Every factory takes `dtype=`, `device=` and `requires_grad=`, as in PyTorch; grad modes
never change `requires_grad` (the factory exception). Random factories draw from one
generator that `manual_seed` resets, so runs repeat. Without `dtype=`, floating data is
float64 (NumPy's default; PyTorch's is float32).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.checks import check_flag
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.dtypes import as_dtype
from minigrad.ops.table import register

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Reset the random generator used by rand, randn, randint and normal, so results repeat."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed expects an int; got {seed!r} ({type(seed).__name__}).")
    if seed < 0:
        raise ValueError(f"manual_seed expects a non-negative int; got {seed}.")
    # One call as a whole, so that minigrad.compile's replay seeds again at the same point.
    state.listener.opaque(functools.partial(_reseed, int(seed)))


def _reseed(seed: int) -> None:
    global _generator
    _generator = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    """The generator the random factories (and dropout, DataLoader shuffling) draw from."""
    return _generator


def _size(size: tuple, factory: str) -> tuple[int, ...]:
    """Accept zeros(2, 3), zeros((2, 3)) and zeros([2, 3])."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for dim in size:  # the kinds first, as PyTorch checks them
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"{factory}() sizes must be ints; got {dim!r} in {size}.")
    for dim in size:
        if dim < 0:
            raise ValueError(f"{factory}() sizes must be non-negative; got {size}.")
    return tuple(int(dim) for dim in size)


def factory(maker: Callable[..., Variable]) -> Callable[..., Variable]:
    """Decorate a factory: its dtype=, device= and requires_grad= are checked, by the
    factory's name, before anything else (as PyTorch parses every argument's kind first)."""
    name = maker.__name__

    @functools.wraps(maker)
    def checked(
        *args: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False, **kwargs: Any
    ) -> Variable:
        _check_options(f"{name}()", dtype, device, requires_grad)
        return maker(*args, dtype=dtype, device=device, requires_grad=requires_grad, **kwargs)

    return checked


def _check_options(where: str, dtype: Any, device: Any, requires_grad: Any) -> None:
    if dtype is not None:
        as_dtype(dtype)
    if device is not None:
        devices.check_device(device)
    check_flag(requires_grad, "requires_grad", where)


def _defaults_from(x: Variable, dtype: Any, device: Any) -> tuple[Any, Any]:
    """dtype and device for a new leaf made like x: x's own, unless the call gives others."""
    return (x.dtype if dtype is None else dtype, x.device if device is None else device)


def _leaf(data: Any, dtype: Any, device: Any, requires_grad: bool) -> Variable:
    """The new leaf: data cast to `dtype`, on `device`."""
    if dtype is not None:
        data = _numeric_array(data).astype(as_dtype(dtype), copy=False)
    if device is None:
        device = devices.get_default_device().type
    if devices.check_device(device) == "cuda":
        data = devices.move(np.asarray(data), "cuda")
    return Variable(data, requires_grad=requires_grad)


def _made(
    maker: str, arguments: tuple, dtype: Any, device: Any, requires_grad: bool
) -> Variable:
    """A factory's leaf, filled by `maker` (a NumPy function, or a method of the generator
    when it starts with "random.") called with `arguments`.

    While minigrad.compile records a step (a listener is watching), the array is made by
    the operation Made, so that a replay makes it again: the same zeros, the next random
    numbers from the generator, in the order the eager step drew them."""
    on_cpu = device is None or devices.check_device(device) == "cpu"
    if state.listener.watching and not requires_grad and on_cpu:
        return Made.apply(maker, arguments, None if dtype is None else as_dtype(dtype))
    return _leaf(_fill(maker, arguments), dtype, device, requires_grad)


def _fill(maker: str, arguments: tuple) -> np.ndarray:
    if maker.startswith("random."):
        # The generator of this moment: manual_seed replaces it.
        return getattr(_generator, maker.removeprefix("random."))(*arguments)
    return getattr(np, maker)(*arguments)


class Made(Function):
    """A factory's new array as an operation with no inputs (see _made): forward fills it,
    and nothing flows back."""

    @staticmethod
    def forward(ctx: FunctionCtx, maker: str, arguments: tuple, dtype: Any) -> np.ndarray:
        data = _fill(maker, arguments)
        return data if dtype is None else _numeric_array(data).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return None, None, None


def _numeric_array(data: Any) -> np.ndarray:
    """data as an array of numbers (bool, int, float, complex), or a TypeError."""
    array = np.asarray(data)
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"a Variable holds numbers: bools, ints, floats or nested lists of them; got "
            f"{_described(data)}. (Text goes in Variable('some text').)"
        )
    return array


def _described(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _count(value: Any, factory: str, label: str) -> int:
    """An int >= 0 (a number of elements), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{factory}(): {label} must be an int; got {_described(value)}.")
    if value < 0:
        raise ValueError(f"{factory}(): {label} must be non-negative; got {value}.")
    return int(value)


def _fill_value(value: Any, factory: str) -> Any:
    """The value to fill with: a number, or a one-element Variable or array."""
    if isinstance(value, Variable) and not value.is_text and value.numel() == 1:
        return value.item()
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biufc":
        return value.item()
    if not isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(
            f"{factory}(): fill_value must be a number; got {_described(value)}."
        )
    return value


# --------------------------------------------------------------------------- filled


@factory
def zeros(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _made("zeros", (_size(size, "zeros"),), dtype, device, requires_grad)


@factory
def ones(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _made("ones", (_size(size, "ones"),), dtype, device, requires_grad)


@factory
def empty(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Uninitialised memory, as in PyTorch: fill it before reading it."""
    return _made("empty", (_size(size, "empty"),), dtype, device, requires_grad)


@factory
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    value = _fill_value(fill_value, "full")
    shape = _size(size if isinstance(size, (tuple, list)) else (size,), "full")
    return _made("full", (shape, value), dtype, device, requires_grad)


@factory
def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """The n x m identity matrix (ones on the diagonal)."""
    rows, columns = _size((n, n if m is None else m), "eye")
    return _made("eye", (rows, columns), dtype, device, requires_grad)


# --------------------------------------------------------------------------- ranges


def _number(value: Any, factory: str, label: str) -> Any:
    if isinstance(value, Variable) and not value.is_text and value.numel() == 1:
        return value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{factory}: {label} must be a number; got {value!r}.")
    return value


@factory
def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """start, start + step, ... up to (not including) end; arange(n) is 0 .. n-1."""
    if end is None:
        start, end = 0, start
    start, end = _number(start, "arange", "start"), _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    if not all(math.isfinite(value) for value in (start, end, step)):
        raise RuntimeError(
            f"arange: start, end and step must be finite; got start={start}, end={end}, "
            f"step={step}."
        )
    if step == 0:
        raise ValueError("arange: step must be nonzero.")
    return _made("arange", (start, end, step), dtype, device, requires_grad)


@factory
def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """`steps` evenly spaced numbers from start to end, both included."""
    start, end = _number(start, "linspace", "start"), _number(end, "linspace", "end")
    count = _count(steps, "linspace", "steps")
    return _made("linspace", (start, end, count), dtype, device, requires_grad)


@factory
def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """base ** linspace(start, end, steps)."""
    start, end = _number(start, "logspace", "start"), _number(end, "logspace", "end")
    count = _count(steps, "logspace", "steps")
    base = _number(base, "logspace", "base")
    return _leaf(np.logspace(start, end, count, base=base), dtype, device, requires_grad)


# --------------------------------------------------------------------------- random


@factory
def rand(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Uniform numbers in [0, 1)."""
    return _made("random.random", (_size(size, "rand"),), dtype, device, requires_grad)


@factory
def randn(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Standard normal numbers (mean 0, standard deviation 1)."""
    shape = _size(size, "randn")
    return _made("random.standard_normal", (shape,), dtype, device, requires_grad)


@factory
def randint(
    low: int = 0,
    high: int | None = None,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Integers drawn uniformly from [low, high); randint(high, size) starts at 0. int64."""
    if high is None:  # randint(high, size=...): PyTorch's short form, size by keyword
        low, high = 0, low
    elif size is None:  # randint(high, size): the short form, size in second place
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint() needs a size, e.g. randint(0, 10, (3,)).")
    for label, bound in (("low", low), ("high", high)):
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)):
            raise TypeError(f"randint(): {label} must be an int; got {_described(bound)}.")
    shape = _size(size if isinstance(size, (tuple, list)) else (size,), "randint")
    if high <= low:
        raise ValueError(f"randint: expected low < high; got low={low}, high={high}.")
    return _made("random.integers", (low, high, shape, np.int64), dtype, device, requires_grad)


@factory
def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Normal numbers with the given mean and std (numbers or Variables that broadcast)."""
    mean_data = _numeric_argument(mean, "mean")
    std_data = _numeric_argument(std, "std")
    if np.any(std_data < 0):
        raise ValueError(f"normal expects std >= 0; got {std_data}.")
    shapes = [mean_data.shape, std_data.shape]
    if size is not None:
        size = _size(size if isinstance(size, (tuple, list)) else (size,), "normal")
        shapes.append(size)
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:  # NumPy's "shape mismatch"
        shape = None
    if shape is None or (size is not None and shape != size):
        raise ValueError(
            f"normal(): mean of shape {mean_data.shape} and std of shape {std_data.shape} "
            f"must broadcast to one shape{'' if size is None else f', the size {size}'}."
        )
    if mean_data.ndim == 0 and std_data.ndim == 0:  # numbers: a replay can draw again
        arguments = (mean_data.item(), std_data.item(), shape)
        return _made("random.normal", arguments, dtype, device, requires_grad)
    values = _generator.normal(mean_data, std_data, shape)
    return _leaf(values, dtype, device, requires_grad)


@register("normal_", function=False)
def normal_(x: Variable, mean: float = 0.0, std: float = 1.0) -> Variable:
    """Fill x in place with normal numbers of the given mean and std; returns x."""
    _numeric(x, "normal_")
    drawn = normal(mean, std, x.shape, dtype=x.dtype, device=x.device)
    return x.copy_(drawn)


@register("uniform_", function=False)
def uniform_(x: Variable, a: float = 0.0, b: float = 1.0) -> Variable:
    """Fill x in place with numbers drawn uniformly from [a, b); returns x."""
    _numeric(x, "uniform_")
    low, high = _number(a, "uniform_", "a"), _number(b, "uniform_", "b")
    if not low <= high:
        raise ValueError(f"uniform_ expects a <= b; got a={low}, b={high}.")
    drawn = _made("random.uniform", (low, high, x.shape), x.dtype, x.device, False)
    return x.copy_(drawn)


def _numeric_argument(value: Any, label: str) -> np.ndarray:
    """normal()'s mean or std as an array: a number, or a numeric Variable or array."""
    if isinstance(value, Variable) and not value.is_text:
        value = value.data.to_host() if devices.is_on_cuda(value.data) else value.data
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number, np.ndarray)):
        raise TypeError(
            f"normal(): {label} must be a number or a numeric Variable; got "
            f"{_described(value)}."
        )
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"normal(): {label} must hold numbers; got dtype {array.dtype}.")
    return array


@factory
def randperm(
    n: int, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """A random permutation of 0 .. n-1 (int64)."""
    count = _count(n, "randperm", "n")
    return _made("random.permutation", (count,), dtype, device, requires_grad)


def multinomial(probabilities: Variable, num_samples: int, replacement: bool = False) -> Variable:
    """Indices drawn from each row of `probabilities` (weights, need not sum to 1); int64.

    Without replacement it uses the Gumbel-top-k trick: adding Gumbel noise to the log
    weights and taking the k largest draws k distinct indices with the right probabilities.
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(
            f"multinomial(): num_samples must be an int; got {_described(num_samples)}."
        )
    check_flag(replacement, "replacement", "multinomial()")
    if isinstance(probabilities, Variable) and not probabilities.is_text:
        weights = np.asarray(probabilities.detach().cpu().numpy())
    elif isinstance(probabilities, np.ndarray):
        weights = probabilities
    else:
        raise TypeError(
            f"multinomial(): input must be a Variable of weights; got "
            f"{_described(probabilities)}."
        )
    if weights.dtype.kind not in "biuf":
        raise TypeError(f"multinomial(): the weights must be numbers; got dtype {weights.dtype}.")
    count = _count(num_samples, "multinomial", "num_samples")
    if weights.ndim not in (1, 2) or weights.shape[-1] == 0:
        raise RuntimeError(
            f"multinomial expects a 1-D or 2-D input with at least one category; got shape "
            f"{weights.shape}."
        )
    if np.any(weights < 0) or not np.all(np.isfinite(weights)):
        raise RuntimeError("multinomial: weights must be finite and non-negative.")
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    totals = rows.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("multinomial: each row of weights needs a positive sum.")
    if replacement:
        cdf = np.cumsum(rows / totals, axis=1)
        draws = _generator.random((rows.shape[0], count))
        indices = (draws[..., None] >= cdf[:, None, :]).sum(axis=-1)
        indices = np.minimum(indices, rows.shape[1] - 1)
    else:
        if count > np.count_nonzero(rows, axis=1).min():
            raise RuntimeError(
                f"multinomial: cannot draw {count} samples without replacement from rows "
                f"with fewer non-zero weights; pass replacement=True or draw fewer."
            )
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + _generator.gumbel(size=rows.shape)
        indices = np.argsort(-keys, axis=1, kind="stable")[:, :count]
    indices = indices.astype(np.int64)
    return Variable(indices[0] if weights.ndim == 1 else indices)


# --------------------------------------------------------------------------- like another


def _numeric(other: Any, factory: str) -> Variable:
    if not isinstance(other, Variable) or other.is_text:
        raise TypeError(
            f"{factory} expects a numeric Variable; got "
            f"{'a text Variable' if isinstance(other, Variable) else type(other).__name__}."
        )
    return other


def _like(
    other: Any,
    factory_name: str,
    maker: str,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    fill: tuple = (),
) -> Variable:
    """A leaf of other's shape, dtype and device (unless told otherwise), made by `maker`
    (see _made) from the shape and then `fill`."""
    other = _numeric(other, factory_name)
    dtype, device = _defaults_from(other, dtype, device)
    return _made(maker, (other.shape, *fill), dtype, device, requires_grad)


@factory
def zeros_like(
    other: Variable, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _like(other, "zeros_like", "zeros", dtype, device, requires_grad)


@factory
def ones_like(
    other: Variable, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _like(other, "ones_like", "ones", dtype, device, requires_grad)


@factory
def empty_like(
    other: Variable, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _like(other, "empty_like", "empty", dtype, device, requires_grad)


@factory
def full_like(
    other: Variable,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    value = _fill_value(fill_value, "full_like")
    return _like(other, "full_like", "full", dtype, device, requires_grad, fill=(value,))


@factory
def rand_like(
    other: Variable, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _like(other, "rand_like", "random.random", dtype, device, requires_grad)


@factory
def randn_like(
    other: Variable, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _like(other, "randn_like", "random.standard_normal", dtype, device, requires_grad)


# --------------------------------------------------------------------------- from data


@factory
def tensor(
    data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """PyTorch's spelling of Variable(data): a new leaf that owns a copy of the data."""
    if isinstance(data, str):
        return Variable(data, requires_grad=requires_grad)
    try:
        array = np.array(_plain(data))
    except ValueError:  # NumPy's "inhomogeneous shape"
        raise ValueError(
            f"tensor(): nested lists must be rectangular (every row the same length); got "
            f"{_described(data)}. Pad the rows, or make one Variable per row."
        ) from None
    return _leaf(_numeric_array(array), dtype, device, requires_grad)


def _plain(data: Any) -> Any:
    """data with every Variable in it (also inside lists: tensor([t1, t2])) as host values."""
    if isinstance(data, Variable):
        return data.data.to_host() if devices.is_on_cuda(data.data) else data.data
    if isinstance(data, (list, tuple)):
        return [_plain(item) for item in data]
    return data


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Variable:
    """data as a Variable, sharing memory when it already is one or a NumPy array of the
    requested dtype (no copy), as in PyTorch."""
    _check_options("as_tensor()", dtype, device, False)
    if isinstance(data, Variable):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == as_dtype(dtype)):
        shared = Variable._make(data)
        return shared if device is None else shared.to(device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Variable:
    """A Variable over the same memory as `array`: changing one changes the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a NumPy array; got {type(array).__name__}.")
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"from_numpy: can't convert an array of dtype {array.dtype}; the supported dtypes "
            f"are bool, integers and floats."
        )
    return Variable._make(array)


# --------------------------------------------------------------------------- x.new_*


def _new_made(
    x: Variable, maker: str, arguments: tuple, dtype: Any, device: Any, requires_grad: bool
) -> Variable:
    """A leaf made by `maker` (see _made) with x's dtype and device, unless others are given."""
    dtype, device = _defaults_from(x, dtype, device)
    return _made(maker, arguments, dtype, device, requires_grad)


@register("new_zeros", function=False)
@factory
def new_zeros(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Zeros with x's dtype and device (unless given)."""
    return _new_made(x, "zeros", (_size(size, "new_zeros"),), dtype, device, requires_grad)


@register("new_ones", function=False)
@factory
def new_ones(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Ones with x's dtype and device (unless given)."""
    return _new_made(x, "ones", (_size(size, "new_ones"),), dtype, device, requires_grad)


@register("new_empty", function=False)
@factory
def new_empty(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Uninitialised memory with x's dtype and device (unless given)."""
    return _new_made(x, "empty", (_size(size, "new_empty"),), dtype, device, requires_grad)


@register("new_full", function=False)
@factory
def new_full(
    x: Variable,
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """fill_value everywhere, with x's dtype and device (unless given)."""
    value = _fill_value(fill_value, "new_full")
    shape = _size(size if isinstance(size, (tuple, list)) else (size,), "new_full")
    return _new_made(x, "full", (shape, value), dtype, device, requires_grad)


@register("new", function=False)
def new(x: Variable, *args: Any) -> Variable:
    """PyTorch's legacy x.new(...): x.new(data) copies data, x.new(2, 3) is uninitialised;
    either way with x's dtype and device."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        return x.new_tensor(args[0])  # the method, which names a bad argument
    return new_empty(x, *args)


@register("new_tensor", function=False)
@factory
def new_tensor(
    x: Variable, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """A copy of `data` as a new leaf with x's dtype and device (unless given)."""
    source = data.data if isinstance(data, Variable) else data
    dtype, device = _defaults_from(x, dtype, device)
    return _leaf(np.array(source), dtype, device, requires_grad)

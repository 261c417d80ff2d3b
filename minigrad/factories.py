"""Factories: new leaf Variables filled with zeros, ones, a value, a range or random numbers.

Every factory takes `dtype=`, `device=` and `requires_grad=` by keyword, as in PyTorch;
grad modes never change `requires_grad` (the factory exception). Random factories draw from
one global generator that `manual_seed` resets, so runs repeat, or from the
`minigrad.Generator` passed as `generator=` (generator.py). Without `dtype=`, floating data
is float64 (NumPy's default; PyTorch's is float32).

A factory never hands back silently wrong numbers: a value that its dtype cannot hold
(full((2,), 300, dtype=minigrad.uint8)) and random floats asked for in an integer dtype
(rand(3, dtype=minigrad.int64), which would round to zeros) raise PyTorch's errors, where
NumPy would wrap, round or warn.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.checks import check_flag
from minigrad.core.data_array import DataArray
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.dtypes import as_dtype
from minigrad.generator import Generator
from minigrad.ops.operators import Size
from minigrad.ops.table import register

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Reset the global random generator (used by rand, randn, randint, normal, dropout,
    DataLoader shuffling, ... without generator=), so results repeat. A minigrad.Generator
    keeps its own stream."""
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


def numpy_generator(source: Generator | None) -> np.random.Generator:
    """The NumPy generator a draw with `generator=source` takes its numbers from: the
    Generator's own, or the global one (of this moment: manual_seed replaces it) for None."""
    return _generator if source is None else source._numpy


def _check_generator(where: str, source: Any) -> Generator | None:
    """generator= as a minigrad.Generator (or None), or PyTorch's TypeError."""
    if source is None or isinstance(source, Generator):
        return source
    kind = type(source)
    kind_name = kind.__name__
    if kind.__module__ != "builtins":
        kind_name = f"{kind.__module__}.{kind.__name__}"
    raise TypeError(
        f"{where}: generator must be a minigrad.Generator (or None, for the global generator "
        f"that minigrad.manual_seed seeds); got {kind_name}. Make one with "
        f"g = minigrad.Generator().manual_seed(seed)."
    )


def _check_generator_device(where: str, source: Generator | None, device: Any) -> None:
    """PyTorch's RuntimeError when a Generator of one device draws for another."""
    if source is None:
        return
    target = devices.get_default_device().type if device is None else devices.check_device(device)
    if source.device.type != target:
        raise RuntimeError(
            f"{where}: Expected a '{target}' device type for generator but found "
            f"'{source.device.type}'. Draw for the Generator's device, or make the Generator "
            f"with minigrad.Generator(device={target!r})."
        )


def _size(size: tuple, factory: str) -> tuple[int, ...]:
    """Accept zeros(2, 3), zeros((2, 3)) and zeros([2, 3])."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for dim in size:  # the kinds first, as PyTorch checks them
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"{factory}() sizes must be ints; got {dim!r} in {size}.")
    for dim in size:
        if dim < 0:
            raise RuntimeError(f"{factory}() sizes must be non-negative; got {size}.")
    return tuple(int(dim) for dim in size)


def _given_size(size: tuple, factory: str) -> tuple[int, ...]:
    """_size of the positional sizes of zeros(*size) and the like, which PyTorch requires:
    zeros(()) is a 0-d Variable, zeros() a TypeError."""
    if len(size) == 0:
        raise TypeError(
            f'{factory}() missing 1 required positional arguments: "size". Give the shape, '
            f"e.g. {factory}(2, 3), or {factory}(()) for a 0-d Variable."
        )
    return _size(size, factory)


def _full_size(size: Any, factory: str) -> tuple[int, ...]:
    """The size of full(), new_full() and randint(): a tuple or list of ints, as PyTorch
    requires (an int alone is refused there, unlike zeros(2))."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"{factory}(): argument 'size' must be a tuple of ints, but got "
            f"{type(size).__name__} {size!r:.40}. Give the shape as a tuple, e.g. ({size!r:.20},)."
        )
    return _size((size,), factory)


def factory(maker: Callable[..., Variable]) -> Callable[..., Variable]:
    """Decorate a factory: its dtype=, device= and requires_grad= are checked, by the
    factory's name, before anything else (as PyTorch parses every argument's kind first).

    Only the options the caller gave are passed on, so a call that does not fit the
    factory gets Python's own message about the caller's own arguments."""
    name = maker.__name__
    where = f"{name}()"
    parameters = inspect.signature(maker).parameters.values()
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    options = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]
    # zeros(*size) takes any number of positional arguments; full(size, fill_value) two.
    takes_any_number = any(p.kind is p.VAR_POSITIONAL for p in parameters)

    # zeros_like(other, ...) and the like: PyTorch checks `input` before the options.
    takes_a_variable = bool(positional) and positional[0].name == "other"

    @functools.wraps(maker)
    def checked(*args: Any, **kwargs: Any) -> Variable:
        if not takes_any_number and len(args) > len(positional):
            raise TypeError(_too_many_positional(name, positional, options, len(args)))
        if takes_a_variable and args:
            _numeric(args[0], name)
        if "generator" in options:
            _check_generator(where, kwargs.get("generator"))
        if kwargs.get("dtype") is not None:
            _check_dtype(where, kwargs["dtype"])
        if kwargs.get("device") is not None:
            _check_device(where, kwargs["device"])
        if "requires_grad" in kwargs:
            # NumPy's bool passes the check; Variable takes Python's, so pass that on.
            kwargs["requires_grad"] = check_flag(kwargs["requires_grad"], "requires_grad", where)
        return maker(*args, **kwargs)

    return checked


def _too_many_positional(
    name: str, positional: list[inspect.Parameter], options: list[str], given: int
) -> str:
    """Python's message for too many positional arguments, and the usual cause: a dtype
    (or device) passed in place, where PyTorch's factories take them by keyword only."""
    most = len(positional)
    least = sum(p.default is p.empty for p in positional)
    if least == most:
        takes = f"{most} positional argument{'' if most == 1 else 's'}"
    else:
        takes = f"from {least} to {most} positional arguments"
    keywords = ", ".join(f"{option}=" for option in options[:-1]) + f" and {options[-1]}="
    return (
        f"{name}() takes {takes} but {given} {'was' if given == 1 else 'were'} given; "
        f"pass {keywords} by keyword, e.g. {name}(..., dtype=minigrad.float32)."
    )


def _check_dtype(where: str, dtype: Any) -> np.dtype:
    """dtype as a NumPy dtype of numbers (bool, int, float, complex), or a TypeError."""
    try:
        numpy_dtype = as_dtype(dtype)
    except TypeError as error:
        raise TypeError(f"{where}: {error}") from None
    if numpy_dtype.kind not in "biufc":  # str, bytes, object, datetime64, ...
        given = dtype.__name__ if isinstance(dtype, type) else str(numpy_dtype)
        shown = given if given == str(numpy_dtype) else f"{given} (NumPy's {numpy_dtype})"
        raise TypeError(
            f"{where}: dtype {shown} is not a numeric dtype; use one such as minigrad.float32, "
            f"minigrad.int64 or minigrad.bool. (Text goes in Variable('some text').)"
        )
    return numpy_dtype


def _check_device(where: str, device: Any) -> str:
    """'cpu' or 'cuda' from device=, or devices.check_device's error naming the factory."""
    try:
        return devices.check_device(device)
    except ValueError as error:  # a str that names no device
        raise ValueError(f"{where}: {error}") from None
    except TypeError:  # not a str or minigrad.device: say what it is, e.g. a torch.device
        kind = type(device)
        kind_name = f"{kind.__module__}.{kind.__qualname__}"
        if kind.__module__ == "builtins":
            kind_name = kind.__name__
        text = repr(device)
        hint = ""
        if getattr(device, "type", None) in devices.DEVICES:  # torch.device("cpu"), ...
            hint = f" Pass its name instead: device={device.type!r}."
        raise TypeError(
            f"{where}: device must be 'cpu', 'cuda' or minigrad.device(...); got {kind_name} "
            f"{text if len(text) <= 40 else text[:37] + '...'}.{hint}"
        ) from None


def _floating(where: str, dtype: Any, from_input: bool = False) -> None:
    """A NotImplementedError, as PyTorch's, unless `dtype` is a floating dtype (or None).

    The random factories draw floats; cast to an integer dtype they would round to zeros
    (rand), or all be True (randn with bool), so PyTorch refuses such a dtype outright."""
    if dtype is None:
        return
    numpy_dtype = as_dtype(dtype)
    if numpy_dtype.kind == "f":
        return
    if from_input:
        advice = "pass dtype=minigrad.float32, or convert the input first with .float()"
    else:
        advice = "pass a floating dtype such as minigrad.float32 or minigrad.float64"
    if numpy_dtype.kind in "iu":
        advice += "; for random integers use minigrad.randint"
    if numpy_dtype.kind == "c":
        reason = "minigrad draws real numbers only"
    elif numpy_dtype.kind == "b":
        reason = "cast to bool, every float drawn but 0.0 would be True"
    else:
        reason = f"cast to {numpy_dtype}, the floats drawn would lose their fractions (0.73 is 0)"
    whose = " (the input's dtype)" if from_input else ""
    raise NotImplementedError(
        f"{where}: random floats in dtype {numpy_dtype}{whose} are not implemented: {reason}. "
        f"To fix it, {advice}."
    )


def _defaults_from(x: Variable, dtype: Any, device: Any) -> tuple[Any, Any]:
    """dtype and device for a new leaf made like x: x's own, unless the call gives others."""
    return (x.dtype if dtype is None else dtype, x.device if device is None else device)


def _leaf(data: Any, dtype: Any, device: Any, requires_grad: bool, where: str) -> Variable:
    """The new leaf: data cast to `dtype` (see _cast), on `device`."""
    if dtype is not None:
        data = _cast(data, dtype, where)
    if device is None:
        device = devices.get_default_device().type
    if devices.check_device(device) == "cuda":
        data = devices.move(np.asarray(data), "cuda")
    return Variable(data, requires_grad=requires_grad)


def _made(
    where: str,
    maker: str,
    arguments: tuple,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    source: Generator | None = None,
) -> Variable:
    """The leaf of the factory `where` ("zeros()"), filled by `maker` (a NumPy function, or
    a method of the generator when it starts with "random.") called with `arguments`; the
    generator is `source`, or the global one for None.

    While minigrad.compile records a step (a listener is watching), the array is made by
    the operation Made, so that a replay makes it again: the same zeros, the next random
    numbers from the same generator (the global one, or the Generator object itself, read
    at each replay), in the order the eager step drew them."""
    _check_generator_device(where, source, device)
    if dtype is not None and maker in ("zeros", "ones", "empty"):
        # NumPy makes these in the dtype itself: nothing to cast, and empty's leftover
        # memory (NaN, perhaps) is never cast to an integer dtype.
        arguments = (*arguments, as_dtype(dtype))
    on_cpu = device is None or devices.check_device(device) == "cpu"
    if state.listener.watching and not requires_grad and on_cpu:
        numpy_dtype = None if dtype is None else as_dtype(dtype)
        return Made.apply(maker, arguments, numpy_dtype, where, source)
    return _leaf(_fill(maker, arguments, source), dtype, device, requires_grad, where)


def _fill(maker: str, arguments: tuple, source: Generator | None = None) -> np.ndarray:
    try:
        if maker.startswith("random."):
            # The generator of this moment: manual_seed replaces the NumPy one underneath.
            return getattr(numpy_generator(source), maker.removeprefix("random."))(*arguments)
        return getattr(np, maker)(*arguments)
    except MemoryError:
        raise RuntimeError(_too_large(arguments, "can't allocate memory")) from None
    except ValueError as error:
        if "too big" not in str(error) and "Maximum allowed dimension" not in str(error):
            raise
        raise RuntimeError(_too_large(arguments, "storage size calculation overflowed")) from None


def _too_large(arguments: tuple, what: str) -> str:
    """PyTorch's allocator message for an array that does not fit in memory."""
    shape = arguments[0] if isinstance(arguments[0], tuple) else arguments[:2]
    count = 1
    for size in shape:
        count *= int(size)
    return (
        f"[enforce fail] DefaultCPUAllocator: {what}: you tried to allocate {count} elements "
        f"(sizes={list(shape)}), about {count * 8} bytes, more than this machine has. Ask for "
        f"a smaller size, or work on the data in pieces."
    )


class Made(Function):
    """A factory's new array as an operation with no inputs (see _made): forward fills it,
    and nothing flows back."""

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        maker: str,
        arguments: tuple,
        dtype: Any,
        where: str,
        source: Generator | None,
    ) -> np.ndarray:
        data = _fill(maker, arguments, source)
        return data if dtype is None else _cast(data, dtype, where)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return None, None, None, None, None


def _numeric_array(data: Any, where: str, given: Any) -> np.ndarray:
    """data as an array of numbers (bool, int, float, complex), or an error that shows
    `given`, what the caller passed (data may be NumPy's array made from it)."""
    array = np.asarray(data)
    if array.dtype.kind in "biufc":
        return array
    if array.dtype.kind == "O" and array.size and all(_is_int(item) for item in array.flat):
        # NumPy keeps an int beyond int64 (and uint64) as a Python object. PyTorch's error
        # is a ValueError too.
        largest = max(array.flat, key=abs)
        within = "" if _is_int(given) else f" in {_described(given)}"
        raise ValueError(
            f"{where}: the int {largest}{within} is beyond what int64 holds "
            f"({-(2**63)} .. {2**63 - 1}). Make it a float ({float(largest)!r}) or use "
            f"smaller ints."
        )
    raise TypeError(
        f"{where}: a Variable holds numbers: bools, ints, floats or nested lists of them; "
        f"got {_described(given)}. (Text goes in Variable('some text').)"
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _cast(data: Any, dtype: Any, where: str) -> np.ndarray:
    """data as an array of `dtype`, or PyTorch's RuntimeError where a value does not fit.

    NumPy's cast would wrap 300 to 44 in uint8, turn 1e10 into some int32 with a
    RuntimeWarning, drop an imaginary part; a factory says so instead."""
    target = as_dtype(dtype)
    array = _numeric_array(data, where, data)
    if array.dtype == target:
        return array
    misfits = _misfits(array, target)
    if misfits.any():
        value = array[misfits][0].item()
        if isinstance(value, complex) and value.imag != 0:
            why = f"{target} holds real numbers: the imaginary part would be lost"
            fix = "Use a complex dtype such as numpy.complex128, or real values."
        else:
            why = _holds(target)
            if target.kind in "iu" and not math.isfinite(value):
                why += "; NaN and infinity fit no integer dtype"
            wider = "minigrad.float64"
            if target.kind in "iu":
                wider = "minigrad.int64 or minigrad.float64"
            fix = f"Use a dtype that holds it, e.g. {wider}, or values in that range."
        raise RuntimeError(
            f"{where}: value {value!r} cannot be converted to type {target} without overflow "
            f"({why}). {fix}"
        )
    if array.dtype.kind == "c" and target.kind != "c":
        array = array.real  # every imaginary part is 0 (checked above)
    return array.astype(target, copy=False)


def _misfits(values: np.ndarray, target: np.dtype) -> np.ndarray:
    """Where `values` cannot be stored as `target` (a mask), by PyTorch's rule for values
    given to a factory: outside the dtype's range, NaN or infinity for an integer dtype, a
    nonzero imaginary part for a real one. Infinity and NaN fit a floating dtype, and any
    number fits bool and the complex dtypes."""
    misfits = np.zeros(values.shape, dtype=bool)
    if target.kind in "bc" or values.dtype.kind == "b":
        return misfits
    if values.dtype.kind == "c":
        misfits |= values.imag != 0
        values = values.real
    if target.kind == "f":
        largest = np.finfo(target).max
        return misfits | (np.isfinite(values) & ((values > largest) | (values < -largest)))
    limits = np.iinfo(target)
    if values.dtype.kind == "f":
        # Truncated toward zero, as the cast does: 255.9 fits uint8, 256.0 does not. The
        # bounds are powers of two (or 0), exact as floats.
        return misfits | ~np.isfinite(values) | (values < limits.min) | (values >= limits.max + 1)
    # Integers. Like PyTorch, an unsigned dtype takes a negative int as two's complement:
    # -1 is 255 in uint8.
    lowest = -limits.max if limits.min == 0 else limits.min
    return misfits | (values < lowest) | (values > limits.max)


def _holds(target: np.dtype) -> str:
    """What a numeric dtype holds, for the messages."""
    if target.kind == "f":
        return f"{target} holds finite values up to ±{np.finfo(target).max:g}"
    limits = np.iinfo(target)
    return f"{target} holds the integers {limits.min} .. {limits.max}"


def _described(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _count(value: Any, factory: str, label: str) -> int:
    """An int >= 0 (a number of elements), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{factory}(): {label} must be an int; got {_described(value)}.")
    if value < 0:
        raise RuntimeError(f"{factory}(): {label} must be non-negative; got {value}.")
    return int(value)


def _fill_value(value: Any, factory: str) -> Any:
    """The value to fill with: a number, or a 0-d Variable or array (as PyTorch, which
    refuses a Variable with dimensions even when it holds one element)."""
    if isinstance(value, Variable) and not value.is_text and value.ndim == 0:
        return value.item()
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc":
        return value.item()
    if not isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(
            f"{factory}(): fill_value must be a number; got {_described(value)}."
        )
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        # NumPy would keep it as a Python object, as no dtype holds it; PyTorch raises
        # OverflowError.
        raise OverflowError(
            f"{factory}(): fill_value {value} is too big to convert: int64 holds "
            f"{-(2**63)} .. {2**63 - 1}. Pass it as a float: {float(value)!r}."
        )
    return value


# --------------------------------------------------------------------------- filled


@factory
def zeros(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _made("zeros()", "zeros", (_given_size(size, "zeros"),), dtype, device, requires_grad)


@factory
def ones(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    return _made("ones()", "ones", (_given_size(size, "ones"),), dtype, device, requires_grad)


@factory
def empty(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Uninitialised memory, as in PyTorch: fill it before reading it."""
    return _made("empty()", "empty", (_given_size(size, "empty"),), dtype, device, requires_grad)


@factory
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    shape = _full_size(size, "full")
    value = _fill_value(fill_value, "full")
    if dtype is not None:  # checked for an empty shape too, as PyTorch checks it
        _cast(value, dtype, "full()")
    return _made("full()", "full", (shape, value), dtype, device, requires_grad)


# bool < integers < floats: a dtype may not hold a value of a higher kind.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


class _Default:
    """A keyword's default, told apart from the same value written by the caller: PyTorch
    refuses normal(mean_tensor, std_tensor, dtype=None) as it refuses any dtype there."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


_NONE_DEFAULT = _Default(None)
_FALSE_DEFAULT = _Default(False)
_ONE_DEFAULT = _Default(1)


@factory
def eye(
    n: int,
    m: int | None = _NONE_DEFAULT,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """The n x m identity matrix (ones on the diagonal); n x n when m is left out."""
    rows = _eye_size(n, "n")
    columns = rows if m is _NONE_DEFAULT else _eye_size(m, "m")
    for label, value in (("n", rows), ("m", columns)):
        if value < 0:
            raise RuntimeError(f"eye(): {label} must be greater or equal to 0, got {value}.")
    return _made("eye()", "eye", (rows, columns), dtype, device, requires_grad)


def _eye_size(value: Any, label: str) -> int:
    """eye's n or m: an int (a 0-d integer Variable too, as PyTorch reads one)."""
    if isinstance(value, Variable) and not value.is_text and value.ndim == 0:
        value = value.item() if value.dtype.kind in "iu" else value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"eye(): argument '{label}' must be an int; got {_described(value)}.")
    return int(value)


# --------------------------------------------------------------------------- ranges


def _number(value: Any, factory: str, label: str) -> Any:
    """A bound or step: a number (True counts as 1, as in PyTorch) or a 0-d Variable. The
    bounds of linspace and logspace may be Variables, but only 0-d ones."""
    if isinstance(value, Variable) and not value.is_text and value.ndim == 0:
        return value.item()
    if isinstance(value, Variable) and factory != "arange" and label in ("start", "end"):
        raise RuntimeError(
            f"{factory} only supports 0-dimensional start and end tensors, but got {label} "
            f"with {value.ndim} dimension(s). Pass one number, e.g. {label}[0]."
        )
    if not isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        raise TypeError(f"{factory}: {label} must be a number; got {value!r}.")
    return value


def _no_bool_range(factory: str, dtype: Any) -> None:
    """PyTorch has no range of bools (its kernels stop at 'Bool')."""
    if dtype is not None and as_dtype(dtype) == np.bool_:
        raise NotImplementedError(
            f'"{factory}_cpu" not implemented for \'Bool\': a range of numbers has no bool '
            f"form. Make it in an integer dtype, then compare, e.g. {factory}(...) > 0."
        )


@factory
def arange(
    start: Any,
    end: Any = _NONE_DEFAULT,
    step: Any = _ONE_DEFAULT,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """start, start + step, ... up to (not including) end; arange(n) is 0 .. n-1."""
    if end is None:
        raise TypeError(
            "arange(): argument 'end' must be a number, not None; leave it out for "
            "arange(end), which counts from 0."
        )
    if end is _NONE_DEFAULT and step is not _ONE_DEFAULT:
        raise TypeError(
            f"arange(): a step needs both bounds, arange(start, end, step); got "
            f"arange({start!r}, step={step!r}). Write arange(0, {start!r}, {step!r})."
        )
    step = 1 if step is _ONE_DEFAULT else step
    if end is _NONE_DEFAULT:
        start, end = 0, start
    start, end = _number(start, "arange", "start"), _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    if not all(math.isfinite(value) for value in (start, end, step)):
        raise RuntimeError(
            f"arange(): start, end and step must be finite; got start={start}, end={end}, "
            f"step={step}."
        )
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero; got step=0. Give a step > 0 or < 0.")
    _no_bool_range("arange", dtype)
    if (step > 0 and end < start) or (step < 0 and end > start):
        # NumPy would return an empty array; PyTorch says the bounds cannot be right.
        raise RuntimeError(
            f"arange(): upper bound and lower bound inconsistent with step sign: from "
            f"start={start} in steps of {step}, end={end} is never reached. Swap start and "
            f"end, or give a step of the other sign (arange(5, 0, -1) counts down)."
        )
    if dtype is not None and as_dtype(dtype).kind in "iu" and not (
        float(start).is_integer() and float(step).is_integer()
    ):
        # PyTorch counts the elements with the float bounds, then steps in the integer
        # dtype from int(start) by int(step): arange(3, 0, -2.5, dtype=int64) is [3, 1].
        count = math.ceil((end - start) / step)
        return _made(
            "arange()", "full", ((count,), int(start)), dtype, device, requires_grad
        ) + _made("arange()", "arange", (count,), dtype, device, False) * int(step)
    return _made("arange()", "arange", (start, end, step), dtype, device, requires_grad)


def _steps(steps: Any, factory: str) -> int:
    """steps as an int, checked before the bounds (as PyTorch picks its overload by it); a
    0-d integer Variable stands for its int."""
    if isinstance(steps, Variable) and not steps.is_text and steps.ndim == 0:
        steps = steps.item() if steps.dtype.kind in "iu" else steps
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"{factory}(): steps must be an int; got {_described(steps)}.")
    return int(steps)


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
    steps = _steps(steps, "linspace")
    start, end = _number(start, "linspace", "start"), _number(end, "linspace", "end")
    count = _count(steps, "linspace", "steps")
    _no_bool_range("linspace", dtype)
    if count == 1:  # [start], whatever end is (NumPy's start + 0 * step is nan for end nan)
        end = start
    arguments = (start, end, count)
    return _made("linspace()", "linspace", arguments, dtype, device, requires_grad)


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
    steps = _steps(steps, "logspace")
    start, end = _number(start, "logspace", "start"), _number(end, "logspace", "end")
    count = _count(steps, "logspace", "steps")
    base = _number(base, "logspace", "base")
    _no_bool_range("logspace", dtype)
    if count == 1:  # [base ** start], as linspace
        end = start
    with np.errstate(over="ignore"):  # too large a power is inf, as in PyTorch, unwarned
        values = np.logspace(start, end, count, base=base)
    return _leaf(values, dtype, device, requires_grad, "logspace()")


# --------------------------------------------------------------------------- random


@factory
def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Uniform numbers in [0, 1), from `generator` (a minigrad.Generator) or the global one."""
    shape = _given_size(size, "rand")  # the size first, as PyTorch parses it first
    _floating("rand()", dtype)
    return _made("rand()", "random.random", (shape,), dtype, device, requires_grad, generator)


@factory
def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Standard normal numbers (mean 0, standard deviation 1), from `generator` or the
    global one."""
    shape = _given_size(size, "randn")  # the size first, as PyTorch parses it first
    if math.prod(shape):  # PyTorch's normal kernel never runs for an empty shape
        _floating("randn()", dtype)
    arguments = (shape,)
    return _made(
        "randn()", "random.standard_normal", arguments, dtype, device, requires_grad, generator
    )


@factory
def randint(
    low: int | None = None,
    high: int | None = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Integers drawn uniformly from [low, high); randint(high, size) starts at 0. int64.
    From `generator` (a minigrad.Generator) or the global one."""
    if high is None:  # randint(high, size=...): PyTorch's short form, size by keyword
        if low is None:
            raise TypeError(
                'randint() missing 1 required positional argument: "high". Give the bound, '
                "e.g. randint(10, (3,)) for integers in [0, 10)."
            )
        low, high = 0, low
    elif size is None:  # randint(high, size): the short form, size in second place
        low, high, size = 0, low, high
    low = 0 if low is None else low
    if size is None:
        raise TypeError("randint() needs a size, e.g. randint(0, 10, (3,)).")
    for label, bound in (("low", low), ("high", high)):
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)):
            raise TypeError(f"randint(): {label} must be an int; got {_described(bound)}.")
    shape = _full_size(size, "randint")
    if high <= low:
        raise RuntimeError(
            f"randint: expected low < high (the numbers are drawn from [low, high)); got "
            f"low={low}, high={high}."
        )
    # The draw is in int64; the numbers drawn must then fit the dtype asked for too.
    _check_bounds(int(low), int(high), np.dtype(np.int64))
    if dtype is not None and as_dtype(dtype).kind in "biu":
        _check_bounds(int(low), int(high), as_dtype(dtype))
    arguments = (low, high, shape, np.int64)
    return _made(
        "randint()", "random.integers", arguments, dtype, device, requires_grad, generator
    )


def _check_bounds(low: int, high: int, dtype: np.dtype, where: str = "randint()") -> None:
    """PyTorch's RuntimeError unless low .. high - 1 (randint's range) fits `dtype`."""
    lowest, highest = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    for label, bound in (("low", low), ("high - 1", high - 1)):
        if not lowest <= bound <= highest:
            raise RuntimeError(
                f"{where}: {label} = {bound} is out of bounds for dtype {dtype}, which "
                f"holds {lowest} .. {highest}. Draw from a range inside it, or use a wider "
                f"dtype such as minigrad.int64 (the default)."
            )


@factory
def normal(
    mean: Any,
    std: Any = None,
    size: Any = _NONE_DEFAULT,
    *,
    generator: Generator | None = None,
    dtype: Any = _NONE_DEFAULT,
    device: Any = _NONE_DEFAULT,
    requires_grad: Any = _FALSE_DEFAULT,
) -> Variable:
    """Normal numbers with the given mean and std, from `generator` (a minigrad.Generator)
    or the global one. PyTorch's two forms: normal(mean, std, size) of two numbers (dtype=
    too), or a Variable mean or std (std 1.0 when left out) whose shapes broadcast to the
    result's, in the dtype of the first of them that is a Variable."""
    written = {
        name: value for name, value in
        (("size", size), ("dtype", dtype), ("device", device), ("requires_grad", requires_grad))
        if not isinstance(value, _Default)
    }
    size, dtype = written.get("size"), written.get("dtype")
    device, requires_grad = written.get("device"), written.get("requires_grad", False)
    arrays = isinstance(mean, (Variable, np.ndarray)) or isinstance(std, (Variable, np.ndarray))
    if arrays and written:
        raise TypeError(
            f"normal(): {', '.join(f'{name}=' for name in written)} go with a number mean and "
            f"a number std only (even as None); a Variable mean or std gives the shape, dtype "
            f"and device itself. Drop them, or convert the result: normal(mean, std).to(dtype)."
        )
    if not arrays and std is None:
        raise TypeError(
            f"normal(): argument 'mean' must be a Variable when std is left out; got "
            f"{_described(mean)}. Give both numbers and a size, e.g. normal({mean!r:.20}, "
            f"1.0, (3,))."
        )
    if not arrays and size is None:
        # PyTorch's TypeError: with two numbers nothing gives the shape.
        raise TypeError(
            f"normal(): with a number for both mean and std, give a size too, e.g. "
            f"normal({mean!r}, {std!r}, (3,)), or size=() for a single number. (A Variable "
            f"mean or std gives the shape by itself.)"
        )
    mean_data = _numeric_argument(mean, "mean")
    std_data = _numeric_argument(1.0 if std is None else std, "std")
    shape = None if arrays else _full_size(size, "normal")
    if not np.all(std_data >= 0):  # a NaN std is refused too
        found = "all elements of std >= 0.0"
        if std_data.ndim == 0:
            found = f"std >= 0.0, but found std {std_data.item()}"
        raise RuntimeError(f"normal expects {found}; a standard deviation cannot be negative.")
    if not arrays:  # two numbers: a replay can draw again
        if math.prod(shape):  # PyTorch's normal kernel never runs for an empty shape
            _floating("normal()", dtype)
        arguments = (mean_data.item(), std_data.item(), shape)
        return _made(
            "normal()", "random.normal", arguments, dtype, device, requires_grad, generator
        )
    try:
        shape = np.broadcast_shapes(mean_data.shape, std_data.shape)
    except ValueError:  # NumPy's "shape mismatch"
        raise RuntimeError(
            f"normal(): mean of shape {mean_data.shape} and std of shape {std_data.shape} "
            f"must broadcast to one shape."
        ) from None
    first = mean_data if isinstance(mean, (Variable, np.ndarray)) else std_data
    if math.prod(shape):
        _floating("normal()", first.dtype, from_input=True)
    both = isinstance(mean, (Variable, np.ndarray)) and isinstance(std, (Variable, np.ndarray))
    wider = np.promote_types(mean_data.dtype, std_data.dtype)
    if both and _KIND_RANK[wider.kind] > _KIND_RANK[first.dtype.kind]:
        # The result is in mean's dtype, which must hold what mean and std promote to.
        raise RuntimeError(
            f"normal(): result type {wider} can't be cast to the desired output type "
            f"{first.dtype} (mean's dtype). Give a floating-point mean, e.g. mean.float()."
        )
    _check_generator_device("normal()", generator, device)
    values = _drawn_outside_operations(generator, "normal() with Variable mean or std").normal(
        mean_data, std_data, shape
    )
    return _leaf(values.astype(first.dtype, copy=False), None, device, requires_grad, "normal()")


def _drawn_outside_operations(source: Generator | None, what: str) -> np.random.Generator:
    """The NumPy generator for a draw that no operation records (normal() with Variable
    mean or std, multinomial): a replay of minigrad.compile would not draw it again.

    For the global generator the new Variable is an array the trace did not make, which
    keeps the step eager; for a Generator object the step is told so outright."""
    if source is not None:
        state.listener.unsupported(
            f"{what} draws from a minigrad.Generator outside the operations a replay repeats "
            f"(it would reuse the traced numbers); draw it outside the compiled step and pass "
            f"it in"
        )
    return numpy_generator(source)


@register("normal_", function=False)
def normal_(
    x: Variable, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None
) -> Variable:
    """Fill x in place with normal numbers of the given mean and std, from `generator` (a
    minigrad.Generator) or the global one; returns x."""
    _numeric(x, "normal_")
    _check_generator("normal_()", generator)
    # Numbers, or 0-d Variables read as numbers (as PyTorch reads them); std before dtype.
    mean, std = _number(mean, "normal_()", "mean"), _number(std, "normal_()", "std")
    if not std >= 0:  # a NaN std is refused too
        raise RuntimeError(
            f"normal expects std >= 0.0, but found std {std}; a standard deviation cannot be "
            f"negative."
        )
    if x.numel():  # PyTorch's normal kernel never runs for an empty x
        _floating("normal_()", x.dtype, from_input=True)
    drawn = normal(mean, std, x.shape, dtype=x.dtype, device=x.device, generator=generator)
    return x.copy_(drawn)


@register("uniform_", function=False)
def uniform_(
    x: Variable, *bounds: Any, generator: Generator | None = None, **named: Any
) -> Variable:
    """Fill x in place with numbers drawn uniformly from [from, to), by default [0, 1), from
    `generator` (a minigrad.Generator) or the global one; returns x. The bounds go by
    position, or by PyTorch's keywords from= and to=."""
    _numeric(x, "uniform_")
    _check_generator("uniform_()", generator)
    low, high = _uniform_bounds(bounds, named)
    _floating("uniform_()", x.dtype, from_input=True)
    if not low <= high:  # a NaN bound is refused too
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}; "
            f"give the lower bound first."
        )
    arguments = (low, high, x.shape)
    drawn = _made(
        "uniform_()", "random.uniform", arguments, x.dtype, x.device, False, generator
    )
    return x.copy_(drawn)


@register("random_", function=False)
def random_(
    x: Variable, *bounds: Any, generator: Generator | None = None, **named: Any
) -> Variable:
    """Fill x in place with integers drawn uniformly from [from, to), from `generator` (a
    minigrad.Generator) or the global one; returns x. random_(to) starts at 0; without
    `to`, up to the largest integer x's dtype holds exactly (its max, or 2**24 for
    float32, 2**53 for float64). PyTorch's names `from` and `to` work as keywords."""
    _numeric(x, "random_")
    _check_generator("random_()", generator)
    low, high = _random_bounds(bounds, named)
    dtype = np.dtype(x.dtype)
    if dtype.kind == "b":
        lowest, highest = 0, 1
    elif dtype.kind in "iu":
        lowest, highest = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    else:
        # The draw is in int64; without `to` it stops at 2 ** (mantissa bits + 1), beyond
        # which not every integer exists in the dtype.
        lowest, highest = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
    if high is not None and low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}; "
            f"the integers are drawn from [from, to)."
        )
    for label, bound in (("from", low), ("to - 1", None if high is None else high - 1)):
        if bound is not None and not lowest <= bound <= highest:
            raise RuntimeError(
                f"random_(): {label} is out of bounds for {dtype} (it holds the integers "
                f"{lowest} .. {highest} exactly); got {bound}. Draw from a range inside it, or "
                f"convert x to a wider dtype first."
            )
    last = high - 1 if high is not None else highest
    if high is None and dtype.kind == "f":
        last = 2 ** (np.finfo(dtype).nmant + 1)
    arguments = (low, last, x.shape, np.int64, True)  # endpoint=True: `last` can be drawn
    drawn = _made("random_()", "random.integers", arguments, x.dtype, x.device, False, generator)
    return x.copy_(drawn)


def _uniform_bounds(bounds: tuple, named: dict) -> tuple[float, float]:
    """uniform_'s (from, to), given by position or as PyTorch's keywords from= and to=."""
    unknown = sorted(set(named) - {"from", "to"})
    if unknown:
        raise TypeError(
            f"uniform_() got an unexpected keyword argument '{unknown[0]}'; its bounds are "
            f"from= and to= (or by position: x.uniform_(-1.0, 1.0))."
        )
    if len(bounds) > 2:
        raise TypeError(
            f"uniform_() takes from 0 to 2 positional arguments (from, to) but {len(bounds)} "
            f"were given."
        )
    given = dict(zip(("from", "to"), bounds))
    for name in named:
        if name in given:
            raise TypeError(f"uniform_() got multiple values for argument '{name}'.")
    given.update(named)
    low = _number(given.get("from", 0.0), "uniform_()", "argument 'from'")
    high = _number(given.get("to", 1.0), "uniform_()", "argument 'to'")
    return low, high


def _random_bounds(bounds: tuple, named: dict) -> tuple[int, int | None]:
    """random_'s (from, to): random_(), random_(to), random_(from, to), from=/to= keywords."""
    unknown = sorted(set(named) - {"from", "to"})
    if unknown or len(bounds) > 2:
        raise TypeError(
            f"random_() takes random_(), random_(to) or random_(from, to) (ints, from= and "
            f"to= by keyword too) and generator=; got {len(bounds)} positional arguments"
            f"{' and ' + ', '.join(unknown) if unknown else ''}."
        )
    if len(bounds) == 1 and "to" not in named and "from" not in named:
        low, high = 0, bounds[0]  # random_(to)
        if high is None:  # PyTorch's overloads take None for `to` only after a `from`
            raise TypeError(
                "random_(): `to` may be None only after `from`, random_(from, None); for "
                "random_(to) give an int, or call random_() for the dtype's whole range."
            )
    else:
        given = dict(zip(("from", "to"), bounds))
        for name in named:
            if name in given:
                raise TypeError(f"random_() got multiple values for argument '{name}'.")
        given.update(named)
        if "from" not in given and given.get("to", 0) is None:
            raise TypeError(
                "random_(): `to` may be None only after `from`, random_(from, None); give an "
                "int, or call random_() for the dtype's whole range."
            )
        low, high = given.get("from", 0), given.get("to")
    for label, bound in (("from", low), ("to", high)):
        if (bound is not None or label == "from") and not _is_int(bound):
            raise TypeError(
                f"random_(): argument '{label}' must be an int; got {_described(bound)}. The "
                f"bounds of the integers drawn are ints, e.g. x.random_(0, 10)."
            )
    return int(low), None if high is None else int(high)


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
    n: int,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """A random permutation of 0 .. n-1 (int64), from `generator` or the global one."""
    count = _count(n, "randperm", "n")
    if dtype is not None:
        _check_permutation_fits(count, as_dtype(dtype))
    arguments = (count,)
    return _made(
        "randperm()", "random.permutation", arguments, dtype, device, requires_grad, generator
    )


def _check_permutation_fits(count: int, dtype: np.dtype) -> None:
    """PyTorch's errors unless every number 0 .. count - 1 has its own value in `dtype`."""
    if dtype.kind == "b":
        raise NotImplementedError(
            "randperm(): a permutation in dtype bool is not implemented (it has two values "
            "only); use an integer dtype such as minigrad.int64 (the default)."
        )
    if dtype.kind in "iu" and count - 1 > np.iinfo(dtype).max:
        raise RuntimeError(
            f"randperm(): value {count - 1} cannot be converted to type {dtype} without "
            f"overflow: a permutation of n={count} holds 0 .. {count - 1}, and {_holds(dtype)}. "
            f"Use a wider dtype such as minigrad.int64 (the default)."
        )
    if dtype.kind == "f" and count > 2 ** (np.finfo(dtype).nmant + 1) + 1:
        # Beyond 2**11 (float16), 2**24 (float32), 2**53 (float64) not every integer exists.
        raise RuntimeError(
            f"randperm(): n cannot be greater than {2 ** (np.finfo(dtype).nmant + 1) + 1} "
            f"for dtype {dtype} (larger integers are not all exact in it); got n={count}. "
            f"Use an integer dtype such as minigrad.int64 (the default)."
        )


def multinomial(
    probabilities: Variable,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Generator | None = None,
) -> Variable:
    """Indices drawn from each row of `probabilities` (weights, need not sum to 1); int64.
    From `generator` (a minigrad.Generator) or the global one.

    Without replacement it uses the Gumbel-top-k trick: adding Gumbel noise to the log
    weights and taking the k largest draws k distinct indices with the right probabilities.
    """
    _check_generator("multinomial()", generator)
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
    if weights.dtype.kind != "f":
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {weights.dtype}. "
            f"Convert the weights first, e.g. weights.float()."
        )
    count = _count(num_samples, "multinomial", "num_samples")
    if weights.ndim not in (1, 2) or weights.shape[-1] == 0:
        raise RuntimeError(
            f"multinomial expects a 1-D or 2-D input with at least one category; got shape "
            f"{weights.shape}."
        )
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    source = _drawn_outside_operations(generator, "multinomial()")
    indices = multinomial_rows(rows, count, bool(replacement), source)
    return Variable(indices[0] if weights.ndim == 1 else indices)


def multinomial_rows(
    rows: np.ndarray, count: int, replacement: bool, numbers: np.random.Generator
) -> np.ndarray:
    """`count` category indices (int64) drawn from each row of the weights `rows` (2-D,
    float64), with NumPy's generator `numbers`; multinomial's errors for bad weights.

    With replacement, a uniform draw u picks the first category whose cumulative share
    exceeds u. Without, the Gumbel-top-k trick: adding Gumbel noise to the log weights and
    taking the k largest draws k distinct indices with the right probabilities."""
    if np.any(rows < 0) or not np.all(np.isfinite(rows)):
        raise RuntimeError("multinomial: weights must be finite and non-negative.")
    totals = rows.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("multinomial: each row of weights needs a positive sum.")
    if replacement:
        cdf = np.cumsum(rows / totals, axis=1)
        draws = numbers.random((rows.shape[0], count))
        indices = np.zeros((rows.shape[0], count), dtype=np.int64)
        for row, (shares, uniform) in enumerate(zip(cdf, draws)):
            # How many cumulative shares are <= u: one row at a time, never a
            # (rows, count, categories) array.
            indices[row] = np.searchsorted(shares, uniform, side="right")
        indices = np.minimum(indices, rows.shape[1] - 1)
    else:
        if rows.shape[0] and count > np.count_nonzero(rows, axis=1).min():
            raise RuntimeError(
                f"multinomial: cannot draw {count} samples without replacement from rows "
                f"with fewer non-zero weights; pass replacement=True or draw fewer."
            )
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + numbers.gumbel(size=rows.shape)
        indices = np.argsort(-keys, axis=1, kind="stable")[:, :count]
    return indices.astype(np.int64)


class _FromInput:
    """bernoulli's p when none is given: draw with the input's own chances. (PyTorch's two
    signatures refuse bernoulli(x, None), so None cannot stand for "not given".)"""

    def __repr__(self) -> str:
        return "<the input's chances>"


_FROM_INPUT: Any = _FromInput()


@register("bernoulli")
def bernoulli(
    probabilities: Variable, p: float = _FROM_INPUT, *, generator: Generator | None = None
) -> Variable:
    """0 or 1 for each element, 1 with probability probabilities[i] (or with probability
    `p` for every element when p is given), from `generator` or the global one; the input's
    shape and dtype. Its derivative is 0, as in PyTorch."""
    x = _numeric(probabilities, "bernoulli")
    _check_generator("bernoulli()", generator)
    if p is not _FROM_INPUT:
        # PyTorch's bernoulli(x, p) is x's shape and dtype filled by bernoulli_(p).
        return bernoulli_(zeros_like(x), p, generator=generator)
    if x.numel():  # PyTorch's kernel never runs for an empty x: any dtype comes back
        _check_floating_chances(x, "bernoulli()")
    _check_generator_device("bernoulli()", generator, x.device)
    _check_probabilities(x, "bernoulli()")
    if devices.is_on_cuda(x.data):  # drawn on the host, as every number is
        return Bernoulli.apply(x.cpu(), generator).to(x.device)
    return Bernoulli.apply(x, generator)


@register("bernoulli_", function=False)
def bernoulli_(x: Variable, p: Any = 0.5, *, generator: Generator | None = None) -> Variable:
    """Fill x in place with 0 or 1, 1 with probability p (a number, or a Variable of
    probabilities that broadcasts to x), from `generator` or the global one; returns x. x
    may have an integer dtype."""
    _numeric(x, "bernoulli_")
    _check_generator("bernoulli_()", generator)
    _check_generator_device("bernoulli_()", generator, x.device)
    if isinstance(p, Variable) and not p.is_text:
        _check_floating_chances(p, "bernoulli_()")
        _check_probabilities(p, "bernoulli_()")
        chances = p.cpu().expand(x.shape)
    else:
        chance = _number(p, "bernoulli_", "p")
        if not 0 <= chance <= 1:
            raise RuntimeError(
                f"bernoulli_ expects p to be in [0, 1], but got p={chance}; p is the "
                f"probability of drawing a 1."
            )
        chances = full(x.shape, float(chance), dtype=np.float64)
    drawn = Bernoulli.apply(chances, generator)
    return x.copy_(drawn.to(dtype=x.dtype, device=x.device))


def _check_floating_chances(chances: Variable, where: str) -> None:
    """PyTorch's NotImplementedError unless the probabilities are floating."""
    if np.dtype(chances.dtype).kind != "f":
        raise NotImplementedError(
            f"{where}: probabilities in dtype {np.dtype(chances.dtype)} are not implemented; "
            f"they must be floating: convert them first with .float()."
        )


def _check_probabilities(chances: Variable, where: str) -> None:
    """PyTorch's RuntimeError unless every value is a probability, in [0, 1]."""
    values = chances._data.to_host() if devices.is_on_cuda(chances._data) else chances._data
    if not _are_probabilities(values):
        outside = values[~((values >= 0) & (values <= 1))]
        raise RuntimeError(
            f"{where}: Expected p_in >= 0 && p_in <= 1 to be true, but got "
            f"{float(outside.reshape(-1)[0])}: each value is the probability of drawing a 1. "
            f"Clip them (x.clamp(0, 1)) or compute them with a sigmoid."
        )
    # minigrad.compile reads the probabilities live; the check above read their values.
    state.listener.assume(values, _are_probabilities, f"{where}: the probabilities are in [0, 1]")


def _are_probabilities(values: np.ndarray) -> bool:
    return bool(np.all((values >= 0) & (values <= 1)))  # NaN fails both


class Bernoulli(Function):
    """bernoulli's draw as an operation, so that a replay of minigrad.compile draws again
    from the same generator: 1 where a uniform u in [0, 1) is < p, else 0, in p's dtype.
    Nothing flows back: the derivative is 0 (a zero gradient, as PyTorch's)."""

    @staticmethod
    def forward(ctx: FunctionCtx, chances: Variable, source: Generator | None) -> np.ndarray:
        values = np.asarray(chances.data)
        uniform = numpy_generator(source).random(values.shape)
        return (uniform < values).astype(values.dtype)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return zeros_like(grad_output), None


# --------------------------------------------------------------------------- like another


def _numeric(other: Any, factory: str) -> Variable:
    if type(other) is DataArray:  # zeros_like(p.data), as old PyTorch code writes it
        return Variable._make(np.asarray(other))
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
    source: Generator | None = None,
) -> Variable:
    """A leaf of other's shape, dtype and device (unless told otherwise), made by `maker`
    (see _made) from the shape and then `fill`, drawing from `source` if it is random."""
    other = _numeric(other, factory_name)
    dtype, device = _defaults_from(other, dtype, device)
    # Random floats: other's dtype may be an integer one. PyTorch's normal kernel is never
    # reached for an empty shape (its uniform one checks the dtype first).
    empty_normal = maker == "random.standard_normal" and other.numel() == 0
    if maker.startswith("random.") and not empty_normal:
        _floating(f"{factory_name}()", dtype, from_input=dtype is other.dtype)
    arguments = (other.shape, *fill)
    where = f"{factory_name}()"
    return _made(where, maker, arguments, dtype, device, requires_grad, source)


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
    if isinstance(other, Variable) and not other.is_text:
        _cast(value, other.dtype if dtype is None else dtype, "full_like()")
    return _like(other, "full_like", "full", dtype, device, requires_grad, fill=(value,))


@factory
def rand_like(
    other: Variable,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Uniform numbers in [0, 1) of other's shape, from `generator` or the global one."""
    maker = "random.random"
    return _like(other, "rand_like", maker, dtype, device, requires_grad, source=generator)


@factory
def randn_like(
    other: Variable,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Standard normal numbers of other's shape, from `generator` or the global one."""
    maker = "random.standard_normal"
    return _like(other, "randn_like", maker, dtype, device, requires_grad, source=generator)


@factory
def randint_like(
    other: Variable,
    low: int = 0,
    high: int | None = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """Integers drawn uniformly from [low, high), of other's shape and dtype (a float
    Variable gets whole floats); randint_like(x, high) starts at 0."""
    other = _numeric(other, "randint_like")
    if high is None:  # randint_like(x, high): PyTorch's short form
        low, high = 0, low
    for label, bound in (("low", low), ("high", high)):
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)):
            raise TypeError(f"randint_like(): {label} must be an int; got {_described(bound)}.")
    if high <= low:
        raise RuntimeError(
            f"randint_like(): expected low < high (the numbers are drawn from [low, high)); "
            f"got low={low}, high={high}."
        )
    dtype, device = _defaults_from(other, dtype, device)
    _check_bounds(int(low), int(high), np.dtype(np.int64), "randint_like()")
    if as_dtype(dtype).kind in "biu":
        _check_bounds(int(low), int(high), as_dtype(dtype), "randint_like()")
    arguments = (int(low), int(high), other.shape, np.int64)
    where = "randint_like()"
    return _made(where, "random.integers", arguments, dtype, device, requires_grad, generator)


# --------------------------------------------------------------------------- from data


@factory
def tensor(
    data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """PyTorch's spelling of Variable(data): a new leaf that owns a copy of the data."""
    return _tensor(data, dtype, device, requires_grad, "tensor()")


def _tensor(data: Any, dtype: Any, device: Any, requires_grad: bool, where: str) -> Variable:
    """tensor(), for the factory `where` (as_tensor copies through it too)."""
    if isinstance(data, str):
        _check_text_options(where, dtype, device)
        # requires_grad=True is fine: text Variables take part in textual autodiff.
        return Variable(data, requires_grad=requires_grad)
    return _leaf(_data_array(data, where), dtype, device, requires_grad, where)


def _check_text_options(where: str, dtype: Any, device: Any) -> None:
    """A text Variable has no numeric dtype, and lives on the cpu: a TypeError for a dtype=
    or a device elsewhere."""
    if dtype is not None:
        raise TypeError(
            f"{where}: text has no numeric dtype, so dtype={as_dtype(dtype)} cannot apply to "
            f"it; drop dtype=, or pass numbers."
        )
    if device is not None and devices.check_device(device) != "cpu":
        raise TypeError(
            f"{where}: text Variables live on the cpu; got device={device!r}. Drop device=, "
            f"or pass device='cpu'."
        )


def _data_array(data: Any, where: str) -> np.ndarray:
    """tensor()'s data (numbers, nested lists of them, an array, Variables, in lists too)
    as a new NumPy array of numbers, or an error that shows the data as given."""
    try:
        array = np.array(_plain(data))
    except ValueError:  # NumPy's "inhomogeneous shape"
        raise ValueError(
            f"{where}: nested lists must be rectangular (every row the same length); got "
            f"{_described(data)}. Pad the rows, or make one Variable per row."
        ) from None
    return _numeric_array(array, where, data)


def _plain(data: Any) -> Any:
    """data with every Variable in it (also inside lists: tensor([t1, t2])) as host values."""
    if isinstance(data, Variable):
        return data.data.to_host() if devices.is_on_cuda(data.data) else data.data
    if isinstance(data, (list, tuple)):
        return [_plain(item) for item in data]
    return data


@factory
def as_tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Variable:
    """data as a Variable, sharing memory when it already is one or a NumPy array of the
    requested dtype (no copy), as in PyTorch. dtype= and device= go by keyword, as there."""
    if isinstance(data, Variable):
        if data.is_text:
            _check_text_options("as_tensor()", dtype, device)
            return data
        # data itself when neither changes; else a copy in the dtype, on the device.
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        _numeric_array(data, "as_tensor()", data)
        if dtype is None or data.dtype == as_dtype(dtype):
            shared = Variable._make(data)
            return shared if device is None else shared.to(device)
    return _tensor(data, dtype, device, False, "as_tensor()")


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
    x: Variable,
    factory_name: str,
    maker: str,
    arguments: tuple,
    dtype: Any,
    device: Any,
    requires_grad: bool,
) -> Variable:
    """A leaf made by `maker` (see _made) with x's dtype and device, unless others are given."""
    x = _numeric(x, factory_name)
    dtype, device = _defaults_from(x, dtype, device)
    return _made(f"{factory_name}()", maker, arguments, dtype, device, requires_grad)


@register("new_zeros", function=False)
@factory
def new_zeros(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Zeros with x's dtype and device (unless given)."""
    shape = _given_size(size, "new_zeros")
    return _new_made(x, "new_zeros", "zeros", (shape,), dtype, device, requires_grad)


@register("new_ones", function=False)
@factory
def new_ones(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Ones with x's dtype and device (unless given)."""
    shape = _given_size(size, "new_ones")
    return _new_made(x, "new_ones", "ones", (shape,), dtype, device, requires_grad)


@register("new_empty", function=False)
@factory
def new_empty(
    x: Variable, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """Uninitialised memory with x's dtype and device (unless given)."""
    shape = _given_size(size, "new_empty")
    return _new_made(x, "new_empty", "empty", (shape,), dtype, device, requires_grad)


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
    shape = _full_size(size, "new_full")
    value = _fill_value(fill_value, "new_full")
    if isinstance(x, Variable) and not x.is_text:
        _cast(value, x.dtype if dtype is None else dtype, "new_full()")
    return _new_made(x, "new_full", "full", (shape, value), dtype, device, requires_grad)


@register("new", function=False)
def new(x: Variable, *args: Any, device: Any = None) -> Variable:
    """PyTorch's legacy x.new(...): x.new(data) copies a list, tuple, array or Variable,
    x.new(2, 3) is uninitialised and x.new() is empty (shape (0,)); always in x's dtype, on
    x's device unless device= says otherwise (x.new takes no dtype=, as in PyTorch)."""
    if device is not None:
        _check_device("new()", device)
    if not args:
        return new_empty(x, 0, device=device)
    if len(args) == 1 and isinstance(args[0], Size):  # x.new(x.size()): sizes, as PyTorch
        args = tuple(args[0])
    if len(args) == 1 and not _is_int(args[0]):
        data = args[0]
        if not isinstance(data, (list, tuple, np.ndarray, Variable)):
            # PyTorch's TypeError: one number is not a size (it isn't an int) nor data.
            raise TypeError(
                f"new(): data must be a sequence (got {type(data).__name__}): x.new(n) makes "
                f"n uninitialised elements and x.new([...]) copies a list. For a Variable "
                f"holding one number, use x.new_tensor({data!r})."
            )
        if isinstance(data, Variable) and not data.is_text and data.dtype != x.dtype:
            raise TypeError(
                f"new(): a Variable given as data must have x's dtype ({x.dtype}); got "
                f"{data.dtype}. Convert it first, data.to(x.dtype), or use x.new_tensor(data)."
            )
        return new_tensor(x, data, device=device)
    return new_empty(x, *[_size_number(size) for size in args], device=device)


def _size_number(size: Any) -> Any:
    """A one-element integer Variable given as a size is read as its integer, as PyTorch
    reads it; anything else is left for new_empty to check."""
    if isinstance(size, Variable) and not size.is_text and size.numel() == 1:
        if size.dtype.kind in "iu":
            return int(size.item())
    return size


@register("new_tensor", function=False)
@factory
def new_tensor(
    x: Variable, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """A copy of `data` as a new leaf with x's dtype and device (unless given)."""
    x = _numeric(x, "new_tensor")
    dtype, device = _defaults_from(x, dtype, device)
    array = _data_array(data, "new_tensor()")
    return _leaf(array, dtype, device, requires_grad, "new_tensor()")

"""Conversions: to another device (ToDevice) or another dtype (Cast), and `x.to(...)`.

Both are identities on the values, so both send the gradient straight back, converted to
where it came from: dy/dx = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.dtypes import as_dtype
from minigrad.ops.table import register


class ToDevice(Function):
    """y = x on `device`;  dy/dx = 1, so the gradient is x's, moved back to x's device."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, device: str) -> Any:
        ctx.source = devices.device_of(x.data)
        return devices.move(x.data, device)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Variable._make(devices.move(grad.data, ctx.source)), None


class Cast(Function):
    """y = x as `dtype`;  dy/dx = 1, the gradient cast back to x's dtype.

    A cast to an integer or bool dtype has no gradient (its output does not require grad).
    """

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dtype: np.dtype) -> Any:
        ctx.source = x.data.dtype
        return x.data.astype(dtype)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Cast.apply(grad, ctx.source), None


def _is_dtype(value: Any) -> bool:
    """A dtype spelling (minigrad.float32, np.float64, 'float32'); anything else is a device."""
    if isinstance(value, (type, np.dtype)):
        return True
    if isinstance(value, str):
        try:
            np.dtype(value)
        except TypeError:
            return False
        return True
    return False


def _to_dtype(x: Variable, dtype: Any) -> Variable:
    dtype = as_dtype(dtype)
    if x.is_text:
        raise TypeError(f"a text Variable has no dtype to change; got the request {dtype}.")
    if x.data.dtype == dtype:
        return x
    return Cast.apply(x, dtype)


def _to_device(x: Variable, device: Any) -> Variable:
    device = devices.check_device(device)
    if x.is_text:
        if device == "cpu":
            return x
        raise TypeError("text Variables live on the cpu; only numeric ones move to cuda.")
    if device == x.device:
        return x
    return ToDevice.apply(x, device)


@register("to", function=False)
def to(
    x: Variable,
    *args: Any,
    device: Any = None,
    dtype: Any = None,
    non_blocking: bool = False,
    copy: bool = False,
) -> Variable:
    """x on another device and/or as another dtype, as PyTorch spells it: to("cuda"),
    to(minigrad.float32), to("cuda", minigrad.float32), to(other), to(dtype=...).

    The result stays in the graph; it is x itself when nothing changes (unless copy=True).
    non_blocking is accepted and ignored (copies here are synchronous).
    """
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments (device, dtype); got {args}.")
    for arg in args:
        if isinstance(arg, Variable):
            device, dtype = arg.device, arg.dtype
        elif _is_dtype(arg):
            dtype = arg
        else:
            device = arg
    result = x
    if dtype is not None:
        result = _to_dtype(result, dtype)
    if device is not None:
        result = _to_device(result, device)
    if copy and result is x:
        result = x.clone()
    return result


@register("cpu", function=False)
def cpu(x: Variable) -> Variable:
    return _to_device(x, "cpu")


@register("cuda", function=False)
def cuda(x: Variable, device: Any = None) -> Variable:
    return _to_device(x, "cuda" if device is None else device)


def _cast_method(name: str, dtype: Any) -> None:
    def cast(x: Variable) -> Variable:
        return _to_dtype(x, dtype)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"x as {np.dtype(dtype).name} (x.to({np.dtype(dtype).name}))."
    register(name, function=False)(cast)


_cast_method("float", np.float32)
_cast_method("double", np.float64)
_cast_method("half", np.float16)
_cast_method("long", np.int64)
_cast_method("int", np.int32)
_cast_method("short", np.int16)
_cast_method("bool", np.bool_)


@register("type_as", function=False)
def type_as(x: Variable, other: Variable) -> Variable:
    """x cast to other's dtype."""
    return _to_dtype(x, other.dtype)

"""NumPy's dispatch protocols for DeviceArray: ``np.exp(x)``, ``np.sum(x)`` run as kernels.

NumPy hands every ufunc call with a DeviceArray operand to ``__array_ufunc__`` and every
other NumPy function to ``__array_function__`` (NEP 13 and NEP 18). The tables below map
what the engine uses to the kernels; anything else raises NotImplementedError, so no
NumPy function ever converts a DeviceArray to a host array behind your back.

Only DeviceArrays reach these handlers (NumPy dispatches on their ``__array_ufunc__`` and
``__array_function__``), so a handler may call the array's own methods (``.transpose``,
``.reshape``); it never imports device_array.py, which imports this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import elementwise, matmul, reduce
from .buffers import StridedBuffer

UFUNC_OPS = {
    np.add: "add",
    np.subtract: "sub",
    np.multiply: "mul",
    np.true_divide: "div",
    np.power: "pow",
    np.maximum: "maximum",
    np.minimum: "minimum",
    np.greater: "gt",
    np.less: "lt",
    np.greater_equal: "ge",
    np.less_equal: "le",
    np.equal: "eq",
    np.not_equal: "ne",
    np.logical_and: "logical_and",
    np.logical_or: "logical_or",
    np.logical_xor: "logical_xor",
    np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor",
    np.invert: "invert",
    np.negative: "neg",
    np.positive: "identity",
    np.exp: "exp",
    np.log: "log",
    np.tanh: "tanh",
    np.sqrt: "sqrt",
    np.absolute: "abs",
    np.sign: "sign",
    np.square: "square",
    np.logical_not: "logical_not",
}

# ufunc.reduce: np.add.reduce(x, axis=0) is np.sum(x, axis=0).
UFUNC_REDUCE = {
    np.add: reduce.sum_along,
    np.maximum: reduce.max_along,
    np.minimum: reduce.min_along,
}


def unsupported(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name} is not supported on cuda yet; move the Variable to the CPU with .cpu()"
    )


def _reject(name: str, kwargs: dict, allowed: tuple = ()) -> None:
    """Refuse keyword arguments the kernels don't implement (unless left at a default)."""
    for key, value in kwargs.items():
        if key in allowed or value is None or (key == "where" and value is True):
            continue
        if key in ("casting", "order") and value in ("same_kind", "K", "C"):
            continue
        raise unsupported(f"{name}(..., {key}={value!r})")


def array_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    name = f"np.{ufunc.__name__}"
    for value in inputs:
        if not elementwise.is_operand(value):
            return NotImplemented  # NumPy then raises its own TypeError
    out = kwargs.pop("out", None)
    if out is not None:
        if len(out) != 1:
            raise unsupported(f"{name} with several outputs")
        (out,) = out
    if method == "reduce" and ufunc in UFUNC_REDUCE:
        _reject(f"{name}.reduce", kwargs, ("axis", "keepdims"))
        if out is not None:
            raise unsupported(f"{name}.reduce(..., out=...)")
        (x,) = inputs
        elementwise.as_operand(x, name)  # a host array here is a device mix: TypeError
        return UFUNC_REDUCE[ufunc](x, kwargs.get("axis", 0), kwargs.get("keepdims", False))
    if method != "__call__":
        raise unsupported(f"{name}.{method}")
    _reject(name, kwargs)
    if ufunc is np.matmul:
        a, b = (elementwise.as_operand(value, name) for value in inputs)
        if not (isinstance(a, StridedBuffer) and isinstance(b, StridedBuffer)):
            raise TypeError(f"{name}: both operands must be arrays, not numbers.")
        result = matmul.matmul(a, b)
        return result if out is None else elementwise.copy_into(out, result)
    if ufunc not in UFUNC_OPS:
        raise unsupported(name)
    op = UFUNC_OPS[ufunc]
    if len(inputs) == 1:
        return elementwise.unary(op, inputs[0], out=out)
    return elementwise.binary(op, inputs[0], inputs[1], out=out)


# ----------------------------------------------------------------- NumPy functions
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _reject("np.sum", {"dtype": dtype, "out": out, **kwargs})
    return reduce.sum_along(_device(a, "np.sum"), axis, keepdims)


def _max(a, axis=None, out=None, keepdims=False, **kwargs):
    _reject("np.max", {"out": out, **kwargs})
    return reduce.max_along(_device(a, "np.max"), axis, keepdims)


def _min(a, axis=None, out=None, keepdims=False, **kwargs):
    _reject("np.min", {"out": out, **kwargs})
    return reduce.min_along(_device(a, "np.min"), axis, keepdims)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _reject("np.mean", {"dtype": dtype, "out": out, **kwargs})
    return reduce.mean_along(_device(a, "np.mean"), axis, keepdims)


def _argmax(a, axis=None, out=None, keepdims=False):
    _reject("np.argmax", {"out": out})
    return reduce.argmax_along(_device(a, "np.argmax"), axis, keepdims)


def _transpose(a, axes=None):
    return _device(a, "np.transpose").transpose(axes)


def _reshape(a, shape=None, order="C", **kwargs):
    newshape = kwargs.pop("newshape", None)
    _reject("np.reshape", kwargs)
    return _device(a, "np.reshape").reshape(newshape if shape is None else shape, order=order)


def _filled(like: StridedBuffer, shape: Any, value: Any, dtype: Any) -> StridedBuffer:
    """A new array of `like`'s class (and `like`'s shape and dtype unless given): all `value`."""
    out = like.new_empty(
        like.shape if shape is None else shape, like.dtype if dtype is None else dtype
    )
    return elementwise.copy_into(out, value)


def _like(name: str, value: Any):
    def like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        _reject(f"np.{name}", {"order": order, **kwargs})
        return _filled(_device(a, f"np.{name}"), shape, value, dtype)

    return like


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    _reject("np.full_like", {"order": order, **kwargs})
    return _filled(_device(a, "np.full_like"), shape, fill_value, dtype)


def _where(condition, *values):
    if len(values) != 2:
        raise unsupported("np.where with one argument (np.nonzero)")
    return elementwise.where(condition, *values)


def _broadcast_to(array, shape, subok=False):
    return _device(array, "np.broadcast_to").broadcast_to(shape)


def _expand_dims(a, axis):
    return _device(a, "np.expand_dims").expand_dims(axis)


def _squeeze(a, axis=None):
    return _device(a, "np.squeeze").squeeze(axis)


def _swapaxes(a, axis1, axis2):
    return _device(a, "np.swapaxes").swapaxes(axis1, axis2)


def _copy(a, order="K", subok=False):
    return _device(a, "np.copy").copy()


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _reject("np.concatenate", {"out": out, "dtype": dtype, "casting": casting})
    arrays = [_device(x, "np.concatenate") for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    first = arrays[0]
    axis = axis % first.ndim if first.ndim else axis
    for x in arrays:
        if (
            x.ndim != first.ndim
            or x.shape[:axis] + x.shape[axis + 1 :] != first.shape[:axis] + first.shape[axis + 1 :]
        ):
            raise ValueError(
                f"np.concatenate: all shapes must match except along axis {axis}; got "
                f"{[x.shape for x in arrays]}."
            )
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in arrays)
    out = first.new_empty(tuple(shape), np.result_type(*(x.dtype for x in arrays)))
    start = 0
    for x in arrays:  # each part is copied into its slice of out; together they fill it
        index = (slice(None),) * axis + (slice(start, start + x.shape[axis]),)
        out[index] = x
        start += x.shape[axis]
    return out


def _stack(arrays, axis=0, out=None, **kwargs):
    _reject("np.stack", {"out": out, **kwargs})
    arrays = [_device(x, "np.stack") for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(x.shape != arrays[0].shape for x in arrays):
        raise ValueError("all input arrays must have the same shape")
    return _concatenate([x.expand_dims(axis) for x in arrays], axis=axis)


def _shape(a):
    return _device(a, "np.shape").shape


def _ndim(a):
    return _device(a, "np.ndim").ndim


def _size(a, axis=None):
    a = _device(a, "np.size")
    return a.size if axis is None else a.shape[axis]


def _device(value: Any, name: str) -> Any:
    """`value` as a DeviceArray, or a TypeError (naming both devices for a host array)."""
    operand = elementwise.as_operand(value, name)
    if not isinstance(operand, StridedBuffer):
        raise TypeError(f"{name} expects a DeviceArray here; got {type(value).__name__}.")
    return operand


FUNCTIONS = {
    np.sum: _sum,
    np.max: _max,
    np.amax: _max,
    np.min: _min,
    np.amin: _min,
    np.mean: _mean,
    np.argmax: _argmax,
    np.transpose: _transpose,
    np.reshape: _reshape,
    np.ones_like: _like("ones_like", 1),
    np.zeros_like: _like("zeros_like", 0),
    np.empty_like: _like("empty_like", 0),
    np.full_like: _full_like,
    np.where: _where,
    np.broadcast_to: _broadcast_to,
    np.expand_dims: _expand_dims,
    np.squeeze: _squeeze,
    np.swapaxes: _swapaxes,
    np.copy: _copy,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.shape: _shape,
    np.ndim: _ndim,
    np.size: _size,
}


def array_function(func: Any, args: tuple, kwargs: dict) -> Any:
    handler = FUNCTIONS.get(func)
    if handler is None:
        raise unsupported(f"np.{func.__name__}")
    return handler(*args, **kwargs)

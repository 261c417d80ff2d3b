"""Elementwise kernels: map (one input) and zip (two inputs, NumPy broadcasting).

One *scalar* device function says what happens to one element, e.g.

    @cuda.jit(device=True)
    def multiply(a, b):
        return a * b

and a kernel factory wraps it in the loop-free kernel every elementwise op shares:

    out[i] = f(x[i])            map:  make_map_kernel(f)
    out[i] = f(a[i], b[i])      zip:  make_zip_kernel(f)

Thread layout: a 1-D grid, one thread per output element. Thread ``i = cuda.grid(1)``
(= blockIdx.x * blockDim.x + threadIdx.x) owns flat output index i; the grid is rounded
up to whole blocks, so threads with ``i >= n`` do nothing (the index guard).

Broadcasting: thread i turns its flat index into coordinates of the output shape
(``i = ((c0 * s1 + c1) * s2 + c2)...``, so the last coordinate is ``i % s_last``) and each
operand's position is ``offset + sum(c_d * stride_d)``. A broadcast dimension has stride 0,
so every coordinate along it reads the same element: no operand is ever copied to the
output's shape. Before the launch, `layout.coalesce` merges dimensions that are contiguous
for every operand; a plain contiguous add then has one dimension and no division at all.

Operands are `StridedBuffer`s (buffers.py; a DeviceArray is one) and numbers; a result
takes the class of the first array operand, so a DeviceArray in gives a DeviceArray out.
Kernels compile on first use, once per combination of dtypes and number of dimensions.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernel's globals

from .buffers import StridedBuffer, check_dtype
from .errors import DeviceMismatchError
from .launch import launch_1d
from .layout import broadcast_shapes, broadcast_strides, check_broadcast, coalesce


# ---------------------------------------------------------------------------------
# Scalar device functions. Python's math module (which the simulator runs) raises where
# CUDA returns inf or nan, so exp, log and sqrt test those cases first: both then agree
# with NumPy.
# ---------------------------------------------------------------------------------
@cuda.jit(device=True)
def identity(a):
    return a


@cuda.jit(device=True)
def negative(a):
    return -a


@cuda.jit(device=True)
def exp(a):
    if a > 709.782712893384:  # exp overflows float64 past log(max double)
        return math.inf
    return math.exp(a)


@cuda.jit(device=True)
def log(a):
    if a > 0:
        return math.log(a)
    if a == 0:
        return -math.inf
    return math.nan  # a < 0 or a is nan


@cuda.jit(device=True)
def tanh(a):
    return math.tanh(a)


@cuda.jit(device=True)
def sigmoid(a):
    # The tanh form of 1 / (1 + exp(-a)) never overflows, for any a.
    return 0.5 * (1.0 + math.tanh(0.5 * a))


@cuda.jit(device=True)
def relu(a):
    if a > 0 or a != a:  # a != a only for nan, which passes through as in np.maximum
        return a
    return 0


@cuda.jit(device=True)
def sqrt(a):
    if a >= 0:
        return math.sqrt(a)
    return math.nan


@cuda.jit(device=True)
def absolute(a):
    return abs(a)


@cuda.jit(device=True)
def sign(a):
    if a > 0:
        return 1
    if a < 0:
        return -1
    return a  # 0 stays 0 and nan stays nan


@cuda.jit(device=True)
def square(a):
    return a * a


@cuda.jit(device=True)
def logical_not(a):
    return not a


@cuda.jit(device=True)
def invert(a):
    return ~a  # integers only: bools go to logical_not


# Backward helpers: derivatives written from what forward kept.
@cuda.jit(device=True)
def relu_mask(x):
    """d relu(x) / dx: 1 where x > 0, else 0."""
    return 1 if x > 0 else 0


@cuda.jit(device=True)
def tanh_grad(y):
    """d tanh(x) / dx from the output y = tanh(x): 1 - y**2."""
    return 1 - y * y


@cuda.jit(device=True)
def sigmoid_grad(y):
    """d sigmoid(x) / dx from the output y = sigmoid(x): y (1 - y)."""
    return y * (1 - y)


@cuda.jit(device=True)
def add(a, b):
    return a + b


@cuda.jit(device=True)
def subtract(a, b):
    return a - b


@cuda.jit(device=True)
def multiply(a, b):
    return a * b


@cuda.jit(device=True)
def divide(a, b):
    return a / b


@cuda.jit(device=True)
def power(a, b):
    return a**b


@cuda.jit(device=True)
def maximum(a, b):
    return a if (a >= b or a != a) else b  # a nan on either side wins, as in np.maximum


@cuda.jit(device=True)
def minimum(a, b):
    return a if (a <= b or a != a) else b


@cuda.jit(device=True)
def greater(a, b):
    return a > b


@cuda.jit(device=True)
def less(a, b):
    return a < b


@cuda.jit(device=True)
def greater_equal(a, b):
    return a >= b


@cuda.jit(device=True)
def less_equal(a, b):
    return a <= b


@cuda.jit(device=True)
def equal(a, b):
    return a == b


@cuda.jit(device=True)
def not_equal(a, b):
    return a != b


@cuda.jit(device=True)
def logical_and(a, b):
    return a != 0 and b != 0


@cuda.jit(device=True)
def logical_or(a, b):
    return a != 0 or b != 0


@cuda.jit(device=True)
def logical_xor(a, b):
    return (a != 0) != (b != 0)


@cuda.jit(device=True)
def bitwise_and(a, b):
    return a & b  # on bools: logical and, as in NumPy


@cuda.jit(device=True)
def bitwise_or(a, b):
    return a | b


@cuda.jit(device=True)
def bitwise_xor(a, b):
    return a ^ b


@cuda.jit(device=True)
def relu_backward(grad, x):
    """grad * d relu(x) / dx, fused: the gradient where x > 0, else 0."""
    return grad if x > 0 else 0


@cuda.jit(device=True)
def tanh_backward(grad, y):
    return grad * (1 - y * y)


@cuda.jit(device=True)
def sigmoid_backward(grad, y):
    return grad * y * (1 - y)


# Each op: its scalar function and the rule for the output dtype.
#   "same":  the input's dtype (binary: NumPy's promotion of the two inputs)
#   "float": like "same", but integers and bools give float64 (as np.exp, np.true_divide)
#   "bool":  bool (comparisons and logic)
UNARY = {
    "identity": (identity, "same"),
    "neg": (negative, "same"),
    "exp": (exp, "float"),
    "log": (log, "float"),
    "tanh": (tanh, "float"),
    "sigmoid": (sigmoid, "float"),
    "relu": (relu, "same"),
    "sqrt": (sqrt, "float"),
    "abs": (absolute, "same"),
    "sign": (sign, "same"),
    "square": (square, "same"),
    "logical_not": (logical_not, "bool"),
    "invert": (invert, "same"),
    "relu_mask": (relu_mask, "same"),
    "tanh_grad": (tanh_grad, "float"),
    "sigmoid_grad": (sigmoid_grad, "float"),
}

BINARY = {
    "add": (add, "same"),
    "sub": (subtract, "same"),
    "mul": (multiply, "same"),
    "div": (divide, "float"),
    "pow": (power, "same"),
    "maximum": (maximum, "same"),
    "minimum": (minimum, "same"),
    "gt": (greater, "bool"),
    "lt": (less, "bool"),
    "ge": (greater_equal, "bool"),
    "le": (less_equal, "bool"),
    "eq": (equal, "bool"),
    "ne": (not_equal, "bool"),
    "logical_and": (logical_and, "bool"),
    "logical_or": (logical_or, "bool"),
    "logical_xor": (logical_xor, "bool"),
    "bitwise_and": (bitwise_and, "same"),
    "bitwise_or": (bitwise_or, "same"),
    "bitwise_xor": (bitwise_xor, "same"),
    "relu_backward": (relu_backward, "same"),
    "tanh_backward": (tanh_backward, "float"),
    "sigmoid_backward": (sigmoid_backward, "float"),
}


# ---------------------------------------------------------------------------------
# The kernels
# ---------------------------------------------------------------------------------
@cuda.jit(device=True)
def position(i, shape, strides, offset):
    """Where flat output index i lands in an operand: offset + sum(coordinate * stride).

    Peels coordinates off i from the last (fastest) dimension; what is left after the
    loop is the first coordinate, which needs no division.
    """
    at = offset
    for d in range(len(shape) - 1, 0, -1):
        at += (i % shape[d]) * strides[d]
        i //= shape[d]
    return at + i * strides[0]


@functools.cache
def make_map_kernel(fn: Any) -> Any:
    """A kernel computing ``out[i] = fn(x[i])`` over a strided, broadcast layout."""

    # cache=True keeps the compiled kernel on disk between runs (the simulator ignores it).
    @cuda.jit(cache=True)
    def map_kernel(n, shape, out, out_offset, out_strides, x, x_offset, x_strides):
        i = cuda.grid(1)
        if i < n:  # the grid is rounded up to whole blocks: the extra threads stop here
            value = fn(x[position(i, shape, x_strides, x_offset)])
            out[position(i, shape, out_strides, out_offset)] = value

    return map_kernel


@functools.cache
def make_zip_kernel(fn: Any) -> Any:
    """A kernel computing ``out[i] = fn(a[i], b[i])`` with a and b broadcast to out."""

    @cuda.jit(cache=True)
    def zip_kernel(
        n, shape, out, out_offset, out_strides, a, a_offset, a_strides, b, b_offset, b_strides
    ):
        i = cuda.grid(1)
        if i < n:
            value = fn(
                a[position(i, shape, a_strides, a_offset)],
                b[position(i, shape, b_strides, b_offset)],
            )
            out[position(i, shape, out_strides, out_offset)] = value

    return zip_kernel


@cuda.jit(cache=True)
def where_kernel(
    n,
    shape,
    out,
    out_offset,
    out_strides,
    c,
    c_offset,
    c_strides,
    x,
    x_offset,
    x_strides,
    y,
    y_offset,
    y_strides,
):
    """out[i] = x[i] if c[i] else y[i], all three broadcast to out."""
    i = cuda.grid(1)
    if i < n:
        if c[position(i, shape, c_strides, c_offset)]:
            value = x[position(i, shape, x_strides, x_offset)]
        else:
            value = y[position(i, shape, y_strides, y_offset)]
        out[position(i, shape, out_strides, out_offset)] = value


# ---------------------------------------------------------------------------------
# Operands: device arrays and scalars; a host array is an error that names both devices
# ---------------------------------------------------------------------------------
def is_operand(value: Any) -> bool:
    """True for what elementwise ops take: device arrays, numbers and host arrays (to refuse)."""
    return isinstance(value, (StridedBuffer, np.ndarray, np.generic, bool, int, float))


def as_operand(value: Any, op: str) -> Any:
    """A device array, or a scalar: a Python or NumPy number, or a 0-d NumPy array."""
    if isinstance(value, StridedBuffer):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:  # a 0-d array is a number (as a 0-dim CPU tensor in PyTorch)
            return value[()]
        raise DeviceMismatchError(
            op,
            f"{op}: cannot mix devices: a DeviceArray on cuda and a NumPy array on cpu "
            f"(shape {value.shape}); move the array with DeviceArray.from_host(...) or the "
            f"DeviceArray with .to_host().",
        )
    if isinstance(value, (np.generic, bool, int, float)):
        return value
    raise TypeError(f"{op} expects DeviceArrays or numbers; got {type(value).__name__}.")


_constants: dict[tuple, StridedBuffer] = {}


def constant(value: Any, dtype: np.dtype) -> StridedBuffer:
    """A scalar as a read-only 0-d device array; the same scalar reuses the same buffer."""
    host = np.asarray(value, dtype=dtype)
    key = (host.dtype.str, host.tobytes())
    array = _constants.get(key)
    if array is None:
        if len(_constants) >= 1024:
            _constants.clear()  # a bound, for programs that use many distinct numbers
        array = StridedBuffer.from_host(host)
        array.writeable = False
        _constants[key] = array
    return array


def result_dtype(rule: str, *operands: Any) -> tuple[np.dtype, np.dtype]:
    """(dtype the inputs meet in, dtype of the output), following NumPy's promotion.

    Python numbers are "weak" as in NumPy 2: float32 array * 0.5 stays float32.
    """
    values = [op.dtype if isinstance(op, StridedBuffer) else op for op in operands]
    common = np.result_type(*values)
    if rule == "bool":
        return common, np.dtype(np.bool_)
    if rule == "float" and common.kind not in "f":
        return common, np.dtype(np.float64)
    return common, common


def _layouts(out: StridedBuffer, operands: list[StridedBuffer]) -> tuple:
    """Kernel arguments: coalesced shape, then (buffer, offset, strides) for out and each."""
    strides = [out.element_strides] + [
        broadcast_strides(op.shape, op.element_strides, out.shape) for op in operands
    ]
    shape, strides = coalesce(out.shape, *strides)
    args: list[Any] = [shape]
    for array, array_strides in zip([out, *operands], strides):
        args += [array.buffer, array.offset, array_strides]
    return tuple(args)


def _first_array(operands: list, default: StridedBuffer) -> StridedBuffer:
    """The first operand that is an array (`default` if all are numbers): a new result
    takes its class."""
    # A loop, not `a or b`: a DeviceArray's truth value is elementwise, as NumPy's.
    for operand in operands:
        if isinstance(operand, StridedBuffer):
            return operand
    return default


def _prepare_out(
    out: StridedBuffer | None, shape: tuple, dtype: np.dtype, op: str, like: StridedBuffer
) -> StridedBuffer:
    """`out` checked against the result, or a new array of `like`'s class when None."""
    if out is None:
        return like.new_empty(shape, dtype)
    if not isinstance(out, StridedBuffer):
        raise TypeError(f"{op}: out must be a DeviceArray; got {type(out).__name__}.")
    if out.shape != shape:
        raise ValueError(f"{op}: out has shape {out.shape}, but the result has shape {shape}.")
    if not out.writeable:
        raise ValueError(f"{op}: out is a read-only view (made by broadcast_to); copy it first.")
    if not np.can_cast(dtype, out.dtype, casting="same_kind"):
        raise TypeError(
            f"{op}: cannot cast the result, {dtype}, to out's dtype {out.dtype} "
            f"(casting rule 'same_kind')."
        )
    return out


def _unalias(operand: StridedBuffer, out: StridedBuffer) -> StridedBuffer:
    """A copy of `operand` if it reads out's memory in a different order than out's.

    Then one thread could overwrite an element that another still has to read. Reading
    and writing the very same element (x += y) is safe.
    """
    if operand.buffer is not out.buffer:
        return operand
    same = (
        operand.offset == out.offset
        and broadcast_strides(operand.shape, operand.element_strides, out.shape)
        == out.element_strides
    )
    return operand if same else unary("identity", operand)


def _run(kernel: Any, op: str, rule: str, inputs: list, out: StridedBuffer | None) -> StridedBuffer:
    operands = [as_operand(value, op) for value in inputs]
    common, out_dtype = result_dtype(rule, *operands)
    check_dtype(out_dtype)
    if op in ("invert", "bitwise_and", "bitwise_or", "bitwise_xor") and common.kind not in "biu":
        raise TypeError(f"{op} is defined for bools and integers only; got {common}.")
    arrays = [x if isinstance(x, StridedBuffer) else constant(x, common) for x in operands]
    shape = broadcast_shapes(*(x.shape for x in arrays))
    out = _prepare_out(out, shape, out_dtype, op, _first_array(operands, arrays[0]))
    arrays = [_unalias(x, out) for x in arrays]
    launch_1d(kernel, out.size, *_layouts(out, arrays))
    return out


def unary(op: str, x: Any, out: StridedBuffer | None = None) -> StridedBuffer:
    """Apply the unary op named `op` (a key of UNARY) to every element of x."""
    if op == "invert" and isinstance(x, StridedBuffer) and x.dtype == np.bool_:
        op = "logical_not"  # ~ on bools is not, as in NumPy
    if op not in UNARY:
        raise ValueError(f"unknown unary op {op!r}; the ops are {sorted(UNARY)}.")
    fn, rule = UNARY[op]
    return _run(make_map_kernel(fn), op, rule, [x], out)


def binary(op: str, a: Any, b: Any, out: StridedBuffer | None = None) -> StridedBuffer:
    """Apply the binary op named `op` (a key of BINARY) with NumPy broadcasting."""
    if op not in BINARY:
        raise ValueError(f"unknown binary op {op!r}; the ops are {sorted(BINARY)}.")
    fn, rule = BINARY[op]
    return _run(make_zip_kernel(fn), op, rule, [a, b], out)


def where(condition: Any, x: Any, y: Any, out: StridedBuffer | None = None) -> StridedBuffer:
    """x where condition is true, else y (np.where with three arguments)."""
    condition = as_operand(condition, "where")
    operands = [as_operand(value, "where") for value in (x, y)]
    given = [condition, *operands]
    if not isinstance(condition, StridedBuffer):
        condition = constant(bool(condition), np.dtype(np.bool_))
    _, out_dtype = result_dtype("same", *operands)
    arrays = [v if isinstance(v, StridedBuffer) else constant(v, out_dtype) for v in operands]
    shape = broadcast_shapes(condition.shape, *(v.shape for v in arrays))
    out = _prepare_out(out, shape, out_dtype, "where", _first_array(given, condition))
    arrays = [_unalias(v, out) for v in [condition, *arrays]]
    launch_1d(where_kernel, out.size, *_layouts(out, arrays))
    return out


def copy_into(out: StridedBuffer, value: Any) -> StridedBuffer:
    """out[...] = value: a device array broadcast to out's shape, or a number."""
    value = as_operand(value, "assignment")
    if not isinstance(value, StridedBuffer):
        value = constant(value, out.dtype)
    if not out.writeable:
        raise ValueError("assignment destination is read-only (a view made by broadcast_to).")
    check_broadcast(value.shape, out.shape)  # _layouts then reads value with out's shape
    source = _unalias(value, out)
    launch_1d(make_map_kernel(identity), out.size, *_layouts(out, [source]))
    return out

"""`DeviceArray`: an n-dimensional array in GPU memory with the NumPy surface the engine uses.

A DeviceArray is a `StridedBuffer` (buffers.py), a flat numba device buffer plus a layout
(`layout.py`): a shape, strides counted in elements, and an offset into the buffer.
Views (``.T``, ``.transpose``, slicing, ``broadcast_to``, a contiguous ``reshape``) share
the buffer and only change the layout; everything that computes launches a kernel from
`elementwise`, `reduce` or `matmul`, and the result stays on the device. This module sits
above the kernels: it imports them, they never import it.

Nothing copies to the host behind your back: ``np.asarray(x)`` raises a TypeError; call
``x.to_host()`` (or ``x.numpy()``). Mixing a DeviceArray with a NumPy array in one
operation raises a TypeError naming both devices. NumPy functions and ufuncs called on a
DeviceArray dispatch to the kernels (`numpy_api.py`); the ones not written yet raise
NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda

from minigrad.core.variable import NUMBERS, register_kind

from . import elementwise, matmul, numpy_api, reduce
from .buffers import StridedBuffer, allocate, check_dtype, require_device
from .layout import (
    Shape,
    broadcast_strides,
    check_broadcast,
    normalize_axis,
    normalize_shape,
    size_of,
)


class _Flags:
    """The two NumPy flags the engine reads: ``x.flags.writeable`` and ``c_contiguous``."""

    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous: bool, writeable: bool) -> None:
        self.c_contiguous = c_contiguous
        self.writeable = writeable

    def __repr__(self) -> str:
        return f"C_CONTIGUOUS : {self.c_contiguous}\nWRITEABLE : {self.writeable}"


class DeviceArray(StridedBuffer):
    """An array on the GPU: ``buffer[offset + sum(index[d] * element_strides[d])]``.

    Make one with `DeviceArray.from_host(ndarray)` (or `empty`, `zeros`, `full`), bring it
    back with `.to_host()`. Operators, methods and NumPy calls run as kernels. The data
    and layout (``buffer``, ``shape``, ``element_strides``, ``offset``, ``dtype``, ``ndim``,
    ``size``) come from `StridedBuffer`.
    """

    __slots__ = ()

    # A DeviceArray never becomes an ndarray; ndarray operators defer to __array_ufunc__.
    __array_priority__ = 1000.0
    # `==` is elementwise, so DeviceArrays are not hashable (as NumPy arrays).
    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ host <-> device
    @classmethod
    def from_host(cls, array: Any) -> DeviceArray:
        """Copy a NumPy array (or anything np.asarray takes) to the device."""
        if isinstance(array, DeviceArray):
            return array.copy()  # already on the device
        return super().from_host(array)

    @classmethod
    def from_numba(cls, array: Any) -> DeviceArray:
        """Wrap a C-contiguous numba device array (or any __cuda_array_interface__ owner)."""
        require_device()
        if not hasattr(array, "copy_to_host"):  # not a numba device array
            if not hasattr(array, "__cuda_array_interface__"):
                raise TypeError(f"expected a numba device array; got {type(array).__name__}.")
            array = cuda.as_cuda_array(array)  # e.g. a CuPy array, without copying
        check_dtype(array.dtype)
        if not array.is_c_contiguous():
            raise ValueError("from_numba needs a C-contiguous device array; copy it first.")
        return cls(array.reshape(array.size), array.shape)

    def to_host(self) -> np.ndarray:
        """A NumPy copy of the data (the only way data leaves the device)."""
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        source = self if self.is_contiguous else self.copy()
        flat = source.buffer[source.offset : source.offset + source.size]
        return flat.copy_to_host().reshape(self.shape)

    numpy = to_host

    def to_numba(self) -> Any:
        """The data as a C-contiguous numba device array (a view when the layout allows)."""
        source = self if self.is_contiguous else self.copy()
        return source.buffer[source.offset : source.offset + source.size].reshape(self.shape)

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(
                f"can only convert an array of size 1 to a Python scalar; this one has "
                f"shape {self.shape}."
            )
        return self.to_host().item()

    def tolist(self) -> Any:
        return self.to_host().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            f"a DeviceArray (shape {self.shape}, dtype {self.dtype}) lives on the cuda device "
            f"and is never converted to a NumPy array implicitly; call .to_host() (or "
            f".numpy()) to copy it to the host."
        )

    # ------------------------------------------------------------------------ metadata
    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> Shape:
        """Strides in bytes, as NumPy reports them."""
        return tuple(stride * self.dtype.itemsize for stride in self.element_strides)

    @property
    def device(self) -> str:
        return "cuda"

    @property
    def flags(self) -> _Flags:
        return _Flags(self.is_contiguous, self.writeable)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __iter__(self) -> Iterator[DeviceArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d DeviceArray")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        # Showing the values copies them to the host: only a person asks for a repr.
        body = np.array2string(self.to_host(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({body}, dtype={self.dtype}, device='cuda')"

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    # ------------------------------------------------------------ views: no data moves
    def transpose(self, *axes: Any) -> DeviceArray:
        """Permute the dimensions: a view whose shape and strides are permuted alike."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            order = tuple(reversed(range(self.ndim)))
        else:
            order = tuple(normalize_axis(a, self.ndim) for a in axes)
            if sorted(order) != list(range(self.ndim)):
                raise ValueError(f"axes {tuple(axes)} don't match an array of shape {self.shape}")
        return self.with_layout(
            tuple(self.shape[a] for a in order), tuple(self.element_strides[a] for a in order)
        )

    permute = transpose

    @property
    def T(self) -> DeviceArray:  # noqa: N802 (NumPy's name)
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> DeviceArray:
        order = list(range(self.ndim))
        a, b = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    def reshape(self, *shape: Any, order: str = "C") -> DeviceArray:
        """A view when the data is contiguous; otherwise a contiguous copy, reshaped."""
        if order != "C":
            raise NotImplementedError("reshape supports order='C' only on cuda.")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        new_shape = list(normalize_shape(shape))
        unknown = [d for d, size in enumerate(new_shape) if size == -1]
        known = size_of([size for size in new_shape if size != -1])
        if len(unknown) > 1:
            raise ValueError("can only specify one unknown dimension (-1)")
        if unknown and known and self.size % known == 0:
            new_shape[unknown[0]] = self.size // known
        if size_of(new_shape) != self.size or any(size < 0 for size in new_shape):
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        source = self if self.is_contiguous else self.copy()
        return source.with_layout(tuple(new_shape))

    def ravel(self) -> DeviceArray:
        return self.reshape(-1)

    def flatten(self) -> DeviceArray:
        return self.copy().reshape(-1)

    def expand_dims(self, axis: int) -> DeviceArray:
        axis = normalize_axis(axis, self.ndim + 1)
        shape, strides = list(self.shape), list(self.element_strides)
        shape.insert(axis, 1)
        strides.insert(axis, 0)
        return self.with_layout(tuple(shape), tuple(strides))

    def squeeze(self, axis: Any = None) -> DeviceArray:
        if axis is None:
            axes = [d for d, size in enumerate(self.shape) if size == 1]
        else:
            axes = [
                normalize_axis(a, self.ndim) for a in (axis if isinstance(axis, tuple) else (axis,))
            ]
            if any(self.shape[a] != 1 for a in axes):
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one"
                )
        keep = [d for d in range(self.ndim) if d not in axes]
        return self.with_layout(
            tuple(self.shape[d] for d in keep), tuple(self.element_strides[d] for d in keep)
        )

    def broadcast_to(self, shape: Any) -> DeviceArray:
        """A read-only view with stride 0 along every stretched dimension (as NumPy's)."""
        shape = normalize_shape(shape)
        check_broadcast(self.shape, shape)
        strides = broadcast_strides(self.shape, self.element_strides, shape)
        return DeviceArray(self.buffer, shape, strides, self.offset, writeable=False)

    def __getitem__(self, key: Any) -> DeviceArray:
        """Basic indexing (ints, slices, None, ...) as views; other indexing is not written."""
        offset, shape, strides = self.offset, [], []
        axis = 0
        for item in _expand_index(key, self.ndim):
            if item is None:
                shape.append(1)
                strides.append(0)
                continue
            size, stride = self.shape[axis], self.element_strides[axis]
            if isinstance(item, slice):
                start, stop, step = item.indices(size)
                length = len(range(start, stop, step))
                if length:
                    offset += start * stride
                shape.append(length)
                strides.append(stride * step)
            else:
                index = int(item)
                if not -size <= index < size:
                    raise IndexError(
                        f"index {index} is out of bounds for axis {axis} with size {size}"
                    )
                offset += (index % size) * stride
            axis += 1
        return self.with_layout(tuple(shape), tuple(strides), offset)

    def __setitem__(self, key: Any, value: Any) -> None:
        elementwise.copy_into(self[key], value)

    # ------------------------------------------------------------ copies and dtypes
    def copy(self) -> DeviceArray:
        return elementwise.unary("identity", self)

    def astype(self, dtype: Any, copy: bool = True) -> DeviceArray:
        dtype = check_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        # Any cast is allowed, as in NumPy's astype: float -> int truncates toward zero.
        return elementwise.copy_into(empty(self.shape, dtype), self)

    # --------------------------------------------------------------------- reductions
    def sum(self, axis: Any = None, keepdims: bool = False) -> DeviceArray:
        return reduce.sum_along(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> DeviceArray:
        return reduce.max_along(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> DeviceArray:
        return reduce.min_along(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> DeviceArray:
        return reduce.mean_along(self, axis, keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> DeviceArray:
        return reduce.argmax_along(self, axis, keepdims)

    # ---------------------------------------------------------------------- operators
    def _binary(self, op: str, other: Any, reflected: bool = False) -> Any:
        if not elementwise.is_operand(other):
            return NotImplemented
        return (
            elementwise.binary(op, other, self)
            if reflected
            else elementwise.binary(op, self, other)
        )

    def _inplace(self, op: str, other: Any) -> Any:
        if not elementwise.is_operand(other):
            return NotImplemented
        elementwise.binary(op, self, other, out=self)
        return self

    def __add__(self, other: Any) -> Any:
        return self._binary("add", other)

    def __radd__(self, other: Any) -> Any:
        return self._binary("add", other, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return self._binary("sub", other)

    def __rsub__(self, other: Any) -> Any:
        return self._binary("sub", other, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return self._binary("mul", other)

    def __rmul__(self, other: Any) -> Any:
        return self._binary("mul", other, reflected=True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary("div", other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary("div", other, reflected=True)

    def __pow__(self, other: Any) -> Any:
        return self._binary("pow", other)

    def __rpow__(self, other: Any) -> Any:
        return self._binary("pow", other, reflected=True)

    def __and__(self, other: Any) -> Any:
        return self._binary("bitwise_and", other)

    __rand__ = __and__

    def __or__(self, other: Any) -> Any:
        return self._binary("bitwise_or", other)

    __ror__ = __or__

    def __xor__(self, other: Any) -> Any:
        return self._binary("bitwise_xor", other)

    __rxor__ = __xor__

    def __iadd__(self, other: Any) -> Any:
        return self._inplace("add", other)

    def __isub__(self, other: Any) -> Any:
        return self._inplace("sub", other)

    def __imul__(self, other: Any) -> Any:
        return self._inplace("mul", other)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace("div", other)

    def __gt__(self, other: Any) -> Any:
        return self._binary("gt", other)

    def __lt__(self, other: Any) -> Any:
        return self._binary("lt", other)

    def __ge__(self, other: Any) -> Any:
        return self._binary("ge", other)

    def __le__(self, other: Any) -> Any:
        return self._binary("le", other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._binary("eq", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._binary("ne", other)

    def __neg__(self) -> DeviceArray:
        return elementwise.unary("neg", self)

    def __pos__(self) -> DeviceArray:
        return self.copy()

    def __abs__(self) -> DeviceArray:
        return elementwise.unary("abs", self)

    def __invert__(self) -> DeviceArray:
        return elementwise.unary("invert", self)  # not for bools, bitwise for integers

    def __matmul__(self, other: Any) -> Any:
        if not isinstance(other, DeviceArray):
            return _not_a_device_operand("matmul", other)
        return matmul.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        if not isinstance(other, DeviceArray):
            return _not_a_device_operand("matmul", other)
        return matmul.matmul(other, self)

    # ---------------------------------------------------------- NumPy dispatch protocol
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return numpy_api.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return numpy_api.array_function(func, args, kwargs)


def _expand_index(key: Any, ndim: int) -> list:
    """A basic index as a list with one entry per axis (Ellipsis expanded) plus Nones."""
    items = list(key) if isinstance(key, tuple) else [key]
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise NotImplementedError(
                f"indexing a DeviceArray with {type(item).__name__} is not supported on cuda "
                f"yet (only ints, slices, None and ...); move the Variable to the CPU with .cpu()"
            )
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    indexed = sum(item is not None and item is not Ellipsis for item in items)
    if indexed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {indexed} were indexed"
        )
    fill = [slice(None)] * (ndim - indexed)
    if Ellipsis in items:
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        return items[:at] + fill + items[at + 1 :]
    return items + fill


def _not_a_device_operand(op: str, other: Any) -> Any:
    if isinstance(other, np.ndarray):
        elementwise.as_operand(other, op)  # raises the TypeError that names both devices
    return NotImplemented


# ---------------------------------------------------------------------------- makers
def empty(shape: Any, dtype: Any = np.float64) -> DeviceArray:
    """An uninitialised contiguous DeviceArray."""
    shape = normalize_shape(shape)
    return DeviceArray(allocate(size_of(shape), dtype), shape)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> DeviceArray:
    dtype = np.result_type(fill_value) if dtype is None else dtype
    out = empty(shape, dtype)
    elementwise.copy_into(out, fill_value)
    return out


def zeros(shape: Any, dtype: Any = np.float64) -> DeviceArray:
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any = np.float64) -> DeviceArray:
    return full(shape, 1, dtype)


def from_host(array: Any) -> DeviceArray:
    """Copy a NumPy array to the device (same as `DeviceArray.from_host`)."""
    return DeviceArray.from_host(array)


# The engine's table of kinds of data: a DeviceArray is numbers, as an ndarray is, but the
# zeros for an output that received no gradient must be made on the device.
register_kind(DeviceArray, NUMBERS._replace(zeros=zeros))

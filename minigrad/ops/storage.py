"""Where a Variable's numbers sit in memory: x.data_ptr(), x.storage_offset(),
x.untyped_storage() and the deprecated x.storage(), as PyTorch code uses them to ask
"do these two share memory?".

A NumPy array that views another points its `.base` at it; following `.base` to the end
reaches the array that owns the memory: the storage. `x.data_ptr()` is the address of x's
first element, `storage.data_ptr()` the address of the owner's, and `x.storage_offset()`
the distance between them, in elements. So a slice, a transpose or a diagonal of x has
x's storage, and a clone has its own.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.ops.table import register


def _data_of(x: Variable, op: str) -> Any:
    if not isinstance(x, Variable) or x.is_text:
        raise TypeError(f"{op} needs a numeric Variable; text has no storage of numbers.")
    return x._data


def _owner(data: np.ndarray) -> np.ndarray:
    """The array at the end of data's chain of `.base`s: the one that owns the memory.
    (A strided view's base may be a helper object that holds the array in its own .base.)"""
    owner = data
    link = data.base
    while link is not None:
        if isinstance(link, np.ndarray):
            owner = link
        link = getattr(link, "base", None)
    return owner


def _address(data: Any) -> int:
    """The address of data's first element (host memory, or the GPU's)."""
    if isinstance(data, np.ndarray):
        return data.__array_interface__["data"][0]
    return _buffer_address(data.buffer) + data.offset * data.itemsize


def _buffer_address(buffer: Any) -> int:
    """Where a cuda array's memory starts. Numba's CUDA simulator keeps it in host memory
    (its arrays have no __cuda_array_interface__): the address of that host array."""
    interface = getattr(type(buffer), "__cuda_array_interface__", None)
    if interface is not None:
        return buffer.__cuda_array_interface__["data"][0]
    return _address(buffer._ary)


class UntypedStorage:
    """The memory under a Variable, as bytes: data_ptr(), nbytes(), size() and len() (bytes)."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    def data_ptr(self) -> int:
        """The address of the first byte."""
        if isinstance(self._owner, np.ndarray):
            return _address(self._owner)
        return _buffer_address(self._owner.buffer)

    def nbytes(self) -> int:
        if isinstance(self._owner, np.ndarray):
            return int(self._owner.nbytes)
        return int(self._owner.buffer.size * self._owner.itemsize)

    def size(self) -> int:
        """The size in bytes (an untyped storage counts bytes)."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    @property
    def device(self) -> str:
        return "cpu" if isinstance(self._owner, np.ndarray) else "cuda"

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device!r})"


class TypedStorage(UntypedStorage):
    """The same memory counted in elements of the Variable's dtype (PyTorch deprecates it
    in favour of UntypedStorage): size() and len() in elements, dtype, tolist()."""

    def __init__(self, owner: Any, dtype: np.dtype) -> None:
        super().__init__(owner)
        self.dtype = dtype

    def size(self) -> int:
        """The number of elements of `dtype` the memory holds."""
        return self.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def tolist(self) -> list:
        """Every element of the memory, in memory order."""
        if isinstance(self._owner, np.ndarray):
            # An owner is contiguous (C or Fortran order): ravel "K" lists memory order.
            raw = np.ascontiguousarray(self._owner.ravel(order="K")).view(np.uint8)
        else:
            raw = self._owner.buffer.copy_to_host().view(np.uint8)
        return raw.view(self.dtype).tolist()

    def __repr__(self) -> str:
        return f"TypedStorage(size={self.size()}, dtype={self.dtype}, device={self.device!r})"


def _storage_owner(data: Any) -> Any:
    return _owner(data) if isinstance(data, np.ndarray) else data


@register("data_ptr", function=False)
def data_ptr(x: Variable) -> int:
    """The address of x's first element: equal for x and a view of x that starts there."""
    return _address(_data_of(x, "data_ptr()"))


@register("storage_offset", function=False)
def storage_offset(x: Variable) -> int:
    """How many elements x's first element lies past the start of its storage."""
    data = _data_of(x, "storage_offset()")
    if not isinstance(data, np.ndarray):
        return int(data.offset)
    start = _address(_owner(data))
    return (_address(data) - start) // data.itemsize


@register("untyped_storage", function=False)
def untyped_storage(x: Variable) -> UntypedStorage:
    """The memory x views, as bytes: the same data_ptr() for every view of one array."""
    return UntypedStorage(_storage_owner(_data_of(x, "untyped_storage()")))


@register("storage", function=False)
def storage(x: Variable) -> TypedStorage:
    """x.untyped_storage() counted in x's dtype; deprecated in PyTorch, so it warns too."""
    data = _data_of(x, "storage()")
    warnings.warn(
        "TypedStorage is deprecated: x.storage() will go, as in PyTorch. Use "
        "x.untyped_storage() instead (sizes in bytes).",
        UserWarning,
        stacklevel=3,  # the caller's line (the op table's argument check is one frame)
    )
    return TypedStorage(_storage_owner(data), np.dtype(data.dtype))

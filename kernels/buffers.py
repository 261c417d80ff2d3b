"""GPU memory for the kernels: a flat numba buffer read through a layout.

Every kernel reads and writes a `StridedBuffer`: a 1-D numba device array plus a layout
(`layout.py`), so element ``(i0, i1, ..., ik)`` is

    buffer[offset + i0 * element_strides[0] + ... + ik * element_strides[k]]

It has no operators and launches nothing. `DeviceArray` (device_array.py) is a
StridedBuffer with NumPy's surface on top, written with the kernels; so that the kernels
need not import it, a kernel makes its result with ``x.new_empty(shape, dtype)`` for one
of its operands x: the result has x's class, a DeviceArray in gives a DeviceArray out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from .layout import Shape, contiguous_strides, is_contiguous, normalize_shape, size_of

# The dtypes the kernels are written for. float16 and complex numbers are not.
SUPPORTED_KINDS = "biuf"

_checked_device = False


def require_device() -> None:
    """Raise a RuntimeError that says what to install when there is no GPU and no simulator."""
    global _checked_device
    if _checked_device:
        return
    if not cuda.is_available():
        raise RuntimeError(
            "minigrad.kernels needs a CUDA device, and none is available: either get an "
            'NVIDIA GPU with a CUDA 13 driver (then `pip install -e ".[gpu]"`), or run in '
            "Numba's CUDA simulator by setting NUMBA_ENABLE_CUDASIM=1 before numba is "
            "imported (e.g. `NUMBA_ENABLE_CUDASIM=1 jupyter lab`)."
        )
    _checked_device = True


def check_dtype(dtype: Any) -> np.dtype:
    """`dtype` as a np.dtype, or a TypeError when no kernel is written for it."""
    dtype = np.dtype(dtype)
    if dtype.kind not in SUPPORTED_KINDS or dtype == np.float16:
        raise TypeError(
            f"dtype {dtype} is not supported on cuda; use bool, an integer type, float32 "
            f"or float64."
        )
    return dtype


def allocate(size: int, dtype: Any) -> Any:
    """An uninitialised flat numba device buffer of `size` elements."""
    require_device()
    return cuda.device_array(size, dtype=check_dtype(dtype))


class StridedBuffer:
    """``buffer[offset + sum(index[d] * element_strides[d])]``: memory plus a layout.

    `writeable` is False for views whose elements alias each other (``broadcast_to``) and
    for the kernels' cached constants: no kernel writes through them.
    """

    __slots__ = ("buffer", "shape", "element_strides", "offset", "dtype", "writeable")

    def __init__(
        self,
        buffer: Any,
        shape: Shape,
        element_strides: Shape | None = None,
        offset: int = 0,
        *,
        writeable: bool = True,
    ) -> None:
        self.buffer = buffer  # a 1-D, contiguous numba device array
        self.shape = tuple(shape)
        self.element_strides = (
            contiguous_strides(self.shape) if element_strides is None else tuple(element_strides)
        )
        self.offset = offset
        self.dtype = np.dtype(buffer.dtype)
        self.writeable = writeable

    @classmethod
    def from_host(cls, array: Any) -> StridedBuffer:
        """Copy a NumPy array (or anything np.asarray takes) to the device."""
        require_device()
        host = np.asarray(array)
        check_dtype(host.dtype)
        flat = np.ascontiguousarray(host).reshape(-1)
        return cls(cuda.to_device(flat), host.shape)

    def new_empty(self, shape: Any, dtype: Any) -> StridedBuffer:
        """An uninitialised contiguous array of `shape` and `dtype`, of self's class."""
        shape = normalize_shape(shape)
        return type(self)(allocate(size_of(shape), dtype), shape)

    def with_layout(
        self, shape: Shape, element_strides: Shape | None = None, offset: int | None = None
    ) -> StridedBuffer:
        """The same memory read through another layout: a view, no data moves.

        The strides default to row-major ones for `shape`, the offset to self's.
        """
        return type(self)(
            self.buffer,
            shape,
            element_strides,
            self.offset if offset is None else offset,
            writeable=self.writeable,
        )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return size_of(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.element_strides)

    def __repr__(self) -> str:
        # The layout only: showing the values would need a copy to the host.
        return (
            f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, "
            f"element_strides={self.element_strides}, offset={self.offset})"
        )

"""Tiled matrix multiplication in shared memory, batched, for any shape.

``C = A @ B`` with A (m, k) and B (k, n): ``C[r, c] = sum_j A[r, j] * B[j, c]``.

Thread layout: blocks of TILE x TILE threads; the block at (blockIdx.y, blockIdx.x)
computes the TILE x TILE tile of C whose top-left element is (blockIdx.y * TILE,
blockIdx.x * TILE), thread (threadIdx.y, threadIdx.x) one element of it. A naive kernel
reads all of row r of A and column c of B from global memory for every element of C: each
input element is read m or n times. The tiled kernel walks k in steps of TILE:

    for each step t:
        the block loads a TILE x TILE tile of A (rows of C's tile, columns t..t+TILE)
        and one of B (rows t..t+TILE, columns of C's tile) into shared memory,
        one element per thread; then syncthreads
        each thread adds TILE products from shared memory; then syncthreads

so every element loaded from global memory is used TILE times. Loads outside the
matrices (the last tile when m, n or k is not a multiple of TILE) store 0, which adds
nothing to the sums; threads outside C compute but don't write.

For large matrices `matmul` runs the register-blocked kernel of `matmul_blocked.py`
instead, in which each thread computes an 8 x 8 block of C: same idea, fewer trips to
shared memory.

Leading dimensions are a batch, broadcast as in np.matmul: the grid's z dimension runs
over the batch, and each operand finds its matrix for batch index z through its batch
strides (0 on a broadcast dimension, so a 2-D operand is shared by every batch). Operands
are read through their strides, so ``x @ w.T`` reads w where it is: no transpose copy.
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernel's globals

from .buffers import StridedBuffer, check_dtype
from .elementwise import position
from .launch import launch
from .layout import broadcast_shapes, broadcast_strides, coalesce
from .matmul_blocked import BLOCKING, make_blocked_kernel

TILE = 16  # 16 x 16 = 256 threads per block; a tile of float32 is 1 KiB of shared memory
MAX_GRID_Z = 65535  # CUDA's limit on gridDim.z: larger batches loop


@functools.cache
def make_matmul_kernel(tile: int, dtype: np.dtype) -> Any:
    """The tiled kernel for one tile size and one accumulation dtype."""
    tile_type = numba.from_dtype(dtype)
    zero = dtype.type(0)

    # cache=True keeps the compiled kernel on disk between runs (the simulator ignores it).
    # fmt: off
    @cuda.jit(cache=True)
    def matmul_kernel(out, m, n, k, batch_shape, n_batch,
                      a, a_offset, a_batch_strides, a_row_stride, a_col_stride,
                      b, b_offset, b_batch_strides, b_row_stride, b_col_stride):
        tx = cuda.threadIdx.x  # column within the tile: neighbouring threads, neighbouring c
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        a_tile = cuda.shared.array((tile, tile), tile_type)
        b_tile = cuda.shared.array((tile, tile), tile_type)
        for batch in range(cuda.blockIdx.z, n_batch, cuda.gridDim.z):
            a_start = position(batch, batch_shape, a_batch_strides, a_offset)
            b_start = position(batch, batch_shape, b_batch_strides, b_offset)
            acc = zero
            for step in range(0, k, tile):
                # 1. Load one element of each tile per thread; zero outside the matrices.
                if row < m and step + tx < k:
                    a_tile[ty, tx] = a[a_start + row * a_row_stride + (step + tx) * a_col_stride]
                else:
                    a_tile[ty, tx] = zero
                if step + ty < k and col < n:
                    b_tile[ty, tx] = b[b_start + (step + ty) * b_row_stride + col * b_col_stride]
                else:
                    b_tile[ty, tx] = zero
                cuda.syncthreads()  # both tiles are complete
                # 2. Row ty of A's tile times column tx of B's tile, from shared memory.
                for j in range(tile):
                    acc += a_tile[ty, j] * b_tile[j, tx]
                cuda.syncthreads()  # everyone is done before the next step overwrites
            if row < m and col < n:
                out[(batch * m + row) * n + col] = acc
    # fmt: on

    return matmul_kernel


def matmul(
    a: StridedBuffer,
    b: StridedBuffer,
    tile: int = TILE,
    method: str = "auto",
    blocking: tuple = BLOCKING,
) -> StridedBuffer:
    """np.matmul on the device: batched, broadcast batch dimensions, 1-D operands as NumPy.

    A 1-D first operand is a row vector (1, k), a 1-D second one a column vector (k, 1);
    the added dimension is removed from the result, as in NumPy.

    method "tiled" runs the kernel above (TILE x TILE threads per block); "blocked" the
    register-blocked kernel of `matmul_blocked.py` with `blocking` = (BM, BN, BK, TM, TN);
    "auto" takes "blocked" when C has at least 32 of its BM x BN tiles, enough blocks to
    keep a GPU busy, and "tiled" otherwise.
    """
    for name, operand in (("first", a), ("second", b)):
        if not isinstance(operand, StridedBuffer):
            raise TypeError(
                f"matmul: the {name} operand must be a DeviceArray; got {type(operand).__name__}."
            )
        if operand.ndim == 0:
            raise ValueError(f"matmul: the {name} operand is 0-d (a scalar); use * instead.")
    if not 1 <= tile <= 32:
        raise ValueError(f"tile must be between 1 and 32 (tile * tile threads); got {tile}.")
    if method not in ("auto", "tiled", "blocked"):
        raise ValueError(f"method must be 'auto', 'tiled' or 'blocked'; got {method!r}.")
    bm, bn, bk, tm, tn = blocking
    if bm % tm or bn % tn or (bm // tm) * (bn // tn) > 1024:
        raise ValueError(
            f"blocking (BM, BN, BK, TM, TN) = {blocking}: TM must divide BM, TN divide BN, "
            f"and (BM / TM) * (BN / TN) threads be at most 1024."
        )
    # A 1-D operand as a matrix, a view: the added dimension has size 1 and stride 0.
    a2 = a.with_layout((1, *a.shape), (0, *a.element_strides)) if a.ndim == 1 else a  # (1, k)
    b2 = b.with_layout((*b.shape, 1), (*b.element_strides, 0)) if b.ndim == 1 else b  # (k, 1)
    (m, k), (kb, n) = a2.shape[-2:], b2.shape[-2:]
    if k != kb:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} are not aligned: the last dimension of "
            f"the first ({k}) must equal the {'only' if b.ndim == 1 else 'second-to-last'} "
            f"dimension of the second ({kb})."
        )
    try:
        batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: the batch dimensions of {a.shape} and {b.shape} (all but the last two) "
            f"cannot be broadcast together."
        ) from None
    dtype = np.result_type(a.dtype, b.dtype)
    # bool @ bool is "any(a and b)": count in int64, store nonzero as True.
    tile_dtype = np.dtype(np.int64) if dtype == np.bool_ else check_dtype(dtype)
    out = a.new_empty(batch + (m, n), dtype)
    n_batch = out.size // max(m * n, 1) if out.size else 0
    if out.size:
        batch_shape, (a_bs, b_bs) = coalesce(
            batch,
            broadcast_strides(a2.shape[:-2], a2.element_strides[:-2], batch),
            broadcast_strides(b2.shape[:-2], b2.element_strides[:-2], batch),
        )
        # Each operand: its buffer, offset, batch strides, row stride and column stride.
        args = (out.buffer, m, n, k, batch_shape, n_batch)
        args += (a2.buffer, a2.offset, a_bs, *a2.element_strides[-2:])
        args += (b2.buffer, b2.offset, b_bs, *b2.element_strides[-2:])
        z = min(n_batch, MAX_GRID_Z)
        c_tiles = -(-m // bm) * -(-n // bn) * n_batch  # -(-x // y): x / y rounded up
        if method == "blocked" or (method == "auto" and c_tiles >= 32):
            kernel = make_blocked_kernel(tuple(blocking), tile_dtype)
            grid = (-(-n // bn), -(-m // bm), z)
            launch(kernel, grid, (bm // tm) * (bn // tn), *args)
        else:
            grid = (-(-n // tile), -(-m // tile), z)
            launch(make_matmul_kernel(tile, tile_dtype), grid, (tile, tile), *args)
    # Drop the added size-1 dimension again: out is contiguous, so a view does it.
    if a.ndim == 1:
        out = out.with_layout(out.shape[:-2] + out.shape[-1:])
    if b.ndim == 1:
        out = out.with_layout(out.shape[:-1])
    return out

"""A faster matmul for large matrices: each thread computes a small block of C in registers.

The tiled kernel of `matmul.py` does two shared-memory reads for every multiply-add:
``acc += a_tile[ty, j] * b_tile[j, tx]``. Shared memory is fast, but not as fast as the
arithmetic units, so that kernel waits on it. Here each thread computes TM x TN elements
of C instead of one. For each j it reads TM values of A's tile and TN values of B's tile
into registers and does all TM * TN multiply-adds with them: TM + TN reads for TM * TN
multiply-adds (16 reads for 64 with 8 x 8), the register blocking of every fast GEMM.

Thread layout: a block of (BM / TM) x (BN / TN) threads (256 with the defaults) computes
a BM x BN tile of C, walking k in steps of BK:

- the block loads a BM x BK tile of A and a BK x BN tile of B into shared memory, the
  threads taking consecutive elements so that a warp reads consecutive addresses
  (along whichever direction the operand is contiguous in: a transposed view too);
- thread (ty, tx) owns the rows ty, ty + BM/TM, ty + 2 BM/TM, ... and the columns tx,
  tx + BN/TN, ... of the tile: neighbouring threads read neighbouring shared-memory
  words and write neighbouring elements of C.

Loads outside the matrices store 0 and writes outside C are skipped, as in the tiled
kernel, so any shape works. `matmul.matmul` uses this kernel when C is large enough to
fill the blocks (method="auto").
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernel's globals

from .elementwise import position

# (BM, BN, BK, TM, TN): a 128 x 128 tile of C per block of 16 x 16 threads, each thread
# an 8 x 8 block of it in 64 registers; k in steps of 8 (two 4 KiB tiles of float32).
BLOCKING = (128, 128, 8, 8, 8)


@functools.cache
def make_blocked_kernel(blocking: tuple, dtype: np.dtype) -> Any:
    """The register-blocked kernel for one blocking (BM, BN, BK, TM, TN) and one dtype."""
    bm, bn, bk, tm, tn = blocking
    row_threads, col_threads = bm // tm, bn // tn  # the block's threads as a 2-D grid
    threads = row_threads * col_threads
    tile_type = numba.from_dtype(dtype)
    zero = dtype.type(0)

    # cache=True keeps the compiled kernel on disk between runs (the simulator ignores it).
    # fmt: off
    @cuda.jit(cache=True)
    def blocked_kernel(out, m, n, k, batch_shape, n_batch,
                       a, a_offset, a_batch_strides, a_row_stride, a_col_stride,
                       b, b_offset, b_batch_strides, b_row_stride, b_col_stride):
        t = cuda.threadIdx.x
        ty, tx = t // col_threads, t % col_threads
        row0, col0 = cuda.blockIdx.y * bm, cuda.blockIdx.x * bn
        a_tile = cuda.shared.array((bk, bm), tile_type)  # transposed: a_tile[j, r]
        b_tile = cuda.shared.array((bk, bn), tile_type)
        acc = cuda.local.array((tm, tn), tile_type)  # registers, once the loops unroll
        a_reg = cuda.local.array(tm, tile_type)
        b_reg = cuda.local.array(tn, tile_type)
        for batch in range(cuda.blockIdx.z, n_batch, cuda.gridDim.z):
            a_start = position(batch, batch_shape, a_batch_strides, a_offset)
            b_start = position(batch, batch_shape, b_batch_strides, b_offset)
            for i in range(tm):
                for jj in range(tn):
                    acc[i, jj] = zero
            for step in range(0, k, bk):
                # 1. Load the tiles, consecutive threads along the contiguous direction.
                for e in range(t, bm * bk, threads):
                    if a_col_stride == 1:
                        r, j = e // bk, e % bk
                    else:
                        r, j = e % bm, e // bm
                    if row0 + r < m and step + j < k:
                        a_tile[j, r] = a[a_start + (row0 + r) * a_row_stride
                                         + (step + j) * a_col_stride]
                    else:
                        a_tile[j, r] = zero
                for e in range(t, bk * bn, threads):
                    if b_row_stride == 1 and b_col_stride != 1:
                        j, c = e % bk, e // bk
                    else:
                        j, c = e // bn, e % bn
                    if step + j < k and col0 + c < n:
                        b_tile[j, c] = b[b_start + (step + j) * b_row_stride
                                         + (col0 + c) * b_col_stride]
                    else:
                        b_tile[j, c] = zero
                cuda.syncthreads()
                # 2. TM + TN shared-memory reads, TM * TN multiply-adds, for each j.
                for j in range(bk):
                    for i in range(tm):
                        a_reg[i] = a_tile[j, ty + i * row_threads]
                    for jj in range(tn):
                        b_reg[jj] = b_tile[j, tx + jj * col_threads]
                    for i in range(tm):
                        for jj in range(tn):
                            acc[i, jj] += a_reg[i] * b_reg[jj]
                cuda.syncthreads()
            for i in range(tm):
                row = row0 + ty + i * row_threads
                for jj in range(tn):
                    col = col0 + tx + jj * col_threads
                    if row < m and col < n:
                        out[(batch * m + row) * n + col] = acc[i, jj]
    # fmt: on

    return blocked_kernel

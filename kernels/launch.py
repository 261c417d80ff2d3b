"""Launching a kernel: ``kernel[grid, block](*args)``, plus two fixes for the simulator.

``grid`` is how many blocks run (up to 3 dimensions), ``block`` how many threads each
block has (at most 1024 in all). Every launch in minigrad.kernels goes through `launch`.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Any

import numpy as np
from numba import config

# numba-cuda 0.30 registers a device version of np.row_stack when it compiles its first
# kernel, and NumPy 2.5 removed that alias of np.vstack: without it every compilation on a
# real GPU fails with "module 'numpy' has no attribute 'row_stack'" (the simulator never
# compiles, so it never notices).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

# Threads per block for 1-D launches: a multiple of the warp size (32), big enough to keep
# a streaming multiprocessor busy, small enough that several blocks fit on one at once.
THREADS = 256


@contextmanager
def _short_gil_switches():
    # The simulator runs each CUDA thread as a Python thread and polls them to release a
    # cuda.syncthreads() barrier. With Python's default 5 ms GIL switch interval every
    # barrier costs milliseconds; a 0.1 ms interval makes reductions and matmul about 5x
    # faster in the simulator. A real GPU never gets here.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


_SHARED_ARRAYS_LOCK = threading.Lock()


def _shared_array_once_per_block(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
    """The simulator's cuda.shared.array, made safe for the threads of one block.

    The simulator gives all threads of a block one array per source line: the first thread
    to reach the line makes it. It checks and stores without a lock, so two threads could
    each make their own and see different "shared" memory: wrong results, now and then,
    under load. The same lookup, under a lock."""
    if shape == 0 or alignment is not None:
        return _simulator_shared_array(self, shape, dtype, alignment)  # dynamic: no race
    caller = sys._getframe(1)
    line = (caller.f_code.co_filename, caller.f_lineno)
    with _SHARED_ARRAYS_LOCK:
        array = self._allocations.get(line)
        if array is None:
            if isinstance(dtype, types.Type):
                dtype = numpy_support.as_dtype(dtype)
            array = self._allocations[line] = np.empty(shape, dtype)
    return array


if config.ENABLE_CUDASIM:
    from numba.cuda import types
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    _simulator_shared_array = FakeCUDAShared.array
    FakeCUDAShared.array = _shared_array_once_per_block


def launch(kernel: Any, grid: Any, block: Any, *args: Any) -> None:
    """Run `kernel` on `grid` blocks of `block` threads each."""
    if config.ENABLE_CUDASIM:
        with _short_gil_switches():
            kernel[grid, block](*args)
    else:
        kernel[grid, block](*args)


def launch_1d(kernel: Any, n: int, *args: Any) -> None:
    """One thread per element: ceil(n / THREADS) blocks; the kernel gets n first."""
    if n == 0:
        return  # a grid of zero blocks is an error on the device
    threads = min(THREADS, n)
    launch(kernel, (n + threads - 1) // threads, threads, n, *args)

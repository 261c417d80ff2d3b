"""Launching a kernel: ``kernel[grid, block](*args)``, plus one fix for the simulator.

``grid`` is how many blocks run (up to 3 dimensions), ``block`` how many threads each
block has (at most 1024 in all). Every launch in minigrad.kernels goes through `launch`.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any

from numba import config

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

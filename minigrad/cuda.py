"""torch.cuda's most used names: `device = "cuda" if minigrad.cuda.is_available() else "cpu"`.

is_available() is True only with a real NVIDIA GPU that Numba can use. Numba's CUDA
simulator (NUMBA_ENABLE_CUDASIM=1, what lesson 08 and the tests use) does not count:
it runs kernels in Python, so code that picks "cuda" when available should not pick it.
Checking imports numba, so it is done on first call, never by `import minigrad`.
"""

from __future__ import annotations

import os

from minigrad.factories import manual_seed


def is_available() -> bool:
    """True when a real CUDA GPU can run minigrad's kernels."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver or runtime means: no usable GPU
        return False


def device_count() -> int:
    """1 with a usable GPU (minigrad uses one at most), else 0."""
    return 1 if is_available() else 0


def manual_seed_all(seed: int) -> None:
    """Seed minigrad's one generator (the same as minigrad.manual_seed)."""
    manual_seed(seed)


def synchronize() -> None:
    """Wait for the GPU to finish; minigrad's kernel calls already return finished results."""


__all__ = ["device_count", "is_available", "manual_seed", "manual_seed_all", "synchronize"]

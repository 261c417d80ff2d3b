"""Numba-CUDA kernels for minigrad's hot numeric ops, installed as ``minigrad.kernels``.

This folder stays at the top of the repository but installs as the subpackage
``minigrad.kernels`` (a top-level ``kernels`` would shadow an unrelated PyPI package).
Read it in this order, from the bottom layer up (each file imports only those above it
in this list, at its top):

- ``layout.py``          shapes and strides: views, broadcasting, coalescing (no numba)
- ``errors.py``          `DeviceMismatchError`, which the engine catches (no numba)
- ``buffers.py``         `StridedBuffer`: GPU memory read through a layout; dtypes
- ``launch.py``          grid and block: how every kernel is started
- ``elementwise.py``     map and zip kernels built from scalar device functions
- ``reduce.py``          sum / max / min / argmax along an axis, a tree in shared memory
- ``matmul_blocked.py``  the faster matmul for large matrices: register blocking
- ``matmul.py``          the tiled, batched shared-memory matmul (and when to use which)
- ``numpy_api.py``       ``np.exp(x)``, ``np.sum(x)``... on DeviceArrays
- ``device_array.py``    `DeviceArray`, the NumPy-like array the engine computes with; it
                         registers DeviceArray as numbers in the engine's table of kinds

The kernels work on StridedBuffers and never import device_array.py: a result takes the
class of its operands, so a DeviceArray in gives a DeviceArray out.

Nothing here imports numba when the package is imported: the names below load their
module on first use (``minigrad.kernels.DeviceArray``), so ``import minigrad`` stays
light. Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` before numba is imported to run
every kernel in Numba's CUDA simulator.
"""

import importlib
from typing import Any

# name -> the submodule that defines it, imported on first access. (A submodule's own
# name, such as `matmul`, always means the submodule: importing it sets that attribute.)
_LAZY = {
    "DeviceArray": "device_array",
    "from_host": "device_array",
    "empty": "device_array",
    "zeros": "device_array",
    "ones": "device_array",
    "full": "device_array",
    "DeviceMismatchError": "errors",
    "StridedBuffer": "buffers",
    "require_device": "buffers",
    "sum_to_shape": "reduce",
    "where": "elementwise",
}
_SUBMODULES = (
    "layout",
    "errors",
    "buffers",
    "launch",
    "elementwise",
    "reduce",
    "matmul_blocked",
    "matmul",
    "numpy_api",
    "device_array",
)

__all__ = sorted(_LAZY) + list(_SUBMODULES) + ["device_name", "is_available"]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_available() -> bool:
    """True when kernels can run: a CUDA GPU, or the simulator (NUMBA_ENABLE_CUDASIM=1)."""
    from numba import cuda

    return bool(cuda.is_available())


def device_name() -> str:
    """The GPU's name, or "CUDA simulator" when the simulator runs the kernels."""
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return "CUDA simulator"
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)

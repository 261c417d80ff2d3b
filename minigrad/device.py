"""Devices: where a Variable's numbers live, "cpu" (a NumPy array) or "cuda" (GPU memory).

Data on "cuda" is a `minigrad.kernels.DeviceArray`: it answers the NumPy calls the built-in
operations make by launching Numba-CUDA kernels, so the same forward and backward code
runs on either device. The kernels (and numba) are imported the first time a Variable
moves to "cuda", never by `import minigrad`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEVICES = ("cpu", "cuda")


class DeviceMismatchError(TypeError):
    """The kernels were handed arrays from two devices (`op` names the operation)."""

    def __init__(self, op: str, message: str) -> None:
        super().__init__(message)
        self.op = op


def mixed_devices(error: DeviceMismatchError) -> RuntimeError:
    """The same error told in terms of Variables, with what to do about it."""
    return RuntimeError(
        f"{error.op}: expected all Variables on the same device, but found one on cuda and "
        f"one on cpu. Move one of them first: x.to('cuda') or x.to('cpu') (for a model, "
        f"model.to(...))."
    )


def is_on_cuda(data: Any) -> bool:
    """Whether `data` lives in GPU memory (checked without importing the kernels)."""
    # NumPy arrays answer first and cheaply: this runs for every operation's output.
    return type(data) is not np.ndarray and getattr(data, "device", None) == "cuda"


def device_of(data: Any) -> str:
    return "cuda" if is_on_cuda(data) else "cpu"


def check_device(device: Any) -> str:
    """'cpu' or 'cuda' ("cuda:0" is accepted as 'cuda'), or a clear error."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a str, 'cpu' or 'cuda'; got {type(device).__name__}.")
    name = "cuda" if device in ("cuda", "cuda:0") else device
    if name not in DEVICES:
        raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'cuda'.")
    return name


def move(data: Any, device: str) -> Any:
    """`data` on `device`: a copy when it has to cross, the same object when it is there."""
    if device_of(data) == device:
        return data
    if device == "cpu":
        return data.to_host()
    from minigrad.kernels.device_array import DeviceArray, require_device

    require_device()  # no GPU and no simulator: says which of the two to get
    return DeviceArray.from_host(np.ascontiguousarray(data))


def zeros(shape: tuple, dtype: Any, device: str) -> Any:
    """An array of zeros on `device`."""
    return move(np.zeros(shape, dtype=dtype), device)

"""Devices: where a Variable's numbers live, "cpu" (a NumPy array) or "cuda" (GPU memory).

Data on "cuda" is a `minigrad.kernels.DeviceArray`: it answers the NumPy calls the built-in
operations make by launching Numba-CUDA kernels, so the same forward and backward code
runs on either device. The kernels (and numba) are imported the first time a Variable
moves to "cuda", never by `import minigrad`; importing DeviceArray's module also tells the
engine that device arrays are numbers (its table of kinds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Defined by the kernels, which raise it (minigrad/kernels/errors.py loads no numba);
# named here too, so that `minigrad.devices.DeviceMismatchError` is the same class.
from minigrad.kernels.errors import DeviceMismatchError

DEVICES = ("cpu", "cuda")


class device:  # noqa: N801 (PyTorch's name)
    """A place for data: `minigrad.device("cpu")`, `device("cuda")` or `device("cuda:0")`.

    It compares equal to its own spelling as a str (`x.device == "cuda"`), so code written
    with strings and code written with `torch.device(...)` both work. minigrad has one GPU
    at most, so "cuda" and "cuda:0" name the same place.
    """

    __slots__ = ("type", "index")

    def __init__(self, spec: Any, index: int | None = None) -> None:
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(
                f"device(): index must be an int (0, minigrad's one GPU) or None; got "
                f"{type(index).__name__}."
            )
        if isinstance(spec, device):
            spec, index = spec.type, spec.index if index is None else index
        if isinstance(spec, str) and ":" in spec:
            spec, number = spec.split(":", 1)
            index = int(number) if number.isdigit() else number
        self.type = check_device(spec)
        if index is not None and (self.type != "cuda" or index != 0):
            raise ValueError(
                f"minigrad has one GPU at most: expected device 'cpu', 'cuda' or 'cuda:0'; "
                f"got {spec!r} with index {index}."
            )
        self.index = index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, device)):
            try:
                return self.type == check_device(other)
            except (TypeError, ValueError):
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __enter__(self) -> device:
        """`with minigrad.device("cuda"):` factories inside make data here (PyTorch 2's
        device context); on exit the default device is the one before it."""
        _entered.append(_default["device"])
        _default["device"] = self.type
        return self

    def __exit__(self, *exc_info: Any) -> None:
        _default["device"] = _entered.pop()


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


def check_device(spec: Any) -> str:
    """'cpu' or 'cuda' from a str or a `device` ("cuda:0" is 'cuda'), or a clear error."""
    if isinstance(spec, device):
        return spec.type
    if not isinstance(spec, str):
        raise TypeError(
            f"device must be 'cpu', 'cuda' or minigrad.device(...); got {type(spec).__name__}."
        )
    name = "cuda" if spec in ("cuda", "cuda:0") else spec
    if name not in DEVICES:
        raise ValueError(f"unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:0'.")
    return name


# Where the factories (zeros, randn, tensor, ...) put new data when no device= is given.
_default = {"device": "cpu"}
# The default device before each `with device(...):` still open, innermost last.
_entered: list[str] = []


def set_default_device(spec: Any) -> None:
    """`minigrad.set_default_device("cuda")`: factories without device= make data there
    (None means "cpu" again), as PyTorch's torch.set_default_device."""
    _default["device"] = "cpu" if spec is None else check_device(spec)


def get_default_device() -> device:
    """Where factories put new data when no device= is given."""
    return CUDA if _default["device"] == "cuda" else CPU


def move(data: Any, device: str) -> Any:
    """`data` on `device`: a copy when it has to cross, the same object when it is there."""
    if device_of(data) == device:
        return data
    if device == "cpu":
        return data.to_host()
    # Here, not at the top: numba and the kernels load on the first move to the device.
    from minigrad.kernels.device_array import DeviceArray

    # No GPU and no simulator: from_host raises an error that says which of the two to get.
    return DeviceArray.from_host(np.ascontiguousarray(data))


def zeros(shape: tuple, dtype: Any, device: str) -> Any:
    """An array of zeros on `device`."""
    return move(np.zeros(shape, dtype=dtype), device)


# The two places, made once: Variable.device hands these out instead of a new object a call.
CPU = device("cpu")
CUDA = device("cuda")

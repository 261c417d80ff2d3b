"""How a Variable prints: `repr(v)`, `str(v)` and `f"{v:.4f}"`, attached to Variable here."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.variable import Variable

_PREVIEW_OPTIONS = {"precision": 4, "threshold": 20, "edgeitems": 2}


def __repr__(self: Variable) -> str:  # noqa: N807 (attached as Variable.__repr__)
    on_cuda = not self.is_text and self.device == "cuda"
    if self.is_text:
        body = repr(self._data)
    else:
        values = self._data.to_host() if on_cuda else self._data
        body = np.array2string(values, separator=", ", prefix="Variable(", **_PREVIEW_OPTIONS)
    extras = ["device='cuda'"] if on_cuda else []
    if not self.is_text and self._data.dtype != np.float64:
        extras.append(f"dtype={self._data.dtype}")
    if self.role is not None:
        extras.append(f"role={self.role!r}")
    if self.grad_fn is not None:
        extras.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    return f"{type(self).__name__}({', '.join([body] + extras)})"


def __str__(self: Variable) -> str:  # noqa: N807
    return self._data if self.is_text else repr(self)


def _formatted(value: Any, spec: str) -> str:
    """format(value, spec), or a ValueError that names the spec and the value's kind."""
    try:
        return format(value, spec)
    except ValueError:
        raise ValueError(
            f"format spec {spec!r} does not apply to a Variable holding {type(value).__name__}; "
            f"use one such as '.4f' for a number, or '' for text."
        ) from None


def __format__(self: Variable, spec: str) -> str:  # noqa: N807
    """f"{loss:.4f}": a one-number Variable formats as its number (as PyTorch's 0-d
    tensors do), text as its str; anything else only with an empty spec."""
    if not isinstance(spec, str):
        raise TypeError(f"__format__() argument must be str, not {type(spec).__name__}.")
    if self.is_text:
        return _formatted(self._data, spec)
    if spec and self.numel() == 1 and self.dim() == 0:
        return _formatted(self._data.item(), spec)
    if spec:
        raise TypeError(
            f"format spec {spec!r} needs a Variable holding one number, but this one has "
            f"shape {tuple(self.shape)}; format x.item() or each element, or use str(x)."
        )
    return str(self)


for _method in (__repr__, __str__, __format__):
    _method.__qualname__ = f"Variable.{_method.__name__}"
    setattr(Variable, _method.__name__, _method)
del _method

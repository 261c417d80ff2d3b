"""How a Variable prints: `repr(v)` and `str(v)`, attached to Variable here."""

from __future__ import annotations

import numpy as np

from minigrad.variable import Variable

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


for _method in (__repr__, __str__):
    _method.__qualname__ = f"Variable.{_method.__name__}"
    setattr(Variable, _method.__name__, _method)
del _method

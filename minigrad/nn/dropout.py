"""Dropout and Dropout2d: in training, zero elements (or whole channels) with probability p
and scale the rest by 1/(1-p)."""

from __future__ import annotations

from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.module import Module


class Dropout(Module):
    """y = x·mask/(1 - p), mask ~ Bernoulli(1 - p), while training; y = x after .eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}.")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Variable) -> Variable:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Module):
    """Zero whole channels of (N, C, H, W) with probability p while training, scaling the
    rest by 1/(1 - p); y = x after .eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}.")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Variable) -> Variable:
        return F.dropout2d(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

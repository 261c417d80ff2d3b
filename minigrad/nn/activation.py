"""Activations as Modules, so they can sit in a Sequential."""

from __future__ import annotations

from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.module import Module


class ReLU(Module):
    """max(x, 0), elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Variable) -> Variable:
        return F.relu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope·x, elementwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x: Variable) -> Variable:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x·Φ(x) (Φ the standard normal CDF), or its tanh approximation with approximate='tanh'."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh'; got {approximate!r}.")
        self.approximate = approximate

    def forward(self, x: Variable) -> Variable:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x·sigmoid(x), elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Variable) -> Variable:
        return F.silu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return F.tanh(x)


class Sigmoid(Module):
    """1 / (1 + e^(-x)), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return F.sigmoid(x)


class Softmax(Module):
    """e^x / Σ e^x along dim: each slice along dim sums to one."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Variable) -> Variable:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log Σ e^x along dim, computed stably."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Variable) -> Variable:
        return F.log_softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

"""Linear: y = x Wᵀ + b, the fully connected layer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_flag
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import init
from minigrad.nn.module import Module


def bias_flag(bias: Any, layer: str) -> bool:
    """A layer's bias= argument as a bool: True or False, or None for "no bias" (PyTorch's
    layers test `if bias:`, so `bias=None` builds a layer without one); else a TypeError."""
    if bias is None:
        return False
    return check_flag(bias, "bias", layer)


class Linear(Module):
    """y = x @ weight.T + bias; x (..., in_features) → y (..., out_features).

    weight has shape (out_features, in_features), bias (out_features,), both initialised as
    in PyTorch: Kaiming-uniform with a = √5, which gives U(-1/√in, 1/√in).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        sizes = (("in_features", in_features), ("out_features", out_features))
        for label, value in sizes:  # the kinds first, as PyTorch checks them
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(
                    f"Linear: {label} must be an int >= 0; got {type(value).__name__} {value!r}."
                )
        for label, value in sizes:
            if value < 0:
                raise ValueError(f"Linear: {label} must be an int >= 0; got {value!r}.")
        bias = bias_flag(bias, "Linear")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(factories.empty(out_features, in_features))
        if bias:
            self.bias = Parameter(factories.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Variable) -> Variable:
        if not isinstance(x, Variable) or x.is_text:
            got = "a text Variable" if isinstance(x, Variable) else type(x).__name__
            raise TypeError(
                f"Linear expects a numeric Variable of shape (..., {self.in_features}); got "
                f"{got}. Make one with minigrad.tensor(...)."
            )
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            got = x.shape
            raise ValueError(
                f"Linear expects input of shape (..., {self.in_features}) (its in_features); "
                f"got {got}."
            )
        if np.dtype(x.dtype).kind != np.dtype(self.weight.dtype).kind:
            # PyTorch's matmul never mixes integers and floats (no silent promotion).
            raise RuntimeError(
                f"mat1 and mat2 must have the same dtype, but got {x.dtype} (the input) and "
                f"{self.weight.dtype} (the weight). Convert the input first, e.g. x.float()."
            )
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """y = x: a placeholder layer (any constructor arguments are ignored, as in PyTorch)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__()

    def forward(self, x: Variable) -> Variable:
        return x

"""LayerNorm: each sample normalised over its last dims, then scaled and shifted."""

from __future__ import annotations

from minigrad import factories
from minigrad.core.checks import check_flag, check_iterable
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.linear import bias_flag
from minigrad.nn.module import Module


class LayerNorm(Module):
    """y = (x - mean) / √(var + eps) · weight + bias over the last dims (normalized_shape).

    weight starts at 1 and bias at 0, both of shape normalized_shape (when
    elementwise_affine); x (*, *normalized_shape) → y of the same shape.
    """

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            shape = (normalized_shape,)
        else:
            shape = tuple(
                check_iterable(normalized_shape, "normalized_shape", "LayerNorm", "ints")
            )
        if any(isinstance(size, bool) or not isinstance(size, int) for size in shape):
            raise TypeError(
                f"LayerNorm: normalized_shape must be an int or a tuple of ints; got "
                f"{normalized_shape!r}."
            )
        if not shape or any(size < 0 for size in shape):
            raise ValueError(
                f"LayerNorm: normalized_shape must be an int or a tuple of ints >= 0; got "
                f"{normalized_shape!r}."
            )
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = check_flag(elementwise_affine, "elementwise_affine", "LayerNorm")
        bias = bias_flag(bias, "LayerNorm")
        if elementwise_affine:
            self.weight = Parameter(factories.empty(shape))
            if bias:
                self.bias = Parameter(factories.empty(shape))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: Variable) -> Variable:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )

"""PReLU: a leaky ReLU whose negative slope is learned, one per channel or one for all.

    prelu(x, a) = x where x > 0, else a·x        (= max(0, x) + a·min(0, x))

The channels are dim 1 of x (an input of fewer than 2 dims has one channel); `a` holds
one slope, or one per channel. Written with differentiable ops (where, *, reshape), so
the gradients, d/dx = 1 or a and d/da = Σ x over the places where x <= 0, follow.
"""

from __future__ import annotations

from typing import Any

from minigrad import factories
from minigrad.core.variable import Parameter, Variable
from minigrad.nn.init import constant_
from minigrad.nn.module import Module


def prelu(x: Variable, weight: Variable) -> Variable:
    """y = x where x > 0, else weight·x; weight (1,) or (channels,), channels = x.shape[1]."""
    for name, value in (("input", x), ("weight", weight)):
        if not isinstance(value, Variable) or value.is_text:
            got = "a text Variable" if isinstance(value, Variable) else type(value).__name__
            raise TypeError(f"prelu(): argument {name!r} must be a numeric Variable, not {got}.")
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"prelu is not implemented for dtype {x.dtype}: it needs floating inputs. Convert "
            f"first with x.float() or x.double()."
        )
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight.ndim}. Pass a weight of shape (1,) or (channels,)."
        )
    channels = x.shape[1] if x.ndim >= 2 else 1
    count = weight.numel()
    if count == 1:
        # One slope for every element: a 0-d weight broadcasts without adding dims.
        slopes = weight.reshape(())
    elif count == channels:
        shape = [1] * x.ndim
        shape[1] = channels  # one slope per channel, broadcast over the other dims
        slopes = weight.reshape(tuple(shape))
    else:
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{count} and channel size = {channels}. Give weight 1 or {channels} elements "
            f"(the size of dim 1 of the input)."
        )
    return x.where(x > 0, slopes * x)


class PReLU(Module):
    """prelu(x, weight) with a learned weight of shape (num_parameters,), each set to `init`.

    num_parameters is 1 (one slope for all channels) or the number of channels (dim 1).
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int):
            raise TypeError(
                f"PReLU: num_parameters must be an int (1, or the number of channels); got "
                f"{type(num_parameters).__name__} {num_parameters!r}."
            )
        if num_parameters < 0:
            raise ValueError(f"PReLU: num_parameters must be >= 0; got {num_parameters}.")
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(factories.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        constant_(self.weight, self.init)

    def forward(self, x: Variable) -> Variable:
        return prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"

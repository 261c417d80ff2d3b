"""Helpers the distributions share, under torch.distributions.utils' names.

- broadcast_all(*values): Variables and numbers brought to one broadcast shape.
- logits_to_probs / probs_to_logits: σ(l) or softmax(l), and back (log p, or log p - log(1-p)).
- clamp_probs(p): p kept in [eps, 1 - eps], so that its logarithms stay finite.
- lazy_property: a parameter computed from another on first use (probs from logits).
- sum_rightmost(x, n): x summed over its last n dimensions.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad
from minigrad.core.grad_mode import enable_grad
from minigrad.core.variable import Variable

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant, as PyTorch's


def is_number(value: Any) -> bool:
    """A Python or NumPy real number (bool included, as PyTorch counts it)."""
    return isinstance(value, (numbers.Real, np.number)) and not isinstance(value, np.ndarray)


def broadcast_shapes(*shapes: tuple, caller: str = "broadcast_all") -> tuple:
    """The shape every one of `shapes` broadcasts to, or PyTorch's RuntimeError."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " and ".join(str(tuple(shape)) for shape in shapes)
        raise RuntimeError(
            f"{caller}: shape mismatch: objects cannot be broadcast to a single shape; got "
            f"{listed}. Sizes must match, or be 1, dimension by dimension from the right."
        ) from None


def broadcast_all(*values: Any) -> tuple[Variable, ...]:
    """The values as Variables of one broadcast shape.

    Numbers become Variables of the dtype of the first Variable given (the default dtype
    when all are numbers), as in PyTorch; a Variable already of that shape is kept."""
    for value in values:
        if not (isinstance(value, Variable) or is_number(value)):
            raise ValueError(
                f"Input arguments must all be instances of Number or Variable (torch.Tensor); "
                f"got {type(value).__name__}. Wrap lists and arrays with minigrad.tensor(...)."
            )
    dtype = next((v.dtype for v in values if isinstance(v, Variable)), None)
    if dtype is None:
        dtype = minigrad.get_default_dtype()
    tensors = [v if isinstance(v, Variable) else minigrad.tensor(v, dtype=dtype) for v in values]
    shape = broadcast_shapes(*(tensor.shape for tensor in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def clamp_probs(probs: Variable) -> Variable:
    """probs in [eps, 1 - eps], eps the dtype's machine epsilon (2.2e-16 in float64)."""
    eps = float(np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Variable, is_binary: bool = False) -> Variable:
    """σ(logits) for one event (is_binary), else softmax over the last dimension."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def probs_to_logits(probs: Variable, is_binary: bool = False) -> Variable:
    """log(p) - log(1 - p) for one event (is_binary), else log(p); p clamped first."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def sum_rightmost(value: Variable, dim: int) -> Variable:
    """value summed over its last `dim` dimensions (value itself when dim is 0)."""
    if dim == 0:
        return value
    return value.reshape(value.shape[: value.ndim - dim] + (-1,)).sum(-1)


class lazy_property:  # noqa: N801 (PyTorch's name)
    """A property computed on first use and then stored on the instance.

    A distribution given logits computes probs only when asked (and the other way round).
    It runs with grad recording on, as PyTorch's does, so a value first asked for under
    no_grad still carries its graph for later uses.
    """

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        # An instance attribute now hides this (non-data) descriptor: computed once.
        setattr(instance, self.wrapped.__name__, value)
        return value


__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]

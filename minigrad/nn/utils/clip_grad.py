"""Gradient clipping, in place on each parameter's .grad (PyTorch's torch.nn.utils names).

    total = ‖(‖g₁‖ₚ, ‖g₂‖ₚ, ...)‖ₚ      (the p-norm of all gradients as one vector)
    gᵢ ← gᵢ · min(1, max_norm / (total + 1e-6))

Written with Variable operations under no_grad, so minigrad.compile records and replays
it like the rest of a step.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.ops.shape import stack


def _gradients(parameters: Variable | Iterable[Variable], caller: str) -> list[Variable]:
    if isinstance(parameters, Variable):
        parameters = [parameters]
    try:
        parameters = list(parameters)
    except TypeError:
        raise TypeError(
            f"{caller} expects a Variable or an iterable of Variables (model.parameters()); "
            f"got {type(parameters).__name__}."
        ) from None
    for parameter in parameters:
        if not isinstance(parameter, Variable) or isinstance(parameter.data, str):
            raise TypeError(
                f"{caller} expects numeric Variables (model.parameters()); got "
                f"{type(parameter).__name__}{' (text)' if isinstance(parameter, Variable) else ''}."
            )
    return [parameter.grad for parameter in parameters if parameter.grad is not None]


def _real(value: Any, name: str, caller: str) -> float:
    """A number (or 'inf', or a one-element Variable) as a float, else a TypeError."""
    if isinstance(value, str) and value.lower() in ("inf", "-inf"):
        return float(value)
    if isinstance(value, Variable) and not value.is_text and value.numel() == 1:
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{caller}: {name} must be a number; got {type(value).__name__}.")
    return float(value)


def clip_grad_norm_(
    parameters: Variable | Iterable[Variable],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Variable:
    """Scale the gradients so their total norm is at most max_norm; return the total norm
    before clipping (a 0-d Variable). `foreach` is accepted and ignored."""
    grads = _gradients(parameters, "clip_grad_norm_")
    max_norm = _real(max_norm, "max_norm", "clip_grad_norm_")
    norm_type = _real(norm_type, "norm_type", "clip_grad_norm_")
    if math.isnan(max_norm) or max_norm < 0:
        raise ValueError(f"clip_grad_norm_: max_norm must be a number >= 0; got {max_norm}.")
    if not grads:
        return Variable(np.array(0.0))
    with no_grad():
        norms = [grad.reshape(-1).norm(norm_type) for grad in grads]
        total = norms[0] if len(norms) == 1 else stack(norms).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type:g} for gradients from `parameters` is "
                f"non-finite, so it cannot be clipped. To disable this error and scale the "
                f"gradients by the non-finite norm anyway, set `error_if_nonfinite=False`."
            )
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for grad in grads:
            grad.mul_(scale)
    return total


def clip_grad_value_(
    parameters: Variable | Iterable[Variable], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient entry into [-clip_value, clip_value], in place."""
    grads = _gradients(parameters, "clip_grad_value_")
    clip_value = _real(clip_value, "clip_value", "clip_grad_value_")
    if math.isnan(clip_value) or clip_value < 0:
        raise ValueError(f"clip_grad_value_: clip_value must be >= 0; got {clip_value}.")
    with no_grad():
        for grad in grads:
            grad.clamp_(-clip_value, clip_value)

"""Inference Variables: `x.is_inference()` and `minigrad.is_inference_mode_enabled()`.

A Variable made inside `minigrad.inference_mode()` is an inference Variable (see
core/grad_mode.py): outside that mode it may not be saved for backward by a recorded
operation, nor changed in place. Neither question is differentiable: the answers are bools.
"""

from __future__ import annotations

from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.ops.table import register


@register("is_inference")
def is_inference(x: Variable) -> bool:
    """True when x was made inside inference_mode() (or is x.detach() of such a Variable)."""
    return x._inference


@register("is_inference_mode_enabled", method=False)
def is_inference_mode_enabled() -> bool:
    """True inside `minigrad.inference_mode()`: Variables made now are inference Variables."""
    return state.inference_enabled

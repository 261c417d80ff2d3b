"""Optimizer: what SGD and Adam share, a list of Parameters and zero_grad()."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.variable import Variable


class Optimizer:
    """Holds the Parameters to update; subclasses write `step()`."""

    def __init__(self, params: Iterable[Variable], defaults: dict[str, Any]) -> None:
        if isinstance(params, Variable):
            raise TypeError(
                "params should be an iterable of Variables, such as model.parameters(); got "
                "a single Variable. Wrap it in a list: [w]."
            )
        self.params = list(params)
        if not self.params:
            raise ValueError(
                "optimizer got an empty parameter list; pass model.parameters(). (It is a "
                "generator, used up by the first optimizer it is given: call "
                "model.parameters() again for a second one.)"
            )
        for index, param in enumerate(self.params):
            if not isinstance(param, Variable) or not param.is_leaf or not param.requires_grad:
                raise ValueError(
                    f"optimizer parameter {index} must be a leaf Variable that requires grad; "
                    f"got {_describe(param)}."
                )
        self.defaults = defaults
        self.state: dict[int, dict[str, Any]] = {}  # per-parameter state, keyed by position

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients before the next backward (they would otherwise add up)."""
        for param in self.params:
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                # zeros_like, not grad * 0: that would keep a nan or inf as nan.
                param.grad = Variable(np.zeros_like(param.grad.data))

    def step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement step().")

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={value}" for key, value in self.defaults.items())
        return f"{type(self).__name__}({len(self.params)} parameters, {settings})"


def _describe(value: Any) -> str:
    if not isinstance(value, Variable):
        return f"a {type(value).__name__}"
    if not value.requires_grad:
        return "a Variable with requires_grad=False"
    return "a non-leaf Variable (the result of an operation)"


def check_hyperparameter(name: str, value: Any, low: float = 0.0) -> float:
    """A float >= low, or a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ValueError(f"{name} must be a number >= {low}; got {value!r}.")
    return float(value)

"""Initialisation of weights, in place, with PyTorch's formulas.

Each function fills a Variable under no_grad (initialising is not part of the model's
computation) and returns it. Random numbers come from minigrad's generator, so
`minigrad.manual_seed(s)` makes them repeatable.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable


def _target(tensor: Any, caller: str) -> Variable:
    """The Variable to fill: numeric, else a TypeError naming the function."""
    if not isinstance(tensor, Variable) or tensor.is_text:
        got = "a text Variable" if isinstance(tensor, Variable) else type(tensor).__name__
        raise TypeError(f"{caller} fills a numeric Variable; got {got}.")
    return tensor


def _real(value: Any, name: str, caller: str) -> float:
    """A real number (not a bool), else a TypeError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{caller}: {name} must be a number; got {type(value).__name__}.")
    return float(value)


def _fill(tensor: Variable, values: np.ndarray, caller: str) -> Variable:
    with no_grad():
        tensor.copy_(values.astype(tensor.dtype, copy=False))
    return tensor


def uniform_(tensor: Variable, a: float = 0.0, b: float = 1.0) -> Variable:
    """Fill with values drawn uniformly from [a, b)."""
    _target(tensor, "uniform_")
    a, b = _real(a, "a", "uniform_"), _real(b, "b", "uniform_")
    if not a <= b:
        raise ValueError(f"uniform_ needs a <= b; got a={a}, b={b}.")
    return _fill(tensor, factories._generator.uniform(a, b, tensor.shape), "uniform_")


def normal_(tensor: Variable, mean: float = 0.0, std: float = 1.0) -> Variable:
    """Fill with values drawn from N(mean, std²)."""
    _target(tensor, "normal_")
    mean, std = _real(mean, "mean", "normal_"), _real(std, "std", "normal_")
    if std < 0:
        raise ValueError(f"normal_ needs std >= 0; got {std}.")
    return _fill(tensor, factories._generator.normal(mean, std, tensor.shape), "normal_")


def constant_(tensor: Variable, val: float) -> Variable:
    """Fill with `val`."""
    _target(tensor, "constant_")
    return _fill(tensor, np.full(tensor.shape, _real(val, "val", "constant_")), "constant_")


def zeros_(tensor: Variable) -> Variable:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor: Variable) -> Variable:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def _calculate_fan_in_and_fan_out(tensor: Variable) -> tuple[int, int]:
    """fan_in = inputs per output unit, fan_out = outputs per input unit.

    A weight of shape (out, in, *kernel) has fan_in = in·k and fan_out = out·k, where k is
    the product of the kernel sizes (1 for a linear layer).
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out can not be computed for a Variable with fewer than 2 "
            f"dimensions (got shape {tensor.shape}); they are defined for weights."
        )
    receptive_field = 1
    for size in tensor.shape[2:]:
        receptive_field *= size
    fan_in = tensor.shape[1] * receptive_field
    fan_out = tensor.shape[0] * receptive_field
    return fan_in, fan_out


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through a nonlinearity."""
    if not isinstance(nonlinearity, str):
        raise TypeError(
            f"calculate_gain: nonlinearity must be a name such as 'relu'; got "
            f"{type(nonlinearity).__name__}."
        )
    if param is not None:
        param = _real(param, "param", "calculate_gain")
    linear = ("linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(
        f"unsupported nonlinearity {nonlinearity!r}; use one of linear, sigmoid, tanh, relu, "
        f"leaky_relu."
    )


def kaiming_uniform_(
    tensor: Variable, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Variable:
    """He initialisation: uniform on [-bound, bound], bound = gain·sqrt(3 / fan).

    With the default leaky_relu gain sqrt(2 / (1 + a²)); `a` is the negative slope.
    """
    _target(tensor, "kaiming_uniform_")
    a = _real(a, "a", "kaiming_uniform_")
    if not isinstance(mode, str) or mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out'; got {mode!r}.")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        return tensor  # an empty weight: nothing to fill
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)


def xavier_uniform_(tensor: Variable, gain: float = 1.0) -> Variable:
    """Glorot initialisation: uniform on [-bound, bound], bound = gain·sqrt(6 / (fan_in +
    fan_out)), so a layer keeps the variance of its inputs and of its gradients alike."""
    _target(tensor, "xavier_uniform_")
    gain = _real(gain, "gain", "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if fan_in + fan_out == 0:
        return tensor  # an empty weight: nothing to fill
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Variable, gain: float = 1.0) -> Variable:
    """Glorot initialisation from N(0, std²), std = gain·sqrt(2 / (fan_in + fan_out))."""
    _target(tensor, "xavier_normal_")
    gain = _real(gain, "gain", "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if fan_in + fan_out == 0:
        return tensor
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))

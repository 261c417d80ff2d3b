"""batch_norm, group_norm and dropout2d, as in torch.nn.functional (re-exported there).

Both norms call the Function Normalize (nn/_functions/normalization.py), whose backward is
derived by hand, then scale and shift each channel by weight and bias.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.nn._functions import DropoutMask
from minigrad.nn._functions.normalization import Normalize
from minigrad.ops.tooling.arguments import checks

checked_function = checks("minigrad.nn.functional")


def _numeric(x: Any, caller: str) -> Variable:
    if not isinstance(x, Variable) or x.is_text:
        raise TypeError(
            f"{caller}() expects a numeric Variable as input; got {type(x).__name__}. "
            f"Make one with minigrad.tensor(...)."
        )
    return x


def _floating(x: Variable, caller: str) -> Variable:
    """x, if its dtype is floating: normalized values are fractions, never integers."""
    if x.dtype.kind != "f":
        raise RuntimeError(
            f"{caller}: the input must be floating point (float32 or float64); got dtype "
            f"{x.dtype}. Convert it first: x.float() or x.double()."
        )
    return x


def _per_channel(value: Variable, ndim: int) -> Variable:
    """A (C,) Variable shaped to broadcast over (N, C, *S)."""
    return value.reshape(-1, *(1,) * (ndim - 2))


def _check_channel_vector(value: Any, name: str, channels: int, caller: str) -> None:
    if value is None:
        return
    if not isinstance(value, Variable) or value.shape != (channels,):
        shape = list(value.shape) if isinstance(value, Variable) else type(value).__name__
        raise RuntimeError(
            f"{caller}: expected {name} to have shape [{channels}] (one value per channel of "
            f"the input); got {shape}."
        )


def _affine(y: Variable, weight: Any, bias: Any) -> Variable:
    if weight is not None:
        y = y * _per_channel(weight, y.ndim)
    if bias is not None:
        y = y + _per_channel(bias, y.ndim)
    return y


@checked_function
def batch_norm(
    x: Variable,
    running_mean: Variable | None,
    running_var: Variable | None,
    weight: Variable | None = None,
    bias: Variable | None = None,
    training: bool = False,
    momentum: float | None = 0.1,
    eps: float = 1e-5,
) -> Variable:
    """y = (x - mean) / √(var + eps) · weight + bias per channel: x (N, C, *S).

    Training: mean and the biased var over N and S, and the running ones (when given) move
    towards them: running = (1 - momentum)·running + momentum·batch (the unbiased var).
    Eval: the running ones are used, and nothing changes; as in PyTorch they must be given
    (a module without them, track_running_stats=False, passes training=True).
    """
    x = _numeric(x, "batch_norm")
    if x.ndim < 2:
        raise ValueError(
            f"batch_norm expects an input of shape (N, C) or (N, C, *S); got {list(x.shape)}."
        )
    _floating(x, "batch_norm")
    channels = x.shape[1]
    for name, value in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        _check_channel_vector(value, name, channels, "batch_norm")
    axes = (0, *range(2, x.ndim))
    if not training and (running_mean is None or running_var is None):
        missing = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(
            f"{missing} must be defined in evaluation mode: batch_norm(training=False) "
            f"normalizes with the running statistics; pass them, or training=True to use "
            f"the batch's own."
        )
    if training:
        count = x.numel() // channels
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{list(x.shape)}"
            )
        y = Normalize.apply(x, axes, float(eps))
        if training and running_mean is not None and running_var is not None:
            _update_running(x, axes, count, running_mean, running_var, momentum)
        return _affine(y, weight, bias)
    shift = _per_channel(running_mean, x.ndim)
    scale = (_per_channel(running_var, x.ndim) + eps).rsqrt()
    return _affine((x - shift) * scale, weight, bias)


def _update_running(
    x: Variable, axes: tuple[int, ...], count: int, running_mean: Variable,
    running_var: Variable, momentum: float | None,
) -> None:
    """The running statistics, in place: they are buffers, not part of the graph."""
    if momentum is None:
        raise ValueError(
            "batch_norm: momentum=None (a cumulative average) needs the number of batches "
            "seen; use nn.BatchNorm1d/2d(momentum=None), which counts them."
        )
    with no_grad():
        data = x.detach()
        mean = data.mean(axes)
        unbiased = data.var(axes, correction=1) if count > 1 else data.var(axes, correction=0)
        running_mean.mul_(1 - momentum).add_(mean * momentum)
        running_var.mul_(1 - momentum).add_(unbiased * momentum)


@checked_function
def group_norm(
    x: Variable,
    num_groups: int,
    weight: Variable | None = None,
    bias: Variable | None = None,
    eps: float = 1e-5,
) -> Variable:
    """y = (x - mean) / √(var + eps) · weight + bias, mean and var over each sample's
    group of C / num_groups channels (and all of S): x (N, C, *S)."""
    x = _floating(_numeric(x, "group_norm"), "group_norm")
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or (
        num_groups <= 0
    ):
        raise ValueError(f"group_norm: num_groups must be a positive int; got {num_groups!r}.")
    if x.ndim < 2:
        raise RuntimeError(
            f"group_norm: expected at least 2 dimensions for input tensor (N, C, *S), but "
            f"received {x.ndim}: shape {list(x.shape)}"
        )
    if x.shape[1] % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(x.shape)} and num_groups={num_groups}"
        )
    channels = x.shape[1]
    _check_channel_vector(weight, "weight", channels, "group_norm")
    _check_channel_vector(bias, "bias", channels, "group_norm")
    grouped = x.reshape(x.shape[0], int(num_groups), -1)
    y = Normalize.apply(grouped, (2,), float(eps)).reshape(x.shape)
    return _affine(y, weight, bias)


@checked_function
def dropout2d(
    x: Variable, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Variable:
    """Zero whole channels: y[n, c] = x[n, c] · mask[n, c] / (1 - p), mask ~ Bernoulli(1 - p),
    for x (N, C, H, W); y = x when not training.

    Another shape (N, C, *) warns, as in PyTorch, and shares one draw per (n, c) over the
    dims after C: a 2-D (N, C) input is dropped element by element, as F.dropout would. A
    3-D input is read as PyTorch 2.x still reads it, (N, C, L), with its warning (not as
    one unbatched (C, H, W) image, which PyTorch announces for a future release).
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}.")
    x = _numeric(x, "dropout2d")
    if x.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).",
            UserWarning,
            stacklevel=3,  # past checked_function's wrapper, to the caller
        )
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=3,
        )
    if not training or p == 0:
        return x
    mask = DropoutMask.apply(x.detach(), float(p), _channel_mask_shape(x.shape, p))
    if x.device == "cuda":
        mask = mask.to("cuda")
    return x.mul_(mask) if inplace else x * mask


def _channel_mask_shape(shape: tuple[int, ...], p: float) -> tuple[int, ...]:
    """One draw per channel: (N, C, 1, ...) (PyTorch's feature dropout, which needs the two
    leading dims unless all is dropped)."""
    if len(shape) < 2:
        if p < 1:
            raise RuntimeError(
                f"Feature dropout requires at least 2 dimensions in the input; got shape "
                f"{list(shape)}. Use F.dropout for an input without channels."
            )
        return shape  # p = 1 zeroes everything, whatever the shape
    return (*shape[:2], *(1,) * (len(shape) - 2))

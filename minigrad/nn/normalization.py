"""BatchNorm1d, BatchNorm2d and GroupNorm (LayerNorm is in layer_norm.py).

BatchNorm normalizes each channel over the batch (and positions) while training, and
keeps running averages of those statistics for eval mode, where each sample is then
normalized on its own. GroupNorm normalizes each sample over groups of channels, the same
in training and eval.
"""

from __future__ import annotations

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_flag
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.linear import bias_flag
from minigrad.nn.module import Module


class _BatchNorm(Module):
    """y = (x - mean) / √(var + eps) · weight + bias per channel (see F.batch_norm)."""

    expected_dims: tuple[int, ...] = ()
    layouts = ""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        layer = type(self).__name__
        num_features = _positive_int(num_features, "num_features", layer)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
            raise ValueError(f"{layer}: eps must be a number >= 0; got {eps!r}.")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine = check_flag(affine, "affine", layer)
        self.track_running_stats = check_flag(track_running_stats, "track_running_stats", layer)
        with_bias = bias_flag(bias, layer)
        _affine_parameters(self, num_features, self.affine, with_bias)
        if self.track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features))
            self.register_buffer("running_var", factories.ones(num_features))
            self.register_buffer("num_batches_tracked", factories.tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: Variable) -> Variable:
        layer = type(self).__name__
        if isinstance(x, Variable) and x.ndim not in self.expected_dims:
            wanted = " or ".join(f"{d}D" for d in self.expected_dims)
            raise ValueError(
                f"expected {wanted} input (got {x.ndim}D input); {self.layouts}"
            )
        if isinstance(x, Variable) and x.shape[1] != self.num_features:
            raise RuntimeError(
                f"{layer}({self.num_features}) expects inputs with {self.num_features} "
                f"channels in dim 1 (its num_features); got input of shape {list(x.shape)}."
            )
        momentum = self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if momentum is None:
                # A cumulative average: each batch weighs 1/n. Computed by an operation,
                # not read out with .item(), so that minigrad.compile replays it.
                momentum = 1.0 / self.num_batches_tracked
        # Batch statistics while training, or whenever there are no running ones.
        use_batch = self.training or self.running_mean is None
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(
            x,
            self.running_mean if keep_running else None,
            self.running_var if keep_running else None,
            self.weight,
            self.bias,
            use_batch,
            0.0 if momentum is None else momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}{_no_bias(self)}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C."""

    expected_dims = (2, 3)
    layouts = "BatchNorm1d takes (N, C) or (N, C, L); for (N, C, H, W) images use BatchNorm2d."


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) images, per channel C."""

    expected_dims = (4,)
    layouts = (
        "BatchNorm2d takes (N, C, H, W) images (unsqueeze a single image: x.unsqueeze(0)); "
        "for (N, C) or (N, C, L) use BatchNorm1d."
    )


class GroupNorm(Module):
    """y = (x - mean) / √(var + eps) · weight + bias, statistics over each sample's groups
    of num_channels / num_groups channels: x (N, C, *S)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        num_groups = _positive_int(num_groups, "num_groups", "GroupNorm")
        num_channels = _positive_int(num_channels, "num_channels", "GroupNorm")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
            raise ValueError(f"GroupNorm: eps must be a number >= 0; got {eps!r}.")
        if num_channels % num_groups:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.affine = check_flag(affine, "affine", "GroupNorm")
        _affine_parameters(self, num_channels, self.affine, bias_flag(bias, "GroupNorm"))
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: Variable) -> Variable:
        if isinstance(x, Variable) and (x.ndim < 2 or x.shape[1] != self.num_channels):
            raise RuntimeError(
                f"GroupNorm({self.num_groups}, {self.num_channels}) expects inputs (N, "
                f"{self.num_channels}, *) with its num_channels in dim 1; got input of shape "
                f"{list(x.shape)}."
            )
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
            f"affine={self.affine}{_no_bias(self)}"
        )


def _positive_int(value: object, name: str, layer: str) -> int:
    """value as an int > 0 (NumPy's integers too), or a TypeError naming the layer."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise TypeError(f"{layer}: {name} must be a positive int; got {value!r}.")
    return int(value)


def _affine_parameters(module: Module, channels: int, affine: bool, bias: bool) -> None:
    """weight (and bias, unless bias=False) of shape (channels,) when affine; else None."""
    if affine:
        module.weight = Parameter(factories.empty(channels))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(factories.empty(channels))
    else:
        module.register_parameter("bias", None)


def _no_bias(module: Module) -> str:
    """", bias=False" in a repr, as PyTorch prints it for an affine layer without a bias."""
    return ", bias=False" if module.affine and module.bias is None else ""

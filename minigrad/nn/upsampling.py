"""Upsample (and its two fixed-mode forms): F.interpolate as a layer, for a Sequential."""

from __future__ import annotations

from typing import Any

from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.module import Module


def _factor(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        # ValueError, PyTorch's class for float() of a bad scale factor.
        raise ValueError(
            f"Upsample: scale_factor must be a number or a tuple of numbers; got {value!r}."
        ) from None


class Upsample(Module):
    """y = F.interpolate(x, size, scale_factor, mode, align_corners): x (N, C, *spatial) →
    (N, C, *size), or each spatial size times scale_factor, rounded down."""

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(_factor(factor) for factor in scale_factor)
        else:
            self.scale_factor = _factor(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Variable) -> Variable:
        return F.interpolate(
            x,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            described = f"scale_factor={self.scale_factor!r}"
        else:
            described = f"size={self.size!r}"
        return f"{described}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample with mode='nearest', for (N, C, H, W)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode='bilinear' and align_corners=True, for (N, C, H, W)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

"""AdamW: Adam with the weight decay taken out of the gradient (decoupled)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.optim.adam import Adam


class AdamW(Adam):
    """p ← p·(1 - lr·weight_decay), then Adam's step on the plain gradient.

    Decay no longer passes through Adam's scaling by 1/√v̂, so every weight shrinks at the
    same rate (Loshchilov & Hutter). PyTorch's default weight_decay here is 1e-2.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )

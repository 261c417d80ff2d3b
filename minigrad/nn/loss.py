"""Loss functions as Modules: MSELoss and CrossEntropyLoss."""

from __future__ import annotations

import numpy as np

from minigrad.nn.module import Module
from minigrad.variable import Variable

REDUCTIONS = ("mean", "sum", "none")


def _reduce(losses: Variable, reduction: str) -> Variable:
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(
                f"reduction must be one of {', '.join(REDUCTIONS)}; got {reduction!r}."
            )
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class MSELoss(_Loss):
    """mean((prediction - target)²); prediction and target of the same shape."""

    def forward(self, prediction: Variable, target: Variable) -> Variable:
        if not isinstance(prediction, Variable):
            raise TypeError(
                f"MSELoss expects a Variable prediction; got {type(prediction).__name__}."
            )
        target_shape = target.shape if isinstance(target, Variable) else np.shape(target)
        if prediction.shape != tuple(target_shape):
            raise ValueError(
                f"MSELoss: prediction has shape {prediction.shape} but target has shape "
                f"{tuple(target_shape)}; they must match (reshape one of them)."
            )
        difference = prediction - target
        return _reduce(difference * difference, self.reduction)


class CrossEntropyLoss(_Loss):
    """-log softmax(logits)[target]: logits (N, C), target (N,) class indices in [0, C).

    Averaged over the batch with reduction="mean". The softmax is inside: pass raw scores.
    """

    def forward(self, logits: Variable, target: Variable) -> Variable:
        if not isinstance(logits, Variable) or logits.ndim != 2:
            got = logits.shape if isinstance(logits, Variable) else type(logits).__name__
            raise ValueError(
                f"CrossEntropyLoss expects logits of shape (batch, classes); got {got}."
            )
        labels = np.asarray(target.data if isinstance(target, Variable) else target)
        batch, classes = logits.shape
        if labels.shape != (batch,) or labels.dtype.kind not in "iu":
            raise ValueError(
                f"CrossEntropyLoss expects target to be {batch} integer class indices, shape "
                f"({batch},); got shape {labels.shape} of dtype {labels.dtype}. "
                f"(One-hot targets: use labels.argmax(1).)"
            )
        outside = labels[(labels < 0) | (labels >= classes)]
        if outside.size:
            raise ValueError(
                f"CrossEntropyLoss: target holds class {outside[0]}, but there are {classes} "
                f"classes (0 to {classes - 1})."
            )
        log_probabilities = logits.log_softmax(dim=1)
        picked = log_probabilities[np.arange(batch), labels]
        return _reduce(-picked, self.reduction)

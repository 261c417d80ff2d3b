"""CosineSimilarity and PairwiseDistance: how alike two batches of vectors are, row by row."""

from __future__ import annotations

from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.module import Module


class CosineSimilarity(Module):
    """cos = Σ x1·x2 / max(‖x1‖ ‖x2‖, eps) along dim: x1, x2 (*, D, *) → (*, *)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Variable, x2: Variable) -> Variable:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """‖x1 - x2 + eps‖_p over the last dim: x1, x2 (N, D) or (D,) → (N,) or () ((N, 1)
    with keepdim); eps keeps the norm's gradient finite where x1 = x2."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p  # PyTorch's attribute name for p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Variable, x2: Variable) -> Variable:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

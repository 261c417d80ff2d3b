"""Flatten and Unflatten: dims merged into one (images (N, C, H, W) → (N, C·H·W)), or one
dim split into several. Both are reshapes (x.flatten, x.unflatten)."""

from __future__ import annotations

import numpy as np

from minigrad.core.variable import Variable
from minigrad.nn.module import Module


class Flatten(Module):
    """Merge dims start_dim..end_dim (default: all but the batch dim) into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Variable) -> Variable:
        return _variable(x, "Flatten").flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim into unflattened_size: (N, 12) with Unflatten(1, (3, 4)) → (N, 3, 4)."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        # Checked here, as PyTorch does, not at the first forward far from the mistake.
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}. Pass e.g. Unflatten(1, (3, 4))."
            )
        for position, size in enumerate(unflattened_size):
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type "
                    f"{type(size).__name__} at pos {position}: {tuple(unflattened_size)}."
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, x: Variable) -> Variable:
        return _variable(x, "Unflatten").unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _variable(x: object, module: str) -> Variable:
    """x, if it is a Variable; else a TypeError naming the module."""
    if not isinstance(x, Variable):
        raise TypeError(
            f"{module} reshapes a Variable; got {type(x).__name__}. Make one with "
            f"minigrad.tensor(...)."
        )
    return x

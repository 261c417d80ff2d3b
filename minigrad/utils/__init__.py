"""minigrad.utils: helpers around training, under PyTorch's names (minigrad.utils.data)."""

from minigrad.utils import data

__all__ = ["data"]

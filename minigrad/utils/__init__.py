"""minigrad.utils: training helpers under PyTorch's names (utils.data, utils.checkpoint)."""

from minigrad.utils import checkpoint, data

__all__ = ["checkpoint", "data"]

"""NVIDIA's cuDNN: minigrad calls none. The switches PyTorch code sets for reproducibility
(`deterministic`, `benchmark`) are accepted and change nothing: minigrad's kernels are
deterministic already."""

enabled = False
deterministic = False
benchmark = False


def is_available() -> bool:
    """False: minigrad does not use cuDNN."""
    return False

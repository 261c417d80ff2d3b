"""minigrad.backends: PyTorch's `torch.backends` switches, for code that asks about them
(`torch.backends.mps.is_available()` in PyTorch's quickstart). minigrad computes with NumPy
on the CPU (and Numba kernels on a CUDA GPU): no MPS, no cuDNN."""

from minigrad.backends import cudnn, mps

__all__ = ["cudnn", "mps"]

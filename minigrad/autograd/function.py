"""PyTorch's name for minigrad.autodiff.function (`torch.autograd.function.once_differentiable`)."""

from minigrad.autodiff.function import BackwardNode, Function, FunctionCtx
from minigrad.autodiff.once import once_differentiable

__all__ = ["BackwardNode", "Function", "FunctionCtx", "once_differentiable"]

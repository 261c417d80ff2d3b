"""PyTorch's name for minigrad.autodiff.forward_ad (`torch.autograd.forward_ad`)."""

from minigrad.autodiff.forward_ad import UnpackedDualTensor, dual_level, make_dual, unpack_dual

__all__ = ["UnpackedDualTensor", "dual_level", "make_dual", "unpack_dual"]

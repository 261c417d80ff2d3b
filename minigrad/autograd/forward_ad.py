"""PyTorch's name for minigrad.autodiff.forward_ad (`torch.autograd.forward_ad`)."""

from minigrad.autodiff.forward_ad import (
    NoDualLevelError,
    UnpackedDualTensor,
    dual_level,
    make_dual,
    unpack_dual,
)

__all__ = ["NoDualLevelError", "UnpackedDualTensor", "dual_level", "make_dual", "unpack_dual"]

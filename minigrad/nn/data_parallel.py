"""nn.DataParallel: a module wrapped for several GPUs, run here on one device.

PyTorch's DataParallel splits each batch along `dim` across the GPUs in `device_ids`,
runs a replica of the module on each piece and gathers the outputs on `output_device`.
On a machine without GPUs it runs the module itself on the whole batch. minigrad runs
one device at a time, so that is what it does: forward(*inputs) is module(*inputs), and
the results (and gradients) are the module's own. Code written for DataParallel runs
unchanged: the wrapped module is `.module`, and its parameters appear in state_dict()
under "module.", as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.checks import check_iterable
from minigrad.nn.module import Module


class DataParallel(Module):
    """Wrap `module`; forward runs it on the whole batch (one device: see the module doc).

    device_ids: None, or at most one device (a second one would need a replica per GPU,
    which minigrad does not make). output_device and dim are kept, as PyTorch keeps them.
    """

    def __init__(
        self,
        module: Module,
        device_ids: list[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DataParallel wraps an nn.Module; got {type(module).__name__}. Wrap the "
                f"model, e.g. nn.DataParallel(model)."
            )
        if device_ids is not None:
            device_ids = check_iterable(device_ids, "device_ids", "DataParallel", "devices")
        if device_ids is not None and len(device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(device_ids)} devices: minigrad runs one device "
                f"at a time, so it cannot split a batch across GPUs. Pass one device, or none."
            )
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"DataParallel: dim must be an int; got {type(dim).__name__}.")
        self.module = module
        self.device_ids = [] if device_ids is None else device_ids
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)

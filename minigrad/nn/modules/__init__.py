"""torch.nn.modules, PyTorch's path to its Module classes and the global module hooks
(`torch.nn.modules.module.register_module_forward_hook`): re-exports only."""

from minigrad.nn.modules import module

__all__ = ["module"]

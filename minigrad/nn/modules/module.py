"""torch.nn.modules.module: Module and the hooks every module runs (nn/module_hooks.py),
re-exported at PyTorch's path."""

from minigrad.nn.module import Module
from minigrad.nn.module_hooks import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)

__all__ = [
    "Module",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]

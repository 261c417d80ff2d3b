"""Gradient hooks on a Variable, attached to Variable here: register_hook, retain_grad.

`register_hook` returns a RemovableHandle (PyTorch's torch.utils.hooks); the engine calls
the hooks before the node they sit on runs (minigrad/core/hooks.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from minigrad.core.variable import Variable


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def retain_grad(self: Variable) -> None:
    """Keep `.grad` for this non-leaf after backward (leaves always keep it)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on a Variable that has requires_grad=False.")
    if self.grad_fn is None or self._retains_grad:
        return
    if self.grad_fn._retained is None:
        self.grad_fn._retained = {}
    self.grad_fn._retained[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def _retains_grad(self: Variable) -> bool:
    return self._retains_grad


def register_hook(self: Variable, hook: Callable[[Variable], Variable | None]) -> RemovableHandle:
    """Call `hook(grad)` when this Variable's gradient is computed; it may return a new one."""
    if not callable(hook):
        raise TypeError(f"register_hook expects a function; got {type(hook).__name__}.")
    if not self.requires_grad:
        raise RuntimeError(
            "cannot register a hook on a Variable that doesn't require gradient; set "
            "requires_grad=True on the leaf first."
        )
    node = self.grad_fn if self.grad_fn is not None else self._accumulator()
    if node._pre_hooks is None:
        node._pre_hooks = {}
    hooks = node._pre_hooks.setdefault(self._output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


Variable.retain_grad = retain_grad
Variable.retains_grad = property(_retains_grad)
Variable.register_hook = register_hook
for _method in (retain_grad, register_hook):
    _method.__qualname__ = f"Variable.{_method.__name__}"

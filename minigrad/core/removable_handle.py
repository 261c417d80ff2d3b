"""RemovableHandle: what `register_hook` returns (PyTorch's torch.utils.hooks name)."""

from __future__ import annotations

from collections.abc import Callable


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    # `with x.register_hook(f):` keeps the hook for the block only, as PyTorch's handle does.
    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

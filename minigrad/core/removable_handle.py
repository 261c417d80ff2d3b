"""RemovableHandle: what `register_hook` returns (PyTorch's torch.utils.hooks name)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable, table: dict | None = None,
                 key: Any = None) -> None:
        self._hooks = hooks
        self._hook = hook
        # The dict `hooks` is an entry of, if any: an emptied list leaves it, so that the
        # engine (and minigrad.compile) see no hooks there once the last one is removed.
        self._table = table
        self._key = key

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
        table = self._table
        if table is not None and not self._hooks and table.get(self._key) is self._hooks:
            del table[self._key]

    # `with x.register_hook(f):` keeps the hook for the block only, as PyTorch's handle does.
    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

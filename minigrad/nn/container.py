"""Sequential: modules applied one after the other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minigrad.nn.module import Module


class Sequential(Module):
    """Sequential(m0, m1, ...)(x) = ...m1(m0(x)); the modules are named "0", "1", ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for index, module in enumerate(modules):
            if not isinstance(module, Module):
                raise TypeError(
                    f"Sequential takes Modules; argument {index} is a {type(module).__name__}. "
                    f"Wrap functions in a Module (e.g. nn.ReLU() instead of minigrad.relu)."
                )
            self.add_module(str(index), module)

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index: int) -> Module:
        modules = list(self._modules.values())
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"Sequential indices must be ints; got {type(index).__name__}.")
        if not -len(modules) <= index < len(modules):
            raise IndexError(
                f"index {index} is out of range for a Sequential of {len(modules)} modules."
            )
        return modules[index]

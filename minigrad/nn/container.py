"""Containers: Sequential (modules applied in turn), ModuleList and ModuleDict (modules held
so their Parameters are registered, called however forward likes)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from minigrad.core.checks import check_iterable
from minigrad.nn.module import Module


def _check_module(module: Any, container: str, where: str) -> Module:
    if not isinstance(module, Module):
        raise TypeError(
            f"{container} takes Modules; {where} is a {type(module).__name__}. "
            f"Wrap functions in a Module (e.g. nn.ReLU() instead of minigrad.relu)."
        )
    return module


def _position(index: Any, length: int, container: str) -> int:
    """An int index as a position in [0, length), or a clear error."""
    try:
        if isinstance(index, bool):
            raise TypeError
        index = operator.index(index)  # an int, or a NumPy integer
    except TypeError:
        raise TypeError(
            f"{container} indices must be ints; got {type(index).__name__}. (Slices give a "
            f"{container} of the selected modules: model[1:].)"
        ) from None
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range for a {container} of {length} modules.")
    return index % length


class Sequential(Module):
    """Sequential(m0, m1, ...)(x) = ...m1(m0(x)); the modules are named "0", "1", ..., or
    as given: Sequential(OrderedDict([("fc", Linear(2, 3)), ("act", ReLU())]))."""

    def __init__(self, *args: Module | OrderedDict) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, _check_module(module, "Sequential", f"the value {name!r}"))
            return
        for index, module in enumerate(args):
            if isinstance(module, Mapping):
                raise TypeError(
                    f"Sequential takes Modules, or one OrderedDict of name → Module; argument "
                    f"{index} is a {type(module).__name__}. Wrap it: "
                    f"Sequential(OrderedDict(...))."
                )
            self.add_module(str(index), _check_module(module, "Sequential", f"argument {index}"))

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def _renumber(self) -> None:
        """Name the modules "0", "1", ... in order again (PyTorch does so after a deletion)."""
        modules = list(self._modules.values())
        self._modules.clear()
        for index, module in enumerate(modules):
            self._modules[str(index)] = module

    def __getitem__(self, index: int | slice) -> Any:
        """model[i] is a module; model[i:j] a Sequential of those modules, with their names."""
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        names = list(self._modules)
        return self._modules[names[_position(index, len(names), "Sequential")]]

    def __setitem__(self, index: int, module: Module) -> None:
        names = list(self._modules)
        name = names[_position(index, len(names), "Sequential")]
        self._modules[name] = _check_module(module, "Sequential", "the value")

    def __delitem__(self, index: int | slice) -> None:
        names = list(self._modules)
        if isinstance(index, slice):
            doomed = names[index]
        else:
            doomed = [names[_position(index, len(names), "Sequential")]]
        for name in doomed:
            del self._modules[name]
        self._renumber()

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at key (the later ones are renumbered)."""
        module = self[key]
        del self[key]
        return module

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), _check_module(module, "Sequential", "the module"))
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put a module before position index (the modules are renumbered); returns self."""
        _check_module(module, "Sequential", "the module")
        count = len(self)
        if isinstance(index, bool) or not isinstance(index, int) or not -count <= index <= count:
            raise IndexError(
                f"Index out of range: {index!r}; Sequential.insert takes a position from "
                f"{-count} to {count}."
            )
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for position, each in enumerate(modules):
            self._modules[str(position)] = each
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append each module of `sequential` (any iterable of modules); returns self."""
        modules = check_iterable(sequential, "sequential", "Sequential.extend", "Modules")
        for module in modules:
            self.append(module)
        return self

    def __add__(self, other: Sequential) -> Sequential:
        """A new Sequential: this one's modules, then other's."""
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but "
                f"{type(other).__name__} is given."
            )
        combined = Sequential()
        for module in (*self, *other):
            combined.append(module)
        return combined

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but "
                f"{type(other).__name__} is given."
            )
        return self.extend(list(other))

    def _check_factor(self, factor: Any) -> int:
        if isinstance(factor, bool) or not isinstance(factor, int):
            raise TypeError(
                f"unsupported operand type(s) for *: Sequential and {type(factor).__name__}; "
                f"multiply by an int."
            )
        if factor <= 0:
            raise ValueError(f"Non-positive multiplication factor {factor} for Sequential.")
        return factor

    def __mul__(self, factor: int) -> Sequential:
        """The modules repeated `factor` times (the same module objects, shared)."""
        combined = Sequential()
        for _ in range(self._check_factor(factor)):
            for module in self:
                combined.append(module)
        return combined

    __rmul__ = __mul__

    def __imul__(self, factor: int) -> Sequential:
        modules = list(self)
        for _ in range(self._check_factor(factor) - 1):
            for module in modules:
                self.append(module)
        return self


class ModuleList(Module):
    """A list of Modules whose Parameters belong to the owner: ModuleList([m0, m1, ...]).

    It has no forward: iterate over it in your own forward.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _renumber(self, modules: list[Module]) -> None:
        self._modules.clear()
        for index, module in enumerate(modules):
            self._modules[str(index)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index: int | slice) -> Any:
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(modules[index])
        return modules[_position(index, len(modules), "ModuleList")]

    def __setitem__(self, index: int, module: Module) -> None:
        position = _position(index, len(self), "ModuleList")
        self._modules[str(position)] = _check_module(module, "ModuleList", "the value")

    def __delitem__(self, index: int | slice) -> None:
        modules = list(self._modules.values())
        if isinstance(index, slice):
            del modules[index]
        else:
            del modules[_position(index, len(modules), "ModuleList")]
        self._renumber(modules)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), _check_module(module, "ModuleList", "the module"))
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add modules at the end; returns self."""
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError(
                f"ModuleList.extend takes an iterable of Modules; got one "
                f"{type(modules).__name__}. Use append for one module."
            )
        modules = check_iterable(modules, "modules", "ModuleList.extend", "Modules")
        for offset, module in enumerate(modules):
            self.add_module(str(len(self)), _check_module(module, "ModuleList", f"item {offset}"))
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put a module before position index."""
        modules = list(self._modules.values())
        modules.insert(index, _check_module(module, "ModuleList", "the module"))
        self._renumber(modules)

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at key (the later ones are renumbered)."""
        module = self[key]
        del self[key]
        return module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "ModuleList has no forward: it only holds modules. Iterate over it in your "
            "model's forward (for layer in self.layers: x = layer(x)), or use nn.Sequential."
        )

    def __repr__(self) -> str:
        """As PyTorch: runs of identical modules are shown once, as "(0-2): 3 x Linear(...)"."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return "ModuleList()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for index, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        lines = []
        for first, last, text in runs:
            label = f"({first}): " if first == last else f"({first}-{last}): {last - first + 1} x "
            lines.append("  " + (label + text).replace("\n", "\n  "))
        return "ModuleList(\n" + "\n".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of Modules whose Parameters belong to the owner: ModuleDict({"a": m, ...}).

    Keys keep their insertion order. It has no forward: look modules up in your own.
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no module {key!r}; its keys are {list(self._modules)}.")
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, _check_module(module, "ModuleDict", f"the value for {key!r}"))

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError with the keys, when missing
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self._modules[key]
        return module

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple]) -> None:
        """Add (or replace) modules from a mapping or from (key, module) pairs."""
        if isinstance(modules, Mapping):
            pairs = list(modules.items())
        else:
            pairs = check_iterable(modules, "modules", "ModuleDict", "(key, module) pairs")
        for index, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(
                    f"ModuleDict.update takes a mapping or (key, module) pairs; element "
                    f"{index} is {pair!r}."
                )
            self[pair[0]] = pair[1]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "ModuleDict has no forward: it only holds modules. Look them up in your model's "
            "forward (self.heads[name](x))."
        )

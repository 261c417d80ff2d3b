"""One package under two names: `minigrad.autograd` (PyTorch's) is `minigrad.autodiff`.

`alias("minigrad.autograd", "minigrad.autodiff")` puts the package in `sys.modules` under
its second name, and teaches the import system that every submodule under that name is
the submodule under the first: `minigrad.autograd.functional is
minigrad.autodiff.functional`. Importing a file twice under two names would make two
copies of every class in it (two `Function`s that isinstance() tells apart).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `alias.X` as the already-importable `target.X`."""

    def __init__(self, alias: str, target: str) -> None:
        self.alias, self.target = alias, target

    def find_spec(self, fullname: str, path: object, target: object = None) -> object:
        if not fullname.startswith(self.alias + "."):
            return None
        real = self.target + fullname[len(self.alias) :]
        if importlib.util.find_spec(real) is None:
            return None  # no such submodule: the usual ModuleNotFoundError
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # The real module, imported under its own name; the import system then files
        # it under the alias too, and keeps its __name__ and __spec__.
        return importlib.import_module(self.target + spec.name[len(self.alias) :])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the real module ran when it was imported."""


def alias(name: str, target: str) -> None:
    """Make `name` and each `name.X` the same module objects as `target` and `target.X`."""
    sys.modules[name] = importlib.import_module(target)
    # The submodules imported already are filed under the alias now. Were they found by
    # the finder instead, the import system would set them as attributes of the package,
    # and the module gradcheck.py would hide the function gradcheck.
    for loaded in [module for module in sys.modules if module.startswith(target + ".")]:
        sys.modules[name + loaded[len(target) :]] = sys.modules[loaded]
    for finder in sys.meta_path:
        if isinstance(finder, _AliasFinder) and finder.alias == name:
            return
    sys.meta_path.insert(0, _AliasFinder(name, target))


def alias_submodule(package: ModuleType, name: str, module: ModuleType) -> None:
    """Make `package.name` (attribute and import path) the module `module` of another
    package: `minigrad.autodiff.function` is `minigrad.core.function`."""
    setattr(package, name, module)
    sys.modules[f"{package.__name__}.{name}"] = module

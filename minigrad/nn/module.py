"""Module: the base class of layers and models, as in PyTorch.

A Module keeps its Parameters and its sub-Modules in two dictionaries, filled by plain
attribute assignment (`self.weight = Parameter(...)`, `self.fc = Linear(...)`), so that
`parameters()` can find every weight of a model, however deeply it is nested.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from minigrad import devices
from minigrad.autodiff.grad_mode import no_grad
from minigrad.variable import Parameter, Variable


class IncompatibleKeys(NamedTuple):
    """What load_state_dict(strict=False) could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of layers: subclass it, assign Parameters and Modules, write `forward`."""

    training: bool

    def __init__(self) -> None:
        # Set through object.__setattr__: our own __setattr__ needs these to exist first.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    # ----------------------------------------------------------------------- registration

    def __setattr__(self, name: str, value: Any) -> None:
        parameters = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, (Parameter, Module)) and parameters is None:
            raise AttributeError(
                f"cannot assign {type(value).__name__} '{name}' before Module.__init__() "
                f"has run: call super().__init__() first in {type(self).__name__}.__init__."
            )
        if isinstance(value, Parameter):
            self._forget(name)
            parameters[name] = value
        elif isinstance(value, Module):
            self._forget(name)
            modules[name] = value
        elif parameters is not None and name in parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as parameter '{name}': expected "
                    f"a minigrad.nn.Parameter or None. Wrap it: Parameter(value)."
                )
            parameters[name] = None
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as child module '{name}': "
                    f"expected a Module or None."
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Remove `name` wherever it was, so it lives in exactly one place."""
        self.__dict__.pop(name, None)
        self._parameters.pop(name, None)
        self._modules.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the two registries.
        registries = (self.__dict__.get("_parameters", {}), self.__dict__.get("_modules", {}))
        for registry in registries:
            if name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters or name in self._modules:
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a Parameter (or None: a declared but absent one, e.g. `bias`) under `name`."""
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot register a {type(param).__name__} as parameter '{name}': expected "
                f"a minigrad.nn.Parameter or None."
            )
        self._forget(name)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child Module (or None) under `name`."""
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass.")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name: Any, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot register a {kind} before Module.__init__() has run: call "
                f"super().__init__() first in {type(self).__name__}.__init__."
            )
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a str; got {type(name).__name__}.")
        if not name or "." in name:
            raise ValueError(f'{kind} name can\'t be empty or contain ".": got {name!r}.')
        if hasattr(type(self), name):
            raise ValueError(f"attribute '{name}' already exists on {type(self).__name__}.")

    # ----------------------------------------------------------------------- traversal

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This Module and every Module inside it, each once, with its dotted name."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [
                (f"{name}.{child_name}" if name else child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))  # reversed, so children come out in order

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, module in self._modules.items():
            if module is not None:
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every Parameter with its dotted name (`fc1.weight`); a shared one only once."""
        seen: set[int] = set()
        owners = self.named_modules(prefix) if recurse else [(prefix, self)]
        for owner_name, module in owners:
            for name, param in module._parameters.items():
                if param is None or id(param) in seen:
                    continue
                seen.add(id(param))
                yield (f"{owner_name}.{name}" if owner_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    # ----------------------------------------------------------------------- training

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every Parameter (None, or zeros with set_to_none=False)."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad = Variable(np.zeros_like(param.grad.data))

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this Module and all inside it; returns self."""
        if not isinstance(mode, bool):
            raise TypeError(f"train() expects True or False; got {mode!r}.")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (train(False)); returns self."""
        return self.train(False)

    def to(self, device: str) -> Module:
        """Move every Parameter (and its gradient) to `device`, in place; returns self.

        The Parameters stay the same objects, so an optimizer made before still updates them.
        """
        device = devices.check_device(device)
        for param in self.parameters():
            param.data = devices.move(param.data, device)
            if param.grad is not None:
                param.grad = Variable(devices.move(param.grad.data, device))
        return self

    def cuda(self) -> Module:
        return self.to("cuda")

    def cpu(self) -> Module:
        return self.to("cpu")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function: '
            f"define forward(self, ...) to say what the module computes."
        )

    # ----------------------------------------------------------------------- state

    def state_dict(self) -> dict[str, Variable]:
        """Name → a copy of each Parameter's value (copies, so later training leaves it be)."""
        return {name: Variable(param.data.copy()) for name, param in self.named_parameters()}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy values into the Parameters in place (they stay the same objects)."""
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"load_state_dict expects a dict of name → value, as state_dict() returns; "
                f"got {type(state_dict).__name__}."
            )
        own = dict(self.named_parameters())
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}: missing keys "
                f"{missing}, unexpected keys {unexpected}. Load a state_dict saved from the "
                f"same architecture, or pass strict=False to load what matches."
            )
        values = {}
        for name, param in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            array = np.asarray(value.data if isinstance(value, Variable) else value)
            if array.shape != param.shape:
                raise RuntimeError(
                    f"size mismatch for {name}: copying a value of shape {array.shape}, the "
                    f"parameter in the current model has shape {param.shape}."
                )
            values[name] = array
        # All checked first, so a failed load changes nothing.
        with no_grad():
            for name, array in values.items():
                own[name].copy_(array)
        return IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------------------- printing

    def extra_repr(self) -> str:
        """The text between the parentheses of this Module's repr; override it."""
        return ""

    def __repr__(self) -> str:
        children = [
            f"  ({name}): " + repr(module).replace("\n", "\n  ")
            for name, module in self._modules.items()
        ]
        extra_lines = self.extra_repr().split("\n") if self.extra_repr() else []
        if not children and len(extra_lines) <= 1:
            return f"{type(self).__name__}({''.join(extra_lines)})"
        lines = [f"  {line}" for line in extra_lines] + children
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)"

"""Module: the base class of layers and models, as in PyTorch.

A Module keeps its Parameters and its sub-Modules in two dictionaries, filled by plain
attribute assignment (`self.weight = Parameter(...)`, `self.fc = Linear(...)`), so that
`parameters()` can find every weight of a model, however deeply it is nested. A third
dictionary holds buffers: Variables that are part of the model's state (saved by
`state_dict`, moved by `.to()`) but are not trained, registered with `register_buffer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from minigrad import devices
from minigrad.core.checks import check_callable, check_flag
from minigrad.core.grad_mode import no_grad, traced_as_one_call
from minigrad.core.variable import Parameter, Variable
from minigrad.dtypes import as_dtype


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
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
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
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Variable):
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as buffer '{name}': expected a "
                    f"Variable or None."
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Remove `name` wherever it was, so it lives in exactly one place."""
        self.__dict__.pop(name, None)
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self._buffers.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        registries = (
            self.__dict__.get("_parameters", {}),
            self.__dict__.get("_modules", {}),
            self.__dict__.get("_buffers", {}),
        )
        for registry in registries:
            if name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters or name in self._modules or name in self._buffers:
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

    def register_buffer(self, name: str, tensor: Variable | None, persistent: bool = True) -> None:
        """Add a Variable that is state but not a Parameter (a running mean, a mask).

        Buffers are moved by `.to()` and, when persistent, saved by `state_dict()`.
        """
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Variable):
            raise TypeError(
                f"cannot register a {type(tensor).__name__} as buffer '{name}': expected a "
                f"Variable or None. Wrap it: minigrad.tensor(value)."
            )
        if name in self._parameters or name in self._modules or name in self.__dict__:
            raise KeyError(
                f"attribute '{name}' already exists on {type(self).__name__}; pick another "
                f"name for the buffer, or delete the attribute first."
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

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

    def named_modules(
        self, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """This Module and every Module inside it with its dotted name: each once, or, with
        remove_duplicate=False, a shared one under every name it is reached by."""
        remove_duplicate = check_flag(remove_duplicate, "remove_duplicate", type(self).__name__)
        seen: set[int] = set()
        # (name, module, ids of its ancestors): a module inside itself is not walked again
        stack: list[tuple[str, Module, frozenset]] = [(prefix, self, frozenset())]
        while stack:
            name, module, ancestors = stack.pop()
            if (remove_duplicate and id(module) in seen) or id(module) in ancestors:
                continue
            seen.add(id(module))
            yield name, module
            inside = ancestors | {id(module)}
            children = [
                (f"{name}.{child_name}" if name else child_name, child, inside)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))  # reversed, so children come out in order

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def get_submodule(self, target: str) -> Module:
        """The Module at a dotted path ("encoder.0"); "" is this Module itself."""
        if not isinstance(target, str):
            raise TypeError(
                f"get_submodule(target) takes a dotted name such as 'encoder.0' ('' for the "
                f"Module itself); got {type(target).__name__}."
            )
        module: Module = self
        walked = []
        for name in target.split(".") if target else ():
            child = module._modules.get(name)
            if child is None:
                where = ".".join(walked) or type(self).__name__
                raise AttributeError(
                    f"{where} has no submodule '{name}' (looking up {target!r}); its children "
                    f"are {list(module._modules)}."
                )
            module = child
            walked.append(name)
        return module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, module in self._modules.items():
            if module is not None:
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every Parameter with its dotted name (`fc1.weight`); a shared one only once, or
        under each of its names with remove_duplicate=False."""
        seen: set[int] = set()
        recurse = check_flag(recurse, "recurse", type(self).__name__)
        once = check_flag(remove_duplicate, "remove_duplicate", type(self).__name__)
        owners = self.named_modules(prefix, once) if recurse else [(prefix, self)]
        for owner_name, module in owners:
            for name, param in module._parameters.items():
                if param is None or (once and id(param) in seen):
                    continue
                seen.add(id(param))
                yield (f"{owner_name}.{name}" if owner_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Variable]]:
        """Every buffer with its dotted name (`norm.running_mean`); a shared one only once,
        or under each of its names with remove_duplicate=False."""
        seen: set[int] = set()
        recurse = check_flag(recurse, "recurse", type(self).__name__)
        once = check_flag(remove_duplicate, "remove_duplicate", type(self).__name__)
        owners = self.named_modules(prefix, once) if recurse else [(prefix, self)]
        for owner_name, module in owners:
            for name, buffer in module._buffers.items():
                if buffer is None or (once and id(buffer) in seen):
                    continue
                seen.add(id(buffer))
                yield (f"{owner_name}.{name}" if owner_name else name), buffer

    def buffers(self, recurse: bool = True) -> Iterator[Variable]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call fn on every submodule, then on this Module (e.g. to initialise); returns self."""
        check_callable(fn, "fn", f"{type(self).__name__}.apply", "a function of a Module")
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

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

    # minigrad.compile records a train() or eval() made in a step as one call, and replays it.
    @traced_as_one_call
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

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad on every Parameter (False freezes them); returns self."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_() expects True or False; got {requires_grad!r}.")
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move every Parameter (and its gradient) and buffer to a device and/or cast the
        floating ones to a dtype, in place: `to("cuda")`, `to(minigrad.float32)`,
        `to("cpu", minigrad.float64)`, `to(device=..., dtype=...)`; returns self.

        The Parameters stay the same objects, so an optimizer made before still updates them.
        """
        device, dtype = _device_and_dtype(args, kwargs)
        for variable in (*self.parameters(), *self.buffers()):
            variable.data = _converted(variable.data, device, dtype)
            if variable.grad is not None:
                variable.grad = Variable(_converted(variable.grad.data, device, dtype))
        return self

    def double(self) -> Module:
        """Cast floating Parameters and buffers to float64; returns self."""
        return self.to(dtype=np.float64)

    def float(self) -> Module:
        """Cast floating Parameters and buffers to float32; returns self."""
        return self.to(dtype=np.float32)

    def half(self) -> Module:
        """Cast floating Parameters and buffers to float16; returns self."""
        return self.to(dtype=np.float16)

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

    def _named_state(self) -> Iterator[tuple[str, Variable]]:
        """Parameters and persistent buffers, module by module, as PyTorch orders them. A
        value shared by two modules (tied weights: nanoGPT's wte.weight is lm_head.weight)
        comes under each of its names, as in PyTorch, so that the keys match its."""
        for owner_name, module in self.named_modules(remove_duplicate=False):
            members = [
                *module._parameters.items(),
                *(
                    (name, buffer)
                    for name, buffer in module._buffers.items()
                    if name not in module._non_persistent_buffers
                ),
            ]
            for name, value in members:
                if value is not None:
                    yield (f"{owner_name}.{name}" if owner_name else name), value

    def state_dict(self) -> dict[str, Variable]:
        """Name → a copy of each Parameter's and persistent buffer's value (copies, so later
        training leaves it be). Tied names share one copy, as PyTorch's share one tensor."""
        copies: dict[int, Variable] = {}
        state = {}
        for name, value in self._named_state():
            if id(value) not in copies:
                copies[id(value)] = Variable(value.data.copy())
            state[name] = copies[id(value)]
        return state

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy values into the Parameters in place (they stay the same objects)."""
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"load_state_dict expects a dict of name → value, as state_dict() returns; "
                f"got {type(state_dict).__name__}."
            )
        own = dict(self._named_state())
        loaded = {id(own[name]) for name in own if name in state_dict}
        # A tied value (one Parameter under two names) counts as given when one of its names
        # is: state dicts that minigrad saved before it listed both names have one of them.
        # PyTorch would call the other missing.
        missing = [name for name in own if name not in state_dict and id(own[name]) not in loaded]
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
            array = _numeric_value(name, state_dict[name])
            if array.shape != param.shape:
                raise RuntimeError(
                    f"size mismatch for {name}: copying a value of shape {array.shape}, the "
                    f"value in the current model has shape {param.shape}."
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


def _device_and_dtype(args: tuple, kwargs: dict) -> tuple[str | None, np.dtype | None]:
    """The device and dtype that Module.to(...) was given, each possibly None."""
    unknown = set(kwargs) - {"device", "dtype", "non_blocking"}
    if unknown or len(args) > 2:
        raise TypeError(
            f"Module.to() takes a device and/or a dtype (to('cuda'), to(minigrad.float32), "
            f"to(device=..., dtype=...)); got arguments {args} and keywords {sorted(kwargs)}."
        )
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for arg in args:
        if isinstance(arg, (str, devices.device)):
            device = arg
        else:
            dtype = arg
    return (
        None if device is None else devices.check_device(device),
        None if dtype is None else as_dtype(dtype),
    )


def _converted(data: Any, device: str | None, dtype: np.dtype | None) -> Any:
    """data cast to dtype (floating data only, as PyTorch does) and moved to device."""
    if dtype is not None and data.dtype.kind == "f" and data.dtype != dtype:
        if devices.is_on_cuda(data):
            data = devices.move(devices.move(data, "cpu").astype(dtype), "cuda")
        else:
            data = data.astype(dtype)
    return data if device is None else devices.move(data, device)


def _numeric_value(name: str, value: Any) -> np.ndarray:
    """A state dict entry as a numeric array, or a RuntimeError naming its key (as PyTorch's
    "While copying the parameter named ...")."""
    if isinstance(value, Variable) and not value.is_text:
        array = value.data
        if hasattr(array, "to_host"):
            array = array.to_host()
        return np.asarray(array)
    if isinstance(value, (np.ndarray, np.generic, int, float, list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # a ragged list: not one array
            array = np.asarray(None)
        if array.dtype.kind in "biuf":
            return array
    raise RuntimeError(
        f"Error(s) in loading state_dict: while copying the parameter named {name!r}, "
        f"expected a numeric Variable or array but received {_kind_of(value)}. Load a "
        f"state_dict that Module.state_dict() returned (or minigrad.load gave back)."
    )


def _kind_of(value: Any) -> str:
    if isinstance(value, Variable):
        return "a text Variable"
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:80]

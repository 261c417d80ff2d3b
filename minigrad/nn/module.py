"""Module: the base class of layers and models, as in PyTorch.

A Module keeps its Parameters and its sub-Modules in two dictionaries, filled by plain
attribute assignment (`self.weight = Parameter(...)`, `self.fc = Linear(...)`), so that
`parameters()` can find every weight of a model, however deeply it is nested. A third
dictionary holds buffers: Variables that are part of the model's state (saved by
`state_dict`, moved by `.to()`) but are not trained, registered with `register_buffer`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from minigrad import devices
from minigrad.core.checks import check_callable, check_flag
from minigrad.core.errors import missing_name
from minigrad.core.grad_mode import no_grad, traced_as_one_call
from minigrad.core.variable import Parameter, RemovableHandle, Variable
from minigrad.dtypes import as_dtype
from minigrad.nn import module_hooks
from minigrad.nn.module_hooks import GLOBAL_HOOKS, HookEntry, call_with_hooks


class IncompatibleKeys(NamedTuple):
    """What load_state_dict(strict=False) could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


class _NameTakenError(KeyError, ValueError):
    """A name a Parameter, submodule or buffer cannot have ("", "a.b", a method's name):
    PyTorch raises KeyError, minigrad raised ValueError before; this is both."""

    def __str__(self) -> str:
        return str(self.args[0])  # the message as written (KeyError would quote it)


class _TrainingModeError(TypeError, ValueError):
    """train() was given something other than True or False: PyTorch raises ValueError,
    minigrad raised TypeError before; this is both, so either `except` catches it."""


# PyTorch's Module methods minigrad does not have (yet): asking for one says so.
_MODULE_METHODS_MISSING = (
    "compile",
    "get_extra_state",
    "ipu",
    "mtia",
    "register_backward_hook",
    "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook",
    "register_state_dict_post_hook",
    "register_state_dict_pre_hook",
    "set_extra_state",
    "share_memory",
    "type",
    "xpu",
)


class Module:
    """Base class of layers: subclass it, assign Parameters and Modules, write `forward`."""

    training: bool
    # kind → the hooks registered on this Module (module_hooks.py); None (on the class)
    # until the first registration, and empty again once every hook is removed.
    _hooks: dict[str, list[HookEntry]] | None = None

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
            # Replaced in its place (not moved last), so state_dict keeps PyTorch's order.
            self._forget(name, keep=parameters)
            parameters[name] = value
        elif isinstance(value, Module):
            self._forget(name, keep=modules)  # model.fc = Linear(...) stays where fc was
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

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Remove `name` wherever it was (but from `keep`, where it is about to be replaced
        in its place), so it lives in exactly one place."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._modules, self._buffers):
            if registry is not keep:
                registry.pop(name, None)
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
        if name in _MODULE_METHODS_MISSING:
            raise missing_name("nn.Module", name, dir(Module))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        """The usual attributes plus the names of Parameters, submodules and buffers."""
        names = set(super().__dir__())
        names.update(self._parameters, self._modules, self._buffers)
        return sorted(name for name in names if not name[:1].isdigit())

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
        self._forget(name, keep=self._parameters)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child Module (or None) under `name`."""
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass.")
        self._forget(name, keep=self._modules)
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
            raise _NameTakenError(f'{kind} name can\'t be empty or contain ".": got {name!r}.')
        if hasattr(type(self), name):
            raise _NameTakenError(
                f"attribute '{name}' already exists on {type(self).__name__}; pick another "
                f"{kind} name."
            )

    # ----------------------------------------------------------------------- traversal

    def named_modules(
        self,
        memo: set[Module] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        """This Module and every Module inside it with its dotted name: each once, or, with
        remove_duplicate=False, a shared one under every name it is reached by.

        `memo`, a set of Modules, is skipped and then filled with those yielded (PyTorch
        passes it down to share one set between several walks)."""
        remove_duplicate = check_flag(remove_duplicate, "remove_duplicate", type(self).__name__)
        if memo is not None and not isinstance(memo, set):
            raise TypeError(
                f"named_modules(memo, prefix, remove_duplicate): memo is a set of Modules to "
                f"skip (or None); got {type(memo).__name__}. Pass the prefix by keyword: "
                f"named_modules(prefix={memo!r})."
            )
        if not isinstance(prefix, str):
            raise TypeError(f"named_modules: prefix must be a str; got {type(prefix).__name__}.")
        skipped = {id(module) for module in memo} if memo is not None else set()
        seen: set[int] = set()
        # (name, module, ids of its ancestors): a module inside itself is not walked again
        stack: list[tuple[str, Module, frozenset]] = [(prefix, self, frozenset())]
        while stack:
            name, module, ancestors = stack.pop()
            if id(module) in skipped or id(module) in ancestors:
                continue
            if remove_duplicate and id(module) in seen:
                continue
            seen.add(id(module))
            if memo is not None and remove_duplicate:
                memo.add(module)
            yield name, module
            inside = ancestors | {id(module)}
            children = [
                (f"{name}.{child_name}" if name else child_name, child, inside)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))  # reversed, so children come out in order

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This Module and every Module inside it (a shared one once, unless
        remove_duplicate=False)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
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

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at a dotted path ("encoder.0.fc"), replacing what is there. The
        Modules on the way must exist; with strict=True the last name must exist too."""
        if not isinstance(target, str) or not target:
            raise ValueError(
                f"set_submodule(target, module) needs a non-empty dotted name such as "
                f"'encoder.0'; got {target!r}."
            )
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module).__name__}.")
        strict = check_flag(strict, "strict", "set_submodule")
        *path, name = target.split(".")
        owner = self.get_submodule(".".join(path))
        if strict and name not in owner._modules:
            raise AttributeError(
                f"{'.'.join(path) or type(self).__name__} has no submodule {name!r}; with "
                f"strict=True set_submodule only replaces one that exists (its children are "
                f"{list(owner._modules)})."
            )
        if name in owner.__dict__ or name in owner._parameters or name in owner._buffers:
            raise AttributeError(
                f"{name!r} of {type(owner).__name__} is not an nn.Module: set_submodule "
                f"replaces submodules only."
            )
        owner.add_module(name, module)

    def _owner_and_name(self, target: str, kind: str) -> tuple[Module, str]:
        """The Module a dotted path ("encoder.0.weight") leads to, and the last name."""
        if not isinstance(target, str) or not target:
            raise TypeError(
                f"get_{kind}(target) takes a dotted name such as 'fc.weight'; got {target!r}."
            )
        *path, name = target.split(".")
        return self.get_submodule(".".join(path)), name

    def get_parameter(self, target: str) -> Parameter:
        """The Parameter at a dotted path ("encoder.0.weight")."""
        owner, name = self._owner_and_name(target, "parameter")
        if name not in owner._parameters:
            if hasattr(owner, name):
                raise AttributeError(f"`{name}` is not an nn.Parameter (looking up {target!r}).")
            raise AttributeError(
                f"{type(owner).__name__} has no parameter `{name}` (looking up {target!r}); "
                f"its parameters are {list(owner._parameters)}."
            )
        param = owner._parameters[name]
        if param is None:
            raise AttributeError(f"`{name}` is not an nn.Parameter: it is None ({target!r}).")
        return param

    def get_buffer(self, target: str) -> Variable:
        """The buffer at a dotted path ("norm.running_mean")."""
        owner, name = self._owner_and_name(target, "buffer")
        if name not in owner._buffers:
            if hasattr(owner, name):
                raise AttributeError(f"`{name}` is not a buffer (looking up {target!r}).")
            raise AttributeError(
                f"{type(owner).__name__} has no buffer `{name}` (looking up {target!r}); its "
                f"buffers are {list(owner._buffers)}."
            )
        return owner._buffers[name]

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
        owners: Any = [(prefix, self)]
        if recurse:
            owners = self.named_modules(prefix=prefix, remove_duplicate=once)
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
        owners: Any = [(prefix, self)]
        if recurse:
            owners = self.named_modules(prefix=prefix, remove_duplicate=once)
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
            raise _TrainingModeError(
                f"train() expects True or False (training mode is expected to be boolean); "
                f"got {mode!r}."
            )
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

    def bfloat16(self) -> Module:
        """PyTorch casts to bfloat16; NumPy, underneath minigrad, has no such dtype."""
        raise TypeError(
            f"{type(self).__name__}.bfloat16(): minigrad has no bfloat16 (NumPy, which holds "
            f"its numbers, has no such dtype). Use .half() for 16-bit floats (float16), or "
            f".float() for float32."
        )

    def cuda(self, device: Any = None) -> Module:
        """Move every Parameter and buffer to the GPU ("cuda", the one GPU minigrad uses);
        returns self."""
        if device is None:
            return self.to("cuda")
        if isinstance(device, int) and not isinstance(device, bool):
            return self.to(f"cuda:{device}")  # cuda(0), as PyTorch's device index
        return self.to(device)

    def cpu(self) -> Module:
        return self.to("cpu")

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give every Parameter and buffer new, uninitialised memory of its shape and dtype
        on `device` (then fill it, e.g. with load_state_dict or reset_parameters());
        returns self. With recurse=False, this Module's own only."""
        recurse = check_flag(recurse, "recurse", "to_empty")
        target = devices.check_device(device)
        members = [*self.parameters(recurse=recurse), *self.buffers(recurse=recurse)]
        for variable in members:
            empty = np.empty(variable.shape, dtype=variable.dtype)
            variable.data = devices.move(empty, target)
            variable.grad = None
        return self

    def _get_name(self) -> str:
        """The class name, as repr shows it."""
        return type(self).__name__

    # ----------------------------------------------------------------------- calling

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The usual call has no hook at all: straight to forward, one test on the way.
        if not self._hooks and not GLOBAL_HOOKS:
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, self.forward, args, kwargs)

    def _hook_table(self) -> dict[str, list[HookEntry]]:
        """This Module's hooks by kind, made at the first registration."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot register a hook before Module.__init__() has run: call "
                f"super().__init__() first in {type(self).__name__}.__init__."
            )
        if self._hooks is None:
            object.__setattr__(self, "_hooks", {})
        return self._hooks

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call hook(module, args) before each forward; a tuple it returns (or a single
        value, the one argument) replaces args. With with_kwargs=True it is called as
        hook(module, args, kwargs) and may return a new (args, kwargs). prepend=True runs it
        before the hooks already registered. `handle.remove()` takes it away."""
        where = f"{type(self).__name__}.register_forward_pre_hook"
        entry = HookEntry(hook, check_flag(with_kwargs, "with_kwargs", where))
        table = self._hook_table()
        return module_hooks.add_hook(table, module_hooks.FORWARD_PRE, entry, prepend, where)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call hook(module, args, output) after each forward; a value it returns (not None)
        replaces the output. With with_kwargs=True: hook(module, args, kwargs, output).
        always_call=True runs it even when forward raised (output None then). prepend=True
        runs it before the hooks already registered. `handle.remove()` takes it away."""
        where = f"{type(self).__name__}.register_forward_hook"
        entry = HookEntry(
            hook,
            check_flag(with_kwargs, "with_kwargs", where),
            check_flag(always_call, "always_call", where),
        )
        table = self._hook_table()
        return module_hooks.add_hook(table, module_hooks.FORWARD, entry, prepend, where)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call hook(module, grad_output) when the gradients of this Module's outputs are
        computed (grad_output: one entry per output, None where it got no gradient); a
        tuple it returns replaces grad_output."""
        where = f"{type(self).__name__}.register_full_backward_pre_hook"
        table = self._hook_table()
        return module_hooks.add_hook(
            table, module_hooks.BACKWARD_PRE, HookEntry(hook), prepend, where
        )

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call hook(module, grad_input, grad_output) when the gradients of this Module's
        positional inputs are computed: grad_input has one entry per positional argument
        (None for one that is no Variable, zeros for one that got no gradient), grad_output
        one per output (None for one that got no gradient). A tuple it returns replaces
        grad_input. With no input requiring grad it runs when grad_output is known, with
        grad_input all None, and must return None."""
        where = f"{type(self).__name__}.register_full_backward_hook"
        table = self._hook_table()
        return module_hooks.add_hook(table, module_hooks.BACKWARD, HookEntry(hook), prepend, where)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function: '
            f"define forward(self, ...) to say what the module computes."
        )

    # ----------------------------------------------------------------------- state

    def _state_entries(self) -> Iterator[tuple[str, Variable, Module, str]]:
        """(dotted name, value, the Module holding it, its name there) for each Parameter and
        persistent buffer, module by module, as PyTorch orders them. A value shared by two
        modules (tied weights: nanoGPT's wte.weight is lm_head.weight) comes under each of
        its names, as in PyTorch, so that the keys match its."""
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
                    yield (f"{owner_name}.{name}" if owner_name else name), value, module, name

    def _named_state(self) -> Iterator[tuple[str, Variable]]:
        for name, value, _, _ in self._state_entries():
            yield name, value

    def state_dict(
        self,
        *args: Any,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Variable]:
        """Name → a copy of each Parameter's and persistent buffer's value (copies, so later
        training leaves it be); with keep_vars=True the Parameters and buffers themselves.
        Tied names share one copy, as PyTorch's share one tensor. `prefix` is put before
        every name ("model." gives "model.fc.weight"); `destination`, a dict, is filled and
        returned instead of a new one."""
        if args:
            # PyTorch's old positional form, state_dict(destination, prefix, keep_vars).
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead: "
                "state_dict(destination=..., prefix=..., keep_vars=...).",
                FutureWarning,
                stacklevel=2,
            )
            if len(args) > 3:
                raise TypeError(
                    f"state_dict takes at most destination, prefix and keep_vars; got "
                    f"{len(args)} positional arguments."
                )
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if not isinstance(prefix, str):
            raise TypeError(f"state_dict: prefix must be a str; got {type(prefix).__name__}.")
        keep_vars = check_flag(keep_vars, "keep_vars", "state_dict")
        if destination is None:
            destination = {}
        elif not isinstance(destination, dict):
            raise TypeError(
                f"state_dict: destination must be a dict to fill (or None); got "
                f"{type(destination).__name__}."
            )
        copies: dict[int, Variable] = {}
        for name, value in self._named_state():
            if keep_vars:
                destination[prefix + name] = value
                continue
            if id(value) not in copies:
                copies[id(value)] = Variable(value.data.copy())
            destination[prefix + name] = copies[id(value)]
        return destination

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> IncompatibleKeys:
        """Copy values into the Parameters and buffers in place (they stay the same objects,
        so an optimizer made before still updates them). With assign=True the loaded values
        become the Parameters and buffers instead (Parameters keep their requires_grad).

        Returns the keys it could not match (missing_keys, unexpected_keys); with
        strict=True (the default) any such key is a RuntimeError and nothing is loaded."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"load_state_dict expects a dict of name → value, as state_dict() returns; "
                f"got {type(state_dict).__name__}."
            )
        strict = check_flag(strict, "strict", "load_state_dict")
        assign = check_flag(assign, "assign", "load_state_dict")
        entries = list(self._state_entries())
        own = {name: value for name, value, _, _ in entries}
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
        if assign:
            for name, value, owner, local_name in entries:
                if name in values:
                    _assign(owner, local_name, value, state_dict[name], values[name])
            return IncompatibleKeys(missing, unexpected)
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


def _assign(owner: Module, name: str, current: Variable, given: Any, array: np.ndarray) -> None:
    """load_state_dict(assign=True): the loaded value replaces owner.<name>; a Parameter
    stays a Parameter, with the requires_grad it had."""
    if isinstance(given, Variable):
        value = given.detach() if isinstance(current, Parameter) else given
    else:
        value = Variable(array)
    if isinstance(current, Parameter):
        if not isinstance(given, Parameter):
            value = Parameter(value.data, requires_grad=current.requires_grad)
        else:
            value = given
            value.requires_grad = current.requires_grad
        owner._parameters[name] = value
    else:
        owner._buffers[name] = value


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

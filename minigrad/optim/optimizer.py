"""Optimizer: what every optimizer shares: parameter groups, per-parameter state, zero_grad
and state_dict.

Parameters live in `param_groups`, a list of dicts, each with its own "params" and its
own settings ("lr", ...), filled from the optimizer's defaults where a group leaves one
out. Learning-rate schedulers change `param_groups[i]["lr"]`, and `step()` reads it there.

Each optimizer writes one method, `update`: the change to one parameter's array, in place,
from its gradient, its state and its group's settings. `step()` calls it for every
parameter that has a gradient; minigrad.compile's replay calls it on the same arrays
without looking for them again (minigrad/compiler/replay.py).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from minigrad.core.checks import check_callable, check_iterable
from minigrad.core.grad_mode import enable_grad, no_grad, traced_as_one_call
from minigrad.core.variable import RemovableHandle, Variable


class Optimizer:
    """Holds the parameters to update, in groups; subclasses write `update()` (or `step()`).

    `params` is an iterable of Variables, or of dicts {"params": [...], "lr": ..., ...}
    (one per group, settings they leave out come from `defaults`). Parameters may come as
    (name, Variable) pairs, as model.named_parameters() gives them: their group then keeps
    the names in "param_names" (and state_dict() with it).
    """

    # Whether each entry of `state` belongs to one parameter, with arrays of its shape
    # (load_state_dict checks them); LBFGS keeps one flat state for all.
    state_per_parameter = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # minigrad.compile records a step() as one call; a subclass's own step() is replayed
        # by calling it again.
        if "step" in cls.__dict__:
            cls.step = traced_as_one_call(cls.step)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        if isinstance(params, Variable):
            raise TypeError(
                "params should be an iterable of Variables, such as model.parameters(); got "
                "a single Variable. Wrap it in a list: [w]."
            )
        params = check_iterable(
            params, "params", type(self).__name__,
            "Variables (or of parameter-group dicts), such as model.parameters()",
        )  # fmt: skip
        if not params:
            raise ValueError(
                "optimizer got an empty parameter list; pass model.parameters(). (It is a "
                "generator, used up by the first optimizer it is given: call "
                "model.parameters() again for a second one.)"
            )
        self.defaults = defaults
        # Per-parameter state, keyed by the parameter's position across all groups.
        self.state: dict[int, dict[str, Any]] = ParameterState(self)
        self._load_state_dict_pre_hooks: list[Callable] = []
        self._load_state_dict_post_hooks: list[Callable] = []
        self.param_groups: list[dict[str, Any]] = []
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    @property
    def params(self) -> list[Variable]:
        """Every parameter, group after group (the order that numbers `state`)."""
        return [param for group in self.param_groups for param in group["params"]]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group {"params": [...], setting: value, ...}; missing settings use defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(
                f"a parameter group must be a dict {{'params': [...], 'lr': ...}}; got "
                f"{type(param_group).__name__}. Pass either Variables or dicts, not a mix."
            )
        if "params" not in param_group:
            raise ValueError(
                f"a parameter group needs a 'params' entry; got keys {sorted(param_group)}."
            )
        group = dict(param_group)
        members = group["params"]
        if isinstance(members, set):
            raise TypeError(
                "optimizer parameters need to be in an ordered collection (a list), but got "
                "a set, whose order changes between runs; pass a list instead."
            )
        group["params"] = [members] if isinstance(members, Variable) else list(members)
        _split_names(group, self.param_groups)
        known = {id(param) for param in self.params}
        first = len(self.params)
        for offset, param in enumerate(group["params"]):
            if not isinstance(param, Variable):
                raise TypeError(
                    f"{type(self).__name__} can only optimize Variables, but parameter "
                    f"{first + offset} is a {type(param).__name__}; pass model.parameters() "
                    f"or a list of Variables that require grad."
                )
            if param.is_text:
                raise TypeError(
                    f"{type(self).__name__} updates numbers; parameter {first + offset} is a "
                    f"text Variable. Optimize text with a textual optimizer: "
                    f"minigrad.text.TGD([prompt])."
                )
            if not param.is_leaf or not param.requires_grad:
                raise ValueError(
                    f"optimizer parameter {first + offset} must be a leaf Variable that "
                    f"requires grad; got {_describe(param)}."
                )
            if id(param) in known:
                raise ValueError(
                    f"optimizer parameter {first + offset} appears in more than one parameter "
                    f"group (or twice in one); give each parameter once."
                )
            known.add(id(param))
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        if "lr" in group:
            check_hyperparameter("lr", group["lr"])
        self.param_groups.append(group)

    def _position(self, param: Variable) -> int:
        """Where `param` is in `params` (the key of its state), found by identity."""
        for position, member in enumerate(self.params):
            if member is param:
                return position
        raise KeyError(
            f"this {type(self).__name__} has no parameter that is the given {_what(param)}: "
            f"its state is keyed by its own parameters (or by their positions, 0 to "
            f"{len(self.params) - 1})."
        )

    def _with_gradients(self) -> Iterator[tuple[int, dict[str, Any], Variable]]:
        """(position, group, parameter) for each parameter that has a gradient."""
        position = 0
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    yield position, group, param
                position += 1

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients before the next backward (they would otherwise add up)."""
        for param in self.params:
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                # zeros_like, not grad * 0: that would keep a nan or inf as nan.
                param.grad = Variable(np.zeros_like(param.grad.data))

    @traced_as_one_call
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient (the others are left alone).

        `closure`, as in PyTorch: a function that zeroes the gradients, computes the loss,
        calls backward() and returns the loss; step() calls it first (with grad mode on)
        and returns what it returned."""
        loss = None
        if closure is not None:
            check_callable(
                closure, "closure", f"{type(self).__name__}.step",
                "a function that computes the loss and calls backward() (or None)",
            )  # fmt: skip
            with enable_grad():
                loss = closure()
        with no_grad():
            for index, group, param in self._with_gradients():
                self.update(param._data, param.grad._data, self.state.setdefault(index, {}), group)
                # As an in-place operation does: values saved for a backward see the change.
                param._shared_version_counter().value += 1
        return loss

    def update(
        self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        """Change `param` in place from `grad`, keeping what it needs in `state`."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement update(param, grad, state, group) (the "
            f"change to one parameter's array, in place), or step()."
        )

    def state_dict(self) -> dict[str, Any]:
        """{"state": {position: {...}}, "param_groups": [{settings, "params": [positions]}]},
        as PyTorch lays it out; the arrays are copies."""
        groups, position = [], 0
        for group in self.param_groups:
            settings = {key: value for key, value in group.items() if key != "params"}
            count = len(group["params"])
            groups.append({**settings, "params": list(range(position, position + count))})
            position += count
        # Copies, as Variables: PyTorch's state_dict holds tensors (state.clone(), .to()).
        state = {
            position: {key: Variable._make(value) if isinstance(value, np.ndarray) else value
                       for key, value in entry.items()}
            for position, entry in copy.deepcopy(dict(self.state)).items()
        }
        return {"state": state, "param_groups": groups}

    def register_load_state_dict_pre_hook(
        self,
        hook: Callable[[Optimizer, dict[str, Any]], dict[str, Any] | None],
        prepend: bool = False,
    ) -> RemovableHandle:
        """`hook(optimizer, state_dict)` runs first in load_state_dict; what it returns
        (unless None) is loaded instead. `.remove()` on the handle takes it away."""
        return _register(
            self._load_state_dict_pre_hooks, hook, prepend, "register_load_state_dict_pre_hook"
        )

    def register_load_state_dict_post_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer)` runs at the end of load_state_dict."""
        return _register(
            self._load_state_dict_post_hooks, hook, prepend, "register_load_state_dict_post_hook"
        )

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state and settings that state_dict() gave (of an optimizer over
        parameters of the same shapes, grouped the same way). Its "param_names", if any,
        replace the groups' names."""
        for hook in self._load_state_dict_pre_hooks:
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(
                "load_state_dict expects what Optimizer.state_dict() returns: a dict with "
                f"'state' and 'param_groups'; got {_describe_dict(state_dict)}."
            )
        saved_groups = state_dict["param_groups"]
        sizes = [len(group["params"]) for group in self.param_groups]
        saved_sizes = [len(group["params"]) for group in saved_groups]
        if sizes != saved_sizes:
            raise ValueError(
                f"loaded state dict has parameter groups of sizes {saved_sizes}, but this "
                f"optimizer has groups of sizes {sizes}; they must match."
            )
        params = self.params
        state = copy.deepcopy(state_dict["state"])
        for entry in state.values():
            for key, value in entry.items():
                if isinstance(value, Variable) and not value.is_text:
                    entry[key] = value.detach().numpy()  # the steps work on arrays
        for position, entry in state.items():
            if not 0 <= int(position) < len(params):
                raise ValueError(
                    f"loaded state has an entry for parameter {position}, but this optimizer "
                    f"has {len(params)} parameters."
                )
            shape = params[int(position)].shape
            if not self.state_per_parameter:
                continue
            for key, value in entry.items():
                if isinstance(value, np.ndarray) and value.shape not in ((), shape):
                    raise ValueError(
                        f"loaded state {key!r} of parameter {position} has shape {value.shape}, "
                        f"but the parameter has shape {shape}."
                    )
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({key: value for key, value in saved.items() if key != "params"})
        self.state = ParameterState(self)
        self.state.update({int(position): entry for position, entry in state.items()})
        for hook in self._load_state_dict_post_hooks:
            hook(self)

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={value}" for key, value in self.defaults.items())
        groups = f", {len(self.param_groups)} groups" if len(self.param_groups) > 1 else ""
        return f"{type(self).__name__}({len(self.params)} parameters{groups}, {settings})"


class ParameterState(dict):
    """An optimizer's state: {position: {name: value}}. `state[param]`, PyTorch's key,
    finds the same entry (an empty one, kept, for a parameter without state yet)."""

    def __init__(self, optimizer: Optimizer) -> None:
        super().__init__()
        self._optimizer = optimizer

    def __missing__(self, key: Any) -> dict[str, Any]:
        # Only lookups that miss come here: the steps' lookups by position cost nothing.
        if not isinstance(key, Variable):
            raise KeyError(key)
        return self.setdefault(self._optimizer._position(key), {})

    def __contains__(self, key: Any) -> bool:
        # `param in optimizer.state`, as PyTorch's keys are the parameters.
        if isinstance(key, Variable):
            members = self._optimizer.params
            found = [position for position, member in enumerate(members) if member is key]
            return bool(found) and super().__contains__(found[0])
        return super().__contains__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


def _split_names(group: dict[str, Any], groups: list[dict[str, Any]]) -> None:
    """(name, parameter) pairs in group["params"]: the parameters stay there, the names go
    to group["param_names"]; all named or none, as in the groups already added."""
    members = group["params"]
    named = [isinstance(member, tuple) for member in members]
    if not any(named):
        names = None
    elif not all(named):
        raise ValueError(
            "all optimizer params should be with/without names. Some param names are "
            "missing: pass model.named_parameters() (pairs) or model.parameters(), not a mix."
        )
    else:
        for index, member in enumerate(members):
            if len(member) != 2 or not isinstance(member[0], str):
                raise TypeError(
                    f"a named parameter must be a pair (name, Variable), as "
                    f"model.named_parameters() gives; parameter {index} is {member!r:.80}."
                )
        names = [member[0] for member in members]
        group["params"] = [member[1] for member in members]
        group["param_names"] = names
    for other in groups:
        if ("param_names" in other) != (names is not None):
            kind = "with names" if names is not None else "without names"
            raise ValueError(
                f"all optimizer param groups should be with/without names; cannot add a "
                f"param group {kind} to an optimizer whose groups are "
                f"{'without' if names is not None else 'with'} them."
            )


def _register(hooks: list[Callable], hook: Any, prepend: bool, owner: str) -> RemovableHandle:
    check_callable(hook, "hook", owner)
    if prepend:
        hooks.insert(0, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _describe(value: Any) -> str:
    if not isinstance(value, Variable):
        return f"a {type(value).__name__}"
    if not value.requires_grad:
        return "a Variable with requires_grad=False"
    return "a non-leaf Variable (the result of an operation)"


def _what(value: Any) -> str:
    if isinstance(value, Variable):
        return f"Variable of shape {tuple(value.shape)}"
    return type(value).__name__


def _describe_dict(value: Any) -> str:
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))}"
    return f"a {type(value).__name__}"


def check_hyperparameter(name: str, value: Any, low: float = 0.0) -> float:
    """A float >= low: a TypeError naming it when it is no number (as PyTorch's), a
    ValueError when it is too small."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number >= {low}; got {type(value).__name__} {value!r}.")
    if not value >= low:
        raise ValueError(f"{name} must be a number >= {low}; got {value!r}.")
    return float(value)


def check_betas(betas: Any) -> tuple[float, float]:
    """A pair (beta1, beta2), each in [0, 1), or a ValueError saying which is wrong."""
    if not isinstance(betas, (tuple, list)):
        raise TypeError(
            f"betas must be a pair (beta1, beta2), e.g. (0.9, 0.999); got "
            f"{type(betas).__name__} {betas!r}."
        )
    if len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2); got {betas!r}.")
    for name, beta in zip(("betas[0]", "betas[1]"), betas):
        if check_hyperparameter(name, beta) >= 1:
            raise ValueError(f"{name} must be in [0, 1); got {beta!r}.")
    return (float(betas[0]), float(betas[1]))

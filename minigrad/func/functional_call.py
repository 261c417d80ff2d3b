"""A Module as a function of its state: functional_call and stack_module_state.

`functional_call(model, {"weight": w}, (x,))` runs model(x) with the Variable w in place
of model.weight for that one call, then puts the Parameter back (also when the call
raises). Gradients flow to w, not to the Parameter: the model becomes a function
f(state, x) that grad, vjp and vmap can differentiate or map over.

`stack_module_state(models)` turns N models of one class into one state whose every entry
has a leading dimension N: vmap(functional_call) over it runs the whole ensemble.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.ops.shape import stack

_ABSENT = object()  # an attribute the module did not have before the call


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """module(*args, **kwargs) with the named Parameters, buffers (or plain attributes)
    replaced by the given Variables for this call only.

    parameter_and_buffer_dicts: one dict {dotted name: Variable}, or a tuple/list of them
    (a name may appear in only one). args: a tuple of positional arguments, or a single
    argument. tie_weights: a Variable given for one name of a shared (tied) Parameter
    replaces it under all its names. strict: every Parameter and buffer must be given,
    and nothing else."""
    from minigrad.nn.module import Module  # nn loads on first use (minigrad/__init__.py)

    if not isinstance(module, Module):
        raise TypeError(
            f"functional_call(module, ...): module must be a minigrad.nn.Module; got "
            f"{type(module).__name__}. Wrap a plain function's state in its arguments instead."
        )
    values = _merged(parameter_and_buffer_dicts)
    for name, value in values.items():
        if not isinstance(value, Variable):
            raise TypeError(
                f"{value!r} is not an instance of torch.Tensor: functional_call was given a "
                f"{type(value).__name__} for {name!r}; give Variables (minigrad.tensor(...))."
            )
    if tie_weights:
        values = _with_tied_names(module, values)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **({} if kwargs is None else kwargs))


def _merged(parameter_and_buffer_dicts: Any) -> dict:
    """One dict from a dict or a tuple/list of dicts; a ValueError if a name repeats."""
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if not isinstance(parameter_and_buffer_dicts, (tuple, list)):
        raise ValueError(
            f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}: pass {{name: Variable}}, e.g. "
            f"dict(model.named_parameters())."
        )
    if not all(isinstance(part, dict) for part in parameter_and_buffer_dicts):
        raise ValueError(
            "Expected all elements of parameter_and_buffer_dicts to be dictionaries: pass "
            "(params, buffers), each {name: Variable}."
        )
    merged: dict = {}
    repeated = []
    for part in parameter_and_buffer_dicts:
        for name, value in part.items():
            if name in merged:
                repeated.append(name)
            merged[name] = value
    if repeated:
        raise ValueError(
            f"{sorted(set(repeated))} appeared in multiple dictionaries; behavior of "
            f"functional call is ambiguous. Give each name in one dictionary only."
        )
    return merged


def _state_names(module: Any) -> list[tuple[str, Variable]]:
    """Every (name, Variable) of the module's Parameters and buffers, a shared one under
    each of its names."""
    return [
        *module.named_parameters(remove_duplicate=False),
        *module.named_buffers(remove_duplicate=False),
    ]


def _with_tied_names(module: Any, values: dict) -> dict:
    """values, plus every other name of a tied (shared) Parameter or buffer given once."""
    names_of: dict[int, list[str]] = {}
    for name, variable in _state_names(module):
        names_of.setdefault(id(variable), []).append(name)
    values = dict(values)
    for names in names_of.values():
        given = [name for name in names if name in values]
        if len(names) < 2 or not given:
            continue
        if len({id(values[name]) for name in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {given}, which are tied. "
                f"Consider using tie_weights=False (or give one Variable for all of them)."
            )
        for name in names:
            values[name] = values[given[0]]
    return values


def _check_strict(module: Any, values: dict) -> None:
    """strict=True: a RuntimeError listing the names given but unknown, and those missing."""
    known = [name for name, _ in _state_names(module)]
    unexpected = sorted(name for name in values if name not in known)
    missing = sorted(name for name in set(known) if name not in values)
    if not unexpected and not missing:
        return
    lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
    if unexpected:
        lines.append("\tUnexpected key(s): " + ", ".join(repr(n) for n in unexpected) + ".")
    if missing:
        lines.append("\tMissing key(s): " + ", ".join(repr(n) for n in missing) + ".")
    lines.append("Give every Parameter and buffer by its dotted name, or pass strict=False.")
    raise RuntimeError("\n".join(lines))


def _owner(module: Any, name: str) -> tuple[Any, str]:
    """(the submodule that holds the dotted name, the last part of the name)."""
    *path, attribute = name.split(".")
    owner = module
    for part in path:
        child = owner._modules.get(part)
        if child is None:
            raise AttributeError(
                f"{type(owner).__name__} has no attribute `{part}` (looking up {name!r} for "
                f"functional_call); its submodules are {list(owner._modules)}."
            )
        owner = child
    return owner, attribute


@contextmanager
def _swapped(module: Any, values: dict) -> Iterator[None]:
    """The module with values in place of its own, for the duration of the block."""
    saved = []
    try:
        for name, value in values.items():
            owner, attribute = _owner(module, name)
            saved.append((owner, attribute, _take(owner, attribute)))
            _put(owner, attribute, value)
        yield
    finally:
        for owner, attribute, (where, old) in reversed(saved):
            if where == "attribute" and old is _ABSENT:
                owner.__dict__.pop(attribute, None)
            else:
                _put(owner, attribute, old, where)


def _take(owner: Any, attribute: str) -> tuple[str, Any]:
    """(where the attribute lives: "parameters", "buffers" or "attribute"; its value)."""
    if attribute in owner._parameters:
        return "parameters", owner._parameters[attribute]
    if attribute in owner._buffers:
        return "buffers", owner._buffers[attribute]
    return "attribute", owner.__dict__.get(attribute, _ABSENT)


def _put(owner: Any, attribute: str, value: Any, where: str | None = None) -> None:
    # Written into the registries directly: Module.__setattr__ would refuse a plain
    # Variable in a Parameter's place, which is the point of the call.
    where = where or _take(owner, attribute)[0]
    if where == "parameters":
        owner._parameters[attribute] = value
    elif where == "buffers":
        owner._buffers[attribute] = value
    else:
        object.__setattr__(owner, attribute, value)


def stack_module_state(models: Any) -> tuple[dict[str, Variable], dict[str, Variable]]:
    """(params, buffers) of N models of one class, each entry stacked: shape (N, *shape).

    The stacked Parameters are new leaves (requires_grad as the models' own); vmap over
    functional_call(base_model, (params, buffers), x) then runs all N models."""
    from minigrad.nn.module import Module

    try:
        models = list(models)
    except TypeError:
        raise TypeError(
            f"stack_module_state(models) takes a list of Modules; got {type(models).__name__}."
        ) from None
    if not models:
        raise RuntimeError(
            "stack_module_state: Expected at least one model, got 0. Pass a list of models "
            "of one class."
        )
    if not all(isinstance(model, Module) for model in models):
        kinds = sorted({type(model).__name__ for model in models})
        raise TypeError(f"stack_module_state(models) takes Modules; got {kinds}.")
    if len({model.training for model in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode. "
            "Call .train() or .eval() on all of them first."
        )
    if len({type(model) for model in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to be of the same class; got "
            f"{sorted({type(model).__name__ for model in models})}."
        )
    params = _stacked_states([dict(model.named_parameters()) for model in models])
    buffers = _stacked_states([dict(model.named_buffers()) for model in models])
    return params, buffers


def _stacked_states(states: list[dict]) -> dict[str, Variable]:
    stacked = {}
    for name, first in states[0].items():
        entries = []
        for index, state in enumerate(states):
            entry = state.get(name)
            if entry is None:
                raise RuntimeError(
                    f"stack_module_state: model {index} has no {name!r}, which model 0 has; "
                    f"the models must have the same Parameters and buffers."
                )
            if tuple(entry.shape) != tuple(first.shape):
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {list(first.shape)} "
                    f"at entry 0 and {list(entry.shape)} at entry {index} (for {name!r}): "
                    f"the models must have the same sizes."
                )
            entries.append(entry)
        stacked[name] = _stacked_leaf(entries, name)
    return stacked


def _stacked_leaf(entries: list[Variable], name: str) -> Variable:
    """One new leaf of the entries stacked, requiring grad as they all do."""
    flags = {entry.requires_grad for entry in entries}
    if len(flags) > 1:
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad; set it on all "
            f"the models alike (requires_grad_())."
        )
    with no_grad():
        result = stack([entry.detach() for entry in entries])
    return result.requires_grad_() if flags == {True} else result


__all__ = ["functional_call", "stack_module_state"]

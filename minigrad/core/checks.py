"""Checks on what the engine is given (gradients from a backward or a hook, seeds,
inputs), and on the arguments the public API shares (a flag, a function, an iterable, a
state dict).

None of this runs on the usual path (a backward that returned a Variable of the right
shape); it turns an unusual answer into a Variable of the right shape, or into an error
that says what was expected, what was received, and what to write instead. Variable's own
attributes are checked in variable_checks.py (which variable.py imports, so it cannot
import Variable); the op table's arguments in minigrad/ops/tooling/arguments.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from minigrad.core.errors import (
    GradientCountError,
    GradientForNonVariableError,
    GradientShapeError,
    NoGradFnError,
)
from minigrad.core.variable import NUMBERS, Variable, describe, kind_of


def summed_to(data: Any, shape: tuple) -> Any:
    """`data` with its broadcast dimensions summed away, back to `shape` (NumPy's work of
    sum_to_size: the gradient of an input that broadcasting made bigger)."""
    leading = data.ndim - len(shape)
    summed = data.sum(axis=tuple(range(leading))) if leading else data
    ones = tuple(axis for axis, size in enumerate(shape) if size == 1 and summed.shape[axis] != 1)
    return summed.sum(axis=ones, keepdims=True) if ones else summed


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether an array of `shape` broadcasts to `target` (NumPy's rules, right-aligned)."""
    if len(shape) > len(target):
        return False
    return all(size in (1, wanted) for size, wanted in zip(shape[::-1], target[::-1]))


def as_gradient(value: Any, source: str) -> Variable:
    """A gradient given as a Variable, a NumPy array, a number or a str, as a Variable."""
    if isinstance(value, Variable):
        return value
    if isinstance(value, (np.generic, int, float)) and not isinstance(value, bool):
        return Variable._make(np.asarray(value))
    if kind_of(value) is not None:  # (x.data, a DataArray, as the plain array it views)
        return Variable._make(np.asarray(value) if isinstance(value, np.ndarray) else value)
    raise TypeError(
        f"{source} gave a gradient of type {type(value).__name__}; expected a Variable, "
        f"a NumPy array, a number or a str (or None)."
    )


def gradient_count(node_name: str, grads: tuple, expected: int) -> tuple:
    """Extra trailing Nones are dropped (PyTorch allows them); any other count is an error."""
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        return grads[:expected]
    raise GradientCountError(node_name, expected, len(grads))


def gradient(node: Any, index: int, grad: Any, shape: Any) -> Variable | None:
    """The gradient a backward returned for input `index`, checked against the input's shape
    (or kind). A per-sample gradient (input broadcast to a batch) is summed back."""
    if shape is None:
        raise GradientForNonVariableError(node.name(), index)
    if not node.needs_input_grad[index]:
        return None
    if grad is None and not isinstance(shape, str):  # (text feedback may skip an input)
        warnings.warn(  # PyTorch is silent, and input `index` would quietly get nothing
            f"{node._function.__name__}.backward returned None for input {index}, which "
            f"requires grad: it gets no gradient (return zeros if meant).", stacklevel=2)
    if grad is None:
        return None
    grad = as_gradient(grad, f"function {node.name()} (input {index})")
    kind = kind_of(grad._data)
    if isinstance(shape, str) or not kind.has_shape:
        got = kind.name
        expected = shape if isinstance(shape, str) else NUMBERS.name
        if got != expected:
            raise TypeError(
                f"function {node.name()} returned a {got} gradient for input {index}, "
                f"which is {expected}; gradients must be of the same kind as their input."
            )
        return grad
    if grad._data.shape != shape:
        if not broadcasts_to(shape, grad._data.shape):
            raise GradientShapeError(node.name(), index, shape, grad._data.shape)
        grad = grad.sum_to_size(shape)
    return grad


def array_gradient(node: Any, index: int, grad: Any, shape: tuple) -> np.ndarray | None:
    """checks.gradient for a backward run on arrays: an array of the input's shape, or None."""
    if grad is None or not node.needs_input_grad[index]:
        return None
    if isinstance(grad, Variable):  # a formula step that went through Function.apply
        grad = grad._data
    grad = np.asarray(grad)  # NumPy's 0-d results are scalars
    if grad.shape != shape:
        if not broadcasts_to(shape, grad.shape):
            return gradient(node, index, Variable._make(grad), shape)  # raises, with its words
        grad = np.asarray(summed_to(grad, shape))
    return grad


def hook_result(hook: Callable, grad: Variable, replaced: Any) -> Variable:
    """A hook may replace a gradient, but not change its kind or its shape."""
    name = getattr(hook, "__name__", type(hook).__name__)
    replaced = as_gradient(replaced, f"hook {name!r}")
    got, expected = describe(replaced._data), describe(grad._data)
    if got != expected:
        raise TypeError(f"hook {name!r} returned a {got} gradient for a {expected} Variable.")
    if replaced.shape != grad.shape:
        raise RuntimeError(
            f"hook {name!r} has changed the size of value: it returned shape {replaced.shape}, "
            f"expected {grad.shape}. A hook must return a gradient of the same shape, or None."
        )
    return replaced


def variables(values: Any, label: str) -> list[Variable]:
    """`values` (one Variable or a list/tuple of them) as a list."""
    if isinstance(values, Variable):
        return [values]
    if not isinstance(values, (list, tuple)):
        raise TypeError(
            f"{label} must be a Variable or a list/tuple of Variables; got {type(values).__name__}."
        )
    for index, value in enumerate(values):
        if not isinstance(value, Variable):
            raise TypeError(f"{label}[{index}] must be a Variable; got {type(value).__name__}.")
    return list(values)


def modes(caller: str, retain_graph: Any, create_graph: Any, allow_unused: Any = False) -> None:
    """retain_graph is True, False or None (then it follows create_graph); create_graph and
    allow_unused are True or False. Else a TypeError, as PyTorch's."""
    if retain_graph is not None:
        check_flag(retain_graph, "retain_graph", caller)
    check_flag(create_graph, "create_graph", caller)
    check_flag(allow_unused, "allow_unused", caller)


def seed_gradients(roots: list[Variable], given: Any, label: str) -> list[Variable]:
    """The gradient each output starts with: given, or its kind's seed (1 for a number)."""
    if given is None or not isinstance(given, (list, tuple)):
        given = [given] * len(roots) if given is None else [given]
    if len(given) != len(roots):
        raise RuntimeError(
            f"{label} has {len(given)} element(s) but there are {len(roots)} output(s); "
            f"give one gradient (or None) per output."
        )
    given = [None if seed is None else as_gradient(seed, label) for seed in given]
    # The kinds first (a str gradient for a numeric output), as PyTorch checks them.
    for index, (root, seed) in enumerate(zip(roots, given)):
        if seed is None:
            continue
        got, expected = describe(seed._data), describe(root._data)
        if got != expected:
            raise TypeError(f"{label}[{index}] is {got} but output {index} is {expected}.")
    seeds = []
    for index, (root, seed) in enumerate(zip(roots, given)):
        if not root.requires_grad:
            raise NoGradFnError(index)
        if seed is None:
            seeds.append(Variable._make(kind_of(root._data).seed(root, index)))
            continue
        if kind_of(root._data).has_shape and seed.shape != root.shape:
            raise RuntimeError(
                f"Mismatch in shape: {label}[{index}] has a shape of {seed.shape} and "
                f"output[{index}] has a shape of {root.shape}."
            )
        seeds.append(seed)
    return seeds


def grad_inputs(inputs: list[Variable]) -> None:
    """grad(outputs, inputs) differentiates only by Variables that require grad."""
    if not inputs:
        raise RuntimeError(
            "grad requires non-empty inputs: pass the Variable(s) to differentiate by."
        )
    for index, variable in enumerate(inputs):
        if not variable.requires_grad:
            raise RuntimeError(
                f"One of the differentiated Variables (inputs[{index}]) does not require grad; "
                f"set requires_grad=True on it before computing the outputs."
            )


def target(variable: Variable, index: int) -> None:
    """backward(inputs=...) and grad() can only reach inputs that require grad."""
    if not variable.requires_grad:
        raise RuntimeError(
            f"inputs[{index}] does not require grad, so no gradient can flow to it; set "
            f"requires_grad=True on it first."
        )


def unused(index: int) -> RuntimeError:
    return RuntimeError(
        f"One of the differentiated Variables (inputs[{index}]) appears to not have "
        f"been used in the graph. Set allow_unused=True if this is the desired behavior."
    )


def refuse_variable_keywords(cls: type, kwargs: dict) -> None:
    """Gradients flow only to positional arguments of apply, as in PyTorch."""
    for key, value in kwargs.items():
        if isinstance(value, Variable):
            raise TypeError(
                f"{cls.__name__}.apply got the Variable {key}=... as a keyword argument; "
                f"gradients flow only to positional arguments, as in PyTorch. Pass it "
                f"positionally: {cls.__name__}.apply(..., {key})."
            )


def forward_returned_none(cls: type) -> TypeError:
    return TypeError(
        f"{cls.__name__}.forward returned None; did you forget `return`? forward must "
        f"return its output(s): a Variable, an array, a number, a str, or a tuple of them."
    )


def dirty_not_returned() -> RuntimeError:
    return RuntimeError(
        "mark_dirty was given a Variable that forward did not return; an input "
        "changed in place must also be returned by forward."
    )


def leaf_changed_in_place(fix: str) -> RuntimeError:
    return RuntimeError(
        f"a leaf Variable that requires grad is being used in an in-place operation. {fix}"
    )


def not_saveable(node: Any, index: int, value: Any) -> TypeError:
    """ctx.save_for_backward(3) in a recorded call: PyTorch's TypeError."""
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return TypeError(
        f"save_for_backward can only save variables, but argument {index} is of type {name} "
        f"(in {node.name()}). Save Variables (or None) there, and keep other values on ctx "
        f"as attributes: ctx.k = k in forward, read as ctx.k in backward."
    )


def inference_saved(node: Any, index: int) -> RuntimeError:
    """A recorded call saved a Variable made inside inference_mode (PyTorch's wording)."""
    return RuntimeError(
        f"Inference tensors cannot be saved for backward: {node.name()} saved, as its "
        f"value {index}, a Variable made inside minigrad.inference_mode(), which has no "
        f"history for a gradient. Please do not use Variables created in inference mode in "
        f"computation tracked by autograd. To work around this, make a .clone() of it (outside "
        f"inference_mode) to get a normal Variable, or use minigrad.no_grad() instead of "
        f"minigrad.inference_mode()."
    )


# --------------------------------------------------------------------------- shared arguments
# Each raises PyTorch's TypeError for a wrong kind, naming the owner ("SGD",
# "DataLoader"), the argument, what it got and what it needs.


def _got(value: Any) -> str:
    """What a message says was received: the kind, and a short repr."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def check_flag(value: Any, name: str, owner: str) -> bool:
    """value as a bool: True or False (NumPy's bool too), else a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be True or False; got {_got(value)}.")
    return bool(value)


def check_callable(value: Any, name: str, owner: str, what: str = "a function") -> Callable:
    """value, if it can be called; else a TypeError saying what it should be."""
    if not callable(value):
        raise TypeError(f"{owner}: {name} must be {what}; got {_got(value)}.")
    return value


def check_iterable(value: Any, name: str, owner: str, what: str) -> list:
    """The items of value (a list, tuple, generator, ...) as a list; a TypeError for a
    number, None, a str or another single value."""
    single = isinstance(value, (str, bytes, dict)) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )
    if single or not isinstance(value, Iterable):
        raise TypeError(f"{owner}: {name} must be a list of {what}; got {_got(value)}.")
    return list(value)


def check_state_dict(value: Any, owner: str) -> dict:
    """value, if it is a dict (what state_dict() returned); else a TypeError."""
    if not isinstance(value, dict):
        raise TypeError(
            f"{owner}.load_state_dict expects a dict, as {owner}.state_dict() returns; got "
            f"{_got(value)}."
        )
    return value

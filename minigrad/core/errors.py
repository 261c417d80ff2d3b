"""The engine's errors: each a type that carries its data, with PyTorch's wording.

Each is a subclass of the exception PyTorch raises (RuntimeError), so `except
RuntimeError` keeps working; a program (or a course check) that wants to know *what* went
wrong reads the fields instead of parsing the message.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import minigrad  # the public names, read at call time to suggest one
from minigrad.devices import DeviceMismatchError, mixed_devices


class GradientCountError(RuntimeError):
    """A Function's backward returned `got` gradients; forward had `expected` inputs."""

    def __init__(self, node_name: str, expected: int, got: int) -> None:
        self.node_name = node_name
        self.expected = expected
        self.got = got
        super().__init__(
            f"function {node_name} returned an incorrect number of gradients "
            f"(expected {expected}, got {got}): backward must return one gradient "
            f"per input of forward, None for inputs that need none."
        )


class GradientShapeError(RuntimeError):
    """The gradient at position `index` has shape `got`; its input has shape `expected`."""

    def __init__(self, node_name: str, index: int, expected: tuple, got: tuple) -> None:
        self.node_name = node_name
        self.index = index
        self.expected = expected
        self.got = got
        super().__init__(
            f"function {node_name} returned an invalid gradient at index {index}: "
            f"got shape {got} but expected shape {expected} (or a shape that "
            f"{expected} broadcasts to, which is summed back)."
        )


class GradientForNonVariableError(RuntimeError):
    """A gradient (not None) was returned at `index`, where forward's input was no Variable."""

    def __init__(self, node_name: str, index: int) -> None:
        self.node_name = node_name
        self.index = index
        super().__init__(
            f"function {node_name} returned a gradient different than None at position "
            f"{index}, but the corresponding forward input was not a Variable; return None "
            f"there."
        )


class NoGradFnError(RuntimeError):
    """Output `index` of a backward call neither requires grad nor has a grad_fn."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(
            f"element {index} of variables does not require grad and does not have a "
            f"grad_fn. Set requires_grad=True on the leaves before computing it, and make "
            f"sure it was not computed under no_grad()."
        )


BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "variables after they have already been freed). Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
    "you need to backward through the graph a second time or if you need to access saved "
    "variables after calling backward."
)


class BackwardTwiceError(RuntimeError):
    """The saved values of node `node_name` were freed by an earlier backward."""

    def __init__(self, node_name: str | None = None) -> None:
        self.node_name = node_name
        super().__init__(BACKWARD_TWICE)


class InplaceModifiedError(RuntimeError):
    """A Variable saved for backward was changed in place after it was saved."""

    def __init__(self, node_name: str, shape: Any, version: int, expected_version: int) -> None:
        self.node_name = node_name
        self.shape = shape
        self.version = version
        self.expected_version = expected_version
        super().__init__(
            f"one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: a Variable of shape {shape} used by "
            f"{node_name} is at version {version}; expected version "
            f"{expected_version} instead. Change the in-place operation (x += y) to an "
            f"out-of-place one (x = x + y), or .clone() before changing it."
        )


# ------------------------------------------------------------------------- missing
#
# The error for a PyTorch name minigrad does not have yet, with the nearest spelling it has.

def missing_name(owner: str, name: str, known: Iterable[str]) -> AttributeError:
    """AttributeError: "minigrad does not have `Tensor.name` yet", plus the nearest names."""
    public = sorted({k for k in known if not k.startswith("_")})
    nearest = difflib.get_close_matches(name, public, n=3, cutoff=0.6)
    message = f"minigrad does not have `{owner}.{name}` yet."
    if nearest:
        spelled = ", ".join(f"`{owner}.{n}`" for n in nearest)
        message += f" The nearest existing spelling: {spelled}."
    message += " The names minigrad has are listed in site/pytorch.md (PyTorch coverage)."
    return AttributeError(message)


# ------------------------------------------------------------------------- mistakes
#
# Messages for the slips everyone makes in a first hour with Functions and Variables.
#
# Each message says what happened and what to write instead. They live here, out of the
# engine's way: nothing in this module runs unless something has already gone wrong, except
# the guard around a Function's `forward`, which only adds a frame to a direct call
# `MyFunction.forward(...)` (apply does not go through it).

def _signature(function: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def _binds(signature: inspect.Signature, *args: Any, **kwargs: Any) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _inputs(count: int) -> str:
    return "1 input" if count == 1 else f"{count} inputs"


# --------------------------------------------------------------------------- forward


def forward_call_error(cls: type, args: tuple, kwargs: dict) -> TypeError | None:
    """The clearer TypeError for apply's call of forward (or setup_context) failing because
    their parameters do not fit the call; None when they fit (the error is elsewhere)."""
    name = cls.__name__
    forward = _signature(cls._forward)
    if forward is None:
        return None
    params = list(forward.parameters)
    written = f"{name}.forward{forward}"
    if cls._uses_setup_context:
        if not _binds(forward, *args, **kwargs):
            if params and params[0] == "ctx" and _binds(forward, None, *args, **kwargs):
                return TypeError(
                    f"{written} takes ctx, but {name} also has setup_context, so forward "
                    f"takes only the inputs: write `def forward({', '.join(params[1:])}):` "
                    f"and fill ctx in setup_context(ctx, inputs, output)."
                )
            return TypeError(
                f"{written} does not fit the call {name}.apply(...) with "
                f"{_inputs(len(args))}: forward takes exactly the inputs given to apply."
            )
        setup = _signature(cls.setup_context)
        if setup is not None and not _binds(setup, None, args, None):
            return TypeError(
                f"{name}.setup_context{setup} does not fit: it is called as "
                f"setup_context(ctx, inputs, output), with the tuple of forward's inputs and "
                f"what forward returned. Write `def setup_context(ctx, inputs, output):`."
            )
        return None
    if _binds(forward, None, *args, **kwargs):
        return None
    if params and params[0] == "self":
        return TypeError(
            f"{written} takes self, but a Function is never instantiated: forward and "
            f"backward are static methods. Drop self and mark them @staticmethod: "
            f"`def forward(ctx, ...)` and `def backward(ctx, grad_output)`."
        )
    if params and params[0] not in ("ctx", "context") and _binds(forward, *args, **kwargs):
        inputs = ", ".join(params)
        return TypeError(
            f"{written} has no ctx parameter: apply calls forward(ctx, *inputs), with the "
            f"context first. Write `def forward(ctx, {inputs}):` (ctx.save_for_backward(...) "
            f"keeps what backward needs), or keep forward({inputs}) and add "
            f"`def setup_context(ctx, inputs, output):` (PyTorch's second style)."
        )
    return TypeError(
        f"{written} takes ctx and then the inputs, but {name}.apply was called with "
        f"{_inputs(len(args))}: pass apply exactly the inputs forward lists after ctx."
    )


def guard_direct_forward(cls: type, forward: Callable) -> Callable:
    """`forward` as it is called directly, MyFunction.forward(...): unchanged, except that a
    call without a ctx, written for MyFunction.apply(...), says so."""

    @functools.wraps(forward)
    def forward_called_directly(*args: Any, **kwargs: Any) -> Any:
        try:
            return forward(*args, **kwargs)
        except TypeError as error:
            if error.__traceback__.tb_next is not None:  # raised inside forward: not ours
                raise
            clearer = direct_forward_error(cls, forward, args)
            if clearer is None:
                raise
            raise clearer from None

    return forward_called_directly


def direct_forward_error(cls: type, forward: Callable, args: tuple) -> TypeError | None:
    """A direct call MyFunction.forward(x) that did not fit forward's parameters: when its
    first argument is not a ctx, the call was meant to be MyFunction.apply(x)."""
    # A ctx is a FunctionCtx (function.py imports this file, so it is recognised by its method).
    if cls._uses_setup_context or (args and hasattr(type(args[0]), "save_for_backward")):
        return None
    name = cls.__name__
    # Name the arguments after forward's own inputs: Square.forward(x) -> Square.apply(x).
    params = list(_signature(forward).parameters) if _signature(forward) else []
    inputs = [p for p in params[1:] if p not in ("self", "args", "kwargs")]
    shown = ", ".join(inputs[: len(args)]) if 0 < len(args) <= len(inputs) else "..."
    return TypeError(
        f"{name}.forward({shown}) was called directly, so nothing was passed as ctx. Call "
        f"{name}.apply({shown}) instead: apply makes the ctx, passes it to forward first, "
        f"and records the graph for backward."
    )


# --------------------------------------------------------------------------- backward


def backward_call_error(function: type, grad_count: int) -> TypeError | None:
    """The clearer TypeError for the engine's call backward(ctx, *grad_outputs) failing
    because backward's parameters do not fit; None when they fit."""
    backward = _signature(function.backward)
    if backward is None or _binds(backward, None, *([None] * grad_count)):
        return None
    name = function.__name__
    written = f"{name}.backward{backward}"
    params = list(backward.parameters)
    if params and params[0] == "self":
        return TypeError(
            f"{written} takes self, but a Function is never instantiated: backward is a "
            f"static method. Drop self and mark it @staticmethod: "
            f"`def backward(ctx, grad_output)`."
        )
    outputs = "1 output" if grad_count == 1 else f"{grad_count} outputs"
    grads = (
        "grad_output"
        if grad_count == 1
        else ", ".join(f"grad_output{i}" for i in range(1, grad_count + 1))
    )
    return TypeError(
        f"{written} does not fit the call backward(ctx, {grads}): forward returned "
        f"{outputs}, so backward receives ctx and one gradient per output. Write "
        f"`def backward(ctx, {grads}):`."
    )


def backward_error_note(function: type, saved: tuple | None, error: Exception) -> str | None:
    """A hint added to an error raised inside a backward, for the ctx.saved_tensors slips."""
    name = function.__name__
    text = str(error)
    count = 0 if not saved else len(saved)
    if isinstance(error, ValueError) and "values to unpack" in text:
        if count == 0:
            return (
                f"{name}'s ctx.saved_tensors is empty: forward saved nothing. Call "
                f"ctx.save_for_backward(x, ...) in forward (or in setup_context) with what "
                f"backward needs."
            )
        return (
            f"If this unpacked ctx.saved_tensors: it holds {count} value(s), exactly those "
            f"forward passed to ctx.save_for_backward(...), in that order."
        )
    if isinstance(error, TypeError) and "'tuple' object is not callable" in text:
        return "ctx.saved_tensors is a property, not a method: write `ctx.saved_tensors`."
    if isinstance(error, TypeError) and "got tuple" in text and count:
        return (
            "ctx.saved_tensors is a tuple, even when it holds one value: unpack it, "
            "`(x,) = ctx.saved_tensors` (or `x, = ...`), not `x = ctx.saved_tensors`."
        )
    return None


def add_note(error: BaseException, note: str) -> None:
    """Attach a hint that shows under the error's message (Python 3.11+; a no-op before)."""
    if hasattr(error, "add_note"):
        error.add_note(note)


# --------------------------------------------------------------------------- Variables


# The ufuncs behind NumPy's operators, with their sign, for `array -= variable`.
_OPERATOR_SIGNS = {
    np.add: "+",
    np.subtract: "-",
    np.multiply: "*",
    np.divide: "/",
    np.floor_divide: "//",
    np.remainder: "%",
    np.power: "**",
    np.matmul: "@",
}
# NumPy's name -> minigrad's (PyTorch's) name, where they differ.
_TORCH_NAMES = {
    "absolute": "abs",
    "fabs": "abs",
    "negative": "neg",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "divide": "div",
    "power": "pow",
}


def numpy_on_variable(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> TypeError:
    """The TypeError for a NumPy ufunc given a Variable (np.exp(v), array -= v, ...)."""
    name = ufunc.__name__
    if method == "__call__" and "out" in kwargs and ufunc in _OPERATOR_SIGNS:
        sign = _OPERATOR_SIGNS[ufunc]
        return TypeError(
            f"NumPy cannot do `array {sign}= variable`: the result would be a Variable, and "
            f"a NumPy array holds only numbers. To change the numbers, use the Variable's "
            f"numbers too, e.g. `w.data {sign}= lr * w.grad.data`; to update a Variable, write "
            f"`with minigrad.no_grad(): w {sign}= lr * w.grad`; or keep a new Variable, "
            f"`x = x {sign} v`."
        )
    spelled = f"np.{name}" if method == "__call__" else f"np.{name}.{method}"
    own = _TORCH_NAMES.get(name, name)
    instead = ""
    if method == "__call__":
        if ufunc.nin == 1 and hasattr(minigrad.Variable, own):
            instead = f"v.{own}() or minigrad.{own}(v) (recorded, so gradients flow), or "
        elif hasattr(minigrad, own):
            args = ", ".join("ab"[: ufunc.nin]) if ufunc.nin <= 2 else "..."
            instead = f"minigrad.{own}({args}) (recorded, so gradients flow), or "
    return TypeError(
        f"{spelled} was given a Variable; NumPy functions work on arrays and would drop the "
        f"graph. Use {instead}{spelled}(v.data) for the plain numbers, without a gradient."
    )


def forward_error(cls: type, args: tuple, kwargs: dict, error: Exception) -> Exception | None:
    """A clearer error than the one forward raised, or None to let that one through."""
    if isinstance(error, DeviceMismatchError):
        # The kernels noticed two devices; say it about Variables, whatever the op.
        return mixed_devices(error)
    # forward's parameters may not fit the call (a forward without ctx, ...).
    return forward_call_error(cls, args, kwargs)


def raise_clearer_forward_error(cls: type, args: tuple, kwargs: dict, error: Exception) -> None:
    """Raise forward_error's clearer error, if there is one (the caller re-raises otherwise)."""
    clearer = forward_error(cls, args, kwargs, error)
    if clearer is not None:
        raise clearer from None


def explain_backward_error(node: Any, grad_outputs: list, error: Exception) -> None:
    """Raise a clearer error when backward's parameters do not fit its call; add a hint to
    the usual ctx.saved_tensors slips. Anything else goes on unchanged."""
    clearer = backward_call_error(node._function, len(grad_outputs))
    if clearer is not None:
        raise clearer from None
    note = backward_error_note(node._function, node._saved, error)
    if note is not None:
        add_note(error, note)


def function_instantiated(cls: type) -> RuntimeError:
    return RuntimeError(
        f"{cls.__name__} should not be instantiated. Methods on autodiff "
        f"Functions are all static: call {cls.__name__}.apply(...) instead."
    )


def guard_forward(cls: type) -> None:
    """Keep the forward a Function subclass wrote as `cls._forward` (what apply calls), and
    replace `cls.forward` by a guard that explains a direct call, Square.forward(x)."""
    forward = cls.__dict__.get("forward")
    if forward is not None:
        cls._forward = forward
        function = forward.__func__ if isinstance(forward, staticmethod) else forward
        if inspect.isfunction(function):
            cls.forward = staticmethod(guard_direct_forward(cls, function))


__all__ = [
    "BACKWARD_TWICE",
    "BackwardTwiceError",
    "GradientCountError",
    "GradientForNonVariableError",
    "GradientShapeError",
    "InplaceModifiedError",
    "NoGradFnError",
]

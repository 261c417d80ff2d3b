"""Forward-mode AD: push a tangent forward through each operation, beside the value.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, v)          # the value x0 with the tangent v
        y = f(x)
        value, tangent = forward_ad.unpack_dual(y)   # tangent = J_f(x0) · v

Reverse mode (backward) gives vᵀJ, one output direction per pass: the whole gradient of a
scalar loss in one pass. Forward mode gives J·v, one input direction per pass, with no
graph to keep: it wins when a function has few inputs and many outputs. Both are exact.

While a dual level is open it listens to every `Function.apply` (through the hook in
minigrad/core/grad_mode.py): after an operation runs, the tangents of its inputs give the
tangent of its output by the operation's JVP rule, which is, in order of preference, the
Function's own `jvp(ctx, *tangents)` staticmethod (as in PyTorch; forward may keep values
for it with `ctx.save_for_forward`), a built-in rule (minigrad/ops/tooling/jvp.py registers them
in JVP_RULES), or, for any other operation, the JVP read off its backward: J·t is the
gradient with respect to u of <vjp(u), t>, which is linear in u.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from minigrad.core.engine import grad
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import QUIET, Listener, enable_grad, state, unheard
from minigrad.core.variable import Variable

# Function class -> rule(args, tangents, output) -> the output's tangent (or a tuple).
JVP_RULES: dict[type, Callable[[tuple, list, Any], Any]] = {}


class UnpackedDualTensor(NamedTuple):
    primal: Variable
    tangent: Variable | None


class _DualLevel(Listener):
    """The listener of an open dual level: it keeps each Variable's tangent."""

    watching = True

    def __init__(self) -> None:
        # id(array) -> (a weak reference to the array, the tangent). Kept by the value's
        # array, not by the Variable: the Variable a backward gets for a saved output is a
        # new one over the same array, and it must carry the same tangent.
        self._tangents: dict[int, tuple] = {}

    def tangent_of(self, variable: Variable) -> Variable | None:
        data = variable._data
        entry = self._tangents.get(id(data))
        if entry is None or entry[0]() is not data:
            return None  # none, or the entry of a dead array whose id was reused
        return entry[1]

    def set_tangent(self, variable: Variable, tangent: Variable) -> None:
        data = variable._data
        key = id(data)

        def forget(ref: weakref.ref) -> None:
            # The array died: drop its tangent now rather than when the level closes,
            # unless a newer array with the same id already has its own entry.
            entry = self._tangents.get(key)
            if entry is not None and entry[0] is ref:
                del self._tangents[key]

        self._tangents[key] = (weakref.ref(data, forget), tangent)

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        # What runs inside (the op, its JVP rule) is not seen again.
        return unheard(lambda: self._with_tangents(cls, args, kwargs))

    def _with_tangents(self, cls: type, args: tuple, kwargs: dict) -> Any:
        result = cls.apply(*args, **kwargs)
        tangents = [self.tangent_of(a) if isinstance(a, Variable) else None for a in args]
        if any(tangent is not None for tangent in tangents):
            self._attach(result, _jvp(cls, args, kwargs, tangents, result))
        return result

    def _attach(self, result: Any, tangents: Any) -> None:
        outputs = result if isinstance(result, tuple) else (result,)
        tangents = tangents if isinstance(tangents, tuple) else (tangents,)
        for output, tangent in zip(outputs, tangents):
            if not isinstance(output, Variable) or tangent is None:
                continue
            tangent = _as_variable(tangent)
            if tangent.shape != output.shape:
                tangent = tangent.expand(output.shape)  # an input broadcast to the output
            self.set_tangent(output, tangent)

    def copy_into(self, variable: Variable, source: Any) -> None:
        """An in-place update (x.mul_(2), y[1:] = d): its tangent is not propagated yet."""
        entry = self._tangents.get(id(source))
        if self.tangent_of(variable) is not None or (entry is not None and entry[0]() is source):
            raise NotImplementedError(
                "forward-mode AD does not follow in-place operations on dual Variables yet "
                "(the tangent would be silently wrong); write it out of place: y = x * 2, "
                "or minigrad.cat / minigrad.where instead of an assignment into a slice."
            )


class NoDualLevelError(RuntimeError):
    """make_dual (or another forward-mode call) was used outside `with dual_level():`."""

    def __init__(self) -> None:
        super().__init__(
            "forward-mode AD needs an open dual level: use `with forward_ad.dual_level():` "
            "around make_dual, the computation and unpack_dual."
        )


def _level() -> _DualLevel:
    level = state.listener
    if not isinstance(level, _DualLevel):
        raise NoDualLevelError()
    return level


class dual_level:  # noqa: N801 (PyTorch's name)
    """`with dual_level():` turns forward-mode AD on; tangents are forgotten on exit."""

    def __enter__(self) -> dual_level:
        if state.listener is not QUIET:
            raise RuntimeError(
                "dual_level() cannot open here: a dual level is open already (minigrad has "
                "one level), or minigrad.compile is tracing."
            )
        self.level = _DualLevel()
        state.listener = self.level
        return self

    def __exit__(self, *exc_info: Any) -> None:
        state.listener = QUIET
        self.level._tangents.clear()


def make_dual(primal: Variable, tangent: Any) -> Variable:
    """A Variable with `primal`'s value (and history) carrying `tangent`, of the same shape."""
    level = _level()
    _check_numeric("make_dual", "primal", primal, allow_array=False)
    _check_numeric("make_dual", "tangent", tangent, allow_array=True)
    tangent = _as_variable(tangent)
    if tangent.dtype.kind != "f" or primal.dtype.kind != "f":
        raise TypeError(
            f"make_dual needs floating-point primal and tangent; got {primal.dtype} and "
            f"{tangent.dtype}. Convert with .double() (or .float()) first."
        )
    if tangent.shape != primal.shape:
        raise ValueError(
            f"make_dual: the tangent must have the primal's shape {primal.shape}; got "
            f"{tangent.shape}."
        )
    dual = _alias(primal)
    level.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Variable) -> UnpackedDualTensor:
    """(primal, tangent) of a dual Variable; the tangent is None when it has none (and
    outside a dual level, as in PyTorch)."""
    if not isinstance(tensor, Variable) or tensor.is_text:
        got = "a text Variable" if isinstance(tensor, Variable) else type(tensor).__name__
        raise TypeError(
            f"unpack_dual(tensor) needs a numeric Variable (a result computed from "
            f"make_dual); got {got}."
        )
    _check_numeric("unpack_dual", "tensor", tensor, allow_array=False)
    level = state.listener
    if not isinstance(level, _DualLevel):
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), level.tangent_of(tensor))


def _alias(variable: Variable) -> Variable:
    """The same value as a new Variable; through a recorded view when it requires grad."""
    if variable.requires_grad:
        return unheard(lambda: variable.reshape(variable.shape))
    # A view: a new array over the same memory, so it carries its own tangent.
    return Variable._make(variable._data.view(), variable._shared_version_counter())


def _check_numeric(function: str, name: str, value: Any, allow_array: bool) -> None:
    """A TypeError unless value is a numeric Variable (or, where allowed, a NumPy array)."""
    if isinstance(value, Variable):
        if value.is_text:
            raise TypeError(
                f"{function}: {name} must be a numeric Variable; got a text Variable. "
                f"Forward-mode AD carries tangents of numbers; text has none."
            )
        if value.device.type != "cpu":
            raise NotImplementedError(
                f"{function}: forward-mode AD runs on CPU Variables only; the {name} is on "
                f"{value.device.type}. Move it with .cpu() first."
            )
        return
    if allow_array and isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return
    kinds = "a floating-point Variable or NumPy array" if allow_array else "a Variable"
    raise TypeError(
        f"{function}: {name} must be {kinds}; got {type(value).__name__}. "
        f"Wrap numbers with minigrad.tensor(...)."
    )


def _as_variable(value: Any) -> Variable:
    return value if isinstance(value, Variable) else Variable(np.asarray(value))


# --------------------------------------------------------------------------- JVP rules


def _jvp(cls: type, args: tuple, kwargs: dict, tangents: list, result: Any) -> Any:
    if cls.jvp is not Function.jvp:
        return _user_jvp(cls, args, kwargs, tangents, result)
    rule = JVP_RULES.get(cls)
    if rule is not None and not kwargs:
        return rule(args, tangents, result)
    return _jvp_from_backward(cls, args, kwargs, tangents)


def _user_jvp(cls: type, args: tuple, kwargs: dict, tangents: list, result: Any) -> Any:
    """A Function's own jvp(ctx, *tangents), with the ctx its forward filled."""
    first = result[0] if isinstance(result, tuple) else result
    ctx = first.grad_fn if isinstance(first, Variable) else None
    if ctx is None or getattr(ctx, "_function", None) is not cls:
        # Nothing recorded (no input requires grad): fill a ctx by running forward again.
        ctx = FunctionCtx(tuple(isinstance(a, Variable) for a in args))
        if cls._uses_setup_context:
            cls.setup_context(ctx, args, cls._forward(*args, **kwargs))
        else:
            cls._forward(ctx, *args, **kwargs)
    full = [
        t if t is not None or not isinstance(a, Variable) else Variable(np.zeros_like(a._data))
        for a, t in zip(args, tangents)
    ]
    returned = cls.jvp(_JvpContext(ctx), *full)
    _check_user_tangents(cls, returned, result)
    return returned


class _JvpContext:
    """The ctx a Function's jvp receives: forward's own ctx, except that `saved_tensors`
    gives what `ctx.save_for_forward` kept, as in PyTorch (what backward would get when
    forward kept nothing for jvp)."""

    def __init__(self, ctx: Any) -> None:
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self) -> tuple:
        kept = vars(self._ctx).get("saved_for_forward")
        return tuple(kept) if kept is not None else self._ctx.saved_tensors

    saved_variables = saved_tensors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ctx, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._ctx, name)


def _check_user_tangents(cls: type, returned: Any, result: Any) -> None:
    """A Function's jvp gives one tangent per output (a tuple when forward returned one),
    each None or of its output's shape; else a RuntimeError, as PyTorch raises."""
    outputs = result if isinstance(result, tuple) else (result,)
    if len(outputs) > 1 or isinstance(returned, tuple):
        count = len(returned) if isinstance(returned, tuple) else 1
        if count != len(outputs):
            raise RuntimeError(
                f"{cls.__name__}.jvp returned an invalid number of forward gradients "
                f"(expected {len(outputs)} but got {count}): return one tangent per output "
                f"of forward, None for an output without one."
            )
    tangents = returned if isinstance(returned, tuple) else (returned,)
    for index, (output, tangent) in enumerate(zip(outputs, tangents)):
        if tangent is None or not isinstance(output, Variable):
            continue
        if not isinstance(tangent, (Variable, np.ndarray)):
            raise RuntimeError(
                f"{cls.__name__}.jvp must return Variables (or None) as tangents; tangent "
                f"{index} is {type(tangent).__name__}. Wrap it: minigrad.tensor(value)."
            )
        if tuple(tangent.shape) != tuple(output.shape):
            raise RuntimeError(
                f"{cls.__name__}.jvp returned tangent {index} of shape {tuple(tangent.shape)} "
                f"for an output of shape {tuple(output.shape)}: a tangent must have its "
                f"output's shape (expand or reshape it in jvp)."
            )


def _jvp_from_backward(cls: type, args: tuple, kwargs: dict, tangents: list) -> Any:
    """J·t for any op with a differentiable backward: d/du <vjp(u), t> (linear in u).

    When a primal or a tangent is part of a graph (reverse mode over forward mode:
    differentiating a tangent), J·t is computed on the primals themselves with
    create_graph, so that it stays a differentiable function of both."""
    variables = [v for v in (*args, *tangents) if isinstance(v, Variable)]
    keep_graph = state.grad_enabled and any(v.requires_grad for v in variables)
    with enable_grad():
        leaves = [
            a if t is None or (keep_graph and a.requires_grad)
            else Variable(a._data, requires_grad=True)
            for a, t in zip(args, tangents)
        ]
        results = cls.apply(*leaves, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        # Integer outputs (indices) have no tangent; the others get one each, in place.
        moving = [i for i, o in enumerate(results) if isinstance(o, Variable) and o.requires_grad]
        tangents_out: list = [None] * len(results)
        if not moving:
            return tuple(tangents_out) if len(results) > 1 else None
        outputs = [results[i] for i in moving]
        cotangents = [Variable(np.zeros_like(o._data), requires_grad=True) for o in outputs]
        wrt = [leaf for leaf, t in zip(leaves, tangents) if t is not None]
        given = [t for t in tangents if t is not None]
        grads = grad(outputs, wrt, cotangents, create_graph=True, allow_unused=True)
        total = None
        for g, t in zip(grads, given):
            if g is not None:
                term = (g * t).sum()
                total = term if total is None else total + term
        if total is not None:
            jvps = grad(total, cotangents, allow_unused=True, create_graph=keep_graph)
            for i, jvp_value in zip(moving, jvps):
                tangents_out[i] = jvp_value
    return tuple(tangents_out) if len(results) > 1 else tangents_out[0]


__all__ = ["NoDualLevelError", "UnpackedDualTensor", "dual_level", "make_dual", "unpack_dual"]

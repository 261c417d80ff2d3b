"""The op table: each built-in operation is declared once and attached wherever PyTorch
spells it.

An op file writes a plain function that runs the op (it calls a Function's `apply`) and
registers it:

    @register("exp")
    def exp(x: Variable) -> Variable:
        "y = exp(x); see Exp."
        return Exp.apply(x)

From that one entry the table attaches

- the Variable method `x.exp()` (the function itself: its first argument is `self`),
- the top-level function `minigrad.exp(x)`,
- the in-place variant `x.exp_()` when the entry says `inplace=True`,
- and the same under each alias (`clip` for `clamp`).

`method=` and `function=` take False (PyTorch has no such spelling) or another callable
(the spellings differ, e.g. `x.where(cond, y)` beside `minigrad.where(cond, x, y)`).

`numpy=` gives what the op is on a bare NumPy array. The function register() gives back
(the one op files call, `exp(y)` in a backward formula) then goes straight to NumPy for
an array: a formula written with operators and such functions means the same on arrays
and on Variables, and the engine runs it on arrays when no graph of the backward is
wanted (Function.backward_on_arrays).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from minigrad.core.variable import Variable
from minigrad.ops.tooling.arguments import checked

# The function an op entry declares: register() gives it back unchanged (typed as it is).
Run = TypeVar("Run", bound=Callable[..., Any])


class Op(NamedTuple):
    """One row of the table: a name and the callables attached for it."""

    name: str
    method: Callable | None
    function: Callable | None
    inplace: bool
    aliases: tuple[str, ...]


OPS: dict[str, Op] = {}


def register(
    name: str,
    *,
    method: Callable | bool = True,
    function: Callable | bool = True,
    inplace: bool = False,
    aliases: tuple[str, ...] = (),
    numpy: Callable | None = None,
) -> Callable[[Run], Run]:
    """Declare the op `name`: attach the decorated function as method, function and variant."""

    def declare(run: Run) -> Run:
        if name in OPS:
            raise ValueError(f"the op {name!r} is registered twice; each op has one entry.")
        as_method = run if method is True else (method or None)
        as_function = run if function is True else (function or None)
        # Both spellings check their arguments when a call fails, and take PyTorch's
        # keywords (input=, other=; out= on the function): see ops/tooling/arguments.py.
        if as_method is not None:
            as_method = checked(as_method, f"Variable.{name}()", is_method=True)
        if as_function is not None:
            as_function = checked(as_function, f"minigrad.{name}()")
        OPS[name] = Op(name, as_method, as_function, inplace, tuple(aliases))
        for spelling in (name, *aliases):
            if as_method is not None:
                setattr(Variable, spelling, as_method)
            if inplace:
                setattr(Variable, spelling + "_", _inplace_variant(spelling, as_method))
        return run if numpy is None else _also_on_arrays(run, numpy)

    return declare


def _also_on_arrays(run: Run, numpy: Callable) -> Run:
    """`run`, but NumPy's `numpy` for a NumPy array (or scalar) first argument."""

    @functools.wraps(run)
    def run_or_numpy(x: Any, *args: Any, **kwargs: Any) -> Any:
        if type(x) is np.ndarray or isinstance(x, np.generic):
            return numpy(x, *args, **kwargs)
        return run(x, *args, **kwargs)

    return run_or_numpy  # type: ignore[return-value]


# Operators whose meaning depends on the kind of value: minigrad.text registers here what
# `+` and `[]` do on text (concatenate, slice); minigrad/ops/operators.py calls them.
TEXT_OPERATORS: dict[str, Callable] = {}

# The operators and in-place methods attached by `operator`, by name.
OPERATORS: dict[str, Callable] = {}


class _OperatorDecorator:
    """`@operator` attaches a function as the Variable method of its own name;
    `@operator.as_property` attaches it as a read-only property (x.T)."""

    def __call__(self, method: Callable) -> Callable:
        OPERATORS[method.__name__] = method
        setattr(Variable, method.__name__, method)
        return method

    def as_property(self, method: Callable) -> Callable:
        OPERATORS[method.__name__] = method
        setattr(Variable, method.__name__, property(method))
        return method


operator = _OperatorDecorator()


def _inplace_variant(name: str, method: Callable) -> Callable:
    """x.name_(...): compute x.name(...) and write it into x's own array."""

    def inplace(self: Variable, *args: Any, **kwargs: Any) -> Variable:
        try:
            return self._inplace(lambda current: method(current, *args, **kwargs))
        except Exception:
            # An argument of the wrong kind first, as PyTorch (before "a leaf in-place").
            message = method.bad_argument(self, *args, **kwargs)
            if message is None:
                raise
            raise TypeError(message.replace(f".{name}()", f".{name}_()", 1)) from None

    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place x.{name}(...): the result is written into x."
    return inplace


def functions() -> dict[str, Callable]:
    """The top-level functions, `minigrad.<name>`, under every spelling."""
    table = {}
    for op in OPS.values():
        if op.function is None:
            continue
        for spelling in (op.name, *op.aliases):
            table[spelling] = op.function
    return table


def methods() -> dict[str, Callable]:
    """The Variable methods attached from the table, in-place variants included."""
    table = {}
    for op in OPS.values():
        for spelling in (op.name, *op.aliases):
            if op.method is not None:
                table[spelling] = op.method
            if op.inplace:
                table[spelling + "_"] = getattr(Variable, spelling + "_")
    return table

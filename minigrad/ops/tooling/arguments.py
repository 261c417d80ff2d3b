"""The arguments of a public function: PyTorch's keywords, `out=`, and the TypeError for
an argument of the wrong kind.

`checked(run, where)` wraps a function of the op table or of nn.functional:

- PyTorch calls the first two arguments `input` and `other`; minigrad's functions name
  them `x` and `other` (or `weight`, `mat2`, ...) so as not to shadow the builtin
  `input`. `input=` and `other=` are passed on under the function's own names.
- `out=` (functions only, as in PyTorch) writes the result into an existing Variable.
- A call with good arguments runs the function and nothing else: the arguments are looked
  at only when the call fails (so a correct call pays no checks). If one of them is of a
  kind the function cannot take (a tuple where a Variable belongs, a string for a
  dimension), the caller gets PyTorch's TypeError naming the function, the argument, what
  it got and what it needs, in place of whatever the function tripped over inside. A
  failure with arguments of the right kinds is an error of its own and passes through.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from minigrad.core import grad_mode
from minigrad.core.data_array import DataArray
from minigrad.core.variable import Variable


class Kind(NamedTuple):
    """What an argument may be: a test, the words for it, and how to make one."""

    what: str
    test: Callable[[Any], bool]
    hint: str = ""


def _is_variable(value: Any) -> bool:
    return isinstance(value, Variable) and not value.is_text


def _is_text(value: Any) -> bool:
    return isinstance(value, Variable) and value.is_text


def _is_number(value: Any) -> bool:
    """A real number (complex ones minigrad's ops do not take)."""
    return isinstance(value, (numbers.Real, np.number, np.bool_)) and not isinstance(
        value, np.complexfloating
    )


def _is_data(value: Any) -> bool:
    """Numbers, nested lists of numbers, an array or a numeric Variable: what tensor() takes."""
    if isinstance(value, Variable):
        return not value.is_text
    try:
        return np.asarray(value).dtype.kind in "biufc"
    except (TypeError, ValueError):
        return False


def _is_int(value: Any) -> bool:
    """An int; a 0-d integer Variable counts as its int, as in PyTorch (x.sum(dim=t[0]))."""
    if isinstance(value, Variable):
        return not value.is_text and value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)


def _is_ints(value: Any) -> bool:
    """An int, or a list or tuple of ints (a shape, or several dimensions)."""
    if isinstance(value, (list, tuple)):
        return all(_is_int(item) for item in value)
    return _is_int(value)


def _is_dtype(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (numbers.Number, Variable, np.ndarray)):
        return False
    try:
        np.dtype(value)
    except (TypeError, ValueError):
        return False
    return True


_MAKE = "Make one with minigrad.tensor(...)."
VARIABLE = Kind("a Variable", _is_variable, _MAKE)
VARIABLE_OR_NUMBER = Kind(
    "a Variable or a number",
    lambda v: _is_variable(v) or _is_number(v) or (isinstance(v, np.ndarray) and _is_data(v)),
)
OPTIONAL_VARIABLE_OR_NUMBER = Kind(
    "a Variable, a number or None", lambda v: v is None or VARIABLE_OR_NUMBER.test(v)
)
VARIABLES = Kind(
    "a list or tuple of Variables",
    lambda v: isinstance(v, (list, tuple)) and all(_is_variable(item) for item in v),
    _MAKE,
)
INDEX = Kind("a Variable or a NumPy array", lambda v: _is_variable(v) or isinstance(v, np.ndarray))
ARRAY = Kind(
    "a Variable (not a number)",
    lambda v: _is_variable(v) or (isinstance(v, (np.ndarray, list, tuple)) and _is_data(v)),
    "For a product with a number, use * instead.",
)
# PyTorch reads a one-element integer Tensor where it wants an int (x.triu(torch.tensor(1))).
INT = Kind(
    "an int",
    lambda v: _is_int(v) or (_is_variable(v) and v.numel() == 1 and v.dtype.kind in "iu"),
)


DATA = Kind("a number, a nested list of numbers, an array or a Variable", _is_data)
OPTIONAL_INT = Kind("an int or None", lambda v: v is None or _is_int(v))
INTS = Kind("an int or a tuple of ints", _is_ints)
DIMS = Kind("an int, a tuple of ints or None", lambda v: v is None or _is_ints(v))
BOOL = Kind("True or False", lambda v: isinstance(v, (bool, np.bool_)))
OPTIONAL_BOOL = Kind("True, False or None", lambda v: v is None or isinstance(v, (bool, np.bool_)))
# PyTorch reads a 0-d Tensor where it wants a float (x.normal_(0, torch.tensor(2.0))).
FLOAT = Kind(
    "a number",
    lambda v: (_is_number(v) and not isinstance(v, complex)) or (_is_variable(v) and v.ndim == 0),
)
OPTIONAL_FLOAT = Kind("a number or None", lambda v: v is None or FLOAT.test(v))
TEXT = Kind("a string", lambda v: isinstance(v, str))
OPTIONAL_TEXT = Kind("a string or None", lambda v: v is None or isinstance(v, str))
DTYPE = Kind("a dtype such as minigrad.float32, or None", _is_dtype)

# The kind of an argument from its annotation...
BY_ANNOTATION = {
    "Variable": VARIABLE,
    "Variable | None": Kind("a Variable or None", lambda v: v is None or _is_variable(v), _MAKE),
    "int": INT,
    "int | None": OPTIONAL_INT,
    "bool": BOOL,
    "bool | None": OPTIONAL_BOOL,
    "float": FLOAT,
    "float | None": OPTIONAL_FLOAT,
    "str": TEXT,
    "str | None": OPTIONAL_TEXT,
    "int | Variable | None": Kind(
        "an int, a Variable or None", lambda v: v is None or _is_int(v) or _is_variable(v)
    ),
    "list[Variable] | tuple[Variable, ...]": VARIABLES,
    "int | tuple[int, ...] | list[int]": INTS,
}

# ...or, where it is annotated `Any`, from its name (PyTorch uses the same names).
BY_NAME = {
    **dict.fromkeys(
        ("x", "other", "mat1", "mat2", "vec", "vec2", "source", "src", "y", "exponent"),
        VARIABLE_OR_NUMBER,
    ),
    **dict.fromkeys(("min", "max"), OPTIONAL_VARIABLE_OR_NUMBER),
    **dict.fromkeys(("alpha", "beta", "value", "fill_value"), VARIABLE_OR_NUMBER),
    **dict.fromkeys(("dim", "axis"), DIMS),
    **dict.fromkeys(("dims", "shape", "sizes", "size", "repeats", "shifts"), INTS),
    **dict.fromkeys(("index", "mask", "condition", "target", "tensor"), INDEX),
    "pad": INTS,
    "split_size_or_sections": INTS,
    "normalized_shape": INTS,
    "dtype": DTYPE,
    "data": DATA,
    "weight": Kind(
        "a Variable or None",
        lambda v: v is None or (isinstance(v, (Variable, np.ndarray, list, tuple)) and _is_data(v)),
        _MAKE,
    ),
    "operands": Kind(
        "Variables, or one list of them",
        lambda v: _is_variable(v) or VARIABLES.test(v),
        _MAKE,
    ),
}


# The products of vectors and matrices take no plain number as an operand (PyTorch's
# TypeError); their scale factors (alpha, beta) stay numbers.
PRODUCTS = ("matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "inner", "addmm")
OPERANDS = ("x", "other", "mat1", "mat2", "vec", "vec2")


# The functions whose first argument (input) PyTorch takes as a number too: add(2, x);
# pow(2, x) and the bitwise ones only when the second is a Variable. Every other function
# (exp, sum, ...) refuses a number or a list there: a Variable (or x.data) goes first.
NUMBER_FIRST = ("add", "sub", "subtract", "mul", "div", "true_divide")
NUMBER_BEFORE_VARIABLE = (
    "pow", "bitwise_and", "bitwise_or", "bitwise_xor", "remainder", "xlogy",
)


def _first_refused(op: str, args: tuple, kwargs: dict, first: str) -> Any:
    """The function `op`'s first argument (named `first`) if PyTorch refuses it (it is no
    Variable), or None when the call may go on."""
    if args:
        value = args[0]
    elif first in kwargs:
        value = kwargs[first]
    else:
        return None
    if isinstance(value, (Variable, np.ndarray)):
        # An array is let through: minigrad's x.data is one, and PyTorch code passes x.data
        # where PyTorch's is a tensor (torch.max(outputs.data, 1)).
        return None
    if _is_number(value):
        if op in NUMBER_FIRST:
            return None
        second = args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("exponent"))
        if op in NUMBER_BEFORE_VARIABLE and isinstance(second, Variable):
            return None
    return value


def kinds_of(run: Callable, op: str) -> dict[str, Kind]:
    """The kind of each argument of `run` (the op `op`) that minigrad can check."""
    kinds = {}
    for name, parameter in inspect.signature(run).parameters.items():
        annotation = str(parameter.annotation)
        kind = BY_ANNOTATION.get(annotation)
        if kind is None and annotation in ("Any", "Any | None"):
            kind = BY_NAME.get(name)
        if kind is VARIABLE_OR_NUMBER and op in PRODUCTS and name in OPERANDS:
            kind = ARRAY
        if kind is VARIABLE_OR_NUMBER and op.endswith("_as") and name == "other":
            kind = VARIABLE  # expand_as, view_as, type_as, reshape_as: another Variable
        if kind is not None:
            kinds[name] = kind
    return kinds


def _described(value: Any) -> str:
    """How the message names what was received: its type, and a short repr."""
    if isinstance(value, Variable):
        if value.is_text:
            return "a text Variable"
        return f"a Variable of dtype {value.dtype} and shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)) and any(_is_text(item) for item in value):
        return f"a {type(value).__name__} holding text Variables"
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{type(value).__name__} {shown}"


def _plain(signature: inspect.Signature) -> inspect.Signature:
    """The signature without its annotations: `(x, dim=None)`, as a message shows it."""
    empty = inspect.Parameter.empty
    parameters = [p.replace(annotation=empty) for p in signature.parameters.values()]
    return signature.replace(parameters=parameters, return_annotation=empty)


def bad_argument(
    run: Callable, where: str, kinds: dict, args: tuple, kwargs: dict, is_method: bool
) -> str | None:
    """The message for the first argument of the wrong kind, or None when all are fine."""
    signature = inspect.signature(run)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        return f"{where}: {error}. It takes {where[:-2]}{_plain(signature)}."
    # PyTorch counts a method's arguments after self; self is a Variable (text ones too:
    # a method says itself what it does with text).
    first = 0 if is_method else 1
    for position, (name, value) in enumerate(bound.arguments.items(), start=first):
        kind = kinds.get(name)
        if kind is None or position == 0:
            continue
        several = signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL
        for item in value if several else (value,):
            if kind.test(item):
                continue
            if several and kind is INTS and isinstance(item, (list, tuple)):
                continue  # view((2, 3)) as well as view(2, 3)
            message = (
                f"{where}: argument '{name}' (position {position}) must be {kind.what}, "
                f"but got {_described(item)}."
            )
            if _is_text(item) or "text Variables" in message:
                return message + " Text Variables go to the textual Functions (minigrad.text)."
            return f"{message} {kind.hint}".rstrip()
    return None


def _renamed(
    names: list[str], star: str | None, args: tuple, kwargs: dict, is_method: bool
) -> tuple[tuple, dict]:
    """PyTorch's keywords under the names the function gives them (`names`, its parameters;
    `star`, the name of its *args): `input=` and `other=` (the first and second argument),
    and a keyword naming the *args (flip(x, dims=[0])); NumPy's `keepdims=` where the
    function takes `keepdim` (PyTorch 2 accepts both on its reductions)."""
    if not ("input" in kwargs or "other" in kwargs or star in kwargs or "keepdims" in kwargs):
        return args, kwargs  # the usual call: nothing to rename
    renamed = dict(kwargs)
    if "keepdims" in renamed and "keepdim" in names and "keepdim" not in renamed:
        renamed["keepdim"] = renamed.pop("keepdims")
    if "input" in renamed and "input" not in names and not is_method:
        # input is the operand: x where it comes after another argument (where(condition, x))
        renamed["x" if "x" in names else names[0]] = renamed.pop("input")
    if "other" in renamed and "other" not in names and len(names) > 1:
        renamed[names[1]] = renamed.pop("other")  # names[0] is the Variable, self
    if star is not None and star in renamed:
        args = (*args, renamed.pop(star))
    return args, renamed


def write_out(where: str, result: Any, out: Any) -> Variable:
    """`out=`: write `result` into the Variable `out` (resized if need be) and return out."""
    if not isinstance(out, Variable) or out.is_text:
        raise TypeError(
            f"{where}: argument 'out' must be a numeric Variable, but got {_described(out)}. "
            "Make one first, e.g. out = minigrad.empty(shape)."
        )
    if not isinstance(result, Variable):
        raise TypeError(f"{where}: returns {type(result).__name__}, which out= cannot hold.")
    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{where}: functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. Drop out= and use "
            "the returned Variable, or call it under minigrad.no_grad()."
        )
    if not np.can_cast(result.dtype, out.dtype, casting="same_kind"):
        raise RuntimeError(
            f"{where}: result type {result.dtype} can't be cast to the desired output type "
            f"{out.dtype} of out=. Pass an out of dtype {result.dtype}."
        )
    with grad_mode.no_grad():
        if tuple(out.shape) != tuple(result.shape):
            if out.numel() > 0:
                warnings.warn(
                    f"{where}: out= had shape {tuple(out.shape)}, which does not match the "
                    f"result's shape {tuple(result.shape)}; it was resized.",
                    UserWarning,
                    stacklevel=3,
                )
            out.data = np.empty(result.shape, dtype=out.dtype)
        out.copy_(result)
    return out


def _holds_data_array(args: tuple, kwargs: dict) -> bool:
    """Whether a call got an x.data (a DataArray), alone or in a list or tuple."""
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        if any(type(item) is DataArray for item in items):
            return True
    return False


def _data_as_variables(values: Any) -> Any:
    """args or kwargs with each x.data as a Variable over the same memory."""
    if isinstance(values, dict):
        return {key: _data_as_variables(value) for key, value in values.items()}
    if isinstance(values, (list, tuple)):
        return type(values)(_data_as_variables(value) for value in values)
    if type(values) is DataArray:
        return Variable._make(np.asarray(values))
    return values


def checked(
    run: Callable, where: str, *, is_method: bool = False, takes_out: bool = True
) -> Callable:
    """`run` with PyTorch's keywords, `out=` (if it takes_out), and a TypeError naming a bad
    argument. `where` names it in messages: "minigrad.add()" or "Variable.add()"."""
    op = where.split(".")[1][:-2]
    kinds = kinds_of(run, op)
    # Read once here, not at each call: inspect.signature costs tens of microseconds.
    parameters = inspect.signature(run).parameters
    names = list(parameters)
    star = next((n for n, p in parameters.items() if p.kind is p.VAR_POSITIONAL), None)
    # minigrad.exp(x) and the like want a Variable first, as PyTorch's functions do.
    wants_variable = not is_method and where == f"minigrad.{op}()" and names[:1] == ["x"]
    # Flags given by keyword (keepdim=, equal_nan=) are checked even when the call would
    # work: a string or a Variable there would otherwise count as true, where PyTorch
    # refuses it. One membership test per flag, only for calls with keywords.
    flags = tuple(name for name, kind in kinds.items() if kind is BOOL)

    @functools.wraps(run)
    def call(*args: Any, **kwargs: Any) -> Any:
        out = None
        if kwargs:
            args, kwargs = _renamed(names, star, args, kwargs, is_method)
            if "out" in kwargs and takes_out and not is_method:
                out = kwargs.pop("out")
            for flag in flags:
                if flag in kwargs and not isinstance(kwargs[flag], (bool, np.bool_)):
                    raise TypeError(
                        f"{where}: argument '{flag}' must be True or False, but got "
                        f"{_described(kwargs[flag])}."
                    )
        if wants_variable and not (args and isinstance(args[0], Variable)):
            refused = _first_refused(op, args, kwargs, names[0])
            if refused is not None:
                raise TypeError(
                    f"{where}: argument '{names[0]}' (position 1) must be a Variable, but got "
                    f"{_described(refused)}. {_MAKE}"
                )
        try:
            result = run(*args, **kwargs)
        except Exception:
            if _holds_data_array(args, kwargs):
                # F.softmax(x.data): PyTorch's .data is a Tensor, so here it is a Variable.
                return call(*_data_as_variables(args), **_data_as_variables(kwargs))
            # An argument of the wrong kind explains the failure better than whatever it
            # caused inside, as PyTorch checks kinds before it runs anything.
            message = bad_argument(run, where, kinds, args, kwargs, is_method)
            if message is None:
                raise
            raise TypeError(message) from None
        return result if out is None else write_out(where, result, out)

    def diagnose(*args: Any, **kwargs: Any) -> str | None:
        """The message for an argument of the wrong kind in this call, or None."""
        args, kwargs = _renamed(names, star, args, kwargs, is_method)
        kwargs.pop("out", None)
        return bad_argument(run, where, kinds, args, kwargs, is_method)

    call.bad_argument = diagnose
    return call


def checks(module: str) -> Callable[[Callable], Callable]:
    """A decorator: a module's public function, `checked` as `module.name()`, without out=."""

    def decorate(run: Callable) -> Callable:
        return checked(run, f"{module}.{run.__name__}()", takes_out=False)

    return decorate

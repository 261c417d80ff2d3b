"""Arithmetic with NumPy broadcasting: + - * / ** and unary minus.

Each backward returns the gradient at the output's (broadcast) shape; apply sums it back
to each input's shape, so these formulas stay the textbook ones.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minigrad.core import fast_path
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import DeviceMismatchError
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import numeric, save_operands, saved_operands, shape_of
from minigrad.ops.promotion import promoted_arrays, promoted_dtype
from minigrad.ops.table import register


def _broadcast(op: str, compute: Any, a: Any, b: Any) -> Any:
    if type(a) in fast_path.PLAIN and type(b) in fast_path.PLAIN:
        x, y = a._data, b._data
        if type(x) is np.ndarray and type(y) is np.ndarray:
            if x.dtype is not y.dtype:
                x, y = _promoted(x, y)
            if x.shape or y.shape or x.dtype is not _FLOAT64 or y.dtype is not _FLOAT64:
                return _compute(op, compute, x, y)  # the usual case: two arrays
    # Two 0-d float64 values (or one and a Python number): a shortcut in fast_path.py.
    on_floats = fast_path.on_floats(compute, a, b)
    if on_floats is not None:
        return on_floats
    return _compute(op, compute, numeric(a, op), numeric(b, op))


def _promoted(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays in PyTorch's result dtype (ops/promotion.py): int64 and float32 give
    float32, and a float32 matrix with a 0-d float64 stays float32 (NumPy: float64)."""
    return promoted_arrays(x, y)


def _compute(op: str, compute: Any, a: Any, b: Any) -> Any:
    try:
        return compute(a, b)
    except DeviceMismatchError:
        raise  # cpu and cuda operands: named by the caller (Function.apply)
    except TypeError:
        # NumPy has no such loop for these dtypes: bools subtracted, say.
        raise OpError(
            f"{op} is not supported between dtypes {_dtype(a)} and {_dtype(b)}. For masks use "
            f"& | ^ ~ (or minigrad.logical_xor); for numbers convert first, e.g. mask.float()."
        ) from None
    except ValueError as error:
        if "broadcast" not in str(error):
            raise OpError(f"{op} of shapes {shape_of(a)} and {shape_of(b)}: {error}") from None
        raise OpError(
            f"{op}: shapes {shape_of(a)} and {shape_of(b)} cannot be broadcast together; "
            f"each dimension must match or be 1 (counting from the right)."
        ) from None


def _dtype(value: Any) -> str:
    return str(getattr(value, "dtype", type(value).__name__))


def _is_bool(value: Any) -> bool:
    """Whether an operand is a bool (a Variable, an array or a Python bool): two cheap tests."""
    return type(value) is bool or getattr(getattr(value, "_data", value), "dtype", None) == _BOOL


def _kind(value: Any) -> str:
    """An operand's dtype kind: "b" (bool), "i" (integer) or "f" (float)."""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, (int, np.integer)):
        return "i"
    kind = getattr(getattr(value, "_data", value), "dtype", np.dtype(float)).kind
    return "i" if kind == "u" else kind


_FLOAT64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)


class Add(Function):
    """z = a + b;  dz/da = 1, dz/db = 1."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)
    # A Python number operand (x * 2) has an entry in next_functions, as PyTorch's wrapped number
    lists_number_operands = True

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        return _broadcast("add", np.add, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        needs_a, needs_b = ctx.needs_input_grad
        return (grad if needs_a else None), (grad if needs_b else None)


class Sub(Function):
    """z = a - b;  dz/da = 1, dz/db = -1."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)
    # A Python number operand (x * 2) has an entry in next_functions, as PyTorch's wrapped number
    lists_number_operands = True

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        _refuse_bool_subtraction(a, b)
        return _broadcast("sub", np.subtract, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        needs_a, needs_b = ctx.needs_input_grad
        return (grad if needs_a else None), (-grad if needs_b else None)


class Mul(Function):
    """z = a * b;  dz/da = b, dz/db = a."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)
    # A Python number operand (x * 2) has an entry in next_functions, as PyTorch's wrapped number
    lists_number_operands = True

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        save_operands(ctx, a, b)  # a number (x * 2) is kept on ctx
        return _broadcast("mul", np.multiply, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = saved_operands(ctx)
        grad_a = grad * b if ctx.needs_input_grad[0] else None
        grad_b = grad * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """z = a / b;  dz/da = 1 / b, dz/db = -a / b**2."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)
    # A Python number operand (x * 2) has an entry in next_functions, as PyTorch's wrapped number
    lists_number_operands = True

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        save_operands(ctx, a, b)  # a number (x * 2) is kept on ctx
        return _broadcast("div", np.true_divide, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = saved_operands(ctx)
        grad_a = grad / b if ctx.needs_input_grad[0] else None
        grad_b = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """z = a ** b;  dz/da = b * a**(b-1), dz/db = a**b * log(a).

    At the edges, as in PyTorch: dz/da is 0 where a == b == 0, and dz/db is 0 where a == 0.
    """

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        save_operands(ctx, a, b)  # a number (x * 2) is kept on ctx
        if type(b) is float or (type(b) is int and b >= 0):  # x ** 2, x ** 0.5: usual
            return _broadcast("pow", np.power, a, b)
        return _broadcast("pow", _power_for(a, b), a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = saved_operands(ctx)
        grad_a = grad_b = None
        if ctx.needs_input_grad[0] and isinstance(b, (int, float)) and b != 0:
            grad_a = grad * b * a ** (b - 1)  # the usual x ** 2: no 0 ** -1 to avoid
        elif ctx.needs_input_grad[0]:
            # Where a == b == 0 use the exponent 1 instead: b * a**1 is then 0, not 0 * inf.
            both_zero = np.equal(numeric(b, "pow"), 0) & np.equal(numeric(a, "pow"), 0)
            grad_a = grad * b * a ** (b - 1 + both_zero)
        if ctx.needs_input_grad[1]:
            # Where a == 0 take log(1) = 0 instead of log(0) = -inf.
            a_is_zero = np.equal(numeric(a, "pow"), 0)
            log_a = (a + a_is_zero).log() if isinstance(a, Variable) else np.log(a + a_is_zero)
            grad_b = grad * a**b * log_a
        return grad_a, grad_b


def _power_for(a: Any, b: Any) -> Any:
    """np.power, or what PyTorch's dtypes call for instead: bools to a bool power are not
    implemented (but for a Python bool exponent, x ** 1 or x ** 0, kept bool), and integers
    to integer Variable powers allow negative exponents."""
    kind_a, kind_b = _kind(a), _kind(b)
    if kind_a == "b" and kind_b == "b":
        if type(b) is bool:
            return _bool_power
        raise NotImplementedError(
            "pow of a bool Variable to a bool power is not implemented, as in PyTorch; "
            "convert first, e.g. x.long() ** y.long()."
        )
    if kind_a in "bi" and kind_b in "bi" and not isinstance(b, (int, np.integer)):
        return _integer_power
    if kind_a in "bi" and isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b < 0:
        # PyTorch refuses the exponent itself, even for an empty x (NumPy only for elements).
        raise OpError(
            f"Integers to negative integer powers are not allowed (x ** {b} with x of dtype "
            f"{'bool' if kind_a == 'b' else 'integer'}); convert first: x.double() ** {b}."
        )
    return np.power


def _bool_power(x: Any, y: bool) -> Any:
    """A bool Variable to the power True (itself) or False (all True), still bool."""
    return np.power(x, y).astype(np.bool_)


def _integer_power(x: Any, y: Any) -> Any:
    """x ** y on integers, with PyTorch's answer to a negative exponent where NumPy raises:
    1 for x = 1, 1 or -1 for x = -1 (by the exponent's parity), 0 otherwise."""
    negative = np.less(y, 0)
    if not negative.any():
        return np.power(x, y)
    result = np.power(x, np.maximum(y, 0))
    odd = np.remainder(y, 2) == 1
    inverse = np.where(np.equal(x, 1), 1, np.where(np.equal(x, -1), np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, result).astype(result.dtype)


class RoundedDiv(Function):
    """z = a / b rounded toward zero ("trunc") or down ("floor");  dz/da = dz/db = 0.

    A step function of its inputs: its derivative is 0 wherever it exists, as in PyTorch.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any, rounding_mode: str) -> np.ndarray:
        _integer_division_by_zero(a, b, "div")
        if rounding_mode == "floor":
            return _broadcast("div", np.floor_divide, a, b)
        if np.result_type(numeric(a, "div"), numeric(b, "div")).kind in "iub":
            return _broadcast("div", _truncated_quotient, a, b)  # integers stay integers
        return np.trunc(_broadcast("div", np.true_divide, a, b))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        zeros = grad * 0
        needs_a, needs_b, _ = ctx.needs_input_grad
        return (zeros if needs_a else None), (zeros if needs_b else None), None


def _truncated_quotient(x: Any, y: Any) -> Any:
    """x / y rounded toward zero, exact for integers (no trip through floats): the floor
    quotient, plus 1 where it is negative and the division is not exact."""
    floor = np.floor_divide(x, y)
    return floor + ((floor < 0) & (floor * y != x))


def _integer_division_by_zero(a: Any, b: Any, op: str) -> None:
    """PyTorch's RuntimeError for an integer division by zero (floats give nan instead)."""
    dividend, divisor = numeric(a, op), numeric(b, op)
    result = np.result_type(dividend, divisor)
    if np.size(dividend) == 0:
        return  # nothing is divided
    if result.kind in "iu" and np.any(np.equal(divisor, 0)):
        raise RuntimeError(
            f"ZeroDivisionError: {op}() of integers by zero; the divisor holds a 0. Make the "
            f"divisor non-zero, or convert to floats first (x.double()) to get nan there."
        )


def _refuse_two_masks(a: Any, b: Any, op: str) -> None:
    """Two masks have no remainder (PyTorch's NotImplementedError); a list is no operand."""
    for operand in (a, b):
        if isinstance(operand, (list, tuple)):
            raise TypeError(
                f"{op}(): the operands must be Variables or numbers; got a "
                f"{type(operand).__name__}. Make a Variable first: "
                f"minigrad.tensor({operand!r:.30})."
            )
    if _is_bool(a) and _is_bool(b):
        raise NotImplementedError(
            f'"{op}_cpu" not implemented for \'Bool\': the remainder of two masks has no '
            f"meaning; convert one to numbers first, e.g. mask.long()."
        )


def _floored_remainder(a: Any, b: Any) -> Any:
    """a - b * floor(a / b): the remainder takes the divisor's sign (Python's a % b).

    From fmod (which keeps the dividend's sign): where the two signs differ and the result
    is not 0, one more b brings it to the divisor's side. Integers use NumPy's remainder,
    already Python's rule."""
    if np.result_type(a, b).kind in "biu":
        return np.remainder(a, b)
    truncated = np.fmod(a, b)
    across = (truncated != 0) & ((truncated < 0) != (np.asarray(b) < 0))
    return np.where(across, truncated + b, truncated).astype(truncated.dtype)


def _modulo_forward(ctx: FunctionCtx, a: Any, b: Any, op: str, compute: Any) -> np.ndarray:
    """remainder's and fmod's forward: PyTorch's checks, then compute(a, b) broadcast."""
    _refuse_two_masks(a, b, op)
    _integer_division_by_zero(a, b, op)
    save_operands(ctx, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):  # a float modulo 0 is nan, silently
        return np.asarray(_broadcast(op, compute, a, b))


def _modulo_backward(ctx: FunctionCtx, grad: Variable, rounding: str) -> tuple:
    """dz/da = 1, dz/db = -round(a / b), rounded as the forward's quotient was."""
    a, b = saved_operands(ctx)
    grad_b = None
    if ctx.needs_input_grad[1]:
        grad_b = -grad * RoundedDiv.apply(a, b, rounding)
    return (grad if ctx.needs_input_grad[0] else None), grad_b


class Remainder(Function):
    """z = a - b * floor(a / b) (the sign of b, Python's %);  dz/da = 1,
    dz/db = -floor(a / b)."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        return _modulo_forward(ctx, a, b, "remainder", _floored_remainder)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _modulo_backward(ctx, grad, "floor")


class Fmod(Function):
    """z = a - b * trunc(a / b) (the sign of a, C's fmod);  dz/da = 1,
    dz/db = -trunc(a / b)."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        return _modulo_forward(ctx, a, b, "fmod", np.fmod)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _modulo_backward(ctx, grad, "trunc")


class Neg(Function):
    """z = -a;  dz/da = -1."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, a: Variable) -> np.ndarray:
        data = numeric(a, "neg")
        if isinstance(data, (bool, np.bool_)) or getattr(data, "dtype", None) == np.bool_:
            raise NotImplementedError(
                "Negation, the `-` operator, on a bool Variable is not supported. To invert "
                "a mask, use the `~` operator or minigrad.logical_not(); for numbers, "
                "convert first: -mask.float()."
            )
        return np.negative(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return -grad


# --------------------------------------------------------------------------- the op table


def _refuse_bool_subtraction(a: Any, b: Any) -> None:
    """PyTorch's NotImplementedError for a bool operand of -, before anything else."""
    if _is_bool(a) or _is_bool(b):
        raise NotImplementedError(
            "Subtraction, the `-` operator, with a bool Variable is not supported. To "
            "invert a mask, use the `~` operator or minigrad.logical_not(); for a mask "
            "difference, minigrad.logical_xor(); for numbers, convert first: mask.long()."
        )


def _refuse_sequence(other: Any, op: str) -> None:
    """PyTorch's add(x, other) takes a Tensor or a number there, not a list or a tuple."""
    if isinstance(other, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'other' must be a Variable or a number, not "
            f"{type(other).__name__}. Make one first: minigrad.tensor({other!r})."
        )


class _DefaultOne(int):
    """alpha's default, 1, told apart from an alpha=1 the caller wrote: PyTorch refuses
    add(x, 2, y, alpha=1) as it refuses alpha=3 there."""

    def __repr__(self) -> str:
        return "1"


ALPHA_DEFAULT = _DefaultOne(1)


def _legacy_alpha(other: Any, legacy: tuple, alpha: Any, op: str) -> tuple[Any, Any]:
    """(other, alpha) from the old spelling add(x, alpha, other), which PyTorch still takes
    (with a warning): old optimizer code writes p.data.add_(-lr, grad)."""
    if len(legacy) > 1 or alpha is not ALPHA_DEFAULT:
        raise TypeError(
            f"{op}() takes {op}(x, other, *, alpha=1); the old spelling {op}(x, alpha, other) "
            f"takes no more arguments. Write {op}(x, other, alpha=alpha)."
        )
    if isinstance(other, Variable) and other.ndim != 0:
        raise TypeError(
            f"{op}(x, alpha, other): alpha must be a number, but got a Variable of shape "
            f"{tuple(other.shape)}. Write {op}(x, other, alpha=alpha) with a number alpha."
        )
    warnings.warn(
        f"{op}(x, alpha, other) is deprecated (as in PyTorch); write {op}(x, other, "
        f"alpha=alpha) instead.",
        UserWarning,
        stacklevel=4,
    )
    return legacy[0], other


def _scaled(x: Any, other: Any, alpha: Any, op: str) -> Any:
    """alpha * other, skipping the multiplication for the usual alpha = 1."""
    if alpha is ALPHA_DEFAULT or (type(alpha) is int and alpha == 1):
        return other
    alpha = _checked_alpha(x, other, alpha, op)
    if isinstance(other, bool) and isinstance(alpha, (bool, np.bool_)):
        return other and bool(alpha)  # a mask plus True * True stays a mask
    if isinstance(other, (bool, int, float)):
        # A Python number stays one, so it takes x's dtype (float32 - 0.5 * 2 is float32,
        # float32 + 0.5 * True too).
        return other * alpha
    # alpha takes no part in the result's dtype (PyTorch): float32 + 0.5 * mask is float32,
    # and float64 + 0.5 * float32 multiplies in float64.
    wanted = promoted_dtype(x, other)
    if isinstance(other, Variable) and other.dtype != wanted:
        other = other.to(wanted)
    return Mul.apply(other, alpha)


def _checked_alpha(x: Any, other: Any, alpha: Any, op: str) -> Any:
    """alpha as a number, refused as PyTorch refuses it: a bool for a result that is not
    bool, a float for an integer result."""
    if isinstance(alpha, Variable) and not alpha.is_text and alpha.ndim == 0:
        alpha = alpha.item()
    if not isinstance(alpha, (bool, int, float, np.number, np.bool_)):
        raise TypeError(
            f"{op}(): argument 'alpha' must be a number, but got {type(alpha).__name__}. "
            f"Pass a Python number, e.g. {op}(other, alpha=2)."
        )
    kinds = {_kind(x), _kind(other)}
    result = "f" if "f" in kinds else "i" if "i" in kinds else "b"  # the promoted kind
    if isinstance(alpha, (bool, np.bool_)) and result != "b":
        raise RuntimeError(
            f"{op}(): Boolean alpha only supported for Boolean results; got alpha={alpha} for "
            f"a result of kind {'float' if result == 'f' else 'int'}. Pass alpha={int(alpha)}."
        )
    if isinstance(alpha, (float, np.floating)) and result != "f":
        raise RuntimeError(
            f"{op}(): For integral input tensors, argument alpha must not be a floating point "
            f"number; got alpha={alpha}. Convert first (x.float()) or pass an int alpha."
        )
    return alpha


@register("add", inplace=True)
def add(x: Any, other: Any, *legacy: Any, alpha: Any = ALPHA_DEFAULT) -> Variable:
    """x + alpha * other. (`legacy`: PyTorch's deprecated add(x, alpha, other).)"""
    if legacy:
        other, alpha = _legacy_alpha(other, legacy, alpha, "add")
    _refuse_sequence(other, "add")
    return Add.apply(x, _scaled(x, other, alpha, "add"))


def _is_scalar(value: Any) -> bool:
    """A number, or a 0-d numeric Variable: what PyTorch's Scalar arguments take."""
    if isinstance(value, Variable):
        return not value.is_text and value.ndim == 0
    return isinstance(value, (bool, int, float, np.number, np.bool_))


def _alpha_by_position(other: Any, rest: tuple, alpha: Any, op: str) -> Any:
    """alpha from PyTorch's subtract(x, other, alpha), which takes it by position only when
    other and alpha are both numbers."""
    if len(rest) > 1 or not (_is_scalar(other) and _is_scalar(rest[0])):
        raise TypeError(
            f"{op}() takes {op}(x, other, *, alpha=1), or {op}(x, other, alpha) where other and "
            f"alpha are both numbers; got {len(rest) + 1} positional arguments after x."
        )
    if alpha is not ALPHA_DEFAULT:
        raise TypeError(f"{op}() got multiple values for argument 'alpha'.")
    return rest[0]


@register("sub", inplace=True)
def sub(x: Any, other: Any, *legacy: Any, alpha: Any = ALPHA_DEFAULT) -> Variable:
    """x - alpha * other. (`legacy`: PyTorch's deprecated sub(x, alpha, other).)"""
    if legacy:  # PyTorch picks the deprecated spelling for two numbers too
        other, alpha = _legacy_alpha(other, legacy, alpha, "sub")
    _refuse_sequence(other, "sub")
    _refuse_bool_subtraction(x, other)  # before alpha is checked, as in PyTorch
    return Sub.apply(x, _scaled(x, other, alpha, "sub"))


@register("subtract", inplace=True)
def subtract(x: Any, other: Any, *number_alpha: Any, alpha: Any = ALPHA_DEFAULT) -> Variable:
    """x - alpha * other, as sub; alpha goes by position only after a number other,
    subtract(x, 2, 3), PyTorch's rule (sub's deprecated sub(x, alpha, other) is not here)."""
    if number_alpha:
        alpha = _alpha_by_position(other, number_alpha, alpha, "subtract")
    return sub(x, other, alpha=alpha)


@register("mul", inplace=True, aliases=("multiply",))
def mul(x: Any, other: Any) -> Variable:
    _refuse_sequence(other, "mul")
    return Mul.apply(x, other)


@register("div", inplace=True, aliases=("divide",))
def div(x: Any, other: Any, *, rounding_mode: str | None = None) -> Variable:
    """x / other; rounding_mode "trunc" or "floor" rounds the quotient (zero gradient)."""
    _refuse_sequence(other, "div")
    if rounding_mode is None:
        return Div.apply(x, other)
    if rounding_mode not in ("trunc", "floor"):
        raise OpError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"{rounding_mode!r}."
        )
    if _is_bool(x) and _is_bool(other):
        raise NotImplementedError(
            f'"div_{rounding_mode}_cpu" not implemented for \'Bool\': a rounded quotient of two '
            f"masks has no meaning; convert one to numbers first, e.g. mask.long()."
        )
    return RoundedDiv.apply(x, other, rounding_mode)


@register("true_divide", inplace=True)
def true_divide(x: Any, other: Any) -> Variable:
    """x / other, always a float division (div without rounding_mode, as in PyTorch)."""
    return Div.apply(x, other)


@register("pow", inplace=True)
def power(x: Any, exponent: Any) -> Variable:
    return Pow.apply(x, exponent)


@register("neg", inplace=True, aliases=("negative",))
def neg(x: Any) -> Variable:
    return Neg.apply(x)


@register("remainder", inplace=True)
def remainder(x: Any, other: Any) -> Variable:
    """x % other with the sign of other (Python's rule): remainder(-5, 3) is 1."""
    return Remainder.apply(x, other)


@register("fmod", inplace=True)
def fmod(x: Any, other: Any) -> Variable:
    """The remainder of x / other with the sign of x (C's fmod): fmod(-5, 3) is -2."""
    return Fmod.apply(x, other)

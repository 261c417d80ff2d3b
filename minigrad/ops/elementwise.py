"""Elementwise functions: each output element is a function of the inputs' elements at the
same place (broadcast). A new elementwise op goes here.

First the basics of one Variable (exp, log, tanh, sigmoid, relu, sqrt, abs, clone), then
the rest (trigonometry, rounding, clamping, maximum and minimum, where, masked_fill).

Those whose derivative is easiest to write from the output (exp, tanh, sigmoid, sqrt) save
the output, using the setup_context style: forward(x), then setup_context sees the output.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import array_of, check_representable, numeric, shape_of
from minigrad.ops.promotion import promoted_arrays, promoted_dtype
from minigrad.ops.reduction import UNSET
from minigrad.ops.table import register


def _float_of_mask(data: Any) -> Any:
    """A bool operand as float64, the default float: a float function of a mask is computed
    in it, as PyTorch does (NumPy alone would pick float16). Other dtypes pass unchanged."""
    if getattr(data, "dtype", None) == np.bool_:
        return data.astype(np.float64)
    return data


def _refuse_mask(data: Any, op: str) -> Any:
    """data, unless it is bool: PyTorch has no relu, floor, ceil or round of a mask."""
    if getattr(data, "dtype", None) == np.bool_:
        raise NotImplementedError(
            f"{op} of a bool Variable is not supported (nor in PyTorch); convert the mask to "
            f"numbers first, e.g. mask.float().{op}()."
        )
    return data


class Exp(Function):
    """y = exp(x);  dy/dx = y."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.exp(_float_of_mask(numeric(x, "exp")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * y


class Log(Function):
    """y = log(x);  dy/dx = 1 / x."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.log(_float_of_mask(numeric(x, "log")))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad / x


class Tanh(Function):
    """y = tanh(x);  dy/dx = 1 - y**2."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.tanh(_float_of_mask(numeric(x, "tanh")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x));  dy/dx = y * (1 - y)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        # The tanh form of the same function never overflows exp for large |x|.
        return 0.5 * (1 + np.tanh(0.5 * numeric(x, "sigmoid")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


class Relu(Function):
    """y = max(x, 0);  dy/dx = 1 where x > 0, else 0."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.maximum(_refuse_mask(numeric(x, "relu"), "relu"), 0)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return ReluBackward.apply(grad, y)


class ReluBackward(Function):
    """g = grad where y > 0, else 0: relu's backward as a Function of (grad, y), so that a
    double backward reaches y (with derivative 0), as PyTorch's threshold_backward does:
    a gradient penalty then gives the parameters before a relu zeros, not None."""

    @staticmethod
    def forward(ctx: FunctionCtx, grad: Variable, y: Variable) -> np.ndarray:
        positive = numeric(y, "relu") > 0
        ctx.save_for_backward(positive)
        return numeric(grad, "relu") * positive

    @staticmethod
    def backward(ctx: FunctionCtx, grad_grad: Variable) -> tuple:
        (positive,) = ctx.saved_tensors
        grad_y = Variable._make(np.zeros(positive.shape)) if ctx.needs_input_grad[1] else None
        return grad_grad * positive, grad_y


class Sqrt(Function):
    """y = sqrt(x);  dy/dx = 1 / (2 y)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.sqrt(_float_of_mask(numeric(x, "sqrt")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad / (2 * y)


class Abs(Function):
    """y = |x|;  dy/dx = sign(x) (0 at 0, as in PyTorch)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = numeric(x, "abs")
        if data.dtype == np.bool_:
            raise NotImplementedError(
                "abs of a bool Variable is not supported (nor in PyTorch): a mask is its own "
                "absolute value; for numbers convert first, mask.float().abs()."
            )
        ctx.save_for_backward(np.sign(data))
        return np.abs(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (sign,) = ctx.saved_tensors
        return grad * sign


class Clone(Function):
    """y = x, in new memory;  dy/dx = 1."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> Any:
        return x.data if isinstance(x.data, str) else x.data.copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return grad


# --------------------------------------------------------------------------- the op table


@register("exp", inplace=True, numpy=np.exp)
def exp(x: Variable) -> Variable:
    return Exp.apply(x)


@register("log", inplace=True)
def log(x: Variable) -> Variable:
    return Log.apply(x)


@register("tanh", inplace=True, numpy=np.tanh)
def tanh(x: Variable) -> Variable:
    return Tanh.apply(x)


@register("sigmoid", inplace=True)
def sigmoid(x: Variable) -> Variable:
    return Sigmoid.apply(x)


@register("relu", inplace=True)
def relu(x: Variable) -> Variable:
    return Relu.apply(x)


@register("sqrt", inplace=True)
def sqrt(x: Variable) -> Variable:
    return Sqrt.apply(x)


@register("abs", inplace=True, aliases=("absolute",))
def absolute(x: Variable) -> Variable:
    return Abs.apply(x)


@register("clone")
def clone(x: Variable) -> Variable:
    """A differentiable copy with its own data."""
    return Clone.apply(x)


# ------------------------------------------------------------------------- pointwise
#
# Elementwise functions beyond the basics: trigonometry, rounding, clamping, where.
#
# Each backward returns the gradient at the output's (broadcast) shape; apply sums it back
# to each input's shape. Ops with no GPU kernel yet (sin, floor, ...) refuse a cuda Variable
# with NotImplementedError rather than move it to the CPU behind your back.

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _on_cpu(x: Any, op: str) -> Any:
    """The NumPy data of x, for ops that have no kernel on cuda yet."""
    data = numeric(x, op)
    if is_on_cuda(data):
        raise NotImplementedError(
            f"{op} is not supported on cuda yet; move the Variable to the CPU with .cpu() "
            f"first (and back with .cuda() after)."
        )
    return data


def _check_broadcast(op: str, *values: Any) -> tuple:
    """The shape that `values` broadcast to, or a ValueError that shows their shapes."""
    shapes = [shape_of(value) for value in values]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise OpError(
            f"{op}: shapes {', '.join(str(s) for s in shapes)} cannot be broadcast together; "
            f"each dimension must match or be 1 (counting from the right)."
        ) from None


def _condition(mask: Any, op: str) -> Any:
    """A condition or mask as a bool array; any other dtype is refused."""
    data = array_of(mask, op)
    if data.dtype != np.bool_:
        raise RuntimeError(  # PyTorch's class
            f"{op} expects a bool condition, such as x > 0; got dtype {data.dtype}. "
            f"Compare to get one, or convert with .bool()."
        )
    return data


def _zeros_like(grad: Variable) -> Variable:
    return Variable._make(np.zeros_like(grad.data))


# --------------------------------------------------------------------------- smooth functions


class Sin(Function):
    """y = sin(x);  dy/dx = cos(x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.sin(_float_of_mask(_on_cpu(x, "sin")))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * Cos.apply(x)


class Cos(Function):
    """y = cos(x);  dy/dx = -sin(x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.cos(_float_of_mask(_on_cpu(x, "cos")))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return -grad * Sin.apply(x)


class Square(Function):
    """y = x**2;  dy/dx = 2x."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        data = numeric(x, "square")
        if getattr(data, "dtype", None) == np.bool_:
            data = data.astype(np.int64)  # a mask squared counts in int64, as in PyTorch
        return np.square(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * 2 * x


class Rsqrt(Function):
    """y = 1 / sqrt(x);  dy/dx = -y**3 / 2."""

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return 1 / np.sqrt(_float_of_mask(numeric(x, "rsqrt")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * (-0.5 * y * y * y)


class Log1p(Function):
    """y = log(1 + x), accurate for small x;  dy/dx = 1 / (1 + x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.log1p(_float_of_mask(_on_cpu(x, "log1p")))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad / (1 + x)


class Expm1(Function):
    """y = exp(x) - 1, accurate for small x;  dy/dx = exp(x) = y + 1."""

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.expm1(_float_of_mask(_on_cpu(x, "expm1")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * (y + 1)


# W. J. Cody's rational approximations of erf and erfc, with the coefficients of Cephes'
# ndtr.c (Stephen L. Moshier): erf(x) = x·T(x²)/U(x²) for |x| < 1; erfc(x) = e^(-x²)·P(x)/Q(x)
# for 1 <= |x| < 8 and e^(-x²)·R(x)/S(x) beyond. Highest power first; U, Q and S are monic
# (their leading 1 left out).
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)


def _polynomial(x: Any, coefficients: tuple, monic: bool = False, out: Any = None) -> Any:
    """Σ c_i x^(n-i) by Horner's rule (x^n first when monic), in `out` or a new array."""
    if out is None:
        y = x + coefficients[0] if monic else x * 0 + coefficients[0]
    elif monic:
        y = np.add(x, coefficients[0], out=out)
    else:
        y = out
        y.fill(coefficients[0])
    for c in coefficients[1:]:
        y *= x
        y += c
    return y


def _erf_values(data: Any) -> Any:
    """erf of an array, to about 5e-16 relative in float64 (NumPy has no erf of its own);
    float32 and float16 data are computed in float32, to about 2e-7 (3 units in the last place).

    erf is odd: work with a = |x| and copy the sign back. For a < 1, erf(a) = a·T(a²)/U(a²);
    beyond, erf = 1 - erfc(a), erfc(a) = e^(-a²)·P(a)/Q(a) (R/S from 8 on), rational
    functions fitted by Cody (coefficients above). Each formula runs on every element,
    clipped to its own range (so none overflows), and the right one is kept: about 40 array
    passes into five buffers, faster than gathering each range's elements apart (a boolean
    gather costs as much as ten passes) and than fresh arrays for every step (their pages
    are faulted in anew each call).
    """
    single = data.dtype in (np.float32, np.float16)
    x = data.astype(np.float32 if single else np.float64, copy=False)
    if type(x) is not np.ndarray:
        return _erf_everywhere(x)
    shape = x.shape
    x = x.reshape(-1)  # 1-d, so that NumPy gives arrays, not scalars, for a 0-d x
    a = np.abs(x)
    small = np.minimum(a, 1.0)
    z = small * small
    inside = _polynomial(z, _ERF_T, out=np.empty_like(a))
    inside *= small
    scratch = _polynomial(z, _ERF_U, monic=True, out=np.empty_like(a))
    inside /= scratch  # erf(a) below 1
    b = np.minimum(a, 30.0, out=small)  # e^(-a²) is 0 long before 30
    np.maximum(b, 1.0, out=b)
    ratio = _polynomial(b, _ERFC_P, out=z)
    ratio /= _polynomial(b, _ERFC_Q, monic=True, out=scratch)
    if (b >= 8).any():
        c = np.maximum(b, 8.0)
        beyond = _polynomial(c, _ERFC_R) / _polynomial(c, _ERFC_S, monic=True)
        np.copyto(ratio, beyond, where=b >= 8)
    tail = np.multiply(b, b, out=scratch)
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    tail *= ratio  # erfc(a)
    np.subtract(1.0, tail, out=tail)  # erf(a) from 1 on
    # Keep one of the two by multiplying with 1 and 0: exact (both are finite), and much
    # faster than np.where, whose element-by-element choice mispredicts on mixed data.
    near = a < 1
    inside *= near
    tail *= ~near
    inside += tail
    return np.copysign(inside, x, out=inside).reshape(shape)


def _erf_everywhere(x: Any) -> Any:
    """_erf_values for a device's array (no boolean indexing, no copysign, no out=): the
    same formulas on every element, picked by np.where."""
    a = np.abs(x)
    small = np.minimum(a, 1.0)
    z = small * small
    inside = small * _polynomial(z, _ERF_T) / _polynomial(z, _ERF_U, monic=True)
    b = np.maximum(np.minimum(a, 30.0), 1.0)
    c = np.maximum(b, 8.0)
    ratio = np.where(
        b < 8,
        _polynomial(b, _ERFC_P) / _polynomial(b, _ERFC_Q, monic=True),
        _polynomial(c, _ERFC_R) / _polynomial(c, _ERFC_S, monic=True),
    )
    tail = 1.0 - np.exp(-(b * b)) * ratio
    return np.sign(x) * np.where(a < 1, inside, tail)


class Erf(Function):
    """y = erf(x) = 2/sqrt(pi) * (integral of exp(-t^2) dt from 0 to x);
    dy/dx = 2/sqrt(pi) exp(-x^2)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = numeric(x, "erf")
        if data.dtype == np.bool_:  # erf of a mask is a float, as in PyTorch
            data = data.astype(np.float64)
        ctx.save_for_backward(x)
        values = _erf_values(data)
        return values.astype(data.dtype, copy=False) if data.dtype.kind == "f" else values

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * _TWO_OVER_SQRT_PI * (-(x * x)).exp()


# --------------------------------------------------------------------------- step functions


class Sign(Function):
    """y = -1, 0 or 1 as x is negative, zero or positive (0 for nan, as in PyTorch);  dy/dx = 0."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = numeric(x, "sign")
        if data.dtype == np.bool_:
            return data.copy()  # the sign of True is True, as in PyTorch
        return np.where(data == data, np.sign(data), 0)  # data == data is False only for nan

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return _zeros_like(grad)


class Floor(Function):
    """y = the largest integer <= x;  dy/dx = 0 (a step function, as in PyTorch)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = _refuse_mask(_on_cpu(x, "floor"), "floor")
        return data.copy() if data.dtype.kind in "iub" else np.floor(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return _zeros_like(grad)


class Ceil(Function):
    """y = the smallest integer >= x;  dy/dx = 0 (a step function, as in PyTorch)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = _refuse_mask(_on_cpu(x, "ceil"), "ceil")
        return data.copy() if data.dtype.kind in "iub" else np.ceil(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return _zeros_like(grad)


class Round(Function):
    """y = x rounded to `decimals` places, halves to even (2.5 -> 2);  dy/dx = 0."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, decimals: int = 0) -> np.ndarray:
        data = _refuse_mask(_on_cpu(x, "round"), "round")
        return data.copy() if data.dtype.kind in "iub" else np.round(data, decimals)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return _zeros_like(grad)


# --------------------------------------------------------------------------- choosing values


def _tie_shares(x: Any, low: Any, high: Any, dtype: np.dtype) -> tuple:
    """The shares of clamp's gradient for x, low and high when the bounds are Variables.

    All of it goes to the one the output equals; a tie (x == low < high or low < x == high)
    splits it half and half; bounds that cross (low > high) give everything to high.
    """
    below, above, ordered = x < low, x > high, low <= high
    tie_low = (x == low) & (low < high)
    tie_high = (x == high) & (low < high)
    share_x = np.where(tie_low | tie_high, 0.5, ~below & ~above & ordered)
    share_low = np.where(tie_low, 0.5, below & ordered)
    share_high = np.where(tie_high, 0.5, above | ~ordered)
    return share_x.astype(dtype), share_low.astype(dtype), share_high.astype(dtype)


class Clamp(Function):
    """y = min(max(x, low), high);  dy/dx = 1 where low < x < high, 0 elsewhere.

    As in PyTorch (2.14 on): bounds given as numbers get no gradient, and x gets none exactly
    at a bound. Bounds given as Variables get the gradient where y equals them, and a tie
    splits it half and half, as for maximum and minimum. low > high gives y = high.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, low: Any, high: Any) -> np.ndarray:
        data = numeric(x, "clamp")
        # x and the bounds in PyTorch's result dtype: int64 clamped by float32 is float32.
        dtype = promoted_dtype(*(value for value in (x, low, high) if value is not None))
        data = data if data.dtype == dtype else data.astype(dtype)
        # A missing bound never binds: it compares as -inf (low) or inf (high).
        lo = -np.inf if low is None else _in_dtype(numeric(low, "clamp"), dtype)
        hi = np.inf if high is None else _in_dtype(numeric(high, "clamp"), dtype)
        _check_broadcast("clamp", data, *(bound for bound in (low, high) if bound is not None))
        result = data if low is None else np.maximum(data, lo)
        result = result if high is None else np.minimum(result, hi)
        if isinstance(low, Variable) or isinstance(high, Variable):
            ctx.shares = _tie_shares(data, lo, hi, result.dtype)
        else:
            ctx.shares = (((data > lo) & (data < hi)).astype(result.dtype), None, None)
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return tuple(
            grad * share if needed else None
            for share, needed in zip(ctx.shares, ctx.needs_input_grad)
        )


class Maximum(Function):
    """z = max(a, b) elementwise;  dz/da = 1 where a > b, 0 where a < b, 1/2 on a tie (b alike)."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        left, right = promoted_arrays(numeric(a, "maximum"), numeric(b, "maximum"))
        _check_broadcast("maximum", left, right)
        ctx.ties, ctx.a_loses, ctx.b_loses = left == right, left < right, left > right
        return np.maximum(left, right)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _split_on_ties(ctx, grad)


class Minimum(Function):
    """z = min(a, b) elementwise;  dz/da = 1 where a < b, 0 where a > b, 1/2 on a tie (b alike)."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        left, right = promoted_arrays(numeric(a, "minimum"), numeric(b, "minimum"))
        _check_broadcast("minimum", left, right)
        ctx.ties, ctx.a_loses, ctx.b_loses = left == right, left > right, left < right
        return np.minimum(left, right)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _split_on_ties(ctx, grad)


def _split_on_ties(ctx: FunctionCtx, grad: Variable) -> tuple:
    """The gradient of maximum or minimum: to the winner, half each on a tie (PyTorch's rule)."""
    shared = Where.apply(ctx.ties, grad * 0.5, grad)
    needs_a, needs_b = ctx.needs_input_grad
    grad_a = Where.apply(ctx.a_loses, 0.0, shared) if needs_a else None
    grad_b = Where.apply(ctx.b_loses, 0.0, shared) if needs_b else None
    return grad_a, grad_b


class Where(Function):
    """z = x where condition, else y;  dz/dx = condition, dz/dy = not condition."""

    @staticmethod
    def forward(ctx: FunctionCtx, condition: Any, x: Any, y: Any) -> np.ndarray:
        ctx.condition = _condition(condition, "where")
        _check_broadcast("where", ctx.condition, x, y)
        chosen, other = promoted_arrays(numeric(x, "where"), numeric(y, "where"))
        return np.where(ctx.condition, chosen, other)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        _, needs_x, needs_y = ctx.needs_input_grad
        grad_x = Where.apply(ctx.condition, grad, 0.0) if needs_x else None
        grad_y = Where.apply(ctx.condition, 0.0, grad) if needs_y else None
        return None, grad_x, grad_y


class MaskedFill(Function):
    """y = value where mask, else x (y keeps x's dtype);  dy/dx = not mask, dy/dvalue = mask."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, mask: Any, value: Any) -> np.ndarray:
        data = numeric(x, "masked_fill")
        ctx.mask = _condition(mask, "masked_fill")
        if np.ndim(numeric(value, "masked_fill")) != 0:
            raise OpError(
                f"masked_fill fills with one value: a number or a 0-dimensional Variable; got "
                f"a value of shape {shape_of(value)}. Use minigrad.where(mask, values, x) to "
                f"fill from an array."
            )
        _check_broadcast("masked_fill", data, ctx.mask)
        check_representable(numeric(value, "masked_fill"), data.dtype, "masked_fill")
        return np.where(ctx.mask, numeric(value, "masked_fill"), data).astype(data.dtype)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        needs_x, _, needs_value = ctx.needs_input_grad
        grad_x = Where.apply(ctx.mask, 0.0, grad) if needs_x else None
        grad_value = Where.apply(ctx.mask, grad, 0.0) if needs_value else None
        return grad_x, None, grad_value


# --------------------------------------------------------------------------- the op table


@register("sin", inplace=True)
def sin(x: Variable) -> Variable:
    return Sin.apply(x)


@register("cos", inplace=True)
def cos(x: Variable) -> Variable:
    return Cos.apply(x)


@register("square", inplace=True)
def square(x: Variable) -> Variable:
    return Square.apply(x)


@register("rsqrt", inplace=True)
def rsqrt(x: Variable) -> Variable:
    return Rsqrt.apply(x)


@register("log1p", inplace=True)
def log1p(x: Variable) -> Variable:
    return Log1p.apply(x)


@register("log10", inplace=True)
def log10(x: Variable) -> Variable:
    """The base-10 logarithm, y = log(x) / log(10);  dy/dx = 1 / (x log(10)). Made of log
    and a division, so its gradient, device and dtype rules are log's."""
    return Log.apply(x) / math.log(10)


@register("expm1", inplace=True)
def expm1(x: Variable) -> Variable:
    return Expm1.apply(x)


@register("erf", inplace=True)
def erf(x: Variable) -> Variable:
    return Erf.apply(x)


@register("sign", inplace=True)
def sign(x: Variable) -> Variable:
    return Sign.apply(x)


@register("floor", inplace=True)
def floor(x: Variable) -> Variable:
    return Floor.apply(x)


@register("ceil", inplace=True)
def ceil(x: Variable) -> Variable:
    return Ceil.apply(x)


@register("round", inplace=True)
def round_half_even(x: Variable, *, decimals: int = UNSET) -> Variable:
    """x rounded to `decimals` places (0 if left out; negative: to tens, hundreds, ...);
    halves go to even."""
    if decimals is UNSET:
        return Round.apply(x, decimals=0)
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round expects decimals to be an int; got {decimals!r}.")
    if isinstance(x, Variable) and x.dtype.kind in "iu":
        # PyTorch rounds integers only without decimals= (they are whole already).
        raise NotImplementedError(
            f"round(decimals=...) is not implemented for {x.dtype} Variables, as in "
            f"PyTorch; integers are whole already: drop decimals=, or convert first, e.g. "
            f"x.double().round(decimals={decimals})."
        )
    return Round.apply(x, decimals=int(decimals))


def _in_dtype(bound: Any, dtype: np.dtype) -> Any:
    """A Variable bound's array in the result dtype (a number is left as it is)."""
    if getattr(bound, "dtype", dtype) == dtype or isinstance(bound, np.generic):
        return bound
    return bound.astype(dtype)


def _clamp_bounds(x: Variable, low: Any, high: Any) -> tuple[Any, Any]:
    """The bounds as PyTorch's two forms of clamp take them: both Variables (each may be
    None), or both numbers, where a 0-d Variable counts as its number (and gets no
    gradient). A Variable with dimensions beside a number fits neither form."""
    given = [bound for bound in (low, high) if bound is not None]
    for bound in given:
        if not isinstance(bound, (Variable, np.ndarray, int, float, np.number, np.bool_)):
            raise TypeError(
                f"clamp(): min and max must be Variables or numbers (or None); got "
                f"{type(bound).__name__} {bound!r:.40}. Make one with minigrad.tensor(...)."
            )
    arrays = [bound for bound in given if isinstance(bound, (Variable, np.ndarray))]
    if len(arrays) == len(given):
        if isinstance(x, Variable) and promoted_dtype(x, *given) == np.bool_:
            raise NotImplementedError(
                '"clamp_cpu" not implemented for \'Bool\', as in PyTorch: clamping a mask by '
                "masks has no meaning. Convert first, e.g. x.long().clamp(...)."
            )
        return low, high  # the form with Variables
    if any(np.ndim(array) != 0 for array in arrays):
        raise TypeError(
            "clamp(): min and max must be both Variables or both numbers; got a Variable with "
            "dimensions beside a number. Make the number a Variable too, e.g. "
            "minigrad.tensor(1.0)."
        )
    low, high = _as_number(low), _as_number(high)
    if isinstance(x, Variable) and promoted_dtype(x, *given) == np.bool_:
        name = "clamp" if low is not None and high is not None else (
            "clamp_min" if high is None else "clamp_max"
        )
        raise NotImplementedError(
            f'"{name}_scalar_cpu" not implemented for \'Bool\', as in PyTorch: clamping a mask '
            f"by True/False has no meaning. Convert first, e.g. x.long().clamp(...)."
        )
    return low, high


def _as_number(bound: Any) -> Any:
    """A 0-d Variable or array as its Python number; a number or None as it is."""
    if isinstance(bound, (Variable, np.ndarray)):
        return bound.item()
    return bound


@register("clamp", inplace=True, aliases=("clip",))
def clamp_values(x: Variable, min: Any = None, max: Any = None) -> Variable:  # noqa: A002
    """x limited to [min, max]; either bound may be left out. (min, max: PyTorch's names.)"""
    if min is None and max is None:
        raise OpError(
            "clamp needs at least one of min and max; got neither. Pass clamp(x, min=...), "
            "clamp(x, max=...) or clamp(x, min, max)."
        )
    low, high = _clamp_bounds(x, min, max)
    return Clamp.apply(x, low, high)


@register("maximum")
def maximum(x: Any, other: Any) -> Variable:
    _refuse_sequence(other, "maximum")
    return Maximum.apply(x, other)


@register("minimum")
def minimum(x: Any, other: Any) -> Variable:
    _refuse_sequence(other, "minimum")
    return Minimum.apply(x, other)


def _refuse_sequence(other: Any, op: str) -> None:
    """PyTorch's TypeError for a list or tuple where it wants a Variable (NumPy would read
    it as numbers)."""
    if isinstance(other, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'other' must be a Variable, not {type(other).__name__}. Make "
            f"one first: minigrad.tensor({other!r:.30})."
        )


class _LeftOut:
    """where's x and other when the caller leaves them out (None spelled out is refused, as
    PyTorch refuses it)."""

    def __repr__(self) -> str:
        return "None"


_LEFT_OUT = _LeftOut()


def where(condition: Any, x: Any = _LEFT_OUT, other: Any = _LEFT_OUT) -> Any:
    """minigrad.where(condition, x, other): x where condition is True, else other (broadcast;
    PyTorch's keywords input= and other=).

    minigrad.where(condition) alone is nonzero(condition, as_tuple=True), as in PyTorch."""
    if x is None or other is None:
        raise TypeError(
            "where(condition, x, other): x and other must be Variables or numbers, not None; "
            "leave both out for where(condition), the positions where condition is True."
        )
    if x is _LEFT_OUT and other is _LEFT_OUT:
        if not isinstance(condition, Variable):
            condition = Variable._make(np.asarray(numeric(condition, "where")))
        return condition.nonzero(as_tuple=True)
    if x is _LEFT_OUT or other is _LEFT_OUT:
        raise TypeError(
            "where(condition, x, other) needs both x and other (or neither, for the positions "
            "where condition is True)."
        )
    return Where.apply(condition, x, other)


def _where_method(self: Variable, condition: Any, other: Any) -> Variable:
    """x.where(condition, other): x where condition is True, else other."""
    return Where.apply(condition, self, other)


register("where", method=_where_method, function=where)(where)


@register("masked_fill", inplace=True)
def masked_fill(x: Variable, mask: Any, value: Any) -> Variable:
    """x with `value` written wherever the bool `mask` is True."""
    return MaskedFill.apply(x, mask, value)




# --------------------------------------------------------------------------- interpolation


def _lerp_operand(value: Any, start: Any, name: str) -> Any:
    """end or weight: a Variable of start's floating dtype (weight may be a number)."""
    data = numeric(value, "lerp")
    dtype = getattr(data, "dtype", None)
    if dtype is not None and dtype != start.dtype and (name == "end" or np.ndim(data) > 0):
        raise RuntimeError(
            f"lerp(): expected dtype {start.dtype} for `{name}` but got dtype {dtype}; "
            f"convert it first: {name}.to(start.dtype)."
        )
    return data


class Lerp(Function):
    """y = start + weight * (end - start);  dstart = 1 - weight, dend = weight,
    dweight = end - start. Computed from the nearer end (end - (end - start) * (1 - weight)
    for weight >= 0.5), as PyTorch does, so weight 1 gives end exactly."""

    @staticmethod
    def forward(ctx: FunctionCtx, start: Variable, end: Variable, weight: Any) -> np.ndarray:
        low = _on_cpu(start, "lerp")
        if low.dtype.kind != "f":
            raise NotImplementedError(
                f'"lerp_kernel" not implemented for \'{low.dtype}\': lerp interpolates '
                f"floating values; convert start and end first with .double()."
            )
        high = _lerp_operand(end, low, "end")
        share = _lerp_operand(weight, low, "weight")
        _check_broadcast("lerp", low, high, share)
        ctx.save_for_backward(start, end, weight if isinstance(weight, Variable) else None)
        ctx.weight = weight
        step = high - low
        near_start = low + share * step
        near_end = high - step * (1 - share)
        return np.where(np.abs(share) < 0.5, near_start, near_end).astype(low.dtype)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        start, end, weight_variable = ctx.saved_tensors
        weight = ctx.weight if weight_variable is None else weight_variable
        grad_start = grad * (1 - weight) if ctx.needs_input_grad[0] else None
        grad_end = grad * weight if ctx.needs_input_grad[1] else None
        grad_weight = None
        if weight_variable is not None and ctx.needs_input_grad[2]:
            grad_weight = grad * (end - start)
        return grad_start, grad_end, grad_weight


@register("lerp", inplace=True)
def lerp(x: Variable, end: Variable, weight: float | Variable) -> Variable:
    """start + weight * (end - start), start being x: weight 0 gives x, 1 gives end; weight
    is a number or a Variable, and all three broadcast. See Lerp."""
    if not isinstance(end, Variable) or end.is_text:
        raise TypeError(
            f"lerp(): argument 'end' must be a Variable, not {type(end).__name__}; make one "
            f"with minigrad.full_like(x, value)."
        )
    is_number = isinstance(weight, (int, float, np.number, np.bool_))  # True is 1, as in PyTorch
    if not is_number and not (isinstance(weight, Variable) and not weight.is_text):
        raise TypeError(
            f"lerp(): argument 'weight' must be a number or a Variable, not "
            f"{type(weight).__name__}."
        )
    return Lerp.apply(x, end, weight)

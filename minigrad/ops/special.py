"""Special functions: erfinv, lgamma, digamma, polygamma and xlogy, as torch's, with gradients.

    erfinv(x):       the y with erf(y) = x, on [-1, 1];   d/dx = √π/2 · exp(y²)
    lgamma(x):       log |Γ(x)|;                         d/dx = digamma(x)
    digamma(x):      ψ(x) = Γ'(x)/Γ(x);                  d/dx = polygamma(1, x)
    polygamma(n, x): ψ⁽ⁿ⁾(x), the n-th derivative of ψ;  d/dx = polygamma(n + 1, x)
    xlogy(x, y):     x·log(y), and 0 where x = 0;         d/dx = log y (0 at x = 0), d/dy = x/y

NumPy has none of them (nor erf: minigrad's own is in elementwise.py). Each is computed
in float64 (float32 and float16 inputs are cast back after, ints and bools give float64)
from classic series: Stirling's for lgamma and its derivatives once x >= 10, the
recurrences Γ(x + 1) = xΓ(x) to get there, and the reflection formulas for x < 0. Every
backward is written with these ops, so gradients of any order work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.elementwise import (
    _ERFC_P,
    _ERFC_Q,
    _ERFC_R,
    _ERFC_S,
    Where,
    _check_broadcast,
    _erf_values,
    _polynomial,
)
from minigrad.ops.operand import numeric
from minigrad.ops.promotion import promoted_dtype
from minigrad.ops.table import register

# Stirling's series starts at 10: from there its seven terms below are exact to 1e-16.
_ASYMPTOTIC_FROM = 10.0
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
_SQRT_PI = math.sqrt(math.pi)

# B_2k / (2k(2k - 1)), k = 1..7 (B the Bernoulli numbers): lgamma's Stirling series
#   lgamma(x) ≈ (x - ½) log x - x + ½ log 2π + Σ_k c_k x^(1-2k).
_LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
# B_2k, k = 1..7: digamma's and polygamma's series (the derivatives of lgamma's).
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _float64(x: Any, op: str) -> tuple[np.ndarray, Any]:
    """x's data as a float64 array, and the dtype of the result (x's own when floating)."""
    data = numeric(x, op)
    if is_on_cuda(data):
        raise NotImplementedError(
            f"{op} is not supported on cuda yet; move the Variable to the CPU with .cpu() "
            f"first (and back with .cuda() after)."
        )
    data = np.asarray(data)
    if data.dtype.kind == "c":
        raise TypeError(f"{op} takes real numbers; got a Variable of dtype {data.dtype}.")
    result_dtype = data.dtype if data.dtype.kind == "f" else np.dtype(np.float64)
    return data.astype(np.float64), result_dtype


def _distance_to_integer(x: np.ndarray) -> np.ndarray:
    """x - round(x), exact in floating point: sin(πx) and tan(πx) from it stay accurate
    for large x, where π·x itself has lost the fraction."""
    return x - np.round(x)


# --------------------------------------------------------------------------- erfinv


def _erfc_beyond_one(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y >= 1, from the same rational functions erf uses, without forming
    1 - erf(y) (that difference loses every digit once erfc(y) < 1e-16)."""
    clipped = np.minimum(y, 30.0)  # exp(-30²) is 0 already
    near = _polynomial(clipped, _ERFC_P) / _polynomial(clipped, _ERFC_Q, monic=True)
    far_y = np.maximum(clipped, 8.0)
    far = _polynomial(far_y, _ERFC_R) / _polynomial(far_y, _ERFC_S, monic=True)
    return np.exp(-clipped * clipped) * np.where(clipped < 8, near, far)


# Halley's method triples the correct digits each step: 2e-3, 1e-8, then 1e-15 or better.
_HALLEY_STEPS = 2


def _erfinv_values(x: np.ndarray) -> np.ndarray:
    """erfinv on float64: a first guess, then two Halley steps on erf(y) = a = |x|.

    The guess is Winitzki's closed form (relative error below 0.2%). Halley's step is
    y -= f / (f' + y·f) for f = erf(y) - a (it uses f'' = -2y·f'). Near 1, f is written as
    (1 - a) - erfc(y): both sides are tiny there, and 1 - a is exact.
    """
    a = np.abs(x)
    inside = a < 1
    a = np.where(inside, a, 0.0)  # ±1, beyond and nan are filled in at the end
    one_minus_a = 1.0 - a
    width = 0.147  # Winitzki's constant
    log_term = np.log(one_minus_a * (1.0 + a))  # log(1 - a²) without cancelling
    half = 2 / (math.pi * width) + log_term / 2
    y = np.sqrt(np.sqrt(half * half - log_term / width) - half)
    tail = a > 0.5
    for _ in range(_HALLEY_STEPS):
        erf_y = _erf_values(y)
        far_f = one_minus_a - _erfc_beyond_one(np.maximum(y, 1.0))
        f = np.where(tail & (y >= 1.0), far_f, erf_y - a)
        slope = (2 / _SQRT_PI) * np.exp(-y * y)
        y = y - f / (slope + y * f)
    y = np.copysign(y, x)
    y = np.where(np.abs(x) == 1, np.copysign(np.inf, x), y)
    return np.where((np.abs(x) > 1) | np.isnan(x), np.nan, y)


class Erfinv(Function):
    """y = erfinv(x), the inverse of erf on [-1, 1] (±inf at ±1, nan beyond);
    dy/dx = √π/2 · exp(y²)."""

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        data, dtype = _float64(x, "erfinv")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _erfinv_values(data).astype(dtype, copy=False)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * (_SQRT_PI / 2) * (y * y).exp()


# --------------------------------------------------------------------------- lgamma


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """lgamma for x > 0: lgamma(x) = lgamma(x + k) - log(x(x+1)...(x+k-1)), then Stirling."""
    z = x.copy()
    product = np.ones_like(x)
    for _ in range(int(_ASYMPTOTIC_FROM)):
        moving = z < _ASYMPTOTIC_FROM
        if not moving.any():
            break
        product *= np.where(moving, z, 1.0)
        z += moving
    inverse = 1.0 / z
    inverse_squared = inverse * inverse
    series = np.zeros_like(z)
    for coefficient in reversed(_LGAMMA_SERIES):
        series = series * inverse_squared + coefficient
    stirling = (z - 0.5) * np.log(z) - z + _HALF_LOG_TWO_PI + series * inverse
    stirling = np.where(z == np.inf, np.inf, stirling)
    return stirling - np.log(product)


def _lgamma_values(x: np.ndarray) -> np.ndarray:
    """log|Γ(x)| for every x: Γ(x)Γ(1 - x) = π / sin(πx) below 0; inf at 0, -1, -2, ...
    and at ±inf."""
    negative = x < 0
    positive_x = np.where(negative, 1.0 - x, x)
    positive_x = np.where(positive_x == 0, 1.0, positive_x)  # x = 0 is filled in below
    result = _lgamma_positive(positive_x)
    sine = np.abs(np.sin(math.pi * _distance_to_integer(x)))
    reflected = np.log(math.pi / sine) - result
    result = np.where(negative, reflected, result)
    return np.where((x == 0) | np.isinf(x), np.inf, result)


class Lgamma(Function):
    """y = lgamma(x) = log|Γ(x)|;  dy/dx = digamma(x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data, dtype = _float64(x, "lgamma")
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _lgamma_values(data).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * Digamma.apply(x)


# --------------------------------------------------------------------------- digamma


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """ψ for x > 0: ψ(x) = ψ(x + k) - Σ 1/(x + j), then ψ(z) ≈ log z - 1/2z - Σ B_2k/(2k z^2k)."""
    z = x.copy()
    total = np.zeros_like(x)
    for _ in range(int(_ASYMPTOTIC_FROM)):
        moving = z < _ASYMPTOTIC_FROM
        if not moving.any():
            break
        total -= moving / z  # 0 where z has arrived (z >= 10 is never 0)
        z += moving
    inverse_squared = 1.0 / (z * z)
    series = np.zeros_like(z)
    for k in reversed(range(1, len(_BERNOULLI) + 1)):
        series = (series + _BERNOULLI[k - 1] / (2 * k)) * inverse_squared
    return total + np.log(z) - 0.5 / z - series


def _digamma_values(x: np.ndarray) -> np.ndarray:
    """ψ for every x: ψ(x) = ψ(1 - x) - π/tan(πx) below 0; nan at -1, -2, ... and -inf,
    -inf at +0 and +inf at -0 (torch's values)."""
    negative = x < 0
    positive_x = np.where(negative, 1.0 - x, x)
    positive_x = np.where(positive_x == 0, 1.0, positive_x)
    result = _digamma_positive(positive_x)
    fraction = _distance_to_integer(x)
    reflected = result - math.pi / np.tan(math.pi * fraction)
    reflected = np.where(fraction == 0, np.nan, reflected)
    result = np.where(negative, reflected, result)
    return np.where(x == 0, -np.copysign(np.inf, x), result)


class Digamma(Function):
    """y = digamma(x) = d/dx lgamma(x);  dy/dx = polygamma(1, x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data, dtype = _float64(x, "digamma")
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _digamma_values(data).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * Polygamma.apply(x, 1)


# --------------------------------------------------------------------------- polygamma


def _polygamma_positive(n: int, x: np.ndarray) -> np.ndarray:
    """ψ⁽ⁿ⁾ for x > 0 and n >= 1, from ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! Σ_j 1/(x + j)ⁿ⁺¹: the first
    terms summed while x + j < 10 + n, the rest by the Euler-Maclaurin formula
        Σ_{j>=0} 1/(z + j)ˢ ≈ z¹⁻ˢ/(s - 1) + z⁻ˢ/2 + Σ_k B_2k/(2k)! · s(s+1)…(s+2k-2) · z^(1-s-2k)
    with s = n + 1 (the series needs z well above n to converge fast)."""
    s = n + 1
    start = _ASYMPTOTIC_FROM + n
    z = x.copy()
    total = np.zeros_like(x)
    for _ in range(int(start)):
        moving = z < start
        if not moving.any():
            break
        total += moving / z**s
        z += moving
    tail = z ** (1 - s) / (s - 1) + 0.5 * z**-s
    rising = float(s)  # s(s+1)…(s+2k-2), and (2k)!, built up together
    factorial = 2.0
    power = z ** (-s - 1)
    inverse_squared = 1.0 / (z * z)
    for k in range(1, len(_BERNOULLI) + 1):
        tail = tail + _BERNOULLI[k - 1] / factorial * rising * power
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        factorial *= (2 * k + 1) * (2 * k + 2)
        power = power * inverse_squared
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.factorial(n) * (total + tail)


def _cot_derivative_polynomial(n: int) -> np.polynomial.Polynomial:
    """D_n with dⁿ/dtⁿ cot(t) = D_n(cot t): D_0(c) = c, D_(k+1)(c) = -(1 + c²)·D_k'(c)."""
    polynomial = np.polynomial.Polynomial([0.0, 1.0])
    one_plus_square = np.polynomial.Polynomial([1.0, 0.0, 1.0])
    for _ in range(n):
        polynomial = -one_plus_square * polynomial.deriv()
    return polynomial


def _polygamma_values(n: int, x: np.ndarray) -> np.ndarray:
    """ψ⁽ⁿ⁾ for every x, n >= 1. Below 0, from differentiating ψ(1 - x) - ψ(x) = π cot(πx)
    n times: ψ⁽ⁿ⁾(x) = (-1)ⁿ ψ⁽ⁿ⁾(1 - x) - πⁿ⁺¹ D_n(cot πx)."""
    negative = x < 0
    positive_x = np.where(negative, 1.0 - x, x)
    at_zero = positive_x == 0
    result = _polygamma_positive(n, np.where(at_zero, 1.0, positive_x))
    # The poles at 0, -1, -2, ...: torch's values, (-1)ⁿ⁺¹·inf whatever the sign of zero
    # (the side it is approached from decides the true sign when n is even).
    pole = (-1.0) ** (n + 1) * np.inf
    result = np.where(at_zero, pole, result)
    cotangent = 1.0 / np.tan(math.pi * _distance_to_integer(x))
    reflected = (-1.0) ** n * result - math.pi ** (n + 1) * _cot_derivative_polynomial(n)(
        cotangent
    )
    at_pole = negative & (_distance_to_integer(x) == 0)
    if n == 1:
        # torch's trigamma reflects with π²/sin²(πx), finite (~1e31) at a negative integer
        # because sin(πx) is not exactly 0 there in floating point: the same numbers here.
        pole = math.pi**2 / np.sin(math.pi * x) ** 2 - result
    reflected = np.where(at_pole, pole, reflected)
    return np.where(negative, reflected, result)


def _order(n: Any) -> int:
    """polygamma's n as an int >= 0, or torch's error."""
    if isinstance(n, Variable) and n.ndim == 0 and np.dtype(n.dtype).kind in "iu":
        n = n.item()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(
            f"polygamma(): argument 'n' must be int, not {type(n).__name__}. n is the order "
            f"of the derivative of digamma: polygamma(1, x) is the trigamma function."
        )
    if n < 0:
        raise RuntimeError(
            f"polygamma(n, x) does not support negative n; got n = {n}. polygamma(0, x) "
            f"is digamma(x), polygamma(1, x) its derivative, and so on."
        )
    return int(n)


class Polygamma(Function):
    """y = polygamma(n, x) = dⁿ/dxⁿ digamma(x), n >= 1;  dy/dx = polygamma(n + 1, x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, n: int) -> np.ndarray:
        data, dtype = _float64(x, "polygamma")
        ctx.save_for_backward(x)
        ctx.n = n
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return _polygamma_values(n, data).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        return grad * Polygamma.apply(x, ctx.n + 1), None


# --------------------------------------------------------------------------- xlogy


def _float_operand(value: Any, op: str) -> Any:
    """A numeric operand, bools and ints as float64 (xlogy of integers is a float, as in
    PyTorch); floats and Python numbers pass unchanged, so dtypes follow NumPy's rules."""
    data = numeric(value, op)
    if is_on_cuda(data):
        raise NotImplementedError(
            f"{op} is not supported on cuda yet; move the Variable to the CPU with .cpu() "
            f"first (and back with .cuda() after)."
        )
    if isinstance(data, np.ndarray) and data.dtype.kind in "biu":
        return data.astype(np.float64)
    if isinstance(data, (bool, int, np.bool_, np.integer)):
        return float(data)
    return data


class Xlogy(Function):
    """z = x·log(y), with z = 0 where x = 0 (also for y = 0, as entropies need: 0·log 0 = 0)
    unless y is nan;  dz/dx = log(y), but 0 where x = 0 and y <= 0 (as PyTorch);  dz/dy = x / y."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, y: Any) -> np.ndarray:
        left, right = _float_operand(x, "xlogy"), _float_operand(y, "xlogy")
        _check_broadcast("xlogy", left, right)
        dtype = promoted_dtype(x, y)  # PyTorch's: float32 with a number stays float32
        if dtype.kind not in "fc":
            dtype = np.dtype(np.float64)  # integers and bools give the default float
        # Both in that dtype: a float32 log beside float64 would lose digits.
        left = left.astype(dtype, copy=False) if isinstance(left, np.ndarray) else left
        right = right.astype(dtype, copy=False) if isinstance(right, np.ndarray) else right
        ctx.save_for_backward(
            x if isinstance(x, Variable) else None, y if isinstance(y, Variable) else None
        )
        ctx.x, ctx.y = left, right  # the numbers, for an input that is not a Variable
        with np.errstate(divide="ignore", invalid="ignore"):
            product = left * np.log(right)
        return np.where((left == 0) & ~np.isnan(right), 0, product).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, y = ctx.saved_tensors
        x = ctx.x if x is None else x
        y = ctx.y if y is None else y
        needs_x, needs_y = ctx.needs_input_grad
        grad_x = None
        if needs_x:
            # log(y) at x = 0 too (a Beta's log_prob at concentration 1 needs it), except
            # where log(y) does not exist and the zero x is what made z = 0.
            undefined = (x == 0) & (y <= 0)
            grad_x = Where.apply(undefined, 0.0, Xlogy.apply(grad, y))
        grad_y = grad * x / y if needs_y else None
        return grad_x, grad_y


# --------------------------------------------------------------------------- the op table


@register("erfinv", inplace=True)
def erfinv(x: Variable) -> Variable:
    return Erfinv.apply(x)


@register("lgamma", inplace=True)
def lgamma(x: Variable) -> Variable:
    return Lgamma.apply(x)


@register("digamma", inplace=True)
def digamma(x: Variable) -> Variable:
    return Digamma.apply(x)


def _polygamma_function(n: int, x: Variable) -> Variable:
    """minigrad.polygamma(n, x): PyTorch puts the order first in the function."""
    return polygamma(x, n)


@register("polygamma", function=_polygamma_function, inplace=True)
def polygamma(x: Variable, n: int) -> Variable:
    """x.polygamma(n): the n-th derivative of digamma at x (n = 0: digamma itself)."""
    order = _order(n)
    if order == 0:
        return Digamma.apply(x)
    return Polygamma.apply(x, order)


@register("xlogy", inplace=True)
def xlogy(x: Variable, other: Any) -> Variable:
    """x·log(other), 0 where x is 0: the terms of entropies and log-likelihoods."""
    if isinstance(other, (list, tuple)) or isinstance(x, (list, tuple)):
        raise TypeError(
            f"xlogy() takes Variables or numbers; got a {type(other).__name__}. Make it a "
            f"Variable first: minigrad.tensor(...)."
        )
    return Xlogy.apply(x, other)


__all__ = ["Digamma", "Erfinv", "Lgamma", "Polygamma", "Xlogy"]

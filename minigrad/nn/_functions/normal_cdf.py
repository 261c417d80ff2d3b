"""Φ, the standard normal CDF, as one Function: GELU is y = x · Φ(x) (F.gelu).

    Φ(x) = (1 + erf(x/√2)) / 2,        dΦ/dx = φ(x) = e^(-x²/2) / √(2π)

Composed from operations, GELU makes five nodes and an erf of about forty array passes
(minigrad's erf, Cody's rational functions, accurate to the last bits of a float64). One
Function does the forward in one go, and its backward is φ written with operations, so a
second derivative (create_graph=True) still comes out right.

float64 keeps that erf. float32 takes the normal tail from Abramowitz & Stegun 7.1.26:

    erfc(z) ≈ (a1·t + a2·t² + a3·t³ + a4·t⁴ + a5·t⁵) · e^(-z²),   t = 1 / (1 + p·z),  z ≥ 0

within 1.5e-7 of the true value, float32's own resolution near 1, in about twenty passes.
The upper tail Q = erfc(|x|/√2)/2 gives Φ = Q below 0 and 1 - Q above, with no 1 + erf to
cancel. GELU in float32 comes out within 2e-7·max(1, |x|) of the exact value, as close as
PyTorch's own float32 GELU (both measured in tests/test_nn_functional.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.elementwise import _erf_values
from minigrad.ops.operand import numeric

# Abramowitz & Stegun, Handbook of Mathematical Functions, 7.1.26: p, then a5 down to a1.
_P = 0.3275911
_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def normal_cdf_values(data: np.ndarray) -> np.ndarray:
    """Φ of a float array, in its dtype (float16 is computed in float32)."""
    if data.dtype == np.float64:
        values = _erf_values(data * math.sqrt(0.5))
        values += 1.0
        values *= 0.5
        return values
    x = data.astype(np.float32, copy=False)
    one = np.float32(1.0)
    z = np.abs(x)
    z *= np.float32(math.sqrt(0.5))
    t = z * np.float32(_P)
    t += one
    np.reciprocal(t, out=t)
    tail = t * np.float32(_A[0])  # Horner's rule, a5 first
    for coefficient in _A[1:]:
        tail += np.float32(coefficient)
        tail *= t
    np.multiply(z, z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    tail *= z
    tail *= np.float32(0.5)  # Q(|x|), the upper tail
    # Φ = Q for x < 0 and 1 - Q for x >= 0: Q + (x >= 0)·(1 - 2Q), no cancellation below 0
    above = (x >= 0).astype(np.float32)
    z = np.multiply(tail, np.float32(-2.0), out=z)
    z += one
    z *= above
    tail += z
    return tail.astype(data.dtype, copy=False)


class NormalCdf(Function):
    """y = Φ(x) = (1 + erf(x/√2)) / 2;  dy/dx = φ(x) = e^(-x²/2) / √(2π)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return normal_cdf_values(numeric(x, "gelu"))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Any) -> Variable:
        (x,) = ctx.saved_tensors
        density = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return grad * density

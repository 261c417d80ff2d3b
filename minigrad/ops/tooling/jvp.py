"""JVP rules of the built-in ops: the output's tangent from the inputs' tangents.

Each rule gets the op's arguments, one tangent per argument (None where there is none)
and the output, and returns the output's tangent: J · t written with Variable operations,
so a tangent can itself be differentiated (forward-over-reverse Hessian-vector products).
An op without a rule here still works in forward mode, by the slower route through its
backward (minigrad/autodiff/forward_ad.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.autodiff.forward_ad import JVP_RULES
from minigrad.core.variable import Variable
from minigrad.ops.arithmetic import Add, Div, Mul, Neg, Pow, Sub
from minigrad.ops.elementwise import Cos, Exp, Log, Relu, Sigmoid, Sin, Sqrt, Tanh
from minigrad.ops.indexing import Index
from minigrad.ops.matmul import MatMul
from minigrad.ops.reduction import Mean, Sum
from minigrad.ops.shape import Expand, Permute, Reshape, Squeeze, Transpose, Unsqueeze


def _add_tangents(first: Any, second: Any) -> Any:
    if first is None:
        return second
    if second is None:
        return first
    return first + second


def _add(args: tuple, tangents: list, output: Any) -> Any:
    return _add_tangents(tangents[0], tangents[1])  # d(a + b) = da + db


def _sub(args: tuple, tangents: list, output: Any) -> Any:
    ta, tb = tangents  # d(a - b) = da - db
    return _add_tangents(ta, None if tb is None else -tb)


def _mul(args: tuple, tangents: list, output: Any) -> Any:
    (a, b), (ta, tb) = args, tangents  # d(a b) = da b + a db
    return _add_tangents(None if ta is None else ta * b, None if tb is None else a * tb)


def _div(args: tuple, tangents: list, output: Any) -> Any:
    b, (ta, tb) = args[1], tangents  # d(a / b) = da / b - (a / b) db / b
    return _add_tangents(None if ta is None else ta / b, None if tb is None else -(output * tb) / b)


def _pow(args: tuple, tangents: list, output: Any) -> Any:
    (a, b), (ta, tb) = args, tangents  # d(a^b) = b a^(b-1) da + a^b log(a) db
    first = None if ta is None else ta * b * a ** (b - 1)
    second = None
    if tb is not None:  # log(a) only when the exponent moves (a may be negative otherwise)
        log_a = a.log() if isinstance(a, Variable) else float(np.log(a))
        second = tb * output * log_a
    return _add_tangents(first, second)


def _matmul(args: tuple, tangents: list, output: Any) -> Any:
    (a, b), (ta, tb) = args, tangents  # d(A B) = dA B + A dB
    return _add_tangents(None if ta is None else ta @ b, None if tb is None else a @ tb)


def _pointwise(derivative: Any) -> Any:
    """A rule for y = f(x): dy = f'(x) dx, with f' from the input and the output."""

    def rule(args: tuple, tangents: list, output: Any) -> Any:
        return tangents[0] * derivative(args[0], output)

    return rule


def _linear(cls: type) -> Any:
    """A rule for an op linear in its first argument (views, sums): apply it to the tangent."""

    def rule(args: tuple, tangents: list, output: Any) -> Any:
        return cls.apply(tangents[0], *args[1:])

    return rule


JVP_RULES.update(
    {
        Add: _add,
        Sub: _sub,
        Mul: _mul,
        Div: _div,
        Pow: _pow,
        MatMul: _matmul,
        Neg: _linear(Neg),
        Exp: _pointwise(lambda x, y: y),
        Log: _pointwise(lambda x, y: 1 / x),
        Tanh: _pointwise(lambda x, y: 1 - y * y),
        Sigmoid: _pointwise(lambda x, y: y * (1 - y)),
        Relu: _pointwise(lambda x, y: Variable._make((x._data > 0).astype(y._data.dtype))),
        Sqrt: _pointwise(lambda x, y: 0.5 / y),
        Sin: _pointwise(lambda x, y: x.cos()),
        Cos: _pointwise(lambda x, y: -x.sin()),
        Sum: _linear(Sum),
        Mean: _linear(Mean),
        Reshape: _linear(Reshape),
        Transpose: _linear(Transpose),
        Permute: _linear(Permute),
        Unsqueeze: _linear(Unsqueeze),
        Squeeze: _linear(Squeeze),
        Expand: _linear(Expand),
        Index: _linear(Index),
    }
)

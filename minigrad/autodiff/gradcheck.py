"""gradcheck(): compare backward's gradients with finite differences.

For f with inputs x, the analytical Jacobian comes from one backward pass per output
element; the numerical one from central differences (f(x + eps) - f(x - eps)) / (2 eps)
per input element. They must agree within atol + rtol * |numerical|.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff import engine
from minigrad.autodiff.grad_mode import no_grad
from minigrad.variable import Variable


class GradcheckError(RuntimeError):
    """Raised by gradcheck when backward and finite differences disagree."""


def gradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when fn's backward matches finite differences for every input and output element."""
    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    checked = [
        i for i, value in enumerate(inputs) if isinstance(value, Variable) and value.requires_grad
    ]
    if not checked:
        raise ValueError(
            "gradcheck expects at least one input Variable with requires_grad=True; "
            "got none. Create the inputs with requires_grad=True."
        )
    for i in checked:
        if inputs[i].is_text:
            raise TypeError(f"gradcheck works on numeric inputs; input {i} is a text Variable.")
        if inputs[i].data.dtype != np.float64:
            warnings.warn(
                f"input {i} has dtype {inputs[i].data.dtype}; gradcheck needs float64 to be "
                f"precise, so it may fail for rounding alone.",
                stacklevel=2,
            )

    for out_index, output in _outputs_of(fn, inputs):
        analytical = _analytical_jacobian(output, [inputs[i] for i in checked])
        numerical = _numerical_jacobian(fn, inputs, checked, out_index, eps)
        for position, input_index in enumerate(checked):
            a, n = analytical[position], numerical[position]
            bad = np.abs(a - n) > atol + rtol * np.abs(n)
            if not bad.any():
                continue
            if not raise_exception:
                return False
            raise GradcheckError(
                _report(inputs, input_index, out_index, output, a, n, bad, atol, rtol)
            )
    return True


def _outputs_of(fn: Callable, inputs: tuple) -> list[tuple[int, Variable]]:
    """The outputs to check, with their positions among everything fn returns."""
    result = fn(*inputs)
    results = result if isinstance(result, (tuple, list)) else (result,)
    outputs = [(i, r) for i, r in enumerate(results) if isinstance(r, Variable) and r.requires_grad]
    if not outputs:
        raise ValueError(
            "gradcheck: fn returned no Variable that requires grad, so there is nothing to check."
        )
    return outputs


def _analytical_jacobian(output: Variable, inputs: list[Variable]) -> list[np.ndarray]:
    """jacobian[k][j, i] = d output.flat[j] / d inputs[k].flat[i], one backward per j."""
    jacobians = [np.zeros((output.data.size, x.data.size)) for x in inputs]
    for j in range(output.data.size):
        seed = np.zeros_like(output.data)
        seed.flat[j] = 1.0
        grads = engine.grad(output, inputs, seed, retain_graph=True, allow_unused=True)
        for k, g in enumerate(grads):
            if g is not None:
                jacobians[k][j] = g.data.reshape(-1)
    return jacobians


def _numerical_jacobian(
    fn: Callable, inputs: tuple, checked: list[int], out_index: int, eps: float
) -> list[np.ndarray]:
    jacobians = []
    for input_index in checked:
        data = inputs[input_index].data
        columns = []
        for i in range(data.size):
            original = data.flat[i]
            data.flat[i] = original + eps
            plus = _evaluate(fn, inputs, out_index)
            data.flat[i] = original - eps
            minus = _evaluate(fn, inputs, out_index)
            data.flat[i] = original
            columns.append(((plus - minus) / (2 * eps)).reshape(-1))
        if not columns:  # an empty input: a Jacobian with no columns
            jacobians.append(np.zeros((_evaluate(fn, inputs, out_index).size, 0)))
            continue
        jacobians.append(np.stack(columns, axis=1))
    return jacobians


def _evaluate(fn: Callable, inputs: tuple, out_index: int) -> np.ndarray:
    with no_grad():
        result = fn(*inputs)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return np.array(results[out_index].data, dtype=np.float64)


def _report(
    inputs: tuple,
    input_index: int,
    out_index: int,
    output: Variable,
    a: np.ndarray,
    n: np.ndarray,
    bad: np.ndarray,
    atol: float,
    rtol: float,
) -> str:
    row, column = (int(k) for k in np.argwhere(bad)[0])
    x = inputs[input_index]
    name = f" ({x.name!r})" if x.name else ""
    in_position = np.unravel_index(column, x.shape) if x.shape else ()
    out_position = np.unravel_index(row, output.shape) if output.shape else ()
    return (
        f"Jacobian mismatch for output {out_index} with respect to input {input_index}{name}, "
        f"element {tuple(int(k) for k in in_position)} of the input and "
        f"{tuple(int(k) for k in out_position)} of the output:\n"
        f"  analytical (backward): {a[row, column]:.6g}\n"
        f"  numerical (finite differences): {n[row, column]:.6g}\n"
        f"  {int(bad.sum())} of {bad.size} entries differ by more than "
        f"atol + rtol * |numerical| = {atol:g} + {rtol:g} * |numerical|.\n"
        f"Check the backward formula for this input."
    )

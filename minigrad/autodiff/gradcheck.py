"""gradcheck(): compare backward's gradients with finite differences.

For f with inputs x, the analytical Jacobian comes from one backward pass per output
element; the numerical one from central differences (f(x + eps) - f(x - eps)) / (2 eps)
per input element. They must agree within atol + rtol * |numerical|.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff import forward_ad
from minigrad.core import engine
from minigrad.core.checks import check_callable, check_flag
from minigrad.core.grad_mode import enable_grad, no_grad
from minigrad.core.variable import Variable


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
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """True when fn's backward matches finite differences for every input and output element.

    PyTorch's keyword arguments are accepted. Honoured: eps, atol, rtol, raise_exception,
    nondet_tol (backward run twice must agree within it), check_undefined_grad (a zero
    output gradient must give zero or None input gradients), check_grad_dtypes (each
    gradient has its input's dtype), check_backward_ad, check_forward_ad (forward mode's
    Jacobian, one jvp per input element, against the same finite differences). Accepted
    and ignored, because they cannot apply here: fast_mode (minigrad always does the full,
    slower check, which is strictly stronger), check_batched_grad and
    check_batched_forward_grad (need vmap), masked (no sparse tensors).
    """
    _check_tolerances(eps, atol, rtol, nondet_tol)
    check_callable(fn, "fn", "gradcheck", "the function to check")
    flags = {
        "raise_exception": raise_exception,
        "check_undefined_grad": check_undefined_grad,
        "check_grad_dtypes": check_grad_dtypes,
        "check_batched_grad": check_batched_grad,
        "check_batched_forward_grad": check_batched_forward_grad,
        "check_forward_ad": check_forward_ad,
        "check_backward_ad": check_backward_ad,
        "fast_mode": fast_mode,
    }
    for name, value in flags.items():
        check_flag(value, name, "gradcheck")
    if masked is not None:
        check_flag(masked, "masked", "gradcheck")
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
    if not check_backward_ad and not check_forward_ad:
        return True

    for out_index, output in _outputs_of(fn, inputs):
        differentiable = [inputs[i] for i in checked]
        numerical = _numerical_jacobian(fn, inputs, checked, out_index, eps)
        modes = []
        if check_backward_ad:
            modes.append(("backward", _analytical_jacobian(output, differentiable)))
        if check_forward_ad:
            modes.append(("forward mode", _forward_jacobian(fn, inputs, checked, out_index)))
        for mode, analytical in modes:
            for position, input_index in enumerate(checked):
                a, n = analytical[position], numerical[position]
                bad = np.abs(a - n) > atol + rtol * np.abs(n)
                if not bad.any():
                    continue
                report = _report(inputs, input_index, out_index, output, a, n, bad, atol, rtol)
                return _fail(raise_exception, report.replace("backward", mode))
        if not check_backward_ad:
            continue
        # The values agree; now what else PyTorch's gradcheck asks of a backward.
        problem = _check_backward_itself(
            output, differentiable, nondet_tol, check_undefined_grad, check_grad_dtypes
        )
        if problem:
            return _fail(raise_exception, f"output {out_index}: {problem}")
    return True


def _check_tolerances(eps: Any, atol: Any, rtol: Any, nondet_tol: Any) -> None:
    """eps > 0, atol, rtol and nondet_tol >= 0 (numbers): else the comparison would be
    meaningless (eps = 0 divides by zero). RuntimeError, as PyTorch raises for atol < 0."""
    limits = (
        ("eps", eps, "> 0"),
        ("atol", atol, ">= 0"),
        ("rtol", rtol, ">= 0"),
        ("nondet_tol", nondet_tol, ">= 0"),
    )
    for name, value, smallest in limits:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise TypeError(f"gradcheck: {name} must be a number {smallest}; got {value!r}.")
        too_small = value <= 0 if name == "eps" else value < 0
        if too_small or not math.isfinite(value):
            raise RuntimeError(
                f"gradcheck: {name} must be a finite number {smallest}; got {value!r}. "
                f"Use the default ({_DEFAULTS[name]:g}) unless you need another."
            )


_DEFAULTS = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3, "nondet_tol": 0.0}


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of the first derivatives: second derivatives against finite differences.

    The function checked maps (inputs, v) to vᵀJ, the gradients backward computes with
    create_graph=True for output gradients v (random, seeded, when not given). It passes
    when backward itself is differentiable and its derivative is right. Keywords as in
    gradcheck; gen_non_contig_grad_outputs is ignored (NumPy arrays here are contiguous)
    and check_fwd_over_rev=True checks the same second derivatives by forward mode over
    backward (gradcheck's check_forward_ad on the first derivatives).
    """
    check_callable(fn, "fn", "gradgradcheck", "the function to check")
    flags = {
        "gen_non_contig_grad_outputs": gen_non_contig_grad_outputs,
        "check_batched_grad": check_batched_grad,
        "check_fwd_over_rev": check_fwd_over_rev,
        "check_rev_over_rev": check_rev_over_rev,
        "fast_mode": fast_mode,
        "masked": masked,
    }
    for name, value in flags.items():
        check_flag(value, name, "gradgradcheck")
    if not check_rev_over_rev and not check_fwd_over_rev:
        return True
    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    differentiable = [v for v in inputs if isinstance(v, Variable) and v.requires_grad]
    if any(v.is_text for v in differentiable):
        raise TypeError("gradgradcheck works on numeric inputs; one input is a text Variable.")
    outputs = [output for _, output in _outputs_of(fn, inputs)]
    if any(output.is_text for output in outputs):
        raise TypeError("gradgradcheck works on numeric outputs; fn returned a text Variable.")
    if grad_outputs is None:
        # Random output gradients, from a fixed seed so a failure can be repeated.
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Variable(rng.standard_normal(o.shape).astype(o.data.dtype), requires_grad=True)
            for o in outputs
        )
    else:
        grad_outputs = (
            tuple(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else (grad_outputs,)
        )
    count = len(inputs)

    def first_derivatives(*values: Any) -> tuple:
        # Finite differences evaluate this under no_grad; it needs a graph to backward.
        with enable_grad():
            results = fn(*values[:count])
            results = results if isinstance(results, (tuple, list)) else (results,)
            wanted = [r for r in results if isinstance(r, Variable) and r.requires_grad]
            grads = engine.grad(
                wanted,
                [v for v in values[:count] if isinstance(v, Variable) and v.requires_grad],
                list(values[count:]),
                create_graph=True,
                allow_unused=True,
            )
        return tuple(g for g in grads if g is not None)

    if len(differentiable) == 0:
        raise ValueError("gradgradcheck expects at least one input with requires_grad=True.")
    return gradcheck(
        first_derivatives,
        inputs + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )


def _fail(raise_exception: bool, message: str) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def _check_backward_itself(
    output: Variable,
    inputs: list[Variable],
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
) -> str | None:
    """What is wrong with backward apart from its values, or None."""
    seed = np.ones_like(output.data)
    first = engine.grad(output, inputs, seed, retain_graph=True, allow_unused=True)
    second = engine.grad(output, inputs, seed, retain_graph=True, allow_unused=True)
    for k, (a, b) in enumerate(zip(first, second)):
        if a is None or b is None:
            continue
        if np.max(np.abs(a.data - b.data), initial=0.0) > nondet_tol:
            return (
                f"backward is not deterministic: two runs gave gradients for input {k} that "
                f"differ by more than nondet_tol={nondet_tol}. Make backward deterministic, "
                f"or pass a larger nondet_tol."
            )
        if check_grad_dtypes and a.data.dtype != inputs[k].data.dtype:
            return (
                f"the gradient of input {k} has dtype {a.data.dtype} but the input has "
                f"{inputs[k].data.dtype}; cast the gradient in backward."
            )
    if check_undefined_grad:
        zeros = engine.grad(
            output, inputs, np.zeros_like(output.data), retain_graph=True, allow_unused=True
        )
        for k, g in enumerate(zeros):
            if g is not None and np.any(g.data != 0):
                return (
                    f"a zero (undefined) output gradient gave a nonzero gradient for input "
                    f"{k}; backward must treat a missing output gradient as zeros."
                )
    return None


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
        seed = np.zeros_like(output.detach().numpy())
        seed.flat[j] = 1.0
        grads = engine.grad(output, inputs, seed, retain_graph=True, allow_unused=True)
        for k, g in enumerate(grads):
            if g is not None:
                jacobians[k][j] = g.data.reshape(-1)
    return jacobians


def _forward_jacobian(
    fn: Callable, inputs: tuple, checked: list[int], out_index: int
) -> list[np.ndarray]:
    """jacobian[k][:, i] = the output's tangent for the tangent e_i on input k: one
    forward-mode pass (jvp) per input element, the transpose of backward's road."""
    jacobians = []
    for input_index in checked:
        x = inputs[input_index]
        columns = []
        for i in range(x.data.size):
            tangent = np.zeros_like(x.data)
            tangent.flat[i] = 1.0
            with forward_ad.dual_level():
                duals = list(inputs)
                duals[input_index] = forward_ad.make_dual(x, Variable(tangent))
                result = fn(*duals)
                results = result if isinstance(result, (tuple, list)) else (result,)
                output_tangent = forward_ad.unpack_dual(results[out_index]).tangent
                size = results[out_index].data.size
            if output_tangent is None:  # the output does not depend on this input
                columns.append(np.zeros(size))
            else:
                columns.append(np.asarray(output_tangent.data, dtype=np.float64).reshape(-1))
        if not columns:
            jacobians.append(np.zeros((_evaluate(fn, inputs, out_index).size, 0)))
            continue
        jacobians.append(np.stack(columns, axis=1))
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

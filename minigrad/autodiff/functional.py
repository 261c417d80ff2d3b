"""Derivatives of whole functions: vjp, jvp, jacobian, hessian, hvp (PyTorch's
`torch.autograd.functional`). A tool built on the engine and on the ops (it stacks rows):
the core of minigrad.autodiff never imports the ops, this module does.

`func` takes Variables and returns a Variable (or a tuple of them); `inputs` is one
Variable or a tuple. Each function works on fresh copies of the inputs, so the caller's
Variables and their `.grad` are left alone.

- vjp(func, inputs, v): vᵀJ, one reverse pass;
- jvp(func, inputs, v): J·v, one forward-mode pass (dual numbers);
- jacobian(func, inputs, strategy=): the whole J, row by row with "reverse-mode" (one
  pass per output element) or column by column with "forward-mode" (one pass per input
  element): pick the side with fewer elements;
- hessian(func, inputs): the Jacobian of the gradient;
- hvp(func, inputs, v): H·v without forming H, forward-over-reverse (the tangent of the
  gradient);
- vhp(func, inputs, v): vᵀH, reverse-over-reverse (the gradient of gradient · v); the
  same numbers as hvp when H is symmetric, by another road.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff import forward_ad
from minigrad.core.engine import grad
from minigrad.core.variable import Variable
from minigrad.ops.shape import stack


def _as_tuple(value: Any, what: str, function: str) -> tuple[tuple, bool]:
    """(value as a tuple, whether it was one already); a TypeError naming `function` unless
    every item is a numeric Variable (text has no derivatives)."""
    if isinstance(value, tuple):
        values = value
        was_tuple = True
    else:
        values, was_tuple = (value,), False
    for index, item in enumerate(values):
        if not isinstance(item, Variable):
            raise TypeError(
                f"The {what} given to {function} must be either a Variable or a tuple of "
                f"Variables; item {index} is {type(item).__name__}. Wrap numbers and lists "
                f"with minigrad.tensor(...)."
            )
        if item.is_text:
            raise TypeError(
                f"The {what} given to {function} must be numeric Variables; item {index} is a "
                f"text Variable, which has no derivatives. Use text.backward() for feedback."
            )
    return values, was_tuple


def _check_func(func: Any, function: str) -> None:
    """A TypeError unless func can be called."""
    if not callable(func):
        raise TypeError(
            f"{function}(func, inputs, ...): func must be a function of the inputs that returns "
            f"Variables; got {type(func).__name__}."
        )


def _check_sizes(vectors: tuple, values: tuple, function: str) -> None:
    """A RuntimeError unless each vector of v has the shape of its input (PyTorch's check)."""
    for index, (vector, x) in enumerate(zip(vectors, values)):
        if tuple(vector.shape) != tuple(x.shape):
            raise RuntimeError(
                f"{function}: v has invalid size: should be {tuple(x.shape)} but got "
                f"{tuple(vector.shape)} (v[{index}] against inputs[{index}]). Give v the "
                f"shape of the input it multiplies."
            )


def _fresh(inputs: tuple) -> tuple:
    """Leaves over the same values that require grad (the caller's stay untouched)."""
    return tuple(Variable(x.data.copy(), requires_grad=True) for x in inputs)


def _zeros_for_none(grads: tuple, like: tuple) -> tuple:
    return tuple(
        Variable(np.zeros_like(x.data)) if g is None else g for g, x in zip(grads, like)
    )


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False) -> tuple:
    """(func(inputs), vᵀ J): the gradient of <func(inputs), v> with respect to the inputs.
    `v` may be left out when func returns a single element (then it is 1)."""
    _check_func(func, "vjp")
    values, was_tuple = _as_tuple(inputs, "inputs", "vjp")
    leaves = _fresh(values)
    outputs = func(*leaves)
    outs, _ = _as_tuple(outputs, "func's output", "vjp")
    vs = None if v is None else _as_tuple(v, "v", "vjp")[0]
    # An output that does not depend on the inputs adds nothing: vᵀJ is zeros, as PyTorch.
    kept = [i for i, out in enumerate(outs) if isinstance(out, Variable) and out.requires_grad]
    if kept:
        kept_vs = None if vs is None else [vs[i] for i in kept if i < len(vs)]
        kept_outs = [outs[i] for i in kept]
        grads = grad(kept_outs, leaves, kept_vs, create_graph=create_graph, allow_unused=True)
    else:
        grads = (None,) * len(leaves)
    grads = _zeros_for_none(grads, leaves)
    result = grads if was_tuple else grads[0]
    return _detached(outputs, create_graph), result


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False) -> tuple:
    """(func(inputs), J · v): one pass of forward-mode AD with tangents v (which may be
    left out when the only input has a single element: then it is 1)."""
    _check_func(func, "jvp")
    values, was_tuple = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(values) != 1 or values[0].numel() != 1:
            raise ValueError(
                "jvp: v (one tangent per input) can be left out only for a single input with "
                "one element."
            )
        v = Variable(np.ones_like(values[0].data))
    tangents, _ = _as_tuple(v, "v", "jvp")
    if len(tangents) != len(values):
        raise ValueError(
            f"jvp needs one tangent per input: {len(values)} inputs, {len(tangents)} tangents."
        )
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(x.detach(), t) for x, t in zip(values, tangents)]
        outputs = func(*duals)
        outs, out_tuple = _as_tuple(outputs, "func's output", "jvp")
        unpacked = [forward_ad.unpack_dual(out) for out in outs]
    primals = tuple(u.primal for u in unpacked)
    jvps = tuple(
        Variable(np.zeros_like(out.data)) if u.tangent is None else u.tangent
        for u, out in zip(unpacked, outs)
    )
    if out_tuple:
        return primals, jvps
    return primals[0], jvps[0]


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """∂func/∂inputs, shaped output.shape + input.shape (a tuple per output and input when
    either is a tuple). strict=True refuses an output that does not depend on an input
    (instead of its zeros), as PyTorch; `vectorize` is accepted for PyTorch's sake."""
    if not isinstance(strategy, str) or strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"strategy must be 'reverse-mode' or 'forward-mode'; got {strategy!r}.")
    _check_func(func, "jacobian")
    values, inputs_tuple = _as_tuple(inputs, "inputs", "jacobian")
    leaves = _fresh(values)
    outputs = func(*leaves)
    outs, outputs_tuple = _as_tuple(outputs, "func's output", "jacobian")
    if strict and strategy == "forward-mode":
        raise RuntimeError(
            "jacobian: strict=True and strategy='forward-mode' are not supported together "
            "(nor in PyTorch); use one of them."
        )
    if strategy == "reverse-mode":
        blocks = _jacobian_by_rows(outs, leaves, create_graph, strict)
    else:
        blocks = _jacobian_by_columns(func, values, outs)
    rows = [tuple(row) if inputs_tuple else row[0] for row in blocks]
    return tuple(rows) if outputs_tuple else rows[0]


def _jacobian_by_rows(
    outs: tuple, leaves: tuple, create_graph: bool, strict: bool = False
) -> list[list]:
    """One reverse pass per output element: row i of J is e_iᵀ J."""
    blocks = []
    for index, out in enumerate(outs):
        rows = [[] for _ in leaves]
        reached = [False] * len(leaves)
        if out.requires_grad:
            for i in range(out.numel()):
                seed = np.zeros(out.shape, out.dtype)
                seed.flat[i] = 1
                grads = grad(out, leaves, Variable(seed), retain_graph=True,
                             create_graph=create_graph, allow_unused=True)  # fmt: skip
                for k, g in enumerate(grads):
                    reached[k] = reached[k] or g is not None
                for k, g in enumerate(_zeros_for_none(grads, leaves)):
                    rows[k].append(g.reshape(-1))
        if strict and not all(reached):
            raise RuntimeError(
                f"jacobian(strict=True): output {index} of func does not depend on input "
                f"{reached.index(False)}, which strict mode refuses (as PyTorch's); pass "
                f"strict=False to get zeros there."
            )
        if not out.requires_grad:  # does not depend on the inputs (a constant gradient)
            blocks.append([Variable(np.zeros(out.shape + leaf.shape)) for leaf in leaves])
            continue
        blocks.append([
            _stack(rows[k], (out.numel(), leaf.numel())).reshape(out.shape + leaf.shape)
            for k, leaf in enumerate(leaves)
        ])  # fmt: skip
    return blocks


def _jacobian_by_columns(func: Callable, values: tuple, outs: tuple) -> list[list]:
    """One forward-mode pass per input element: column j of J is J e_j."""
    columns = [[[] for _ in values] for _ in outs]
    for k, x in enumerate(values):
        for j in range(x.numel()):
            tangents = [Variable(np.zeros_like(value.data)) for value in values]
            tangents[k].data.flat[j] = 1
            _, jvps = jvp(func, tuple(values), tuple(tangents))
            jvps = jvps if isinstance(jvps, tuple) else (jvps,)
            for i, column in enumerate(jvps):
                columns[i][k].append(column.reshape(-1))
    blocks = []
    for i, out in enumerate(outs):
        blocks.append([
            _stack(columns[i][k], (x.numel(), out.numel())).T.reshape(out.shape + x.shape)
            for k, x in enumerate(values)
        ])  # fmt: skip
    return blocks


def _stack(pieces: list, shape: tuple) -> Variable:
    return stack(pieces).reshape(shape) if pieces else Variable(np.zeros(shape))


def hessian(func: Callable, inputs: Any, create_graph: bool = False) -> Any:
    """The matrix of second derivatives of a scalar func: the Jacobian of its gradient."""
    _check_func(func, "hessian")
    values, was_tuple = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Variable) -> Any:
        grads = grad(func(*xs), xs, create_graph=True, allow_unused=True)
        grads = _zeros_for_none(grads, xs)
        return grads if was_tuple else grads[0]

    return jacobian(gradient, inputs if was_tuple else values[0], create_graph=create_graph)


def hvp(func: Callable, inputs: Any, v: Any, create_graph: bool = False) -> tuple:
    """(func(inputs), H · v) for a scalar func, forward-over-reverse: the gradient is
    computed (reverse mode) on dual inputs carrying v, so its tangent is H · v."""
    _check_func(func, "hvp")
    values, was_tuple = _as_tuple(inputs, "inputs", "hvp")
    tangents, _ = _as_tuple(v, "v", "hvp")
    if len(tangents) != len(values):
        raise ValueError(
            f"hvp: v needs one Variable per input ({len(values)}); got {len(tangents)}."
        )
    _check_sizes(tangents, values, "hvp")
    with forward_ad.dual_level():
        leaves = _fresh(values)
        duals = [forward_ad.make_dual(x, t) for x, t in zip(leaves, tangents)]
        output = func(*duals)
        grads = grad(output, duals, create_graph=True, allow_unused=True)
        products = tuple(
            Variable(np.zeros_like(x.data))
            if g is None or forward_ad.unpack_dual(g).tangent is None
            else forward_ad.unpack_dual(g).tangent
            for g, x in zip(grads, values)
        )
    if not create_graph:
        products = tuple(product.detach() for product in products)
    result = products if was_tuple else products[0]
    return output.detach(), result


def vhp(func: Callable, inputs: Any, v: Any, create_graph: bool = False) -> tuple:
    """(func(inputs), vᵀ · H) for a scalar func, reverse-over-reverse: the gradient g is
    computed with its own graph, then the gradient of Σ g · v."""
    _check_func(func, "vhp")
    values, was_tuple = _as_tuple(inputs, "inputs", "vhp")
    vectors, _ = _as_tuple(v, "v", "vhp")
    if len(vectors) != len(values):
        raise ValueError(
            f"vhp: v needs one Variable per input ({len(values)}); got {len(vectors)}."
        )
    _check_sizes(vectors, values, "vhp")
    leaves = _fresh(values)
    output = func(*leaves)
    if not isinstance(output, Variable) or output.numel() != 1:
        raise ValueError(
            "vhp: func must return a single-element Variable (the Hessian of a scalar); "
            f"got {type(output).__name__ if not isinstance(output, Variable) else output.shape}."
        )
    grads = grad(output, leaves, create_graph=True, allow_unused=True)
    used = [(g, vector) for g, vector in zip(grads, vectors) if g is not None]
    products: tuple = tuple(Variable(np.zeros_like(x.data)) for x in values)
    if used and any(g.requires_grad for g, _ in used):
        inner = _sum_of([(g * vector).sum() for g, vector in used])
        second = grad(inner, leaves, create_graph=create_graph, allow_unused=True)
        products = _zeros_for_none(second, values)
    if not create_graph:
        products = tuple(product.detach() for product in products)
    result = products if was_tuple else products[0]
    return output.detach(), result


def _sum_of(terms: list) -> Variable:
    """t₀ + t₁ + ... (Python's sum would start from the number 0)."""
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _detached(outputs: Any, keep: bool) -> Any:
    if keep:
        return outputs
    if isinstance(outputs, tuple):
        return tuple(out.detach() for out in outputs)
    return outputs.detach()


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

"""The reverse-mode transforms of torch.func: grad, grad_and_value and vjp.

    grad(f)(x)            ∂f/∂x for a scalar f: one backward pass, x's shape
    vjp(f, x) -> (f(x), vjp_fn), vjp_fn(v) = (vᵀ J,): a pullback to call for any v

Each returns a function (or, for vjp, a function among its results) and works on
nests: grad of f(params_dict, x) with respect to params_dict is a dict. An input the
output does not depend on gets a gradient of zeros, as in PyTorch.

Nesting is what makes them transforms: grad(grad(f)) is the second derivative, because
the inner grad records its backward whenever something outside may differentiate it
(minigrad/func/levels.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from minigrad.core.checks import check_callable
from minigrad.core.engine import grad as engine_grad
from minigrad.core.grad_mode import enable_grad
from minigrad.core.variable import Variable
from minigrad.factories import zeros_like
from minigrad.func.arguments import (
    check_tensors,
    chosen,
    differentiable_leaves,
    replaced,
    split_aux,
)
from minigrad.func.levels import depth, differentiable, graph_needed, level, plain_unless
from minigrad.func.pytree import tree_flatten, tree_leaves, tree_unflatten


def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function returning (∂func/∂args[argnums], func(*args)) for a func with a scalar
    output; with has_aux, func returns (output, aux) and this returns (grad, (output, aux))."""
    check_callable(func, "func", "grad_and_value", "a function returning a scalar Variable")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        with enable_grad(), level():
            targets, positions = chosen(args, argnums)
            leaves = differentiable_leaves(targets)
            _, spec = tree_flatten(targets)
            inner = [differentiable(x) for x in leaves]
            inner_targets = tree_unflatten(inner, spec)
            was_tuple = isinstance(argnums, tuple)
            output = func(*replaced(args, positions, inner_targets, was_tuple), **kwargs)
            output, aux = split_aux(output, has_aux, "grad_and_value(f)(*args)")
            _check_scalar(output)
            if has_aux:
                check_tensors(aux, "Expected tensors")
            keep = graph_needed([output])
            keep_aux = graph_needed(tree_leaves(aux))
            roots = [output] if output.requires_grad else []  # else: a constant, zeros
            gradients = tree_unflatten(_gradients(roots, None, inner, keep, keep), spec)
        value = plain_unless(keep, output)
        if has_aux:
            return plain_unless(keep, gradients), (value, plain_unless(keep_aux, aux))
        return plain_unless(keep, gradients), value

    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function returning ∂func/∂args[argnums] (a tuple for a tuple of argnums; a nest for
    a nested argument) for a func with a scalar output; with has_aux, func returns
    (output, aux) and this returns (grad, aux)."""
    check_callable(func, "func", "grad", "a function returning a scalar Variable")
    with_value = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradients, value = with_value(*args, **kwargs)
        if has_aux:
            return gradients, value[1]
        return gradients

    return wrapper


def _check_scalar(output: Any) -> None:
    if not isinstance(output, Variable) or output.is_text:
        kind = "a text Variable" if isinstance(output, Variable) else type(output)
        raise RuntimeError(
            f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {kind}. "
            f"Return a scalar Variable (e.g. loss.sum()); for several outputs use vjp or "
            f"jacrev."
        )
    if output.ndim != 0:
        raise RuntimeError(
            f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
            f"tensor with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs "
            f"instead?"
        )


def _gradients(
    roots: list, seeds: list | None, inputs: list, create_graph: bool, retain_graph: bool
) -> list:
    """∂(Σ <root, seed>)/∂input for each input (seeds None: a scalar root, seed 1); zeros
    where no gradient flows, as torch.func gives."""
    found: tuple = (None,) * len(inputs)
    if roots:
        found = engine_grad(roots, inputs, seeds, retain_graph=retain_graph,
                            create_graph=create_graph, allow_unused=True)  # fmt: skip
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) = vᵀ J: one tuple entry per primal,
    shaped like it. cotangents have the output's structure and shapes. vjp_fn may be called
    any number of times (the graph is kept); with has_aux, func returns (output, aux) and
    this returns (output, vjp_fn, aux)."""
    check_callable(func, "func", "vjp", "a function of the primals")
    with enable_grad(), level():
        leaves = differentiable_leaves(primals)
        _, spec = tree_flatten(primals)
        inner = [differentiable(x) for x in leaves]
        output = func(*tree_unflatten(inner, spec))
        output, aux = split_aux(output, has_aux, "vjp(f, *primals)")
        outputs = check_tensors(
            output, "vjp(f, *primals): expected f(*primals) to return only tensors"
        )
        if has_aux:
            check_tensors(aux, "Expected tensors")
        out_spec = tree_flatten(output)[1]
        keep = graph_needed(outputs)
        keep_aux = graph_needed(tree_leaves(aux))

    def vjp_fn(
        cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None
    ) -> tuple:
        """vᵀ J for the cotangents v (the output's structure), one entry per primal."""
        given, given_spec = tree_flatten(cotangents)
        if given_spec != out_spec:
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {given_spec!r}, primal output: "
                f"{out_spec!r}. Give one cotangent per output, nested like the output."
            )
        _check_cotangents(given, outputs)
        with enable_grad():
            if create_graph is None:
                wanted = [c for c in given if isinstance(c, Variable)]
                create_graph = depth() > 0 or keep or any(c.requires_grad for c in wanted)
            # An output that does not depend on the primals, or no cotangent: no term.
            pairs = [
                (out, cotangent)
                for out, cotangent in zip(outputs, given)
                if cotangent is not None and out.requires_grad
            ]
            roots = [out for out, _ in pairs]
            seeds = [cotangent for _, cotangent in pairs]
            gradients = _gradients(roots, seeds, inner, create_graph, retain_graph)
        return plain_unless(create_graph, tree_unflatten(gradients, spec))

    if has_aux:
        return plain_unless(keep, output), vjp_fn, plain_unless(keep_aux, aux)
    return plain_unless(keep, output), vjp_fn


def _check_cotangents(given: list, outputs: list) -> None:
    for index, (cotangent, out) in enumerate(zip(given, outputs)):
        if cotangent is None:
            continue  # no contribution from this output
        if not isinstance(cotangent, Variable) or cotangent.is_text:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(cotangent).__name__} "
                f"(cotangent {index}). Give a Variable of the output's shape."
            )
        if tuple(cotangent.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of {tuple(cotangent.shape)} "
                f"and output[{index}] has a shape of {tuple(out.shape)}. A cotangent has its "
                f"output's shape."
            )


__all__ = ["grad", "grad_and_value", "vjp"]

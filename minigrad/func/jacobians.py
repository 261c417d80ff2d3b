"""Whole Jacobians and Hessians as transforms: jacrev, jacfwd, hessian.

For f: ℝⁿ → ℝᵐ the Jacobian J (m × n) has as many rows as outputs and columns as inputs:

- jacrev(f): row by row, one vjp_fn call per output element (eᵢᵀ J): m reverse passes
  after one forward pass; pick it when the outputs are fewer (a loss: m = 1).
- jacfwd(f): column by column, one jvp per input element (J eⱼ), mapped with vmap over
  the identity basis: n forward passes; pick it when the inputs are fewer.
- hessian(f) = jacfwd(jacrev(f)): the Jacobian of the gradient, forward-over-reverse.

Each block is shaped output.shape + input.shape; for several outputs or inputs (a tuple
of argnums, dict arguments, tuple outputs) the result is nested like the output, each
leaf holding the nest of the inputs. The transforms compose: jacrev(jacrev(f)),
jacfwd(jacfwd(f)) and vmap(jacrev(f)) all work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.checks import check_callable
from minigrad.core.variable import Variable
from minigrad.factories import zeros
from minigrad.func.arguments import chosen, replaced
from minigrad.func.forward import checked_primals, jvp
from minigrad.func.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from minigrad.func.randomness import check_mode
from minigrad.func.reverse import vjp
from minigrad.func.vmap import vmap
from minigrad.ops.shape import stack


def _of_targets(func: Callable, args: tuple, argnums: Any, kwargs: dict) -> tuple:
    """(the primals argnums names, as a tuple; func as a function of them alone)."""
    targets, positions = chosen(args, argnums)
    was_tuple = isinstance(argnums, tuple)

    def of_targets(*values: Any) -> Any:
        return func(*replaced(args, positions, values if was_tuple else values[0], was_tuple),
                    **kwargs)  # fmt: skip

    return (targets if was_tuple else (targets,)), of_targets


def _nest_blocks(blocks: list, in_spec: Any, was_tuple: bool) -> Any:
    """The blocks of one output, one per input leaf, nested like the inputs."""
    per_input = tree_unflatten(blocks, in_spec)  # a tuple, one entry per differentiated arg
    return per_input if was_tuple else per_input[0]


def jacrev(
    func: Callable,
    argnums: Any = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """A function returning the Jacobian of func with respect to args[argnums], by reverse
    mode: one vjp, then its vjp_fn once per output element (the rows of J).

    With has_aux, func returns (output, aux) and this returns (jacobian, aux). chunk_size
    (rows per batch in PyTorch) is checked and changes nothing here."""
    check_callable(func, "func", "jacrev", "a function of the inputs")
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0
    ):
        raise ValueError(
            f"jacrev: `chunk_size` should be greater than 0 (an int, or None); got {chunk_size!r}."
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        primals, of_targets = _of_targets(func, args, argnums, kwargs)
        results = vjp(of_targets, *primals, has_aux=has_aux)
        output, vjp_fn = results[0], results[1]
        outputs, out_spec = tree_flatten(output)
        inputs, in_spec = tree_flatten(primals)
        per_output = []
        for k in range(len(outputs)):
            blocks = _rows(vjp_fn, outputs, out_spec, k, inputs)
            per_output.append(_nest_blocks(blocks, in_spec, isinstance(argnums, tuple)))
        jacobian = tree_unflatten(per_output, out_spec)
        return (jacobian, results[2]) if has_aux else jacobian

    return wrapper


def _rows(vjp_fn: Callable, outputs: list, out_spec: Any, k: int, inputs: list) -> list:
    """The blocks ∂outputs[k]/∂input, one per input, built row by row: eᵢᵀ J."""
    out = outputs[k]
    rows: list[list] = [[] for _ in inputs]
    for element in range(out.numel()):
        seed = np.zeros(tuple(out.shape), dtype=out.dtype)
        seed.flat[element] = 1
        cotangents: list = [None] * len(outputs)  # None: no contribution from that output
        cotangents[k] = Variable(seed)
        pulled = tree_leaves(vjp_fn(tree_unflatten(cotangents, out_spec)))
        for j, row in enumerate(pulled):
            rows[j].append(row.reshape(-1))
    blocks = []
    for j, x in enumerate(inputs):
        shape = tuple(out.shape) + tuple(x.shape)
        if rows[j]:
            blocks.append(stack(rows[j]).reshape(shape))
        else:  # an output with no elements
            blocks.append(zeros(shape, dtype=x.dtype))
    return blocks


def jacfwd(
    func: Callable, argnums: Any = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable:
    """A function returning the Jacobian of func with respect to args[argnums], by forward
    mode: vmap of jvp over the columns of the identity (J eⱼ, one per input element).

    randomness is vmap's: a random draw inside func raises unless it says otherwise. With
    has_aux, func returns (output, aux) and this returns (jacobian, aux)."""
    check_callable(func, "func", "jacfwd", "a function of the inputs")
    check_mode(randomness)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        primals, of_targets = _of_targets(func, args, argnums, kwargs)
        inputs, _, in_spec = checked_primals(primals, primals)
        sizes = [x.numel() for x in inputs]
        basis = tree_unflatten(_identity_columns(inputs, sizes), in_spec)

        def push_forward(*column: Any) -> Any:
            result = jvp(of_targets, primals, column, has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        pushed = vmap(push_forward, randomness=randomness)(*basis)
        tangents, aux = pushed if has_aux else (pushed, None)
        columns, out_spec = tree_flatten(tangents)
        per_output = [
            _nest_blocks(_split_columns(c, inputs, sizes), in_spec, isinstance(argnums, tuple))
            for c in columns
        ]
        jacobian = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jacobian, tree_map(_first_of_batch, aux)  # the same for every column
        return jacobian

    return wrapper


def _identity_columns(inputs: list, sizes: list) -> list:
    """The identity of size Σ sizes, cut per input: entry j has shape (total, *inputs[j])."""
    total = sum(sizes)
    columns = []
    start = 0
    for x, size in zip(inputs, sizes):
        part = np.eye(total, dtype=x.dtype)[:, start : start + size]
        columns.append(Variable(np.ascontiguousarray(part).reshape((total, *x.shape))))
        start += size
    return columns


def _split_columns(pushed: Variable, inputs: list, sizes: list) -> list:
    """J's columns for one output, shape (total, *out), as one block per input of shape
    out.shape + input.shape."""
    out_shape = tuple(pushed.shape[1:])
    moved = pushed.permute(*range(1, pushed.ndim), 0)  # the columns last: (*out, total)
    blocks = []
    start = 0
    for x, size in zip(inputs, sizes):
        block = moved[..., start : start + size]
        blocks.append(block.reshape(out_shape + tuple(x.shape)))
        start += size
    return blocks


def _first_of_batch(value: Any) -> Any:
    return value[0] if isinstance(value, Variable) else value


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """A function returning the Hessian of func with respect to args[argnums]:
    jacfwd(jacrev(func)), shape output.shape + input.shape + input.shape."""
    check_callable(func, "func", "hessian", "a function of the inputs")
    return jacfwd(jacrev(func, argnums), argnums)


__all__ = ["hessian", "jacfwd", "jacrev"]

"""vmap: a function of one example, mapped over a batch dimension of its inputs.

    vmap(f)(xs)[i] == f(xs[i])        in_dims says which dimension of each input is mapped,
                                       out_dims where that dimension goes in each output.

PyTorch's vmap pushes the batch dimension down into every operation (batching rules), so
the function runs once on whole batches. minigrad's runs it once per element, in a Python
loop, and stacks the results: the same values and gradients, the same errors, and composes
with grad, vjp, jvp and the jacobians in the same ways; but the cost is B calls of the
function for a batch of B (what vmap exists to avoid), so it is meant for correctness and
small batches. `chunk_size` is accepted and checked, and changes nothing.

in_dims: an int or None for all inputs, or a tuple with one entry per positional argument,
nested like the argument (a dict argument may take a dict of in_dims, or one value for all
its Variables). None leaves an input unmapped: every call gets it whole. Keyword arguments
are never mapped. out_dims: the same for the outputs (a Variable, or a tuple/list/dict of
them); None means the output is the same for every element and is returned once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.checks import check_callable
from minigrad.core.variable import Variable
from minigrad.factories import zeros
from minigrad.func.pytree import TreeSpec, broadcast_prefix, tree_flatten, tree_unflatten
from minigrad.func.randomness import check_mode, randomness_rule
from minigrad.ops.shape import stack


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """func mapped over dimension in_dims of its inputs, its outputs stacked along out_dims.

    randomness: "error" (a random draw inside func raises), "different" (each element
    draws its own numbers) or "same" (every element gets the same numbers)."""
    check_callable(func, "func", "vmap", "a function to map over the batch")
    check_mode(randomness)
    _check_chunk_size(chunk_size)

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        return _run(func, in_dims, out_dims, randomness, args, kwargs)

    return mapped


def _check_chunk_size(chunk_size: Any) -> None:
    if chunk_size is None:
        return
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)):
        raise TypeError(
            f"vmap: chunk_size should be None or a positive int; got {chunk_size!r} "
            f"({type(chunk_size).__name__})."
        )
    if chunk_size <= 0:
        raise ValueError(
            f"vmap: chunk_size should be None or greater than 0. (got {chunk_size}) Pass "
            f"None to map the whole batch at once."
        )


def _name(func: Callable) -> str:
    """The function's name as PyTorch's messages write it."""
    if isinstance(func, functools.partial):
        return f"functools.partial(<{_name(func.func)}>, ...)"
    return getattr(func, "__name__", repr(func))


def _is_dim(value: Any) -> bool:
    """A leaf of in_dims/out_dims: anything but a tuple, list or dict."""
    return not isinstance(value, (tuple, list, dict))


def _run(
    func: Callable, in_dims: Any, out_dims: Any, randomness: str, args: tuple, kwargs: dict
) -> Any:
    name = _name(func)
    flat_args, args_spec = tree_flatten(args)
    flat_dims = _input_dims(name, in_dims, args, args_spec)
    size = _batch_size(name, in_dims, flat_args, flat_dims)
    results = []
    with randomness_rule(randomness) as before_each:
        # A batch of none: func still runs once (on zeros), for the outputs' shapes.
        for index in range(max(size, 1)):
            before_each()
            element = [_element(x, dim, index, size) for x, dim in zip(flat_args, flat_dims)]
            results.append(func(*tree_unflatten(element, args_spec), **kwargs))
    return _stacked_outputs(name, out_dims, results, size)


def _input_dims(name: str, in_dims: Any, args: tuple, args_spec: TreeSpec) -> list:
    """One in_dim (an int or None) per leaf of args; PyTorch's ValueErrors otherwise."""
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if isinstance(in_dims, bool) or not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            f"are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_dims = broadcast_prefix(in_dims, args, _is_dim)
    if flat_dims is None:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {tree_flatten(in_dims)[1]!r} but inputs has structure {args_spec!r}. "
            f"Give one in_dim per positional argument (None for those not mapped)."
        )
    return flat_dims


def _batch_size(name: str, in_dims: Any, flat_args: list, flat_dims: list) -> int:
    """The size of the mapped dimension, the same in every mapped input."""
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    sizes = []
    for x, dim in zip(flat_args, flat_dims):
        if dim is None:
            continue
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise ValueError(
                f"{where}: Got in_dim={dim} for an input but in_dim must be either an integer "
                f"dimension or None."
            )
        if not isinstance(x, Variable):
            raise ValueError(
                f"{where}: Got in_dim={dim} for an input but the input is of type {type(x)}. "
                f"We cannot vmap over non-Tensor arguments, please use None as the respective "
                f"in_dim"
            )
        if not -x.ndim <= dim < x.ndim:
            raise ValueError(
                f"{where}: Got in_dim={dim} for some input, but that input is a Tensor of "
                f"dimensionality {x.ndim} so expected in_dim to satisfy -{x.ndim} <= in_dim < "
                f"{x.ndim}."
            )
        sizes.append(x.shape[dim])
    if not sizes:
        raise ValueError(
            "vmap: Expected at least one Tensor to vmap over: every in_dim is None (or no "
            "argument is a Variable). Give the mapped argument an in_dim, e.g. in_dims=0."
        )
    if len(set(sizes)) > 1:
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension. Map inputs of one batch size, or leave "
            f"one unmapped with None in in_dims."
        )
    return sizes[0]


def _element(x: Any, dim: int | None, index: int, size: int) -> Any:
    """Element `index` of x along dim (x itself when dim is None)."""
    if dim is None:
        return x
    dim = dim % x.ndim
    if size == 0:
        shape = x.shape[:dim] + x.shape[dim + 1 :]
        return zeros(shape, dtype=x.dtype)
    # Indexing keeps the graph: gradients of the results reach the batched input.
    return x[(slice(None),) * dim + (index,)]


def _stacked_outputs(name: str, out_dims: Any, results: list, size: int) -> Any:
    """The outputs of every call, stacked leaf by leaf along its out_dim."""
    flat_results = []
    spec = tree_flatten(results[0])[1]
    for index, result in enumerate(results):
        leaves, other = tree_flatten(result)
        if other != spec:
            raise ValueError(
                f"vmap({name}, ...): `{name}` returned {other!r} for element {index} but "
                f"{spec!r} for element 0: vmap needs the same structure of outputs for every "
                f"element (no branching on the values)."
            )
        flat_results.append(leaves)
    flat_out_dims = _output_dims(name, out_dims, results[0], spec)
    stacked = [
        _stacked(name, [leaves[k] for leaves in flat_results], dim, size)
        for k, dim in enumerate(flat_out_dims)
    ]
    return tree_unflatten(stacked, spec)


def _output_dims(name: str, out_dims: Any, first: Any, spec: TreeSpec) -> list:
    where = f"vmap({name}, ..., out_dims={out_dims})"
    if not all(_valid_out_dim(dim) for dim in tree_flatten(out_dims)[0]):
        raise ValueError(
            f"{where}: `out_dims` must be an int, None or a python collection of ints "
            f"representing where in the outputs the vmapped dimension should appear."
        )
    flat = broadcast_prefix(out_dims, first, _is_dim)
    if flat is None:
        raise ValueError(
            f"{where}(<inputs>): out_dims is not compatible with the structure of `outputs`. "
            f"out_dims has structure {tree_flatten(out_dims)[1]!r} but outputs has structure "
            f"{spec!r}. Give one out_dim per output."
        )
    return flat


def _valid_out_dim(dim: Any) -> bool:
    return dim is None or (isinstance(dim, (int, np.integer)) and not isinstance(dim, bool))


def _stacked(name: str, values: list, dim: int | None, size: int) -> Any:
    """One output leaf: values (one per element) stacked along dim, or, for dim None, the
    value they all share."""
    first = values[0]
    if dim is None:
        if isinstance(first, Variable) and not all(_same(first, v) for v in values[1:]):
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                f"None: this output differs from element to element. Give it an int out_dim."
            )
        return first
    if not isinstance(first, Variable) or first.is_text:
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. "
            f"Did you mean to set out_dims= to None for output?"
        )
    if not -(first.ndim + 1) <= dim <= first.ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-(first.ndim + 1)}, "
            f"{first.ndim}], but got {dim}): out_dims places the batch dimension among the "
            f"output's {first.ndim} dimensions and the new one."
        )
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) > 1:
        raise ValueError(
            f"vmap({name}, ...): `{name}` returned outputs of different shapes {sorted(shapes)} "
            f"for different elements; vmap stacks them, so they must have one shape."
        )
    if size == 0:
        where = dim % (first.ndim + 1)
        shape = first.shape[:where] + (0,) + first.shape[where:]
        return zeros(shape, dtype=first.dtype)
    return stack(values, dim=dim)


def _same(first: Variable, other: Any) -> bool:
    if not isinstance(other, Variable) or other.shape != first.shape:
        return False
    if other is first:
        return True
    return bool(np.array_equal(np.asarray(first.detach().cpu().numpy()),
                               np.asarray(other.detach().cpu().numpy())))  # fmt: skip


__all__ = ["vmap"]

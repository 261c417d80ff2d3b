"""Reductions: sum, mean, max, min, amax, amin, argmax, argmin, all and any, over all
elements or along dimensions.

Backward puts the removed dimensions back (size 1) and expands the gradient over them.
More reductions (var, std, prod, logsumexp, ...) are in statistics.py.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import normalize_dims, numeric, single_dim
from minigrad.ops.shape import broadcast_to
from minigrad.ops.table import register

MaxResult = namedtuple("MaxResult", ["values", "indices"])
MinResult = namedtuple("MinResult", ["values", "indices"])


def _kept_shape(shape: tuple, dims: tuple) -> tuple:
    """`shape` with every reduced dimension kept as size 1."""
    return tuple(1 if axis in dims else size for axis, size in enumerate(shape))


def _reduced_shape(shape: tuple, dims: tuple) -> tuple:
    """`shape` without the reduced dimensions."""
    return tuple(size for axis, size in enumerate(shape) if axis not in dims)


class Sum(Function):
    """y = sum of x over `dim`;  dy/dx = 1 for every element that was summed."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False
    ) -> np.ndarray:
        data = numeric(x, "sum")
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        return np.sum(data, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return broadcast_to(kept, ctx.input_shape), None, None


class Mean(Function):
    """y = mean of x over `dim`;  dy/dx = 1 / (number of elements averaged)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False
    ) -> np.ndarray:
        data = numeric(x, "mean")
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        ctx.count = int(np.prod([data.shape[d] for d in ctx.dims])) if data.ndim else 1
        if ctx.count == 0:
            raise OpError(f"mean of an empty Variable (shape {data.shape}) is undefined.")
        return np.mean(data, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return broadcast_to(kept, ctx.input_shape) / ctx.count, None, None


def arg_extreme(data: Any, axis: int | None, kind: str, keepdims: bool = False) -> Any:
    """np.argmax or np.argmin: the position of the first largest (smallest) element.

    On cuda the kernels have argmax only; the first smallest of x is the first largest of -x.
    """
    if kind == "max":
        return np.argmax(data, axis=axis, keepdims=keepdims)
    if not is_on_cuda(data):
        return np.argmin(data, axis=axis, keepdims=keepdims)
    if data.dtype.kind != "f":
        raise NotImplementedError(
            f"argmin of {data.dtype} values is not supported on cuda yet (only of floats); "
            f"move the Variable to the CPU with .cpu()."
        )
    return np.argmax(-data, axis=axis, keepdims=keepdims)


def _extreme(ctx: FunctionCtx, x: Variable, dim: Any, keepdim: bool, kind: str, split: Any) -> Any:
    """Forward of Max and Min: the largest (smallest) values; in ctx, the share of the
    gradient each element of x gets (1 for the extreme one, 0 for the others)."""
    data = numeric(x, kind)
    if data.size == 0:
        raise OpError(
            f"{kind} of an empty Variable (shape {data.shape}) is undefined; reduce a "
            f"Variable that has elements."
        )
    ctx.dims = normalize_dims(dim, data.ndim)
    ctx.input_shape = data.shape
    values = (np.max if kind == "max" else np.min)(data, axis=ctx.dims, keepdims=True)
    if split or data.ndim == 0 or is_on_cuda(data):
        # Ties share the gradient. (On the CPU, max along a dim gives it all to the first
        # extreme, as PyTorch does; the GPU kernels have no scatter for that.)
        is_extreme = data == values
        share = (is_extreme / is_extreme.sum(axis=ctx.dims, keepdims=True)).astype(data.dtype)
    else:
        (axis,) = ctx.dims
        first = arg_extreme(data, axis, kind, keepdims=True)
        share = np.zeros(data.shape, dtype=data.dtype)
        np.put_along_axis(share, first, 1.0, axis=axis)
    ctx.save_for_backward(share)
    return values if keepdim else values.reshape(_reduced_shape(data.shape, ctx.dims))


def _extreme_backward(ctx: FunctionCtx, grad: Variable) -> tuple:
    (share,) = ctx.saved_tensors
    kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
    return kept.expand(ctx.input_shape) * share, None, None, None


class Max(Function):
    """y = max of x over `dim`;  the gradient goes to the maximal element.

    On ties, as in PyTorch: max over everything (and amax) splits it evenly between the
    tied elements; max along a dim gives it all to the index that max returns (the first).
    `split` (True, False, or None for that default) chooses.
    """

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False, split: Any = None
    ) -> np.ndarray:
        return _extreme(ctx, x, dim, keepdim, "max", dim is None if split is None else split)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _extreme_backward(ctx, grad)


class Min(Function):
    """y = min of x over `dim`;  the gradient goes to the minimal element (ties as in Max)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False, split: Any = None
    ) -> np.ndarray:
        return _extreme(ctx, x, dim, keepdim, "min", dim is None if split is None else split)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return _extreme_backward(ctx, grad)


class ArgExtreme(Function):
    """The position of the first largest (kind "max") or smallest ("min") element along dim,
    or in the flattened x when dim is None. An integer result: it has no gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any, keepdim: bool, kind: str) -> Any:
        data = numeric(x, f"arg{kind}")
        if data.size == 0:
            raise IndexError(
                f"arg{kind}(): Expected reduction dim to be specified for input.numel() == 0 "
                f"(shape {data.shape}); an empty Variable has no {kind}imum."
            )
        if dim is not None:
            axis = single_dim(dim, data.ndim)
            if data.ndim:
                return arg_extreme(data, axis, kind, keepdims=keepdim)
        flat = arg_extreme(data.reshape(-1), 0, kind)
        return flat.reshape((1,) * data.ndim) if keepdim else flat


def _as_truth(result: Any, data: Any) -> Any:
    """Booleans, except uint8 for uint8 input (as PyTorch)."""
    return result.astype(np.uint8) if data.dtype == np.uint8 else result


class ReduceAll(Function):
    """True where every element (over dim) is nonzero, i.e. no element is 0. No gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False) -> Any:
        data = numeric(x, "all")
        zeros = np.sum(data == 0, axis=normalize_dims(dim, data.ndim), keepdims=keepdim)
        return _as_truth(zeros == 0, data)


class ReduceAny(Function):
    """True where some element (over dim) is nonzero. No gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False) -> Any:
        data = numeric(x, "any")
        nonzeros = np.sum(data != 0, axis=normalize_dims(dim, data.ndim), keepdims=keepdim)
        return _as_truth(nonzeros > 0, data)


def _elementwise(x: Variable, other: Any, kind: str) -> Variable:
    """minigrad.max(a, b) is minigrad.maximum(a, b) (PyTorch's overload); min likewise."""
    name = f"{kind}imum"
    pairwise = getattr(Variable, name, None)
    if pairwise is None:
        raise TypeError(
            f"{kind}(a, b), the elementwise {name}, needs minigrad.{name}, which this "
            f"version does not have yet; got a Variable as the second argument. To reduce "
            f"one Variable, call x.{kind}() or x.{kind}(dim)."
        )
    return pairwise(x, other)


def _along(function: type, x: Variable, dim: Any, keepdim: bool, kind: str) -> Any:
    """PyTorch's three max (min) calls: over everything, along dim, or of two Variables."""
    if isinstance(dim, (Variable, np.ndarray)):
        return _elementwise(x, dim, kind)
    if dim is None:
        return function.apply(x, None, keepdim)
    if isinstance(dim, (tuple, list)):
        raise TypeError(
            f"{kind}(dim) takes one dim as an int; got {dim!r}. For several dims use "
            f"x.a{kind}(dim={tuple(dim)!r}), which returns the values without indices."
        )
    values = function.apply(x, dim, keepdim)
    indices = ArgExtreme.apply(x, dim, keepdim, kind)
    result = MaxResult if kind == "max" else MinResult
    return result(values, indices)


def max_along(
    x: Variable, dim: int | Variable | None = None, keepdim: bool = False, *, other: Any = None
) -> Any:
    """x.max() gives the largest value; x.max(dim) gives (values, indices) as in PyTorch;
    minigrad.max(a, b) (or other=b) is the elementwise maximum."""
    return _along(Max, x, dim if other is None else other, keepdim, "max")


def minimum_along(
    x: Variable, dim: int | Variable | None = None, keepdim: bool = False, *, other: Any = None
) -> Any:
    """x.min() gives the smallest value; x.min(dim) gives (values, indices) as in PyTorch;
    minigrad.min(a, b) (or other=b) is the elementwise minimum."""
    return _along(Min, x, dim if other is None else other, keepdim, "min")


def _all_dims(dim: Any) -> Any:
    """amax and amin reduce every dimension for dim=() (their default), as for None."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


# --------------------------------------------------------------------------- the op table


def _dim_or_axis(dim: Any, axis: Any, op: str) -> Any:
    """PyTorch accepts NumPy's `axis=` as another name for `dim=`."""
    if axis is not None and dim is not None:
        raise TypeError(f"{op}() got both dim={dim!r} and axis={axis!r}; pass one of them.")
    return dim if axis is None else axis


def _numpy_sum(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    return np.sum(x, axis=tuple(dim) if isinstance(dim, list) else dim, keepdims=keepdim)


@register("sum", numpy=_numpy_sum)
def reduce_sum(
    x: Variable, dim: Any = None, keepdim: bool = False, *, axis: Any = None
) -> Variable:
    return Sum.apply(x, _dim_or_axis(dim, axis, "sum"), keepdim)


@register("mean")
def reduce_mean(
    x: Variable, dim: Any = None, keepdim: bool = False, *, axis: Any = None
) -> Variable:
    return Mean.apply(x, _dim_or_axis(dim, axis, "mean"), keepdim)


register("max")(max_along)
register("min")(minimum_along)


@register("amax")
def amax(x: Variable, dim: Any = (), keepdim: bool = False) -> Variable:
    """The largest values over dim (an int or a tuple; all for ()); ties split the gradient."""
    return Max.apply(x, _all_dims(dim), keepdim, True)


@register("amin")
def amin(x: Variable, dim: Any = (), keepdim: bool = False) -> Variable:
    """The smallest values over dim (an int or a tuple; all for ()); ties split the gradient."""
    return Min.apply(x, _all_dims(dim), keepdim, True)


@register("argmax")
def argmax(x: Variable, dim: int | None = None, keepdim: bool = False) -> Variable:
    """Position of the first largest element along dim (in the flattened x for dim=None)."""
    return ArgExtreme.apply(x, dim, keepdim, "max")


@register("argmin")
def argmin(x: Variable, dim: int | None = None, keepdim: bool = False) -> Variable:
    """Position of the first smallest element along dim (in the flattened x for dim=None)."""
    return ArgExtreme.apply(x, dim, keepdim, "min")


@register("all")
def all_true(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:
    """Whether every element (over dim: None, an int or a tuple) is nonzero; bool."""
    return ReduceAll.apply(x, dim, keepdim)


@register("any")
def any_true(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:
    """Whether some element (over dim: None, an int or a tuple) is nonzero; bool."""
    return ReduceAny.apply(x, dim, keepdim)

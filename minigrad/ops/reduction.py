"""Reductions: sum, mean, max, min, amax, amin, argmax, argmin, all and any, over all
elements or along dimensions. A new op that reduces (or sorts) along a dimension goes here.

Backward puts the removed dimensions back (size 1) and expands the gradient over them.
More reductions (var, std, prod, logsumexp, ...), running sums and ordering follow them.
"""

from __future__ import annotations

import functools
import warnings
from collections import namedtuple
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.dtypes import as_dtype
from minigrad.ops.indexing import ScatterAddAlong
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import cpu_only, normalize_dims, numeric, single_dim
from minigrad.ops.promotion import promote_types
from minigrad.ops.shape import broadcast_to, cat
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
            # No elements to average: 0 / 0, NaN, as in PyTorch (NumPy would also warn).
            total = np.sum(data, axis=ctx.dims, keepdims=keepdim)
            return np.full_like(total, np.nan)
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
    if data.size == 0 and (dim is None or (isinstance(dim, (tuple, list)) and not dim)):
        raise OpError(
            f"{kind} of an empty Variable (shape {data.shape}) is undefined; reduce a "
            f"Variable that has elements."
        )
    ctx.dims = normalize_dims(dim, data.ndim)
    if data.size == 0 and any(data.shape[axis] == 0 for axis in ctx.dims):
        # Along dims that have elements the result is empty too, and fine (as PyTorch).
        raise IndexError(
            f"{kind}(): Expected reduction dim {dim} to have non-zero size (shape "
            f"{data.shape}); reduce along a dimension that has elements."
        )
    ctx.input_shape = data.shape
    values = (np.max if kind == "max" else np.min)(data, axis=ctx.dims, keepdims=True)
    if split or data.ndim == 0 or is_on_cuda(data):
        # Ties share the gradient. (On the CPU, max along a dim gives it all to the first
        # extreme, as PyTorch does; the GPU kernels have no scatter for that.)
        is_extreme = data == values
        share = (is_extreme / is_extreme.sum(axis=ctx.dims, keepdims=True)).astype(data.dtype)
        if not is_on_cuda(data):
            share = np.asarray(share)  # an array even for a 0-d x (NumPy gives a scalar)
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
        if data.dtype == np.bool_:
            raise RuntimeError(
                f"arg{kind}(): does not support bool input (as in PyTorch). Cast it first: "
                f"x.int().arg{kind}(...) gives the first {'True' if kind == 'max' else 'False'}."
            )
        if data.size == 0 and dim is None:
            raise IndexError(
                f"arg{kind}(): Expected reduction dim to be specified for input.numel() == 0 "
                f"(shape {data.shape}); an empty Variable has no {kind}imum."
            )
        if dim is not None:
            axis = single_dim(dim, data.ndim)
            if data.size == 0 and (data.ndim == 0 or data.shape[axis] == 0):
                raise IndexError(
                    f"arg{kind}(): Expected reduction dim {dim} to have non-zero size (shape "
                    f"{data.shape}); reduce along a dimension that has elements."
                )
            if data.ndim:
                return arg_extreme(data, axis, kind, keepdims=keepdim)
        flat = arg_extreme(data.reshape(-1), 0, kind)
        return flat.reshape((1,) * data.ndim) if keepdim else flat


def _as_truth(result: Any, data: Any) -> Any:
    """Booleans, except uint8 for uint8 input (as PyTorch)."""
    return result.astype(np.uint8) if data.dtype == np.uint8 else result


def _truth_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """The axes all() and any() reduce: dim=() reduces none (PyTorch keeps the shape and
    only tests each element), where sum() and the others read () as every dim."""
    if isinstance(dim, (tuple, list)) and not dim:
        return ()
    return normalize_dims(dim, ndim)


class ReduceAll(Function):
    """True where every element (over dim) is nonzero, i.e. no element is 0. No gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False) -> Any:
        data = numeric(x, "all")
        zeros = np.sum(data == 0, axis=_truth_dims(dim, data.ndim), keepdims=keepdim)
        return _as_truth(zeros == 0, data)


class ReduceAny(Function):
    """True where some element (over dim) is nonzero. No gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False) -> Any:
        data = numeric(x, "any")
        nonzeros = np.sum(data != 0, axis=_truth_dims(dim, data.ndim), keepdims=keepdim)
        return _as_truth(nonzeros > 0, data)


class _Unset:
    """The default of an argument whose absence PyTorch's overloads tell apart from every
    value: x.max() reduces everything, x.max(dim=None) is refused."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


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
    keepdim = False if keepdim is UNSET else keepdim
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
    # argmax refuses bools (as PyTorch's does); max(dim) of a mask still has indices.
    positions = x.long() if getattr(x, "dtype", None) == np.bool_ else x
    indices = ArgExtreme.apply(positions, dim, keepdim, kind)
    result = MaxResult if kind == "max" else MinResult
    return result(values, indices)


def max_along(
    x: Variable, dim: int | Variable = UNSET, keepdim: bool = UNSET, *, other: Any = UNSET
) -> Any:
    """x.max() gives the largest value; x.max(dim) gives (values, indices) as in PyTorch;
    minigrad.max(a, b) (or other=b) is the elementwise maximum."""
    return _along(Max, x, _overload(dim, keepdim, other, "max"), keepdim, "max")


def minimum_along(
    x: Variable, dim: int | Variable = UNSET, keepdim: bool = UNSET, *, other: Any = UNSET
) -> Any:
    """x.min() gives the smallest value; x.min(dim) gives (values, indices) as in PyTorch;
    minigrad.min(a, b) (or other=b) is the elementwise minimum."""
    return _along(Min, x, _overload(dim, keepdim, other, "min"), keepdim, "min")


def _overload(dim: Any, keepdim: Any, other: Any, kind: str) -> Any:
    """Which of PyTorch's three max (min) calls this is, refusing what none of them takes
    (keepdim without dim, dim=None, other= with dim): the dim, the other Variable, or None
    for the whole of x."""
    if other is not UNSET:
        if dim is not UNSET or keepdim is not UNSET:
            raise TypeError(
                f"{kind}(other=...) is the elementwise {kind}imum and takes no dim or keepdim; "
                f"call x.{kind}(other) or x.{kind}(dim, keepdim) (values and indices)."
            )
        if not isinstance(other, (Variable, np.ndarray)):
            raise TypeError(
                f"{kind}(): argument 'other' must be a Variable, but got "
                f"{type(other).__name__} {other!r:.40}. For a number, use "
                f"x.clamp({'min' if kind == 'max' else 'max'}=number)."
            )
        return other
    if dim is UNSET:
        if keepdim is not UNSET:
            raise TypeError(
                f"{kind}(): keepdim= needs a dim (x.{kind}(dim, keepdim=True)); x.{kind}() "
                f"reduces every element to a 0-d Variable."
            )
        return None
    if isinstance(dim, (Variable, np.ndarray)):
        if keepdim is not UNSET:
            raise TypeError(f"{kind}(a, b), the elementwise {kind}imum, takes no keepdim.")
        return dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer, tuple, list)):
        raise TypeError(
            f"{kind}(): argument 'dim' must be an int, but got {type(dim).__name__} "
            f"{dim!r:.40}. Leave it out (x.{kind}()) to reduce every element."
        )
    return dim


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


def _dim_and_keepdim(dim: Any, keepdim: Any, axis: Any, op: str) -> tuple[Any, bool]:
    """dim (None: every dimension) and keepdim, which PyTorch takes only beside a dim
    (dim=None and axis= count): x.sum(keepdim=True) is refused there."""
    if dim is UNSET:
        if keepdim is not UNSET and axis is UNSET:
            raise TypeError(
                f"{op}(): keepdim= needs a dim: x.{op}(dim, keepdim=True); x.{op}() reduces "
                f"every element to a 0-d Variable."
            )
        dim = None
    elif axis is not UNSET:  # dim given, even as None: PyTorch has no axis= beside it
        raise TypeError(
            f"{op}() got both dim={dim!r} and axis={axis!r}; axis is another name for dim: "
            f"pass one of them."
        )
    axis = None if axis is UNSET else axis
    return _dim_or_axis(dim, axis, op), (False if keepdim is UNSET else keepdim)


@register("sum", numpy=_numpy_sum)
def reduce_sum(
    x: Variable, dim: Any = UNSET, keepdim: bool = UNSET, *, axis: Any = UNSET
) -> Variable:
    dim, keepdim = _dim_and_keepdim(dim, keepdim, axis, "sum")
    return Sum.apply(x, dim, keepdim)


@register("mean")
def reduce_mean(
    x: Variable, dim: Any = UNSET, keepdim: bool = UNSET, *, axis: Any = UNSET
) -> Variable:
    dim, keepdim = _dim_and_keepdim(dim, keepdim, axis, "mean")
    dtype = getattr(getattr(x, "_data", None), "dtype", None)
    if dtype is not None and dtype.kind in "biu":
        raise RuntimeError(  # PyTorch's class and words: a mean of integers has no dtype
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dtype}. Convert first: x.float().mean() (or "
            f".double())."
        )
    return Mean.apply(x, dim, keepdim)


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


# ------------------------------------------------------------------------- statistics
#
# Reductions beyond sum, mean, max and min: var, std, prod, logsumexp; running sums (cumsum);
# ordering (sort, argsort, topk).
#
# Each backward is written with Variable operations, so second derivatives work too.

SortResult = namedtuple("SortResult", ["values", "indices"])
TopkResult = namedtuple("TopkResult", ["values", "indices"])


def _flip(x: Variable, dim: int) -> Variable:
    """x in reverse order along dim (a slice with step -1)."""
    return x[(slice(None),) * dim + (slice(None, None, -1),)]


# --------------------------------------------------------------------------- var and std


def _require_float(data: Any) -> None:
    if data.dtype.kind != "f":
        raise NotImplementedError(
            f"std and var only support floating point dtypes; got {data.dtype}. Convert the "
            f"Variable first: x.double() or x.float()."
        )


class Var(Function):
    """y = sum((x - mean(x))²) / (N - correction) over dim, N the number of elements reduced;
    dy/dx = 2 (x - mean(x)) / (N - correction)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any, correction: float, keepdim: bool
    ) -> np.ndarray:
        data = numeric(x, "var")
        _require_float(data)
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        count = int(np.prod([data.shape[d] for d in ctx.dims]))
        ctx.divisor = max(count - correction, 0)
        if ctx.divisor == 0:
            warnings.warn(
                f"var()/std(): degrees of freedom is <= 0 ({count} elements, correction "
                f"{correction}): the result is inf or nan. Reduce more elements or lower the "
                f"correction.",
                stacklevel=4,
            )
        ctx.save_for_backward(x)
        centered = data - np.mean(data, axis=ctx.dims, keepdims=True)
        squares = np.sum(centered * centered, axis=ctx.dims, keepdims=keepdim)
        with np.errstate(divide="ignore", invalid="ignore"):
            return squares / ctx.divisor

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        centered = x - x.mean(dim=ctx.dims, keepdim=True)
        scale = 2.0 / ctx.divisor if ctx.divisor else np.inf
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return kept * centered * scale, None, None, None


def _correction(dim: Any, unbiased: Any, keepdim: Any, correction: Any, op: str) -> tuple:
    """(dim, correction, keepdim) from PyTorch's three spellings: x.var(dim, correction=c,
    keepdim=k); the older x.var(dim, unbiased, keepdim) (unbiased True: correction 1,
    Bessel's; False: 0), where keepdim needs the dim; and x.var(unbiased) alone."""
    if isinstance(dim, bool):
        if unbiased is not UNSET or keepdim is not UNSET or correction is not UNSET:
            raise TypeError(
                f"{op}(): a bool first is unbiased, x.{op}({dim}), which takes nothing else; "
                f"got more. Write x.{op}(dim, unbiased, keepdim) or x.{op}(dim, correction=...)."
            )
        dim, unbiased = UNSET, dim
    if unbiased is not UNSET:
        if correction is not UNSET:
            raise TypeError(
                f"{op}(): give either unbiased or correction, not both; got unbiased="
                f"{unbiased} and correction={correction}. correction=0 is unbiased=False."
            )
        if dim is UNSET and keepdim is not UNSET:
            raise TypeError(
                f"{op}(): unbiased= with keepdim= needs a dim, x.{op}(dim, unbiased, keepdim) "
                f"(dim=None for every dimension), or correction= in place of unbiased=."
            )
        correction = 1 if unbiased else 0
    elif correction is UNSET or correction is None:
        correction = 1
    dim = None if dim is UNSET else dim
    return dim, correction, (False if keepdim is UNSET else keepdim)


class Std(Function):
    """y = sqrt(var(x)) over dim;  dy/dx = (x - mean(x)) / ((N - correction) y), and 0 where
    y = 0 (x constant along dim), as in PyTorch."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any, correction: float, keepdim: bool
    ) -> np.ndarray:
        ctx.correction = correction
        return np.sqrt(Var.forward(ctx, x, dim, correction, keepdim))  # Var's ctx too

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        y = Std.apply(x, ctx.dims, ctx.correction, True)
        is_zero = Variable._make((y.data == 0).astype(y.data.dtype))
        # d std = d var / (2 std): the chain rule through Var's backward, 0 where std is 0.
        grad_var = grad.reshape(y.shape) * (1 - is_zero) / (2 * (y + is_zero))
        return Var.backward(ctx, grad_var)


@register("var")
def variance(
    x: Variable,
    dim: Any = UNSET,
    unbiased: bool = UNSET,
    keepdim: bool = UNSET,
    *,
    correction: float | None = UNSET,
) -> Variable:
    """The variance over dim (None, an int or a tuple): the mean squared distance to the mean,
    with sum / (N - correction); correction=1 (unbiased=True) by default."""
    dim, correction, keepdim = _correction(dim, unbiased, keepdim, correction, "var")
    return Var.apply(x, dim, correction, keepdim)


@register("std")
def standard_deviation(
    x: Variable,
    dim: Any = UNSET,
    unbiased: bool = UNSET,
    keepdim: bool = UNSET,
    *,
    correction: float | None = UNSET,
) -> Variable:
    """The standard deviation, sqrt(var(x)), with var's arguments; see Std."""
    dim, correction, keepdim = _correction(dim, unbiased, keepdim, correction, "std")
    return Std.apply(x, dim, correction, keepdim)


# --------------------------------------------------------------------------- prod


def _shifted(x: Variable, dim: int, by: int) -> Variable:
    """x moved `by` places along dim, ones filling in: out[i] = x[i - by], 1 for i < by."""
    size = x.shape[dim]
    by = min(by, size)
    ones_shape = x.shape[:dim] + (by,) + x.shape[dim + 1 :]
    ones = Variable._make(np.ones(ones_shape, x.data.dtype))
    return cat([ones, x.narrow(dim, 0, size - by)], dim)


def _products_before(x: Variable, dim: int) -> Variable:
    """out[i] = x[0] * ... * x[i-1] along dim (1 for i = 0), a cumulative product.

    A doubling scan (Hillis-Steele): start from x shifted by one; each step multiplies every
    element by the one `step` places before it, which doubles how far back each product
    reaches. log2(n) steps of Variable operations, no division.
    """
    product, step = _shifted(x, dim, 1), 1
    while step < x.shape[dim]:
        product = product * _shifted(product, dim, step)
        step *= 2
    return product


def _products_of_others(x: Variable, dim: int) -> Variable:
    """out[i] = the product of every x[j], j != i, along dim: (product before i) times
    (product after i). Zeros in x are fine: nothing is divided by x[i]."""
    after = _flip(_products_before(_flip(x, dim), dim), dim)
    return _products_before(x, dim) * after


class Prod(Function):
    """y = x[0] * x[1] * ... along dim (all elements for dim None);
    dy/dx[i] = the product of the other elements, computed without dividing by x[i]."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any, keepdim: bool) -> np.ndarray:
        data = numeric(x, "prod")
        cpu_only(data, "prod")
        ctx.input_shape = data.shape
        ctx.dim = None if dim is None else single_dim(dim, data.ndim)
        ctx.save_for_backward(x)
        if ctx.dim is None or data.ndim == 0:
            return np.prod(data)
        return np.prod(data, axis=ctx.dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        if ctx.dim is None or x.ndim == 0:  # every element in one line
            others = _products_of_others(x.reshape(-1), 0).reshape(ctx.input_shape)
            return grad * others, None, None
        kept = grad.reshape(_kept_shape(ctx.input_shape, (ctx.dim,)))
        return kept * _products_of_others(x, ctx.dim), None, None


@register("prod")
def product(
    x: Variable, dim: int = UNSET, keepdim: bool = UNSET, *, dtype: Any = None
) -> Variable:
    """The product of the elements (along dim, an int, when given); see Prod."""
    if dim is not UNSET and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer))):
        raise TypeError(
            f"prod(): argument 'dim' must be an int, but got {type(dim).__name__} {dim!r:.40}. "
            f"Leave it out (x.prod()) for the product of every element."
        )
    dim, keepdim = _dim_and_keepdim(dim, keepdim, UNSET, "prod")
    if dtype is None:
        return Prod.apply(x, dim, keepdim)
    # A product of bools is int64: with dtype=bool it is cast back (the "all" of x).
    return Prod.apply(x.to(dtype), dim, keepdim).to(dtype)


# --------------------------------------------------------------------------- cumsum


class Cumsum(Function):
    """y[i] = x[0] + ... + x[i] along dim;  dx[j] = grad[j] + ... + grad[n-1], the running sum
    of the gradient taken from the end (flip, cumsum, flip back)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int) -> np.ndarray:
        data = numeric(x, "cumsum")
        cpu_only(data, "cumsum")
        ctx.dim = single_dim(dim, data.ndim)
        if data.ndim == 0:
            return np.cumsum(data).reshape(())
        return np.cumsum(data, axis=ctx.dim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        if grad.ndim == 0:
            return grad, None
        return _flip(_flip(grad, ctx.dim).cumsum(ctx.dim), ctx.dim), None


@register("cumsum", inplace=True)
def cumsum(x: Variable, dim: int, *, dtype: Any = None) -> Variable:
    """Running sums along dim: y[i] = x[0] + ... + x[i]; see Cumsum."""
    if dtype is not None and as_dtype(dtype) == np.bool_:
        single_dim(dim, x.ndim)  # a dim out of range is named first, as in PyTorch
        raise NotImplementedError(
            '"cumsum_out_cpu" not implemented for \'Bool\', as in PyTorch: a running sum of '
            "bools counts past 1. Leave dtype= out (bools give int64 counts)."
        )
    if dtype is not None:
        x = x.to(dtype)
    return Cumsum.apply(x, dim)


# --------------------------------------------------------------------------- diff
#
# diff undoes cumsum: y[i] = x[i + 1] - x[i] along dim, n times over. It is slicing and
# subtraction, so its gradient comes from theirs; a mask's difference is logical_xor.


def _difference_operand(value: Any, x: Variable, axis: int, name: str) -> Variable:
    """prepend= or append=: a Variable (checked by diff) with x's number of dimensions."""
    if value.ndim != x.ndim:
        raise RuntimeError(
            f"diff expects prepend or append to be the same dimension as input: the input has "
            f"{x.ndim}, {name} has {value.ndim}. Give {name} the input's shape but along dim "
            f"{axis}."
        )
    return value


@register("diff")
def diff(
    x: Variable, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
) -> Variable:
    """The n-th forward difference along dim, y[i] = x[i + 1] - x[i] applied n times (after
    putting `prepend` before x and `append` after it along dim); bools give x[i + 1] ^ x[i]."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"diff(): argument 'n' must be an int; got {type(n).__name__} {n!r:.20}.")
    for name, value in (("prepend", prepend), ("append", append)):
        if value is not None and (not isinstance(value, Variable) or value.is_text):
            raise TypeError(
                f"diff(): argument '{name}' must be a Variable, not {type(value).__name__}; "
                f"wrap it: minigrad.tensor([...]) with as many dimensions as the input."
            )
    if x.ndim == 0:
        raise RuntimeError(
            "diff expects input to be at least one-dimensional; a 0-d Variable has no "
            "neighbours to subtract."
        )
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}.")
    axis = single_dim(dim, x.ndim)
    pieces = [x]
    if prepend is not None:
        pieces.insert(0, _difference_operand(prepend, x, axis, "prepend"))
    if append is not None:
        pieces.append(_difference_operand(append, x, axis, "append"))
    if n == 0:
        return x  # PyTorch's diff(n=0) is the input, prepend and append left out
    common = functools.reduce(promote_types, [np.dtype(piece.dtype) for piece in pieces])
    pieces = [piece if piece.dtype == common else piece.to(common) for piece in pieces]
    result = cat(pieces, axis) if len(pieces) > 1 else x
    for _ in range(int(n)):
        length = result.shape[axis]
        if length == 0:
            break
        later = result.narrow(axis, 1, length - 1)
        earlier = result.narrow(axis, 0, length - 1)
        if np.dtype(result.dtype) == np.bool_:
            result = later ^ earlier
        else:
            result = later - earlier
    return result


# --------------------------------------------------------------------------- logsumexp


class LogSumExp(Function):
    """y = log(sum(exp(x))) over dim, computed as m + log(sum(exp(x - m))) with m = max(x),
    so exp never overflows;  dy/dx = exp(x - y), the softmax of x."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: Any, keepdim: bool) -> np.ndarray:
        data = numeric(x, "logsumexp")
        if data.dtype.kind != "f":
            data = data.astype(np.float64)  # integers give a float result, as in PyTorch
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        ctx.save_for_backward(x)
        if data.size == 0:  # nothing to add up: log 0 = -inf, as PyTorch gives
            kept = _kept_shape(data.shape, ctx.dims)
            shape = kept if keepdim else _reduced_shape(data.shape, ctx.dims)
            return np.full(shape, -np.inf, dtype=data.dtype)
        biggest = np.max(data, axis=ctx.dims, keepdims=True)
        # An infinite max (+inf, or every element -inf) would give inf - inf = nan: shift by 0.
        biggest = np.where(np.abs(biggest) == np.inf, 0.0, biggest)
        total = np.sum(np.exp(data - biggest), axis=ctx.dims, keepdims=True)
        with np.errstate(divide="ignore"):  # log(0) = -inf when every element is -inf
            out = np.log(total) + biggest
        return out if keepdim else out.reshape(_reduced_shape(data.shape, ctx.dims))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        y = LogSumExp.apply(x, ctx.dims, True)
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return kept * (x - y).exp(), None, None


@register("logsumexp")
def logsumexp(x: Variable, dim: Any, keepdim: bool = False) -> Variable:
    """log(sum(exp(x))) over dim (an int or a tuple), without overflow; see LogSumExp."""
    if dim is None:
        # PyTorch's logsumexp has no "every dim" default: dim is required.
        raise TypeError(
            "logsumexp(): argument 'dim' (position 2) must be an int or a tuple of ints, but "
            "got None. Name the dims to reduce, e.g. tuple(range(x.dim())) for all of them."
        )
    if isinstance(dim, (tuple, list)) and not dim and x.dim() > 0 and x.numel() and not keepdim:
        # PyTorch reduces every dim for dim=(), but only with keepdim=True (or when x is
        # empty); otherwise its result has the wrong shape and it refuses.
        raise RuntimeError(
            f"logsumexp(): dim=() of a Variable of shape {tuple(x.shape)} without keepdim "
            f"(PyTorch refuses it). Name the dims to reduce, e.g. tuple(range(x.dim())) for "
            f"all of them."
        )
    return LogSumExp.apply(x, dim, keepdim)


# --------------------------------------------------------------------------- sort and topk


def _sorting_positions(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The positions that sort data along axis; equal elements keep their order (stable)."""
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    # Sort the reversed line ascending and read the result backwards: equal elements then
    # come in their original order, and NaN (sorted last) comes first, as in PyTorch.
    reversed_positions = np.argsort(np.flip(data, axis), axis=axis, kind="stable")
    return np.flip(data.shape[axis] - 1 - reversed_positions, axis)


class Sort(Function):
    """values = x sorted along dim, indices = where each value was in x;
    dx = the gradient of values sent back to those places (scatter_add)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: int, descending: bool, count: Any = None
    ) -> tuple:
        """The first `count` sorted elements (all when None): topk uses that."""
        data = numeric(x, "sort" if count is None else "topk")
        cpu_only(data, "sort" if count is None else "topk")
        ctx.dim, ctx.input_shape = single_dim(dim, data.ndim), data.shape
        line = np.atleast_1d(data)  # a 0-d x sorts as shape (1,)
        indices = _sorting_positions(line, ctx.dim, descending)
        if count is not None:
            indices = indices[(slice(None),) * ctx.dim + (slice(0, count),)]
        values = np.take_along_axis(line, indices, axis=ctx.dim)
        if data.ndim == 0 and values.size == 1:
            values, indices = values.reshape(()), indices.reshape(())
        ctx.indices = indices
        return values, indices

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable, grad_indices: Any) -> tuple:
        zeros = Variable._make(np.zeros(ctx.input_shape, grad.data.dtype))
        return ScatterAddAlong.apply(zeros, ctx.dim, ctx.indices, grad), None, None, None


@register("sort")
def sort(
    x: Variable, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> SortResult:
    """(values, indices): x sorted along dim, and where each value came from. The sort is
    always stable (equal elements keep their order), so stable=False changes nothing."""
    return SortResult(*Sort.apply(x, dim, descending))


@register("argsort")
def argsort(
    x: Variable, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Variable:
    """The positions that sort x along dim (sort(...).indices)."""
    return Sort.apply(x, dim, descending)[1]


@register("topk")
def topk(
    x: Variable,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002 (PyTorch's keyword)
) -> TopkResult:
    """(values, indices) of the k largest elements along dim (smallest for largest=False),
    best first. They always come sorted, which sorted=False allows too."""
    # PyTorch's order: the kind of k, the dim, k's range, then the dtype.
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(
            f"topk(): argument 'k' (position 1) must be an int, but got {type(k).__name__} "
            f"{k!r:.20}; it is how many elements to keep."
        )
    axis = single_dim(dim, x.ndim)  # a 0-d x takes dim 0 or -1
    size = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(
            f"selected index k out of range: topk needs 0 <= k <= {size} (the size of "
            f"dimension {dim}); got k={k!r}."
        )
    if x.dtype == np.bool_:
        raise RuntimeError(
            "topk does not support bool dtypes, as in PyTorch; convert first, e.g. x.long()."
        )
    if x.ndim == 0:
        k = 1  # a 0-d x is its own top element, for k=0 too, as PyTorch returns it
    return TopkResult(*Sort.apply(x, dim, largest, int(k)))



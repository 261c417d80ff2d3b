"""minigrad.nn.functional: layers, activations and losses as functions, PyTorch's `F`.

    import minigrad.nn.functional as F
    loss = F.cross_entropy(model(x), labels, label_smoothing=0.1)

Each function is a composition of differentiable ops, or one of the Functions in
minigrad/nn/_functions/ where a composition would be unstable or give another gradient.
PyTorch's `input` argument is called `x` here (it would shadow a builtin); every argument
PyTorch callers pass by keyword keeps its name.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from minigrad.core.errors import missing_name
from minigrad.core.grad_mode import no_grad, state
from minigrad.core.variable import Variable
from minigrad.nn._functions import (
    BinaryCrossEntropy,
    DropoutMask,
    EmbeddingLookup,
    LeakyRelu,
    LogSigmoid,
    NormalCdf,
    OneHot,
)
from minigrad.nn._functions.normalization import Normalize
from minigrad.nn.functional_attention import scaled_dot_product_attention
from minigrad.nn.functional_conv import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    max_pool1d,
    max_pool2d,
    unfold,
)
from minigrad.nn.functional_interpolate import interpolate
from minigrad.nn.functional_norm import batch_norm, dropout2d, group_norm
from minigrad.nn.functional_pad import pad
from minigrad.nn.prelu import prelu
from minigrad.ops.tooling.arguments import checks

REDUCTIONS = ("mean", "sum", "none")
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

# --------------------------------------------------------------------------- checks

# Each public function names a bad argument (function, argument, what it got, what it
# needs) when a call fails, and takes PyTorch's input= keyword: see ops/tooling/arguments.py.
checked_function = checks("minigrad.nn.functional")


def check_reduction(reduction: Any) -> str:
    """'mean', 'sum' or 'none', or a ValueError listing them (None too, as PyTorch)."""
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(REDUCTIONS)}; got {reduction!r}.")
    return reduction


def legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """PyTorch's deprecated size_average= and reduce= flags, turned into a reduction."""
    if size_average is None and reduce is None:
        return check_reduction(reduction)
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _variable(x: Any, caller: str, name: str = "input") -> Variable:
    if not isinstance(x, Variable) or x.is_text:
        got = "a text Variable" if isinstance(x, Variable) else type(x).__name__
        raise TypeError(
            f"{caller} expects a numeric Variable as {name}; got {got}. Wrap data first: "
            f"minigrad.tensor(values)."
        )
    return x


def _as_operand(value: Any, caller: str, name: str) -> Variable:
    """A target or weight given as a Variable, a NumPy array, a list or a number."""
    if isinstance(value, Variable):
        return _variable(value, caller, name)
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{caller} expects {name} to be a Variable or an array of numbers; got "
            f"{type(value).__name__} of dtype {array.dtype}."
        )
    return Variable(array)


def _labels(target: Any) -> np.ndarray:
    return np.asarray(target._data if isinstance(target, Variable) else target)


def _reduce(losses: Variable, reduction: str) -> Variable:
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


def _same_shape(x: Variable, target: Variable, caller: str) -> None:
    if x.shape != target.shape:
        raise ValueError(
            f"{caller}: input has shape {x.shape} but target has shape {target.shape}; they "
            f"must match (reshape one of them, e.g. target.reshape({x.shape}))."
        )


def _weighted(losses: Variable, weight: Any, caller: str) -> Variable:
    if weight is None:
        return losses
    weight = _as_operand(weight, caller, "weight")
    try:
        np.broadcast_shapes(weight.shape, losses.shape)
    except ValueError:
        raise ValueError(
            f"{caller}: weight of shape {weight.shape} does not broadcast to the loss's shape "
            f"{losses.shape}; give one weight per element (or a shape that broadcasts)."
        ) from None
    return losses * weight


# =========================================================================== layers


@checked_function
def linear(x: Variable, weight: Variable, bias: Variable | None = None) -> Variable:
    """y = x @ weightᵀ + bias: x (..., in), weight (out, in), bias (out,) → y (..., out)."""
    _variable(x, "linear")
    if x.ndim == 0 or weight.ndim not in (1, 2) or x.shape[-1] != weight.shape[-1]:
        raise ValueError(
            f"linear expects x of shape (..., in_features) and weight of shape (out_features, "
            f"in_features); got x {x.shape} and weight {weight.shape}."
        )
    if np.dtype(x.dtype).kind != np.dtype(weight.dtype).kind:
        # PyTorch's matmul never mixes integers and floats (no silent promotion).
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {x.dtype} (the input) and "
            f"{weight.dtype} (the weight). Convert the input first, e.g. x.to(weight.dtype) "
            f"or x.float()."
        )
    y = x @ (weight.T if weight.ndim == 2 else weight)
    return y if bias is None else y + bias


@checked_function
def embedding(
    x: Any,
    weight: Variable,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Variable:
    """y = weight[x]: integer indices x (*) pick rows of weight (num, dim) → y (*, dim).

    The row padding_idx gets no gradient. With max_norm, each row looked up whose
    norm_type-norm exceeds max_norm is first scaled in place, under no_grad, to
    max_norm / (‖row‖ + 1e-7) times itself, as PyTorch's embedding_renorm_.
    """
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding: scale_grad_by_freq and sparse are not supported by minigrad; leave "
            "them at their defaults (False, False)."
        )
    indices = _labels(x)
    if indices.dtype.kind not in "iu":
        raise RuntimeError(  # PyTorch's class
            f"embedding expects integer indices; got dtype {indices.dtype}. Convert them: x.long()."
        )
    if weight.ndim != 2:
        raise ValueError(
            f"embedding expects a weight of shape (num_embeddings, embedding_dim); got "
            f"{weight.shape}."
        )
    rows = weight.shape[0]
    outside = indices[(indices < 0) | (indices >= rows)]
    if outside.size:
        raise IndexError(
            f"embedding: index {outside.flat[0]} is out of range for a table of {rows} rows "
            f"(valid indices 0 to {rows - 1})."
        )
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(
                f"padding_idx must be within num_embeddings ({rows}); got {padding_idx}."
            )
        padding_idx %= rows
    if max_norm is not None:
        _renorm_rows(weight, indices, max_norm, norm_type)
    return EmbeddingLookup.apply(weight, indices.astype(np.int64, copy=False), padding_idx)


def _renorm_rows(weight: Variable, indices: np.ndarray, max_norm: Any, norm_type: Any) -> None:
    """Scale, in place and unrecorded, each row of weight at `indices` whose norm_type-norm
    is above max_norm down to norm max_norm (PyTorch's embedding_renorm_). The kinds of
    max_norm and norm_type are checked by checked_function."""
    rows = np.unique(indices)
    table = weight.detach().numpy()
    norms = np.linalg.norm(table[rows].astype(np.float64), ord=float(norm_type), axis=1)
    too_long = norms > max_norm
    if not too_long.any():
        return
    rows = rows[too_long]
    # 1e-7 as PyTorch: the scaled row's norm comes out just under max_norm.
    scale = (max_norm / (norms[too_long] + 1e-7)).astype(table.dtype)[:, None]
    with no_grad():
        weight[rows] = table[rows] * scale


@checked_function
def layer_norm(
    x: Variable,
    normalized_shape: int | tuple[int, ...] | list[int],
    weight: Variable | None = None,
    bias: Variable | None = None,
    eps: float = 1e-5,
) -> Variable:
    """y = (x - mean) / √(var + eps) · weight + bias over the last len(normalized_shape) dims.

    var is the biased variance (divided by n); x (*, *normalized_shape) → y of the same shape.
    """
    _variable(x, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or x.shape[x.ndim - len(shape) :] != shape or x.ndim < len(shape):
        raise ValueError(
            f"layer_norm: given normalized_shape={list(shape)}, expected input of shape "
            f"[*, {', '.join(map(str, shape))}]; got input of shape {list(x.shape)}."
        )
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    if type(x._data) is np.ndarray and x._data.dtype.kind == "f":
        y = Normalize.apply(x, dims, float(eps))  # one Function (nn/_functions/normalization.py)
    else:
        centered = x - x.mean(dims, keepdim=True)
        variance = (centered * centered).mean(dims, keepdim=True)
        y = centered / (variance + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


@checked_function
def dropout(x: Variable, p: float = 0.5, training: bool = True, inplace: bool = False) -> Variable:
    """y = x · mask / (1 - p), mask ~ Bernoulli(1 - p) per element; y = x when not training.

    The mask is drawn from minigrad's generator, so minigrad.manual_seed repeats it.
    """
    if not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"dropout(): argument 'p' must be a number in [0, 1], but got {p!r}.")
    if isinstance(p, bool) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}.")
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(
            f"dropout(): argument 'training' must be True or False, but got "
            f"{type(training).__name__} {training!r}. Pass training=self.training in a Module."
        )
    _variable(x, "dropout")
    if not training or p == 0:
        return x
    mask = DropoutMask.apply(x.detach(), float(p))
    if x.device == "cuda":
        mask = mask.to("cuda")
    return x.mul_(mask) if inplace else x * mask


@checked_function
def one_hot(tensor: Any, num_classes: int = -1) -> Variable:
    """y[..., c] = 1 where tensor[...] == c, else 0: integer labels (*) → int64 (*, num_classes)."""
    labels = _labels(tensor)
    if labels.dtype.kind not in "iu":
        raise TypeError(
            f"one_hot expects integer class labels; got dtype {labels.dtype}. Convert them: "
            f"labels.long()."
        )
    if labels.size and labels.min() < 0:
        raise ValueError(f"one_hot: class values must be non-negative; got {labels.min()}.")
    inferred = num_classes == -1
    if inferred:
        if labels.size == 0:
            raise ValueError(
                "one_hot cannot infer the number of classes from an empty tensor; pass "
                "num_classes=."
            )
        num_classes = int(labels.max()) + 1
    elif isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"num_classes must be an int; got {num_classes!r}.")
    elif num_classes < 0:
        raise ValueError(f"num_classes must be -1 (infer) or >= 0; got {num_classes}.")
    elif labels.size and labels.max() >= num_classes:
        raise ValueError(
            f"one_hot: class values must be smaller than num_classes ({num_classes}); got "
            f"{labels.max()}."
        )
    if not isinstance(tensor, Variable):
        return Variable((labels[..., None] == np.arange(num_classes)).astype(np.int64))
    # minigrad.compile reads the labels live; the checks above read their values.
    state.listener.assume(
        labels,
        functools.partial(_one_hot_fits, num_classes=num_classes, inferred=inferred),
        f"one_hot: the labels are in 0..{num_classes - 1}"
        + (f", the largest {num_classes - 1}" if inferred else ""),
    )
    return OneHot.apply(tensor.detach(), num_classes)


def _one_hot_fits(labels: np.ndarray, num_classes: int, inferred: bool) -> bool:
    """True when `labels` pass one_hot's checks as in a traced call, with the same number
    of classes."""
    if labels.size == 0:
        return not inferred
    if labels.min() < 0:
        return False
    largest = labels.max()
    return largest == num_classes - 1 if inferred else largest < num_classes


# =========================================================================== activations


@checked_function
def relu(x: Variable, inplace: bool = False) -> Variable:
    """y = max(x, 0)."""
    return x.relu_() if inplace else _variable(x, "relu").relu()


@checked_function
def leaky_relu(x: Variable, negative_slope: float = 0.01, inplace: bool = False) -> Variable:
    """y = x where x > 0, else negative_slope · x."""
    _variable(x, "leaky_relu")
    if inplace:
        return x._inplace(lambda current: _leaky(current, negative_slope))
    return _leaky(x, negative_slope)


def _leaky(x: Variable, negative_slope: float) -> Variable:
    if state.listener.watching:
        # minigrad.compile replays where and the comparison with its own rules.
        return x.where(x > 0, x * negative_slope)
    return LeakyRelu.apply(x, negative_slope)


@checked_function
def gelu(x: Variable, approximate: str = "none") -> Variable:
    """y = x · Φ(x) = x/2 · (1 + erf(x/√2)); approximate='tanh':

    y = x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))).
    """
    _variable(x, "gelu")
    if approximate == "none":
        if type(x._data) is np.ndarray and x._data.dtype.kind == "f":
            return x * NormalCdf.apply(x)  # one Function for Φ (nn/_functions/normal_cdf.py)
        return x * 0.5 * (1 + (x * math.sqrt(0.5)).erf())
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * SQRT_2_OVER_PI
        return x * 0.5 * (1 + inner.tanh())
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}.")


@checked_function
def silu(x: Variable, inplace: bool = False) -> Variable:
    """y = x · sigmoid(x) (also called swish)."""
    _variable(x, "silu")
    if inplace:
        return x._inplace(lambda current: current * current.sigmoid())
    return x * x.sigmoid()


@checked_function
def tanh(x: Variable) -> Variable:
    """y = tanh(x)."""
    return _variable(x, "tanh").tanh()


@checked_function
def sigmoid(x: Variable) -> Variable:
    """y = 1 / (1 + e^(-x))."""
    return _variable(x, "sigmoid").sigmoid()


@checked_function
def logsigmoid(x: Variable) -> Variable:
    """y = log(sigmoid(x)), stable for large |x|."""
    return LogSigmoid.apply(_variable(x, "logsigmoid"))


def _softmax_dim(x: Variable, dim: int | None, caller: str) -> int:
    if dim is None:
        raise TypeError(
            f"{caller} needs dim=, the dimension whose entries sum to one (PyTorch's implicit "
            f"choice is deprecated); e.g. F.{caller}(logits, dim=-1)."
        )
    return dim


@checked_function
def softmax(x: Variable, dim: int | None = None, dtype: Any = None) -> Variable:
    """y = e^x / Σ e^x along dim (x cast to dtype first, if given)."""
    return _variable(x, "softmax").softmax(_softmax_dim(x, dim, "softmax"), dtype=dtype)


@checked_function
def log_softmax(x: Variable, dim: int | None = None, dtype: Any = None) -> Variable:
    """y = x - log Σ e^x along dim, computed stably (x cast to dtype first, if given)."""
    _variable(x, "log_softmax")
    return x.log_softmax(_softmax_dim(x, dim, "log_softmax"), dtype=dtype)


# =========================================================================== losses


@checked_function
def mse_loss(
    x: Variable,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Variable:
    """ℓ = (x - target)², reduced; with weight: Σ w·ℓ / Σ w for 'mean'."""
    return _regression_loss(
        x, target, size_average, reduce, reduction, weight, "mse_loss", squared=True
    )


@checked_function
def l1_loss(
    x: Variable,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Variable:
    """ℓ = |x - target|, reduced; with weight: Σ w·ℓ / Σ w for 'mean'."""
    return _regression_loss(
        x, target, size_average, reduce, reduction, weight, "l1_loss", squared=False
    )


def _regression_loss(
    x: Variable,
    target: Any,
    size_average: bool | None,
    reduce: bool | None,
    reduction: str,
    weight: Any,
    caller: str,
    squared: bool,
) -> Variable:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not isinstance(x, Variable):
        raise TypeError(f"{caller} expects a Variable prediction; got {type(x).__name__}.")
    target = _as_operand(target, caller, "target")
    _same_shape(x, target, caller)
    difference = x - target
    losses = difference * difference if squared else abs(difference)
    if weight is None:
        return _reduce(losses, reduction)
    weight = _as_operand(weight, caller, "weight")
    if weight.shape != x.shape:
        raise ValueError(
            f"{caller}: weight has shape {weight.shape} but input has shape {x.shape}; they "
            f"must match."
        )
    losses = losses * weight
    return losses.sum() / weight.sum() if reduction == "mean" else _reduce(losses, reduction)


@checked_function
def binary_cross_entropy(
    x: Variable,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Variable:
    """ℓ = -w·(t·log x + (1 - t)·log(1 - x)), each log clamped at -100; x probabilities."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = _variable(x, "binary_cross_entropy")
    target = _as_operand(target, "binary_cross_entropy", "target")
    _same_shape(x, target, "binary_cross_entropy")
    for name, variable in (("input", x), ("target", target)):
        values = variable.detach().cpu().numpy()  # the range check reads the values
        if values.size and not ((values >= 0) & (values <= 1)).all():
            raise ValueError(
                f"binary_cross_entropy: all elements of {name} should be between 0 and 1; got "
                f"values from {values.min()} to {values.max()}. For raw scores use "
                f"binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss)."
            )
    losses = BinaryCrossEntropy.apply(x, target)
    return _reduce(_weighted(losses, weight, "binary_cross_entropy"), reduction)


@checked_function
def binary_cross_entropy_with_logits(
    x: Variable,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Variable:
    """ℓ = (1 - t)·x - (1 + (pos_weight - 1)·t)·log σ(x), times weight; x raw scores.

    Equal to binary_cross_entropy(sigmoid(x), t) without its overflow for large |x|.
    """
    caller = "binary_cross_entropy_with_logits"
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = _variable(x, caller)
    target = _as_operand(target, caller, "target")
    _same_shape(x, target, caller)
    log_sigmoid = LogSigmoid.apply(x)
    if pos_weight is not None:
        pos_weight = _as_operand(pos_weight, caller, "pos_weight")
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * target + 1)
    losses = (1 - target) * x - log_sigmoid
    return _reduce(_weighted(losses, weight, caller), reduction)


@checked_function
def nll_loss(
    x: Variable,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Variable:
    """ℓᵢ = -w[yᵢ]·x[i, yᵢ] for log-probabilities x (N, C) (or (C,), or (N, C, d1, ...)).

    'mean' divides by Σ w[yᵢ]; targets equal to ignore_index count for nothing.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = _variable(x, "nll_loss")
    labels = _class_indices(x, target, "nll_loss", probabilities_allowed=False)
    rows, flat_labels = _rows_by_class(x), labels.reshape(-1)
    losses, sample_weight = _picked_losses(rows, flat_labels, weight, ignore_index, "nll_loss")
    return _reduce_picked(losses, sample_weight, labels.shape, reduction)


@checked_function
def cross_entropy(
    x: Variable,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Variable:
    """ℓᵢ = -Σ_c w_c·qᵢ_c·log softmax(xᵢ)_c: logits x (N, C) (or (C,), or (N, C, d1, ...)).

    target is class indices (N,) (q one-hot) or probabilities of x's shape (q = target).
    label_smoothing ε gives q = (1 - ε)·q + ε/C. 'mean' over class indices divides by
    Σ w[yᵢ]; over probabilities by N. Targets equal to ignore_index count for nothing.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = _variable(x, "cross_entropy")
    if isinstance(label_smoothing, bool) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0; got {label_smoothing!r}.")
    labels = _class_indices(x, target, "cross_entropy", probabilities_allowed=True)
    class_dim = 0 if x.ndim == 1 else 1
    classes = x.shape[class_dim]
    log_probabilities = x.log_softmax(class_dim)
    if labels is None:  # probabilities
        return _soft_cross_entropy(
            log_probabilities, target, weight, ignore_index, reduction, label_smoothing
        )
    rows, flat_labels = _rows_by_class(log_probabilities), labels.reshape(-1)
    losses, sample_weight = _picked_losses(rows, flat_labels, weight, ignore_index, "cross_entropy")
    loss = _reduce_picked(losses, sample_weight, labels.shape, reduction)
    if not label_smoothing:
        return loss
    # PyTorch's formula: (1 - ε)·nll + ε/C · Σ_c -w_c·log p_c, normalised as the nll is.
    class_weight = _class_weight(weight, classes, "cross_entropy")
    scaled = rows if class_weight is None else rows * Variable(class_weight)
    smooth = -scaled.sum(1)
    ignored = flat_labels == ignore_index
    if ignored.any():
        smooth = smooth * Variable((~ignored).astype(rows.dtype))
    smooth = _reduce_picked(smooth, sample_weight, labels.shape, reduction)
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def _soft_cross_entropy(
    log_probabilities: Variable,
    target: Any,
    weight: Any,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
) -> Variable:
    """cross_entropy against class probabilities (PyTorch's prob-target branch)."""
    if ignore_index >= 0:
        raise ValueError(
            f"cross_entropy: ignore_index ({ignore_index}) is not supported with class "
            f"probabilities as target; leave it at -100 (or give class indices)."
        )
    class_dim = 0 if log_probabilities.ndim == 1 else 1
    classes = log_probabilities.shape[class_dim]
    q = _as_operand(target, "cross_entropy", "target")
    if label_smoothing:
        q = q * (1 - label_smoothing) + label_smoothing / classes
    products = log_probabilities * q
    class_weight = _class_weight(weight, classes, "cross_entropy")
    if class_weight is not None:
        broadcast = [1] * log_probabilities.ndim
        broadcast[class_dim] = classes
        products = products * Variable(class_weight.reshape(broadcast))
    if reduction == "none":
        return -products.sum(class_dim)
    if reduction == "sum":
        return -products.sum()
    if classes == 0:
        raise ValueError("cross_entropy needs at least one class; the input has 0 along dim 1.")
    return -products.sum() / (products.numel() / classes)


def _class_indices(
    x: Variable, target: Any, caller: str, probabilities_allowed: bool
) -> np.ndarray | None:
    """The target's class indices, checked against x; None when they are probabilities."""
    labels = _labels(target)
    if probabilities_allowed and x.ndim and labels.dtype.kind == "f" and labels.shape == x.shape:
        return None
    # Class indices have x's shape without its class dimension (dim 1; dim 0 for (C,)).
    expected = None if x.ndim == 0 else (() if x.ndim == 1 else (x.shape[0], *x.shape[2:]))
    if labels.shape == expected and labels.dtype.kind in "iu":
        return labels
    probabilities = (
        f", or class probabilities of shape {x.shape} (floats)" if probabilities_allowed else ""
    )
    if x.ndim == 2:
        batch = x.shape[0]
        raise ValueError(
            f"{caller} expects target to be {batch} integer class indices, shape ({batch},)"
            f"{probabilities}; got shape {labels.shape} of dtype {labels.dtype}."
        )
    needed = (
        f"the target must be integer class indices of shape {expected}{probabilities}"
        if expected is not None
        else "a 0-d input has no class dimension"
    )
    if x.ndim > 2 and labels.shape == tuple(x.shape[:-1]):
        # (N, L, C) logits of a sequence model, where PyTorch wants the classes in dim 1.
        raise RuntimeError(
            f"{caller}: Expected target size {list(expected)}, got {list(labels.shape)}: the "
            f"input {tuple(x.shape)} looks like (batch, length, classes), but {caller} reads "
            f"the classes from dim 1. Use logits.transpose(1, 2), or flatten both: "
            f"{caller}(logits.reshape(-1, {x.shape[-1]}), target.reshape(-1))."
        )
    raise ValueError(
        f"{caller} expects input of shape (classes,), (batch, classes, d1, ...) or "
        f"(batch, classes); got {x.shape} with a target of shape {labels.shape} and dtype "
        f"{labels.dtype}: {needed}."
    )


def _rows_by_class(x: Variable) -> Variable:
    """x with the class dimension last and the others flattened: (M, C)."""
    if x.ndim == 1:
        return x.reshape(1, x.shape[0])
    if x.ndim == 2:
        return x
    order = (0, *range(2, x.ndim), 1)
    return x.permute(*order).reshape(-1, x.shape[1])


def _class_weight(weight: Any, classes: int, caller: str) -> np.ndarray | None:
    if weight is None:
        return None
    values = _labels(weight)
    if values.shape != (classes,):
        raise ValueError(
            f"{caller}: weight must hold one number per class, shape ({classes},); got shape "
            f"{values.shape}."
        )
    return values


def _picked_losses(
    rows: Variable, labels: np.ndarray, weight: Any, ignore_index: int, caller: str
) -> tuple[Variable, Variable | None]:
    """-w[y]·rows[i, y] per row, and the weight w[y] of each row (0 where ignored); None
    for the weights when every row counts once (no weight, nothing ignored)."""
    classes = rows.shape[1]
    ignored = labels == ignore_index
    outside = labels[~ignored & ((labels < 0) | (labels >= classes))]
    if outside.size:
        raise IndexError(  # PyTorch's class ("Target 5 is out of bounds.")
            f"{caller}: Target {outside[0]} is out of bounds: there are {classes} classes (0 to "
            f"{classes - 1})."
        )
    any_ignored = bool(ignored.any())
    if not any_ignored:
        # minigrad.compile reads the labels live; Python chose this branch from their values.
        state.listener.assume(
            labels,
            functools.partial(_labels_fit, classes=classes, ignore_index=ignore_index),
            f"{caller}: the class labels are in 0..{classes - 1}, none equal to ignore_index",
        )
    # The labels themselves when none is ignored (minigrad.compile then reads them live).
    safe = np.where(ignored, 0, labels) if any_ignored else labels
    class_weight = _class_weight(weight, classes, caller)
    picked = rows[np.arange(labels.shape[0]), safe]
    if class_weight is None and not ignored.any():
        return -picked, None
    if (state.listener.watching and isinstance(weight, Variable) and not any_ignored
            and weight.dtype == rows.dtype):
        # Picked by an operation, so that minigrad.compile's replay reads the weights (and
        # this call's labels) again rather than keeping the traced rows' weights.
        sample_weight = weight.detach()[labels]
        return -picked * sample_weight, sample_weight
    per_row = np.ones(labels.shape, rows.dtype) if class_weight is None else class_weight[safe]
    sample_weight = Variable(np.where(ignored, 0, per_row).astype(rows.dtype))
    return -picked * sample_weight, sample_weight


def _labels_fit(labels: np.ndarray, classes: int, ignore_index: int) -> bool:
    """True when `labels` take _picked_losses' branch of a traced call: every label a class,
    none ignored."""
    if labels.size == 0:
        return True
    in_range = labels.min() >= 0 and labels.max() < classes
    if not 0 <= ignore_index < classes:  # then no label in range equals it
        return bool(in_range)
    return bool(in_range and not (labels == ignore_index).any())


def _reduce_picked(
    losses: Variable, sample_weight: Variable | None, shape: tuple, reduction: str
) -> Variable:
    """One loss per row, reduced; 'mean' divides by the rows' total weight."""
    if reduction == "none":
        return losses.reshape(shape)
    if reduction == "sum":
        return losses.sum()
    if sample_weight is None:
        return losses.mean()
    with np.errstate(invalid="ignore"):  # every target ignored: 0/0 is NaN, as PyTorch, silently
        return losses.sum() / sample_weight.sum()



# ==================================================== more activations, losses, norms
# Compositions of the ops above, so their second derivatives come for free; each is
# written so that no branch where() throws away can overflow (an inf there would turn
# into a nan gradient).


@checked_function
def softplus(x: Variable, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """y = log(1 + exp(βx)) / β, and y = x where βx > threshold (as PyTorch)."""
    scaled = _variable(x, "softplus") * beta
    smooth = -logsigmoid(-scaled) / beta  # log(1 + e^z) = -log(sigmoid(-z)), stable
    return x.where(scaled > threshold, smooth)


@checked_function
def elu(x: Variable, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """y = x where x > 0, else α(exp(x) - 1)."""
    _variable(x, "elu")
    # exp of x ≤ 0 only (never inf); at 0 the slope is α, as PyTorch's.
    negative = (x.where(x <= 0, x * 0.0).exp() - 1) * alpha
    if inplace:
        return x._inplace(lambda current: current.where(current > 0, negative))
    return x.where(x > 0, negative)


def _number_bound(value: Any, name: str) -> Any:
    """hardtanh's bound as a number: a 0-d Variable gives its value, as PyTorch takes it;
    a Variable with more elements is refused (PyTorch's errors), not broadcast."""
    if not isinstance(value, Variable):
        if not isinstance(value, (int, float, np.number)):
            raise TypeError(
                f"hardtanh(): argument '{name}' must be a number, but got "
                f"{type(value).__name__} {value!r}."
            )
        return value
    if value.numel() > 1:
        raise RuntimeError(
            f"hardtanh(): {name} must be a number, but got a Variable of shape "
            f"{tuple(value.shape)} (Boolean value of a Variable with more than one value is "
            f"ambiguous). For bounds per element use minigrad.clamp(x, min, max)."
        )
    if value.ndim != 0:
        raise TypeError(
            f"hardtanh(): argument '{name}' must be a number, not a Variable of shape "
            f"{tuple(value.shape)}. Pass {name}=value.item()."
        )
    return value.item()


@checked_function
def hardtanh(
    x: Variable,
    min_val: float | Variable = -1.0,
    max_val: float | Variable = 1.0,
    inplace: bool = False,
) -> Variable:
    """y = x clamped to [min_val, max_val]; dy/dx = 1 strictly inside, 0 elsewhere."""
    _variable(x, "hardtanh")
    min_val = _number_bound(min_val, "min_val")
    max_val = _number_bound(max_val, "max_val")
    inside = (x > min_val) & (x < max_val)
    clamped = x.clamp(min_val, max_val).detach()  # outside: a constant, no gradient
    if inplace:
        return x._inplace(lambda current: current.where(inside, clamped))
    return x.where(inside, clamped)


@checked_function
def relu6(x: Variable, inplace: bool = False) -> Variable:
    """y = min(max(x, 0), 6): hardtanh(x, 0, 6), as PyTorch defines it."""
    return hardtanh(x, 0.0, 6.0, inplace)


@checked_function
def mish(x: Variable, inplace: bool = False) -> Variable:
    """y = x · tanh(softplus(x))."""
    result = _variable(x, "mish") * softplus(x).tanh()
    return x.copy_(result) if inplace else result


@checked_function
def smooth_l1_loss(
    x: Variable,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Variable:
    """ℓ = 0.5 d² / β where d = |x - target| < β, else d - 0.5 β; reduced."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = _as_operand(target, "smooth_l1_loss", "target")
    _same_shape(_variable(x, "smooth_l1_loss"), target, "smooth_l1_loss")
    distance = abs(x - target)
    if beta == 0:
        return _reduce(distance, reduction)
    losses = (distance * distance * (0.5 / beta)).where(distance < beta, distance - 0.5 * beta)
    return _reduce(losses, reduction)


@checked_function
def huber_loss(x: Variable, target: Any, reduction: str = "mean", delta: float = 1.0) -> Variable:
    """ℓ = 0.5 d² where d = |x - target| < δ, else δ (d - 0.5 δ); reduced."""
    check_reduction(reduction)
    target = _as_operand(target, "huber_loss", "target")
    _same_shape(_variable(x, "huber_loss"), target, "huber_loss")
    distance = abs(x - target)
    losses = (distance * distance * 0.5).where(distance < delta, (distance - 0.5 * delta) * delta)
    return _reduce(losses, reduction)


@checked_function
def kl_div(
    x: Variable,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Variable:
    """ℓ = target · (log target - x), x being log-probabilities (0 where target = 0);
    reduction 'batchmean' divides the sum by the batch size (the KL divergence)."""
    if size_average is None and reduce is None and reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=3,  # past checked_function's wrapper, to the caller
        )
    if reduction != "batchmean":
        reduction = legacy_reduction(size_average, reduce, reduction)
    target = _as_operand(target, "kl_div", "target")
    _same_shape(_variable(x, "kl_div"), target, "kl_div")
    if log_target:
        losses = target.exp() * (target - x)
    else:
        safe_log = target.clamp(min=1e-300).log()  # where target is 0 the term is 0
        losses = (target * (safe_log - x)).where(target > 0, x * 0.0)
    if reduction == "batchmean":
        return losses.sum() / (x.shape[0] if x.ndim > 0 else 1)
    return _reduce(losses, reduction)


@checked_function
def normalize(x: Variable, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Variable:
    """y = x / max(‖x‖_p, eps) along dim."""
    norms = _variable(x, "normalize").norm(p, dim=dim, keepdim=True)
    return x / norms.clamp(min=eps)


@checked_function
def cosine_similarity(x1: Variable, x2: Variable, dim: int = 1, eps: float = 1e-8) -> Variable:
    """cos = Σ x1·x2 / max(‖x1‖ ‖x2‖, eps) along dim (x1 and x2 broadcast)."""
    dot = (_variable(x1, "cosine_similarity") * _variable(x2, "cosine_similarity")).sum(dim)
    lengths = x1.norm(2, dim=dim) * x2.norm(2, dim=dim)
    return dot / lengths.clamp(min=eps)


@checked_function
def pairwise_distance(
    x1: Variable, x2: Variable, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Variable:
    """d = ‖x1 - x2 + eps‖_p over the last dim (x1 and x2 broadcast): (N, D) → (N,)."""
    difference = _variable(x1, "pairwise_distance") - _variable(x2, "pairwise_distance") + eps
    if difference.ndim == 0:  # two numbers: the norm of a one-element vector
        distance = difference.reshape(1).norm(p, dim=-1, keepdim=keepdim)
        return distance.reshape(()) if keepdim else distance
    return difference.norm(p, dim=-1, keepdim=keepdim)


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.nn.functional' has no attribute {name!r}")
    raise missing_name("torch.nn.functional", name, __all__)

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "dropout2d",
    "elu",
    "embedding",
    "fold",
    "gelu",
    "group_norm",
    "hardtanh",
    "huber_loss",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "max_pool1d",
    "max_pool2d",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "prelu",
    "relu",
    "relu6",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
    "unfold",
]

"""scaled_dot_product_attention, as in torch.nn.functional (re-exported there).

    O = softmax(Q Kᵀ · scale + mask) V,   Q (..., L, E), K (..., S, E), V (..., S, Ev)
                                          → O (..., L, Ev)

The arguments are checked here the way PyTorch checks them (its exception classes, and a
message naming both shapes that disagree); the arithmetic and its hand-derived backward
are one Function, nn/_functions/attention.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.nn._functions.attention import Attention
from minigrad.nn._functions.dropout_mask import DropoutMask
from minigrad.ops.tooling.arguments import checks

checked_function = checks("minigrad.nn.functional")

CALLER = "scaled_dot_product_attention"


def _operand(x: Any, name: str, caller: str) -> Variable:
    if not isinstance(x, Variable) or x.is_text:
        got = "a text Variable" if isinstance(x, Variable) else type(x).__name__
        raise TypeError(
            f"{caller}: {name} must be a numeric Variable; got {got}. Make one with "
            f"minigrad.tensor(...)."
        )
    if is_on_cuda(x.data):
        raise NotImplementedError(
            f"{caller} runs on the CPU in minigrad; the {name} is on cuda. Move the inputs "
            f"first: x.cpu() (or model.cpu())."
        )
    return x


def _shape(x: Variable) -> list[int]:
    return list(x.shape)


def check_operands(query: Any, key: Any, value: Any, caller: str = CALLER) -> None:
    """Query (..., L, E), key (..., S, E), value (..., S, Ev): one float dtype, matching
    sizes (check_batch checks the batch dims). PyTorch's RuntimeError otherwise."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        _operand(x, name, caller)
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            f"{caller}: expected query, key and value to be at least 2-dimensional "
            f"(..., L, E), (..., S, E), (..., S, Ev); got shapes {_shape(query)}, "
            f"{_shape(key)} and {_shape(value)}. Add a sequence dim: x.unsqueeze(0)."
        )
    if query.dtype.kind != "f":
        raise RuntimeError(
            f"{caller}: expected floating-point query, key and value; got dtype "
            f"{query.dtype}. Convert them: x.float() (or x.double())."
        )
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            f"{caller}: expected query, key and value to have the same dtype, but got "
            f"query.dtype {query.dtype}, key.dtype {key.dtype} and value.dtype {value.dtype}. "
            f"Convert them to one: key.to(query.dtype)."
        )
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"{caller}: the query's last dim (E) must equal the key's, since scores are "
            f"query @ key.transpose(-2, -1); got query of shape {_shape(query)} and key of "
            f"shape {_shape(key)}."
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{caller}: key and value must have the same sequence length S (their dim -2), "
            f"one value per key; got key of shape {_shape(key)} and value of shape "
            f"{_shape(value)}."
        )


def check_batch(query: Variable, key: Variable, value: Variable, caller: str = CALLER) -> tuple:
    """The batch dims (all but the last two) that query, key and value broadcast to."""
    try:
        return np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"{caller}: the batch dims of query {_shape(query)}, key {_shape(key)} and value "
            f"{_shape(value)} (all but the last two) do not broadcast together. Batch-first "
            f"or sequence-first confusion? Put them as (batch, heads, L, E)."
        ) from None


def check_mask(
    attn_mask: Variable, scores: tuple[int, ...], dtype: np.dtype, caller: str = CALLER
) -> Variable:
    """A bool mask (True: take part) or a float one (added), broadcasting to the scores'
    shape (..., L, S); a float mask comes back in the query's dtype."""
    _operand(attn_mask, "attn_mask", caller)
    kind = attn_mask.dtype.kind
    if kind not in "bf":
        raise RuntimeError(
            f"{caller}: expected attn_mask of dtype bool (True: may attend) or float (added "
            f"to the scores), but got attn_mask.dtype {attn_mask.dtype} and query.dtype "
            f"{dtype}. Convert it: mask.bool(), or mask.to(query.dtype)."
        )
    try:
        fits = np.broadcast_shapes(attn_mask.shape, scores) == tuple(scores)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"{caller}: attn_mask of shape {_shape(attn_mask)} does not broadcast to the "
            f"attention weights' shape {list(scores)} (..., L, S): one entry per query "
            f"(L) and key (S), e.g. a mask of shape [{scores[-2]}, {scores[-1]}]."
        )
    if kind == "f" and attn_mask.dtype != dtype:
        attn_mask = attn_mask.to(dtype)  # recorded: the mask's gradient comes back in its dtype
    return attn_mask


def _grouped(query: Variable, key: Variable, value: Variable) -> tuple[Variable, Variable]:
    """Grouped-query attention: each key/value head serves Hq / Hk consecutive query heads
    (key.repeat_interleave(Hq // Hk, dim=-3), as PyTorch's enable_gqa)."""
    if min(query.ndim, key.ndim, value.ndim) < 3:
        raise RuntimeError(
            f"{CALLER}: enable_gqa=True needs a heads dim, (..., H, L, E); got query "
            f"{_shape(query)}, key {_shape(key)} and value {_shape(value)}."
        )
    heads, kv_heads = query.shape[-3], key.shape[-3]
    if value.shape[-3] != kv_heads or kv_heads == 0 or heads % kv_heads:
        raise RuntimeError(
            f"{CALLER}: with enable_gqa=True, the number of heads of key and value (dim -3) "
            f"must be equal and divide the query's; got query {_shape(query)}, key "
            f"{_shape(key)} and value {_shape(value)}."
        )
    group = heads // kv_heads
    if group == 1:
        return key, value

    def repeated(x: Variable) -> Variable:
        size = (*x.shape[:-3], kv_heads, group, *x.shape[-2:])
        return x.unsqueeze(-3).expand(*size).reshape(*x.shape[:-3], heads, *x.shape[-2:])

    return repeated(key), repeated(value)


def dropout_keep(like: Variable, shape: tuple[int, ...], p: float) -> Variable | None:
    """Dropout's mask for weights of `shape`: keep / (1 - p), keep ~ Bernoulli(1 - p), drawn
    from minigrad's generator in `like`'s dtype; None when nothing is dropped."""
    return DropoutMask.apply(like.detach(), p, shape) if p > 0 else None


@checked_function
def scaled_dot_product_attention(
    query: Variable,
    key: Variable,
    value: Variable,
    attn_mask: Variable | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Variable:
    """O = softmax(query @ keyᵀ · scale + mask) @ value: query (..., L, E), key (..., S, E),
    value (..., S, Ev) → (..., L, Ev); scale defaults to 1/√E.

    attn_mask: bool (True: the query may attend to that key) or float (added to the
    scores), broadcasting to (..., L, S). is_causal: query i attends to keys 0..i (the
    triangle aligned top-left when L != S; not with attn_mask). A query left with no key
    gets zeros, as in PyTorch. dropout_p drops weights with minigrad's generator.
    """
    check_operands(query, key, value)
    if not isinstance(is_causal, (bool, np.bool_)) or not isinstance(enable_gqa, (bool, np.bool_)):
        raise TypeError(
            f"{CALLER}: is_causal and enable_gqa must be True or False; got "
            f"is_causal={is_causal!r}, enable_gqa={enable_gqa!r}."
        )
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float, np.floating)):
        raise TypeError(f"{CALLER}: dropout_p must be a float in [0, 1]; got {dropout_p!r}.")
    if not 0 <= dropout_p <= 1:
        raise RuntimeError(
            f"{CALLER}: dropout probability has to be between 0 and 1, but got {dropout_p}."
        )
    if scale is not None and (
        isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating))
    ):
        raise TypeError(f"{CALLER}: scale must be a float or None; got {scale!r}.")
    if enable_gqa:
        key, value = _grouped(query, key, value)
    check_batch(query, key, value)
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    scores = (*batch, query.shape[-2], key.shape[-2])
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError(
                f"{CALLER}: explicit attn_mask should not be set when is_causal=True; pass "
                f"one of them (fold the causal triangle into the mask yourself if you need both)."
            )
        attn_mask = check_mask(attn_mask, scores, query.dtype)
    size = query.shape[-1]
    # E = 0: every score is an empty sum, 0, whatever it is scaled by (PyTorch: uniform weights)
    factor = (1.0 / math.sqrt(size) if size else 1.0) if scale is None else float(scale)
    keep = dropout_keep(query, scores, float(dropout_p))
    out, _ = Attention.apply(query, key, value, attn_mask, keep, factor, bool(is_causal), True)
    return out

"""MultiheadAttention: attention over `num_heads` learned projections of one embedding.

    head_i = attention(query W_q,i, key W_k,i, value W_v,i)      (each of size E / H)
    output = concat(head_1, ..., head_H) W_o + b_o

as PyTorch's nn.MultiheadAttention computes it (torch.nn.functional's
multi_head_attention_forward), with its parameter names (in_proj_weight and in_proj_bias,
or q_proj_weight, k_proj_weight and v_proj_weight when kdim or vdim differ from
embed_dim; out_proj, a Linear), its initialisation, its masks and its two paths: with
need_weights=True the weights are returned (a query with every key masked gets NaN, as
PyTorch's softmax gives), without them scaled_dot_product_attention runs (that query gets
zeros). Both use the Function of nn/_functions/attention.py.

Masks here say what may NOT be attended to, unlike scaled_dot_product_attention's: a bool
key_padding_mask or attn_mask is True at the keys to leave out; a float one is added to the
scores. Where PyTorch's shape checks raise AssertionError, minigrad raises RuntimeError
(an AssertionError would mean a bug in minigrad itself), with both shapes in the message.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_flag
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn._functions.attention import Attention
from minigrad.nn.functional_attention import dropout_keep
from minigrad.nn.linear import Linear, bias_flag
from minigrad.nn.module import Module
from minigrad.ops.shape import cat

LAYER = "MultiheadAttention"


def _size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{LAYER}: {name} must be a positive int; got {value!r}.")
    return int(value)


def _shape(x: Variable) -> list[int]:
    return list(x.shape)


def canonical_mask(mask: Any, name: str, dtype: np.dtype, owner: str = LAYER) -> Variable | None:
    """A mask as PyTorch's _canonical_mask makes it: None, or a float Variable of `dtype` to
    add to the scores (a bool mask's True, a key left out, becomes -inf)."""
    if mask is None:
        return None
    if not isinstance(mask, Variable) or mask.is_text:
        got = "a text Variable" if isinstance(mask, Variable) else type(mask).__name__
        raise TypeError(
            f"{owner}: {name} must be a bool or float Variable, or None; got {got}. Make one "
            f"with minigrad.tensor(...)."
        )
    if mask.dtype.kind == "b":
        return factories.zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, -math.inf)
    if mask.dtype.kind != "f":
        raise RuntimeError(
            f"{owner}: only bool and floating types of {name} are supported; got dtype "
            f"{mask.dtype}. Use a bool mask (True: leave that key out) or a float one (added "
            f"to the scores): mask.bool()."
        )
    return mask if mask.dtype == dtype else mask.to(dtype)


class MultiheadAttention(Module):
    """Attention with num_heads heads of size embed_dim / num_heads: query (L, N, E) (or
    (N, L, E) with batch_first, or (L, E) unbatched), key (S, N, kdim), value (S, N, vdim)
    → (output (L, N, E), weights (N, L, S) averaged over heads, or None).

    Parameters as PyTorch's: in_proj_weight (3E, E) (or q/k/v_proj_weight when kdim or vdim
    differ from E) Xavier-uniform, in_proj_bias (3E,) and out_proj.bias zeros, out_proj a
    Linear(E, E); with add_bias_kv, bias_k and bias_v (1, 1, E), Xavier-normal.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        embed_dim, num_heads = _size(embed_dim, "embed_dim"), _size(num_heads, "num_heads")
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        if embed_dim % num_heads:
            # PyTorch asserts this (AssertionError); see the module docstring.
            divisors = [h for h in range(1, embed_dim + 1) if embed_dim % h == 0]
            raise ValueError(
                f"{LAYER}: embed_dim must be divisible by num_heads (each head gets "
                f"embed_dim / num_heads features); got embed_dim={embed_dim} and "
                f"num_heads={num_heads}. num_heads could be one of {divisors[:12]}."
            )
        kdim = embed_dim if kdim is None else _size(kdim, "kdim")
        vdim = embed_dim if vdim is None else _size(vdim, "vdim")
        if kdim <= 0 or vdim <= 0:
            raise ValueError(
                f"{LAYER}: kdim and vdim (the features of key and value) must be positive; "
                f"got kdim={kdim} and vdim={vdim}. Leave them None for embed_dim."
            )
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not (
            0 <= dropout <= 1
        ):
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout!r}.")
        bias = bias_flag(bias, LAYER)
        self.embed_dim, self.num_heads, self.kdim, self.vdim = embed_dim, num_heads, kdim, vdim
        self.head_dim = embed_dim // num_heads
        self.dropout = float(dropout)
        self.batch_first = check_flag(batch_first, "batch_first", LAYER)
        self.add_zero_attn = check_flag(add_zero_attn, "add_zero_attn", LAYER)
        self._qkv_same_embed_dim = kdim == embed_dim and vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(factories.empty(3 * embed_dim, embed_dim))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(factories.empty(embed_dim, embed_dim))
            self.k_proj_weight = Parameter(factories.empty(embed_dim, kdim))
            self.v_proj_weight = Parameter(factories.empty(embed_dim, vdim))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(factories.empty(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if check_flag(add_bias_kv, "add_bias_kv", LAYER):
            self.bias_k = Parameter(factories.empty(1, 1, embed_dim))
            self.bias_v = Parameter(factories.empty(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
            f"batch_first={self.batch_first}"
        )

    # ----------------------------------------------------------------------- forward

    def forward(
        self,
        query: Variable,
        key: Variable,
        value: Variable,
        key_padding_mask: Variable | None = None,
        need_weights: bool = True,
        attn_mask: Variable | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Variable, Variable | None]:
        """(output, weights): output like query (E features), weights (N, L, S), or
        (N, H, L, S) with average_attn_weights=False, or None with need_weights=False.

        key_padding_mask (N, S): True (or -inf) at the padding keys of each sequence.
        attn_mask (L, S) or (N·H, L, S): True (or -inf) where query i may not see key j.
        is_causal: a hint that attn_mask is the causal mask (which must be given)."""
        for name, x in (("query", query), ("key", key), ("value", value)):
            if not isinstance(x, Variable) or x.is_text or x.dtype.kind != "f":
                got = f"dtype {x.dtype}" if isinstance(x, Variable) and not x.is_text else (
                    "a text Variable" if isinstance(x, Variable) else type(x).__name__
                )
                raise TypeError(
                    f"{LAYER}: {name} must be a floating-point Variable; got {got}. Make one "
                    f"with minigrad.tensor(..., dtype=minigrad.float32)."
                )
        need_weights = check_flag(need_weights, "need_weights", LAYER)
        average_attn_weights = check_flag(average_attn_weights, "average_attn_weights", LAYER)
        is_causal = check_flag(is_causal, "is_causal", LAYER)
        batched = self._check_dims(query, key, value, key_padding_mask, attn_mask)
        dtype = query.dtype
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", dtype)
        attn_mask = canonical_mask(attn_mask, "attn_mask", dtype)
        self_attention = query is key and key is value
        cross = key is value  # one source for keys and values
        given = self._as_given(query, key, value, batched)
        if batched and self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        elif not batched:
            query, key, value = (x.unsqueeze(1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attend(
            query, key, value, key_padding_mask, need_weights, attn_mask,
            average_attn_weights, is_causal, self_attention, cross, given,
        )
        if not batched:
            return out.squeeze(1), None if weights is None else weights.squeeze(0)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _check_dims(
        self, query: Variable, key: Variable, value: Variable, key_padding_mask: Any,
        attn_mask: Any,
    ) -> bool:
        """PyTorch's _mha_shape_check: whether the input is batched (3-D query)."""
        layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
        if query.ndim not in (2, 3):
            raise RuntimeError(
                f"{LAYER}: query should be unbatched 2-D (L, E) or batched 3-D {layout} "
                f"(batch_first={self.batch_first}), but received a {query.ndim}-D query of "
                f"shape {_shape(query)}."
            )
        if key.ndim != query.ndim or value.ndim != query.ndim:
            raise RuntimeError(
                f"{LAYER}: for a {query.ndim}-D query of shape {_shape(query)}, expected "
                f"{query.ndim}-D key and value, but got key of shape {_shape(key)} and value "
                f"of shape {_shape(value)}."
            )
        batched = query.ndim == 3
        if key_padding_mask is not None and isinstance(key_padding_mask, Variable):
            wanted, layout = (2, "(N, S)") if batched else (1, "(S,)")
            if key_padding_mask.ndim != wanted:
                raise RuntimeError(
                    f"{LAYER}: for a {query.ndim}-D query of shape {_shape(query)}, expected "
                    f"key_padding_mask to be None or {wanted}-D {layout}, but got shape "
                    f"{_shape(key_padding_mask)}."
                )
        if attn_mask is not None and isinstance(attn_mask, Variable):
            if attn_mask.ndim not in (2, 3):
                raise RuntimeError(
                    f"{LAYER}: expected attn_mask to be None, 2-D (L, S) or 3-D (N·num_heads, "
                    f"L, S), but got shape {_shape(attn_mask)} for query {_shape(query)}."
                )
            if not batched and attn_mask.ndim == 3:
                expected = [self.num_heads, query.shape[0], key.shape[0]]
                if _shape(attn_mask) != expected:
                    raise RuntimeError(
                        f"{LAYER}: expected a 3-D attn_mask of shape {expected} (num_heads, L, "
                        f"S) for the unbatched query {_shape(query)} and key {_shape(key)}, but "
                        f"got {_shape(attn_mask)}."
                    )
        return batched

    def _as_given(self, query: Variable, key: Variable, value: Variable, batched: bool) -> str:
        """The inputs' shapes as the caller gave them and how the layer reads them, for
        messages (a batch-first batch into a sequence-first layer is the usual slip)."""
        shapes = f"query {_shape(query)}, key {_shape(key)} and value {_shape(value)}"
        if not batched:
            return f"{shapes}, read as unbatched (L, E), (S, E)"
        if self.batch_first:
            return (
                f"{shapes}, read as (N, L, E), (N, S, E) since batch_first=True (for "
                f"sequence-first input, make the layer with batch_first=False)"
            )
        return (
            f"{shapes}, read as (L, N, E), (S, N, E) since batch_first=False (for batch-first "
            f"input, make the layer with batch_first=True)"
        )

    def _check_sizes(self, query: Variable, key: Variable, value: Variable, given: str) -> None:
        """query (L, N, E), key (S, N, kdim), value (S, N, vdim), sequence-first here."""
        if query.shape[2] != self.embed_dim:
            raise RuntimeError(
                f"{LAYER}: was expecting embedding dimension of {self.embed_dim} (embed_dim), "
                f"but got a query with {query.shape[2]} features: {given}."
            )
        if key.shape[2] != self.kdim or value.shape[2] != self.vdim:
            raise RuntimeError(
                f"{LAYER}: expected key with {self.kdim} features (kdim) and value with "
                f"{self.vdim} (vdim); got {given}."
            )
        if key.shape[:2] != value.shape[:2]:
            raise RuntimeError(
                f"{LAYER}: key and value differ in their sequence length or batch size (one "
                f"value per key): {given}."
            )
        if key.shape[1] != query.shape[1]:
            raise RuntimeError(
                f"{LAYER}: query and key have different batch sizes ({query.shape[1]} and "
                f"{key.shape[1]}): {given}."
            )

    def _project(
        self, query: Variable, key: Variable, value: Variable, self_attention: bool, cross: bool
    ) -> tuple[Variable, Variable, Variable]:
        """q, k, v = the three input projections (one matmul for self-attention)."""
        e, b = self.embed_dim, self.in_proj_bias
        b_q, b_k, b_v = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if not self._qkv_same_embed_dim:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        else:
            w = self.in_proj_weight
            if self_attention:
                q, k, v = F.linear(query, w, b).split(e, dim=-1)
                return q, k, v
            if cross:
                q = F.linear(query, w[:e], b_q)
                k, v = F.linear(key, w[e:], None if b is None else b[e:]).split(e, dim=-1)
                return q, k, v
            weights = (w[:e], w[e : 2 * e], w[2 * e :])
        w_q, w_k, w_v = weights
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    def _attend(
        self, query: Variable, key: Variable, value: Variable, key_padding_mask: Any,
        need_weights: bool, attn_mask: Any, average: bool, is_causal: bool,
        self_attention: bool, cross: bool, given: str,
    ) -> tuple[Variable, Variable | None]:
        """multi_head_attention_forward on sequence-first (L, N, E) inputs."""
        self._check_sizes(query, key, value, given)
        tgt_len, batch, embed_dim = query.shape
        heads, head_dim = self.num_heads, self.head_dim
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint (it says the mask given is "
                "the causal one). Pass the causal mask itself, attn_mask="
                "minigrad.triu(minigrad.full((L, L), float('-inf')), 1), or call "
                "F.scaled_dot_product_attention(..., is_causal=True)."
            )
        if is_causal and key_padding_mask is None and not need_weights:
            attn_mask = None  # the causal triangle, made by the Function itself
        elif key_padding_mask is not None:
            is_causal = False  # merged with the padding, the mask is no longer causal
        q, k, v = self._project(query, key, value, self_attention, cross)
        src_len = k.shape[0]
        if attn_mask is not None:
            attn_mask = self._batched_mask(attn_mask, batch, tgt_len, src_len)
        if self.bias_k is not None:  # one more key and value, learned, for every sequence
            k = cat([k, self.bias_k.expand(1, batch, embed_dim)], 0)
            v = cat([v, self.bias_v.expand(1, batch, embed_dim)], 0)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
        # (L, N, E) → (N·H, L, head_dim): each head a batch entry
        q = q.reshape(tgt_len, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], batch * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            zeros = factories.zeros(batch * heads, 1, head_dim, dtype=k.dtype)
            k, v = cat([k, zeros], 1), cat([v, zeros], 1)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
        src_len = k.shape[1]
        if key_padding_mask is not None:
            if _shape(key_padding_mask) != [batch, src_len]:
                raise RuntimeError(
                    f"{LAYER}: expected key_padding_mask of shape [{batch}, {src_len}] (N, S), "
                    f"one flag per key of each sequence, but got "
                    f"{_shape(key_padding_mask)}; {given}."
                )
            padding = key_padding_mask.reshape(batch, 1, 1, src_len).expand(
                batch, heads, 1, src_len
            ).reshape(batch * heads, 1, src_len)
            attn_mask = padding if attn_mask is None else attn_mask + padding
        p = self.dropout if self.training else 0.0
        if need_weights:
            keep = dropout_keep(q, (batch * heads, tgt_len, src_len), p)
            out, probs = Attention.apply(
                q, k, v, attn_mask, keep, math.sqrt(1.0 / head_dim), False, False
            )
            weights = probs if keep is None else probs * keep
            weights = weights.reshape(batch, heads, tgt_len, src_len)
            if average:
                weights = weights.mean(1)
        else:
            if attn_mask is not None and attn_mask.shape[0] != 1:  # (N·H, L or 1, S)
                attn_mask = attn_mask.reshape(batch, heads, attn_mask.shape[1], src_len)
            q, k, v = (x.reshape(batch, heads, x.shape[1], head_dim) for x in (q, k, v))
            keep = dropout_keep(q, (batch, heads, tgt_len, src_len), p)
            out, _ = Attention.apply(
                q, k, v, attn_mask, keep, 1.0 / math.sqrt(head_dim), is_causal, True
            )
            weights = None
        # (N·H, L, head_dim) or (N, H, L, head_dim) → (L, N, E)
        out = out.reshape(batch, heads, tgt_len, head_dim).permute(2, 0, 1, 3)
        out = self.out_proj(out.reshape(tgt_len, batch, embed_dim))
        return out, weights

    def _batched_mask(
        self, attn_mask: Variable, batch: int, tgt_len: int, src_len: int
    ) -> Variable:
        """attn_mask (L, S) → (1, L, S), or (N·H, L, S) checked."""
        if attn_mask.ndim == 2:
            if _shape(attn_mask) != [tgt_len, src_len]:
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {_shape(attn_mask)}, but should be "
                    f"{[tgt_len, src_len]} (L, S): one entry per query and key."
                )
            return attn_mask.unsqueeze(0)
        expected = [batch * self.num_heads, tgt_len, src_len]
        if _shape(attn_mask) != expected:
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {_shape(attn_mask)}, but should be {expected} "
                f"(N·num_heads, L, S)."
            )
        return attn_mask


"""TransformerEncoderLayer and TransformerEncoder, as PyTorch's.

One layer is self-attention then a two-layer feed-forward network, each inside a residual
connection with a LayerNorm, after it (post-norm, the original Transformer's) or before it
(norm_first=True, pre-norm, as GPT-2):

    post-norm:  x = norm1(x + SA(x));          x = norm2(x + FF(x))
    pre-norm:   x = x + SA(norm1(x));          x = x + FF(norm2(x))
    SA(x) = dropout1(self_attn(x, x, x));      FF(x) = dropout2(linear2(dropout(act(linear1(x)))))

The encoder stacks num_layers deep copies of one layer (each then trained on its own) and
an optional final norm. PyTorch's inference fast path and nested tensors are speed-ups
with the same values (except that a nested tensor leaves zeros at padded positions):
minigrad always takes the plain path.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag
from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.attention import MultiheadAttention, canonical_mask
from minigrad.nn.container import ModuleList
from minigrad.nn.dropout import Dropout
from minigrad.nn.layer_norm import LayerNorm
from minigrad.nn.linear import Linear
from minigrad.nn.module import Module

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation: Any) -> Callable[[Variable], Variable]:
    """'relu', 'gelu', or a callable (a function or a Module such as nn.GELU('tanh'))."""
    if isinstance(activation, str):
        if activation not in ACTIVATIONS:
            raise RuntimeError(
                f"activation should be relu/gelu, not {activation}; for another one pass the "
                f"function or Module itself (activation=nn.SiLU())."
            )
        return ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(
            f"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable; got "
            f"{type(activation).__name__}."
        )
    return activation


def _positive(value: Any, name: str, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be a positive int; got {value!r}.")
    if value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive int; got {value}.")
    return int(value)


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward network, each with a residual and a LayerNorm:
    src (S, N, d_model) (or (N, S, d_model) with batch_first, or (S, d_model)) → the same
    shape. Submodules as PyTorch's: self_attn, linear1, dropout, linear2, norm1, norm2,
    dropout1, dropout2."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Variable], Variable] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        dim_feedforward = _positive(dim_feedforward, "dim_feedforward", owner)
        bias = check_flag(bias, "bias", owner)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = check_flag(norm_first, "norm_first", owner)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)  # a Module becomes a submodule, as in PyTorch

    def forward(
        self,
        src: Variable,
        src_mask: Variable | None = None,
        src_key_padding_mask: Variable | None = None,
        is_causal: bool = False,
    ) -> Variable:
        """src_mask (S, S) or (N·nhead, S, S): True (or -inf) where position i may not see
        j; src_key_padding_mask (N, S): True at padding; is_causal: src_mask is causal."""
        if not isinstance(src, Variable) or src.is_text or src.dtype.kind != "f":
            raise TypeError(
                f"{type(self).__name__}: src must be a floating-point Variable of shape "
                f"(S, N, d_model) (or (N, S, d_model) with batch_first=True); got "
                f"{type(src).__name__ if not isinstance(src, Variable) else src.dtype}."
            )
        owner = type(self).__name__
        src_key_padding_mask = canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype, owner
        )
        src_mask = canonical_mask(src_mask, "src_mask", src.dtype, owner)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self, x: Variable, attn_mask: Variable | None, key_padding_mask: Variable | None,
        is_causal: bool,
    ) -> Variable:
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Variable) -> Variable:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then `norm` (if given):
    src → the same shape. The copies are deep copies, as PyTorch's: none shares the given
    layer's Parameters."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        if not isinstance(encoder_layer, Module):
            raise TypeError(
                f"{owner}: encoder_layer must be a Module (an nn.TransformerEncoderLayer); got "
                f"{type(encoder_layer).__name__}."
            )
        num_layers = _positive(num_layers, "num_layers", owner)
        if norm is not None and not isinstance(norm, Module):
            raise TypeError(f"{owner}: norm must be a Module or None; got {type(norm).__name__}.")
        # Nested tensors (and the mask check that goes with them) are PyTorch speed-ups.
        check_flag(enable_nested_tensor, "enable_nested_tensor", owner)
        check_flag(mask_check, "mask_check", owner)
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        src: Variable,
        mask: Variable | None = None,
        src_key_padding_mask: Variable | None = None,
        is_causal: bool | None = None,
    ) -> Variable:
        """mask and src_key_padding_mask as TransformerEncoderLayer's src_mask and
        src_key_padding_mask. is_causal=None: PyTorch then checks whether mask is the causal
        one, only to choose a faster kernel; the values are the same either way, so minigrad
        does not look and reads None as False."""
        if is_causal is not None:
            is_causal = check_flag(is_causal, "is_causal", type(self).__name__)
        output = src
        for layer in self.layers:
            output = layer(
                output, src_mask=mask, is_causal=bool(is_causal),
                src_key_padding_mask=src_key_padding_mask,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output

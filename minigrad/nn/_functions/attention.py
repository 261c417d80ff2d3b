"""Scaled dot-product attention as one Function, its backward derived by hand.

For queries Q (..., L, E), keys K (..., S, E), values V (..., S, Ev) and an additive mask B
(-inf where a key may not be attended to):

    S = Q Kᵀ · scale + B          the scores, (..., L, S)
    P = softmax(S) along the keys  each row sums to 1
    O = (P ⊙ D) V                  D the dropout mask (keep / (1 - p)), or 1

Backward, from dO (and dP, when the weights P are used outside too):

    dV = (P ⊙ D)ᵀ dO
    dP = (dO Vᵀ) ⊙ D (+ dP from outside)
    dS = P ⊙ (dP - rowsum(dP ⊙ P))   softmax's vector-Jacobian product, no L x S Jacobian
    dQ = dS K · scale,  dK = dSᵀ Q · scale,  dB = dS

P is the Function's second output and is saved as such, as PyTorch saves an output: with
create_graph=True the saved P is that output, whose history is this node, so a second
derivative through P comes back through this same backward (gradgradcheck passes). Batch
dims broadcast as in matmul; a gradient of a broadcast input is summed back by the engine.

Dropout is composed outside: its mask D is drawn by DropoutMask (minigrad's generator, the
draw recorded for minigrad.compile) and passed in, and the weights a caller returns with
dropout (MultiheadAttention's) are P ⊙ D, made from the output P.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.operand import numeric
from minigrad.ops.reduction import reduce_sum


def softmax_rows(scores: np.ndarray, safe: bool) -> np.ndarray:
    """softmax along the last axis, in place in `scores` (a fresh array). A row with every
    key masked (all -inf) is 0 when `safe`, as PyTorch's scaled_dot_product_attention gives
    it, and NaN otherwise, as its plain softmax (MultiheadAttention's weights path) does."""
    if scores.shape[-1] == 0:
        return scores
    row_max = scores.max(axis=-1, keepdims=True)
    empty = np.isneginf(row_max)  # rows with every key masked: e^(-inf - -inf) would be NaN
    any_empty = bool(empty.any())
    if any_empty:
        row_max[empty] = 0.0
    np.subtract(scores, row_max, out=scores)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    if any_empty:
        total[empty] = 1.0 if safe else np.nan  # 0/1 = 0, or 0/NaN = NaN
    np.divide(scores, total, out=scores)
    return scores


class Attention(Function):
    """(O, P) = ((softmax(Q Kᵀ·scale + B) ⊙ D) V, softmax(Q Kᵀ·scale + B)): see above.

    Inputs: q, k, v; `mask` None, a bool Variable (True: may attend) or a float Variable
    (added to the scores, differentiable); `keep` None or dropout's mask D (keep / (1 - p),
    drawn outside by DropoutMask so that minigrad.compile records the draw, as for
    F.dropout); `scale`; `causal` (keys after the query's own position masked, the
    triangle aligned top-left, as PyTorch's); `safe` (see softmax_rows). P is the weights
    before dropout: P ⊙ D, composed outside, is what O was computed from.
    """

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        q: Variable,
        k: Variable,
        v: Variable,
        mask: Variable | None,
        keep: Variable | None,
        scale: float,
        causal: bool,
        safe: bool,
    ) -> tuple[Variable, Variable]:
        queries, keys = numeric(q, "attention"), numeric(k, "attention")
        if is_on_cuda(queries) or is_on_cuda(keys):
            raise NotImplementedError(
                "attention runs on the CPU in minigrad; its inputs are on cuda. Move the "
                "inputs first: x.cpu() (or model.cpu())."
            )
        scores = np.matmul(queries, keys.swapaxes(-1, -2))
        scores *= scores.dtype.type(scale)  # a scalar of its own dtype: float32 stays float32
        if mask is not None:
            bias = numeric(mask, "attention")
            if bias.dtype == np.bool_:
                np.copyto(scores, -np.inf, where=~bias)
            else:
                scores += bias
        if causal:
            above = ~np.tri(*scores.shape[-2:], dtype=bool)  # key j after query i: masked
            np.copyto(scores, -np.inf, where=above)
        probs = softmax_rows(scores, safe)
        dropped = probs if keep is None else probs * numeric(keep, "attention")
        out = np.matmul(dropped, numeric(v, "attention"))
        ctx.scale = scale
        # P's gradient is usually None (nobody uses the weights): no zeros are made for it.
        ctx.set_materialize_grads(False)
        # P saved as the output it is (PyTorch's idiom): a second derivative sees its history.
        weights = Variable._make(probs)
        ctx.save_for_backward(q, k, v, keep, weights)
        return Variable._make(out), weights

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: Any, grad_probs: Any) -> tuple:
        q, k, v, keep, probs = ctx.saved_tensors
        scale = ctx.scale
        needs_q, needs_k, needs_v, needs_mask = ctx.needs_input_grad[:4]
        needs_scores = needs_q or needs_k or needs_mask
        dv = dp = None
        if grad_out is not None:
            if needs_v:
                dv = (probs if keep is None else probs * keep).mT @ grad_out
            if needs_scores:
                dp = grad_out @ v.mT
                if keep is not None:
                    dp = dp * keep
        if grad_probs is not None and needs_scores:
            dp = grad_probs if dp is None else dp + grad_probs
        if dp is None:
            return None, None, dv, None, None, None, None, None
        ds = probs * (dp - reduce_sum(dp * probs, -1, keepdim=True))
        dq = (ds @ k) * scale if needs_q else None
        dk = (ds.mT @ q) * scale if needs_k else None
        return dq, dk, dv, (ds if needs_mask else None), None, None, None, None

"""One LSTM layer over a whole sequence as one Function: backpropagation through time
written out, as PyTorch (and cuDNN) fuse it.

With a_t = x_t W_ihᵀ + b_ih + b_hh + h_(t-1) W_hhᵀ split into blocks (i, f, g, o) and
A_t = (σ(i), σ(f), tanh(g), σ(o)) = (i, f, g, o) after activation:

    c_t = f ⊙ c_(t-1) + i ⊙ g        h_t = o ⊙ tanh(c_t)

Backward runs the steps in reverse. From dh (from h_t's users plus step t+1) and dc:

    dc  += dh ⊙ o ⊙ (1 - tanh²(c_t))
    da_t = (dc ⊙ g ⊙ i(1-i),  dc ⊙ c_(t-1) ⊙ f(1-f),  dc ⊙ i ⊙ (1-g²),  dh ⊙ tanh(c_t) ⊙ o(1-o))
    dh   = da_t W_hh  (to step t-1)      dc = dc ⊙ f  (to step t-1)

and dW_hh = Σ_t da_tᵀ h_(t-1), one matmul over all steps at the end. The input projection
x W_ihᵀ + b is not inside: it is one matmul over every step at once, made by the caller
(nn/recurrent.py), so its gradient is the engine's ordinary matmul backward of da.

The activations A and cells c of every step are the Function's outputs too, saved as
outputs are (attention's P is the same idiom): with create_graph=True the saved values are
those outputs, whose history is this node, so a second derivative flows through this same
backward; a gradient that reaches them from outside is added in at its step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.elementwise import tanh
from minigrad.ops.operand import numeric
from minigrad.ops.shape import cat


def _joined(parts: list, dim: int) -> Any:
    """cat on Variables, np.concatenate on arrays: backward runs on either."""
    if type(parts[0]) is np.ndarray:
        return np.concatenate(parts, dim)
    return cat(parts, dim)


def _gate_scales(size: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shift) over the 4H gate columns, so that tanh(a ⊙ scale) ⊙ scale + shift is
    σ on the i, f and o blocks and tanh on g, in one pass: σ(a) = ½·tanh(a/2) + ½, which
    cannot overflow where e^-a would."""
    scale = np.full(4 * size, 0.5, dtype)
    scale[2 * size : 3 * size] = 1.0
    shift = np.full(4 * size, 0.5, dtype)
    shift[2 * size : 3 * size] = 0.0
    return scale, shift


class LSTMLayer(Function):
    """(hs, h_n, c_n, A, C) = one LSTM layer over the sequence (see above).

    Inputs: `projected` (L, N, 4H) = x W_ihᵀ + b_ih + b_hh for every step (N absent for
    an unbatched sequence); h0, c0 (N, H); w_hh (4H, H); `reverse` runs the steps from
    the end (a bidirectional layer's second direction), each h_t still at position t.
    Outputs: hs (L, N, H); the last step's h and c; the activations A (L, N, 4H) and the
    cells C (L, N, H) of every step, which backward reads.
    """

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        projected: Variable,
        h0: Variable,
        c0: Variable,
        w_hh: Variable,
        reverse: bool,
    ) -> tuple:
        inputs = numeric(projected, "LSTM")
        h, c, w_t = numeric(h0, "LSTM"), numeric(c0, "LSTM"), numeric(w_hh, "LSTM").T
        if is_on_cuda(inputs):
            raise NotImplementedError(
                "LSTM runs on the CPU in minigrad; its input is on cuda. Move the model and "
                "the input first: model.cpu(), x.cpu()."
            )
        dtype = np.result_type(inputs, h, c, w_t)
        size = h.shape[-1]
        length = inputs.shape[0]
        activations = np.empty(inputs.shape, dtype)
        cells = np.empty((length, *c.shape), dtype)
        hs = np.empty((length, *h.shape), dtype)
        scale, shift = _gate_scales(size, dtype)
        for t in range(length - 1, -1, -1) if reverse else range(length):
            a = activations[t]
            np.matmul(h, w_t, out=a)
            a += inputs[t]
            a *= scale  # σ on i, f, o and tanh on g, all four blocks in four passes
            np.tanh(a, out=a)
            a *= scale
            a += shift
            i, f = a[..., :size], a[..., size : 2 * size]
            g, o = a[..., 2 * size : 3 * size], a[..., 3 * size :]
            c = f * c + i * g
            h = o * np.tanh(c)
            cells[t], hs[t] = c, h
        ctx.reverse = reverse
        ctx.set_materialize_grads(False)  # A and C rarely get gradients: no zeros made
        outputs = [Variable._make(array) for array in (hs, activations, cells)]
        ctx.save_for_backward(h0, c0, w_hh, *outputs)
        return outputs[0], Variable._make(h.copy()), Variable._make(c.copy()), *outputs[1:]

    @staticmethod
    def backward(
        ctx: FunctionCtx, grad_hs: Any, grad_h: Any, grad_c: Any, grad_a: Any, grad_cells: Any
    ) -> tuple:
        h0, c0, w_hh, hs, activations, cells = ctx.saved_tensors
        size = hs.shape[-1]
        length = hs.shape[0]
        order = range(length) if ctx.reverse else range(length - 1, -1, -1)
        dh, dc = grad_h, grad_c
        da: list[Any] = [None] * length
        for t in order:
            before = t + 1 if ctx.reverse else t - 1  # the step that ran just before t
            h_before = h0 if before in (-1, length) else hs[before]
            c_before = c0 if before in (-1, length) else cells[before]
            if grad_hs is not None:
                dh = grad_hs[t] if dh is None else dh + grad_hs[t]
            if grad_cells is not None:
                dc = grad_cells[t] if dc is None else dc + grad_cells[t]
            a = activations[t]
            i, f = a[..., :size], a[..., size : 2 * size]
            g, o = a[..., 2 * size : 3 * size], a[..., 3 * size :]
            if dh is None:  # nothing reaches this step's h: zeros of h's shape
                dh = 0 * h_before
            tanh_c = tanh(cells[t])
            dc_total = dh * o * (1 - tanh_c * tanh_c)
            if dc is not None:
                dc_total = dc_total + dc
            gates = [dc_total * g, dc_total * c_before, dc_total * i, dh * tanh_c]
            if grad_a is not None:  # A used outside as well: its gradient joins here
                gates = [gates[k] + grad_a[t][..., k * size : (k + 1) * size] for k in range(4)]
            da[t] = _joined(
                [
                    gates[0] * i * (1 - i),
                    gates[1] * f * (1 - f),
                    gates[2] * (1 - g * g),
                    gates[3] * o * (1 - o),
                ],
                -1,
            )
            dh = da[t] @ w_hh
            dc = dc_total * f
        d_projected = _joined([step[None] for step in da], 0)
        grad_w = None
        if ctx.needs_input_grad[3]:
            if ctx.reverse:
                h_before_all = _joined([hs[1:], h0[None]], 0)
            else:
                h_before_all = _joined([h0[None], hs[:-1]], 0)
            grad_w = d_projected.reshape(-1, 4 * size).T @ h_before_all.reshape(-1, size)
        return d_projected, dh, dc, grad_w, None

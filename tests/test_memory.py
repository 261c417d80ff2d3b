"""Trading memory: saved_tensors_hooks (how saved values are kept) and checkpoint (recompute)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad import nn
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad.utils.checkpoint import checkpoint


def _counting_hooks() -> tuple[list, saved_tensors_hooks]:
    packed: list = []

    def pack(variable):
        packed.append(variable.shape)
        return variable

    return packed, saved_tensors_hooks(pack, lambda variable: variable)


# --------------------------------------------------------------------------- saved hooks


def test_pack_sees_every_saved_variable_and_unpack_feeds_backward() -> None:
    x = minigrad.Variable(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    packed, hooks = _counting_hooks()
    with hooks:
        y = (x * x).tanh().sum()  # Mul saves x twice, Tanh saves its output
    assert packed == [(3,), (3,), (3,)]
    y.backward()
    expected = (1 - np.tanh(x.data**2) ** 2) * 2 * x.data
    np.testing.assert_allclose(x.grad.data, expected)


def test_values_can_live_elsewhere_until_backward() -> None:
    # "Offload": keep a copy as a plain array, and rebuild a Variable from it.
    x = minigrad.Variable(np.linspace(-1, 1, 5), requires_grad=True)
    store: list[np.ndarray] = []

    def pack(variable):
        store.append(variable.data.copy())
        return len(store) - 1

    def unpack(index):
        return minigrad.Variable(store[index])

    with saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.data, np.exp(x.data) * (1 + x.data))


def test_hooks_apply_only_inside_the_block_and_nest() -> None:
    x = minigrad.Variable(np.ones(2), requires_grad=True)
    outer, inner = [], []
    with saved_tensors_hooks(lambda v: outer.append(1) or v, lambda v: v):
        _ = x * x
        with saved_tensors_hooks(lambda v: inner.append(1) or v, lambda v: v):
            _ = x * x
        _ = x * x
    _ = x * x
    assert len(outer) == 4 and len(inner) == 2


def test_a_saved_output_keeps_its_history_for_double_backward() -> None:
    x = minigrad.Variable(np.array([0.3]), requires_grad=True)
    with saved_tensors_hooks(lambda v: v, lambda v: v):
        y = x.tanh()
    (first,) = minigrad.grad(y.sum(), x, create_graph=True)
    (second,) = minigrad.grad(first.sum(), x)
    t = np.tanh(0.3)
    np.testing.assert_allclose(second.data, -2 * t * (1 - t * t))


def test_bad_hooks_get_clear_errors() -> None:
    with pytest.raises(TypeError, match="two functions"):
        saved_tensors_hooks(1, lambda v: v)
    x = minigrad.Variable(np.ones(2), requires_grad=True)
    with saved_tensors_hooks(lambda v: v, lambda v: "not a Variable"):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack hook must return a Variable"):
        y.backward()


def test_graph_saved_values_show_what_the_pack_hook_returned() -> None:
    x = minigrad.Variable(np.ones(2), requires_grad=True)
    with saved_tensors_hooks(lambda v: "kept elsewhere", lambda v: v):
        y = x * x
    values = minigrad.autodiff.graph.saved_values(y.grad_fn)
    assert [value.value for value in values] == ["kept elsewhere", "kept elsewhere"]


# --------------------------------------------------------------------------- checkpoint


def _deep_mlp(depth: int, width: int) -> list:
    minigrad.manual_seed(0)
    return [nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(depth)]


def _run(blocks: list, x, use_checkpoint: bool):
    h = x
    for block in blocks:
        h = checkpoint(block, h) if use_checkpoint else block(h)
    return (h * h).sum()


def test_checkpoint_gives_the_same_gradients_and_saves_fewer_values() -> None:
    blocks = _deep_mlp(depth=6, width=8)
    x_data = np.random.default_rng(1).standard_normal((4, 8))
    results = {}
    for use in (False, True):
        for block in blocks:
            block.zero_grad()
        x = minigrad.Variable(x_data.copy(), requires_grad=True)
        packed, hooks = _counting_hooks()
        with hooks:
            loss = _run(blocks, x, use)
        loss.backward()
        grads = [p.grad.data.copy() for block in blocks for p in block.parameters()]
        results[use] = (loss.item(), grads, x.grad.data.copy(), len(packed))
    plain, checkpointed = results[False], results[True]
    assert plain[0] == checkpointed[0]
    for a, b in zip(plain[1], checkpointed[1]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(plain[2], checkpointed[2])
    # Without checkpoint: Linear saves x and W, Tanh its output, per block, and the final
    # x * x two more; with it, each block keeps only its input (plus the final product).
    assert plain[3] == 6 * 3 + 2
    assert checkpointed[3] == 6 + 2


def test_checkpoint_passes_gradcheck() -> None:
    # gradcheck differentiates with grad(), which reaches the Variables passed to
    # checkpoint (parameters used inside get their .grad from backward() only).
    def block(x, w):
        return (x @ w).tanh() * x

    w = minigrad.Variable(np.random.default_rng(2).standard_normal((3, 3)), requires_grad=True)
    x = minigrad.Variable(np.random.default_rng(3).standard_normal((2, 3)), requires_grad=True)
    assert minigrad.gradcheck(lambda x, w: checkpoint(block, x, w), (x, w))


def test_checkpoint_recomputes_random_operations_with_the_same_draws() -> None:
    minigrad.manual_seed(5)
    x = minigrad.Variable(np.ones((4, 6)), requires_grad=True)
    dropout = nn.Dropout(0.5)
    y = checkpoint(lambda v: dropout(v) * 3.0, x)
    mask = y.data != 0
    y.sum().backward()
    # The gradient is 3 / (1 - p) exactly where the forward kept the element.
    np.testing.assert_array_equal(x.grad.data != 0, mask)


def test_checkpoint_with_several_outputs_and_a_constant_input() -> None:
    x = minigrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    scale = minigrad.Variable(np.array([3.0, 4.0]))  # needs no gradient

    def two(a, s):
        return a * s, a.exp()

    first, second = checkpoint(two, x, scale)
    (first.sum() + second.sum()).backward()
    np.testing.assert_allclose(x.grad.data, scale.data + np.exp(x.data))


def test_checkpoint_warns_when_no_input_requires_grad() -> None:
    layer = nn.Linear(3, 3)
    with pytest.warns(UserWarning, match="none of the inputs requires grad"):
        out = checkpoint(layer, minigrad.Variable(np.ones((2, 3))))
    assert not out.requires_grad


def test_checkpoint_passes_keywords_on_and_honours_use_reentrant_false() -> None:
    x = minigrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    checkpoint(lambda v, scale: v * scale, x, scale=3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])
    layer = nn.Linear(3, 2)
    data = minigrad.Variable(np.ones((4, 3)))
    checkpoint(layer, data, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(layer.weight.grad.data, np.full((2, 3), 4.0))


def test_double_backward_through_checkpoint_is_refused_clearly() -> None:
    x = minigrad.Variable(np.array([0.5, 1.5]), requires_grad=True)
    y = checkpoint(lambda a: (a**3).sum(), x)
    (g,) = minigrad.grad(y, x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|twice"):
        g.sum().backward()


def test_checkpoint_errors_say_what_to_pass() -> None:
    x = minigrad.Variable(np.ones(2), requires_grad=True)
    with pytest.raises(TypeError, match="function first"):
        checkpoint(x)
    with pytest.raises(TypeError, match="must return a Variable"):
        checkpoint(lambda v: 3.0, x)


def test_checkpoint_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    data = np.random.default_rng(4).standard_normal((3, 4))
    weight = np.random.default_rng(5).standard_normal((4, 4))
    ours_x = minigrad.Variable(data.copy(), requires_grad=True)
    ours_w = minigrad.Variable(weight.copy(), requires_grad=True)
    checkpoint(lambda v: (v @ ours_w).sin(), ours_x).sum().backward()
    their_x = torch.tensor(data, requires_grad=True)
    their_w = torch.tensor(weight, requires_grad=True)
    torch_checkpoint(lambda v: (v @ their_w).sin(), their_x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(ours_x.grad.data, their_x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours_w.grad.data, their_w.grad.numpy(), rtol=1e-12)


# ------------------------------------------- non-reentrant checkpoint: saved-tensor hooks
def _deep(x: minigrad.Variable, weights: list) -> minigrad.Variable:
    for weight in weights:
        x = (x @ weight).tanh()
    return x


def _retained_after_forward(use_checkpoint: bool) -> tuple[int, list]:
    """Bytes still held (tracemalloc) once forward is done, and the gradients after."""
    import tracemalloc

    rng = np.random.default_rng(11)
    weights = [
        minigrad.Variable(rng.standard_normal((128, 128)) / 12, requires_grad=True)
        for _ in range(16)
    ]
    x = minigrad.Variable(rng.standard_normal((256, 128)))  # no input requires grad
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        if use_checkpoint:
            y = checkpoint(_deep, x, weights, use_reentrant=False)
        else:
            y = _deep(x, weights)
        loss = y.sum()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    loss.backward()
    return retained, [w.grad.numpy() for w in weights]


def test_non_reentrant_checkpoint_frees_the_values_forward_saved() -> None:
    """Measured with tracemalloc, not with minigrad's own counters: 16 layers of 256x128
    float64 activations (256 KiB each) are kept without checkpoint, dropped with it; the
    gradients (of parameters inside, with no input requiring grad) are the same."""
    plain_bytes, plain_grads = _retained_after_forward(use_checkpoint=False)
    checkpointed_bytes, checkpointed_grads = _retained_after_forward(use_checkpoint=True)
    activation = 256 * 128 * 8
    assert plain_bytes > 16 * activation
    assert checkpointed_bytes < 3 * activation
    for ours, plain in zip(checkpointed_grads, plain_grads):
        np.testing.assert_allclose(ours, plain, rtol=1e-12)


def test_non_reentrant_checkpoint_recomputes_once_and_keeps_random_numbers() -> None:
    calls = []
    w = minigrad.Variable(np.linspace(0.1, 0.9, 6).reshape(2, 3), requires_grad=True)

    def block(v):
        calls.append(1)
        mask = minigrad.rand(2, 3) > 0.5  # the same draw when recomputed
        return (v * w * mask).exp() * v

    v = minigrad.Variable(np.ones((2, 3)), requires_grad=True)
    minigrad.manual_seed(3)
    out = checkpoint(block, v, use_reentrant=False)
    (gv, gw) = minigrad.grad(out.sum(), (v, w))
    assert len(calls) == 2  # forward, then one recompute for every saved value
    minigrad.manual_seed(3)
    v2 = minigrad.Variable(np.ones((2, 3)), requires_grad=True)
    (ev, ew) = minigrad.grad(block(v2).sum(), (v2, w))
    np.testing.assert_allclose(gv.numpy(), ev.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), ew.numpy(), rtol=1e-12)


def test_non_reentrant_checkpoint_refuses_a_function_that_changes_between_runs() -> None:
    runs = []
    x = minigrad.Variable(np.array([0.5, 2.0]), requires_grad=True)

    def moody(v):
        runs.append(1)
        return v.exp() if len(runs) == 1 else v.exp().sin().cos()

    out = checkpoint(moody, x, use_reentrant=False)
    with pytest.raises(RuntimeError, match="must run the same operations each time"):
        out.sum().backward()

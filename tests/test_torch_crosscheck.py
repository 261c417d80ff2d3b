"""Cross-checks against PyTorch (float64, CPU): same values, same gradients, same semantics.

Every case is written once as `fn(lib, *xs)` and run twice: with minigrad Variables and
with torch tensors. Forward values, leaf `.grad` after `backward`, and second derivatives
(`grad(..., create_graph=True)` differentiated again) must agree to about 1e-10.
Skipped when torch is not installed; torch is an optional dependency of the course.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest

import minigrad
from minigrad import Variable

torch = pytest.importorskip("torch")

RTOL = 1e-10
ATOL = 1e-12

# The few places where the two libraries are spelled differently.
MG = SimpleNamespace(
    name="minigrad",
    cat=minigrad.cat,
    stack=minigrad.stack,
    const=lambda a: np.array(a, dtype=np.float64),
    index=np.asarray,
    leaf=lambda a: Variable(np.array(a, dtype=np.float64), requires_grad=True),
    grad=minigrad.grad,
    enable_grad=minigrad.enable_grad,
    Function=minigrad.Function,
)
TORCH = SimpleNamespace(
    name="torch",
    cat=torch.cat,
    stack=torch.stack,
    const=lambda a: torch.tensor(np.asarray(a), dtype=torch.float64),
    index=lambda a: torch.from_numpy(np.asarray(a)),
    leaf=lambda a: torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True),
    grad=torch.autograd.grad,
    enable_grad=torch.enable_grad,
    Function=torch.autograd.Function,
)


def to_numpy(value) -> np.ndarray:
    if isinstance(value, Variable):
        return np.asarray(value.data)
    return value.detach().numpy(force=True)  # force: torch may answer with a ZeroTensor


def as_lib_value(lib: SimpleNamespace, array: np.ndarray):
    """A constant (no grad) of the library: a Variable or a tensor."""
    return Variable(np.array(array)) if lib is MG else torch.tensor(np.asarray(array))


def assert_close(got, want, what: str) -> None:
    if got is None or want is None:
        assert got is None and want is None, f"{what}: minigrad {got!r} vs torch {want!r}"
        return
    got, want = to_numpy(got), to_numpy(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs torch {want.shape}"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def make_array(rng: np.random.Generator, shape: tuple, domain: str) -> np.ndarray:
    if domain == "general":
        return rng.uniform(-2, 2, shape)
    if domain == "positive":
        return rng.uniform(0.5, 2.5, shape)
    if domain == "away":  # no values near 0: relu, abs, divisors
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2, shape)
    if domain == "distinct":  # max without ties
        size = int(np.prod(shape))
        return (rng.permutation(size) - size / 2).reshape(shape) / 4
    raise ValueError(domain)


# ----------------------------------------------------------------------------- op table
# (id, fn(lib, *xs), [(shape, domain), ...]); every input is a leaf requiring grad.

G, P, A, D = "general", "positive", "away", "distinct"
ROWS = np.array([0, 2, 2, 1])
COLS = np.array([3, 0, 0, 1])
MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])

OPS: list = [
    # arithmetic with broadcasting
    ("add", lambda lib, x, y: x + y, [((2, 3), G), ((3,), G)]),
    ("add_bcast_both", lambda lib, x, y: x + y, [((4, 1, 3), G), ((2, 1), G)]),
    ("add_0d", lambda lib, x, y: x + y, [((), G), ((2, 2), G)]),
    ("sub", lambda lib, x, y: x - y, [((3, 1), G), ((1, 4), G)]),
    ("mul", lambda lib, x, y: x * y, [((2, 3, 4), G), ((3, 1), G)]),
    ("div", lambda lib, x, y: x / y, [((2, 3), G), ((2, 1), A)]),
    ("pow", lambda lib, x, y: x**y, [((2, 3), P), ((3,), G)]),
    ("neg", lambda lib, x: -x, [((2, 3), G)]),
    # one side a Python number, a NumPy array (a tensor for torch) or a constant
    ("add_float", lambda lib, x: x + 2.5, [((2, 3), G)]),
    ("radd_float", lambda lib, x: 2.5 + x, [((2, 3), G)]),
    ("add_int", lambda lib, x: x + 2, [((2, 3), G)]),
    ("sub_float", lambda lib, x: x - 1.5, [((2, 3), G)]),
    ("rsub_float", lambda lib, x: 1.5 - x, [((2, 3), G)]),
    ("mul_float", lambda lib, x: x * -3.0, [((2, 3), G)]),
    ("rmul_float", lambda lib, x: -3.0 * x, [((2, 3), G)]),
    ("div_float", lambda lib, x: x / 4.0, [((2, 3), G)]),
    ("rdiv_float", lambda lib, x: 4.0 / x, [((2, 3), A)]),
    ("pow_float", lambda lib, x: x**2.5, [((2, 3), P)]),
    ("pow_int", lambda lib, x: x**3, [((2, 3), G)]),
    ("pow_negative", lambda lib, x: x**-1.5, [((2, 3), P)]),
    ("rpow_float", lambda lib, x: 2.0**x, [((2, 3), G)]),
    ("add_array", lambda lib, x: x + lib.const([[1.0], [2.0]]), [((2, 3), G)]),
    ("rsub_array", lambda lib, x: lib.const([1.0, 2.0, 3.0]) - x, [((2, 3), G)]),
    ("mul_array", lambda lib, x: x * lib.const([0.5, -1.0, 2.0]), [((2, 3), G)]),
    ("rdiv_array", lambda lib, x: lib.const([0.5, -1.0, 2.0]) / x, [((2, 3), A)]),
    ("pow_array", lambda lib, x: x ** lib.const([0.5, 2.0, -1.0]), [((2, 3), P)]),
    ("rpow_array", lambda lib, x: lib.const([0.5, 2.0, 3.0]) ** x, [((2, 3), G)]),
    (
        "sub_frozen_variable",
        lambda lib, x: x - as_lib_value(lib, [[1.0, 2.0, 3.0]]),
        [((2, 3), G)],
    ),
    # matmul
    ("matmul_1d_1d", lambda lib, x, y: x @ y, [((3,), G), ((3,), G)]),
    ("matmul_2d_1d", lambda lib, x, y: x @ y, [((2, 3), G), ((3,), G)]),
    ("matmul_1d_2d", lambda lib, x, y: x @ y, [((3,), G), ((3, 4), G)]),
    ("matmul_2d_2d", lambda lib, x, y: x @ y, [((2, 3), G), ((3, 4), G)]),
    ("matmul_batched", lambda lib, x, y: x @ y, [((2, 2, 3), G), ((2, 3, 4), G)]),
    ("matmul_batch_bcast", lambda lib, x, y: x @ y, [((2, 1, 2, 3), G), ((3, 3, 4), G)]),
    ("matmul_batch_2d", lambda lib, x, y: x @ y, [((2, 2, 3), G), ((3, 4), G)]),
    ("matmul_batch_1d", lambda lib, x, y: x @ y, [((2, 2, 3), G), ((3,), G)]),
    ("matmul_1d_batch", lambda lib, x, y: x @ y, [((3,), G), ((2, 3, 4), G)]),
    ("matmul_array", lambda lib, x: x @ lib.const(np.arange(12.0).reshape(3, 4)), [((2, 3), G)]),
    ("rmatmul_array", lambda lib, x: lib.const(np.arange(6.0).reshape(2, 3)) @ x, [((3, 4), G)]),
    # elementwise
    ("exp", lambda lib, x: x.exp(), [((2, 3), G)]),
    ("log", lambda lib, x: x.log(), [((2, 3), P)]),
    ("tanh", lambda lib, x: x.tanh(), [((2, 3), G)]),
    ("sigmoid", lambda lib, x: x.sigmoid(), [((2, 3), G)]),
    ("relu", lambda lib, x: x.relu(), [((2, 3), A)]),
    ("sqrt", lambda lib, x: x.sqrt(), [((2, 3), P)]),
    ("abs", lambda lib, x: x.abs(), [((2, 3), A)]),
    ("abs_builtin", lambda lib, x: abs(x), [((2, 3), A)]),
    ("clone", lambda lib, x: x.clone() * 2.0, [((2, 3), G)]),
    # reductions
    ("sum_all", lambda lib, x: x.sum(), [((2, 3, 4), G)]),
    ("sum_dim", lambda lib, x: x.sum(1), [((2, 3, 4), G)]),
    ("sum_neg_keepdim", lambda lib, x: x.sum(-1, keepdim=True), [((2, 3, 4), G)]),
    ("sum_tuple", lambda lib, x: x.sum((0, -1)), [((2, 3, 4), G)]),
    ("sum_tuple_keepdim", lambda lib, x: x.sum((2, 0), keepdim=True), [((2, 3, 4), G)]),
    ("mean_all", lambda lib, x: x.mean(), [((2, 3, 4), G)]),
    ("mean_dim", lambda lib, x: x.mean(0), [((2, 3, 4), G)]),
    ("mean_tuple_keepdim", lambda lib, x: x.mean((-2, -1), keepdim=True), [((2, 3, 4), G)]),
    ("max_all", lambda lib, x: x.max(), [((2, 3, 4), D)]),
    ("max_dim_values", lambda lib, x: x.max(1).values, [((2, 3, 4), D)]),
    ("max_dim_keepdim", lambda lib, x: x.max(-1, keepdim=True)[0], [((2, 3, 4), D)]),
    ("sum_0d_dim", lambda lib, x: x.sum(0), [((), G)]),
    ("mean_0d_dim", lambda lib, x: x.mean(-1, keepdim=True), [((), G)]),
    ("max_0d_dim", lambda lib, x: x.max(0).values, [((), G)]),
    ("softmax_0d", lambda lib, x: x.softmax(0) * x, [((), G)]),
    # shapes
    ("reshape", lambda lib, x: x.reshape(4, -1), [((2, 3, 4), G)]),
    ("reshape_tuple", lambda lib, x: x.reshape((3, 8)), [((2, 3, 4), G)]),
    ("view", lambda lib, x: x.view(-1), [((2, 3, 4), G)]),
    ("transpose", lambda lib, x: x.transpose(0, 2), [((2, 3, 4), G)]),
    ("transpose_neg", lambda lib, x: x.transpose(-1, -2), [((2, 3, 4), G)]),
    ("T_2d", lambda lib, x: x.T, [((2, 3), G)]),
    pytest.param(
        "T_3d",
        lambda lib, x: x.T,
        [((2, 3, 4), G)],
        marks=pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning"),
    ),
    ("mT", lambda lib, x: x.mT, [((2, 3, 4), G)]),
    ("permute", lambda lib, x: x.permute(2, 0, 1), [((2, 3, 4), G)]),
    ("permute_neg_tuple", lambda lib, x: x.permute((-1, 0, 1)), [((2, 3, 4), G)]),
    ("unsqueeze", lambda lib, x: x.unsqueeze(0), [((2, 3), G)]),
    ("unsqueeze_neg", lambda lib, x: x.unsqueeze(-1), [((2, 3), G)]),
    ("squeeze_all", lambda lib, x: x.squeeze(), [((1, 3, 1, 2), G)]),
    ("squeeze_dim", lambda lib, x: x.squeeze(2), [((1, 3, 1, 2), G)]),
    ("squeeze_non_one_dim", lambda lib, x: x.squeeze(1), [((1, 3, 1, 2), G)]),
    ("expand", lambda lib, x: x.expand(2, 3, 4), [((3, 1), G)]),
    ("expand_minus_one", lambda lib, x: x.expand(-1, 4), [((3, 1), G)]),
    ("expand_new_dims", lambda lib, x: x.expand(2, -1, -1), [((3, 1), G)]),
    ("sum_to_size", lambda lib, x: x.sum_to_size(3, 1), [((2, 3, 4), G)]),
    ("sum_to_size_tuple", lambda lib, x: x.sum_to_size((1, 4)), [((2, 3, 4), G)]),
    # indexing
    ("index_int", lambda lib, x: x[1], [((3, 4), G)]),
    ("index_neg_int_slice", lambda lib, x: x[-1, 1:], [((3, 4), G)]),
    ("index_step", lambda lib, x: x[:, ::2], [((3, 4), G)]),
    ("index_list_repeats", lambda lib, x: x[[0, 0, 2]], [((3, 4), G)]),
    ("index_array_repeats", lambda lib, x: x[lib.index(ROWS)], [((3, 4), G)]),
    (
        "index_advanced_pairs",
        lambda lib, x: x[lib.index(ROWS[:3]), lib.index(COLS[:3])],
        [((3, 4), G)],
    ),
    ("index_slice_array", lambda lib, x: x[1:, lib.index(COLS)], [((3, 4), G)]),
    ("index_bool_mask", lambda lib, x: x[lib.index(MASK)], [((3, 4), G)]),
    ("index_bool_rows", lambda lib, x: x[lib.index(np.array([True, False, True]))], [((3, 4), G)]),
    ("index_ellipsis", lambda lib, x: x[..., 1], [((2, 3, 4), G)]),
    ("index_none", lambda lib, x: x[None, 1], [((2, 3, 4), G)]),
    # joining
    ("cat", lambda lib, x, y: lib.cat([x, y]), [((2, 3), G), ((1, 3), G)]),
    (
        "cat_neg_dim",
        lambda lib, x, y, z: lib.cat([x, y, z], -1),
        [((2, 1), G), ((2, 3), G), ((2, 2), G)],
    ),
    ("cat_array", lambda lib, x: lib.cat([x, lib.const(np.ones((2, 3)))], 1), [((2, 3), G)]),
    ("stack", lambda lib, x, y: lib.stack([x, y]), [((2, 3), G), ((2, 3), G)]),
    ("stack_neg_dim", lambda lib, x, y: lib.stack([x, y], dim=-1), [((2, 3), G), ((2, 3), G)]),
    ("stack_frozen", lambda lib, x: lib.stack([as_lib_value(lib, np.ones(3)), x], 1), [((3,), G)]),
    # softmax
    ("softmax_last", lambda lib, x: x.softmax(-1), [((2, 3, 4), G)]),
    ("softmax_first", lambda lib, x: x.softmax(0), [((2, 3, 4), G)]),
    ("log_softmax", lambda lib, x: x.log_softmax(1), [((2, 3, 4), G)]),
    ("log_softmax_large", lambda lib, x: (x * 300.0).log_softmax(-1), [((2, 3), G)]),
]


def _case_parts(case) -> tuple:
    return case.values if hasattr(case, "values") else case


def _ids(cases: list) -> list[str]:
    return [_case_parts(c)[0] for c in cases]


def run_forward_backward(lib: SimpleNamespace, fn: Callable, arrays: list, cotangent):
    leaves = [lib.leaf(a) for a in arrays]
    out = fn(lib, *leaves)
    seed = cotangent if cotangent is not None else np.ones(tuple(out.shape))
    out.backward(lib.const(seed))
    return out, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize(("name", "fn", "inputs"), OPS, ids=_ids(OPS))
def test_forward_and_gradients_match_torch(name: str, fn: Callable, inputs: list) -> None:
    rng = rng_for(name)
    arrays = [make_array(rng, shape, domain) for shape, domain in inputs]
    with torch.no_grad():
        out_shape = tuple(fn(TORCH, *[torch.from_numpy(a) for a in arrays]).shape)
    cotangent = rng.uniform(-1, 1, out_shape)

    torch_out, torch_grads = run_forward_backward(TORCH, fn, arrays, cotangent)
    mg_out, mg_grads = run_forward_backward(MG, fn, arrays, cotangent)

    assert isinstance(mg_out, Variable) and mg_out.requires_grad
    assert mg_out.dtype == np.float64
    assert_close(mg_out, torch_out, f"{name}: forward")
    for i, (got, want) in enumerate(zip(mg_grads, torch_grads)):
        assert_close(got, want, f"{name}: grad of input {i}")


def second_derivatives(lib: SimpleNamespace, fn: Callable, arrays: list, w: np.ndarray, u: list):
    """d/d(x, w) of sum_i <grad_i, u_i>, where grad = d<fn(x), w>/dx (create_graph=True)."""
    leaves = [lib.leaf(a) for a in arrays]
    weight = lib.leaf(w)
    with lib.enable_grad():
        out = fn(lib, *leaves)
        firsts = lib.grad((out * weight).sum(), leaves, create_graph=True)
        total = sum((g * lib.const(ui)).sum() for g, ui in zip(firsts, u))
        seconds = lib.grad(total, [*leaves, weight], allow_unused=True)
    return firsts, seconds


@pytest.mark.parametrize(("name", "fn", "inputs"), OPS, ids=_ids(OPS))
def test_second_derivatives_match_torch(name: str, fn: Callable, inputs: list) -> None:
    rng = rng_for(name + "/2")
    arrays = [make_array(rng, shape, domain) for shape, domain in inputs]
    with torch.no_grad():
        out_shape = tuple(fn(TORCH, *[torch.from_numpy(a) for a in arrays]).shape)
    w = rng.uniform(-1, 1, out_shape)
    u = [rng.uniform(-1, 1, a.shape) for a in arrays]

    torch_first, torch_second = second_derivatives(TORCH, fn, arrays, w, u)
    mg_first, mg_second = second_derivatives(MG, fn, arrays, w, u)

    for i, (got, want) in enumerate(zip(mg_first, torch_first)):
        assert got.requires_grad, f"{name}: grad {i} made with create_graph=True has no graph"
        assert_close(got, want, f"{name}: first derivative {i}")
    for i, (got, want) in enumerate(zip(mg_second, torch_second)):
        # For a linear op the second derivative by x is None (unused) in PyTorch; the
        # values are what matter here, so None counts as zeros on both sides.
        shape = (arrays + [w])[i].shape
        got = np.zeros(shape) if got is None else to_numpy(got)
        want = np.zeros(shape) if want is None else to_numpy(want)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"{name}: 2nd {i}")


# ----------------------------------------------------------------------------- composites


def mlp_loss(lib: SimpleNamespace, X, W1, b1, W2, b2, labels: np.ndarray):
    """A 2-layer MLP with cross-entropy written as -mean(log_softmax[rows, labels])."""
    hidden = (X @ W1 + b1).relu()
    logits = hidden @ W2 + b2
    log_probs = logits.log_softmax(dim=1)
    rows = lib.index(np.arange(len(labels)))
    return -log_probs[rows, lib.index(labels)].mean()


def attention(lib: SimpleNamespace, X, Wq, Wk, Wv, Wo):
    """One softmax attention head with a residual connection, reduced to a scalar."""
    q, k, v = X @ Wq, X @ Wk, X @ Wv
    scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    mixed = scores.softmax(-1) @ v
    out = (mixed @ Wo + X).tanh()
    return (out * out).mean() + out.max()


COMPOSITES = [
    (
        "mlp_cross_entropy",
        lambda lib, *xs: mlp_loss(lib, *xs, labels=np.array([0, 2, 1, 2, 0])),
        [((5, 4), G), ((4, 6), G), ((6,), G), ((6, 3), G), ((3,), G)],
    ),
    (
        "attention_block",
        attention,
        [((2, 3, 4), G), ((4, 4), G), ((4, 4), G), ((4, 4), G), ((4, 4), G)],
    ),
]


@pytest.mark.parametrize(("name", "fn", "inputs"), COMPOSITES, ids=_ids(COMPOSITES))
def test_composites_match_torch(name: str, fn: Callable, inputs: list) -> None:
    rng = rng_for(name)
    arrays = [make_array(rng, shape, domain) for shape, domain in inputs]
    torch_out, torch_grads = run_forward_backward(TORCH, fn, arrays, None)
    mg_out, mg_grads = run_forward_backward(MG, fn, arrays, None)
    assert mg_out.shape == ()
    assert_close(mg_out, torch_out, f"{name}: loss")
    for i, (got, want) in enumerate(zip(mg_grads, torch_grads)):
        assert_close(got, want, f"{name}: grad of parameter {i}")

    # Hessian-vector products through the whole block agree too.
    u = [rng.uniform(-1, 1, a.shape) for a in arrays]

    def hvp(lib: SimpleNamespace):
        leaves = [lib.leaf(a) for a in arrays]
        loss = fn(lib, *leaves)
        firsts = lib.grad(loss, leaves, create_graph=True)
        total = sum((g * lib.const(ui)).sum() for g, ui in zip(firsts, u))
        return lib.grad(total, leaves)

    for i, (got, want) in enumerate(zip(hvp(MG), hvp(TORCH))):
        assert_close(got, want, f"{name}: Hessian-vector product {i}")


def test_mlp_training_steps_match_torch() -> None:
    """Five SGD steps written by hand (no_grad update, grad reset) give the same weights."""
    rng = rng_for("mlp_training")
    arrays = [make_array(rng, shape, G) for shape in [(6, 4), (4, 5), (5,), (5, 3), (3,)]]
    labels = np.array([0, 1, 2, 2, 1, 0])
    results = {}
    for lib in (MG, TORCH):
        X, *params = [lib.leaf(a) for a in arrays]
        losses = []
        for _ in range(5):
            loss = mlp_loss(lib, X, *params, labels=labels)
            loss.backward()
            losses.append(float(loss.item()))
            no_grad = minigrad.no_grad if lib is MG else torch.no_grad
            with no_grad():
                for p in params:
                    p -= 0.5 * p.grad
            for p in params:
                p.grad = None
        results[lib.name] = (losses, [to_numpy(p) for p in params])
    np.testing.assert_allclose(results["minigrad"][0], results["torch"][0], rtol=RTOL)
    assert results["minigrad"][0][-1] < results["minigrad"][0][0]
    for got, want in zip(results["minigrad"][1], results["torch"][1]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- semantics


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_gradients_accumulate_over_two_backward_calls(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, -2.0, 3.0])
    (x * x).sum().backward()
    first = to_numpy(x.grad).copy()
    (x.exp() * 2.0).sum().backward()
    np.testing.assert_allclose(first, [2.0, -4.0, 6.0])
    np.testing.assert_allclose(to_numpy(x.grad), first + 2 * np.exp([1.0, -2.0, 3.0]))


def test_accumulation_matches_torch() -> None:
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf([[0.5, -1.0], [2.0, 0.25]])
        w = lib.leaf([1.5, -0.5])
        for _ in range(2):
            ((x * w).tanh() @ w).sum().backward()
        results[lib.name] = (to_numpy(x.grad), to_numpy(w.grad))
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_retain_graph(lib: SimpleNamespace) -> None:
    x = lib.leaf([0.5, 1.5])
    y = (x.exp() * x).sum()  # exp and mul both save values for backward
    y.backward(retain_graph=True)
    y.backward()  # allowed: the graph was kept
    expected = 2 * (np.exp([0.5, 1.5]) * (1 + np.array([0.5, 1.5])))
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=RTOL)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_backward_inputs_argument(lib: SimpleNamespace) -> None:
    a = lib.leaf([1.0, 2.0])
    b = lib.leaf([3.0, -1.0])
    hidden = a * b
    loss = (hidden * hidden).sum()
    loss.backward(inputs=[a], retain_graph=True)
    np.testing.assert_allclose(to_numpy(a.grad), 2 * np.array([3.0, -2.0]) * np.array([3.0, -1.0]))
    assert b.grad is None

    # A non-leaf in `inputs` gets its .grad filled, and nothing else changes.
    loss.backward(inputs=[hidden])
    np.testing.assert_allclose(to_numpy(hidden.grad), 2 * np.array([3.0, -2.0]))
    assert b.grad is None
    np.testing.assert_allclose(to_numpy(a.grad), [18.0, 4.0])


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_grad_allow_unused(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, 2.0])
    unused = lib.leaf([5.0])
    y = (x * x).sum()
    gx, gu = lib.grad(y, [x, unused], retain_graph=True, allow_unused=True)
    np.testing.assert_allclose(to_numpy(gx), [2.0, 4.0])
    assert gu is None
    assert x.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        lib.grad(y, [x, unused])


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_dim_returns_values_and_indices(keepdim: bool) -> None:
    data = np.array([[1.0, 5.0, -2.0], [7.0, 0.5, 3.0]])
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        pair = x.max(1, keepdim=keepdim)
        values, indices = pair  # unpacks like a tuple
        assert pair.values is values and pair.indices is indices
        assert pair[0] is values and pair[1] is indices
        assert values.requires_grad and not indices.requires_grad
        (values * lib.const([[2.0], [3.0]] if keepdim else [2.0, 3.0])).sum().backward()
        results[lib.name] = (to_numpy(values), to_numpy(indices), to_numpy(x.grad))
    (mv, mi, mgrad), (tv, ti, tgrad) = results["minigrad"], results["torch"]
    np.testing.assert_array_equal(mv, tv)
    assert mi.shape == ti.shape and mi.dtype == np.int64
    np.testing.assert_array_equal(mi, ti)
    np.testing.assert_array_equal(mgrad, tgrad)
    np.testing.assert_array_equal(mgrad, [[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]])


def test_max_without_dim_is_one_value() -> None:
    data = np.array([[1.0, 5.0], [7.0, 0.5]])
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        top = x.max()
        assert tuple(top.shape) == ()
        assert float(top.item()) == 7.0
        top.backward()
        np.testing.assert_array_equal(to_numpy(x.grad), [[0.0, 0.0], [1.0, 0.0]])


def test_squeeze_on_a_non_one_dim_is_a_no_op() -> None:
    data = np.arange(6.0).reshape(2, 1, 3)
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        for dim in (0, 2, -1, -3):
            same = x.squeeze(dim)
            assert tuple(same.shape) == (2, 1, 3)
            np.testing.assert_array_equal(to_numpy(same), data)
        assert tuple(x.squeeze(1).shape) == (2, 3)
        assert tuple(x.squeeze(-2).shape) == (2, 3)
        (x.squeeze(0) * lib.const(data)).sum().backward()
        np.testing.assert_array_equal(to_numpy(x.grad), data)


def test_expand_with_minus_one() -> None:
    data = np.array([[1.0], [2.0], [3.0]])
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        y = x.expand(-1, 4)
        assert tuple(y.shape) == (3, 4)
        z = x.expand(2, -1, 5)
        assert tuple(z.shape) == (2, 3, 5)
        np.testing.assert_array_equal(to_numpy(z)[1, :, 4], [1.0, 2.0, 3.0])
        (y.sum() + z.sum()).backward()
        np.testing.assert_array_equal(to_numpy(x.grad), np.full((3, 1), 4.0 + 10.0))


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_inplace_add_on_non_leaf_then_backward(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, 2.0, 3.0])
    z = lib.leaf([0.5, 0.5, 0.5])
    y = x * 2.0
    assert y._version == 0
    y += 1.0
    assert y._version == 1
    y += z * z
    assert y._version == 2
    np.testing.assert_allclose(to_numpy(y), [3.25, 5.25, 7.25])
    assert not y.is_leaf and y.requires_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.array([3.25, 5.25, 7.25]) * 2.0)
    np.testing.assert_allclose(to_numpy(z.grad), 2 * np.array([3.25, 5.25, 7.25]) * 2 * 0.5)


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_inplace_change_of_a_saved_value_raises(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, 2.0])
    y = x.exp()  # exp saves its output for backward
    y += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_inplace_on_a_leaf_that_requires_grad_raises(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad|leaf variable"):
        x += 1.0
    no_grad = minigrad.no_grad if lib is MG else torch.no_grad
    with no_grad():
        x += 1.0  # the optimizer's way
    np.testing.assert_array_equal(to_numpy(x), [2.0, 3.0])
    assert x.is_leaf and x.requires_grad


def test_inplace_matches_torch_on_a_chain() -> None:
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf([[0.5, -1.0], [2.0, 1.5]])
        h = x.tanh() * 3.0
        h -= x
        h *= x.sigmoid()
        h /= 2.0
        (h @ x).sum().backward()
        results[lib.name] = (to_numpy(h), to_numpy(x.grad))
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- custom Functions


def scaled_tanh_function(lib: SimpleNamespace):
    """A Function written in PyTorch's style, once per library, with the same body."""

    class ScaledTanh(lib.Function):
        @staticmethod
        def forward(ctx, x, w, scale):
            y = (x * w).tanh() * scale
            ctx.save_for_backward(x, w, y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, grad):
            x, w, y = ctx.saved_tensors
            inner = grad * ctx.scale * (1 - (y / ctx.scale) ** 2)
            grad_x = inner * w if ctx.needs_input_grad[0] else None
            grad_w = inner * x if ctx.needs_input_grad[1] else None
            return grad_x, grad_w, None

    return ScaledTanh


def split_max_function(lib: SimpleNamespace):
    """Two outputs, one non-differentiable (indices), and the setup_context style."""

    class MaxAndArgmax(lib.Function):
        @staticmethod
        def forward(x):
            values, indices = x.max(1)
            return values * 1.0, indices

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            _, indices = output
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.shape = tuple(x.shape)

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            (indices,) = ctx.saved_tensors
            one_hot = np.zeros(ctx.shape)
            one_hot[np.arange(ctx.shape[0]), to_numpy(indices)] = 1.0
            mask = Variable(one_hot) if isinstance(grad_values, Variable) else torch.tensor(one_hot)
            return grad_values.unsqueeze(1) * mask

    return MaxAndArgmax


def test_custom_function_in_torch_style_matches_torch() -> None:
    xs = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]])
    ws = np.array([0.7, -0.3, 1.1])
    results = {}
    for lib in (MG, TORCH):
        fn = scaled_tanh_function(lib)
        x, w = lib.leaf(xs), lib.leaf(ws)
        y = fn.apply(x, w, 2.5)
        assert y.grad_fn is not None and y.requires_grad
        (y * lib.const([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])).sum().backward()
        # second derivatives through the custom backward
        x2, w2 = lib.leaf(xs), lib.leaf(ws)
        (gx,) = lib.grad(fn.apply(x2, w2, 2.5).sum(), [x2], create_graph=True)
        hx, hw = lib.grad((gx * gx).sum(), [x2, w2])
        results[lib.name] = [to_numpy(v) for v in (y, x.grad, w.grad, gx, hx, hw)]
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(results["minigrad"][0], 2.5 * np.tanh(xs * ws), rtol=RTOL)


def test_custom_function_names_and_frozen_inputs_match_torch() -> None:
    for lib in (MG, TORCH):
        fn = scaled_tanh_function(lib)
        x, w = lib.leaf([1.0]), lib.leaf([2.0])
        y = fn.apply(x, w, 1.0)
        assert y.grad_fn.name() == "ScaledTanhBackward"
        frozen = lib.const([1.0])
        z = fn.apply(frozen, w, 1.0)
        z.sum().backward()
        assert float(to_numpy(w.grad)[0]) == pytest.approx(1 - np.tanh(2.0) ** 2)


def test_custom_function_with_non_differentiable_output_matches_torch() -> None:
    data = np.array([[1.0, 5.0, -2.0], [7.0, 0.5, 3.0]])
    results = {}
    for lib in (MG, TORCH):
        fn = split_max_function(lib)
        x = lib.leaf(data)
        values, indices = fn.apply(x)
        assert values.requires_grad and not indices.requires_grad
        (values * lib.const([2.0, 3.0])).sum().backward()
        results[lib.name] = (to_numpy(values), to_numpy(indices), to_numpy(x.grad))
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(results["minigrad"][2], [[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]])


# ----------------------------------------------------------------------------- edge semantics


def test_max_dim_with_ties_sends_the_gradient_to_the_returned_index() -> None:
    """x.max(dim) picks one index per slice; as in PyTorch its gradient goes to that index.

    (The full reduction x.max() has no index and splits the gradient between ties.)
    """
    data = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        values, indices = x.max(1)
        values.sum().backward()
        y = lib.leaf(data)
        y.max().backward()
        results[lib.name] = (to_numpy(indices), to_numpy(x.grad), to_numpy(y.grad))
    (mi, mgrad, mall), (ti, tgrad, tall) = results["minigrad"], results["torch"]
    np.testing.assert_array_equal(mi, ti)
    np.testing.assert_array_equal(mall, tall)
    np.testing.assert_array_equal(mall, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(mgrad, tgrad)
    np.testing.assert_array_equal(mgrad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_relu_and_abs_at_zero_use_pytorchs_subgradient() -> None:
    data = np.array([-1.0, 0.0, 2.0])
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        (x.relu() + x.abs()).sum().backward()
        np.testing.assert_array_equal(to_numpy(x.grad), [-1.0, 0.0, 2.0])


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("x**0", lambda lib, x: x**0),
        ("x**0.0", lambda lib, x: x**0.0),
        ("x**2", lambda lib, x: x**2),
        ("0**x", lambda lib, x: 0.0**x),
        ("x**y at 0", lambda lib, x: x ** (x + 2.0)),
    ],
    ids=["int_zero_exponent", "float_zero_exponent", "square", "zero_base", "variable_both"],
)
def test_pow_at_a_zero_base_matches_torch(name: str, fn: Callable) -> None:
    """d(x**0)/dx = 0 and d(0**y)/dy = 0 for y >= 0, as in PyTorch (not 0 * inf = nan)."""
    data = np.array([0.0, 1.5, 2.0])
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = fn(lib, x)
            out.sum().backward()
        results[lib.name] = (to_numpy(out), to_numpy(x.grad))
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name)
    assert np.isfinite(results["minigrad"][1]).all()


def test_softmax_with_a_minus_infinity_mask_matches_torch() -> None:
    data = np.array([[0.5, 1.0, 2.0, -0.5], [1.0, -1.0, 0.0, 3.0]])
    mask = np.array([[0.0, -np.inf, 0.0, 0.0], [-np.inf, 0.0, -np.inf, 0.0]])
    weights = np.array([[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 0.0, 0.5]])
    results = {}
    for lib in (MG, TORCH):
        x = lib.leaf(data)
        probs = (x + lib.const(mask)).softmax(-1)
        log_probs = (x + lib.const(mask)).log_softmax(-1)
        finite = lib.index(np.isfinite(mask))  # -inf entries of log_softmax left out
        loss = (probs * lib.const(weights)).sum() + (
            log_probs[finite] * lib.const(weights[np.isfinite(mask)])
        ).sum()
        loss.backward()
        results[lib.name] = (to_numpy(probs), to_numpy(log_probs), to_numpy(x.grad))
    for got, want in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert np.isfinite(results["minigrad"][2]).all()


def test_float32_stays_float32_like_torch() -> None:
    data = np.array([[0.5, -1.0], [2.0, 1.5]], dtype=np.float32)
    expressions = {
        "mul_float": lambda lib, x: x * 2.0,
        "rsub_float": lambda lib, x: 1.0 - x,
        "div_float": lambda lib, x: 1.0 / x,
        "pow_int": lambda lib, x: x**2,
        "sum": lambda lib, x: x.sum(),
        "mean_dim": lambda lib, x: x.mean(0),
        "softmax": lambda lib, x: x.softmax(-1),
        "sigmoid": lambda lib, x: x.sigmoid(),
        "matmul": lambda lib, x: x @ x,
    }
    for name, fn in expressions.items():
        x = Variable(data.copy(), requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        out, tout = fn(MG, x), fn(TORCH, t)
        assert out.dtype == np.float32, name
        assert tout.dtype == torch.float32, name
        np.testing.assert_allclose(out.data, to_numpy(tout), rtol=1e-6, err_msg=name)
        out.sum().backward()
        tout.sum().backward()
        assert x.grad.dtype == np.float32, name
        np.testing.assert_allclose(
            x.grad.data, to_numpy(t.grad), rtol=1e-5, atol=1e-6, err_msg=name
        )


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")
def test_create_graph_leaf_grads_are_independent_and_writable(lib: SimpleNamespace) -> None:
    """backward(create_graph=True) gives each leaf its own .grad, which zero_() can reset."""
    x = lib.leaf([1.0, 2.0])
    y = lib.leaf([3.0, 4.0])
    ((x + y) * lib.const([2.0, 3.0])).sum().backward(create_graph=True)
    assert x.grad is not y.grad
    no_grad = minigrad.no_grad if lib is MG else torch.no_grad
    with no_grad():
        x.grad.mul_(0.0)
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 0.0])
    np.testing.assert_array_equal(to_numpy(y.grad), [2.0, 3.0])

    z = lib.leaf([1.0, 2.0, 3.0])
    (z * z).sum().backward(create_graph=True)
    z.grad.zero_()  # e.g. an optimizer's zero_grad(set_to_none=False)
    (z * z).sum().backward()
    np.testing.assert_array_equal(to_numpy(z.grad), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_inplace_change_through_detach_is_seen_by_backward(lib: SimpleNamespace) -> None:
    x = lib.leaf([1.0, 2.0])
    y = x.exp()
    y.detach().add_(1.0)  # same data, same version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("lib", [MG, TORCH], ids=["minigrad", "torch"])
def test_retain_grad_and_implicit_gradient_rules(lib: SimpleNamespace) -> None:
    x = lib.leaf([[1.0, 2.0], [3.0, 4.0]])
    h = x * 3.0
    h.retain_grad()
    out = (h * h).sum(1)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        out.backward()
    out.backward(lib.const([1.0, -1.0]))
    np.testing.assert_allclose(to_numpy(h.grad), [[6.0, 12.0], [-18.0, -24.0]])
    np.testing.assert_allclose(to_numpy(x.grad), [[18.0, 36.0], [-54.0, -72.0]])
    assert not x.grad.requires_grad


# In-place changes through views. PyTorch rebases the history of the viewed Variable;
# minigrad may refuse (a RuntimeError that says so), but must never give a different answer.

WEIGHTS_2X2 = [[1.0, 2.0], [3.0, 4.0]]


def _view_mul(lib, x, z):
    y = x * 1.0
    y[0].mul_(3.0)
    return y


def _transpose_view_add(lib, x, z):
    y = x * 1.0
    v = y.transpose(0, 1)
    v += 1.0
    return y


def _base_changed_under_a_view(lib, x, z):
    y = x * 1.0
    v = y[1]
    y.mul_(2.0)
    return v


def _setitem_on_a_row_view(lib, x, z):
    y = x * 1.0
    v = y[0]
    v[1] = 0.0
    return y


def _setitem_on_a_reshape_view(lib, x, z):
    y = x * 1.0
    v = y.view(-1)
    v[1] = 0.0
    return y


def _setitem_variable_on_a_column_view(lib, x, z):
    y = x * 1.0
    v = y[:, 0]
    v[1] = z[0] * 2.0
    return y


def _zero_on_a_slice(lib, x, z):
    y = x * 2.0
    y[1:].zero_()
    return y


def _copy_into_a_row_view(lib, x, z):
    y = x * 1.0
    y[0].copy_(z.expand(2) * 1.0)
    return y


@pytest.mark.parametrize(
    "fn",
    [
        _view_mul,
        _transpose_view_add,
        _base_changed_under_a_view,
        _setitem_on_a_row_view,
        _setitem_on_a_reshape_view,
        _setitem_variable_on_a_column_view,
        _zero_on_a_slice,
        _copy_into_a_row_view,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_inplace_through_a_view_matches_torch_or_refuses(fn: Callable) -> None:
    def run(lib: SimpleNamespace) -> tuple:
        x = lib.leaf(WEIGHTS_2X2)
        z = lib.leaf([9.0])
        out = fn(lib, x, z)
        weights = lib.const(np.arange(1.0, 1.0 + np.prod(tuple(out.shape))).reshape(out.shape))
        (out * weights).sum().backward()
        return to_numpy(out), to_numpy(x.grad), None if z.grad is None else to_numpy(z.grad)

    want = run(TORCH)
    try:
        got = run(MG)
    except RuntimeError as error:
        assert "view" in str(error)
        return
    for name, g, w in zip(("value", "x.grad", "z.grad"), got, want):
        assert (g is None) == (w is None), f"{name}: minigrad {g!r}, torch {w!r}"
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)

"""The ops of minigrad/ops/linalg.py: t, mm, mv, bmm, addmm, dot, outer, einsum and norm.

Each case is written once as `fn(lib, *xs)`, with lib either minigrad or torch, and checked
by gradcheck in float64 (first and second order), in float32, and against PyTorch when it is
installed. einsum is also checked on shapes drawn by hypothesis (ellipsis and broadcasting),
norm at its edges (an all-zero input, ties of the max), and every op on cuda (Numba's
simulator) either matches the CPU or says it is not supported yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import Variable

RNG = np.random.default_rng(11)


def normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


MATRIX = normal(3, 4)
# Distinct |values|, none near 0: the norms' gradients are smooth there.
SPREAD = np.array([[1.0, -2.5, 0.7, 3.2], [-1.9, 0.4, 2.2, -0.9], [1.4, -3.6, 0.55, 2.8]])

# name: (fn(lib, *xs), input arrays)
CASES: dict[str, tuple[Callable, list]] = {
    "t-2d": (lambda lib, x: lib.t(x), [MATRIX]),
    "t-1d": (lambda lib, x: x.t() * 2, [normal(3)]),
    "t-0d": (lambda lib, x: lib.t(x) * 2, [np.array(1.5)]),
    "mm": (lambda lib, a, b: lib.mm(a, b), [normal(2, 3), normal(3, 4)]),
    "mm-method": (lambda lib, a, b: a.mm(b), [normal(2, 3), normal(3, 2)]),
    "mv": (lambda lib, a, v: lib.mv(a, v), [normal(2, 3), normal(3)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [normal(2, 3, 4), normal(2, 4, 2)]),
    "addmm": (lambda lib, x, a, b: lib.addmm(x, a, b), [normal(2, 4), normal(2, 3), normal(3, 4)]),
    "addmm-scaled": (
        lambda lib, x, a, b: lib.addmm(x, a, b, beta=0.5, alpha=-2.0),
        [normal(4), normal(2, 3), normal(3, 4)],
    ),
    "addmm-beta-0": (
        lambda lib, x, a, b: x.addmm(a, b, beta=0),
        [normal(2, 1), normal(2, 3), normal(3, 4)],
    ),
    "dot": (lambda lib, a, b: lib.dot(a, b), [normal(4), normal(4)]),
    "outer": (lambda lib, a, b: lib.outer(a, b), [normal(3), normal(2)]),
    "ger": (lambda lib, a, b: a.ger(b), [normal(3), normal(2)]),
    "einsum-matmul": (
        lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
        [normal(2, 3), normal(3, 4)],
    ),
    "einsum-implicit": (lambda lib, a, b: lib.einsum("ba,Ab", a, b), [normal(2, 3), normal(4, 2)]),
    "einsum-list": (lambda lib, a, b: lib.einsum("i,i->", [a, b]), [normal(3), normal(3)]),
    "einsum-trace": (lambda lib, a: lib.einsum("ii", a), [normal(3, 3)]),
    "einsum-diagonal": (lambda lib, a: lib.einsum("ii->i", a), [normal(3, 3)]),
    "einsum-repeated-3": (
        lambda lib, a, b: lib.einsum("iji,j->i", a, b),
        [normal(2, 3, 2), normal(3)],
    ),
    "einsum-summed-out": (lambda lib, a, b: lib.einsum("ij,k->i", a, b), [normal(2, 3), normal(4)]),
    "einsum-broadcast-1": (
        lambda lib, a, b: lib.einsum("ij,j->i", a, b),
        [normal(2, 3), normal(1)],
    ),
    "einsum-ellipsis": (
        lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
        [normal(2, 1, 3, 4), normal(5, 4, 2)],
    ),
    "einsum-ellipsis-summed": (
        lambda lib, a, b: lib.einsum("...i,...i->i", a, b),
        [normal(3, 4), normal(1, 4)],
    ),
    "einsum-three": (
        lambda lib, a, b, c: lib.einsum("ab,bc,cd->da", a, b, c),
        [normal(2, 3), normal(3, 4), normal(4, 2)],
    ),
    "einsum-attention": (
        lambda lib, q, k: lib.einsum("bhqd,bhkd->bhqk", q, k),
        [normal(2, 2, 3, 4), normal(2, 2, 5, 4)],
    ),
    "norm": (lambda lib, x: x.norm(), [SPREAD]),
    "norm-fro-dims": (lambda lib, x: lib.norm(x, "fro", dim=(0, 1)), [SPREAD]),
    "norm-dim": (lambda lib, x: x.norm(dim=1), [SPREAD]),
    "norm-1": (lambda lib, x: x.norm(1, dim=0, keepdim=True), [SPREAD]),
    "norm-3": (lambda lib, x: lib.norm(x, p=3, dim=-1), [SPREAD]),
    "norm-1.5": (lambda lib, x: x.norm(1.5), [SPREAD]),
    "norm-0.5": (lambda lib, x: x.norm(0.5, dim=(0,)), [SPREAD]),
    "norm-inf": (lambda lib, x: x.norm(math.inf, dim=1), [SPREAD]),
    "norm--inf": (lambda lib, x: x.norm(-math.inf), [SPREAD]),
    "norm-0": (lambda lib, x: x.norm(0, dim=1) * x.sum(), [SPREAD]),
}


def leaves(arrays: list, dtype: type = np.float64) -> list[Variable]:
    return [minigrad.tensor(np.asarray(a, dtype=dtype), requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_first_and_second_order(name: str) -> None:
    fn, arrays = CASES[name]
    xs = leaves(arrays)
    assert minigrad.gradcheck(lambda *v: fn(minigrad, *v), xs)
    with minigrad.no_grad():
        shape = fn(minigrad, *xs).shape
    weight = minigrad.tensor(RNG.uniform(-1, 1, shape), requires_grad=True)
    # Double backward: gradcheck of x -> d<fn(x), weight>/dx (and of the weight).
    assert minigrad.gradgradcheck(lambda *v: fn(minigrad, *v), xs, (weight,))


@pytest.mark.parametrize("name", list(CASES))
def test_float32_keeps_its_dtype_and_agrees_with_float64(name: str) -> None:
    fn, arrays = CASES[name]
    xs = leaves(arrays, np.float32)
    out32 = fn(minigrad, *xs)
    out64 = fn(minigrad, *leaves(arrays))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32.detach().numpy(), out64.detach().numpy(), rtol=1e-5, atol=1e-5)
    out32.sum().backward()
    assert all(x.grad.dtype == np.float32 for x in xs)


def values(item) -> np.ndarray | None:
    if item is None:
        return None
    return np.asarray(item.data) if isinstance(item, Variable) else item.detach().numpy(force=True)


def run(lib, fn: Callable, arrays: list, weight: np.ndarray, extra: list) -> tuple:
    """Forward, first gradients (with a graph) and second derivatives along `extra`."""
    xs = [lib.tensor(np.array(a), requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    firsts = lib.autograd.grad((out * lib.tensor(weight)).sum(), xs, create_graph=True)
    total = sum((g * lib.tensor(u)).sum() for g, u in zip(firsts, extra) if g.requires_grad)
    seconds = () if isinstance(total, int) else lib.autograd.grad(total, xs, allow_unused=True)
    return out, firsts, seconds


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_second_derivatives_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn, arrays = CASES[name]
    with minigrad.no_grad():
        shape = fn(minigrad, *[minigrad.tensor(a) for a in arrays]).shape
    weight = RNG.uniform(-1, 1, shape)
    extra = [RNG.uniform(-1, 1, np.shape(a)) for a in arrays]
    mine, theirs = run(minigrad, fn, arrays, weight, extra), run(torch, fn, arrays, weight, extra)
    assert tuple(mine[0].shape) == tuple(theirs[0].shape)
    np.testing.assert_allclose(values(mine[0]), values(theirs[0]), rtol=1e-12, atol=1e-14)
    for got, want in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(values(got), values(want), rtol=1e-12, atol=1e-14)
    for index, (got, want) in enumerate(zip(mine[2], theirs[2])):
        zeros = np.zeros(np.shape(arrays[index]))
        got = zeros if got is None else values(got)
        want = zeros if want is None else values(want)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


# ----------------------------------------------------------------------------- norm edges

NORM_EDGES = {
    "2-norm of zeros": (lambda x: x.norm(), np.zeros((2, 3))),
    "2-norm of a zero row": (lambda x: x.norm(dim=1), np.array([[0.0, 0.0], [3.0, -4.0]])),
    "3-norm of a zero row": (lambda x: x.norm(3, dim=1), np.array([[0.0, 0.0], [3.0, -4.0]])),
    "1-norm at zero": (lambda x: x.norm(1), np.array([0.0, -2.0, 1.0])),
    "0.5-norm at zero": (lambda x: x.norm(0.5), np.array([0.0, -2.0, 1.0])),
    "inf-norm with ties": (lambda x: x.norm(math.inf), np.array([3.0, -3.0, 1.0, 3.0])),
    "-inf-norm with ties": (lambda x: x.norm(-math.inf, dim=0), np.array([1.0, -1.0, 2.0])),
    "0-norm": (lambda x: x.norm(0) + x.sum(), np.array([0.0, 2.0, -1.0])),
    "negative p": (lambda x: x.norm(-1), np.array([0.5, -2.0, 1.0])),
    "keepdim everything": (lambda x: x.norm(keepdim=True), np.ones((2, 3))),
    "0-d": (lambda x: x.norm(), np.array(-2.0)),
}


@pytest.mark.parametrize("name", list(NORM_EDGES))
def test_norm_edges_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn, array = NORM_EDGES[name]
    x, tx = minigrad.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    out, tout = fn(x), fn(tx)
    out.sum().backward()
    tout.sum().backward()
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(values(out), values(tout), rtol=1e-14)
    want = np.zeros_like(array) if tx.grad is None else values(tx.grad)
    np.testing.assert_allclose(values(x.grad), want, rtol=1e-14)


def test_norm_of_a_matrix_is_frobenius_as_torch_norm_and_vector_norm() -> None:
    torch = pytest.importorskip("torch")
    m = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    frobenius = math.sqrt(30.0)
    tm = torch.tensor(m.numpy())
    for got in (m.norm(), minigrad.norm(m, "fro"), m.norm(p=2, dim=(0, 1)), m.norm(None)):
        assert got.item() == pytest.approx(frobenius, rel=1e-15)
    assert torch.linalg.vector_norm(tm).item() == pytest.approx(frobenius, rel=1e-15)
    assert tm.norm(p=2, dim=(0, 1)).item() == pytest.approx(frobenius, rel=1e-15)
    assert m.float().norm(dtype=minigrad.float64).dtype == np.float64  # widening only


def test_zero_norm_has_zero_gradient_and_finite_second_derivative() -> None:
    x = minigrad.zeros(3, requires_grad=True)
    (first,) = minigrad.grad(x.norm(), [x], create_graph=True)
    np.testing.assert_array_equal(first.detach().numpy(), np.zeros(3))
    (second,) = minigrad.grad(first.sum(), [x], allow_unused=True)
    assert second is None or np.isfinite(second.numpy()).all()


# ----------------------------------------------------------------------------- einsum shapes

EINSUM_SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@EINSUM_SETTINGS
@given(data=st.data())
def test_einsum_matches_numpy_and_gradchecks_on_drawn_shapes(data: st.DataObject) -> None:
    """A batched contraction with an ellipsis whose batch dimensions broadcast."""
    batch = data.draw(st.lists(st.integers(1, 3), max_size=2))
    i, j, k = (data.draw(st.integers(1, 3)) for _ in range(3))
    batch_b = [size if data.draw(st.booleans()) else 1 for size in batch]
    batch_b = batch_b[data.draw(st.integers(0, len(batch_b))) :]  # fewer dimensions, too
    a = RNG.normal(size=(*batch, i, j))
    b = RNG.normal(size=(*batch_b, j, k))
    equation = data.draw(st.sampled_from(["...ij,...jk->...ik", "...ij,...jk", "...ij,...jk->ik"]))
    left, right = leaves([a, b])
    out = minigrad.einsum(equation, left, right)
    full = np.einsum("...ij,...jk->...ik", a, b)
    want = full if "->..." in equation or "->" not in equation else full.reshape(-1, i, k).sum(0)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert minigrad.gradcheck(lambda x, y: minigrad.einsum(equation, x, y), [left, right])


# ----------------------------------------------------------------------------- errors


def test_bad_shapes_say_what_was_expected() -> None:
    v, m, b = minigrad.ones(3), minigrad.ones(2, 3), minigrad.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"t\(\) expects .* at most 2 dimensions; got shape"):
        b.t()
    with pytest.raises(
        RuntimeError, match=r"mm expects input to be a 2-D matrix; got shape \(3,\)"
    ):
        minigrad.mm(v, m)
    with pytest.raises(
        RuntimeError, match=r"mm: shapes \(2, 3\) and \(2, 3\) cannot be multiplied"
    ):
        minigrad.mm(m, m)
    with pytest.raises(RuntimeError, match=r"mv expects vec to be a 1-D vector"):
        minigrad.mv(m, m)
    with pytest.raises(RuntimeError, match=r"mv: a matrix of shape \(2, 3\) cannot multiply"):
        minigrad.mv(m, minigrad.ones(2))
    with pytest.raises(RuntimeError, match=r"bmm expects mat2 to be a 3-D batch"):
        minigrad.bmm(b, m)
    with pytest.raises(RuntimeError, match=r"bmm expects the same batch size.*does not broadcast"):
        minigrad.bmm(b, minigrad.ones(3, 4, 2))
    with pytest.raises(RuntimeError, match=r"addmm: input of shape \(3, 3\) cannot be broadcast"):
        minigrad.addmm(minigrad.ones(3, 3), m, minigrad.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"dot expects other to be a 1-D vector"):
        minigrad.dot(v, m)
    with pytest.raises(
        RuntimeError, match="dot expects two vectors of the same length; got lengths 3 and 2"
    ):
        minigrad.dot(v, minigrad.ones(2))
    with pytest.raises(RuntimeError, match=r"outer expects input to be a 1-D vector"):
        minigrad.outer(m, v)


def test_bad_einsum_and_norm_arguments_say_what_was_expected() -> None:
    m = minigrad.ones(2, 3)
    with pytest.raises(ValueError, match="subscripts for 2 operand.*but 1 operand"):
        minigrad.einsum("ij,jk", m)
    with pytest.raises(ValueError, match="letter 'j' has size 3 in operand 0 but size 4"):
        minigrad.einsum("ij,jk", m, minigrad.ones(4, 2))
    with pytest.raises(ValueError, match=r"operand 0 has shape \(2, 3\), which needs 2 letter"):
        minigrad.einsum("ijk", m)
    with pytest.raises(ValueError, match="subscripts are letters.*got '1'"):
        minigrad.einsum("i1", m)
    with pytest.raises(ValueError, match="output subscript 'i' multiple times"):
        minigrad.einsum("ij->ii", m)
    with pytest.raises(TypeError, match="argument 'equation' .* must be a string"):
        minigrad.einsum(1.5, m)
    with pytest.raises(ValueError, match="at least one operand"):
        minigrad.einsum("i")
    with pytest.raises(RuntimeError, match="norm expects floating-point values; got dtype int64"):
        minigrad.tensor([1, 2]).norm()
    with pytest.raises(NotImplementedError, match="nuclear norm"):
        m.norm("nuc")
    with pytest.raises(ValueError, match="p to be 'fro', 'nuc' or a number; got 'max'"):
        m.norm("max")
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        minigrad.ones(2, 2, 2).norm("fro", dim=(0, 1, 2))
    with pytest.raises(IndexError, match="Dimension out of range"):
        m.norm(dim=2)


# ----------------------------------------------------------------------------- cuda

CUDA_CASES = {
    "t": lambda x: x.t(),
    "mm": lambda x: minigrad.mm(x, x.t()),
    "mv": lambda x: minigrad.mv(x, x[0]),
    "bmm": lambda x: minigrad.bmm(x.unsqueeze(0), x.t().unsqueeze(0)),
    "addmm": lambda x: minigrad.addmm(x[0], x.t(), x, beta=0.5, alpha=2.0),
    "dot": lambda x: minigrad.dot(x[0], x[1]),
    "outer": lambda x: minigrad.outer(x[0], x[1]),
    "einsum": lambda x: minigrad.einsum("ij,kj->ik", x, x),
    "norm": lambda x: x.norm(),
    "norm-1": lambda x: x.norm(1, dim=1),
    "norm-3": lambda x: x.norm(3, dim=0),
    "norm-inf": lambda x: x.norm(math.inf),
}


@pytest.mark.parametrize("name", list(CUDA_CASES))
def test_on_cuda_matches_the_cpu_or_says_not_supported_yet(name: str) -> None:
    pytest.importorskip("numba")
    fn = CUDA_CASES[name]
    results = []
    for device in ("cpu", "cuda"):
        x = minigrad.tensor(SPREAD, device=device, requires_grad=True)
        try:
            out = fn(x)
        except NotImplementedError as error:
            assert device == "cuda"
            assert f"{name} is not supported on cuda yet" in str(error)
            return
        out.sum().backward()
        assert out.device == device and x.grad.device == device
        results.append((out.detach().numpy(), x.grad.numpy()))
    (cpu_out, cpu_grad), (gpu_out, gpu_grad) = results
    np.testing.assert_allclose(gpu_out, cpu_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gpu_grad, cpu_grad, rtol=1e-12, atol=1e-14)

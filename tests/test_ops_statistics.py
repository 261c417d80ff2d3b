"""min, amax, amin, argmax, argmin, all, any, var, std, prod, cumsum, logsumexp, sort,
argsort and topk: values, ties, zeros, gradients (gradcheck and gradgradcheck in float64,
PyTorch when installed) and error messages. Last, every op added with them (shape and
selection ones included) on a cuda Variable in Numba's simulator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad import Variable
from minigrad.autograd import gradgradcheck

SETTINGS = settings(max_examples=15, deadline=None)
rng = np.random.default_rng(2)


def leaf(data, dtype: type = np.float64) -> Variable:
    if isinstance(data, tuple):
        data = rng.standard_normal(data)
    return Variable(np.asarray(data, dtype=dtype), requires_grad=True)


def distinct(shape: tuple) -> np.ndarray:
    """Values at least 0.1 apart: no ties, even after a finite-difference step."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) / 10 - 1


def compare_with_torch(fn, *arrays: np.ndarray, first: bool = False) -> None:
    """fn(lib, *leaves) agrees with PyTorch's: values, dtype, and the gradients of
    sum(out * w). With first=True fn returns a (values, indices) pair; both are compared."""
    torch = pytest.importorskip("torch")
    ours = [Variable(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out, expected = fn(minigrad, *ours), fn(torch, *theirs)
    if first:
        np.testing.assert_array_equal(out[1].data, expected[1].numpy())
        assert out[1].dtype == np.int64
        out, expected = out[0], expected[0]
    assert out.shape == tuple(expected.shape)
    assert out.dtype == np.dtype(str(expected.dtype).removeprefix("torch."))
    # float32 sums may round differently; near zero only an absolute tolerance makes sense
    rtol = 1e-5 if out.dtype == np.float32 else 1e-10
    atol = 1e-6 if out.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)
    if not expected.requires_grad:
        assert not out.requires_grad
        return
    weights = rng.standard_normal(out.shape).astype(out.dtype)
    (out * Variable(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.data, reference.grad.numpy(), rtol=rtol, atol=rtol)


# --------------------------------------------------------------------------- min, max, amax, amin


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_min_like_max(dtype: type) -> None:
    x = leaf(distinct((3, 4)))
    assert minigrad.gradcheck(lambda v: v.min(0).values, [x])
    assert gradgradcheck(lambda v: v.min(1)[0] ** 2, [x])
    data = distinct((3, 4)).astype(dtype)
    compare_with_torch(lambda lib, v: v.min(), data)
    compare_with_torch(lambda lib, v: v.min(1), data, first=True)
    compare_with_torch(lambda lib, v: lib.min(v, -2, keepdim=True), data, first=True)


def test_min_and_max_ties_as_pytorch() -> None:
    """Over everything the gradient is split between ties; along a dim it all goes to the
    index returned (the first)."""
    data = np.array([[1.0, 0.0, 0.0], [2.0, 5.0, 5.0]])
    compare_with_torch(lambda lib, v: v.min(), data)
    compare_with_torch(lambda lib, v: v.max(), data)
    compare_with_torch(lambda lib, v: v.min(1), data, first=True)
    compare_with_torch(lambda lib, v: v.max(1), data, first=True)


def test_min_and_max_of_two_variables_are_elementwise() -> None:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    compare_with_torch(lambda lib, u, v: lib.max(u, v), a, b)
    compare_with_torch(lambda lib, u, v: lib.min(u, v), a, b)
    compare_with_torch(lambda lib, u, v: u.max(v), a, b)
    compare_with_torch(lambda lib, u, v: lib.min(u, other=v), a, b)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), data=st.data())
def test_amax_and_amin_over_dims_split_ties_evenly(shape: tuple, data) -> None:
    rank = len(shape)
    dims = tuple(
        data.draw(
            st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda d: d % rank)
        )
    )
    keepdim = data.draw(st.booleans())
    values = rng.integers(0, 2, size=shape).astype(np.float64)  # many ties
    compare_with_torch(lambda lib, v: v.amax(dims, keepdim), values)
    compare_with_torch(lambda lib, v: lib.amin(v, dim=dims, keepdim=keepdim), values)


def test_amax_amin_gradients_and_int_dims() -> None:
    x = leaf(distinct((2, 3, 2)))
    assert minigrad.gradcheck(lambda v: v.amax((0, 2)), [x])
    assert minigrad.gradcheck(lambda v: v.amin(-1, keepdim=True), [x])
    assert gradgradcheck(lambda v: v.amax(1) ** 2, [x])
    ties = leaf([[3.0, 3.0, 1.0], [3.0, 0.0, 0.0]])
    ties.amax().backward()
    np.testing.assert_allclose(ties.grad.data, [[1 / 3, 1 / 3, 0], [1 / 3, 0, 0]])


def test_reducing_an_empty_variable_says_so() -> None:
    with pytest.raises(ValueError, match=r"min of an empty Variable \(shape \(0,\)\)"):
        Variable(np.zeros(0)).min()
    with pytest.raises(IndexError, match="argmax.*numel\\(\\) == 0"):
        Variable(np.zeros(0)).argmax()


# --------------------------------------------------------------------------- argmax, argmin


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin_like_torch(dim, keepdim: bool) -> None:
    data = np.array([[1.0, 3.0, 3.0], [0.0, -2.0, -2.0]])  # ties: the first one wins
    x = leaf(data)
    assert not x.argmax(dim).requires_grad and x.argmin(dim).dtype == np.int64
    compare_with_torch(lambda lib, v: v.argmax(dim, keepdim), data)
    compare_with_torch(lambda lib, v: lib.argmin(v, dim=dim, keepdim=keepdim), data)


def test_argmax_of_0d() -> None:
    assert minigrad.tensor(2.0).argmax().item() == 0
    assert minigrad.tensor(2.0).argmin(0, keepdim=True).shape == ()


# --------------------------------------------------------------------------- all, any


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_and_any_like_torch(dim, keepdim: bool) -> None:
    data = np.array([[0.0, 1.0, np.nan], [0.0, 0.0, 0.0]])
    if dim is None:  # PyTorch has no keepdim without dim
        compare_with_torch(lambda lib, v: v.all(), data)
        compare_with_torch(lambda lib, v: lib.any(v), data)
        return
    compare_with_torch(lambda lib, v: v.all(dim, keepdim), data)
    compare_with_torch(lambda lib, v: lib.any(v, dim, keepdim=keepdim), data)


def test_all_and_any_types() -> None:
    x = leaf([1.0, 2.0])
    assert x.all().dtype == np.bool_ and not x.all().requires_grad
    assert Variable(np.array([1, 2], np.uint8)).all().dtype == np.uint8  # as PyTorch
    assert Variable(np.zeros((0, 2))).all().item() is True
    assert Variable(np.zeros((0, 2))).any().item() is False


# --------------------------------------------------------------------------- var, std


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=2, max_side=3), data=st.data())
def test_var_and_std_like_torch(shape: tuple, data) -> None:
    rank = max(len(shape), 1)
    dim = data.draw(st.one_of(st.none(), st.integers(-rank, rank - 1))) if shape else None
    keepdim = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1]))
    values = rng.standard_normal(shape) if shape else np.array(1.5)
    if not shape:
        correction = 0  # one element: correction 1 would divide by zero
    compare_with_torch(lambda lib, v: v.var(dim, keepdim=keepdim, correction=correction), values)
    compare_with_torch(
        lambda lib, v: lib.std(v, dim, keepdim=keepdim, correction=correction), values
    )


def test_var_and_std_spellings() -> None:
    data = rng.standard_normal((3, 4))
    for fn in [
        lambda lib, v: v.var(),
        lambda lib, v: v.var(False),
        lambda lib, v: v.var(1, False),
        lambda lib, v: v.var(1, True, True),
        lambda lib, v: v.var(dim=(0, 1), unbiased=False),
        lambda lib, v: v.std(dim=0, correction=2),
        lambda lib, v: lib.std(v, -1, keepdim=True),
        lambda lib, v: v.std(unbiased=True),
    ]:
        compare_with_torch(fn, data)
    compare_with_torch(lambda lib, v: v.var(1), data.astype(np.float32))


def test_var_and_std_gradients() -> None:
    x = leaf((3, 4))
    assert minigrad.gradcheck(lambda v: v.var(1), [x])
    assert minigrad.gradcheck(lambda v: v.std((0, 1), correction=0), [x])
    assert gradgradcheck(lambda v: v.var(0, keepdim=True), [x])
    assert gradgradcheck(lambda v: v.std(1), [x])


def test_var_errors_and_warning() -> None:
    x = leaf((3,))
    with pytest.raises(TypeError, match="either unbiased or correction, not both"):
        x.var(unbiased=True, correction=0)
    with pytest.raises(NotImplementedError, match="floating point.*int64.*double"):
        Variable([1, 2]).var()
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        single = leaf([2.0]).var()
    assert np.isnan(single.item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.std()  # no warning when there are enough elements


# --------------------------------------------------------------------------- prod


@pytest.mark.parametrize(
    "values",
    [
        [[1.5, -2.0, 0.5, 3.0], [0.25, 2.0, -1.0, 4.0]],  # no zero
        [[1.5, 0.0, 0.5, 3.0], [0.25, 2.0, -1.0, 0.0]],  # one zero per row
        [[0.0, 0.0, 0.5, 3.0], [0.0, 2.0, 0.0, 0.0]],  # several zeros
    ],
)
def test_prod_gradient_is_right_with_zeros(values) -> None:
    data = np.array(values)
    x = leaf(data)
    assert minigrad.gradcheck(lambda v: v.prod(), [x])
    assert minigrad.gradcheck(lambda v: v.prod(1), [x])
    assert gradgradcheck(lambda v: v.prod(0), [x])
    assert gradgradcheck(lambda v: v.prod(), [x])
    compare_with_torch(lambda lib, v: v.prod(), data)
    compare_with_torch(lambda lib, v: v.prod(1), data)
    compare_with_torch(lambda lib, v: lib.prod(v, 0, keepdim=True), data)
    compare_with_torch(lambda lib, v: v.prod(-1), data.astype(np.float32))


def test_prod_second_derivative_matches_torch_with_a_zero() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([2.0, 0.0, 3.0, -1.5, 0.5])
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    (g,) = minigrad.grad(x.prod(), [x], create_graph=True)
    (tg,) = torch.autograd.grad(t.prod(), [t], create_graph=True)
    np.testing.assert_allclose(g.data, tg.detach().numpy())
    (h,) = minigrad.grad((g * g).sum(), [x])
    (th,) = torch.autograd.grad((tg * tg).sum(), [t])
    np.testing.assert_allclose(h.data, th.numpy())


def test_prod_of_long_lines_and_dtypes() -> None:
    x = leaf(())
    assert minigrad.gradcheck(lambda v: v.prod(0) * v.prod(), [x])
    line = leaf(rng.uniform(0.9, 1.1, size=37))  # 37: not a power of two
    assert minigrad.gradcheck(lambda v: v.prod(), [line])
    compare_with_torch(lambda lib, v: v.prod(), line.data)
    compare_with_torch(lambda lib, v: v.prod(0), np.array([1, 2, 3], np.int32))
    compare_with_torch(lambda lib, v: v.prod(dtype=lib.float64), np.array([1, 2], np.int64))


# --------------------------------------------------------------------------- cumsum


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_like_torch(dim: int) -> None:
    x = leaf((3, 4))
    assert minigrad.gradcheck(lambda v: v.cumsum(dim), [x])
    assert gradgradcheck(lambda v: v.cumsum(dim) ** 2, [x])
    compare_with_torch(lambda lib, v: v.cumsum(dim), rng.standard_normal((3, 4)))
    compare_with_torch(
        lambda lib, v: lib.cumsum(v, dim), rng.standard_normal((3, 4)).astype(np.float32)
    )
    compare_with_torch(lambda lib, v: v.cumsum(dim), np.array([[1, 2], [3, 4]], np.int32))


def test_cumsum_0d_dtype_and_errors() -> None:
    with pytest.raises(IndexError, match="Dimension out of range"):
        leaf((2,)).cumsum(1)
    compare_with_torch(lambda lib, v: v.cumsum(0), np.array(2.5))
    compare_with_torch(lambda lib, v: v.cumsum(0, dtype=lib.float64), np.array([1, 2]))


# --------------------------------------------------------------------------- logsumexp


def test_logsumexp_is_stable_and_like_torch() -> None:
    data = np.array([[1000.0, 999.0, -5.0], [-1000.0, -1001.0, -999.5]])
    np.testing.assert_allclose(Variable(data).logsumexp(1).data, [1000.31326169, -998.89586939])
    # integers give floats: minigrad's default float64 (PyTorch's float32)
    np.testing.assert_allclose(
        Variable([1, 2, 3]).logsumexp(0).item(), np.log(np.exp([1, 2, 3]).sum())
    )
    inf = np.inf
    edge = Variable(np.array([[-inf, -inf], [inf, 1.0], [-inf, 0.0]])).logsumexp(1)
    np.testing.assert_array_equal(edge.data, [-inf, inf, 0.0])
    compare_with_torch(lambda lib, v: v.logsumexp(1), data)
    compare_with_torch(lambda lib, v: lib.logsumexp(v, (0, 1), keepdim=True), data)
    compare_with_torch(lambda lib, v: v.logsumexp(-1), data.astype(np.float32))


def test_logsumexp_gradient_is_softmax() -> None:
    x = leaf((3, 4))
    x.logsumexp(1).sum().backward()
    np.testing.assert_allclose(x.grad.data, x.softmax(1).data, rtol=1e-12)
    assert minigrad.gradcheck(lambda v: v.logsumexp((0, 1)), [x])
    assert gradgradcheck(lambda v: v.logsumexp(0), [x])


# --------------------------------------------------------------------------- sort, argsort, topk


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
def test_sort_like_torch_and_stable_on_ties(descending: bool, dim: int) -> None:
    ties = np.array([[2.0, 1.0, 2.0, 1.0], [0.0, 0.0, 3.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    compare_with_torch(
        lambda lib, v: lib.sort(v, dim=dim, descending=descending, stable=True), ties, first=True
    )
    compare_with_torch(lambda lib, v: v.sort(dim, descending), distinct((3, 4)), first=True)
    compare_with_torch(
        lambda lib, v: v.argsort(dim=dim, descending=descending, stable=True),
        np.array([[3, 1, 3], [2, 2, 0]]),
    )


@pytest.mark.parametrize("descending", [False, True])
def test_sort_puts_nan_where_torch_does(descending: bool) -> None:
    data = np.array([1.0, np.nan, 0.0, np.nan])
    compare_with_torch(lambda lib, v: v.sort(descending=descending, stable=True), data, first=True)


def test_sort_and_topk_gradients() -> None:
    x = leaf(distinct((3, 4)))
    assert minigrad.gradcheck(lambda v: v.sort(0).values, [x])
    assert gradgradcheck(lambda v: v.sort(1, descending=True)[0] ** 2, [x])
    assert minigrad.gradcheck(lambda v: v.topk(2).values, [x])
    assert gradgradcheck(lambda v: v.topk(2, 0, largest=False).values ** 2, [x])


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k, dim", [(1, 0), (2, -1), (4, 1), (0, 1)])
def test_topk_like_torch(k: int, dim: int, largest: bool) -> None:
    compare_with_torch(lambda lib, v: v.topk(k, dim, largest), distinct((3, 4)), first=True)
    compare_with_torch(
        lambda lib, v: lib.topk(v, k, dim=dim, largest=largest, sorted=True),
        distinct((3, 4)).astype(np.float32),
        first=True,
    )


def test_topk_and_sort_of_0d_and_errors() -> None:
    with pytest.raises(RuntimeError, match=r"k out of range.*0 <= k <= 3.*k=4"):
        leaf((3,)).topk(4)
    with pytest.raises(RuntimeError, match="k out of range"):
        leaf((3,)).topk(-1)
    compare_with_torch(lambda lib, v: v.sort(), np.array(2.0), first=True)
    compare_with_torch(lambda lib, v: v.topk(1), np.array(2.0), first=True)


# --------------------------------------------------------------------------- on cuda (simulator)

_A = np.array([[0.5, 1.5, 2.0, -1.0], [3.0, -2.0, 0.25, 1.0], [1.0, 2.5, -0.5, 0.75]])
_I = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])

NEW_OPS = {
    "expand_as": lambda a: a[:1].expand_as(a),
    "repeat": lambda a: a.repeat(2, 1, 2),
    "flatten": lambda a: a.flatten(),
    "unflatten": lambda a: a.unflatten(1, (2, 2)),
    "contiguous": lambda a: a.T.contiguous(),
    "narrow": lambda a: a.narrow(1, 1, 2),
    "chunk": lambda a: a.chunk(2, 1)[1],
    "split": lambda a: a.split([1, 3], 1)[1],
    "gather": lambda a: a.gather(0, Variable(_I)),
    "index_select": lambda a: a.index_select(1, Variable([3, 0, 0])),
    "scatter_add": lambda a: a.scatter_add(0, Variable(_I), a[:2] * 2),
    "index_add": lambda a: a.index_add(0, Variable([2, 0]), a[:2] * 2),
    "min": lambda a: a.min(),
    "min-dim": lambda a: a.min(1).values,
    "amax": lambda a: a.amax(1),
    "amin": lambda a: a.amin((0, 1)),
    "argmax": lambda a: a.argmax(1),
    "argmin": lambda a: a.argmin(),
    "all": lambda a: a.all(1),
    "any": lambda a: a.any(),
    "var": lambda a: a.var(1),
    "std": lambda a: a.std(),
    "prod": lambda a: a.prod(1),
    "cumsum": lambda a: a.cumsum(1),
    "logsumexp": lambda a: a.logsumexp(1),
    "sort": lambda a: a.sort(1).values,
    "topk": lambda a: a.topk(2).values,
}


# The kernels have no gather, scatter, sort or scan yet: these say so instead of answering.
CPU_ONLY = {"gather", "index_select", "scatter_add", "index_add", "prod", "cumsum", "sort", "topk"}


def _run(op, device: str) -> tuple:
    a = Variable(_A.copy(), requires_grad=True)
    out = op(a.to(device))
    assert out.device == device
    if out.requires_grad:
        (out * out).sum().backward()
    return out.detach().cpu().numpy(), None if a.grad is None else a.grad.numpy()


@pytest.mark.parametrize("name", list(NEW_OPS))
def test_each_new_op_on_cuda_matches_the_cpu_or_says_not_yet(name: str) -> None:
    pytest.importorskip("numba")
    value_cpu, grad_cpu = _run(NEW_OPS[name], "cpu")
    if name in CPU_ONLY:
        with pytest.raises(NotImplementedError, match=f"^{name} is not supported on cuda yet"):
            _run(NEW_OPS[name], "cuda")
        return
    value_gpu, grad_gpu = _run(NEW_OPS[name], "cuda")
    np.testing.assert_allclose(value_gpu, value_cpu, rtol=1e-12)
    assert (grad_gpu is None) == (grad_cpu is None)
    if grad_cpu is not None:
        np.testing.assert_allclose(grad_gpu, grad_cpu, rtol=1e-12, atol=1e-14)

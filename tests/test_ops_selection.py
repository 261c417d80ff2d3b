"""narrow, split, chunk, gather, index_select, scatter_add and index_add: values, gradients
(gradcheck and gradgradcheck in float64, PyTorch when installed) and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import Variable
from minigrad.autograd import gradgradcheck

SETTINGS = settings(max_examples=15, deadline=None)
rng = np.random.default_rng(1)


def leaf(shape: tuple, dtype: type = np.float64) -> Variable:
    return Variable(rng.standard_normal(shape).astype(dtype), requires_grad=True)


def index(values) -> Variable:
    return Variable(np.asarray(values, dtype=np.int64))


def random_index(shape: tuple, high: int) -> Variable:
    return index(rng.integers(0, high, size=shape))  # repeats included


def compare_with_torch(fn, *arrays: np.ndarray) -> None:
    """fn(lib, *leaves): values and the gradients of sum(out * w) agree with PyTorch's."""
    torch = pytest.importorskip("torch")
    ours = [Variable(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = fn(minigrad, *ours), fn(torch, *theirs)
    assert out.shape == tuple(expected.shape)
    assert out.dtype == np.dtype(str(expected.dtype).removeprefix("torch."))
    # float32 sums may round differently; near zero only an absolute tolerance makes sense
    rtol = 1e-5 if out.dtype == np.float32 else 1e-10
    atol = 1e-6 if out.dtype == np.float32 else 0.0
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)
    weights = rng.standard_normal(out.shape).astype(out.dtype)
    (out * Variable(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.data, reference.grad.numpy(), rtol=rtol, atol=rtol)


# --------------------------------------------------------------------------- narrow, split, chunk


def test_narrow_is_a_view_with_the_gradient_of_a_slice() -> None:
    x = leaf((3, 5))
    y = x.narrow(1, 1, 3)
    np.testing.assert_array_equal(y.data, x.data[:, 1:4])
    assert np.shares_memory(y.data, x.data)
    assert minigrad.narrow(x, -1, -2, 2).shape == (3, 2)  # negative dim and start
    assert minigrad.gradcheck(lambda v: v.narrow(0, 1, 2), [x])
    compare_with_torch(lambda lib, v: v.narrow(-1, -3, 2), rng.standard_normal((2, 4)))


@pytest.mark.parametrize(
    "start, length, error, message",
    [
        (4, 2, RuntimeError, r"start \(4\) \+ length \(2\) exceeds dimension size \(5\)"),
        (-6, 1, IndexError, r"range of \[-5, 5\], but got -6"),
        (0, -1, RuntimeError, "length must be non-negative"),
        (1.5, 1, TypeError, "argument 'start' .* must be an int"),
    ],
)
def test_narrow_errors(start, length, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        leaf((5,)).narrow(0, start, length)


@SETTINGS
@given(size=st.integers(0, 9), split_size=st.integers(1, 4), chunks=st.integers(1, 5))
def test_split_and_chunk_cut_like_torch(size: int, split_size: int, chunks: int) -> None:
    torch = pytest.importorskip("torch")
    data = rng.standard_normal((2, size))
    for ours, theirs in [
        (Variable(data).split(split_size, 1), torch.tensor(data).split(split_size, 1)),
        (minigrad.chunk(Variable(data), chunks, -1), torch.chunk(torch.tensor(data), chunks, -1)),
    ]:
        assert [p.shape for p in ours] == [tuple(p.shape) for p in theirs]
        for mine, reference in zip(ours, theirs):
            np.testing.assert_array_equal(mine.data, reference.numpy())


def test_split_with_sizes_gives_views_and_gradients() -> None:
    x = leaf((6, 2))
    pieces = minigrad.split(x, [1, 0, 5])
    assert isinstance(pieces, tuple) and [p.shape for p in pieces] == [(1, 2), (0, 2), (5, 2)]
    assert all(np.shares_memory(p.data, x.data) for p in pieces if p.numel())
    assert minigrad.gradcheck(lambda v: v.split([2, 4])[1] * v.chunk(3)[0].sum(), [x])
    compare_with_torch(
        lambda lib, v: lib.cat([p * (i + 1) for i, p in enumerate(v.split([2, 1, 3]))]),
        rng.standard_normal((6, 2)),
    )


def test_split_and_chunk_errors() -> None:
    x = leaf((3,))
    with pytest.raises(RuntimeError, match=r"sum exactly to 3.*split_sizes=\[1, 1\]"):
        x.split([1, 1])
    with pytest.raises(RuntimeError, match="non-negative, but got split_size=-1"):
        x.split(-1)
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0"):
        x.split(0)
    with pytest.raises(RuntimeError, match="greater than 0, got: 0"):
        x.chunk(0)
    with pytest.raises(RuntimeError, match="0-dim"):
        leaf(()).split(1)


# --------------------------------------------------------------------------- gather, scatter_add


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_torch(dim: int) -> None:
    shape = (3, 4)
    idx = rng.integers(0, shape[dim], size=(2, 3))
    compare_with_torch(lambda lib, v: v.gather(dim, lib.tensor(idx)), rng.standard_normal(shape))
    compare_with_torch(
        lambda lib, v: lib.gather(v, dim, lib.tensor(idx)),
        rng.standard_normal(shape).astype(np.float32),
    )


def test_gather_and_scatter_add_gradients() -> None:
    x, src = leaf((3, 4)), leaf((3, 5))
    idx = random_index((2, 3), 3)
    assert minigrad.gradcheck(lambda v: v.gather(0, idx), [x])
    wide = random_index((3, 6), 4)
    assert gradgradcheck(lambda v: v.gather(1, wide) ** 2, [x])
    # src may be larger than index: the part index does not reach gets a zero gradient
    assert minigrad.gradcheck(lambda a, b: a.scatter_add(0, idx, b), [x, src])
    square = random_index((3, 4), 4)
    assert gradgradcheck(lambda a, b: a.scatter_add(1, square, b**2), [x, src])


@pytest.mark.parametrize("dim", [0, -1])
def test_scatter_add_matches_torch_with_repeated_indices(dim: int) -> None:
    idx = np.array([[0, 0, 2], [1, 0, 0]])  # repeats add up
    compare_with_torch(
        lambda lib, v, s: v.scatter_add(dim, lib.tensor(idx), s),
        rng.standard_normal((3, 3)),
        rng.standard_normal((2, 3)),
    )
    compare_with_torch(
        lambda lib, v, s: lib.scatter_add(v * 1, dim, lib.tensor(idx), s * 2),
        rng.standard_normal((3, 3)).astype(np.float32),
        rng.standard_normal((2, 3)).astype(np.float32),
    )


def test_scatter_add_in_place_and_0d() -> None:
    x = leaf((3,))
    y = x * 1
    y.scatter_add_(0, index([2, 2]), Variable(np.ones(2)))
    np.testing.assert_allclose(y.data, x.data + [0, 0, 2])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.ones(3))
    scalar = leaf(())
    assert scalar.gather(0, index(0)).item() == scalar.item()
    assert minigrad.gradcheck(lambda v: v.gather(0, index(0)) * 3, [scalar])


@pytest.mark.parametrize(
    "fn, error, message",
    [
        (lambda x: x.gather(0, Variable([[1.0]])), RuntimeError, "integers.*float64.*long"),
        (lambda x: x.gather(0, np.array([[True]])), RuntimeError, "integers.*bool"),
        # A list or a number is no index, as in PyTorch (ops/tooling/arguments.py names it).
        (lambda x: x.gather(0, [[True]]), TypeError, "argument 'index' .* got list"),
        (lambda x: x.gather(0, 1), TypeError, "argument 'index' .* must be a Variable"),
        (lambda x: x.gather(0, index([[3]])), RuntimeError, "index 3 is out of bounds.*size 3"),
        (lambda x: x.gather(1, index([[-1]])), RuntimeError, "index -1 is out of bounds"),
        (lambda x: x.gather(0, index([1])), RuntimeError, "same number of dimensions"),
        (lambda x: x.gather(0, index([[0] * 5])), RuntimeError, r"dimension 1.*\[1, 5\].*\[3, 4\]"),
        (lambda x: x.gather(2, index([[0]])), IndexError, "Dimension out of range"),
        (
            lambda x: x.scatter_add(0, index([[0, 1]]), Variable(np.ones((1, 1)))),
            RuntimeError,
            r"no larger than src \[1, 1\]",
        ),
        (
            lambda x: x.scatter_add(0, index([[0]]), Variable(np.ones((1, 1), np.float32))),
            RuntimeError,
            "dtype of self.*float64.*float32",
        ),
    ],
)
def test_gather_and_scatter_add_errors(fn, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        fn(leaf((3, 4)))


# --------------------------------------------------------------------- index_select, index_add


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_matches_torch(dim: int) -> None:
    idx = np.array([2, 0, 2, 1])
    compare_with_torch(
        lambda lib, v: v.index_select(dim, lib.tensor(idx)), rng.standard_normal((3, 3, 3))
    )
    compare_with_torch(
        lambda lib, v: lib.index_select(v, 0, lib.tensor(idx)),
        rng.standard_normal((3, 2)).astype(np.float32),
    )


@pytest.mark.parametrize("alpha", [1, 2.5])
def test_index_add_matches_torch(alpha: float) -> None:
    idx = np.array([1, 1, 0])
    compare_with_torch(
        lambda lib, v, s: v.index_add(1, lib.tensor(idx), s, alpha=alpha),
        rng.standard_normal((2, 4)),
        rng.standard_normal((2, 3)),
    )
    compare_with_torch(
        lambda lib, v, s: lib.index_add(v, -1, lib.tensor(idx), s * 1, alpha=alpha),
        rng.standard_normal((2, 4)).astype(np.float32),
        rng.standard_normal((2, 3)).astype(np.float32),
    )


def test_index_select_and_index_add_gradients() -> None:
    x, source = leaf((4, 3)), leaf((5, 3))
    idx = random_index((5,), 4)
    assert minigrad.gradcheck(lambda v: v.index_select(0, idx), [x])
    assert gradgradcheck(lambda v: v.index_select(1, index([2, 2, 0])) ** 2, [x])
    assert minigrad.gradcheck(lambda a, b: a.index_add(0, idx, b, alpha=-2), [x, source])
    assert gradgradcheck(lambda a, b: a.index_add(0, idx, b**2) ** 2, [x, source])
    scalar = leaf(())
    assert scalar.index_select(0, index([0])).shape == ()  # as PyTorch
    assert leaf((3,)).index_select(0, index(1)).shape == (1,)


def test_index_add_in_place_keeps_the_graph() -> None:
    x, source = leaf((3, 2)), leaf((2, 2))
    y = x * 2
    result = y.index_add_(0, index([0, 2]), source, alpha=3)
    assert result is y
    added = np.stack([source.data[0], np.zeros(2), source.data[1]])
    np.testing.assert_allclose(y.data, 2 * x.data + 3 * added)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.full((3, 2), 2.0))
    np.testing.assert_array_equal(source.grad.data, np.full((2, 2), 3.0))


@pytest.mark.parametrize(
    "fn, error, message",
    [
        (lambda x: x.index_select(0, index([3])), IndexError, "index 3 is out of bounds.*size 3"),
        (lambda x: x.index_select(0, index([-1])), IndexError, "negative ones are not allowed"),
        (lambda x: x.index_select(0, index([[0]])), IndexError, r"vector.*\(1, 1\)"),
        (lambda x: x.index_select(0, Variable([0.0])), RuntimeError, "integers.*float64"),
        (
            lambda x: x.index_add(0, index([0, 1]), Variable(np.ones((3, 2)))),
            RuntimeError,
            r"Number of indices \(2\) should be equal to source.size\(dim\) \(3\)",
        ),
        (
            lambda x: x.index_add(0, index([0]), Variable(np.ones((1, 3)))),
            RuntimeError,
            r"shape must match.*\[3, 2\].*\[1, 3\]",
        ),
        (
            lambda x: x.index_add(0, index([5]), Variable(np.ones((1, 2)))),
            IndexError,
            "index 5 is out of bounds",
        ),
        (
            lambda x: x.index_add(0, index([0]), Variable(np.ones((1, 2))), alpha=Variable(2.0)),
            TypeError,
            "alpha must be a number",
        ),
    ],
)
def test_index_select_and_index_add_errors(fn, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        fn(leaf((3, 2)))

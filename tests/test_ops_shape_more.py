"""expand_as, repeat, flatten, unflatten, contiguous, is_contiguous and element_size:
values, gradients (gradcheck in float64, PyTorch when installed) and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad import Variable

SETTINGS = settings(max_examples=15, deadline=None)
rng = np.random.default_rng(0)


def leaf(shape: tuple, dtype: type = np.float64) -> Variable:
    return Variable(rng.standard_normal(shape).astype(dtype), requires_grad=True)


def torch_pair(x: Variable):
    """The same values as a torch leaf (float64 stays float64)."""
    torch = pytest.importorskip("torch")
    return torch.tensor(x.data, requires_grad=x.requires_grad)


def check_against_torch(fn, x: Variable) -> None:
    """fn(x) and the gradient of sum(fn(x) * w) agree with PyTorch's."""
    t = torch_pair(x)
    ours, theirs = fn(x), fn(t)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    weights = rng.standard_normal(ours.shape)
    (ours * Variable(weights)).sum().backward()
    (theirs * pytest.importorskip("torch").tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- expand_as


def test_expand_as_takes_the_other_shape_and_sums_the_gradient_back() -> None:
    x, other = leaf((3, 1)), Variable(np.zeros((2, 3, 4)))
    y = x.expand_as(other)
    assert y.shape == (2, 3, 4)
    assert minigrad.gradcheck(lambda v: v.expand_as(other), [x])
    torch = pytest.importorskip("torch")
    target = torch.zeros(2, 3, 4, dtype=torch.float64)
    check_against_torch(lambda v: v.expand_as(other if isinstance(v, Variable) else target), x)


def test_expand_as_says_which_sizes_do_not_match() -> None:
    with pytest.raises(RuntimeError, match=r"expanded size.*\(4\).*existing size \(3\)"):
        leaf((3,)).expand_as(Variable(np.zeros((2, 4))))


# --------------------------------------------------------------------------- repeat


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
    extra=st.integers(0, 2),
    data=st.data(),
)
def test_repeat_matches_numpy_tile_and_torch(shape: tuple, extra: int, data) -> None:
    length = max(len(shape) + extra, 1)  # PyTorch wants at least one count
    counts = tuple(data.draw(st.integers(0, 3)) for _ in range(length))
    x = leaf(shape)
    y = x.repeat(*counts)
    np.testing.assert_array_equal(y.data, np.tile(x.data, counts))
    assert y.data.flags.writeable  # a copy, not a read-only view
    check_against_torch(lambda v: v.repeat(*counts), leaf(shape))


def test_repeat_gradient_sums_over_the_tiles() -> None:
    x = leaf((2, 3))
    assert minigrad.gradcheck(lambda v: v.repeat(2, 1, 2), [x])
    assert minigrad.autograd.gradgradcheck(lambda v: v.repeat(3, 2) ** 2, [x])
    x.repeat((2, 2)).sum().backward()  # a tuple works too
    np.testing.assert_array_equal(x.grad.data, np.full((2, 3), 4.0))
    assert leaf((2,), np.float32).repeat(3).dtype == np.float32


def test_repeat_errors_say_what_was_expected() -> None:
    with pytest.raises(
        RuntimeError, match=r"dims \(1\) can not be smaller.*\(2, shape.*x.repeat\(1, 1\)"
    ):
        leaf((2, 3)).repeat(2)
    with pytest.raises(RuntimeError, match="0 or more; got"):
        leaf((2,)).repeat(-1)


# --------------------------------------------------------------------------- flatten


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3), data=st.data())
def test_flatten_matches_torch_for_every_start_and_end(shape: tuple, data) -> None:
    torch = pytest.importorskip("torch")
    rank = max(len(shape), 1)
    start = data.draw(st.integers(-rank, rank - 1))
    end = data.draw(st.integers(-rank, rank - 1))
    x = leaf(shape)
    if start % rank > end % rank:
        with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
            x.flatten(start, end)
        return
    assert minigrad.flatten(x, start, end).shape == tuple(
        torch.flatten(torch.tensor(x.data), start, end).shape
    )
    check_against_torch(lambda v: v.flatten(start, end), x)


def test_flatten_defaults_0d_and_bad_dims() -> None:
    x = leaf((2, 3, 4))
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12)
    assert x.flatten(end_dim=-2).shape == (6, 4)
    assert leaf(()).flatten().shape == (1,)
    assert minigrad.gradcheck(lambda v: v.flatten(0, 1), [x])
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3"):
        x.flatten(3)


# --------------------------------------------------------------------------- unflatten


def test_unflatten_splits_one_dimension() -> None:
    x = leaf((2, 12))
    assert x.unflatten(1, (3, 4)).shape == (2, 3, 4)
    assert x.unflatten(-1, (2, -1, 3)).shape == (2, 2, 2, 3)
    assert minigrad.unflatten(x, 0, [2, 1]).shape == (2, 1, 12)
    assert minigrad.gradcheck(lambda v: v.unflatten(1, (4, 3)), [x])
    check_against_torch(lambda v: v.unflatten(1, (2, -1)), leaf((2, 12)))


@pytest.mark.parametrize("sizes", [(5, 2), (-1, -1), (5, -1)])
def test_unflatten_says_the_sizes_must_multiply_to_the_dimension(sizes: tuple) -> None:
    with pytest.raises(RuntimeError, match=r"don't multiply up to the size of dim 1 \(12\)"):
        leaf((2, 12)).unflatten(1, sizes)


def test_unflatten_needs_sizes() -> None:
    with pytest.raises(RuntimeError, match="sizes must be non-empty"):  # PyTorch's words
        leaf((2, 12)).unflatten(1, ())


def test_unflatten_of_a_0d_variable() -> None:
    with pytest.raises(RuntimeError, match="0-d"):
        leaf(()).unflatten(0, (1,))


# --------------------------------------------------------------------------- contiguous


def test_is_contiguous_matches_torch_for_views() -> None:
    torch = pytest.importorskip("torch")
    data = rng.standard_normal((3, 4))
    views = {
        "itself": lambda v: v,
        "transpose": lambda v: v.transpose(0, 1),
        "rows": lambda v: v[1:],
        "columns": lambda v: v[:, 1:3],
        "step": lambda v: v[::2],
        "expand": lambda v: v[:1].expand(3, 4),
        "narrow": lambda v: v.narrow(0, 1, 1),
        "flatten of transpose": lambda v: v.T.flatten(),
    }
    for name, view in views.items():
        ours, theirs = view(Variable(data)), view(torch.tensor(data))
        assert ours.is_contiguous() == theirs.is_contiguous(), name
        assert ours.contiguous().is_contiguous(), name


def test_contiguous_returns_itself_or_a_copy_in_the_graph() -> None:
    x = leaf((2, 3))
    assert x.contiguous() is x
    y = x.T.contiguous()
    assert y.is_contiguous() and not np.shares_memory(y.data, x.data)
    np.testing.assert_array_equal(y.data, x.data.T)
    assert minigrad.gradcheck(lambda v: v.T.contiguous() * 2, [x])


@pytest.mark.parametrize(
    "dtype, size",
    [
        (np.float64, 8),
        (np.float32, 4),
        (np.float16, 2),
        (np.int64, 8),
        (np.int32, 4),
        (np.bool_, 1),
    ],
)
def test_element_size_is_bytes_per_element(dtype: type, size: int) -> None:
    x = Variable(np.zeros(3, dtype=dtype))
    assert x.element_size() == size
    torch = pytest.importorskip("torch")
    assert torch.zeros(3, dtype=getattr(torch, np.dtype(dtype).name)).element_size() == size


def test_float32_stays_float32() -> None:
    x = leaf((2, 3), np.float32)
    for y in (
        x.expand_as(Variable(np.zeros((4, 2, 3)))),
        x.repeat(2, 2),
        x.flatten(),
        x.unflatten(1, (3, 1)),
        x.T.contiguous(),
    ):
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad.dtype == np.float32
        x.grad = None

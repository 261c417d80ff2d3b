"""The tensor ops a fresh reviewer's PyTorch material needed (issue 35): % / remainder /
fmod, random_, unfold, repeat_interleave, index_copy, index_fill, put, masked_scatter,
take_along_dim, diff, unique, bucketize, cdist, lerp and scatter(reduce=...).

Values are compared with PyTorch where it is installed (the `real_torch` fixture, float64),
gradients are checked with minigrad's gradcheck in float64, and the errors (class and
message) are asserted without PyTorch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad import Variable
from minigrad.autograd import gradcheck


def leaf(values) -> Variable:
    return Variable(np.asarray(values, dtype=np.float64), requires_grad=True)


def both(torch, values, dtype=np.float64):
    """The same numbers as a minigrad Variable and a torch tensor."""
    array = np.asarray(values, dtype=dtype)
    return minigrad.tensor(array.copy()), torch.tensor(array.copy())


def assert_same(ours, theirs) -> None:
    expected = theirs.detach().numpy()
    got = ours.detach().numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


RNG = np.random.default_rng(35)


# --------------------------------------------------------------------------- % and fmod


def test_remainder_takes_the_divisors_sign_and_fmod_the_dividends():
    x = minigrad.tensor([5.0, -5.0, 3.5, -3.5])
    np.testing.assert_array_equal((x % -2).numpy(), [-1.0, -1.0, -0.5, -1.5])
    np.testing.assert_array_equal(minigrad.remainder(x, 2).numpy(), [1.0, 1.0, 1.5, 0.5])
    np.testing.assert_array_equal(minigrad.fmod(x, -2).numpy(), [1.0, -1.0, 1.5, -1.5])
    ints = minigrad.arange(-4, 5)
    assert ((ints % 3).numpy() == np.arange(-4, 5) % 3).all()
    assert (ints % 3).dtype == minigrad.int64
    assert (5 % minigrad.tensor([2, -3])).tolist() == [1, -1]


def test_mod_in_place_and_the_method_spellings():
    x = minigrad.tensor([7, -7])
    x %= 4
    assert x.tolist() == [3, 1]
    y = minigrad.tensor([7.0, -7.0])
    assert y.fmod_(4).tolist() == [3.0, -3.0]
    assert minigrad.tensor([7.0]).remainder(-4).tolist() == [-1.0]


@pytest.mark.parametrize("op", ["remainder", "fmod"])
@pytest.mark.parametrize("divisor", [2, -2.5, 0.75])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_remainder_and_fmod_match_pytorch(real_torch, op, divisor, dtype):
    values = RNG.integers(-20, 20, 12) if dtype == np.int64 else RNG.normal(0, 6, 12)
    ours, theirs = both(real_torch, values, dtype)
    # int64 % 2.5 is in the default float dtype: float64 in both libraries here.
    default = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    try:
        _compare_remainders(real_torch, op, divisor, dtype, ours, theirs)
    finally:
        real_torch.set_default_dtype(default)


def _compare_remainders(real_torch, op, divisor, dtype, ours, theirs):
    tensor_divisor = RNG.choice([-3.0, -1.5, 2.0, 4.0], 12).astype(dtype)
    for d_ours, d_theirs in ((divisor, divisor),
                             (minigrad.tensor(tensor_divisor), real_torch.tensor(tensor_divisor))):
        got = getattr(minigrad, op)(ours, d_ours)
        expected = getattr(real_torch, op)(theirs, d_theirs)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


@pytest.mark.parametrize("op", [minigrad.remainder, minigrad.fmod])
def test_remainder_and_fmod_gradients(op):
    a = leaf(RNG.normal(0, 4, 6) + 0.3)
    b = leaf(RNG.uniform(1.1, 3.0, 6) * RNG.choice([-1, 1], 6))
    assert gradcheck(op, (a, b))
    assert gradcheck(lambda v: op(v, 1.7), (a,))


def test_remainder_gradient_of_the_divisor_is_minus_the_floored_quotient(real_torch):
    a, b = leaf([7.0, -7.0]), leaf([3.0, 3.0])
    minigrad.remainder(a, b).sum().backward()
    ta = real_torch.tensor([7.0, -7.0], dtype=real_torch.float64, requires_grad=True)
    tb = real_torch.tensor([3.0, 3.0], dtype=real_torch.float64, requires_grad=True)
    real_torch.remainder(ta, tb).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), [-2.0, 3.0])


def test_integer_remainder_by_zero_and_two_masks_are_refused():
    with pytest.raises(RuntimeError, match="ZeroDivisionError.*divisor holds a 0"):
        minigrad.tensor([1, 2]) % 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        minigrad.fmod(minigrad.tensor([1, 2]), minigrad.tensor([1, 0]))
    assert np.isnan((minigrad.tensor([1.0]) % 0).item())
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        minigrad.tensor([True]) % minigrad.tensor([True])


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.float64, 5, elements=st.floats(-1e3, 1e3)),
    st.floats(0.25, 50) | st.floats(-50, -0.25),
)
def test_remainder_is_python_mod_and_fmod_is_math_fmod(values, divisor):
    x = minigrad.tensor(values)
    rem = minigrad.remainder(x, divisor).numpy()
    fm = minigrad.fmod(x, divisor).numpy()
    for value, r, f in zip(values, rem, fm):
        assert r == pytest.approx(value % divisor, abs=1e-9)
        assert f == pytest.approx(math.fmod(value, divisor), abs=1e-9)
        assert r == 0 or (r < 0) == (divisor < 0)


# --------------------------------------------------------------------------- random_


def test_random_draws_integers_in_the_range_and_repeats_with_the_seed():
    minigrad.manual_seed(3)
    first = minigrad.empty(200, dtype=minigrad.long).random_(5)
    minigrad.manual_seed(3)
    again = minigrad.empty(200, dtype=minigrad.long).random_(5)
    assert first.tolist() == again.tolist()
    assert set(first.tolist()) == {0, 1, 2, 3, 4}
    between = minigrad.empty(300, dtype=minigrad.long).random_(-3, 2).numpy()
    assert between.min() == -3 and between.max() == 1
    keywords = minigrad.empty(50).random_(**{"from": 10, "to": 12}).numpy()
    assert set(keywords.tolist()) <= {10.0, 11.0}
    floats = minigrad.empty(500, dtype=minigrad.float32).random_().numpy()
    assert floats.min() >= 0 and floats.max() <= 2**24 and (floats == np.round(floats)).all()
    assert set(minigrad.empty(100, dtype=minigrad.bool).random_().tolist()) == {False, True}


def test_random_takes_a_generator_and_works_through_data():
    g = minigrad.Generator().manual_seed(7)
    a = minigrad.empty(20, dtype=minigrad.long).random_(100, generator=g)
    g.manual_seed(7)
    b = minigrad.empty(20, dtype=minigrad.long).random_(100, generator=g)
    assert a.tolist() == b.tolist()
    w = minigrad.zeros(4, 4, requires_grad=True)
    w.data.random_(0, 3)
    assert set(np.unique(w.detach().numpy())) <= {0.0, 1.0, 2.0}


def test_random_errors():
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'.*from=3 >= to=3"):
        minigrad.empty(3, dtype=minigrad.long).random_(3, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for uint8"):
        minigrad.empty(3, dtype=minigrad.uint8).random_(0, 300)
    with pytest.raises(TypeError, match="argument 'to' must be an int; got float"):
        minigrad.empty(3).random_(1.5)
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator"):
        minigrad.empty(3).random_(generator=3)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        minigrad.empty(3, requires_grad=True).random_()


# --------------------------------------------------------------------------- unfold


@pytest.mark.parametrize("shape,dim,size,step", [
    ((7,), 0, 2, 1), ((7,), 0, 3, 2), ((2, 7, 3), 1, 3, 2), ((2, 7, 3), -1, 2, 1),
    ((4, 5), 0, 4, 3), ((6,), 0, 0, 1), ((), 0, 1, 1),
])
def test_unfold_matches_pytorch(real_torch, shape, dim, size, step):
    values = RNG.normal(size=shape)
    ours, theirs = both(real_torch, values)
    assert_same(ours.unfold(dim, size, step), theirs.unfold(dim, size, step))


@pytest.mark.parametrize("dim,size,step", [(1, 3, 2), (1, 2, 3), (1, 3, 1), (-1, 2, 1)])
def test_unfold_gradient_adds_the_windows_back(dim, size, step):
    x = leaf(RNG.normal(size=(2, 7, 3)))
    assert gradcheck(lambda v: v.unfold(dim, size, step), (x,))
    assert minigrad.autograd.gradgradcheck(lambda v: v.unfold(dim, size, step) ** 2, (x,))
    counts = minigrad.ones(5, requires_grad=True)
    counts.unfold(0, 3, 1).sum().backward()
    assert counts.grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]


def test_unfold_is_a_view_and_works_on_data():
    x = minigrad.arange(1.0, 8)
    windows = x.unfold(0, 2, 2)
    assert windows._is_view
    np.testing.assert_array_equal(x.data.unfold(0, 3, 2), [[1, 2, 3], [3, 4, 5], [5, 6, 7]])


def test_unfold_errors():
    x = minigrad.arange(1.0, 8)
    with pytest.raises(RuntimeError, match="dimension 0 is 7 but size is 8"):
        x.unfold(0, 8, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    with pytest.raises(RuntimeError, match="size is -1 but must be >= 0"):
        x.unfold(0, -1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unfold(1, 2, 1)


# --------------------------------------------------------------------------- repeat_interleave


def test_repeat_interleave_matches_pytorch(real_torch):
    y = np.array([[1, 2], [3, 4]])
    ours, theirs = both(real_torch, y, np.int64)
    cases = [
        ((2,), {}), ((3,), {"dim": 1}), ((np.array([1, 2]),), {"dim": 0}),
        ((np.array([1, 2]),), {"dim": 0, "output_size": 3}), ((np.array([0, 3, 1, 2]),), {}),
        ((np.array([2]),), {"dim": -1}),
    ]
    for args, kwargs in cases:
        mine = [minigrad.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        real = [real_torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        assert_same(minigrad.repeat_interleave(ours, *mine, **kwargs),
                    real_torch.repeat_interleave(theirs, *real, **kwargs))
        assert_same(ours.repeat_interleave(*mine, **kwargs),
                    theirs.repeat_interleave(*real, **kwargs))
    assert_same(minigrad.repeat_interleave(minigrad.tensor([1, 2, 3])),
                real_torch.repeat_interleave(real_torch.tensor([1, 2, 3])))


def test_repeat_interleave_gradient_sums_the_copies():
    x = leaf(RNG.normal(size=(3, 2)))
    assert gradcheck(lambda v: v.repeat_interleave(minigrad.tensor([2, 0, 1]), dim=0), (x,))
    assert gradcheck(lambda v: minigrad.repeat_interleave(v, 3), (x,))
    x.repeat_interleave(3, dim=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 2), 3.0))


def test_repeat_interleave_errors():
    y = minigrad.tensor([[1, 2], [3, 4]])
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        y.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match=r"repeats.size\(0\) = 3 and input.size\(dim\) = 2"):
        y.repeat_interleave(minigrad.tensor([1, 2, 3]), dim=0)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        y.repeat_interleave(minigrad.tensor([1, -2]), dim=0)
    with pytest.raises(RuntimeError, match="Invalid output_size, expected 8 but got 3"):
        y.repeat_interleave(2, output_size=3)
    with pytest.raises(RuntimeError, match="0-dim or 1-dim"):
        y.repeat_interleave(minigrad.tensor([[1, 2]]), dim=0)
    with pytest.raises(NotImplementedError, match="not implemented for 'float64'"):
        y.repeat_interleave(minigrad.tensor([1.0, 2.0]), dim=0)


# --------------------------------------------------------------------------- index_copy / fill


def test_index_copy_and_index_fill_match_pytorch(real_torch):
    x = RNG.normal(size=(5, 3))
    t = RNG.normal(size=(3, 3))
    for dim, index in ((0, [0, 4, 2]), (1, [2, 0, 1])):
        ours, theirs = both(real_torch, x)
        src_ours, src_theirs = both(real_torch, t if dim == 0 else RNG.normal(size=(5, 3)))
        assert_same(ours.index_copy(dim, minigrad.tensor(index), src_ours),
                    theirs.index_copy(dim, real_torch.tensor(index), src_theirs))
        assert_same(minigrad.index_fill(ours, dim, minigrad.tensor([0, -1]), -1.5),
                    real_torch.index_fill(theirs, dim, real_torch.tensor([0, -1]), -1.5))
        assert_same(ours.index_fill(dim, minigrad.tensor([1]), minigrad.tensor(2.0)),
                    theirs.index_fill(dim, real_torch.tensor([1]), real_torch.tensor(2.0)))
    ints = minigrad.tensor([1, 2]).index_fill_(0, minigrad.tensor([0]), 2.5)
    assert ints.tolist() == [2, 2]  # the value takes x's dtype, as in PyTorch


def test_index_copy_and_index_fill_gradients():
    x, src = leaf(RNG.normal(size=(5, 3))), leaf(RNG.normal(size=(3, 3)))
    index = minigrad.tensor([0, 4, 2])
    assert gradcheck(lambda a, s: a.index_copy(0, index, s), (x, src))
    value = leaf(1.5)
    assert gradcheck(lambda a, v: a.index_fill(1, minigrad.tensor([0, -1, 0]), v), (x, value))
    y = x.index_fill(0, minigrad.tensor([0, 4, 4]), value)
    (y * minigrad.arange(15.0).view(5, 3)).sum().backward()
    assert value.grad.item() == 0 + 1 + 2 + 12 + 13 + 14  # each filled place once


def test_index_copy_and_index_fill_errors():
    x = minigrad.zeros(5, 3)
    t = minigrad.ones(3, 3)
    with pytest.raises(RuntimeError, match="same dtype.*float64.*float32"):
        x.index_copy(0, minigrad.tensor([0, 1, 2]), t.float())
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        x.index_copy(0, minigrad.tensor([0, 5, 2]), t)
    with pytest.raises(IndexError, match=r"Number of indices \(2\)"):
        x.index_copy(0, minigrad.tensor([0, 1]), t)
    with pytest.raises(RuntimeError, match="same slice shapes"):
        x.index_copy(0, minigrad.tensor([0, 1, 2]), minigrad.ones(3, 4))
    with pytest.raises(RuntimeError, match="Expected .*long|index of integers"):
        x.index_copy(0, minigrad.tensor([0.0, 1.0, 2.0]), t)
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        x.index_fill(1, minigrad.tensor([0, 3]), -1)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        x.index_fill(1, minigrad.tensor([0]), minigrad.tensor([1.0]))
    with pytest.raises(RuntimeError, match="Index has to be a vector/scalar"):
        x.index_fill(1, minigrad.tensor([[0]]), 1)


# --------------------------------------------------------------------------- put / masked_scatter


def test_put_and_masked_scatter_match_pytorch(real_torch):
    base = RNG.normal(size=(2, 3))
    source = RNG.normal(size=4)
    index = np.array([1, -1, 3, 1])
    for accumulate in (False, True):
        ours, theirs = both(real_torch, base)
        picks = [1, -1, 3, 0] if not accumulate else index
        assert_same(ours.put(minigrad.tensor(picks), minigrad.tensor(source),
                             accumulate=accumulate),
                    theirs.put(real_torch.tensor(picks), real_torch.tensor(source),
                               accumulate=accumulate))
    mask = RNG.random((2, 3)) > 0.4
    ours, theirs = both(real_torch, base)
    source = RNG.normal(size=(2, 4))
    assert_same(ours.masked_scatter(minigrad.tensor(mask), minigrad.tensor(source)),
                theirs.masked_scatter(real_torch.tensor(mask), real_torch.tensor(source)))
    # The row mask broadcasts over the rows, as in PyTorch.
    row = np.array([True, False, True])
    src = RNG.normal(size=6)
    assert_same(minigrad.masked_scatter(ours, minigrad.tensor(row), minigrad.tensor(src)),
                real_torch.masked_scatter(theirs, real_torch.tensor(row), real_torch.tensor(src)))


def test_put_and_masked_scatter_gradients():
    x, src = leaf(RNG.normal(size=(5, 3))), leaf(RNG.normal(size=(2, 2)))
    assert gradcheck(lambda a, s: a.put(minigrad.tensor([1, 14, -2, 3]), s), (x, src))
    assert gradcheck(lambda a, s: a.put(minigrad.tensor([1, 1, -2, 3]), s, accumulate=True),
                     (x, src))
    mask = minigrad.tensor(RNG.random((5, 3)) > 0.5)
    many = leaf(RNG.normal(size=(4, 5)))
    assert gradcheck(lambda a, s: a.masked_scatter(mask, s), (x, many))


def test_put_and_masked_scatter_errors():
    s = minigrad.tensor([[4, 3, 5], [6, 7, 8]])
    with pytest.raises(IndexError, match="tried to access index 6 on a tensor of 6 elements"):
        s.put(minigrad.tensor([0, 6]), minigrad.tensor([9, 10]))
    with pytest.raises(IndexError, match="source.numel\\(\\) = 3, index.numel\\(\\) = 2"):
        s.put(minigrad.tensor([1, 3]), minigrad.tensor([9, 10, 11]))
    with pytest.raises(RuntimeError, match="same dtype"):
        s.put_(minigrad.tensor([1, 3]), minigrad.tensor([9.0, 10.0]))
    mask = minigrad.tensor([[False, True, True], [True, False, False]])
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        s.masked_scatter(mask, minigrad.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        s.masked_scatter(mask.long(), minigrad.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="same dtypes"):
        s.masked_scatter(mask, minigrad.tensor([1.0, 2.0, 3.0]))


# --------------------------------------------------------------------------- take_along_dim


def test_take_along_dim_matches_pytorch(real_torch):
    x = RNG.normal(size=(3, 4))
    ours, theirs = both(real_torch, x)
    cases = [(np.argsort(x, axis=1), 1), (np.array([[0], [3], [-1]]), 1),
             (np.array([[0, 1, 2, 0]]), 0), (np.array([5, 0, 11]), None),
             (np.array(7), None)]
    for index, dim in cases:
        assert_same(minigrad.take_along_dim(ours, minigrad.tensor(index), dim),
                    real_torch.take_along_dim(theirs, real_torch.tensor(index), dim))
    assert_same(ours.take_along_dim(minigrad.tensor([[1]]), dim=1),
                theirs.take_along_dim(real_torch.tensor([[1]]), dim=1))


def test_take_along_dim_gradient_and_errors():
    x = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda v: minigrad.take_along_dim(v, minigrad.tensor([[0, 0], [3, 1], [2, 2]]),
                                                       dim=1), (x,))
    assert gradcheck(lambda v: minigrad.take_along_dim(v, minigrad.tensor([0, 5, 5])), (x,))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        minigrad.take_along_dim(x, minigrad.tensor([0, 1]), dim=1)
    with pytest.raises(RuntimeError, match="index 12 is out of bounds"):
        minigrad.take_along_dim(x, minigrad.tensor([12]))
    with pytest.raises(RuntimeError, match="must broadcast"):
        minigrad.take_along_dim(x, minigrad.tensor([[0], [1]]), dim=1)


# --------------------------------------------------------------------------- diff


def test_diff_matches_pytorch(real_torch):
    c = RNG.integers(-9, 9, (3, 5))
    ours, theirs = both(real_torch, c, np.int64)
    for kwargs in ({}, {"n": 2}, {"dim": 0}, {"n": 3, "dim": 0}, {"n": 0}, {"n": 9}):
        assert_same(minigrad.diff(ours, **kwargs), real_torch.diff(theirs, **kwargs))
    extra = RNG.integers(-9, 9, (3, 2))
    assert_same(ours.diff(prepend=minigrad.tensor(extra), append=minigrad.tensor(extra)),
                theirs.diff(prepend=real_torch.tensor(extra), append=real_torch.tensor(extra)))
    mask = np.array([True, False, False, True])
    assert_same(minigrad.diff(minigrad.tensor(mask)), real_torch.diff(real_torch.tensor(mask)))


def test_diff_gradient_and_errors():
    x, before = leaf(RNG.normal(size=(2, 5))), leaf(RNG.normal(size=(2, 1)))
    assert gradcheck(lambda v, p: minigrad.diff(v, n=2, prepend=p), (x, before))
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        minigrad.diff(minigrad.tensor(3.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        minigrad.diff(x, n=-1)
    with pytest.raises(RuntimeError, match="same dimension as input"):
        minigrad.diff(x, prepend=minigrad.tensor(3.0))
    with pytest.raises(TypeError, match="'prepend' must be a Variable"):
        minigrad.diff(x, prepend=3)


# --------------------------------------------------------------------------- unique / bucketize


def test_unique_matches_pytorch(real_torch):
    values = RNG.integers(0, 4, (3, 5))
    ours, theirs = both(real_torch, values, np.int64)
    for kwargs in ({}, {"return_inverse": True}, {"return_counts": True},
                   {"return_inverse": True, "return_counts": True, "dim": 0},
                   {"return_inverse": True, "return_counts": True, "dim": 1}):
        got, expected = minigrad.unique(ours, **kwargs), real_torch.unique(theirs, **kwargs)
        if isinstance(expected, tuple):
            for mine, real in zip(got, expected, strict=True):
                assert_same(mine, real)
        else:
            assert_same(got, expected)
    assert ours.unique().tolist() == sorted(set(values.ravel().tolist()))


def test_unique_has_no_gradient_and_checks_dim():
    x = leaf([3.0, 1.0, 3.0])
    assert x.unique().requires_grad is False
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.unique(minigrad.tensor([[1, 2]]), dim=2)
    with pytest.raises(IndexError, match="has no dimensions"):
        minigrad.unique(minigrad.tensor(3.0), dim=0)


def test_bucketize_matches_pytorch(real_torch):
    edges = np.sort(RNG.integers(-5, 5, 6)).astype(np.float64)
    points = RNG.integers(-7, 7, (3, 4)).astype(np.float64)
    for right in (False, True):
        for out_int32 in (False, True):
            got = minigrad.bucketize(minigrad.tensor(points), minigrad.tensor(edges),
                                     right=right, out_int32=out_int32)
            expected = real_torch.bucketize(real_torch.tensor(points), real_torch.tensor(edges),
                                            right=right, out_int32=out_int32)
            assert_same(got, expected)
    assert minigrad.bucketize(3, minigrad.tensor([1, 3, 5])).item() == 1


def test_bucketize_errors():
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        minigrad.bucketize(minigrad.tensor([1.0]), minigrad.tensor([[1.0, 2.0]]))


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.int64, st.integers(1, 8), elements=st.integers(-20, 20)),
       hnp.arrays(np.int64, st.integers(0, 12), elements=st.integers(-25, 25)),
       st.booleans())
def test_bucketize_places_each_value_between_its_boundaries(edges, points, right):
    edges = np.sort(edges)
    places = minigrad.bucketize(minigrad.tensor(points), minigrad.tensor(edges), right=right)
    for value, i in zip(points, places.tolist()):
        below = edges[:i]
        above = edges[i:]
        if right:
            assert (below <= value).all() and (above > value).all()
        else:
            assert (below < value).all() and (above >= value).all()


# --------------------------------------------------------------------------- cdist / lerp


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, 0.5, math.inf])
def test_cdist_matches_pytorch_with_gradients(real_torch, p):
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(5, 4))
    ta = real_torch.tensor(a, requires_grad=True)
    tb = real_torch.tensor(b, requires_grad=True)
    ma, mb = leaf(a), leaf(b)
    got, expected = minigrad.cdist(ma, mb, p=p), real_torch.cdist(ta, tb, p=p)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    weights = RNG.normal(size=expected.shape)
    (got * minigrad.tensor(weights)).sum().backward()
    (expected * real_torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ma.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(mb.grad.numpy(), tb.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
def test_cdist_gradcheck_and_a_zero_distance(p):
    a, b = leaf(RNG.normal(size=(3, 2))), leaf(RNG.normal(size=(4, 2)))
    assert gradcheck(lambda x, y: minigrad.cdist(x, y, p=p), (a, b))
    same = leaf([[1.0, 2.0]])
    minigrad.cdist(same, same.detach()).sum().backward()
    assert same.grad.tolist() == [[0.0, 0.0]]  # 0, not nan, where the distance is 0


def test_cdist_errors():
    a = minigrad.ones(3, 2)
    with pytest.raises(RuntimeError, match="at least 2D tensors, X1 got: 1D"):
        minigrad.cdist(a[0], a)
    with pytest.raises(RuntimeError, match="same number of columns. X1: 2 X2: 1"):
        minigrad.cdist(a, a[:, :1])
    with pytest.raises(RuntimeError, match="non-negative p values"):
        minigrad.cdist(a, a, p=-1)
    with pytest.raises(RuntimeError, match="floating-point dtypes"):
        minigrad.cdist(a.long(), a.long())
    with pytest.raises(ValueError, match="not a valid value for compute_mode"):
        minigrad.cdist(a, a, compute_mode="x")


def test_lerp_matches_pytorch_and_its_gradients(real_torch):
    start, end, weight = RNG.normal(size=(3, 1)), RNG.normal(size=4), RNG.random((3, 4)) * 1.4
    for w in (0.25, 0.75, weight):
        ms, ts = both(real_torch, start)
        me, te = both(real_torch, end)
        mw, tw = (w, w) if isinstance(w, float) else both(real_torch, w)
        assert_same(minigrad.lerp(ms, me, mw), real_torch.lerp(ts, te, tw))
    s, e, w = leaf(start), leaf(end), leaf(weight)
    assert gradcheck(minigrad.lerp, (s, e, w))
    assert gradcheck(lambda a, b: a.lerp(b, 0.6), (s, e))
    x = minigrad.arange(4.0)
    assert x.lerp_(minigrad.ones(4), 0.25).tolist() == [0.25, 1.0, 1.75, 2.5]


def test_lerp_errors():
    start = minigrad.arange(1.0, 5.0)
    with pytest.raises(RuntimeError, match="expected dtype float64 for `end`"):
        minigrad.lerp(start, start.float(), 0.5)
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        minigrad.lerp(start.long(), start.long(), 0.5)
    with pytest.raises(TypeError, match="'end'.* must be a Variable"):
        minigrad.lerp(start, 3.0, 0.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        start.lerp_(minigrad.ones(4, 1), 0.5)


# --------------------------------------------------------------------------- scatter(reduce=)


def test_scatter_reduce_matches_pytorch(real_torch):
    index = np.array([[2], [3]])
    for reduce in ("add", "multiply"):
        ours = minigrad.full((2, 4), 2.0).scatter_(1, minigrad.tensor(index), 1.23, reduce=reduce)
        theirs = real_torch.full((2, 4), 2.0, dtype=real_torch.float64).scatter_(
            1, real_torch.tensor(index), 1.23, reduce=reduce)
        assert_same(ours, theirs)
    repeated = minigrad.ones(3, dtype=minigrad.long).scatter(
        0, minigrad.tensor([1, 1]), minigrad.tensor([2, 3]), reduce="multiply")
    assert repeated.tolist() == [1, 6, 1]
    assert minigrad.ones(3, dtype=minigrad.long).scatter(
        0, minigrad.tensor([1, 1]), 2.5, reduce="add").tolist() == [1, 5, 1]


def test_scatter_reduce_errors_and_no_derivative():
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        minigrad.zeros(3).scatter(0, minigrad.tensor([0]), 1.0, reduce="max")
    x = minigrad.ones(3, requires_grad=True)
    y = x.scatter(0, minigrad.tensor([0]), 2.0, reduce="multiply")
    with pytest.raises(RuntimeError, match="derivative for scatter with reduce= is not"):
        y.sum().backward()

"""Fixes from the torch cross-check fuzz (tests/fuzz_torch.py), APIs m to z: minigrad raises
PyTorch's exception class where PyTorch raises, and returns what PyTorch returns where it
accepts. Each test asserts the class and the message without torch; values are compared
with real torch where it is installed (the `real_torch` fixture)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    "call",
    [
        lambda: minigrad.full(2, 1.0),
        lambda: minigrad.zeros(2).new_full(2, 1.0),
        lambda: minigrad.randint(5, 2),
        lambda: minigrad.randint(5, size=2),
    ],
)
def test_an_int_size_is_refused_where_torch_wants_a_tuple(call) -> None:
    with pytest.raises(TypeError, match=r"argument 'size' must be a tuple of ints.*\(2,\)"):
        call()


def test_full_sizes_as_tuples_still_work() -> None:
    assert minigrad.full((2,), 1.0).shape == (2,)
    assert minigrad.full([], 3).shape == ()
    assert minigrad.zeros(2).new_full([3], 2.0).tolist() == [2.0, 2.0, 2.0]


def test_randint_needs_high_and_refuses_an_empty_range() -> None:
    with pytest.raises(TypeError, match='missing 1 required positional argument: "high"'):
        minigrad.randint(size=(2,))
    with pytest.raises(RuntimeError, match="expected low < high.*low=0, high=0"):
        minigrad.randint(0, 0, (2,))
    assert minigrad.randint(5, (3,)).shape == (3,)
    assert minigrad.randint(high=5, size=(2,)).shape == (2,)


# --------------------------------------------------------------------------- shape ops


def test_the_functions_take_one_sequence_the_methods_take_varargs() -> None:
    x = minigrad.zeros(2, 3)
    with pytest.raises(TypeError, match="reshape.*too many positional arguments"):
        minigrad.reshape(x, 3, 2)
    with pytest.raises(TypeError, match=r"argument 'shape' \(position 2\) must be a tuple"):
        minigrad.reshape(x, 6)
    with pytest.raises(TypeError, match=r"argument 'dims' \(position 2\) must be a tuple"):
        minigrad.permute(x, 1)
    assert minigrad.reshape(x, (3, 2)).shape == (3, 2)
    assert minigrad.permute(x, [1, 0]).shape == (3, 2)
    assert x.reshape(3, 2).shape == x.permute(1, 0).shape == (3, 2)


@pytest.mark.parametrize(
    ("method", "argument"),
    [("reshape", "shape"), ("view", "size"), ("permute", "dims"), ("repeat", "repeats"),
     ("sum_to_size", "size")],
)
def test_methods_need_their_sizes(method: str, argument: str) -> None:
    with pytest.raises(TypeError, match=f"{method}\\(\\) missing 1 required positional "
                                        f"argument: '{argument}'"):
        getattr(minigrad.tensor(1.0), method)()
    assert getattr(minigrad.tensor(1.0), method)(()).shape == ()


def test_permute_checks_count_before_range_and_refuses_duplicates() -> None:
    x = minigrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match="number of dims must match.*2 dimensions"):
        x.permute(5)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        x.permute(0, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.permute(0, 5)
    with pytest.raises(TypeError, match="ints"):
        minigrad.tensor(1.0).permute(-2, None)


def test_squeeze_takes_a_tuple_of_dims(real_torch) -> None:
    data = np.zeros((1, 2, 1))
    for dims in [(), (0,), (0, 2), (-1,), (1,)]:
        ours = minigrad.tensor(data).squeeze(dims)
        assert ours.shape == tuple(real_torch.from_numpy(data).squeeze(dims).shape)
    with pytest.raises(RuntimeError, match="more than once"):
        minigrad.tensor(data).squeeze((0, 0))


def test_unflatten_checks_sizes_first() -> None:
    with pytest.raises(TypeError, match="sizes must be a tuple or list of ints"):
        minigrad.tensor(1.0).unflatten(0, 2)
    with pytest.raises(RuntimeError, match="sizes must be non-empty"):
        minigrad.zeros(2).unflatten(0, ())
    with pytest.raises(RuntimeError, match="0-d"):
        minigrad.tensor(1.0).unflatten(0, (1,))


def test_narrow_checks_the_length_before_the_dim() -> None:
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        minigrad.zeros(2, 3).narrow(5, 0, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.zeros(2, 3).narrow(5, 0, 1)


def test_roll_follows_torch(real_torch) -> None:
    data = np.arange(6.0).reshape(2, 3)
    for shifts, dims in [(1, None), (1, ()), ((1, 1), (0, 1)), (-2, 1)]:
        ours = minigrad.tensor(data).roll(shifts, dims)
        theirs = real_torch.from_numpy(data).roll(shifts, dims)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(RuntimeError, match="shifts and dims must have the same length"):
        minigrad.tensor(data).roll([1, 2])
    with pytest.raises(TypeError, match="shifts"):
        minigrad.tensor(data).roll(1.5)
    with pytest.raises(IndexError, match="no dimensions"):
        minigrad.tensor(1.0).roll(3, 0)
    assert minigrad.tensor(1.0).roll(3).item() == 1.0


# --------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    "call",
    [
        lambda: -minigrad.tensor([True]),
        lambda: minigrad.neg(minigrad.tensor([True])),
        lambda: minigrad.tensor([True]).negative(),
    ],
)
def test_negating_a_bool_is_not_implemented(call) -> None:
    with pytest.raises(NotImplementedError, match="Negation.*bool.*~"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: minigrad.tensor([1, 2]) - True,
        lambda: minigrad.tensor([1.0]) - minigrad.tensor([True]),
        lambda: True - minigrad.tensor([1.0]),
        lambda: minigrad.sub(minigrad.tensor([True]), 0.5),
        lambda: minigrad.tensor([True]).subtract(minigrad.tensor([True])),
    ],
)
def test_subtracting_a_bool_is_not_implemented(call) -> None:
    with pytest.raises(NotImplementedError, match="Subtraction.*bool.*logical_xor"):
        call()


def test_alpha_is_checked_as_torch_checks_it() -> None:
    ints, floats = minigrad.tensor([1, 2]), minigrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        ints.sub(1, alpha=True)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        ints.add(1, alpha=0.5)
    with pytest.raises(TypeError, match="argument 'alpha' must be a number"):
        floats.sub(1, alpha=minigrad.tensor([2.0, 3.0]))
    assert floats.sub(1, alpha=minigrad.tensor(2.0)).tolist() == [-1.0, 0.0]
    assert ints.add(1, alpha=2).tolist() == [3, 4]


def test_true_divide_takes_no_rounding_mode() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'rounding_mode'"):
        minigrad.ones(2).true_divide(2, rounding_mode=None)
    assert minigrad.true_divide(minigrad.tensor([3]), 2).tolist() == [1.5]
    assert minigrad.true_divide(3.0, minigrad.tensor([2.0])).tolist() == [1.5]


# --------------------------------------------------------------------------- reductions


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda x: x.max(dim=None), "argument 'dim' must be an int"),
        (lambda x: x.min(keepdim=True), "keepdim= needs a dim"),
        (lambda x: minigrad.max(x, keepdim=False), "keepdim= needs a dim"),
        (lambda x: x.max(other=1), "argument 'other' must be a Variable"),
        (lambda x: x.min(0, other=x), "takes no dim or keepdim"),
        (lambda x: x.sum(keepdim=True), "keepdim= needs a dim"),
        (lambda x: x.mean(keepdim=False), "keepdim= needs a dim"),
        (lambda x: x.prod(keepdim=False), "keepdim= needs a dim"),
        (lambda x: x.prod(dim=None), "'dim'.*must be an int"),
        (lambda x: x.prod((0,)), "'dim'.*must be an int"),
    ],
)
def test_reduction_overloads_refuse_what_torch_refuses(call, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        call(minigrad.tensor([[1.0, 5.0], [3.0, 2.0]]))


def test_reduction_overloads_torch_accepts(real_torch) -> None:
    data = np.array([[1.0, 5.0], [3.0, 2.0]])
    ours, theirs = minigrad.tensor(data), real_torch.from_numpy(data)
    pairs = [
        (ours.sum(dim=None, keepdim=True), theirs.sum(dim=None, keepdim=True)),
        (ours.sum(keepdim=True, axis=None), theirs.sum(keepdim=True, axis=None)),
        (ours.mean(dim=None, keepdim=True), theirs.mean(dim=None, keepdim=True)),
        (ours.prod(1, True), theirs.prod(1, True)),
        (ours.max(other=minigrad.ones(2)), theirs.max(other=real_torch.ones(2,
                                                                              dtype=theirs.dtype))),
        (ours.max(1, keepdim=True).values, theirs.max(1, keepdim=True).values),
        (ours.min(), theirs.min()),
    ]
    for mine, other in pairs:
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=1e-12)


def test_max_along_a_dim_of_a_mask_has_indices(real_torch) -> None:
    data = np.array([[False], [True]])
    ours = minigrad.tensor(data).max(1)
    theirs = real_torch.from_numpy(data).max(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


def test_mean_of_nothing_is_nan(real_torch) -> None:
    data = np.zeros((3, 0))
    ours = minigrad.tensor(data).mean(-1)
    theirs = real_torch.from_numpy(data).mean(-1)
    assert ours.shape == tuple(theirs.shape)
    assert np.isnan(ours.numpy()).all() and np.isnan(minigrad.zeros(0).mean().item())


def test_norm_wants_floats_as_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="norm expects floating-point values; got dtype int64"):
        minigrad.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="norm expects floating-point values; got dtype bool"):
        minigrad.tensor([True]).norm(dtype=minigrad.float64)
    with pytest.raises(RuntimeError, match="dtype should be floating point"):
        minigrad.tensor([1.0]).norm(dtype=minigrad.int64)
    with pytest.raises(RuntimeError, match="without narrowing"):
        minigrad.tensor([1.0], dtype=minigrad.float64).norm(dtype=minigrad.float32)
    widened = minigrad.tensor([3.0, 4.0], dtype=minigrad.float32).norm(dtype=minigrad.float64)
    assert widened.dtype == minigrad.float64 and widened.item() == 5.0
    assert minigrad.tensor([1.0, 2.0]).norm(p=True).item() == 3.0  # p=True is p=1


def test_softmax_wants_floats_and_checks_the_dim() -> None:
    with pytest.raises(NotImplementedError, match="softmax of a int64 Variable.*dtype="):
        minigrad.softmax(minigrad.tensor([1, 2]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.tensor(1.0).softmax(-2)
    assert minigrad.tensor([1, 2]).softmax(0, dtype=minigrad.float32).dtype == minigrad.float32
    assert minigrad.tensor(1.0).softmax(0).item() == 1.0


# --------------------------------------------------------------------------- the judge


def test_the_judge_allows_torch_accidents_narrowly() -> None:
    import fuzz_torch

    ours = fuzz_torch.Outcome(error=TypeError("minigrad.split(): argument 'x' ..."))
    theirs = fuzz_torch.Outcome(error=AttributeError("'float' object has no attribute 'split'"))
    assert fuzz_torch.accident(ours, theirs) is not None
    other = fuzz_torch.Outcome(error=AttributeError("'Tensor' object has no attribute 'x' (oops)"))
    assert fuzz_torch.accident(ours, other) is None
    assert fuzz_torch.accident(fuzz_torch.Outcome(error=RuntimeError("x")), theirs) is None


def test_alpha_times_a_number_keeps_the_variables_dtype(real_torch) -> None:
    data = np.array([1.5], dtype=np.float32)
    ours = minigrad.tensor(data).sub(0.5, alpha=2)
    theirs = real_torch.from_numpy(data).sub(0.5, alpha=2)
    assert ours.dtype == minigrad.float32 and str(theirs.dtype) == "torch.float32"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7)

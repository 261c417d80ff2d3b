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


# --------------------------------------------------------------------------- round two:
# type promotion (minigrad/ops/promotion.py)


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        ((np.zeros(3, np.float32), np.zeros((), np.float64)), "float32"),
        ((np.zeros(3, np.int64), np.zeros((), np.float32)), "float32"),
        ((np.zeros(3, np.int64), np.zeros(3, np.float32)), "float32"),
        ((np.zeros(3, np.bool_), np.zeros((), np.int64)), "int64"),
        ((np.zeros(3, np.int64), 2.5), "float64"),  # minigrad's default float
        ((np.zeros(3, np.float32), 2.5), "float32"),
        ((np.zeros(3, np.bool_), True), "bool"),
        ((np.zeros((), np.int64), np.zeros((), np.float32)), "float32"),
    ],
)
def test_promoted_dtype_follows_torch_result_type(operands, expected: str) -> None:
    from minigrad.ops.promotion import promoted_dtype

    assert promoted_dtype(*operands) == np.dtype(expected)


def _mixed_pairs():
    return [
        (np.array([1.5, -2.0], np.float32), np.array(0.25, np.float64)),
        (np.array([3, -4]), np.array([0.5, 2.0], np.float32)),
        (np.array([3, -4]), np.array(0.5, np.float32)),
        (np.array([[0.5], [2.0]], np.float32), np.array([4, 1])),
    ]


@pytest.mark.parametrize("name", ["maximum", "minimum", "where", "xlogy", "mul", "pow"])
def test_mixed_dtypes_give_torchs_dtype_and_values(real_torch, name: str) -> None:
    for left, right in _mixed_pairs():
        if name == "pow":
            left = np.abs(left)  # a negative base to a fractional power is nan, warned
        if name == "where":
            condition = np.array([True, False])
            ours = minigrad.where(minigrad.tensor(condition), minigrad.tensor(left),
                                  minigrad.tensor(right))
            theirs = real_torch.where(real_torch.from_numpy(condition),
                                      real_torch.from_numpy(left), real_torch.from_numpy(right))
        else:
            ours = getattr(minigrad, name)(minigrad.tensor(left), minigrad.tensor(right))
            theirs = getattr(real_torch, name)(real_torch.from_numpy(left),
                                               real_torch.from_numpy(right))
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_xlogy_of_float32_and_a_number_stays_float32() -> None:
    x = minigrad.tensor([0.5, 2.0], dtype=minigrad.float32)
    for number in (-1, True, 0.5, float("nan")):
        assert minigrad.xlogy(x, number).dtype == minigrad.float32
    assert minigrad.xlogy(minigrad.tensor([1, 2]), 2).dtype == minigrad.float64


def test_a_mixed_product_still_sends_each_gradient_in_its_dtype() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32, requires_grad=True)
    y = minigrad.tensor(2.0, requires_grad=True)
    out = minigrad.maximum(x, y) * y
    assert out.dtype == minigrad.float32
    out.sum().backward()
    assert x.grad.dtype == minigrad.float32 and y.grad.dtype == minigrad.float64


# --------------------------------------------------------------------------- pow


def test_pow_of_bools_and_negative_integer_powers(real_torch) -> None:
    masks = minigrad.tensor([True, False])
    with pytest.raises(NotImplementedError, match="bool power"):
        masks ** masks
    with pytest.raises(NotImplementedError, match="bool power"):
        minigrad.pow(True, masks)
    assert (masks ** True).dtype == minigrad.bool and (masks ** False).tolist() == [True, True]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        minigrad.tensor([2, 3]) ** -1
    base = np.array([-3, -2, -1, 0, 1, 2, 3] * 3)
    exponent = np.repeat([-3, -2, 2], 7)
    ours = minigrad.pow(minigrad.tensor(base), minigrad.tensor(exponent))
    theirs = real_torch.pow(real_torch.from_numpy(base), real_torch.from_numpy(exponent))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# --------------------------------------------------------------------------- products


def test_products_refuse_bools_and_mixed_kinds() -> None:
    floats, ints = minigrad.ones(2, 2), minigrad.ones(2, 2, dtype=minigrad.int64)
    masks = minigrad.ones(2, 2, dtype=minigrad.bool)
    with pytest.raises(NotImplementedError, match="matmul is not implemented for bool"):
        masks @ masks
    for call in (lambda: floats @ ints, lambda: minigrad.mm(ints, masks),
                 lambda: minigrad.mv(floats, minigrad.ones(2, dtype=minigrad.int64))):
        with pytest.raises(RuntimeError, match="same dtype, but got"):
            call()
    # float32 data into float64 weights computes in float64 (site/pytorch.md, "Differences to know")
    assert (minigrad.ones(2, dtype=minigrad.float32) @ floats).dtype == minigrad.float64
    assert (ints @ ints).tolist() == [[2, 2], [2, 2]]
    empty = minigrad.ones(2, 0, dtype=minigrad.bool) @ minigrad.ones(0, 2, dtype=minigrad.bool)
    assert empty.shape == (2, 2) and not empty.numpy().any()  # no kernel runs: no error


def test_matmul_takes_variables_and_mv_reads_rows_first() -> None:
    with pytest.raises(TypeError, match="argument 'other' must be a Variable.*list"):
        minigrad.ones(2, 2).matmul([1.0, 2.0])
    with pytest.raises(IndexError, match="no dimensions"):
        minigrad.mv(minigrad.tensor(1.0), minigrad.ones(2))
    with pytest.raises(TypeError, match="argument 'vec' must be a Variable"):
        minigrad.mv(minigrad.ones(2, 2, 2), (0, 1))


# --------------------------------------------------------------------------- scatter_add


def test_scatter_add_checks_the_dim_first_and_skips_an_empty_index() -> None:
    with pytest.raises(IndexError, match="Dimension out of range"):
        ints = minigrad.ones(1, dtype=minigrad.int64)  # a dtype error too, checked later
        minigrad.zeros(2).scatter_add(3, minigrad.tensor([0]), ints)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.zeros(3).scatter_add_(2, minigrad.tensor([0.5]), minigrad.tensor(1.0))
    src = minigrad.ones(5, 5, requires_grad=True)
    out = minigrad.zeros(2, 3).scatter_add(0, minigrad.zeros(1, 5, 0, dtype=minigrad.int64), src)
    assert out.shape == (2, 3) and not out.detach().numpy().any()
    out.sum().backward()
    assert src.grad.shape == (5, 5) and not src.grad.numpy().any()


# --------------------------------------------------------------------------- random


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: minigrad.normal(std=minigrad.ones(2)), "required positional argument: 'mean'"),
        (lambda: minigrad.normal(0.5, size=(3,)), "'mean' must be a Variable when std is left"),
        (lambda: minigrad.normal(1.0, 2.0, 3), "argument 'size' must be a tuple of ints"),
        (lambda: minigrad.normal(minigrad.ones(2), size=(2,)), "size= go with a number mean"),
        (lambda: minigrad.normal(minigrad.ones(2), dtype=minigrad.float32), "dtype= go with"),
        (lambda: minigrad.ones(2).uniform_(b=1), "unexpected keyword argument 'b'"),
        (lambda: minigrad.ones(2).uniform_(1, 2, 3), "from 0 to 2 positional arguments"),
        (lambda: minigrad.randn(dtype=minigrad.bool), 'missing 1 required positional'),
    ],
)
def test_random_overloads_refuse_what_torch_refuses(call, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: minigrad.normal(1.0, -2.0, (2,)),
        lambda: minigrad.normal(minigrad.ones(2), -1.0),
        lambda: minigrad.normal(1.0, minigrad.tensor([-1.0, 2.0])),
        lambda: minigrad.ones(2).normal_(std=float("nan")),
        lambda: minigrad.ones(2, dtype=minigrad.int64).normal_(0, -1),  # std before dtype
    ],
)
def test_a_negative_or_nan_std_is_a_runtime_error(call) -> None:
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        call()


def test_normal_takes_the_dtype_of_its_first_variable_and_needs_floats() -> None:
    mean = minigrad.zeros(3, dtype=minigrad.float32)
    assert minigrad.normal(mean).dtype == minigrad.float32
    assert minigrad.normal(mean, minigrad.ones(3, dtype=minigrad.int64)).dtype == minigrad.float32
    assert minigrad.normal(1.0, minigrad.ones(2, dtype=minigrad.float32)).dtype == minigrad.float32
    with pytest.raises(NotImplementedError, match="dtype int64"):
        minigrad.normal(minigrad.ones(2, dtype=minigrad.int64))
    with pytest.raises(RuntimeError, match="broadcast"):
        minigrad.normal(minigrad.ones(2), minigrad.ones(3))
    # No element to draw: PyTorch's normal kernel never runs, so no dtype error.
    assert minigrad.normal(minigrad.zeros(0, dtype=minigrad.int64)).dtype == minigrad.int64
    assert minigrad.randn(0, dtype=minigrad.bool).shape == (0,)
    assert minigrad.randn_like(minigrad.zeros(0, dtype=minigrad.bool)).shape == (0,)
    assert minigrad.zeros(0, dtype=minigrad.int64).normal_().shape == (0,)
    with pytest.raises(NotImplementedError, match="dtype int64"):
        minigrad.rand(0, dtype=minigrad.int64)  # the uniform kernel checks it anyway


def test_uniform_takes_from_and_to() -> None:
    x = minigrad.zeros(200)
    x.uniform_(**{"from": 2.0, "to": 3.0})
    assert 2.0 <= x.numpy().min() and x.numpy().max() < 3.0
    x.uniform_(-1, minigrad.tensor(1.0))  # a 0-d Variable reads as a number
    assert -1.0 <= x.numpy().min() and x.numpy().max() < 1.0
    with pytest.raises(RuntimeError, match=r"\[from, to\) range.*from=2 > to=1"):
        x.uniform_(2, 1)
    with pytest.raises(NotImplementedError, match="dtype int64"):
        minigrad.zeros(2, dtype=minigrad.int64).uniform_(2, 1)  # the dtype first
    assert minigrad.ones(2).normal_(mean=minigrad.tensor(3)).shape == (2,)


# --------------------------------------------------------------------------- new, round, topk


def test_new_takes_a_variable_of_its_dtype_and_integer_variables_as_sizes() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32)
    with pytest.raises(TypeError, match="must have x's dtype \\(float32\\); got float64"):
        x.new(minigrad.tensor([1.0], dtype=minigrad.float64))
    assert x.new(minigrad.tensor([1.0], dtype=minigrad.float32)).tolist() == [1.0]
    assert x.new(minigrad.tensor(2), minigrad.tensor([3])).shape == (2, 3)
    with pytest.raises(TypeError, match="sizes must be ints"):
        x.new(minigrad.tensor(True), 2)


def test_round_of_integers_takes_no_decimals() -> None:
    ints = minigrad.tensor([1, 2])
    assert minigrad.round(ints).tolist() == [1, 2]
    with pytest.raises(NotImplementedError, match=r"round\(decimals=...\).*int64"):
        minigrad.round(ints, decimals=0)
    with pytest.raises(TypeError, match="'decimals'.*must be an int, but got NoneType"):
        minigrad.round(minigrad.ones(2), decimals=None)
    assert minigrad.tensor([1.25]).round(decimals=1).tolist() == [1.2]


def test_topk_checks_as_torch_does(real_torch) -> None:
    with pytest.raises(RuntimeError, match="topk does not support bool"):
        minigrad.tensor([True, False]).topk(1)
    with pytest.raises(TypeError, match="'k'.*must be an int"):
        minigrad.ones(3).topk(1.5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.topk(minigrad.tensor(False), -1, dim=2)
    for k in (0, 1):
        ours = minigrad.tensor(37).topk(k)
        theirs = real_torch.tensor(37).topk(k)
        assert ours.values.shape == tuple(theirs.values.shape) == ()
        assert ours.indices.item() == theirs.indices.item()


# --------------------------------------------------------------------------- std, var, prod


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.std(unbiased=False, keepdim=True),
        lambda x: x.var(unbiased=True, correction=None),
        lambda x: x.var(unbiased=None),
        lambda x: x.std(True, keepdim=True),
    ],
)
def test_std_and_var_overloads_refuse_what_torch_refuses(call) -> None:
    with pytest.raises(TypeError):
        call(minigrad.ones(2, 3))


def test_std_and_var_overloads_torch_accepts(real_torch) -> None:
    data = np.arange(6.0).reshape(2, 3)
    ours, theirs = minigrad.tensor(data), real_torch.from_numpy(data)
    calls = [
        lambda x: x.std(unbiased=False),
        lambda x: x.std(0, unbiased=False, keepdim=True),
        lambda x: x.var(dim=None, unbiased=False, keepdim=True),
        lambda x: x.var(correction=None, keepdim=True),
        lambda x: x.var(False),
        lambda x: x.var((0, 1), False, True),
    ]
    for call in calls:
        np.testing.assert_allclose(call(ours).numpy(), call(theirs).numpy(), rtol=1e-12)


def test_prod_with_dtype_bool_is_bool(real_torch) -> None:
    data = np.array([[1.5, 0.0], [2.0, 3.0]])
    ours, theirs = minigrad.tensor(data), real_torch.from_numpy(data)
    pairs = [
        (ours.prod(dtype=minigrad.bool), theirs.prod(dtype=real_torch.bool)),
        (ours.prod(0, dtype=minigrad.bool), theirs.prod(0, dtype=real_torch.bool)),
    ]
    for mine, other in pairs:
        assert mine.dtype == minigrad.bool
        np.testing.assert_array_equal(mine.numpy(), other.numpy())


# --------------------------------------------------------------------------- sub, subtract


def test_bool_subtraction_is_refused_before_alpha_is_read() -> None:
    for call in (lambda: minigrad.sub(minigrad.tensor([1]), True, alpha=-1),
                 lambda: minigrad.tensor([1.0]).sub(minigrad.tensor([True]), alpha=True),
                 lambda: minigrad.subtract(2, True, alpha=float("nan"))):
        with pytest.raises(NotImplementedError, match="Subtraction.*bool"):
            call()


def test_subtract_takes_alpha_by_position_only_after_a_number() -> None:
    assert minigrad.tensor([-38]).subtract_(2, -1).tolist() == [-36]
    with pytest.raises(TypeError, match="both numbers"):
        minigrad.subtract(minigrad.ones(2), 2, minigrad.ones(2))
    with pytest.warns(UserWarning, match="deprecated"):
        assert minigrad.sub(minigrad.ones(2), 2, minigrad.ones(2)).tolist() == [-1.0, -1.0]


@pytest.mark.parametrize("name", ["sub", "subtract", "mul", "maximum", "minimum"])
def test_a_list_is_not_a_variable_operand(name: str) -> None:
    with pytest.raises(TypeError, match="argument 'other'.*list"):
        getattr(minigrad.ones(2), name)([1, 2])


# --------------------------------------------------------------------------- odds and ends


def test_masked_fill_refuses_a_value_the_dtype_cannot_hold() -> None:
    mask = minigrad.tensor([True, False])
    for x, value in [(minigrad.tensor([1, 2]), float("nan")), (minigrad.tensor([1, 2]), 1e30),
                     (minigrad.ones(2, dtype=minigrad.float32), 1e300)]:
        with pytest.raises(RuntimeError, match="cannot be converted to type.*without overflow"):
            x.masked_fill(mask, value)
    assert minigrad.tensor([1, 2]).masked_fill(mask, -2.5).tolist() == [-2, 2]
    assert minigrad.ones(2).masked_fill(mask, float("-inf")).tolist()[0] == float("-inf")


def test_a_diagonal_is_an_int_or_a_one_element_integer_variable() -> None:
    x = minigrad.ones(2, 2)
    assert x.triu(minigrad.tensor(1)).tolist() == [[0.0, 1.0], [0.0, 0.0]]
    with pytest.raises(TypeError, match="'diagonal'.*must be an int"):
        x.triu(minigrad.tensor(1.0))
    with pytest.raises(TypeError, match="'diagonal'.*must be an int"):
        x.tril(True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        minigrad.ones(3).tril_(minigrad.tensor(9))


def test_where_takes_torchs_keywords() -> None:
    condition, a, b = minigrad.tensor([True, False]), minigrad.ones(2), minigrad.zeros(2)
    assert minigrad.where(condition, input=a, other=b).tolist() == [1.0, 0.0]
    assert a.where(condition, other=b).tolist() == [1.0, 0.0]
    with pytest.raises(TypeError):
        a.where(condition, y=b)


def test_size_and_split_check_in_torchs_order() -> None:
    with pytest.raises(TypeError, match="'dim'.*must be an int, not tuple"):
        minigrad.tensor(1.0).size(dim=())
    with pytest.raises(IndexError, match="no dimensions"):
        minigrad.tensor(1.0).size(0)
    with pytest.raises(RuntimeError, match="split_size be non-negative"):
        minigrad.ones(1).split(-1, dim=3)


def test_the_judge_allows_the_documented_float_width_departure() -> None:
    import fuzz_torch

    returned = fuzz_torch.Outcome(value=1)
    widths = fuzz_torch.Outcome(error=RuntimeError(
        "expected m1 and m2 to have the same dtype, but got: double != float"))
    kinds = fuzz_torch.Outcome(error=RuntimeError(
        "expected m1 and m2 to have the same dtype, but got: long int != float"))
    assert fuzz_torch.accident(returned, widths) is not None
    assert fuzz_torch.accident(returned, kinds) is None

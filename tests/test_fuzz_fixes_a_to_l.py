"""Fixes from the torch cross-check fuzz (tests/fuzz_torch.py), APIs a to l: the same
exception class as PyTorch where it refuses a call, the same values where it accepts one.

Each test asserts the class and the message without PyTorch; the value tests compare with
it through the `real_torch` fixture (skipped where it is not installed).
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

FLOATS = minigrad.tensor([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]])


# --------------------------------------------------------------------------- bitwise_not


def test_bitwise_not_of_floats_is_not_implemented() -> None:
    for call in (lambda: FLOATS.bitwise_not(), lambda: minigrad.bitwise_not(FLOATS),
                 lambda: FLOATS.clone().bitwise_not_()):
        with pytest.raises(NotImplementedError, match="bool and integer Variables.*float64"):
            call()


def test_bitwise_or_takes_a_number_first_and_refuses_floats() -> None:
    with pytest.raises(NotImplementedError, match="bool and integer Variables"):
        minigrad.bitwise_or(1.5, FLOATS)
    ints = minigrad.tensor([1, 2, 4])
    assert minigrad.bitwise_or(1, ints).tolist() == [1, 3, 5]


# ------------------------------------------------------------- broadcast_to, expand


def test_broadcast_to_function_takes_one_size_tuple() -> None:
    x = minigrad.tensor([1.0, 2.0])
    assert minigrad.broadcast_to(x, (2, 2)).shape == (2, 2)
    assert minigrad.broadcast_to(x, [3, 2]).shape == (3, 2)
    with pytest.raises(TypeError, match=r"'size' \(position 2\) must be a tuple of ints.*int 2"):
        minigrad.broadcast_to(x, 2)
    with pytest.raises(TypeError, match="size"):
        minigrad.broadcast_to(x)
    with pytest.raises(TypeError, match="too many positional arguments"):
        minigrad.broadcast_to(x, 1, 2)


def test_expand_and_broadcast_to_methods_need_a_size() -> None:
    x = minigrad.tensor([1.0, 2.0])
    assert x.broadcast_to(2, 2).shape == (2, 2)
    assert x.expand((3, 2)).shape == (3, 2)
    for method in ("expand", "broadcast_to"):
        with pytest.raises(TypeError, match=f"{method}\\(\\) missing 1 required .*'size'"):
            getattr(x, method)()


# --------------------------------------------------------------------------- flip


def test_flip_function_takes_one_dims_tuple() -> None:
    x = minigrad.tensor([[1.0, 2.0, 3.0]])
    assert minigrad.flip(x, (1,)).tolist() == [[3.0, 2.0, 1.0]]
    assert minigrad.flip(x, dims=[1]).tolist() == [[3.0, 2.0, 1.0]]
    with pytest.raises(TypeError, match=r"'dims' \(position 2\) must be a tuple of ints"):
        minigrad.flip(x, 1)
    with pytest.raises(TypeError, match="too many positional arguments"):
        minigrad.flip(x, 0, 1)


def test_flip_method_dims_and_no_dims() -> None:
    x = minigrad.tensor([[1.0, 2.0, 3.0]])
    assert x.flip(()).tolist() == x.tolist()  # no dims: nothing flipped
    assert x.flip(0, 1).tolist() == [[3.0, 2.0, 1.0]]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'dims'"):
        x.flip()
    with pytest.raises(TypeError, match="ints, or one tuple of them"):
        x.flip(0, (1,))


# ------------------------------------------------------------- log_softmax, logsumexp


def test_log_softmax_refuses_integers_and_checks_the_dim() -> None:
    with pytest.raises(NotImplementedError, match="log_softmax of a int64 Variable.*dtype="):
        minigrad.tensor([1, 2]).log_softmax(-1)
    with pytest.raises(NotImplementedError, match="bool"):
        minigrad.log_softmax(minigrad.tensor([True, False]), 0)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        minigrad.tensor(1.0).log_softmax(1)
    with pytest.raises(TypeError, match="'dim' .* must be an int, but got tuple"):
        minigrad.log_softmax(FLOATS, (0, 1))
    empty = minigrad.tensor(np.zeros(0, dtype=np.int64))
    assert minigrad.log_softmax(empty, 0).dtype == minigrad.int64


def test_log_softmax_with_dtype_matches_torch(real_torch) -> None:
    values = np.array([[1, 2, 3], [0, -1, 5]])
    ours = minigrad.tensor(values).log_softmax(1, dtype=minigrad.float64)
    theirs = real_torch.tensor(values).log_softmax(1, dtype=real_torch.float64)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    scalar = minigrad.tensor(1.5).log_softmax(-1)
    assert scalar.item() == real_torch.tensor(1.5).log_softmax(-1).item()


def test_logsumexp_needs_a_dim_and_a_flag() -> None:
    with pytest.raises(TypeError, match="'dim' .* got None"):
        minigrad.logsumexp(FLOATS, None)
    with pytest.raises(RuntimeError, match=r"dim=\(\) .* without keepdim"):
        FLOATS.logsumexp(())
    with pytest.raises(TypeError, match="'keepdim' must be True or False, but got str"):
        FLOATS.logsumexp(0, keepdim="abc")
    assert minigrad.tensor(2.0).logsumexp(()).item() == 2.0  # 0-d: nothing to refuse


# ------------------------------------------------------------- argmax, argmin, amax


def test_argmax_and_argmin_refuse_bools_first() -> None:
    mask = minigrad.tensor([True, False])
    for name in ("argmax", "argmin"):
        with pytest.raises(RuntimeError, match=f"{name}\\(\\): does not support bool input"):
            getattr(minigrad, name)(mask, dim=5)  # the dtype before the dim, as PyTorch


def test_argmax_and_amax_of_empty_along_a_dim(real_torch) -> None:
    empty = np.zeros((0, 3))
    for name in ("argmax", "argmin", "amax", "amin"):
        ours = getattr(minigrad, name)(minigrad.tensor(empty), dim=1)
        theirs = getattr(real_torch, name)(real_torch.tensor(empty), dim=1)
        assert tuple(ours.shape) == tuple(theirs.shape)
        with pytest.raises(IndexError, match="to have non-zero size"):
            getattr(minigrad, name)(minigrad.tensor(empty), dim=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minigrad.amax(minigrad.tensor([]), dim=-4)
    with pytest.raises(RuntimeError, match="empty Variable"):
        minigrad.amax(minigrad.tensor(empty))


# --------------------------------------------------------------------------- index_add


def test_index_add_checks_in_pytorchs_order() -> None:
    x = minigrad.tensor([1.0, 2.0])
    source_int = minigrad.tensor([1])
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.index_add(3, minigrad.tensor([0]), source_int)  # before the dtype
    with pytest.raises(IndexError, match="supposed to be a vector"):
        x.index_add(0, minigrad.tensor([[0]]), source_int)
    with pytest.raises(RuntimeError, match="dtype of self"):
        x.index_add(0, minigrad.tensor([0]), source_int)
    with pytest.raises(TypeError, match=r"'source' \(position 3\) must be a Variable.*float"):
        minigrad.index_add(x, 0, minigrad.tensor([0]), 1.5)


# --------------------------------------------------------------------------- einsum


def test_einsum_sublist_form_matches_torch(real_torch) -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    ours = minigrad.einsum(minigrad.tensor(a), [0, 1], minigrad.tensor(b), [1, 2], [0, 2])
    theirs = real_torch.einsum(real_torch.tensor(a), [0, 1], real_torch.tensor(b), [1, 2], [0, 2])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    ours = minigrad.einsum(minigrad.tensor(a), [..., 30])
    theirs = real_torch.einsum(real_torch.tensor(a), [..., 30])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_einsum_errors() -> None:
    v = minigrad.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="must specify the equation string and at least one"):
        minigrad.einsum(True)
    with pytest.raises(ValueError, match=r"not within the valid range \[0, 52\); got 60"):
        minigrad.einsum(v, [60])
    with pytest.raises(TypeError, match="subscripts list holds ints .* got float"):
        minigrad.einsum(v, [1.5])
    with pytest.raises(TypeError, match="list of its subscripts .* got float"):
        minigrad.einsum(v, 1.5)
    with pytest.raises(RuntimeError, match="one entry has 2 values"):
        minigrad.einsum(v, minigrad.tensor([[0, 1]]))
    with pytest.raises(TypeError, match="expected a Variable as operand 1, but got float"):
        minigrad.einsum("i", 1.5)
    with pytest.raises(TypeError, match=r"'equation' \(position 1\) must be a string"):
        minigrad.einsum(1.5, v)


# ------------------------------------------------------------- isclose, allclose, equal


def test_isclose_and_allclose_check_like_pytorch() -> None:
    x = minigrad.tensor([1.0, 2.0])
    for name in ("isclose", "allclose"):
        close = getattr(minigrad, name)
        with pytest.raises(RuntimeError, match="float64 did not match bool"):
            close(x, minigrad.tensor([True, False]))
        with pytest.raises(TypeError, match="'rtol' .*must be a .*, but got (a )?Variable"):
            close(x, x, rtol=minigrad.tensor([0.1, 0.2]))
        with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero"):
            close(x, x, atol=-1.0)
        with pytest.raises(TypeError, match="'other' .*must be a Variable.*, but got tuple"):
            close(x, (0, 1))
        with pytest.raises(TypeError, match="'equal_nan' must be True or False"):
            close(x, x, equal_nan=minigrad.tensor(True))
    assert minigrad.isclose(x, x, rtol=minigrad.tensor(0.5)).tolist() == [True, True]
    assert minigrad.allclose(x, 1.0) is False  # a number for other: minigrad's departure


def test_equal_and_comparisons_refuse_lists() -> None:
    x = minigrad.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="'other' .* must be a Variable.*, but got list"):
        x.equal([1, 2])
    for name in ("eq", "gt", "ge", "lt", "le", "greater", "less_equal"):
        with pytest.raises(TypeError, match="argument 'other' .*must be a Variable"):
            getattr(x, name)((0, 1))
    for name in ("logical_and", "logical_or", "bitwise_and"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' .*must be"):
            getattr(minigrad.tensor([1, 2]), name)([1, 2])
    assert x.gt(1.5).tolist() == [False, True]


# --------------------------------------------------------------------------- products


def test_products_refuse_lists_and_mixed_dtypes() -> None:
    m = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="'other' must be a Variable, but got tuple"):
        minigrad.dot(minigrad.tensor([1.0, 2.0]), (0, 1))
    with pytest.raises(TypeError, match="'mat2' must be a Variable, but got list"):
        minigrad.addmm(m, m, [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(TypeError, match="'vec2' must be a Variable"):
        minigrad.ger(minigrad.tensor([1.0]), [1, 2])
    with pytest.raises(RuntimeError, match="same dtype, but got int64 and float64"):
        minigrad.dot(minigrad.tensor([1, 2]), minigrad.tensor([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="bmm is not implemented for bool"):
        minigrad.bmm(minigrad.tensor([[[True]]]), minigrad.tensor([[[1.0]]]))
    with pytest.raises(TypeError, match="'beta' must be a number, but got a Variable"):
        minigrad.addmm(m, m, m, beta=minigrad.tensor([1.0, 2.0]))


# --------------------------------------------------------------------------- keyword flags


def test_keyword_flags_must_be_bools() -> None:
    with pytest.raises(TypeError, match="Variable.sum\\(\\): argument 'keepdim' must be True"):
        FLOATS.sum(0, keepdim="abc")
    index = minigrad.tensor([[0, 1, 0]])
    with pytest.raises(TypeError, match="'sparse_grad' must be True or False, but got a Var"):
        FLOATS.gather(1, index, sparse_grad=minigrad.tensor(1))
    assert FLOATS.sum(0, keepdim=True).shape == (1, 3)


def test_invert_operator_of_floats_is_a_type_error() -> None:
    # PyTorch: ~x says TypeError, x.bitwise_not() NotImplementedError.
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) works on bool and integer"):
        _ = ~FLOATS
    assert (~minigrad.tensor([True, False])).tolist() == [False, True]


def test_einsum_sublists_that_are_no_lists() -> None:
    v = minigrad.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="list of its subscripts .* got Variable"):
        minigrad.einsum(v, minigrad.tensor(0.5))  # a 0-d Variable is no list
    with pytest.raises(TypeError, match="list of its subscripts .* got float nan"):
        minigrad.einsum(v, [0], float("nan"))  # the output's list too
    with pytest.raises(ValueError, match="valid range"):
        minigrad.einsum(v, [-0.25])  # the range first, as PyTorch
    assert minigrad.einsum(v, minigrad.tensor([0])).tolist() == [1.0, 2.0]


# ------------------------------------------------------------- second round: item, float


def test_item_of_several_elements_is_a_runtime_error_and_float_a_value_error() -> None:
    with pytest.raises(RuntimeError, match=r"a Variable with 6 elements cannot be converted"):
        FLOATS.item()
    with pytest.raises(RuntimeError, match="0 elements"):
        minigrad.tensor([]).item()
    with pytest.raises(ValueError, match=r"only one element.*float\(v\[0\]\)"):
        float(FLOATS)
    with pytest.raises(ValueError, match=r"only one element.*int\(v\[0\]\)"):
        int(minigrad.tensor([1, 2]))
    assert float(minigrad.tensor([2.5])) == 2.5


# ------------------------------------------------------------------------ add, div


def test_add_and_div_refuse_lists_for_other() -> None:
    for call in (lambda: FLOATS.add([1, 2, 3]), lambda: minigrad.add(FLOATS, (1, 2, 3)),
                 lambda: FLOATS.div([1, 2, 3]), lambda: FLOATS.clone().add_([1, 2, 3])):
        with pytest.raises(TypeError, match="'other'.*must be a Variable or a number"):
            call()


def test_add_takes_the_old_positional_alpha_with_a_warning() -> None:
    x = minigrad.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match=r"add\(x, alpha, other\) is deprecated"):
        assert x.add(2, minigrad.tensor([3.0, 4.0])).tolist() == [7.0, 10.0]
    with pytest.warns(UserWarning):
        x.add_(-0.5, minigrad.tensor([2.0, 2.0]))  # old optimizer code: p.add_(-lr, grad)
    assert x.tolist() == [0.0, 1.0]
    with pytest.raises(TypeError, match="takes no more arguments"):
        x.add(2, x, alpha=3)
    with pytest.raises(TypeError, match="alpha must be a number.*shape \\(2,\\)"):
        x.add(x, x)
    with pytest.raises(TypeError, match="'alpha'"):
        x.add(1.0, alpha=minigrad.tensor([2.0]))


def test_rounded_division_of_masks_and_of_integers() -> None:
    masks = minigrad.tensor([True, False])
    for mode in ("trunc", "floor"):
        with pytest.raises(NotImplementedError, match=f'"div_{mode}_cpu" not implemented'):
            masks.div(True, rounding_mode=mode)
    ints = minigrad.tensor([7, -7, 6])
    assert ints.div(2, rounding_mode="trunc").dtype == minigrad.int64
    assert ints.div(2, rounding_mode="trunc").tolist() == [3, -3, 3]
    assert ints.div(2, rounding_mode="floor").tolist() == [3, -4, 3]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ints.div(0, rounding_mode="floor")


def test_rounded_division_matches_torch(real_torch) -> None:
    rng = np.random.default_rng(35)
    a, b = rng.integers(-50, 50, size=300), rng.integers(1, 9, size=300) * rng.choice([-1, 1], 300)
    for mode in ("trunc", "floor"):
        ours = minigrad.tensor(a).div(minigrad.tensor(b), rounding_mode=mode)
        theirs = real_torch.tensor(a).div(real_torch.tensor(b), rounding_mode=mode)
        assert ours.dtype == minigrad.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_zero_dim_operands_do_not_widen_the_result(real_torch) -> None:
    """PyTorch's promotion: a 0-d operand of the same category keeps the other's dtype."""
    matrix = np.array([[0.5, -1.25], [2.0, 3.5]], dtype=np.float32)
    ints = np.array([1, 2], dtype=np.int32)
    cases = [
        (matrix, np.array(2.0)),  # float32 with a 0-d float64
        (np.array(2.0), matrix),
        (ints, np.array(3, dtype=np.int64)),  # int32 with a 0-d int64
        (ints, np.array(1.5, dtype=np.float32)),  # a 0-d float raises the category
    ]
    for left, right in cases:
        # div of two integer operands gives the default float dtype: float64 in minigrad.
        names = ("add", "mul") if left.dtype.kind == right.dtype.kind == "i" else ("add", "div")
        for name in names:
            ours = getattr(minigrad, name)(minigrad.tensor(left), minigrad.tensor(right))
            theirs = getattr(real_torch, name)(
                real_torch.from_numpy(left), real_torch.from_numpy(right)
            )
            assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (name, left, right)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------- factories


def test_ranges_check_like_pytorch() -> None:
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        minigrad.arange(0, 5, 0)
    with pytest.raises(TypeError, match="a step needs both bounds"):
        minigrad.arange(6, step=2)
    for name in ("arange", "linspace", "logspace"):
        args = (0, 3) if name == "arange" else (0, 1, 3)
        with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for \'Bool\''):
            getattr(minigrad, name)(*args, dtype=minigrad.bool)
    with pytest.raises(RuntimeError, match="only supports 0-dimensional start and end"):
        minigrad.linspace(0, minigrad.tensor([1.0, 2.0]), 3)
    with pytest.raises(TypeError, match="steps must be an int.*float"):
        minigrad.linspace(0, minigrad.tensor([1.0, 2.0]), 0.5)  # steps is checked first
    with pytest.raises(TypeError, match="must be a number"):
        minigrad.arange(minigrad.tensor([3]))
    assert minigrad.arange(True).tolist() == [0]
    assert minigrad.linspace(0, 1, minigrad.tensor(3)).tolist() == [0.0, 0.5, 1.0]
    assert minigrad.logspace(0, 2, minigrad.tensor(3)).tolist() == [1.0, 10.0, 100.0]


def test_eye_reads_0d_integer_variables_and_checks_n_first() -> None:
    assert minigrad.eye(minigrad.tensor(2), m=minigrad.tensor(3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        minigrad.eye(-1, m=minigrad.tensor(-12))
    with pytest.raises(TypeError, match="'m' must be an int"):
        minigrad.eye(-1, m=minigrad.tensor(0.5))


def test_fill_values_are_numbers_or_0d_variables() -> None:
    x = minigrad.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'fill_value'|fill_value must be a number"):
        minigrad.full_like(x, minigrad.tensor([2.5]))
    assert minigrad.full_like(x, minigrad.tensor(2.5)).tolist() == [2.5, 2.5]
    with pytest.raises(RuntimeError, match="only supports 0-dimension value tensor.*1 dim"):
        x.fill_(minigrad.tensor([3.0]))
    with pytest.raises(TypeError, match="fill_.*tuple"):
        x.fill_((0, 1))
    with pytest.raises(TypeError, match="copy_ and fill_ expect.*list"):
        x.copy_([1.0, 2.0])
    ints = minigrad.tensor([1, 2])
    for value in (float("nan"), float("inf"), 1e30, 2**63):
        with pytest.raises(RuntimeError, match="cannot be converted to type int64"):
            ints.fill_(value)
    with pytest.raises(OverflowError, match="too big"):
        ints.fill_(2**70)
    assert ints.fill_(2.7).tolist() == [2, 2]
    assert minigrad.tensor([True]).fill_(float("nan")).tolist() == [True]


# -------------------------------------------------------------------- clamp, lerp, cumsum


def test_clamp_takes_both_bounds_as_variables_or_both_as_numbers() -> None:
    x = minigrad.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="both Variables or both numbers"):
        x.clamp(min=minigrad.tensor([0.5]), max=1)
    with pytest.raises(TypeError, match="'min' .* must be a Variable, a number or None.*tuple"):
        x.clamp(min=(0, 1))
    masks = minigrad.tensor([True, False])
    for kwargs, name in (({"min": True}, "clamp_min"), ({"max": True}, "clamp_max"),
                         ({"min": True, "max": True}, "clamp")):
        with pytest.raises(NotImplementedError, match=f'"{name}_scalar_cpu" not implemented'):
            masks.clamp(**kwargs)
    # A 0-d Variable beside a number is a number (it gets no gradient).
    assert x.clamp(minigrad.tensor(1.5), 3).tolist() == [1.5, 2.0]


def test_clamp_dtype_matches_torch(real_torch) -> None:
    ints = np.array([[5, -31], [-23, 18]])
    low = np.array([[0.7], [1.75]], dtype=np.float32)
    ours = minigrad.tensor(ints).clamp(min=minigrad.tensor(low))
    theirs = real_torch.tensor(ints).clamp(min=real_torch.from_numpy(low))
    assert ours.dtype == minigrad.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    floats = np.array([0.25, -1.5, 2.0], dtype=np.float32)
    ours = minigrad.tensor(floats).clamp(min=-1, max=minigrad.tensor(np.array(1, dtype=np.int64)))
    theirs = real_torch.from_numpy(floats).clamp(min=-1, max=real_torch.tensor(1))
    assert ours.dtype == minigrad.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_clamp_gradients_with_variable_bounds() -> None:
    x = minigrad.tensor([0.3, -2.0, 5.0, 1.5], requires_grad=True)
    low = minigrad.tensor(0.0, requires_grad=True)
    high = minigrad.tensor([1.0, 1.0, 1.0, 2.0], requires_grad=True)
    assert minigrad.autograd.gradcheck(lambda a, b, c: a.clamp(b, c), (x, low, high))


def test_lerp_takes_a_bool_weight() -> None:
    start, end = minigrad.tensor([1.0, 2.0]), minigrad.tensor([3.0, 4.0])
    assert start.lerp(end, True).tolist() == [3.0, 4.0]
    assert start.lerp(end, False).tolist() == [1.0, 2.0]


def test_integer_0d_variables_name_dims() -> None:
    x = minigrad.tensor([[1, 2], [3, 4]])
    assert x.cumsum(minigrad.tensor(1)).tolist() == [[1, 3], [3, 7]]
    assert x.sum(minigrad.tensor(0)).tolist() == [4, 6]
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.diagonal(dim2=minigrad.tensor(32))
    with pytest.raises(TypeError, match="'dim'"):
        x.cumsum(minigrad.tensor(1.0))


def test_cumsum_into_bools_is_not_implemented_after_the_dim_check() -> None:
    x = minigrad.tensor([[1, 2], [3, 4]])
    with pytest.raises(NotImplementedError, match='"cumsum_out_cpu" not implemented for'):
        x.cumsum(1, dtype=minigrad.bool)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.cumsum(2, dtype=minigrad.bool)


# ------------------------------------------------------------ all, any, logsumexp, bernoulli


def test_all_and_any_with_no_dims_keep_the_shape(real_torch) -> None:
    values = np.array([[1.0, 0.0], [0.0, 0.0]])
    for name in ("all", "any"):
        for keepdim in (False, True):
            ours = getattr(minigrad.tensor(values), name)(dim=(), keepdim=keepdim)
            theirs = getattr(real_torch.tensor(values), name)(dim=(), keepdim=keepdim)
            assert ours.shape == tuple(theirs.shape) == (2, 2)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_logsumexp_with_no_dims_and_of_empty_inputs(real_torch) -> None:
    empty = np.zeros((2, 0), dtype=np.float32)
    for dim in ((), 1):
        ours = minigrad.tensor(empty).logsumexp(dim)
        theirs = real_torch.from_numpy(empty).logsumexp(dim)
        assert ours.dtype == minigrad.float32 and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    values = np.array([[1.0, 2.0]])
    ours = minigrad.tensor(values).logsumexp((), keepdim=True)
    theirs = real_torch.tensor(values).logsumexp((), keepdim=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="dim=\\(\\) .* without keepdim"):
        minigrad.tensor(values).logsumexp(())


def test_bernoulli_of_an_empty_input_of_any_dtype() -> None:
    for dtype in (minigrad.bool, minigrad.int64):
        drawn = minigrad.zeros(2, 0, dtype=dtype).bernoulli()
        assert drawn.shape == (2, 0) and drawn.dtype == dtype
    with pytest.raises(NotImplementedError, match="dtype bool are not implemented"):
        minigrad.tensor([True]).bernoulli()

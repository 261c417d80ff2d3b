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
    with pytest.raises(RuntimeError, match=r"dim=\(\) names no dimension"):
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

"""Logical and bitwise ops (minigrad/ops/logical.py) against NumPy and PyTorch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad

VALUES = st.lists(st.integers(-3, 3), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(VALUES, VALUES.map(lambda v: v[:1]))
def test_operators_on_masks_and_integers_match_numpy(left, right) -> None:
    a, b = np.array(left), np.array(right)
    x, y = minigrad.tensor(a), minigrad.tensor(b)
    for mask_x, mask_y in (((x > 0), (y > 0)), (x, y)):
        raw_x, raw_y = mask_x.numpy(), mask_y.numpy()
        np.testing.assert_array_equal((mask_x & mask_y).numpy(), raw_x & raw_y)
        np.testing.assert_array_equal((mask_x | mask_y).numpy(), raw_x | raw_y)
        np.testing.assert_array_equal((mask_x ^ mask_y).numpy(), raw_x ^ raw_y)
        np.testing.assert_array_equal((~mask_x).numpy(), ~raw_x)
    np.testing.assert_array_equal(minigrad.logical_and(x, y).numpy(), np.logical_and(a, b))
    np.testing.assert_array_equal(minigrad.logical_or(x, y).numpy(), np.logical_or(a, b))
    np.testing.assert_array_equal(minigrad.logical_xor(x, y).numpy(), np.logical_xor(a, b))
    np.testing.assert_array_equal(minigrad.logical_not(x).numpy(), np.logical_not(a))


def test_a_plain_value_on_the_left_and_in_place_forms() -> None:
    mask = minigrad.tensor([True, False])
    assert (True & mask).tolist() == [True, False]
    assert (False | mask).tolist() == [True, False]
    mask &= minigrad.tensor([False, False])
    assert mask.tolist() == [False, False]
    counts = minigrad.tensor([6, 3])
    counts.bitwise_or_(minigrad.tensor([1, 4]))
    assert counts.tolist() == [7, 7]


def test_floats_have_no_bits_but_have_logical_ops() -> None:
    x = minigrad.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="bool and integer Variables, but got dtype"):
        _ = x & x
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) works on bool and integer"):
        _ = ~x
    with pytest.raises(NotImplementedError, match=r"~ \(bitwise_not\) works on bool and integer"):
        x.bitwise_not()
    assert minigrad.logical_not(x).tolist() == [False, True, False]
    assert not minigrad.logical_and(x, x).requires_grad


def test_shapes_that_do_not_broadcast_are_named() -> None:
    with pytest.raises(RuntimeError, match=r"shapes \(2,\) and \(3,\) cannot be broadcast"):
        minigrad.tensor([True, False]) & minigrad.tensor([True, False, True])


def test_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    data = [-1.0, 0.5, 2.0, 0.0]
    results = []
    for library in (minigrad, torch):
        x = library.tensor(data)
        integers = library.tensor([6, 3, 5, 0])
        results.append(
            [
                ((x > 0) & (x < 1)).tolist(),
                ((x > 1) | (x < 0)).tolist(),
                ((x > 0) ^ (x > 1)).tolist(),
                (~(x > 0)).tolist(),
                (integers & 3).tolist(),
                (~integers).tolist(),
                library.logical_and(x, integers).tolist(),
                library.logical_xor(x, x > 1).tolist(),
                library.bitwise_xor(integers, 1).tolist(),
            ]
        )
        with pytest.raises(NotImplementedError):
            _ = x & x
        with pytest.raises(TypeError):
            _ = ~x
    assert results[0] == results[1]

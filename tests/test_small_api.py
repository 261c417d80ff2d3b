"""The small conveniences of the public API, each checked against its longer spelling."""

import numpy as np
import pytest

import minigrad
from minigrad import Variable

FUNCTIONS = [
    ("exp", lambda v: v.exp()),
    ("log", lambda v: v.log()),
    ("tanh", lambda v: v.tanh()),
    ("sigmoid", lambda v: v.sigmoid()),
    ("relu", lambda v: v.relu()),
    ("sqrt", lambda v: v.sqrt()),
]


@pytest.mark.parametrize(("name", "method"), FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_module_functions_equal_the_methods(name: str, method) -> None:
    x = Variable([0.5, 1.5, 2.0], requires_grad=True)
    np.testing.assert_allclose(getattr(minigrad, name)(x).data, method(x).data)
    assert getattr(minigrad, name)(x).grad_fn is not None


def test_module_functions_for_shapes_and_matrices() -> None:
    a = Variable(np.arange(6.0).reshape(2, 3))
    b = Variable(np.ones((3, 2)))
    np.testing.assert_array_equal(minigrad.matmul(a, b).data, a.data @ b.data)
    np.testing.assert_allclose(minigrad.softmax(a, 1).data.sum(axis=1), [1.0, 1.0])
    np.testing.assert_allclose(minigrad.log_softmax(a, 1).data, np.log(minigrad.softmax(a, 1).data))
    assert minigrad.reshape(a, (3, 2)).shape == (3, 2)
    assert minigrad.transpose(a, 0, 1).shape == (3, 2)
    assert minigrad.unsqueeze(a, 0).shape == (1, 2, 3)
    assert minigrad.squeeze(minigrad.unsqueeze(a, 0)).shape == (2, 3)


def test_sizes_lengths_and_conversions() -> None:
    v = Variable(np.zeros((2, 3)))
    assert v.numel() == 6 and v.dim() == 2 and len(v) == 2
    assert Variable("hello").numel() == 1 and len(Variable("hello")) == 5
    assert float(Variable(2.5)) == 2.5 and int(Variable(7)) == 7
    assert bool(Variable(1.0)) and not bool(Variable(0.0))
    assert bool(Variable("text")) and not bool(Variable(""))
    with pytest.raises(RuntimeError, match="no elements"):
        bool(Variable(np.zeros(0)))


def test_comparisons_give_bool_variables_outside_the_graph() -> None:
    x = Variable([1.0, 2.0, 3.0], requires_grad=True)
    assert (x <= 2).tolist() == [True, True, False]
    assert (x >= 2).tolist() == [False, True, True]
    assert not (x > 1).requires_grad
    assert (Variable("a") == "a").item() and (Variable("a") != Variable("b")).item()
    assert (x == None) is False and (x != None) is True  # noqa: E711
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x < Variable([1.0, 2.0])  # noqa: B015


def test_pow_and_matmul_methods_match_the_operators() -> None:
    a = Variable([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    np.testing.assert_array_equal(a.pow(2).data, (a**2).data)
    np.testing.assert_array_equal(a.matmul(a).data, (a @ a).data)


def test_detach_in_place_cuts_the_graph() -> None:
    x = Variable([1.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad

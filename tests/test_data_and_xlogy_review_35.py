"""A fresh reviewer's findings on issue 35 (PyTorch code run as written), each as PyTorch
2.14 does it: xlogy's gradient at x = 0, and the PyTorch spellings old code calls on
x.data (size(0), nonzero(), squeeze(1), argsort(descending=), put, device.type)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad


def _grads(function, x_values, y_values):
    x = minigrad.tensor(x_values, dtype=minigrad.float64, requires_grad=True)
    y = minigrad.tensor(y_values, dtype=minigrad.float64, requires_grad=True)
    function(x, y).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


def test_xlogy_gradient_in_x_is_log_y_at_x_zero() -> None:
    # d/dx x log y = log y everywhere, x = 0 included; 0 where x = 0 and y <= 0 (PyTorch).
    grad_x, grad_y = _grads(minigrad.xlogy, [0.0, 0.0, 2.0], [0.2, 0.0, 3.0])
    np.testing.assert_allclose(grad_x, [math.log(0.2), 0.0, math.log(3.0)])
    np.testing.assert_allclose(grad_y[[0, 2]], [0.0, 2.0 / 3.0])
    grad_x, _ = _grads(minigrad.special.xlog1py, [0.0, 0.0, 2.0], [0.2, -1.0, 3.0])
    np.testing.assert_allclose(grad_x, [math.log1p(0.2), 0.0, math.log1p(3.0)])


def test_beta_log_prob_gradient_at_concentration_one() -> None:
    # d/da log Beta(x; a, b) = log x - digamma(a) + digamma(a + b): 0.29603 at (0.3; 1, 2).
    a = minigrad.tensor(1.0, dtype=minigrad.float64, requires_grad=True)
    b = minigrad.tensor(2.0, dtype=minigrad.float64)
    minigrad.distributions.Beta(a, b).log_prob(minigrad.tensor(0.3, dtype=minigrad.float64)
                                               ).backward()
    euler = 0.5772156649015329
    expected = math.log(0.3) - (-euler) + (1.5 - euler)  # digamma(1), digamma(3)
    assert a.grad.item() == pytest.approx(expected, rel=1e-9)


def test_pytorch_spellings_on_data() -> None:
    x = minigrad.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]])
    data = x.data
    assert data.size(0) == 2 and data.size(-1) == 3 and data.size() == (2, 3)
    assert data.size == 6 and np.size(data) == 6  # NumPy's count still reads as before
    assert x.new(x.size()).shape == (2, 3) and data.new(data.size()).shape == (2, 3)
    assert data.nonzero().tolist() == [[0, 0], [0, 2], [1, 1], [1, 2]]
    assert [part.tolist() for part in np.nonzero(data)] == [[0, 0, 1, 1], [0, 2, 1, 2]]
    assert data.squeeze(1).shape == (2, 3)  # PyTorch leaves a dim that is not 1
    assert data.argsort(1, descending=True).tolist() == [[2, 0, 1], [2, 1, 0]]
    put = data.put(minigrad.tensor([0]), minigrad.tensor([9.0]))
    assert put.tolist()[0][0] == 9.0 and x.tolist()[0][0] == 1.0  # not in place
    assert data.device.type == "cpu"
    with pytest.raises(AttributeError, match="does not have PyTorch's Tensor.addcdiv_"):
        data.addcdiv_(1)


def test_size_is_a_tuple_that_sample_takes() -> None:
    size = minigrad.Size([4, 2])
    assert size == (4, 2) and isinstance(size, tuple)
    assert minigrad.distributions.Normal(0.0, 1.0).sample(size).shape == (4, 2)


def test_the_same_on_pytorch(real_torch) -> None:
    x = real_torch.tensor([0.0, 0.0, 2.0], dtype=real_torch.float64, requires_grad=True)
    y = real_torch.tensor([0.2, 0.0, 3.0], dtype=real_torch.float64)
    real_torch.xlogy(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [math.log(0.2), 0.0, math.log(3.0)])
    t = real_torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]])
    assert t.data.nonzero().tolist() == [[0, 0], [0, 2], [1, 1], [1, 2]]
    assert t.data.squeeze(1).shape == (2, 3)
    assert t.data.argsort(1, descending=True).tolist() == [[2, 0, 1], [2, 1, 0]]

"""copy.deepcopy of a leaf (and of a model) gives a leaf of its own: its gradients reach
the copy, never the original, as in PyTorch (found by lesson 15, which copies a CNN)."""

from __future__ import annotations

import copy

import numpy as np

import minigrad
from minigrad import nn


def test_a_copied_leaf_gets_its_own_gradients() -> None:
    w = nn.Parameter(minigrad.Variable(np.ones(3)))
    (w * 2).sum().backward()  # w now has its AccumulateGrad node
    w2 = copy.deepcopy(w)
    np.testing.assert_array_equal(w2.grad.numpy(), [2.0, 2.0, 2.0])  # .grad is copied too
    w.grad = None
    (w2 * 3).sum().backward()
    assert w.grad is None
    np.testing.assert_array_equal(w2.grad.numpy(), [5.0, 5.0, 5.0])
    (w * 4).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 4.0, 4.0])


def test_a_copied_model_trains_on_its_own() -> None:
    model = nn.Linear(2, 2)
    model(minigrad.ones(1, 2)).sum().backward()
    twin = copy.deepcopy(model)
    model.zero_grad()
    twin.zero_grad()
    twin(minigrad.ones(1, 2)).sum().backward()
    assert model.weight.grad is None
    assert twin.weight.grad is not None
    assert twin.weight._accumulator().variable is twin.weight

"""The last findings of the torch cross-check fuzz (issue 35), each as PyTorch 2.14 does it:
checked without PyTorch by class and message, and against it where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad


def test_integers_to_a_negative_power_are_refused_even_when_empty() -> None:
    for x in (minigrad.tensor([2, 3]), minigrad.tensor([], dtype=minigrad.bool)):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers.*double"):
            minigrad.pow(x, -1)
    np.testing.assert_allclose(minigrad.pow(minigrad.tensor([2.0, 4.0]), -1).numpy(), [0.5, 0.25])


def test_repeat_interleave_of_a_0d_variable_along_a_dim_is_refused() -> None:
    with pytest.raises(IndexError, match="0-d Variable has no dim 0"):
        minigrad.tensor(3).repeat_interleave(2, dim=0)
    np.testing.assert_array_equal(minigrad.tensor(3).repeat_interleave(2).numpy(), [3, 3])


def test_axis_beside_dim_is_refused_and_alone_is_dim() -> None:
    x = minigrad.ones(2, 3)
    np.testing.assert_array_equal(x.sum(axis=0).numpy(), [2.0, 2.0, 2.0])
    for reduce in (x.sum, x.mean):
        with pytest.raises(TypeError, match="both dim=None and axis=0"):
            reduce(dim=None, axis=0)


def test_a_tolerance_must_be_a_number_or_a_0d_variable() -> None:
    a = minigrad.ones(2)
    assert minigrad.allclose(a, a, atol=minigrad.tensor(0.5))
    with pytest.raises(TypeError, match="'atol'.* must be a"):
        minigrad.allclose(a, a, atol=minigrad.tensor([0.5]))


def test_the_same_calls_on_pytorch(real_torch) -> None:
    with pytest.raises(RuntimeError):
        real_torch.pow(real_torch.tensor([], dtype=real_torch.bool), -1)
    with pytest.raises(IndexError):
        real_torch.tensor(3).repeat_interleave(2, dim=0)
    with pytest.raises(TypeError):
        real_torch.ones(2, 3).sum(dim=None, axis=0)
    with pytest.raises(TypeError):
        real_torch.allclose(real_torch.ones(2), real_torch.ones(2),
                            atol=real_torch.tensor([0.5]))
    assert real_torch.allclose(real_torch.ones(2), real_torch.ones(2), atol=real_torch.tensor(0.5))

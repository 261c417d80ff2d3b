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


# The arguments PyTorch refuses when spelled out, even with their default's value: the
# same call, once with the argument left out (accepted) and once written (refused).
SPELLED_OUT = [
    (lambda m: m.arange(2, step=1), TypeError),
    (lambda m: m.arange(2, None, 1), TypeError),
    (lambda m: m.eye(3, m=None), TypeError),
    (lambda m: m.normal(m.ones(2), m.ones(2), dtype=None), TypeError),
    (lambda m: m.normal(m.ones(2), 1.0, None), TypeError),
    (lambda m: m.normal(m.ones(2), m.ones(2), requires_grad=False), TypeError),
    (lambda m: m.zeros(2).random_(None), TypeError),
    (lambda m: m.zeros(2).random_(to=None), TypeError),
    (lambda m: m.where(m.tensor(True), other=None), TypeError),
    (lambda m: m.sub(m.ones(2), 1, m.ones(2), alpha=1), TypeError),
    (lambda m: m.ones(2).subtract(2.0, -1, alpha=1), TypeError),
    (lambda m: m.tensor([[False, True]]).clip_(m.tensor([True]), m.tensor([[True, False]])),
     NotImplementedError),
    (lambda m: m.tensor(1.0).isclose(m.tensor(1.0), rtol=float("nan")), RuntimeError),
    (lambda m: m.multinomial(m.tensor([1, 2]), 1), RuntimeError),
    (lambda m: m.tensor([], dtype=m.float64).norm(p=float("inf")), RuntimeError),
    (lambda m: m.zeros(2, 0).norm(p=-1, dim=1), RuntimeError),
    (lambda m: m.zeros(2, dtype=m.int64).scatter(0, m.tensor([0]), value=float("nan")),
     RuntimeError),
    (lambda m: m.tensor([-24]).index_add(-1, m.tensor([0]), m.tensor([29]), alpha=float("nan")),
     RuntimeError),
    (lambda m: m.normal(m.tensor([], dtype=m.bool), m.tensor([], dtype=m.int64)), RuntimeError),
    (lambda m: m.bucketize(m.tensor([False]), m.tensor([True])), NotImplementedError),
    (lambda m: m.unique(m.zeros(3, 1, 0), dim=0), RuntimeError),
    (lambda m: m.full_like(m.zeros(0, dtype=m.bool), float("nan"), dtype=m.int64), RuntimeError),
    (lambda m: m.full((0,), float("nan"), dtype=m.int64), RuntimeError),
    (lambda m: m.zeros(2).new_full((0,), float("inf"), dtype=m.int32), RuntimeError),
    (lambda m: m.zeros(2).random_(None, None), TypeError),
    (lambda m: m.tensor([0.5]).polygamma_(m.tensor([[10]])), TypeError),
    (lambda m: m.tensor([[37], [32]]).index_fill(-1, m.tensor(0), float("nan")), RuntimeError),
]


@pytest.mark.parametrize("call, error", SPELLED_OUT)
def test_spelled_out_defaults_and_impossible_calls_are_refused(call, error) -> None:
    with pytest.raises(error):
        call(minigrad)


def test_left_out_defaults_still_work() -> None:
    np.testing.assert_array_equal(minigrad.arange(3).numpy(), [0, 1, 2])
    np.testing.assert_array_equal(minigrad.arange(0, 3, step=2).numpy(), [0, 2])
    assert minigrad.eye(2).shape == (2, 2)
    assert minigrad.normal(minigrad.zeros(3), minigrad.ones(3)).shape == (3,)
    assert minigrad.zeros(2).random_(0, None).shape == (2,)
    assert len(minigrad.where(minigrad.tensor([True, False]))) == 1
    assert minigrad.ones(2).subtract(2.0, alpha=1).tolist() == [-1.0, -1.0]
    assert minigrad.tensor([], dtype=minigrad.float64).norm(p=0).item() == 0.0
    assert minigrad.zeros(2, 0).norm(p=-1, dim=0).shape == (0,)
    assert minigrad.bucketize(True, minigrad.tensor([1.0, 2.0])).item() == 0
    assert minigrad.unique(minigrad.zeros(3, 0), dim=1).shape == (3, 0)


def test_arange_in_an_integer_dtype_steps_by_the_integer_step() -> None:
    # PyTorch counts with the float bounds, then steps from int(start) by int(step).
    cases = {(3, 0, -2.5): [3, 1], (0.7, 5, 1.5): [0, 1, 2], (0, 2, 0.5): [0, 0, 0, 0]}
    for (start, end, step), expected in cases.items():
        made = minigrad.arange(start, end, step, dtype=minigrad.int64)
        assert made.tolist() == expected and made.dtype == minigrad.int64


def test_arange_in_an_integer_dtype_agrees_with_pytorch(real_torch) -> None:
    for start, end, step in ((3, 0, -2.5), (0.7, 5, 1.5), (-0.7, 5, 1.5), (0, 5, 2.7)):
        ours = minigrad.arange(start, end, step, dtype=minigrad.int32).tolist()
        assert ours == real_torch.arange(start, end, step, dtype=real_torch.int32).tolist()


def test_alpha_takes_no_part_in_the_dtype() -> None:
    # PyTorch: float32 + 0.5 * mask is float32; float64 + 2.5 * float32 multiplies in float64.
    x = minigrad.tensor(1.5, dtype=minigrad.float32)
    assert minigrad.add(x, minigrad.tensor([[True]]), alpha=0.5).dtype == minigrad.float32
    wide = minigrad.tensor([0.1], dtype=minigrad.float64)
    narrow = minigrad.tensor([0.3], dtype=minigrad.float32)
    expected = 0.1 + 2.5 * float(np.float32(0.3))
    assert minigrad.add(wide, narrow, alpha=2.5).item() == expected
    with pytest.warns(UserWarning, match="deprecated"):  # add(x, alpha, other), other True
        assert minigrad.add(x, 0.5, True).dtype == minigrad.float32
    assert minigrad.tensor([True, False]).add(True, alpha=True).tolist() == [True, True]


@pytest.mark.parametrize("call, error", SPELLED_OUT)
def test_pytorch_refuses_the_same(real_torch, call, error) -> None:
    with pytest.raises(error):
        call(real_torch)

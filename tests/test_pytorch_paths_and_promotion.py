"""Issue 35, from the torch cross-check fuzz and the fresh review: integers with floats take
the floats' dtype (PyTorch's category rule, not NumPy's widening); unbind of a 0-d Variable
says so; torch.nn.utils.rnn.pad_sequence; torch.nn.modules.module's global hooks. Values
against real torch where installed (`real_torch`), behaviour without it."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.nn.utils.rnn import pad_sequence


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
@pytest.mark.parametrize("float_dtype", ["float32", "float64"])
def test_integers_with_floats_take_the_floats_dtype(op, float_dtype):
    ints, floats = np.array([1, 2, 3]), np.array([0.5, 1.5, 2.5], dtype=float_dtype)
    for a, b in ((ints, floats), (floats, ints)):
        result = getattr(minigrad, op)(minigrad.tensor(a), minigrad.tensor(b))
        assert result.dtype == np.dtype(float_dtype), (op, a.dtype, b.dtype)
        numpy_names = {"sub": "subtract", "mul": "multiply", "div": "true_divide", "pow": "power"}
        expected = getattr(np, numpy_names.get(op, op))(a, b)
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_promotion_matches_torch(real_torch):
    ints, floats = np.array([1, 2, 3]), np.array([0.5, 1.5, 2.5], dtype=np.float32)
    mine = minigrad.tensor(ints) * minigrad.tensor(floats)
    theirs = real_torch.from_numpy(ints) * real_torch.from_numpy(floats)
    assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch.")


def test_a_float32_gradient_stays_float32_through_an_integer_operand():
    w = minigrad.tensor([1.5, 2.5], dtype=minigrad.float32, requires_grad=True)
    (minigrad.tensor([2, 3]) * w).sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [2.0, 3.0]


def test_unbind_of_a_0d_variable_raises_pytorchs_index_error():
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        minigrad.tensor(3.0).unbind()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_pads_as_torch_and_passes_gradients(batch_first, side):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, 3)) for n in (2, 4, 1)]
    sequences = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    padded = pad_sequence(sequences, batch_first, -1.0, side)
    assert padded.shape == ((3, 4, 3) if batch_first else (4, 3, 3))
    rows = padded.detach().numpy() if batch_first else padded.detach().numpy().swapaxes(0, 1)
    for row, array in zip(rows, arrays):
        kept = row[: len(array)] if side == "right" else row[len(row) - len(array) :]
        np.testing.assert_array_equal(kept, array)
        assert (row == -1.0).sum() == (4 - len(array)) * 3
    padded.sum().backward()
    assert all(np.array_equal(s.grad.numpy(), np.ones_like(a)) for s, a in zip(sequences, arrays))


def test_pad_sequence_equals_torch(real_torch):
    arrays = [np.arange(6.0).reshape(2, 3), np.arange(3.0).reshape(1, 3)]
    mine = pad_sequence([minigrad.tensor(a) for a in arrays], batch_first=True)
    theirs = real_torch.nn.utils.rnn.pad_sequence(
        [real_torch.tensor(a) for a in arrays], batch_first=True
    )
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_pad_sequence_errors_and_the_packed_api_missing():
    with pytest.raises(RuntimeError, match="must agree after their first dimension"):
        pad_sequence([minigrad.zeros(2, 3), minigrad.zeros(2, 4)])
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])
    with pytest.raises(AttributeError, match="does not have `torch.nn.utils.rnn.pack_padded"):
        minigrad.nn.utils.rnn.pack_padded_sequence  # noqa: B018


def test_global_module_hooks_at_pytorchs_path():
    seen = []
    handle = minigrad.nn.modules.module.register_module_forward_hook(
        lambda module, args, output: seen.append(type(module).__name__)
    )
    net = minigrad.nn.Sequential(minigrad.nn.Linear(2, 2), minigrad.nn.ReLU())
    net(minigrad.randn(1, 2))
    handle.remove()
    net(minigrad.randn(1, 2))
    assert seen == ["Linear", "ReLU", "Sequential"]
    assert minigrad.nn.modules.module.Module is minigrad.nn.Module


def test_mean_of_integers_and_an_in_place_cast_raise_pytorchs_runtime_error():
    """From the torch cross-check fuzz: torch refuses both; minigrad used to return a
    float mean and raise TypeError for the cast."""
    with pytest.raises(RuntimeError, match="could not infer output dtype.*x.float"):
        minigrad.tensor([1, 2, 3]).mean()
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        (minigrad.tensor([1.0, 2.0]) > 1).mean()
    assert minigrad.tensor([1, 2, 4]).float().mean().item() == pytest.approx(7 / 3)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
        minigrad.tensor([1, 2]).div_(2.0)

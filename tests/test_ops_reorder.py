"""flip, roll, unbind, view_as, masked_select, tril, triu, diag; randperm and multinomial."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
from minigrad import Variable

RNG = np.random.default_rng(0)
MATRIX = RNG.standard_normal((3, 4))
MASK = MATRIX > 0.1

CASES = {
    "flip(0)": lambda m, x: x.flip(0),
    "flip((0, 1))": lambda m, x: x.flip((0, 1)),
    "m.flip(x, [1])": lambda m, x: m.flip(x, [1]),
    "roll(1, 1)": lambda m, x: x.roll(1, 1),
    "roll((1, -2), (0, 1))": lambda m, x: x.roll((1, -2), (0, 1)),
    "roll(5) flattened": lambda m, x: x.roll(5),
    "unbind(1) stacked": lambda m, x: m.stack(x.unbind(1), 0),
    "view_as": lambda m, x: x.view_as(m.zeros(4, 3)),
    "masked_select": lambda m, x: x.masked_select(m.tensor(MASK)),
    "tril": lambda m, x: x.tril(),
    "tril(1)": lambda m, x: m.tril(x, 1),
    "triu(-1)": lambda m, x: x.triu(-1),
    "diag of a matrix": lambda m, x: m.diag(x),
    "diag(1) of a matrix": lambda m, x: x.diag(1),
    "diag(-2) of a matrix": lambda m, x: x.diag(-2),
    "diag of a vector": lambda m, x: m.diag(x[0]),
    "diag(2) of a vector": lambda m, x: m.diag(x[1], 2),
}


@pytest.mark.parametrize("name", CASES)
def test_gradients_against_finite_differences(name: str) -> None:
    x = Variable(MATRIX.copy(), requires_grad=True)
    assert minigrad.gradcheck(lambda v: CASES[name](minigrad, v), (x,))
    assert minigrad.gradgradcheck(lambda v: CASES[name](minigrad, v), (x,))


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    x = Variable(MATRIX.copy(), requires_grad=True)
    t = torch.tensor(MATRIX.copy(), requires_grad=True)
    ours, theirs = CASES[name](minigrad, x), CASES[name](torch, t)
    weights = RNG.standard_normal(ours.shape)
    (ours * Variable(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.data, theirs.detach().numpy())
    np.testing.assert_allclose(x.grad.data, t.grad.numpy())


def test_float32_keeps_its_dtype() -> None:
    x = Variable(MATRIX.astype(np.float32), requires_grad=True)
    for name, case in CASES.items():
        assert case(minigrad, x).dtype == np.float32, name


def test_inplace_triangles() -> None:
    x = Variable(np.ones((3, 3)))
    x.triu_(1)
    assert x.data.sum() == 3.0


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda x: x.flip(), TypeError, "missing 1 required positional argument: .dims."),
        (lambda x: x.roll((1, 2), 0), RuntimeError, "same length"),
        (lambda x: x.masked_select(Variable([1, 0, 1, 0])), TypeError, "bool mask"),
        (lambda x: x[0].tril(), RuntimeError, "at least 2 dimensions"),
        (lambda x: x.reshape(1, 3, 4).diag(), RuntimeError, "1-D or 2-D"),
        (lambda x: x.flip(2), IndexError, "Dimension out of range"),
    ],
)
def test_bad_input_says_what_was_expected(call, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        call(Variable(MATRIX))


def test_randperm_is_a_seeded_permutation() -> None:
    minigrad.manual_seed(1)
    first = minigrad.randperm(10)
    minigrad.manual_seed(1)
    assert minigrad.randperm(10).tolist() == first.tolist()
    assert sorted(first.tolist()) == list(range(10)) and first.dtype == np.int64


def test_multinomial_draws_with_the_given_probabilities() -> None:
    minigrad.manual_seed(0)
    weights = Variable([0.2, 0.3, 0.5])
    draws = minigrad.multinomial(weights, 20000, replacement=True).data
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 20000, [0.2, 0.3, 0.5], atol=0.02)
    without = minigrad.multinomial(Variable([[1.0, 0.0, 2.0, 1.0]] * 50), 3).data
    assert without.shape == (50, 3)
    assert all(len(set(row)) == 3 and 1 not in row for row in without.tolist())
    with pytest.raises(RuntimeError, match="without replacement"):
        minigrad.multinomial(Variable([1.0, 0.0]), 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        minigrad.multinomial(Variable([1.0, -1.0]), 1)


def test_amp_names_run_pytorch_mixed_precision_code_unchanged() -> None:
    class Scale(minigrad.autograd.Function):
        @staticmethod
        @minigrad.amp.custom_fwd(device_type="cuda")
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @minigrad.amp.custom_bwd(device_type="cuda")
        def backward(ctx, grad):
            return grad * 2

    x = Variable([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with minigrad.autocast("cuda"):
            y = Scale.apply(x)
    y.backward()
    assert x.grad.tolist() == [2.0] and y.dtype == np.float64


def test_legacy_new_makes_a_tensor_like_self() -> None:
    x = Variable(np.zeros(2, dtype=np.float32))
    assert x.new(np.arange(3)).dtype == np.float32
    assert x.new(2, 3).shape == (2, 3)


CUDA_CASES = {
    "flip": lambda x: x.flip(0),
    "roll": lambda x: x.roll(1, 1),
    "tril": lambda x: x.tril(),
    "diag": lambda x: x.diag(),
    "unbind": lambda x: minigrad.stack(x.unbind(0)),
    "masked_select": lambda x: x.masked_select(x > 2),
    "view_as": lambda x: x.view_as(minigrad.zeros(3, 2)),
    "isclose": lambda x: x.isclose(x),
    "float": lambda x: x.float(),
}


@pytest.mark.parametrize("name", CUDA_CASES)
def test_on_cuda_each_op_is_right_or_says_it_is_not_supported_yet(name: str) -> None:
    pytest.importorskip("numba")
    data = np.arange(6.0).reshape(2, 3)
    on_cpu = CUDA_CASES[name](Variable(data))
    try:
        on_cuda = CUDA_CASES[name](Variable(data).to("cuda"))
    except NotImplementedError as error:
        assert name in str(error) and "not supported on cuda yet" in str(error)
        return
    assert on_cuda.device == "cuda"
    np.testing.assert_array_equal(on_cuda.cpu().data, on_cpu.data)

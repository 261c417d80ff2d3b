"""No silent divergence from PyTorch (issue 35, item 5): where PyTorch raises, minigrad
raises the same class; where PyTorch returns, minigrad returns the same shape, kind of
dtype (int64, bool, or a float: minigrad's default float is float64, PyTorch's float32)
and values.

Each case is a call written once for either library (`lib` is minigrad or torch). The
first test asserts minigrad's outcome, so it runs without PyTorch; the second runs the
same call on PyTorch, where installed, and asserts it agrees with the expectation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import minigrad


class Value(NamedTuple):
    """What a call that returns must give: a shape, a dtype kind and the values."""

    shape: tuple
    kind: str
    values: Any = None


def _matrix(lib: Any) -> Any:
    return lib.arange(6.0).reshape(2, 3)


def _mask(lib: Any) -> Any:
    return lib.tensor([True, False])


def _vhp(lib: Any, name: str) -> Any:
    functional = lib.autograd.functional
    cube_sum = lambda x: (x**3).sum()  # noqa: E731
    return getattr(functional, name)(cube_sum, lib.ones(3), lib.ones(2))


def _linear_on_ints(lib: Any) -> Any:
    return lib.nn.Linear(3, 2)(lib.ones(2, 3, dtype=lib.int64))


def _sequential_lr_of_ints(lib: Any) -> Any:
    optimizer = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
    return lib.optim.lr_scheduler.SequentialLR(optimizer, [1, 2], milestones=[1])


def _grad_fn_called(lib: Any, grad: Any) -> Any:
    x = lib.ones(2, requires_grad=True)
    y = (x * 2).sum()
    return y.grad_fn(grad if grad is None else lib.tensor(grad))


def _write_through_view(lib: Any) -> Any:
    base = lib.zeros(2, 3)
    seen = base.view(6)
    seen[0] = 5.0
    return base


CASES: dict[str, tuple[Callable[[Any], Any], Any]] = {
    # 1. An empty dim list reduces every dimension.
    "sum([])": (lambda lib: _matrix(lib).sum([]), Value((), "float", 15.0)),
    "sum(())": (lambda lib: _matrix(lib).sum(()), Value((), "float", 15.0)),
    "sum((), keepdim)": (
        lambda lib: _matrix(lib).sum((), keepdim=True), Value((1, 1), "float", [[15.0]])
    ),
    "mean([])": (lambda lib: _matrix(lib).mean([]), Value((), "float", 2.5)),
    "var(())": (lambda lib: _matrix(lib).var(()), Value((), "float", 3.5)),
    "std([])": (lambda lib: _matrix(lib).std([]), Value((), "float", np.sqrt(3.5))),
    # 2. Bool inputs: int64 for square, the default float for the float functions.
    "square(bool)": (lambda lib: lib.square(_mask(lib)), Value((2,), "int64", [1, 0])),
    "exp(bool)": (lambda lib: lib.exp(_mask(lib)), Value((2,), "float", [np.e, 1.0])),
    "log1p(bool)": (lambda lib: lib.log1p(_mask(lib)), Value((2,), "float", [np.log(2), 0])),
    "sqrt(bool)": (lambda lib: lib.sqrt(_mask(lib)), Value((2,), "float", [1.0, 0.0])),
    "sin(bool)": (lambda lib: lib.sin(_mask(lib)), Value((2,), "float", [np.sin(1), 0])),
    "cos(bool)": (lambda lib: lib.cos(_mask(lib)), Value((2,), "float", [np.cos(1), 1])),
    "tanh(bool)": (lambda lib: lib.tanh(_mask(lib)), Value((2,), "float", [np.tanh(1), 0])),
    "expm1(bool)": (lambda lib: lib.expm1(_mask(lib)), Value((2,), "float", [np.e - 1, 0])),
    "sigmoid(bool)": (
        lambda lib: lib.sigmoid(_mask(lib)), Value((2,), "float", [1 / (1 + np.exp(-1)), 0.5])
    ),
    "erf(bool)": (lambda lib: lib.erf(_mask(lib)), Value((2,), "float")),
    "relu(bool)": (lambda lib: lib.relu(_mask(lib)), NotImplementedError),
    "floor(bool)": (lambda lib: lib.floor(_mask(lib)), NotImplementedError),
    "ceil(bool)": (lambda lib: lib.ceil(_mask(lib)), NotImplementedError),
    "round(bool)": (lambda lib: lib.round(_mask(lib)), NotImplementedError),
    # 3. nonzero of a 0-d value: one row of no columns, or none.
    "nonzero(0-d, nonzero)": (lambda lib: lib.nonzero(lib.tensor(1.0)), Value((1, 0), "int64")),
    "nonzero(0-d, zero)": (lambda lib: lib.tensor(0.0).nonzero(), Value((0, 0), "int64")),
    # 4. new() with no arguments: no elements, x's dtype.
    "new()": (lambda lib: _matrix(lib).new(), Value((0,), "float")),
    # 5. Factories want a size.
    "zeros()": (lambda lib: lib.zeros(), TypeError),
    "ones()": (lambda lib: lib.ones(), TypeError),
    "empty()": (lambda lib: lib.empty(), TypeError),
    "rand()": (lambda lib: lib.rand(), TypeError),
    "randn()": (lambda lib: lib.randn(), TypeError),
    "new_zeros()": (lambda lib: _matrix(lib).new_zeros(), TypeError),
    "zeros(())": (lambda lib: lib.zeros(()), Value((), "float", 0.0)),
    # 6. dim and keepdim of the wrong kind.
    "sum(dim=str)": (lambda lib: _matrix(lib).sum("a"), TypeError),
    "sum(dim=nan)": (lambda lib: _matrix(lib).sum(float("nan")), TypeError),
    "sum(dim=float)": (lambda lib: _matrix(lib).sum(1.0), TypeError),
    "softmax(dim=float)": (lambda lib: _matrix(lib).softmax(1.0), TypeError),
    "mean(keepdim=float)": (lambda lib: _matrix(lib).mean(1, keepdim=1.0), TypeError),
    # 7. hvp and vhp check v's shape.
    "vhp(v of a wrong shape)": (lambda lib: _vhp(lib, "vhp"), RuntimeError),
    "hvp(v of a wrong shape)": (lambda lib: _vhp(lib, "hvp"), RuntimeError),
    # 8. nn.functional and nn arguments.
    "hardtanh(min_val=0-d)": (
        lambda lib: lib.nn.functional.hardtanh(lib.arange(3.0), min_val=lib.tensor(0.5)),
        Value((3,), "float", [0.5, 1.0, 1.0]),
    ),
    "hardtanh(min_val=(1,))": (
        lambda lib: lib.nn.functional.hardtanh(lib.arange(3.0), min_val=lib.tensor([0.5])),
        TypeError,
    ),
    "hardtanh(min_val=(3,))": (
        lambda lib: lib.nn.functional.hardtanh(lib.arange(3.0), min_val=lib.zeros(3)),
        RuntimeError,
    ),
    "dropout(training=list)": (
        lambda lib: lib.nn.functional.dropout(_matrix(lib), training=[[1.0]]), TypeError
    ),
    "dropout(p=str)": (lambda lib: lib.nn.functional.dropout(_matrix(lib), p="0.5"), TypeError),
    "Unflatten(size=function)": (lambda lib: lib.nn.Unflatten(3, lambda x: x), TypeError),
    "Unflatten(size=int)": (lambda lib: lib.nn.Unflatten(1, 6), TypeError),
    "Unflatten(size with a float)": (lambda lib: lib.nn.Unflatten(1, (2, 3.0)), TypeError),
    # 9. Functions take a Variable first (add, sub, mul, div also a number). A NumPy array
    # is let through, a departure: minigrad's x.data is one (see the test below).
    "exp(float)": (lambda lib: lib.exp(2.0), TypeError),
    "neg(int)": (lambda lib: lib.neg(2), TypeError),
    "sum(list)": (lambda lib: lib.sum([1.0, 2.0]), TypeError),
    "maximum(int, Variable)": (lambda lib: lib.maximum(2, lib.ones(3)), TypeError),
    "add(float, float)": (lambda lib: lib.add(2.0, 3.0), Value((), "float", 5.0)),
    "mul(float, Variable)": (lambda lib: lib.mul(2.0, lib.ones(2)), Value((2,), "float", 2.0)),
    "pow(float, Variable)": (
        lambda lib: lib.pow(2.0, lib.tensor([1.0, 3.0])), Value((2,), "float", [2.0, 8.0])
    ),
    "pow(float, float)": (lambda lib: lib.pow(2.0, 3.0), TypeError),
    # 11. No silent int -> float promotion in Linear.
    "Linear(int input)": (_linear_on_ints, RuntimeError),
    # 12. view: an error where only a copy fits; a view shares memory.
    "view(transposed)": (lambda lib: lib.ones(2, 3).t().view(6), RuntimeError),
    "view(column slice)": (lambda lib: _matrix(lib)[:, :2].view(4), RuntimeError),
    "view(transposed, fits)": (
        lambda lib: lib.ones(2, 3).t().view(3, 1, 2), Value((3, 1, 2), "float")
    ),
    "view writes through": (
        _write_through_view, Value((2, 3), "float", [[5.0, 0, 0], [0, 0, 0]])
    ),
    # 14. Leaks: clear errors of PyTorch's class.
    "zeros(10**12)": (lambda lib: lib.zeros(10**12), RuntimeError),
    "zeros(2**62)": (lambda lib: lib.zeros(2**62), RuntimeError),
    "logical_xor(huge int)": (
        lambda lib: lib.logical_xor(lib.tensor([10**30]), lib.tensor([1])), ValueError
    ),
    "grad_fn(None)": (lambda lib: _grad_fn_called(lib, None), None),
    "grad_fn(grad)": (lambda lib: _grad_fn_called(lib, 1.0), Value((2,), "float", [1.0, 1.0])),
    "SequentialLR(ints)": (_sequential_lr_of_ints, TypeError),
    "Subset(index out of range)": (
        lambda lib: lib.utils.data.Subset(lib.utils.data.TensorDataset(lib.ones(3)), [5])[0],
        IndexError,
    ),
}


def _outcome(call: Callable[[Any], Any], lib: Any) -> Any:
    """What the call gives: the class of what it raised, or what it returned."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(lib)
    except Exception as error:  # noqa: BLE001 - the class is the outcome compared
        return type(error)


def _kind(dtype: Any) -> str:
    """int64, bool, or float (any precision: the default floats of the two differ)."""
    name = str(dtype).removeprefix("torch.")
    return "float" if name.startswith("float") else name


def _check(got: Any, expected: Any, where: str) -> None:
    if expected is None:
        assert got is None, f"{where}: expected None, got {got!r}"
    elif isinstance(expected, type):
        assert isinstance(got, type) and issubclass(got, expected), (
            f"{where}: expected {expected.__name__} to be raised, got {got!r}"
        )
    else:
        assert not isinstance(got, type), f"{where}: expected a value, but {got.__name__} raised"
        assert tuple(got.shape) == expected.shape, f"{where}: shape {tuple(got.shape)}"
        assert _kind(got.dtype) == expected.kind, f"{where}: dtype {got.dtype}"
        if expected.values is not None:
            values = np.asarray(got.tolist(), dtype=np.float64)
            np.testing.assert_allclose(values, np.broadcast_to(expected.values, values.shape),
                                       rtol=1e-6, err_msg=where)


@pytest.mark.parametrize("case", list(CASES))
def test_minigrad_gives_what_pytorch_gives(case: str) -> None:
    call, expected = CASES[case]
    _check(_outcome(call, minigrad), expected, f"minigrad, {case}")


@pytest.mark.parametrize("case", list(CASES))
def test_pytorch_gives_the_expected_outcome(case: str, real_torch: Any) -> None:
    call, expected = CASES[case]
    _check(_outcome(call, real_torch), expected, f"torch, {case}")


def test_an_error_message_says_what_was_expected_and_what_to_do() -> None:
    with pytest.raises(TypeError, match=r"must be a Variable, but got float 2.0. Make one"):
        minigrad.exp(2.0)
    with pytest.raises(RuntimeError, match=r"not contiguous .* Use .reshape\(...\)"):
        minigrad.ones(2, 3).t().view(6)
    with pytest.raises(RuntimeError, match=r"DefaultCPUAllocator: can't allocate memory"):
        minigrad.zeros(10**12)
    with pytest.raises(TypeError, match=r'zeros\(\) missing 1 required .* zeros\(\(\)\) for a 0-d'):
        minigrad.zeros()
    with pytest.raises(RuntimeError, match=r"should be \(3,\) but got \(2,\)"):
        _vhp(minigrad, "vhp")
    with pytest.raises(RuntimeError, match=r"same dtype, but got int64 .* x.float\(\)"):
        _linear_on_ints(minigrad)


def test_a_reduction_over_an_empty_dim_list_has_the_gradient_of_a_full_reduction() -> None:
    x = minigrad.tensor(np.random.default_rng(0).normal(size=(2, 3)), requires_grad=True)
    assert minigrad.autograd.gradcheck(lambda v: v.sum([]), (x,))
    assert minigrad.autograd.gradcheck(lambda v: v.var(()), (x,))


class _ForgetsSecondInput(minigrad.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any, y: Any) -> Any:
        return x * y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return grad, None


def test_a_backward_returning_none_for_an_input_that_needs_a_gradient_warns() -> None:
    """Better than PyTorch, which is silent: the input would quietly miss its gradient."""
    x = minigrad.ones(2, requires_grad=True)
    y = minigrad.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"_ForgetsSecondInput.backward returned None for input 1"):
        _ForgetsSecondInput.apply(x, y).sum().backward()
    assert y.grad is None and x.grad is not None


def test_none_for_an_input_that_needs_no_gradient_is_silent() -> None:
    x = minigrad.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _ForgetsSecondInput.apply(x, minigrad.ones(2)).sum().backward()


def test_an_array_is_accepted_first_because_minigrads_data_is_one():
    """PyTorch refuses torch.max(np_array, 1), but its tutorials write
    torch.max(outputs.data, 1), where .data is a tensor; minigrad's .data is a NumPy array,
    so minigrad's functions take an array first (a documented departure)."""
    import minigrad

    outputs = minigrad.tensor([[0.1, 0.9], [0.8, 0.2]])
    values, predicted = minigrad.max(outputs.data, 1)
    assert predicted.tolist() == [1, 0] and values.tolist() == [0.9, 0.8]
    assert minigrad.exp(np.zeros(2)).tolist() == [1.0, 1.0]

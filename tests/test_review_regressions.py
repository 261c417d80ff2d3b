"""Regressions found by trying minigrad as a new user would (each once gave a wrong answer,
a crash, or a misleading error)."""

import numpy as np
import pytest

import minigrad
from minigrad import Function, Variable


def test_reading_a_slice_does_not_block_later_in_place_changes() -> None:
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    assert y[:2].shape == (2,)  # a view that dies at once
    y[2] = 0.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0, 0.0])


def test_filling_a_buffer_from_its_own_prefix_matches_torch() -> None:
    w = minigrad.tensor(0.5, requires_grad=True)
    out = minigrad.zeros(4)
    out[0] = w
    for i in range(1, 4):
        out[i] = out[:i].sum() * w
    out.sum().backward()
    # out = [w, w^2, w^2 + w^3, 2 w^3 + w^4 + ...]: PyTorch gives 6.75 at w = 0.5.
    assert w.grad.item() == pytest.approx(6.75)


def test_changing_a_variable_while_a_view_of_it_is_alive_is_refused() -> None:
    x = Variable([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    row = y[1]
    with pytest.raises(RuntimeError, match="while a view of it is alive"):
        y.mul_(2.0)
    assert row.shape == (2,)


class _Scale(Function):
    seen: list = []

    @staticmethod
    def forward(ctx, x, w):
        _Scale.seen.append(ctx.needs_input_grad)
        return x.data * w.data

    @staticmethod
    def backward(ctx, grad):
        return None, None


def test_needs_input_grad_exists_when_nothing_is_recorded() -> None:
    _Scale.seen.clear()
    _Scale.apply(minigrad.ones(2), minigrad.ones(2))
    with minigrad.no_grad():
        _Scale.apply(minigrad.ones(2, requires_grad=True), minigrad.ones(2))
    assert _Scale.seen == [(False, False), (False, False)]


def test_setup_context_runs_under_no_grad_too() -> None:
    calls = []

    class Double(Function):
        @staticmethod
        def forward(x):
            return x.data * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            calls.append(output.shape)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with minigrad.no_grad():
        Double.apply(minigrad.ones(3, requires_grad=True))
    assert calls == [(3,)]


def test_a_variable_passed_as_keyword_is_refused() -> None:
    class Scaled(Function):
        @staticmethod
        def forward(ctx, x, scale=None):
            return x.data * scale.data

        @staticmethod
        def backward(ctx, grad):
            return grad

    w = minigrad.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="keyword argument.*positionally"):
        Scaled.apply(minigrad.ones(2), scale=w)


def test_forward_that_forgets_return_is_named() -> None:
    class Forgetful(Function):
        @staticmethod
        def forward(ctx, x):
            x.data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="Forgetful.forward returned None.*forget `return`"):
        Forgetful.apply(minigrad.ones(2, requires_grad=True))


def test_complex_variables_cannot_require_grad() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        Variable(np.array([1 + 2j]), requires_grad=True)


def test_once_differentiable_through_grad_names_the_decorator() -> None:
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.data**2

        @staticmethod
        @minigrad.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x.data * grad.data

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    (g,) = minigrad.grad(Square.apply(x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.data, [2.0, 4.0])
    with pytest.raises(RuntimeError, match="once_differentiable"):
        minigrad.grad(g.sum(), x)


def test_comparing_numbers_with_text_is_an_error() -> None:
    with pytest.raises(TypeError, match="cannot compare numbers with text"):
        Variable([1.0, 2.0]) == "a"  # noqa: B015


def test_a_numpy_error_that_is_not_broadcasting_is_not_called_one() -> None:
    with pytest.raises(ValueError, match="negative integer powers") as info:
        Variable([1, 2]) ** -1
    assert "broadcast" not in str(info.value)


def test_tensor_with_an_unknown_dtype_gets_the_friendly_message() -> None:
    with pytest.raises(TypeError, match="not a data type minigrad knows"):
        minigrad.tensor([1, 2], dtype="foo")


def test_subpackages_of_later_versions_are_plain_missing_attributes() -> None:
    assert getattr(minigrad, "not_a_subpackage", None) is None
    for name in ("nn", "optim", "viz", "course"):
        try:
            getattr(minigrad, name)
        except AttributeError as error:
            assert name in str(error)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_detect_anomaly_decorates_without_parentheses() -> None:
    @minigrad.detect_anomaly
    def nan_gradient() -> None:
        x = minigrad.tensor([0.0], requires_grad=True)
        (x.sqrt() * 0.0).sum().backward()

    with pytest.raises(RuntimeError, match="SqrtBackward.*nan"):
        nan_gradient()


def test_an_assigned_grad_that_differs_from_the_returned_one_is_kept() -> None:
    class Assigns(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.data * 1.0

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            x.grad = Variable([10.0])  # a hand assignment, not the returned gradient
            return grad

    x = minigrad.tensor([1.0], requires_grad=True)
    Assigns.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [11.0])


def test_once_differentiable_marks_numpy_scalars_too() -> None:
    """A 0-d backward written in NumPy returns np.float64; double backward must still raise."""

    class Cube(minigrad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.data**3

        @staticmethod
        @minigrad.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad.data * 3 * x.data**2

    x = minigrad.Variable(2.0, requires_grad=True)
    (first,) = minigrad.grad(Cube.apply(x) + x**2, x, create_graph=True)
    assert first.item() == 16.0
    with pytest.raises(RuntimeError, match="once_differentiable"):
        minigrad.grad(first, x)


def test_non_differentiable_output_gets_zeros_in_backward() -> None:
    """As in PyTorch: backward receives a zero gradient for an output marked non-differentiable,
    or None once set_materialize_grads(False)."""
    received = []

    def make(materialize: bool):
        class SortWithPositions(minigrad.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                order = np.argsort(x.data)
                positions = minigrad.Variable(order.astype(np.float64))
                ctx.mark_non_differentiable(positions)
                ctx.order = order
                return x.data[order], positions

            @staticmethod
            def backward(ctx, grad_values, grad_positions):
                received.append(grad_positions)
                grad = np.zeros_like(grad_values.data)
                grad[ctx.order] = grad_values.data
                return grad

        return SortWithPositions

    x = minigrad.Variable([3.0, 1.0, 2.0], requires_grad=True)
    values, positions = make(True).apply(x)
    assert not positions.requires_grad
    (values * minigrad.Variable([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(received[0].numpy(), np.zeros(3))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 1.0, 2.0])
    values, _ = make(False).apply(x)
    values.sum().backward()
    assert received[1] is None

"""Function: both forward styles, ctx features, gradient checks in apply, graph structure."""

import numpy as np
import pytest

import minigrad
from minigrad import Function, FunctionCtx, Variable, once_differentiable
from minigrad.core.function import BackwardNode

# --------------------------------------------------------------------------- two styles


class ScaledProduct(Function):
    """out = a * b * k, written with ctx as forward's first argument."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a.data * b.data * k

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b * ctx.k, grad * a * ctx.k, None


class ScaledProductSetup(Function):
    """The same operation, written with setup_context."""

    seen: dict = {}

    @staticmethod
    def forward(a, b, k):
        return a.data * b.data * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, b, k = inputs
        ScaledProductSetup.seen["inputs"] = inputs
        ScaledProductSetup.seen["output"] = output
        ctx.save_for_backward(a, b)
        ctx.k = k

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b * ctx.k, grad * a * ctx.k, None


@pytest.mark.parametrize("fn", [ScaledProduct, ScaledProductSetup])
def test_both_forward_styles_compute_values_and_gradients(fn):
    a = Variable([1.0, 2.0, 3.0], requires_grad=True)
    b = Variable([4.0, 5.0, 6.0], requires_grad=True)
    out = fn.apply(a, b, 2.0)
    np.testing.assert_allclose(out.data, [8.0, 20.0, 36.0])
    assert out.grad_fn.name() == f"{fn.__name__}Backward"
    out.sum().backward()
    np.testing.assert_allclose(a.grad.data, [8.0, 10.0, 12.0])
    np.testing.assert_allclose(b.grad.data, [2.0, 4.0, 6.0])


def test_setup_context_receives_the_inputs_and_the_wrapped_output():
    a = Variable([1.0], requires_grad=True)
    b = Variable([3.0])
    out = ScaledProductSetup.apply(a, b, 0.5)
    inputs = ScaledProductSetup.seen["inputs"]
    assert isinstance(inputs, tuple)
    assert inputs[0] is a and inputs[1] is b and inputs[2] == 0.5
    assert ScaledProductSetup.seen["output"] is out


def test_forward_runs_with_recording_off():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(minigrad.is_grad_enabled())
            inner = x * 2  # a Variable op inside forward records nothing
            seen.append(inner.requires_grad)
            return inner

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = Variable([1.0], requires_grad=True)
    out = Probe.apply(x)
    assert seen == [False, False]
    assert minigrad.is_grad_enabled()
    assert out.grad_fn.name() == "ProbeBackward"
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0])


def test_apply_wraps_what_forward_returns():
    class Many(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2, 3.5, "text", x.data.sum()

        @staticmethod
        def backward(ctx, g_array, g_number, g_text, g_sum):
            return g_array * 2

    x = Variable([1.0, 2.0], requires_grad=True)
    arr, number, text, total = Many.apply(x)
    for out in (arr, number, text, total):
        assert isinstance(out, Variable)
    np.testing.assert_array_equal(arr.data, [2.0, 4.0])
    assert number.item() == 3.5
    assert text.data == "text"
    assert total.shape == ()
    assert arr.requires_grad and arr.grad_fn.name() == "ManyBackward"


def test_under_no_grad_apply_records_nothing():
    x = Variable([1.0, 2.0], requires_grad=True)
    with minigrad.no_grad():
        out = ScaledProduct.apply(x, x, 1.0)
    assert not out.requires_grad
    assert out.grad_fn is None
    np.testing.assert_array_equal(out.data, [1.0, 4.0])


def test_inputs_that_do_not_require_grad_record_nothing():
    out = ScaledProduct.apply(Variable([1.0]), Variable([2.0]), 3.0)
    assert not out.requires_grad
    assert out.grad_fn is None


# --------------------------------------------------------------------------- ctx


def test_save_for_backward_accepts_variables_none_and_plain_values():
    seen = {}

    class Saver(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, None, "a plain str", y)
            return x.data + y.data

        @staticmethod
        def backward(ctx, grad):
            seen["tensors"] = ctx.saved_tensors
            seen["variables"] = ctx.saved_variables
            return grad, grad

    x = Variable([1.0, 2.0], requires_grad=True)
    y = Variable([3.0, 4.0])
    Saver.apply(x, y).sum().backward()
    saved = seen["tensors"]
    assert len(saved) == 4
    assert saved[0] is x
    assert saved[1] is None
    assert saved[2] == "a plain str"
    assert saved[3] is y
    assert len(seen["variables"]) == 4
    assert seen["variables"][0] is x and seen["variables"][2] == "a plain str"
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])
    assert y.grad is None


def test_saved_output_comes_back_with_the_output_values():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            out = Variable(x.data**2)
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, out = ctx.saved_tensors
            np.testing.assert_array_equal(out.data, x.data**2)
            return grad * 2 * x

    x = Variable([3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [6.0])


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, c, d):
            seen["forward"] = ctx.needs_input_grad
            return a.data + b.data

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = ctx.needs_input_grad
            return grad, None, None, None

    a = Variable([1.0], requires_grad=True)
    b = Variable([2.0])
    Probe.apply(a, b, 3.0, "text").sum().backward()
    assert seen["forward"] == (True, False, False, False)
    assert seen["backward"] == (True, False, False, False)


def test_ctx_takes_arbitrary_attributes():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x, power):
            ctx.power = power
            ctx.shape_seen = x.shape
            return x.data**power

        @staticmethod
        def backward(ctx, grad):
            assert ctx.shape_seen == (2,)
            return grad * ctx.power, None

    x = Variable([1.0, 2.0], requires_grad=True)
    Keep.apply(x, 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])


def test_ctx_is_a_function_ctx():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(ctx)
            return x.data

        @staticmethod
        def backward(ctx, grad):
            return grad

    out = Probe.apply(Variable([1.0], requires_grad=True))
    assert isinstance(seen[0], FunctionCtx)
    assert seen[0] is out.grad_fn


# --------------------------------------------------------------------------- returned gradients


def test_non_variable_inputs_take_none():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor, label):
            ctx.factor = factor
            return x.data * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None, None

    x = Variable([1.0, 2.0], requires_grad=True)
    Scale.apply(x, 4.0, "label").sum().backward()
    np.testing.assert_array_equal(x.grad.data, [4.0, 4.0])


def test_gradient_for_a_non_variable_input_is_an_error():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x, factor):
            return x.data * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, grad

    x = Variable([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="not a Variable"):
        Wrong.apply(x, 2.0).sum().backward()


def test_gradient_for_a_variable_that_does_not_require_grad_is_dropped():
    class Both(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.data + y.data

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    x = Variable([1.0], requires_grad=True)
    y = Variable([2.0])
    Both.apply(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0])
    assert y.grad is None


def test_extra_trailing_nones_are_dropped():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 3

        @staticmethod
        def backward(ctx, grad):
            return grad * 3, None, None

    x = Variable([1.0], requires_grad=True)
    Extra.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0])


def test_too_many_gradients_is_an_error():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        TooMany.apply(Variable([1.0], requires_grad=True)).sum().backward()


def test_too_few_gradients_is_an_error():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.data + y.data

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = Variable([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        TooFew.apply(x, x).sum().backward()


def test_backward_may_return_arrays_and_numbers():
    class Raw(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.data * 2 + y.data

        @staticmethod
        def backward(ctx, grad):
            return grad.data * 2, float(grad.data.sum())

    x = Variable([1.0, 2.0], requires_grad=True)
    y = Variable(5.0, requires_grad=True)
    Raw.apply(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])
    assert isinstance(x.grad, Variable)
    assert isinstance(y.grad, Variable)
    np.testing.assert_allclose(y.grad.data, 2.0)


class PerSampleLinear(Function):
    """y[b, o] = sum_i w[o, i] x[b, i] + bias[o]; backward returns per-sample gradients."""

    @staticmethod
    def forward(ctx, x, w, bias):
        ctx.save_for_backward(x, w)
        return x.data @ w.data.T + bias.data

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        grad_w = grad.unsqueeze(-1) * x.unsqueeze(-2)  # (batch, out, in)
        grad_x = grad @ w
        return grad_x, grad_w, grad  # bias gradient (batch, out) for bias (out,)


def test_per_sample_gradients_are_summed_back_to_the_input_shape():
    rng = np.random.default_rng(0)
    x = Variable(rng.standard_normal((5, 3)), requires_grad=True)
    w = Variable(rng.standard_normal((4, 3)), requires_grad=True)
    b = Variable(rng.standard_normal(4), requires_grad=True)
    upstream = rng.standard_normal((5, 4))
    PerSampleLinear.apply(x, w, b).backward(Variable(upstream))
    assert w.grad.shape == (4, 3)
    assert b.grad.shape == (4,)
    np.testing.assert_allclose(w.grad.data, upstream.T @ x.data)
    np.testing.assert_allclose(b.grad.data, upstream.sum(axis=0))
    np.testing.assert_allclose(x.grad.data, upstream @ w.data)


@pytest.mark.parametrize("bad_shape", [(3,), (4, 3), (1,), (3, 1)])
def test_gradient_of_a_wrong_shape_is_an_error_naming_function_input_and_shapes(bad_shape):
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data.sum()

        @staticmethod
        def backward(ctx, grad):
            return Variable(np.ones(bad_shape))

    x = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        WrongShape.apply(x).backward()
    message = str(info.value)
    assert "WrongShapeBackward" in message
    assert str(bad_shape) in message and "(2,)" in message
    assert "0" in message  # the input's position
    assert x.grad is None


# --------------------------------------------------------------------------- mark_dirty


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.data += 1.0
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class AddOneInPlaceSetup(Function):
    @staticmethod
    def forward(x):
        x.data += 1.0
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        return grad


@pytest.mark.parametrize("fn", [AddOneInPlace, AddOneInPlaceSetup])
def test_mark_dirty_in_place_function(fn):
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 3  # a non-leaf, so it may change in place
    mul_node = y.grad_fn
    version = y._version
    out = fn.apply(y)
    assert out is y
    assert y._version == version + 1
    np.testing.assert_array_equal(y.data, [4.0, 7.0])
    assert y.grad_fn.name() == f"{fn.__name__}Backward"
    assert y.grad_fn.next_functions[0][0] is mul_node
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * (3 * np.array([1.0, 2.0]) + 1) * 3)


def test_mark_dirty_on_a_plain_variable_under_no_grad():
    x = Variable([1.0, 2.0])
    out = AddOneInPlace.apply(x)
    assert out is x
    assert x._version == 1
    np.testing.assert_array_equal(x.data, [2.0, 3.0])


def test_mark_dirty_on_a_leaf_that_requires_grad_raises():
    x = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        AddOneInPlace.apply(x)


# ------------------------------------------------------------------ mark_non_differentiable


class MaxWithIndex(Function):
    """(max value, index of the max); the index is float but marked non-differentiable."""

    received: list = []

    @staticmethod
    def forward(ctx, x):
        index = int(np.argmax(x.data))
        ctx.index = index
        ctx.shape = x.shape
        value = Variable(np.asarray(x.data[index]))
        position = Variable(np.asarray(float(index)))
        ctx.mark_non_differentiable(position)
        return value, position

    @staticmethod
    def backward(ctx, grad_value, grad_position):
        MaxWithIndex.received.append(grad_position)
        result = np.zeros(ctx.shape)
        result[ctx.index] = grad_value.data
        return Variable(result)


def test_mark_non_differentiable_output_does_not_require_grad():
    x = Variable([1.0, 5.0, 2.0], requires_grad=True)
    value, position = MaxWithIndex.apply(x)
    assert value.requires_grad
    assert not position.requires_grad
    assert position.grad_fn is None
    assert position.item() == 1.0


def test_backward_through_a_function_with_a_non_differentiable_output():
    MaxWithIndex.received.clear()
    x = Variable([1.0, 5.0, 2.0], requires_grad=True)
    value, position = MaxWithIndex.apply(x)
    (value * 3).backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 3.0, 0.0])
    (received,) = MaxWithIndex.received
    assert received is None or not np.any(received.data)


def test_integer_outputs_are_never_differentiable():
    class ArgMax(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data.max(), np.argmax(x.data)

        @staticmethod
        def backward(ctx, grad_value, grad_index):
            assert grad_index is None or not np.any(grad_index.data)
            return Variable(np.array([0.0, 1.0, 0.0])) * grad_value

    x = Variable([1.0, 5.0, 2.0], requires_grad=True)
    value, index = ArgMax.apply(x)
    assert value.requires_grad
    assert not index.requires_grad
    assert index.item() == 1
    (value * 2).backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 2.0, 0.0])


# --------------------------------------------------------------------------- materialize grads


def _two_outputs(materialize):
    received = []

    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x.data * 2, (x.data * 3).astype(np.float32)

        @staticmethod
        def backward(ctx, grad_double, grad_triple):
            received.append((grad_double, grad_triple))
            total = 0
            if grad_double is not None:
                total = total + grad_double * 2
            if grad_triple is not None:
                total = total + grad_triple * 3
            return total

    return Split, received


def test_materialize_grads_false_passes_none_for_an_unused_output():
    Split, received = _two_outputs(False)
    x = Variable([1.0, 2.0], requires_grad=True)
    double, triple = Split.apply(x)
    double.sum().backward()
    ((g_double, g_triple),) = received
    assert g_triple is None
    np.testing.assert_array_equal(g_double.data, [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_materialized_grads_are_zeros_of_the_output_shape_and_dtype():
    Split, received = _two_outputs(True)
    x = Variable([1.0, 2.0], requires_grad=True)
    double, triple = Split.apply(x)
    double.sum().backward()
    ((g_double, g_triple),) = received
    assert isinstance(g_triple, Variable)
    assert g_triple.shape == (2,)
    assert g_triple.dtype == np.float32
    assert not g_triple.data.any()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_second_output_gets_the_second_gradient():
    Split, received = _two_outputs(True)
    x = Variable([1.0, 2.0], requires_grad=True)
    double, triple = Split.apply(x)
    (triple * 10).sum().backward()
    ((g_double, g_triple),) = received
    np.testing.assert_array_equal(g_triple.data, [10.0, 10.0])
    assert not g_double.data.any()
    np.testing.assert_allclose(x.grad.data, [30.0, 30.0])


# --------------------------------------------------------------------------- once_differentiable


class CubeOnce(Function):
    seen: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.data**3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        CubeOnce.seen.append(minigrad.is_grad_enabled())
        return grad * 3 * x * x


def test_once_differentiable_first_order_works():
    x = Variable([1.0, 2.0], requires_grad=True)
    CubeOnce.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [3.0, 12.0])


def test_once_differentiable_backward_runs_without_recording():
    CubeOnce.seen.clear()
    x = Variable([1.0, 2.0], requires_grad=True)
    y = CubeOnce.apply(x)
    minigrad.grad((y * y).sum(), x, create_graph=True)
    assert CubeOnce.seen == [False]


def test_once_differentiable_double_backward_raises():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = CubeOnce.apply(x)
    (g,) = minigrad.grad((y * y).sum(), x, create_graph=True)
    # first order is still right: d/dx x**6 = 6 x**5
    np.testing.assert_allclose(g.data, [6.0, 192.0])
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_once_differentiable_keeps_the_backward_name():
    assert CubeOnce.backward.__name__ == "backward"


# --------------------------------------------------------------------------- graph structure


def test_grad_fn_names():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = Variable([3.0, 4.0], requires_grad=True)
    cases = {
        "MulBackward": x * y,
        "AddBackward": x + y,
        "SubBackward": x - y,
        "DivBackward": x / y,
        "NegBackward": -x,
        "ExpBackward": x.exp(),
        "SumBackward": x.sum(),
        "MatMulBackward": x @ y,
        "ScaledProductBackward": ScaledProduct.apply(x, y, 1.0),
    }
    for name, out in cases.items():
        assert out.grad_fn.name() == name
        assert repr(out.grad_fn) == f"<{name}>"
        assert isinstance(out.grad_fn, BackwardNode)


def test_next_functions_point_to_accumulate_grad_of_leaves():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = Variable([3.0, 4.0], requires_grad=True)
    z = x * y
    (fx, nx), (fy, ny) = z.grad_fn.next_functions
    assert (nx, ny) == (0, 0)
    assert fx.name() == "AccumulateGrad"
    assert repr(fx) == "<AccumulateGrad>"
    assert fx.variable is x
    assert fy.variable is y
    assert fx.next_functions == ()


def test_next_functions_of_inputs_that_do_not_require_grad_are_none():
    x = Variable([1.0, 2.0], requires_grad=True)
    z = x * Variable([3.0, 4.0])
    assert z.grad_fn.next_functions[1] == (None, 0)
    w = 2.0 * x
    assert w.grad_fn.next_functions[0] == (None, 0)
    assert w.grad_fn.next_functions[1][0].variable is x


def test_next_functions_chain_and_reuse_the_same_accumulator():
    x = Variable([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = a.exp()
    c = b.sum()
    assert c.grad_fn.next_functions[0] == (b.grad_fn, 0)
    assert b.grad_fn.next_functions[0] == (a.grad_fn, 0)
    accumulator = a.grad_fn.next_functions[0][0]
    assert (x * 3).grad_fn.next_functions[0][0] is accumulator
    assert (x + x).grad_fn.next_functions == ((accumulator, 0), (accumulator, 0))


def test_next_functions_name_the_output_number_of_multi_output_functions():
    Split, _ = _two_outputs(True)
    x = Variable([1.0, 2.0], requires_grad=True)
    double, triple = Split.apply(x)
    assert double.grad_fn is triple.grad_fn
    z = triple * 2
    assert z.grad_fn.next_functions[0] == (triple.grad_fn, 1)
    w = double * 2
    assert w.grad_fn.next_functions[0] == (double.grad_fn, 0)


class Identity(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 5


def test_identity_forward_gives_a_new_variable_and_keeps_the_input_history():
    x = Variable([1.0, 2.0], requires_grad=True)
    h = x * 2
    h_node = h.grad_fn
    out = Identity.apply(h)
    assert out is not h
    assert np.shares_memory(out.data, h.data)
    assert h.grad_fn is h_node
    assert out.grad_fn.name() == "IdentityBackward"
    assert out.grad_fn.next_functions[0] == (h_node, 0)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [10.0, 10.0])


def test_identity_forward_on_a_leaf_leaves_it_a_leaf():
    x = Variable([1.0, 2.0], requires_grad=True)
    out = Identity.apply(x)
    assert out is not x
    assert x.is_leaf and x.grad_fn is None
    assert not out.is_leaf
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [5.0, 5.0])


def test_function_cannot_be_instantiated():
    with pytest.raises(RuntimeError, match="apply"):
        Function()
    with pytest.raises(RuntimeError, match="Identity"):
        Identity()


def test_forward_and_backward_must_be_written():
    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError):
        NoForward.apply(Variable([1.0], requires_grad=True))

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2

    out = NoBackward.apply(Variable([1.0], requires_grad=True))
    with pytest.raises(NotImplementedError):
        out.sum().backward()


def test_function_is_exported_from_all_module_paths():
    assert minigrad.Function is minigrad.autodiff.Function
    assert minigrad.autograd.Function is minigrad.Function
    assert minigrad.core.function.Function is minigrad.Function
    assert minigrad.core.function.FunctionCtx is minigrad.FunctionCtx
    assert minigrad.autograd.function.once_differentiable is minigrad.once_differentiable


def test_in_place_function_that_saves_its_dirty_output_and_returns_two_outputs():
    class ScaleInPlace(Function):
        @staticmethod
        def forward(ctx, x, k):
            x.data *= k
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)  # the changed input, which is also the output
            ctx.k = k
            return x, x.data.sum()

        @staticmethod
        def backward(ctx, grad, grad_total):
            (x,) = ctx.saved_tensors
            np.testing.assert_array_equal(x.data, [3.0, 6.0])
            return (grad + grad_total) * ctx.k, None

    a = Variable([1.0, 2.0], requires_grad=True)
    y = a * 1.0
    out, total = ScaleInPlace.apply(y, 3.0)
    assert out is y
    assert total.item() == 9.0
    (out.sum() + total).backward()
    np.testing.assert_array_equal(a.grad.data, [6.0, 6.0])


def test_setup_context_can_mark_outputs_and_read_needs_input_grad():
    class ValueAndPosition(Function):
        @staticmethod
        def forward(x, scale):
            return x.data * scale, np.argmax(x.data).astype(np.float64)

        @staticmethod
        def setup_context(ctx, inputs, output):
            _, position = output
            ctx.mark_non_differentiable(position)
            ctx.set_materialize_grads(False)
            ctx.scale = inputs[1]
            ctx.needs_seen = ctx.needs_input_grad

        @staticmethod
        def backward(ctx, grad, grad_position):
            assert grad_position is None
            return grad * ctx.scale, None

    x = Variable([1.0, 3.0], requires_grad=True)
    values, position = ValueAndPosition.apply(x, 2.0)
    assert not position.requires_grad
    assert position.item() == 1.0
    assert values.grad_fn.needs_seen == (True, False)
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_saved_tensors_after_backward_are_gone():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * x
    node = y.grad_fn
    assert len(node.saved_tensors) == 2
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        _ = node.saved_tensors

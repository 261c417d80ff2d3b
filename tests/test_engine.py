"""The engine: backward(), grad(), graph retention, higher order, accumulation, text feedback."""

import numpy as np
import pytest

import minigrad
from minigrad import Function, Variable


def _leaf(values):
    return Variable(np.asarray(values, dtype=np.float64), requires_grad=True)


# --------------------------------------------------------------------------- backward()


def test_backward_fills_leaf_gradients():
    x = _leaf([1.0, 2.0, 3.0])
    w = _leaf([0.5, -1.0, 2.0])
    loss = ((x * w).exp() + x / w).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.data, w.data * np.exp(x.data * w.data) + 1 / w.data)
    np.testing.assert_allclose(w.grad.data, x.data * np.exp(x.data * w.data) - x.data / w.data**2)


def test_backward_with_a_python_number_operand():
    x = _leaf([1.0, 2.0])
    (x + 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])
    x.grad = None
    (1.0 + x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])
    x.grad = None
    (3.0 - x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [-1.0, -1.0])
    x.grad = None
    (x - 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])
    x.grad = None
    (2.0 / x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [-2.0, -0.5])


def test_backward_with_numpy_array_operands():
    x = _leaf([1.0, 2.0])
    (np.array([3.0, 4.0]) * x + np.array([1.0, 1.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])


def test_broadcasting_gradients_are_summed_back():
    x = _leaf(np.ones((3, 1)))
    y = _leaf(np.arange(4.0))
    (x * y + x).sum().backward()
    assert x.grad.shape == (3, 1)
    assert y.grad.shape == (4,)
    np.testing.assert_allclose(x.grad.data, np.full((3, 1), 6.0 + 4.0))
    np.testing.assert_allclose(y.grad.data, np.full(4, 3.0))


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = _leaf([1.0, 2.0])
    y = x * 3
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        y.backward()
    y.backward(Variable([10.0, 100.0]))
    np.testing.assert_array_equal(x.grad.data, [30.0, 300.0])


def test_backward_accepts_an_array_as_gradient():
    x = _leaf([1.0, 2.0])
    (x * 3).backward(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.data, [3.0, -3.0])


def test_backward_gradient_of_the_wrong_shape_is_an_error():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 3).backward(Variable([1.0, 2.0, 3.0]))


def test_backward_on_something_without_grad_is_an_error():
    with pytest.raises(
        RuntimeError,
        match="element 0 of variables does not require grad and does not have a grad_fn",
    ):
        (Variable([1.0]) * 2).sum().backward()


def test_backward_on_a_leaf():
    x = _leaf(2.0)
    x.backward()
    np.testing.assert_array_equal(x.grad.data, 1.0)


def test_non_leaf_gradients_are_not_kept():
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None


def test_gradients_accumulate_over_two_backward_calls():
    x = _leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * x.data + 3)


def test_leaf_grad_is_a_copy_not_the_upstream_buffer():
    x = _leaf([1.0, 2.0])
    seed = Variable([5.0, 6.0])
    x.backward(seed)
    np.testing.assert_array_equal(x.grad.data, [5.0, 6.0])
    x.grad.data[0] = 100.0
    assert seed.data[0] == 5.0


def test_grad_keeps_the_leaf_dtype():
    x = Variable(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    (x * 2.0).sum().backward()
    assert x.grad.dtype == np.float32


# --------------------------------------------------------------------------- retain_graph


def test_second_backward_without_retain_graph_raises():
    x = _leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        minigrad.grad(y, x)


def test_retain_graph_allows_a_second_backward():
    x = _leaf([1.0, 2.0])
    y = (x * x).exp().sum()
    y.backward(retain_graph=True)
    first = x.grad.data.copy()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.data, 2 * first)
    y.backward()
    np.testing.assert_allclose(x.grad.data, 3 * first)


def test_two_losses_sharing_a_graph():
    x = _leaf([1.0, 2.0])
    h = (x * x).tanh()
    (h * 2).sum().backward(retain_graph=True)
    (h * 3).sum().backward()
    np.testing.assert_allclose(x.grad.data, 5 * (1 - np.tanh(x.data**2) ** 2) * 2 * x.data)


# --------------------------------------------------------------------------- create_graph


def test_second_derivative_of_a_cube_with_grad():
    x = _leaf(2.0)
    y = x**3
    (dy,) = minigrad.grad(y, x, create_graph=True)
    np.testing.assert_allclose(dy.data, 12.0)  # 3 x**2
    assert dy.requires_grad
    (d2y,) = minigrad.grad(dy, x)
    np.testing.assert_allclose(d2y.data, 12.0)  # 6 x
    assert x.grad is None


def test_third_derivative_of_a_cube():
    x = _leaf([1.0, -2.0])
    (d1,) = minigrad.grad((x**3).sum(), x, create_graph=True)
    (d2,) = minigrad.grad(d1.sum(), x, create_graph=True)
    (d3,) = minigrad.grad(d2.sum(), x)
    np.testing.assert_allclose(d1.data, 3 * x.data**2)
    np.testing.assert_allclose(d2.data, 6 * x.data)
    np.testing.assert_allclose(d3.data, [6.0, 6.0])


def test_second_derivative_with_backward_create_graph():
    x = _leaf(2.0)
    (x**3).backward(create_graph=True)
    first = x.grad
    np.testing.assert_allclose(first.data, 12.0)
    assert first.requires_grad
    x.grad = None
    first.backward()
    np.testing.assert_allclose(x.grad.data, 12.0)


def test_without_create_graph_gradients_do_not_require_grad():
    x = _leaf([1.0, 2.0])
    (g,) = minigrad.grad((x**3).sum(), x)
    assert not g.requires_grad
    assert g.grad_fn is None


def test_hessian_vector_product():
    x = _leaf([1.0, 2.0, -1.0])
    v = Variable([0.5, -1.0, 2.0])
    # f = sum(x**3) + x0 * x1 * x2;  H = diag(6 x) + off-diagonal x_k terms
    f = (x**3).sum() + x[0] * x[1] * x[2]
    (g,) = minigrad.grad(f, x, create_graph=True)
    (hv,) = minigrad.grad((g * v).sum(), x)
    x0, x1, x2 = x.data
    hessian = np.diag(6 * x.data) + np.array([[0, x2, x1], [x2, 0, x0], [x1, x0, 0]])
    np.testing.assert_allclose(g.data, 3 * x.data**2 + np.array([x1 * x2, x0 * x2, x0 * x1]))
    np.testing.assert_allclose(hv.data, hessian @ v.data)


def test_create_graph_through_exp_tanh_and_matmul():
    x = _leaf([[0.1, 0.2], [0.3, 0.4]])
    w = _leaf([[1.0, -1.0], [0.5, 2.0]])
    f = ((x @ w).tanh().exp()).sum()
    (gx,) = minigrad.grad(f, x, create_graph=True)
    (ggw,) = minigrad.grad(gx.sum(), w)
    # finite differences of sum(df/dx) with respect to w
    eps = 1e-6

    def total_grad(wdata):
        xx = _leaf(x.data)
        (g,) = minigrad.grad(((xx @ Variable(wdata)).tanh().exp()).sum(), xx)
        return g.data.sum()

    numeric = np.zeros_like(w.data)
    for i in np.ndindex(w.shape):
        plus, minus = w.data.copy(), w.data.copy()
        plus[i] += eps
        minus[i] -= eps
        numeric[i] = (total_grad(plus) - total_grad(minus)) / (2 * eps)
    np.testing.assert_allclose(ggw.data, numeric, rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------- inputs=


def test_backward_inputs_only_fills_those_leaves():
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    b = _leaf([5.0, 6.0])
    (x * w + b).sum().backward(inputs=[w])
    np.testing.assert_array_equal(w.grad.data, [1.0, 2.0])
    assert x.grad is None
    assert b.grad is None


def test_backward_inputs_accepts_a_single_variable():
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=x)
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])
    assert w.grad is None


def test_backward_inputs_with_a_non_leaf():
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    h = x * w
    (h * h).sum().backward(inputs=[h, w])
    np.testing.assert_allclose(h.grad.data, 2 * h.data)
    np.testing.assert_allclose(w.grad.data, 2 * h.data * x.data)
    assert x.grad is None


def test_module_level_backward_with_inputs():
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    minigrad.backward((x * w).sum(), inputs=[x])
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])
    assert w.grad is None


def test_backward_inputs_must_not_be_empty():
    x = _leaf([1.0])
    with pytest.raises(RuntimeError):
        (x * 2).sum().backward(inputs=[])


# --------------------------------------------------------------------------- grad()


def test_grad_returns_gradients_and_leaves_dot_grad_alone():
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    gx, gw = minigrad.grad((x * w).sum(), [x, w])
    np.testing.assert_array_equal(gx.data, [3.0, 4.0])
    np.testing.assert_array_equal(gw.data, [1.0, 2.0])
    assert x.grad is None and w.grad is None


def test_grad_returns_a_tuple_for_a_single_input():
    x = _leaf([1.0, 2.0])
    result = minigrad.grad((x * x).sum(), x)
    assert isinstance(result, tuple) and len(result) == 1
    np.testing.assert_array_equal(result[0].data, [2.0, 4.0])


def test_grad_with_respect_to_a_non_leaf():
    x = _leaf([1.0, 2.0])
    h = x * 2
    z = (h * h).sum()
    gh, gx = minigrad.grad(z, [h, x])
    np.testing.assert_allclose(gh.data, 2 * h.data)
    np.testing.assert_allclose(gx.data, 4 * h.data)


def test_grad_with_grad_outputs():
    x = _leaf([1.0, 2.0])
    (g,) = minigrad.grad(x * x, x, grad_outputs=Variable([1.0, 10.0]))
    np.testing.assert_allclose(g.data, [2.0, 40.0])


def test_grad_unused_input_raises_unless_allowed():
    x = _leaf([1.0, 2.0])
    unused = _leaf([1.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        minigrad.grad((x * x).sum(), [x, unused])
    gx, gu = minigrad.grad((x * x).sum(), [x, unused], allow_unused=True)
    np.testing.assert_array_equal(gx.data, [2.0, 4.0])
    assert gu is None


def test_grad_input_that_does_not_require_grad_is_an_error():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        minigrad.grad((x * 2).sum(), [Variable([1.0])])


def test_grad_runs_hooks_of_inputs():
    x = _leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (g,) = minigrad.grad((x * 2).sum(), x)
    np.testing.assert_array_equal(g.data, [20.0, 20.0])


# --------------------------------------------------------------------------- graph shapes


def test_a_plus_a_counts_twice():
    a = _leaf([1.0, 2.0])
    (a + a).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [2.0, 2.0])


def test_a_times_a():
    a = _leaf([3.0])
    (a * a).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [6.0])


def test_diamond_graph():
    a = _leaf([1.0, 2.0])
    b = a * 3
    c = b + b * b  # b used twice: dc/da = 3 + 2 b * 3
    c.sum().backward()
    np.testing.assert_allclose(a.grad.data, 3 + 6 * b.data)


def test_shared_subexpression_node_runs_once_after_all_consumers():
    calls = []

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2

        @staticmethod
        def backward(ctx, grad):
            calls.append(grad.data.copy())
            return grad * 2

    x = _leaf([1.0, 2.0])
    shared = Double.apply(x)
    y = shared * 3 + shared.exp() + (shared * 5).tanh()
    y.sum().backward()
    assert len(calls) == 1
    s = shared.data
    upstream = 3 + np.exp(s) + 5 * (1 - np.tanh(5 * s) ** 2)
    np.testing.assert_allclose(calls[0], upstream)
    np.testing.assert_allclose(x.grad.data, 2 * upstream)


def test_deep_diamonds():
    x = _leaf([0.5])
    y = x
    for _ in range(20):
        y = y * 0.5 + y * 0.5  # each level: identity, with a diamond
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0])


def test_multiple_roots_with_gradients():
    x = _leaf([1.0, 2.0])
    y1 = x * 2
    y2 = x * x
    minigrad.backward([y1, y2], [Variable([1.0, 1.0]), Variable([10.0, 100.0])])
    np.testing.assert_allclose(x.grad.data, [2 + 20.0, 2 + 400.0])


def test_multiple_scalar_roots_without_gradients():
    x = _leaf([1.0, 2.0])
    minigrad.backward([(x * 2).sum(), (x * x).sum()])
    np.testing.assert_allclose(x.grad.data, 2 + 2 * x.data)


def test_multiple_roots_where_one_depends_on_the_other():
    x = _leaf([1.0, 2.0])
    y1 = x * 3
    y2 = y1 * y1
    minigrad.backward([y1, y2], [Variable([1.0, 1.0]), Variable([1.0, 1.0])])
    np.testing.assert_allclose(x.grad.data, 3 + 2 * y1.data * 3)


def test_number_of_gradients_must_match_roots():
    x = _leaf([1.0])
    with pytest.raises(RuntimeError):
        minigrad.backward([x * 2, x * 3], [Variable([1.0])])


def test_backward_is_exported_from_all_module_paths():
    assert minigrad.backward is minigrad.autodiff.backward is minigrad.autograd.backward
    assert minigrad.grad is minigrad.autodiff.grad is minigrad.autograd.grad


# --------------------------------------------------------------------------- text


def test_text_plus_concatenates():
    a = Variable("Hello", role="greeting", requires_grad=True)
    b = Variable(" world", role="subject", requires_grad=True)
    c = a + b
    assert c.data == "Hello world"
    assert c.grad_fn.name() == "ConcatBackward"
    assert (a + "!").data == "Hello!"
    assert ("Oh, " + a).data == "Oh, Hello"
    assert (Variable("x") + Variable("y")).data == "xy"


def test_text_feedback_reaches_every_part():
    a = Variable("Hello", role="greeting", requires_grad=True)
    b = Variable(" world", role="subject", requires_grad=True)
    c = a + b + "!"
    c.backward(Variable("Too short."))
    assert a.grad.data == "Too short."
    assert b.grad.data == "Too short."
    assert a.grad.is_text
    assert a.grad.role == "feedback to greeting"
    assert b.grad.role == "feedback to subject"


def test_text_feedback_through_a_str_on_the_left():
    a = Variable("world", role="subject", requires_grad=True)
    ("Hello " + a).backward(Variable("Name the planet."))
    assert a.grad.data == "Name the planet."


def test_text_feedback_accumulates_with_a_blank_line():
    a = Variable("Hello", role="greeting", requires_grad=True)
    (a + "!").backward(Variable("first"))
    (a + "?").backward(Variable("second"))
    assert a.grad.data == "first\n\nsecond"
    assert a.grad.role == "feedback to greeting"


def test_text_a_plus_a_gets_the_feedback_twice():
    a = Variable("ab", role="part", requires_grad=True)
    c = a + a
    assert c.data == "abab"
    c.backward(Variable("fb"))
    assert a.grad.data == "fb\n\nfb"
    assert a.grad.role == "feedback to part"


def test_text_feedback_from_two_roots():
    a = Variable("Hi", role="greeting", requires_grad=True)
    minigrad.backward([a + "!", a + "?"], [Variable("one"), Variable("two")])
    parts = a.grad.data.split("\n\n")
    assert sorted(parts) == ["one", "two"]
    assert a.grad.role == "feedback to greeting"


def test_text_feedback_can_be_a_str():
    a = Variable("Hi", role="greeting", requires_grad=True)
    (a + "!").backward("shout less")
    assert a.grad.data == "shout less"


def test_text_backward_needs_explicit_feedback():
    a = Variable("Hi", role="greeting", requires_grad=True)
    with pytest.raises(RuntimeError, match="feedback"):
        (a + "!").backward()


def test_text_and_numbers_do_not_mix():
    a = Variable("Hi", requires_grad=True)
    with pytest.raises(TypeError):
        a + Variable([1.0])
    with pytest.raises(TypeError):
        a * 2
    x = _leaf([1.0])
    with pytest.raises(TypeError):
        (x * 2).sum().backward(Variable("feedback"))


def test_text_without_requires_grad_gets_no_feedback():
    a = Variable("Hi", role="fixed")
    b = Variable(" there", role="tunable", requires_grad=True)
    (a + b).backward(Variable("warmer"))
    assert a.grad is None
    assert b.grad.data == "warmer"


# --------------------------------------------------------------------------- detect_anomaly


def test_detect_anomaly_names_the_node_that_made_nan():
    x = _leaf([0.0, 1.0])
    with minigrad.detect_anomaly(), np.errstate(divide="ignore", invalid="ignore"):
        y = (x.sqrt() * 0.0).sum()
        with pytest.raises(RuntimeError) as info:
            y.backward()
    message = str(info.value)
    assert "SqrtBackward" in message
    assert "nan" in message
    assert "test_engine.py" in message  # where the forward ran


def test_without_detect_anomaly_nan_passes_through():
    x = _leaf([0.0, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(x.grad.data[0])
    assert x.grad.data[1] == 0.0


def test_detect_anomaly_as_decorator_and_restores():
    x = _leaf([0.0])

    @minigrad.detect_anomaly()
    def run():
        with np.errstate(divide="ignore", invalid="ignore"):
            (x.sqrt() * 0.0).sum().backward()

    with pytest.raises(RuntimeError, match="nan"):
        run()
    # switched off again afterwards
    x.grad = None
    with np.errstate(divide="ignore", invalid="ignore"):
        (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(x.grad.data[0])


def test_detect_anomaly_with_a_custom_function():
    class Broken(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * np.nan

    x = _leaf([1.0])
    with minigrad.detect_anomaly():
        out = Broken.apply(x).sum()
        with pytest.raises(RuntimeError, match="BrokenBackward"):
            out.backward()


@pytest.mark.parametrize(
    "fn, second",
    [
        (lambda v: v.tanh(), lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
        (
            lambda v: v.sigmoid(),
            lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s),
        ),
        (lambda v: v.exp(), np.exp),
        (lambda v: v.log(), lambda x: -1 / x**2),
        (lambda v: v.sqrt(), lambda x: -0.25 * x**-1.5),
        (lambda v: 1.0 / v, lambda x: 2 / x**3),
    ],
    ids=["tanh", "sigmoid", "exp", "log", "sqrt", "reciprocal"],
)
def test_second_derivatives_of_elementwise_functions(fn, second):
    x = _leaf([0.5, 1.5])
    (g,) = minigrad.grad(fn(x).sum(), x, create_graph=True)
    (h,) = minigrad.grad(g.sum(), x)
    np.testing.assert_allclose(h.data, second(x.data), rtol=1e-10)


# --------------------------------------------------------------------------- only what is needed


def _spy_branch():
    calls = []

    class Spy(Function):
        @staticmethod
        def forward(ctx, v):
            return v.data * 1.0

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            return grad

    return Spy, calls


def test_grad_runs_only_the_nodes_that_lead_to_its_inputs():
    Spy, calls = _spy_branch()
    x1 = _leaf([1.0, 2.0])
    x2 = _leaf([3.0, 4.0])
    y = (x1 * 2).sum() + Spy.apply(x2 * x2).sum()
    (g,) = minigrad.grad(y, x1)
    np.testing.assert_array_equal(g.data, [2.0, 2.0])
    assert calls == []


def test_grad_ignores_a_modified_branch_it_does_not_need():
    x1 = _leaf([1.0, 2.0])
    x2 = _leaf([3.0, 4.0])
    y = (x1 * 2).sum() + (x2 * x2).sum()  # MulBackward of x2 * x2 saves x2
    with minigrad.no_grad():
        x2.add_(1.0)
    (g,) = minigrad.grad(y, x1)
    np.testing.assert_array_equal(g.data, [2.0, 2.0])


def test_backward_inputs_ignores_a_modified_branch_it_does_not_need():
    x1 = _leaf([1.0, 2.0])
    x2 = _leaf([3.0, 4.0])
    y = (x1 * 2).sum() + (x2 * x2).sum()
    with minigrad.no_grad():
        x2.add_(1.0)
    y.backward(inputs=[x1])
    np.testing.assert_array_equal(x1.grad.data, [2.0, 2.0])
    assert x2.grad is None


# --------------------------------------------------------------------------- multi-output nodes


class _SplitTwo(Function):
    @staticmethod
    def forward(ctx, v):
        return v.data * 2, v.data * 3

    @staticmethod
    def backward(ctx, g_first, g_second):
        return g_first * 2 + g_second * 3


class _StopGradient(Function):
    @staticmethod
    def forward(ctx, v):
        return v.data.copy()

    @staticmethod
    def backward(ctx, grad):
        return None


def test_hook_on_a_second_output_that_gets_no_gradient():
    x = _leaf([1.0])
    first, second = _SplitTwo.apply(x)
    seen = []
    second.register_hook(lambda g: seen.append(g))
    # the node is reached, but only through an edge that carries no gradient
    loss = _StopGradient.apply(first).sum() + (x * 1.0).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.data, [1.0])
    assert seen == []


def test_retain_grad_on_a_second_output_that_gets_no_gradient():
    x = _leaf([1.0])
    first, second = _SplitTwo.apply(x)
    second.retain_grad()
    loss = _StopGradient.apply(first).sum() + (x * 1.0).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.data, [1.0])
    assert second.grad is None


def test_hook_and_retain_grad_on_a_second_output():
    x = _leaf([1.0, 2.0])
    first, second = _SplitTwo.apply(x)
    second.retain_grad()
    second.register_hook(lambda g: g * 10)
    (first.sum() + second.sum()).backward()
    np.testing.assert_array_equal(second.grad.data, [10.0, 10.0])
    np.testing.assert_array_equal(x.grad.data, [2.0 + 30.0, 2.0 + 30.0])


def test_grad_with_respect_to_both_outputs_of_a_node():
    x = _leaf([1.0, 2.0])
    first, second = _SplitTwo.apply(x)
    g_first, g_second = minigrad.grad((first * 5 + second * 7).sum(), [first, second])
    np.testing.assert_array_equal(g_first.data, [5.0, 5.0])
    np.testing.assert_array_equal(g_second.data, [7.0, 7.0])


def test_backward_formulas_record_only_under_create_graph():
    modes = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, v):
            return v.data * 2

        @staticmethod
        def backward(ctx, grad):
            modes.append(minigrad.is_grad_enabled())
            return grad * 2

    x = _leaf([1.0])
    Probe.apply(x).sum().backward()
    Probe.apply(x).sum().backward(create_graph=True)
    minigrad.grad(Probe.apply(x).sum(), x)
    minigrad.grad(Probe.apply(x).sum(), x, create_graph=True)
    y = Probe.apply(x).sum()
    with minigrad.no_grad():
        y.backward(create_graph=True)
    assert modes == [False, True, False, True, True]
    assert minigrad.is_grad_enabled()


def test_once_differentiable_elsewhere_does_not_block_second_order():
    class Square(Function):
        @staticmethod
        def forward(ctx, v):
            ctx.save_for_backward(v)
            return v.data**2

        @staticmethod
        @minigrad.once_differentiable
        def backward(ctx, grad):
            (v,) = ctx.saved_tensors
            return grad * 2 * v

    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    f = (x**3).sum() + Square.apply(w).sum()
    gx, gw = minigrad.grad(f, [x, w], create_graph=True)
    np.testing.assert_array_equal(gw.data, [6.0, 8.0])
    (h,) = minigrad.grad(gx.sum(), x)
    np.testing.assert_array_equal(h.data, [6.0, 12.0])


def test_text_slice_feedback():
    a = Variable("Hello world", role="text", requires_grad=True)
    part = a[0:5]
    assert part.data == "Hello"
    part.backward(Variable("capitalise"))
    assert a.grad.data == "capitalise"
    assert a.grad.role == "feedback to text"

"""gradcheck: finite differences against backward, with a readable failure report."""

import numpy as np
import pytest

import minigrad
from minigrad import Function, GradcheckError, Variable, gradcheck


def _leaf(shape, seed, name=None, positive=False):
    rng = np.random.default_rng(seed)
    data = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    return Variable(data, requires_grad=True, name=name)


BUILT_INS = {
    "mul": (lambda a, b: a * b, [(3, 4), (3, 4)]),
    "add_broadcast": (lambda a, b: a + b, [(3, 4), (4,)]),
    "add_number": (lambda a: a + 2.0, [(3,)]),
    "radd_number": (lambda a: 2.0 + a, [(3,)]),
    "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "rsub_number": (lambda a: 3.0 - a, [(3,)]),
    "div": (lambda a, b: a / b, [(3,), "positive"]),
    "pow": (lambda a: a**3, [(4,)]),
    "neg": (lambda a: -a, [(2, 2)]),
    "exp": (lambda a: a.exp(), [(3, 2)]),
    "log": (lambda a: a.log(), ["positive"]),
    "tanh": (lambda a: a.tanh(), [(5,)]),
    "sigmoid": (lambda a: a.sigmoid(), [(5,)]),
    "sqrt": (lambda a: a.sqrt(), ["positive"]),
    "matmul": (lambda a, b: a @ b, [(3, 4), (4, 2)]),
    "matmul_vector": (lambda a, b: a @ b, [(3, 4), (4,)]),
    "sum_dim": (lambda a: a.sum(dim=1), [(3, 4)]),
    "mean_keepdim": (lambda a: a.mean(dim=0, keepdim=True), [(3, 4)]),
    "max": (lambda a: a.max(), [(6,)]),
    "softmax": (lambda a: a.softmax(-1), [(2, 5)]),
    "log_softmax": (lambda a: a.log_softmax(1), [(2, 5)]),
    "reshape_transpose": (lambda a: a.reshape(4, 3).transpose(0, 1) * 2, [(3, 4)]),
    "permute_unsqueeze": (lambda a: a.permute(1, 0).unsqueeze(0).squeeze(0), [(2, 3)]),
    "expand": (lambda a: a.expand(3, 4), [(1, 4)]),
    "index": (lambda a: a[1:, ::2] * a[0, 0], [(3, 4)]),
    "cat": (lambda a, b: minigrad.cat([a, b]) * 2, [(2, 3), (1, 3)]),
    "stack": (lambda a, b: minigrad.stack([a, b * a], dim=1), [(2, 3), (2, 3)]),
    "composite": (lambda a, b: ((a @ b).tanh() * 3 - 1.0).exp().sum(), [(2, 3), (3, 2)]),
}


def _inputs(specs):
    inputs = []
    for seed, spec in enumerate(specs):
        if spec == "positive":
            shape = inputs[0].shape if inputs else (3,)
            inputs.append(_leaf(shape, seed, positive=True))
        else:
            inputs.append(_leaf(spec, seed))
    return inputs


@pytest.mark.parametrize("name", list(BUILT_INS))
def test_gradcheck_passes_for_built_ins(name):
    fn, specs = BUILT_INS[name]
    assert gradcheck(fn, _inputs(specs)) is True


def test_gradcheck_leaves_the_inputs_unchanged():
    x = _leaf((3,), 0)
    before = x.data.copy()
    gradcheck(lambda a: a.exp(), (x,))
    np.testing.assert_array_equal(x.data, before)
    assert x.grad is None


def test_gradcheck_accepts_a_single_variable_and_non_variable_inputs():
    x = _leaf((3,), 0)
    assert gradcheck(lambda a: a.exp(), x)
    assert gradcheck(lambda a, k: a * k, (x, 2.5))
    assert gradcheck(lambda a, c: a * c, (x, Variable([1.0, 2.0, 3.0])))


def test_gradcheck_with_several_outputs():
    x = _leaf((3,), 0)
    assert gradcheck(lambda a: (a * 2, a.exp()), (x,))


def _cube_with_slope(coefficient: float) -> type[Function]:
    """y = scale * x**3 with backward coefficient * scale * x**2: 3 is right."""

    class Cube(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return scale * x.data**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * coefficient * ctx.scale * x * x, None

    return Cube


Cube = _cube_with_slope(3)
CubeWrong = _cube_with_slope(2)  # 2 instead of 3


class WeightedSum(Function):
    """y = x @ w; with a bug in w's gradient at one position."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x.data @ w.data

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        grad_x = grad @ w.T
        grad_w = (x.T @ grad).data.copy()
        grad_w[1, 0] += 0.5
        return grad_x, Variable(grad_w)


def test_gradcheck_passes_for_a_correct_custom_function():
    x = _leaf((2, 3), 1)
    assert gradcheck(lambda a: Cube.apply(a, 0.5), (x,))


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    assert minigrad.GradcheckError is minigrad.autodiff.GradcheckError


def test_gradcheck_reports_a_wrong_backward():
    x = Variable(np.array([1.0, 2.0]), requires_grad=True, name="x")
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a: CubeWrong.apply(a, 1.0), (x,))
    message = str(info.value)
    assert "input 0" in message
    assert "'x'" in message
    assert "(0,)" in message  # the element
    assert "analytical" in message and "numerical" in message
    assert "2" in message and "3" in message  # 2 * x**2 vs 3 * x**2 at x = 1


def test_gradcheck_report_names_the_right_input_and_element():
    x = _leaf((2, 3), 3, name="inputs")
    w = _leaf((3, 2), 4, name="weights")
    with pytest.raises(GradcheckError) as info:
        gradcheck(WeightedSum.apply, (x, w))
    message = str(info.value)
    assert "input 1" in message
    assert "'weights'" in message
    assert "(1, 0)" in message
    # the analytical value is the numerical one plus 0.5
    numerical = x.data[0, 1]  # d y[0, 0] / d w[1, 0]
    assert f"{numerical:.6g}" in message
    assert f"{numerical + 0.5:.6g}" in message


def test_gradcheck_raise_exception_false_returns_false():
    x = _leaf((3,), 5)
    assert gradcheck(lambda a: CubeWrong.apply(a, 1.0), (x,), raise_exception=False) is False
    assert gradcheck(lambda a: Cube.apply(a, 1.0), (x,), raise_exception=False) is True


def test_gradcheck_tolerances():
    class Nearly(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.01

    x = _leaf((3,), 6)
    assert gradcheck(Nearly.apply, (x,), raise_exception=False) is False
    assert gradcheck(Nearly.apply, (x,), rtol=1e-2) is True
    assert gradcheck(Nearly.apply, (x,), atol=5e-2, rtol=0) is True


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError):
        gradcheck(lambda a: a * 2, (Variable([1.0]),))


def test_gradcheck_warns_for_low_precision_inputs():
    x = Variable(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        gradcheck(lambda a: a * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_gradcheck_is_exported_from_all_module_paths():
    assert minigrad.gradcheck is minigrad.autodiff.gradcheck is minigrad.autograd.gradcheck


def test_gradcheck_skips_an_output_that_does_not_require_grad():
    x = _leaf((2,), 7)
    assert gradcheck(lambda a: (Variable([5.0, 6.0]), a * 2), (x,))


def test_gradcheck_skips_a_non_differentiable_output_listed_first():
    class PositionThenValue(Function):
        @staticmethod
        def forward(ctx, v):
            index = int(np.argmax(v.data))
            ctx.index, ctx.shape = index, v.shape
            position = Variable(np.asarray(float(index)))
            ctx.mark_non_differentiable(position)
            return position, Variable(np.asarray(v.data[index] * 2))

        @staticmethod
        def backward(ctx, grad_position, grad_value):
            result = np.zeros(ctx.shape)
            result[ctx.index] = 2 * grad_value.data
            return Variable(result)

    x = Variable(np.array([1.0, 3.0, 2.0]), requires_grad=True)
    assert gradcheck(PositionThenValue.apply, (x,))


SECOND_ORDER = [
    "mul",
    "div",
    "pow",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "sqrt",
    "matmul",
    "matmul_vector",
    "softmax",
    "log_softmax",
    "index",
    "stack",
    "composite",
]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_of_built_ins_pass_gradcheck(name):
    fn, specs = BUILT_INS[name]
    inputs = _inputs(specs)

    def first_derivatives(*xs):
        # gradcheck evaluates this under no_grad for its finite differences
        with minigrad.enable_grad():
            out = fn(*xs)
            weights = Variable(np.cos(np.arange(out.data.size)).reshape(out.shape))
            grads = minigrad.grad(
                (out * weights).sum(), list(xs), create_graph=True, allow_unused=True
            )
        return tuple(g for g in grads if g is not None)

    assert gradcheck(first_derivatives, inputs)

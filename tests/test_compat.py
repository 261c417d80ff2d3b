"""Code written for PyTorch or for afnio runs after changing only the import."""

import numpy as np
import pytest

import minigrad
import minigrad as afnio
import minigrad as torch

# --------------------------------------------------------------------------- PyTorch style


class LinearBySamples(torch.autograd.Function):
    """A linear layer whose backward returns one weight gradient per sample.

    The weight gradient has shape (batch, out, in); the engine adds the samples up.
    """

    @staticmethod
    def forward(
        ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        # (1, out, in) * (batch, 1, in) summed over `in` gives (batch, out)
        result = (weight.unsqueeze(0) * x.unsqueeze(1)).sum(dim=-1)
        if bias is not None:
            result = result + bias.unsqueeze(0)
        ctx.save_for_backward(x, weight, bias)
        return result

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(
        ctx, grad_result: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        x, weight, bias = ctx.saved_tensors
        grad_x: torch.Tensor | None = None
        grad_weight: torch.Tensor | None = None
        grad_bias: torch.Tensor | None = None
        # per sample: outer product of the output gradient and the input
        grad_weight = grad_result.unsqueeze(-1) * x.unsqueeze(-2)
        if bias is not None:
            grad_bias = grad_result.detach().clone()
        grad_x = (grad_result.unsqueeze(-1) * weight.unsqueeze(0)).sum(dim=1)
        return grad_x, grad_weight, grad_bias


def _linear_inputs(bias=True, batch=5, n_in=3, n_out=4, seed=0):
    rng = np.random.default_rng(seed)
    x = torch.Tensor(rng.standard_normal((batch, n_in)), requires_grad=True)
    w = torch.Tensor(rng.standard_normal((n_out, n_in)), requires_grad=True)
    b = torch.Tensor(rng.standard_normal(n_out), requires_grad=True) if bias else None
    return x, w, b


def test_import_names_match_pytorch():
    assert torch.Tensor is minigrad.Variable
    assert torch.autograd.Function is minigrad.Function
    assert torch.autograd.function.once_differentiable is minigrad.once_differentiable
    assert torch.autograd.grad is minigrad.grad
    assert torch.autograd.backward is minigrad.backward
    assert torch.autograd.gradcheck is minigrad.gradcheck


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_per_sample_linear_matches_the_built_in_linear(bias):
    x, w, b = _linear_inputs(bias)
    upstream = torch.Tensor(np.random.default_rng(9).standard_normal((5, 4)))

    out = LinearBySamples.apply(x, w, b)
    assert out.shape == (5, 4)
    assert out.grad_fn.name() == "LinearBySamplesBackward"
    out.backward(upstream)

    x2 = torch.Tensor(x.data.copy(), requires_grad=True)
    w2 = torch.Tensor(w.data.copy(), requires_grad=True)
    reference = x2 @ w2.T
    if bias:
        b2 = torch.Tensor(b.data.copy(), requires_grad=True)
        reference = reference + b2
    np.testing.assert_allclose(out.data, reference.data, rtol=1e-12)
    reference.backward(upstream)

    assert w.grad.shape == (4, 3)  # summed back from (5, 4, 3)
    np.testing.assert_allclose(w.grad.data, w2.grad.data, rtol=1e-12)
    np.testing.assert_allclose(x.grad.data, x2.grad.data, rtol=1e-12)
    if bias:
        assert b.grad.shape == (4,)  # summed back from (5, 4)
        np.testing.assert_allclose(b.grad.data, b2.grad.data, rtol=1e-12)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_per_sample_linear_passes_gradcheck(bias):
    x, w, b = _linear_inputs(bias, batch=3, n_in=2, n_out=3, seed=1)
    assert x.dtype == np.float64
    assert torch.autograd.gradcheck(LinearBySamples.apply, (x, w, b))


def test_per_sample_linear_inside_a_larger_graph():
    x, w, b = _linear_inputs(True, seed=2)
    loss = (LinearBySamples.apply(x.tanh(), w, b).sigmoid() * 2.0).sum()
    loss.backward()
    w_ref = torch.Tensor(w.data.copy(), requires_grad=True)
    b_ref = torch.Tensor(b.data.copy(), requires_grad=True)
    x_ref = torch.Tensor(x.data.copy(), requires_grad=True)
    ((x_ref.tanh() @ w_ref.T + b_ref).sigmoid() * 2.0).sum().backward()
    np.testing.assert_allclose(w.grad.data, w_ref.grad.data, rtol=1e-12)
    np.testing.assert_allclose(b.grad.data, b_ref.grad.data, rtol=1e-12)
    np.testing.assert_allclose(x.grad.data, x_ref.grad.data, rtol=1e-12)


def test_per_sample_linear_refuses_double_backward():
    x, w, b = _linear_inputs(True, seed=3)
    out = LinearBySamples.apply(x, w, b)
    (grad_w,) = torch.autograd.grad((out * out).sum(), w, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        grad_w.sum().backward()


def test_per_sample_linear_in_a_parameterised_layer():
    class Layer:
        def __init__(self, n_in, n_out):
            minigrad.manual_seed(0)
            bound = 1 / np.sqrt(n_in)
            self.weight = minigrad.Parameter(minigrad.rand(n_out, n_in).data * 2 * bound - bound)
            self.bias = minigrad.Parameter(np.zeros(n_out))
            self.linear = LinearBySamples.apply

        def __call__(self, x):
            return self.linear(x, self.weight, self.bias)

    layer = Layer(3, 2)
    x = torch.Tensor(np.ones((4, 3)))
    target = torch.Tensor(np.ones((4, 2)))
    losses = []
    for _ in range(30):
        loss = ((layer(x) - target) ** 2).mean()
        losses.append(loss.item())
        layer.weight.grad = None
        layer.bias.grad = None
        loss.backward()
        with torch.no_grad():
            layer.weight -= 0.1 * layer.weight.grad
            layer.bias -= 0.1 * layer.bias.grad
    assert losses[-1] < 0.05 * losses[0]
    assert layer.weight.is_leaf and layer.weight.requires_grad


class GradFactor(torch.autograd.Function):
    """Identity forward; backward scales the gradient by f."""

    @staticmethod
    def forward(ctx, x, f):
        ctx.f = f
        return x

    @staticmethod
    def backward(ctx, grad_y):
        return grad_y * ctx.f, None


def test_grad_factor_scales_the_gradient_only():
    x = torch.Tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 2
    h_node = h.grad_fn
    y = GradFactor.apply(h, 0.25)
    np.testing.assert_array_equal(y.data, h.data)
    assert y is not h
    assert h.grad_fn is h_node  # the input's history is not rewritten
    assert y.grad_fn.name() == "GradFactorBackward"
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.data, 0.25 * 2 * h.data * 2)


def test_grad_factor_on_a_leaf():
    x = torch.Tensor([1.0, 2.0], requires_grad=True)
    y = GradFactor.apply(x, 3.0)
    assert x.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])


def test_grad_factor_under_no_grad():
    x = torch.Tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        y = GradFactor.apply(x, 3.0)
    assert not y.requires_grad
    np.testing.assert_array_equal(y.data, [1.0, 2.0])


# --------------------------------------------------------------------------- afnio style


class Reverse(afnio.autodiff.Function):
    """Reverses a text; backward writes textual feedback for the input."""

    @staticmethod
    def forward(ctx, x: afnio.Variable):
        reversed_text = x.data[::-1]
        out = afnio.Variable(data=reversed_text, role=x.role, requires_grad=True)
        ctx.save_for_backward(x, reversed_text, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, reversed_text, out = ctx.saved_variables
        assert reversed_text == x.data[::-1]
        assert out.data == reversed_text
        feedback = f"About {x.role} (seen reversed as {reversed_text!r}): {grad_out.data}"
        x.grad = afnio.Variable(data=feedback, role=f"Feedback to {x.role}")
        return x.grad


def _feedback(text):
    return f"About Input string (seen reversed as 'gnirts a si sihT'): {text}"


def test_afnio_names():
    assert afnio.autodiff.Function is minigrad.Function
    assert afnio.autodiff.backward is minigrad.backward
    assert afnio.autodiff.no_grad is minigrad.no_grad


def test_afnio_style_function_forward():
    a = afnio.Variable(data="This is a string", role="Input string", requires_grad=True)
    c = Reverse.apply(a)
    assert c.data == "gnirts a si sihT"
    assert c.role == "Input string"
    assert c.requires_grad
    assert not c.is_leaf
    assert c.grad_fn.name() == "ReverseBackward"
    assert c.grad_fn.next_functions[0][0].variable is a


def test_afnio_style_feedback_lands_exactly_once():
    a = afnio.Variable(data="This is a string", role="Input string", requires_grad=True)
    c = Reverse.apply(a)
    c.backward(afnio.Variable("feedback text"))
    assert a.grad is not None
    assert a.grad.is_text
    assert a.grad.data == _feedback("feedback text")
    assert a.grad.data.count("feedback text") == 1
    assert "\n\n" not in a.grad.data
    assert a.grad.role.lower() == "feedback to input string"


def test_afnio_style_feedback_with_an_earlier_grad():
    a = afnio.Variable(data="This is a string", role="Input string", requires_grad=True)
    a.grad = afnio.Variable("earlier", role="feedback to Input string")
    Reverse.apply(a).backward(afnio.Variable("later"))
    assert a.grad.data == "earlier\n\n" + _feedback("later")


def test_afnio_style_two_consumers_accumulate():
    a = afnio.Variable(data="This is a string", role="Input string", requires_grad=True)
    first = Reverse.apply(a)
    second = Reverse.apply(a)
    afnio.backward([first, second], [afnio.Variable("one"), afnio.Variable("two")])
    parts = a.grad.data.split("\n\n")
    assert sorted(parts) == sorted([_feedback("one"), _feedback("two")])
    # several contributions: the engine's role, as when they arrive in two backward calls
    assert a.grad.role == "feedback to Input string"


def test_afnio_style_two_backward_calls_accumulate():
    a = afnio.Variable(data="This is a string", role="Input string", requires_grad=True)
    Reverse.apply(a).backward(afnio.Variable("one"))
    Reverse.apply(a).backward(afnio.Variable("two"))
    assert a.grad.data == _feedback("one") + "\n\n" + _feedback("two")
    assert a.grad.role == "feedback to Input string"


def test_afnio_style_function_after_concatenation():
    a = afnio.Variable(data="This is", role="Input string", requires_grad=True)
    b = afnio.Variable(data=" a string", role="suffix", requires_grad=True)
    c = Reverse.apply(a + b)
    assert c.data == "gnirts a si sihT"
    c.backward(afnio.Variable("fb"))
    # the Function assigned .grad on the (non-leaf) concatenation; the leaves still get
    # the returned feedback through the engine, once each
    assert a.grad.data.count("fb") == 1
    assert b.grad.data.count("fb") == 1
    assert a.grad.data.endswith("fb") and b.grad.data.endswith("fb")


def test_afnio_style_under_no_grad():
    a = afnio.Variable(data="abc", role="Input string", requires_grad=True)
    with afnio.no_grad():
        c = Reverse.apply(a)
    assert c.data == "cba"
    assert not c.requires_grad


def test_afnio_no_grad_example():
    x = afnio.Variable("abc", role="variable", requires_grad=True)
    with afnio.no_grad():
        y = x + x
    assert not y.requires_grad

    @afnio.no_grad()
    def doubler(v):
        return v + v

    @afnio.no_grad
    def tripler(v):
        return v + v + v

    assert not doubler(x).requires_grad
    assert tripler(x).data == "abcabcabc"
    assert not tripler(x).requires_grad
    with afnio.no_grad():
        p = afnio.Parameter("xyz")
    assert p.requires_grad

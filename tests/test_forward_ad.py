"""Forward-mode AD (dual numbers) and the functional API: jvp, vjp, jacobian, hessian, hvp.

J·v from forward mode is checked against the Jacobian that reverse mode builds row by row
(each row a gradient: the engine the rest of the suite tests against finite differences),
and against PyTorch when it is installed.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import forward_ad as fwAD
from minigrad.autograd import functional as F

RNG = np.random.default_rng(0)

# (name, function of one Variable): built-in rules, linear ops, and ops that take the
# route through their backward (abs, clamp, softmax, cumsum, maximum).
FUNCTIONS = [
    ("add and sub", lambda x: x + 2 * x - 1),
    ("mul", lambda x: x * x * 3),
    ("div", lambda x: 1 / (1 + x * x) + x / 2),
    ("pow", lambda x: (x * x + 1) ** 1.5 + 2.0**x),
    ("exp log", lambda x: (x * x + 1).log() + x.exp()),
    ("tanh sigmoid relu", lambda x: x.tanh() + x.sigmoid() + x.relu()),
    ("sqrt sin cos", lambda x: (x * x + 1).sqrt() + x.sin() * x.cos()),
    ("matmul", lambda x: x.reshape(2, 3) @ x.reshape(3, 2)),
    ("sum mean", lambda x: x * x.sum() + x.mean()),
    ("views", lambda x: x.reshape(2, 3).T.unsqueeze(0).squeeze(0).permute(1, 0)[1:].expand(3, 2, 3)),  # noqa: E501
    ("through backward", lambda x: x.abs() + x.clamp(-0.5, 0.5) + x.softmax(0) + x.cumsum(0)),
]


def _reverse_jacobian(function, x: np.ndarray) -> np.ndarray:
    return F.jacobian(function, minigrad.Variable(x)).data.reshape(-1, x.size)


@pytest.mark.parametrize("name,function", FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_forward_mode_gives_j_times_v(name, function) -> None:
    x, v = RNG.standard_normal(6), RNG.standard_normal(6)
    with fwAD.dual_level():
        y = function(fwAD.make_dual(minigrad.Variable(x), v))
        primal, tangent = fwAD.unpack_dual(y)
    np.testing.assert_allclose(primal.data, function(minigrad.Variable(x)).data)
    expected = _reverse_jacobian(function, x) @ v
    np.testing.assert_allclose(tangent.data.reshape(-1), expected, rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(-2, 2), min_size=2, max_size=5),
    st.lists(st.floats(-2, 2), min_size=2, max_size=5),
)
def test_jacfwd_and_jacrev_agree(values, direction) -> None:
    size = min(len(values), len(direction))
    x = minigrad.Variable(np.array(values[:size]))

    def f(x):
        return (x * x.sum()).tanh() * x.exp()

    forward = F.jacobian(f, x, strategy="forward-mode")
    reverse = F.jacobian(f, x)
    np.testing.assert_allclose(forward.data, reverse.data, rtol=1e-10, atol=1e-12)
    _, product = F.jvp(f, x, minigrad.Variable(np.array(direction[:size])))
    np.testing.assert_allclose(product.data, reverse.data @ direction[:size], atol=1e-10)


class Cube(minigrad.Function):
    """y = x³ with its own jvp, fed by save_for_forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return x.data**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x

    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.saved_for_forward
        return 3 * x * x * tangent


def test_a_function_s_own_jvp_is_used() -> None:
    calls = []

    class CountedCube(Cube):
        @staticmethod
        def jvp(ctx, tangent):
            calls.append(1)
            return Cube.jvp(ctx, tangent)

    x = np.array([1.0, -2.0])
    for requires_grad in (False, True):  # with and without a recorded node as ctx
        with fwAD.dual_level():
            primal = minigrad.Variable(x, requires_grad=requires_grad)
            y = CountedCube.apply(fwAD.make_dual(primal, np.array([1.0, 0.5])))
            np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.data, 3 * x * x * [1, 0.5])
    assert len(calls) == 2


def test_hvp_forward_over_reverse_matches_the_hessian() -> None:
    def f(x):
        return (x.sin() * x * x).sum() + (x[0] * x[1]).exp()

    x = minigrad.Variable(RNG.standard_normal(3))
    v = minigrad.Variable(RNG.standard_normal(3))
    value, product = F.hvp(f, x, v)
    hessian = F.hessian(f, x)
    np.testing.assert_allclose(product.data, hessian.data @ v.data, rtol=1e-10)
    assert value.item() == pytest.approx(f(x).item())


def test_vjp_and_tuples_of_inputs_and_outputs() -> None:
    a, b = minigrad.Variable(RNG.standard_normal(2)), minigrad.Variable(RNG.standard_normal(2))

    def f(a, b):
        return a * b, (a + b).exp()

    jac = F.jacobian(f, (a, b))
    assert len(jac) == 2 and len(jac[0]) == 2 and jac[0][0].shape == (2, 2)
    np.testing.assert_allclose(jac[0][1].data, np.diag(a.data))
    out, grads = F.vjp(lambda a, b: (a * b).sum(), (a, b))
    np.testing.assert_allclose(grads[0].data, b.data)
    np.testing.assert_allclose(grads[1].data, a.data)
    assert not out.requires_grad and a.grad is None  # the caller's Variables are untouched


def test_tangents_stay_inside_their_level() -> None:
    x = minigrad.Variable(np.array([1.0, 2.0]))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, np.ones(2))
        assert fwAD.unpack_dual(x).tangent is None  # the primal itself carries none
    with fwAD.dual_level():
        assert fwAD.unpack_dual(dual).tangent is None


def test_forward_ad_errors_say_what_to_do() -> None:
    x = minigrad.Variable(np.ones(2))
    with pytest.raises(RuntimeError, match="dual_level"):
        fwAD.make_dual(x, np.ones(2))
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="shape"):
            fwAD.make_dual(x, np.ones(3))
        with pytest.raises(RuntimeError, match="open already"):
            fwAD.dual_level().__enter__()
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(lambda x: x, x, strategy="sideways")
    with pytest.raises(TypeError, match="Variable or a tuple"):
        F.vjp(lambda x: x, [x])


def test_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)

    def ours(x):
        return (x * x).tanh() * x.sum() + x.exp() / (1 + x * x)

    def theirs(x):
        return (x * x).tanh() * x.sum() + x.exp() / (1 + x * x)

    _, our_jvp = F.jvp(ours, minigrad.Variable(x), minigrad.Variable(v))
    _, their_jvp = torch.autograd.functional.jvp(theirs, torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(our_jvp.data, their_jvp.numpy(), rtol=1e-12)

    def scalar(x):
        return (x.sin() * x * x).sum()

    _, our_hvp = F.hvp(scalar, minigrad.Variable(x), minigrad.Variable(v))
    _, their_hvp = torch.autograd.functional.hvp(scalar, torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(our_hvp.data, their_hvp.numpy(), rtol=1e-12)


def test_in_place_changes_of_dual_variables_are_refused_before_they_happen() -> None:
    x = minigrad.Variable(np.array([1.0, 2.0, 3.0]))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, np.ones(3))
        with pytest.raises(NotImplementedError, match="in-place"):
            dual.mul_(2)
        plain = minigrad.zeros(3, dtype=minigrad.float64)
        with pytest.raises(NotImplementedError, match="in-place"):
            plain[1:] = dual[:2] * 3
    np.testing.assert_array_equal(x.data, [1.0, 2.0, 3.0])  # nothing was changed


def test_integer_outputs_get_no_tangent_and_values_do() -> None:
    x = minigrad.Variable(np.array([[1.0, 5.0, 2.0], [3.0, 0.0, 1.0]]))
    with fwAD.dual_level():
        values, indices = fwAD.make_dual(x, np.arange(6.0).reshape(2, 3)).max(1)
        np.testing.assert_array_equal(fwAD.unpack_dual(values).tangent.data, [1.0, 3.0])
        assert fwAD.unpack_dual(indices).tangent is None


def test_edge_cases_of_the_functional_api() -> None:
    # A gradient that does not depend on x: the Hessian is zero, not an error.
    hessian = F.hessian(lambda x: (2 * x).sum(), minigrad.Variable(np.array([0.3, -1.0])))
    np.testing.assert_array_equal(hessian.data, np.zeros((2, 2)))
    # v may be left out for a single one-element input, as in PyTorch.
    _, slope = F.jvp(lambda x: x.exp(), minigrad.Variable(0.5))
    assert slope.item() == pytest.approx(np.exp(0.5))
    # Outside a dual level unpack_dual finds no tangent; an integer tangent is refused.
    x = minigrad.Variable(np.ones(2))
    assert fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level(), pytest.raises(TypeError, match="floating-point"):
        fwAD.make_dual(x, np.ones(2, dtype=np.int64))


def test_a_dual_level_forgets_the_tangent_of_a_freed_value() -> None:
    """Tangents are dropped when their values die, not kept until the level closes:
    a long chain in forward mode holds a fixed amount of memory (tracemalloc measures it)."""
    x = minigrad.Variable(np.random.default_rng(0).standard_normal(10_000))

    def peak(depth: int) -> int:
        tracemalloc.start()
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, minigrad.Variable(np.ones(10_000)))
            for _ in range(depth):
                dual = (dual * 1.01).tanh()
            fwAD.unpack_dual(dual)
        result = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return result

    assert peak(200) < 1.5 * peak(20)
    with pytest.raises(fwAD.NoDualLevelError, match="open dual level"):
        fwAD.make_dual(x, x)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_reverse_over_forward_through_an_op_without_a_jvp_rule(op):
    """A tangent computed through an op whose J·v is read off its backward (softmax has no
    rule of its own) is a differentiable function of the primal and of the tangent: its
    gradients equal central differences (reverse mode over forward mode, as jacrev(jacfwd)
    needs)."""
    rng = np.random.default_rng(3)
    x0, v0, w = rng.standard_normal(4), rng.standard_normal(4), np.array([1.0, 2.0, 3.0, 4.0])

    def tangent(xv, vv, needs_grad=False):
        x = minigrad.tensor(xv, requires_grad=needs_grad)
        v = minigrad.tensor(vv, requires_grad=needs_grad)
        with fwAD.dual_level():
            y = (getattr(fwAD.make_dual(x, v), op)(0) * minigrad.tensor(w)).sum()
            return x, v, fwAD.unpack_dual(y).tangent

    x, v, t = tangent(x0, v0, needs_grad=True)
    grad_x, grad_v = minigrad.autograd.grad(t, (x, v))
    eps, eye = 1e-6, np.eye(4)
    numeric_x = [(tangent(x0 + eps * e, v0)[2].item() - tangent(x0 - eps * e, v0)[2].item())
                 / (2 * eps) for e in eye]  # fmt: skip
    numeric_v = [(tangent(x0, v0 + eps * e)[2].item() - tangent(x0, v0 - eps * e)[2].item())
                 / (2 * eps) for e in eye]  # fmt: skip
    np.testing.assert_allclose(grad_x.numpy(), numeric_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_v.numpy(), numeric_v, rtol=1e-6, atol=1e-8)

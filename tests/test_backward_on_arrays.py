"""One backward formula, run two ways: on NumPy arrays (create_graph=False) and on
Variables (create_graph=True, the way a graph of the backward is recorded).

Every built-in Function that says `backward_on_arrays = True` has a case here; both runs
must agree, and gradcheck (finite differences, float64) checks the array run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minigrad
from minigrad.autodiff import gradcheck
from minigrad.core.function import Function
from minigrad.nn._functions import Attention, LSTMLayer

RNG = np.random.default_rng(7)


def positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape)


def signed(*shape: int) -> np.ndarray:
    values = RNG.uniform(0.2, 1.5, shape)
    return values * RNG.choice([-1.0, 1.0], shape)


# Function name -> [(label, inputs, f(*variables))]: broadcasting, 0-d, 1-d and batched.
CASES: dict[str, list[tuple[str, list[np.ndarray], Callable]]] = {
    "Add": [("broadcast bias", [signed(4, 3), signed(3)], lambda a, b: a + b),
            ("0-d", [signed(), signed()], lambda a, b: a + b)],
    "Sub": [("broadcast", [signed(2, 3), signed(1, 3)], lambda a, b: a - b)],
    "Mul": [("broadcast", [signed(4, 3), signed(4, 1)], lambda a, b: a * b),
            ("by a number", [signed(5)], lambda a: a * 2.5)],
    "Div": [("broadcast", [signed(3, 2), positive(2)], lambda a, b: a / b),
            ("a number by", [positive(4)], lambda a: 3.0 / a)],
    "Pow": [("square", [signed(3, 2)], lambda a: a**2),
            ("both", [positive(3), signed(3)], lambda a, b: a**b)],
    "Neg": [("matrix", [signed(2, 2)], lambda a: -a)],
    "Exp": [("vector", [signed(4)], lambda a: a.exp())],
    "Log": [("vector", [positive(4)], lambda a: a.log())],
    "Tanh": [("0-d", [signed()], lambda a: a.tanh()),
             ("matrix", [signed(2, 3)], lambda a: a.tanh())],
    "Sigmoid": [("matrix", [signed(3, 2)], lambda a: a.sigmoid())],
    "Relu": [("matrix", [signed(3, 4)], lambda a: a.relu())],
    "Sqrt": [("vector", [positive(5)], lambda a: a.sqrt())],
    "Abs": [("vector", [signed(5)], lambda a: a.abs())],
    "MatMul": [("matrices", [signed(4, 3), signed(3, 2)], lambda a, b: a @ b),
               ("vector @ matrix", [signed(3), signed(3, 2)], lambda a, b: a @ b),
               ("batch @ vector", [signed(2, 4, 3), signed(3)], lambda a, b: a @ b),
               ("broadcast batch", [signed(2, 1, 4, 3), signed(5, 3, 2)], lambda a, b: a @ b),
               ("batch @ matrix, folded", [signed(2, 3, 4, 3), signed(3, 2)],
                lambda a, b: a @ b),
               ("non-contiguous batch @ matrix", [signed(3, 2, 4)],
                lambda a: a.transpose(0, 1) @ a[0].T)],
    "Reshape": [("flatten", [signed(2, 3, 2)], lambda a: a.reshape(3, 4))],
    "Transpose": [(".T", [signed(3, 2)], lambda a: a.T),
                  ("dims 0, 2", [signed(2, 3, 4)], lambda a: a.transpose(0, 2))],
    "Sum": [("all", [signed(3, 4)], lambda a: a.sum()),
            ("dim kept", [signed(3, 4)], lambda a: a.sum(1, keepdim=True)),
            ("dims", [signed(2, 3, 4)], lambda a: a.sum((0, 2)))],
    "Mean": [("dim", [signed(3, 4)], lambda a: a.mean(0)),
             ("all", [signed(2, 2)], lambda a: a.mean())],
    "Softmax": [("rows", [signed(3, 4)], lambda a: a.softmax(1)),
                ("dim 0", [signed(3, 4)], lambda a: a.softmax(0))],
    "LogSoftmax": [("rows", [signed(3, 4)], lambda a: a.log_softmax(1)),
                   ("last", [signed(2, 3, 4)], lambda a: a.log_softmax(-1))],
    "Attention": [
        ("causal, batched", [signed(2, 3, 4), signed(2, 5, 4), signed(2, 5, 3)],
         lambda q, k, v: minigrad.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                             is_causal=True)),
        ("float mask, weights used", [signed(3, 4, 2), signed(3, 5, 2), signed(3, 5, 3),
                                      signed(4, 5)],
         lambda q, k, v, b: _attention_and_weights(q, k, v, b)),
    ],
    "LSTMLayer": [
        ("forward, batched", [signed(3, 2, 8), signed(2, 2), signed(2, 2), signed(8, 2)],
         lambda x, h, c, w: _flat(LSTMLayer.apply(x, h, c, w, False)[:3])),
        ("reverse, unbatched, all outputs", [signed(3, 8), signed(2), signed(2), signed(8, 2)],
         lambda x, h, c, w: _flat(LSTMLayer.apply(x, h, c, w, True))),
    ],
}


def _flat(outputs: tuple) -> minigrad.Variable:
    """A Function's outputs as one vector: one seed gradient reaches them all."""
    return minigrad.cat([output.reshape(-1) for output in outputs])


def _attention_and_weights(q, k, v, bias):
    """Attention's two outputs both used: the weights' gradient joins the output's."""
    out, weights = Attention.apply(q, k, v, bias, None, 0.8, False, False)
    return out.sum(-1) + (weights * weights).sum(-1)


def on_arrays() -> list[str]:
    found, stack = set(), [Function]
    while stack:
        for subclass in stack.pop().__subclasses__():
            stack.append(subclass)
            if subclass.__dict__.get("backward_on_arrays"):
                found.add(subclass.__name__)
    return sorted(found)


def test_every_function_that_runs_on_arrays_has_a_case() -> None:
    assert on_arrays() == sorted(CASES)


PARAMS = [
    pytest.param(name, inputs, f, id=f"{name}: {label}")
    for name, cases in CASES.items()
    for label, inputs, f in cases
]


def run(inputs: list[np.ndarray], f: Callable, create_graph: bool) -> list[np.ndarray]:
    variables = [minigrad.Variable(x.copy(), requires_grad=True) for x in inputs]
    y = f(*variables)
    seed = minigrad.Variable(RNG.standard_normal(y.shape) if y.shape else np.array(0.7))
    grads = minigrad.autograd.grad(y, variables, seed, create_graph=create_graph)
    return [g.detach().numpy() for g in grads]


@pytest.mark.parametrize(("name", "inputs", "f"), PARAMS)
def test_the_two_runs_of_one_formula_agree(name, inputs, f) -> None:
    state = RNG.bit_generator.state
    on_arrays_run = run(inputs, f, create_graph=False)
    RNG.bit_generator.state = state  # the same seed gradient
    on_variables_run = run(inputs, f, create_graph=True)
    for got, expected in zip(on_arrays_run, on_variables_run):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(("name", "inputs", "f"), PARAMS)
def test_the_run_on_arrays_matches_finite_differences(name, inputs, f) -> None:
    variables = [minigrad.Variable(x.copy(), requires_grad=True) for x in inputs]
    assert gradcheck(f, variables)


def test_the_formula_really_runs_on_arrays(monkeypatch) -> None:
    """No Variable is made for the steps of a flagged formula: Function.apply is not called."""
    x = minigrad.Variable(signed(3, 4), requires_grad=True)
    w = minigrad.Variable(signed(2, 4), requires_grad=True)
    loss = (x @ w.T).tanh().log_softmax(1).sum()
    calls = []
    original = Function.apply.__func__

    def counting(cls, *args, **kwargs):
        calls.append(cls.__name__)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(Function, "apply", classmethod(counting))
    loss.backward()
    assert calls == []
    assert x.grad.shape == (3, 4) and w.grad.shape == (2, 4)


def test_a_custom_function_still_gets_variables() -> None:
    seen = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.data**2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            seen.append((type(grad).__name__, type(x).__name__))
            return 2 * x * grad

    x = minigrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    Square.apply(x).tanh().sum().backward()
    assert seen == [("Variable", "Variable")]
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh([1.0, 4.0]) ** 2) * [1.0, 2.0])

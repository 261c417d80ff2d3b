"""Scale (a million-node chain, no recursion) and memory (saved values freed, no cycles)."""

import gc
import sys
import weakref

import numpy as np
import pytest

import minigrad
from minigrad import Function, Variable

# --------------------------------------------------------------------------- scale


def test_million_node_chain_forward_and_backward():
    limit = sys.getrecursionlimit()
    x = Variable(0.5, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y + 1.0
    assert y.item() == 1_000_000.5
    y.backward()
    assert x.grad.item() == 1.0
    del y  # freeing the long chain must not recurse either
    assert sys.getrecursionlimit() == limit


def test_deep_chain_with_grad_and_a_custom_function():
    class Halve(Function):
        @staticmethod
        def forward(ctx, v):
            return v.data * 0.5

        @staticmethod
        def backward(ctx, grad):
            return grad * 0.5

    x = Variable([1.0, 2.0], requires_grad=True)
    y = x
    for index in range(50_000):
        y = Halve.apply(y) if index % 2 else y * 2.0
    (g,) = minigrad.grad(y.sum(), x)
    np.testing.assert_array_equal(g.data, [1.0, 1.0])
    np.testing.assert_array_equal(y.data, [1.0, 2.0])


def test_deep_chain_with_retain_graph_twice():
    x = Variable(1.0, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0 + 0.0
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 2.0


# --------------------------------------------------------------------------- saved values are freed


class CubeSavingSquare(Function):
    """x**3, saving the intermediate x**2 (a NumPy array made in forward) for backward."""

    last_square = None

    @staticmethod
    def forward(ctx, x):
        square = x.data * x.data
        CubeSavingSquare.last_square = weakref.ref(square)
        ctx.save_for_backward(square)
        return square * x.data

    @staticmethod
    def backward(ctx, grad):
        (square,) = ctx.saved_tensors
        return grad * 3 * square


def test_saved_intermediate_array_dies_after_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    loss = CubeSavingSquare.apply(x).sum()
    square = CubeSavingSquare.last_square
    assert square() is not None  # kept for backward
    loss.backward()
    np.testing.assert_allclose(x.grad.data, [3.0, 12.0])
    assert square() is None


def test_saved_intermediate_array_survives_retain_graph():
    x = Variable([1.0, 2.0], requires_grad=True)
    loss = CubeSavingSquare.apply(x).sum()
    square = CubeSavingSquare.last_square
    loss.backward(retain_graph=True)
    assert square() is not None
    loss.backward(retain_graph=True)
    assert square() is not None
    np.testing.assert_allclose(x.grad.data, [6.0, 24.0])
    loss.backward()  # the last one frees it
    assert square() is None
    np.testing.assert_allclose(x.grad.data, [9.0, 36.0])


def test_saved_array_dies_with_the_graph_without_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    loss = CubeSavingSquare.apply(x).sum()
    square = CubeSavingSquare.last_square
    del loss
    assert square() is None


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt"])
def test_outputs_saved_by_built_ins_die_after_backward(op):
    x = Variable([0.5, 1.5], requires_grad=True)
    out = getattr(x, op)()
    saved = weakref.ref(out._data)
    loss = (out * 2.0).sum()
    del out  # now only the graph keeps the output's values
    assert saved() is not None
    loss.backward()
    assert saved() is None


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt"])
def test_outputs_saved_by_built_ins_survive_retain_graph(op):
    x = Variable([0.5, 1.5], requires_grad=True)
    out = getattr(x, op)()
    saved = weakref.ref(out._data)
    loss = (out * 2.0).sum()
    del out
    loss.backward(retain_graph=True)
    assert saved() is not None
    first = x.grad.data.copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.data, 2 * first)
    assert saved() is None


def test_saved_intermediate_variables_die_after_backward():
    x = Variable([0.5, 1.5], requires_grad=True)
    h = x.exp()  # saved by the multiplication below
    saved_variable = weakref.ref(h)
    saved_array = weakref.ref(h._data)
    loss = (h * h).sum()
    del h
    assert saved_variable() is not None
    loss.backward()
    np.testing.assert_allclose(x.grad.data, 2 * np.exp(2 * x.data))
    assert saved_variable() is None
    assert saved_array() is None


def test_grad_frees_saved_values_too():
    x = Variable([1.0, 2.0], requires_grad=True)
    loss = CubeSavingSquare.apply(x).sum()
    square = CubeSavingSquare.last_square
    minigrad.grad(loss, x)
    assert square() is None


# --------------------------------------------------------------------------- no reference cycles


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _refs(*objects):
    return [weakref.ref(o) for o in objects]


def _alive(refs):
    return [r() is not None for r in refs]


def _build_numeric_graph():
    x = Variable([0.5, -1.0, 2.0], requires_grad=True)
    w = Variable([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=True)
    h = (w @ x).tanh()
    e = h.exp()
    s = e.softmax(0)
    m = s.max()
    c = CubeSavingSquare.apply(h)
    loss = (m + c.sum() + (e * h).mean() + h.sigmoid().sqrt().sum()) * 2.0
    intermediates = [h, e, s, m, c]
    nodes = [v.grad_fn for v in intermediates] + [loss.grad_fn]
    return x, w, loss, intermediates, nodes


def test_graph_is_freed_without_the_cycle_collector(no_gc):
    x, w, loss, intermediates, nodes = _build_numeric_graph()
    refs = _refs(loss, *intermediates, *nodes)
    accumulators = _refs(*(n for n, _ in loss.grad_fn.next_functions if n is not None))
    del loss, intermediates, nodes
    assert _alive(refs) == [False] * len(refs)
    assert _alive(accumulators) == [False] * len(accumulators)
    assert x.grad is None


def test_graph_is_freed_after_backward_without_the_cycle_collector(no_gc):
    x, w, loss, intermediates, nodes = _build_numeric_graph()
    refs = _refs(loss, *intermediates, *nodes)
    loss.backward()
    del loss, intermediates, nodes
    assert _alive(refs) == [False] * len(refs)
    assert x.grad is not None and w.grad is not None


def test_graph_is_freed_after_retain_graph_backward(no_gc):
    x, w, loss, intermediates, nodes = _build_numeric_graph()
    refs = _refs(loss, *intermediates, *nodes)
    loss.backward(retain_graph=True)
    del loss, intermediates, nodes
    assert _alive(refs) == [False] * len(refs)


def test_leaves_and_their_accumulators_are_freed(no_gc):
    x = Variable([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    accumulator = weakref.ref(y.grad_fn.next_functions[0][0].next_functions[0][0])
    leaf = weakref.ref(x)
    y.backward()
    del x, y
    assert leaf() is None
    assert accumulator() is None


def test_hooks_and_retain_grad_make_no_cycles(no_gc):
    x = Variable([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 1.0)
    x.register_hook(lambda g: g + 0.0)
    loss = (h * h).sum()
    loss.backward()
    refs = _refs(x, h, loss, h.grad_fn, loss.grad_fn)
    del x, h, loss
    assert _alive(refs) == [False] * len(refs)


def test_custom_function_features_make_no_cycles(no_gc):
    class Split(Function):
        @staticmethod
        def forward(ctx, x, label):
            ctx.label = label
            ctx.set_materialize_grads(False)
            first = Variable(x.data * 2)
            index = Variable(np.asarray(float(np.argmax(x.data))))
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x, first, None, label)
            return first, index

        @staticmethod
        def backward(ctx, grad_first, grad_index):
            x, first, _, _ = ctx.saved_tensors
            return grad_first * 2, None

    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x.data * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        @minigrad.once_differentiable
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = Variable([1.0, 3.0, 2.0], requires_grad=True)
    first, index = Split.apply(x, "tag")
    out = Scale.apply(first, 4.0)
    loss = out.sum()
    refs = _refs(first, index, out, loss, first.grad_fn, out.grad_fn, loss.grad_fn)
    loss.backward()
    np.testing.assert_array_equal(x.grad.data, [8.0, 8.0, 8.0])
    del first, index, out, loss
    assert _alive(refs) == [False] * len(refs)


def test_higher_order_graph_from_grad_makes_no_cycles(no_gc):
    x = Variable([1.0, 2.0], requires_grad=True)
    f = (x**3).sum()
    (g,) = minigrad.grad(f, x, create_graph=True)
    refs = _refs(f, g, f.grad_fn, g.grad_fn)
    (h,) = minigrad.grad(g.sum(), x)
    np.testing.assert_allclose(h.data, 6 * x.data)
    del f, g
    assert _alive(refs) == [False] * len(refs)


def test_text_graphs_make_no_cycles(no_gc):
    class Reverse(Function):
        @staticmethod
        def forward(ctx, v):
            out = Variable(v.data[::-1], role=v.role, requires_grad=True)
            ctx.save_for_backward(v, out)
            return out

        @staticmethod
        def backward(ctx, feedback):
            v, _ = ctx.saved_variables
            v.grad = Variable(f"reversed: {feedback.data}", role=f"feedback to {v.role}")
            return v.grad

    a = Variable("abc", role="prompt", requires_grad=True)
    b = Variable("def", role="suffix", requires_grad=True)
    joined = a + b + "!"
    out = Reverse.apply(joined)
    refs = _refs(joined, out, joined.grad_fn, out.grad_fn)
    out.backward(Variable("shorter"))
    assert a.grad.data.count("shorter") == 1
    del joined, out
    assert _alive(refs) == [False] * len(refs)


def test_failed_backward_leaves_no_cycles(no_gc):
    class Broken(Function):
        @staticmethod
        def forward(ctx, v):
            return v.data

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("broken backward")

    x = Variable([1.0], requires_grad=True)
    loss = (Broken.apply(x * 2) * 3).sum()
    refs = _refs(loss, loss.grad_fn)
    with pytest.raises(ValueError):
        loss.backward()
    del loss
    # a traceback keeps frames alive until it is dropped; pytest.raises dropped it
    assert _alive(refs) == [False] * len(refs)

"""Tests of lesson 11's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

from minigrad.course import CheckError, lesson11

# --------------------------------------------------------------------------- Exercise 11.1


class Value:
    def __init__(self, data, parents=(), backward_fns=()):
        if len(parents) != len(backward_fns):
            raise ValueError("one backward function per parent")
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self.parents = tuple(parents)
        self.backward_fns = tuple(backward_fns)


def _value_class(**changes):
    """A Value class with one slip: `changes` replaces parts of the reference __init__."""

    class Slipped:
        def __init__(self, data, parents=(), backward_fns=()):
            if changes.get("check_lengths", True) and len(parents) != len(backward_fns):
                raise ValueError("one backward function per parent")
            convert = changes.get("convert", lambda d: np.asarray(d, dtype=float))
            self.data = convert(data)
            self.grad = changes.get("grad", lambda s: np.zeros_like(s.data))(self)
            self.parents = tuple(parents)
            self.backward_fns = tuple(backward_fns)

    return Slipped


def test_11_1_reference_passes(capsys) -> None:
    lesson11.check_11_1(Value)
    assert "Exercise 11.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_value_class(grad=lambda s: 0.0), "zeros of the data's shape"),
        (_value_class(grad=lambda s: s.data), "shares its memory with .data"),
        (_value_class(grad=lambda s: s.data.copy()), "looks like a copy of the data"),
        (_value_class(convert=np.asarray), "convert to float"),
        (_value_class(convert=lambda d: d), "store a NumPy array"),
        (_value_class(check_lengths=False), "raise a ValueError"),
        (Value(1.0), "pass the class itself"),
    ],
)
def test_11_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_1(answer)


# --------------------------------------------------------------------------- Exercise 11.2


def add(a, b):
    return Value(a.data + b.data, (a, b), (lambda g: g, lambda g: g))


def mul(a, b):
    return Value(a.data * b.data, (a, b), (lambda g: g * b.data, lambda g: g * a.data))


def tanh(a):
    t = np.tanh(a.data)
    return Value(t, (a,), (lambda g: g * (1 - t**2),))


def mul_without_grad_output(a, b):
    return Value(a.data * b.data, (a, b), (lambda g: b.data, lambda g: a.data))


def mul_swapped(a, b):
    return Value(a.data * b.data, (a, b), (lambda g: g * a.data, lambda g: g * b.data))


def mul_in_place(a, b):
    def share_a(g):
        g *= b.data
        return g

    return Value(a.data * b.data, (a, b), (share_a, lambda g: g * a.data))


def tanh_of_input(a):
    return Value(np.tanh(a.data), (a,), (lambda g: g * (1 - a.data**2),))


def tanh_unsquared(a):
    t = np.tanh(a.data)
    return Value(t, (a,), (lambda g: g * (1 - t),))


def tanh_without_grad_output(a):
    t = np.tanh(a.data)
    return Value(t, (a,), (lambda g: 1 - t**2,))


def add_without_grad_output(a, b):
    return Value(a.data + b.data, (a, b), (lambda g: np.ones_like(g), lambda g: np.ones_like(g)))


def add_with_data_parents(a, b):
    return Value(a.data + b.data, (a.data, b.data), (lambda g: g, lambda g: g))


def add_as_array(a, b):
    return a.data + b.data


def test_11_2_reference_passes(capsys) -> None:
    lesson11.check_11_2(Value, add, mul, tanh)
    assert "Exercise 11.2: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("ops", "hint"),
    [
        ((add, mul_without_grad_output, tanh), "the derivative alone: multiply it by grad_output"),
        ((add, mul_swapped, tanh), "this parent's own data"),
        ((add, mul_in_place, tanh), "changed grad_output in place"),
        ((add, mul, tanh_of_input), "uses the input"),
        ((add, mul, tanh_unsquared), "squared"),
        ((add, mul, tanh_without_grad_output), "the derivative alone"),
        ((add_without_grad_output, mul, tanh), "return grad_output itself"),
        ((add_with_data_parents, mul, tanh), "the input Values themselves"),
        ((add_as_array, mul, tanh), "return a new Value"),
    ],
)
def test_11_2_mistakes(ops, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_2(Value, *ops)


# --------------------------------------------------------------------------- Exercise 11.3


def backward(output):
    consumers = {}
    seen = {output}
    stack = [output]
    while stack:
        node = stack.pop()
        for parent in node.parents:
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    output.grad = np.ones_like(output.data)
    ready = [output]
    while ready:
        node = ready.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
            consumers[parent] -= 1
            if consumers[parent] == 0:
                ready.append(parent)


def backward_recursive(output):
    """micrograd's way: a topological order built by a recursive depth-first search."""
    order, seen = [], set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for parent in node.parents:
                visit(parent)
            order.append(node)

    visit(output)
    output.grad = np.ones_like(output.data)
    for node in reversed(order):
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)


def backward_overwrites(output):
    consumers = {}
    stack, seen = [output], {output}
    while stack:
        node = stack.pop()
        for parent in node.parents:
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    output.grad = np.ones_like(output.data)
    ready = [output]
    while ready:
        node = ready.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = backward_fn(node.grad)  # the slip: = instead of +=
            consumers[parent] -= 1
            if consumers[parent] == 0:
                ready.append(parent)


def backward_every_time(output):
    """Iterative, but a node is pushed (and runs) once per edge that reaches it."""
    output.grad = np.ones_like(output.data)
    stack = [output]
    while stack:
        node = stack.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
            stack.append(parent)


def backward_first_arrival(output):
    """Iterative, but a node runs as soon as its first gradient has arrived."""
    output.grad = np.ones_like(output.data)
    queue, done = [output], {output}
    while queue:
        node = queue.pop(0)
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
            if parent not in done:
                done.add(parent)
                queue.append(parent)


def backward_without_seed(output):
    consumers = {}
    stack, seen = [output], {output}
    while stack:
        node = stack.pop()
        for parent in node.parents:
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    ready = [output]
    while ready:
        node = ready.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
            consumers[parent] -= 1
            if consumers[parent] == 0:
                ready.append(parent)


def backward_resets_leaves(output):
    stack, seen = [output], {output}
    while stack:
        node = stack.pop()
        node.grad = np.zeros_like(node.data)
        for parent in node.parents:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    backward(output)


def test_11_3_reference_passes(capsys) -> None:
    lesson11.check_11_3(Value, backward)
    assert "Exercise 11.3: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (backward_recursive, "recursion limit"),
        (backward_overwrites, "half the right value"),
        (backward_every_time, "ran more than once"),
        (backward_first_arrival, "ran before all its consumers"),
        (backward_without_seed, "output.grad = np.ones_like"),
        (backward_resets_leaves, "backward reset x.grad"),
    ],
)
def test_11_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_3(Value, answer)


def test_11_3_recursion_hint_names_the_chain() -> None:
    with pytest.raises(CheckError, match="chain of 10,000 nodes"):
        lesson11.check_11_3(Value, backward_recursive)


# --------------------------------------------------------------------------- Exercise 11.4


def mlp_forward_backward(
    x, labels, W1, b1, W2, b2, *, stable=True, mean=True, sum_bias=True, mask=True
):
    n = x.shape[0]
    z1 = x @ W1.T + b1
    h = np.maximum(z1, 0)
    logits = h @ W2.T + b2
    shift = logits.max(axis=1, keepdims=True) if stable else 0.0
    exps = np.exp(logits - shift)
    log_sum_exp = np.log(exps.sum(axis=1)) + np.squeeze(shift)
    divide = n if mean else 1
    loss = (log_sum_exp - logits[np.arange(n), labels]).sum() / n
    d_logits = exps / exps.sum(axis=1, keepdims=True)
    d_logits[np.arange(n), labels] -= 1
    d_logits /= divide
    d_h = d_logits @ W2
    d_z1 = d_h * (z1 > 0) if mask else d_h
    reduce = (lambda g: g.sum(axis=0)) if sum_bias else (lambda g: g)
    return {
        "loss": loss,
        "logits": d_logits,
        "W2": d_logits.T @ h,
        "b2": reduce(d_logits),
        "h": d_h,
        "z1": d_z1,
        "W1": d_z1.T @ x,
        "b1": reduce(d_z1),
        "x": d_z1 @ W1,
    }


def _slipped_mlp(**slip):
    def answer(x, labels, W1, b1, W2, b2):
        return mlp_forward_backward(x, labels, W1, b1, W2, b2, **slip)

    return answer


def test_11_4_reference_passes(capsys) -> None:
    lesson11.check_11_4(mlp_forward_backward)
    assert "Exercise 11.4: correct." in capsys.readouterr().out


def test_11_4_reference_agrees_with_minigrad() -> None:
    inputs = lesson11._mlp_case(3)
    expected = lesson11.mlp_reference(**inputs)
    got = mlp_forward_backward(*inputs.values())
    for key in lesson11.MLP_KEYS:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-10, atol=1e-12)


def _loss_summed(x, labels, W1, b1, W2, b2):
    result = mlp_forward_backward(x, labels, W1, b1, W2, b2)
    result["loss"] *= x.shape[0]
    return result


def _bias_summed_over_features(x, labels, W1, b1, W2, b2):
    result = mlp_forward_backward(x, labels, W1, b1, W2, b2, sum_bias=False)
    result["b2"] = result["b2"].sum(axis=1)
    return result


def _transposed_weight(x, labels, W1, b1, W2, b2):
    result = mlp_forward_backward(x, labels, W1, b1, W2, b2)
    result["W2"] = result["W2"].T
    return result


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_slipped_mlp(sum_bias=False), "broadcast to every one of the 5 rows"),
        (_bias_summed_over_features, "sum over the wrong axis"),
        (_slipped_mlp(stable=False), "Subtract each row's maximum"),
        (_slipped_mlp(mean=False), r"batch size times the right value.*N = 5"),
        (_loss_summed, "the loss is the mean, divide by N"),
        (_slipped_mlp(mask=False), "without the ReLU's mask"),
        (_transposed_weight, "did you forget a transpose"),
        (lambda *args: None, "return a dict"),
        (lambda *args: {"loss": 0.0}, "the dict has no 'logits'"),
    ],
)
def test_11_4_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_4(answer)


# --------------------------------------------------------------------------- Exercise 11.5


def train_by_hand(grad_fn, params, x, labels, lr, steps):
    params = {name: value.copy() for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(grads["loss"])
        for name in params:
            params[name] = params[name] - lr * grads[name]
    return params, losses


def train_in_place(grad_fn, params, x, labels, lr, steps):
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(grads["loss"])
        for name in params:
            params[name] -= lr * grads[name]
    return params, losses


def train_uphill(grad_fn, params, x, labels, lr, steps):
    return train_by_hand(grad_fn, params, x, labels, -lr, steps)


def train_rebinding(grad_fn, params, x, labels, lr, steps):
    params = {name: value.copy() for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(grads["loss"])
        for name, value in params.items():
            value = value - lr * grads[name]  # the slip under test: rebinds the name only
    return params, losses


def train_every_key(grad_fn, params, x, labels, lr, steps):
    params = {name: value.copy() for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(grads["loss"])
        for name in grads:
            params[name] = params[name] - lr * grads[name]
    return params, losses


def test_11_5_reference_passes(capsys) -> None:
    lesson11.check_11_5(train_by_hand)
    assert "Exercise 11.5: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (train_in_place, "changed the arrays of the params dict"),
        (train_uphill, "the loss goes up"),
        (train_rebinding, "only rebinds the loop variable"),
        (train_every_key, "Update only the names in params"),
        (lambda *args: [0.0], "return a pair"),
    ],
)
def test_11_5_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_5(answer)


def test_unwritten_value_is_named_in_later_checks() -> None:
    class Stub:
        def __init__(self, data, parents=(), backward_fns=()):
            raise NotImplementedError("Exercise 11.1: write the Value class")

    with pytest.raises(CheckError, match="write Exercise 11.1 first"):
        lesson11.check_11_2(Stub, add, mul, tanh)
    with pytest.raises(CheckError, match="write Exercise 11.1 first"):
        lesson11.check_11_3(Stub, backward)
    with pytest.raises(CheckError, match="Exercise 11.1 is not written yet"):
        lesson11.check_11_1(Stub)

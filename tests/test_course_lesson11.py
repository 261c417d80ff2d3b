"""Tests of lesson 11's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np
import pytest

from minigrad.course import CheckError, lesson11

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "11_build_an_engine.ipynb"

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


class ValueRaisingTypeError(Value):
    """Refuses parents and backward_fns of different lengths, with the wrong error type."""

    def __init__(self, data, parents=(), backward_fns=()):
        if len(parents) != len(backward_fns):
            raise TypeError("one backward function per parent")
        super().__init__(data, parents, backward_fns)


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
        (ValueRaisingTypeError, r"raised TypeError: .* raise a ValueError \(the type the check"),
        (Value(1.0), "pass the class itself"),
    ],
)
def test_11_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_1(answer)


class ValueWrittenDifferently:
    """A correct Value written another way: np.array with a copy, zeros by shape."""

    def __init__(self, data, parents=(), backward_fns=()):
        parents, backward_fns = list(parents), list(backward_fns)
        if len(backward_fns) != len(parents):
            raise ValueError("parents and backward_fns differ in length")
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros(self.data.shape)
        self.parents = tuple(parents)
        self.backward_fns = tuple(backward_fns)


def test_11_1_variant_passes(capsys) -> None:
    lesson11.check_11_1(ValueWrittenDifferently)
    assert "Exercise 11.1: correct." in capsys.readouterr().out


def test_11_1_reference_value_passes(capsys) -> None:
    lesson11.check_11_1(lesson11.Value)
    assert "Exercise 11.1: correct." in capsys.readouterr().out


def test_11_1_edge_cases_are_integers() -> None:
    """Value(3) and Value([1, 2]): integer data, the edge that integer grads break on."""
    with pytest.raises(CheckError, match=r"Value\(3\)\.data has dtype int"):
        lesson11.check_11_1(_value_class(convert=np.asarray))


# --------------------------------------------------------------------------- Exercise 11.2

RefValue = lesson11.Value


def _bound(share, parents, out):
    """The backward function g -> share(*parents' data, out, g)."""
    return lambda g: share(*[p.data for p in parents], out, g)


def _op(forward, *shares):
    """An operation from a forward function and share functions (a, [b,] out, g) -> share."""

    def op(*parents):
        out = forward(*(p.data for p in parents))
        return RefValue(out, parents, tuple(_bound(share, parents, out) for share in shares))

    return op


def _binary(forward, share_a, share_b):
    return _op(forward, share_a, share_b)


sub = _binary(lambda a, b: a - b, lambda a, b, o, g: g, lambda a, b, o, g: -g)
div = _binary(lambda a, b: a / b, lambda a, b, o, g: g / b, lambda a, b, o, g: -g * a / b**2)
sigmoid = _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * s * (1 - s))


def sub_variant(a, b):
    return RefValue(np.subtract(a.data, b.data), [a, b], [np.positive, np.negative])


def div_variant(a, b):
    out = a.data / b.data
    return RefValue(out, (a, b), (lambda g: g * (1 / b.data), lambda g: -(g * out) / b.data))


def sigmoid_variant(a):
    """Correct, written differently: σ' = e^(-a - 2 log(1 + e^-a)), finite in both tails."""
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-a.data))
    return RefValue(s, (a,), (lambda g: g * np.exp(-a.data - 2 * np.logaddexp(0, -a.data)),))


def sigmoid_quotient_rule(a):
    """The quotient rule, e^-a / (1 + e^-a)², computing exp(-a) again: nan at a = -800."""
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-a.data))
    return RefValue(
        s, (a,), (lambda g: g * np.exp(-a.data) / (1 + np.exp(-a.data)) ** 2,)
    )


def test_11_2_reference_passes(capsys) -> None:
    lesson11.check_11_2(sub, div, sigmoid)
    lesson11.check_11_2(lesson11.sub, lesson11.div, lesson11.sigmoid)
    assert capsys.readouterr().out.count("Exercise 11.2: correct.") == 2


def test_11_2_variant_passes(capsys) -> None:
    lesson11.check_11_2(sub_variant, div_variant, sigmoid_variant)
    assert "Exercise 11.2: correct." in capsys.readouterr().out


def sub_in_place(a, b):
    def share_b(g):
        g *= -1
        return g

    return RefValue(a.data - b.data, (a, b), (lambda g: g, share_b))


def _with_fns(op, count):
    def wrapped(*parents):
        out = op(*parents)
        out.backward_fns = out.backward_fns[:count]
        return out

    return wrapped


@pytest.mark.parametrize(
    ("ops", "hint"),
    [
        # sub
        (
            (_binary(lambda a, b: a - b, lambda a, b, o, g: g, lambda a, b, o, g: g), div, sigmoid),
            r"a sign error: a - b goes down when b goes up",
        ),
        (
            (
                _binary(lambda a, b: a - b, lambda a, b, o, g: -g, lambda a, b, o, g: -g),
                div,
                sigmoid,
            ),
            r"the minus belongs to b's share",
        ),
        (
            (
                _binary(
                    lambda a, b: a - b,
                    lambda a, b, o, g: np.ones_like(g),
                    lambda a, b, o, g: -np.ones_like(g),
                ),
                div,
                sigmoid,
            ),
            r"the local derivative alone: multiply it by grad_output",
        ),
        ((sub_in_place, div, sigmoid), "changed grad_output in place"),
        ((_with_fns(sub, 1), div, sigmoid), "give one function per parent"),
        ((lambda a, b: a.data - b.data, div, sigmoid), "return a new Value"),
        (
            (
                lambda a, b: RefValue(
                    a.data - b.data, (a.data, b.data), (lambda g: g, lambda g: -g)
                ),
                div,
                sigmoid,
            ),
            "the input Values themselves",
        ),
        # div
        (
            (
                sub,
                _binary(
                    lambda a, b: a / b, lambda a, b, o, g: g / b, lambda a, b, o, g: g * a / b**2
                ),
                sigmoid,
            ),
            r"a sign error: a/b = a·b⁻¹",
        ),
        (
            (
                sub,
                _binary(
                    lambda a, b: a / b, lambda a, b, o, g: g / b, lambda a, b, o, g: -g * a / b
                ),
                sigmoid,
            ),
            "that has b, not b²",
        ),
        (
            (
                sub,
                _binary(lambda a, b: a / b, lambda a, b, o, g: g / b, lambda a, b, o, g: -g / b**2),
                sigmoid,
            ),
            "that has lost the a",
        ),
        (
            (
                sub,
                _binary(
                    lambda a, b: a / b, lambda a, b, o, g: g * b, lambda a, b, o, g: -g * a / b**2
                ),
                sigmoid,
            ),
            "that is mul's rule",
        ),
        (
            (
                sub,
                _binary(lambda a, b: a / b, lambda a, b, o, g: 1 / b, lambda a, b, o, g: -a / b**2),
                sigmoid,
            ),
            "the local derivative alone",
        ),
        # sigmoid
        (
            (sub, div, _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * (1 - s**2))),
            "that is tanh's rule",
        ),
        (
            (sub, div, _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * s)),
            r"the \(1 - σ\) is missing",
        ),
        (
            (sub, div, _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * (1 - s))),
            "the σ factor is missing",
        ),
        (
            (sub, div, _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * a * (1 - a))),
            "uses the input x where the output belongs",
        ),
        (
            (sub, div, _op(lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: s * (1 - s))),
            "the local derivative alone",
        ),
        ((sub, div, 1.0), "sigmoid should be a function"),
    ],
)
def test_11_2_mistakes(ops, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_2(*ops)


def test_11_2_hidden_data_has_the_edge_cases() -> None:
    """One Value as both parents (sub(a, a): a total gradient of exactly 0), a sigmoid at
    0 and at ±800, and a zero in every vector grad_output (the check sets v[1] = 0)."""
    labels = [label for _, label, _, _, _ in lesson11._OPS_112]
    assert "sub(a, a)" in labels and "div(a, a)" in labels
    sigmoid_inputs = [x for name, _, x, _, _ in lesson11._OPS_112 if name == "sigmoid"]
    assert any(0.0 in np.ravel(x) for x in sigmoid_inputs)
    assert any(-800.0 in np.ravel(x) and 800.0 in np.ravel(x) for x in sigmoid_inputs)


def test_11_2_visible_check_catches_the_quotient_rule_at_minus_800() -> None:
    """e^-a / (1 + e^-a)² is right near 0 and inf/inf = nan at a = -800: the visible check
    tries the tails and names the recomputed exponential (issue 36)."""
    with pytest.raises(
        CheckError,
        match=r"a = -800.*contains inf or nan: computing an exponential again overflows .*"
        r"at a = -800, exp\(-a\) = exp\(800\) is inf",
    ) as caught:
        lesson11.check_11_2(sub, div, sigmoid_quotient_rule)
    assert "exp(a) =" not in str(caught.value)


def test_11_2_names_exp_of_a_overflowing_at_plus_800() -> None:
    """e^a / (1 + e^a)² is nan at a = +800, where exp(a) overflows (exp(-800) is 0 and the
    left tail is right): the hint names exp(a) at +800, not exp(-a) at -800."""
    quotient_with_exp_a = _op(
        lambda a: 1 / (1 + np.exp(-a)), lambda a, s, g: g * np.exp(a) / (1 + np.exp(a)) ** 2
    )
    with pytest.raises(
        CheckError, match=r"at a = \+800, exp\(a\) = exp\(800\) is inf, and e\^a / "
    ) as caught:
        with np.errstate(over="ignore", invalid="ignore"):
            lesson11.check_11_2(sub, div, quotient_with_exp_a)
    assert "-800" not in str(caught.value).split("contains inf or nan")[1]


def test_11_2_same_parent_twice_is_checked_per_edge() -> None:
    """sub(a, a) whose second closure forgets the minus: each edge's share is compared."""

    def sub_a_a_slip(a, b):
        if a is b:
            return RefValue(a.data - b.data, (a, b), (lambda g: g, lambda g: g))
        return sub(a, b)

    with pytest.raises(CheckError, match=r"sub\(a, a\).*a sign error"):
        lesson11.check_11_2(sub_a_a_slip, div, sigmoid)


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


def backward_variant(output):
    """Correct, written differently: edge lists, a deque, += into fresh arrays, id() keys."""
    from collections import deque

    pending, order = {}, deque([output])
    visited = {id(output)}
    while order:
        node = order.popleft()
        for parent in node.parents:
            pending[id(parent)] = pending.get(id(parent), 0) + 1
            if id(parent) not in visited:
                visited.add(id(parent))
                order.append(parent)
    output.grad = output.grad * 0 + 1.0
    queue = deque([output])
    while queue:
        node = queue.popleft()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad += backward_fn(node.grad)
            pending[id(parent)] -= 1
            if not pending[id(parent)]:
                queue.append(parent)


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


def _walk(output, *, seed=True, add=True, skip_zero=False, leaf_return=False):
    """The reference walk with one slip switched on."""
    if leaf_return and not output.parents:
        return
    consumers = {}
    stack, seen = [output], {output}
    while stack:
        node = stack.pop()
        for parent in node.parents:
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    if seed:
        output.grad = np.ones_like(output.data)
    ready = [output]
    while ready:
        node = ready.pop()
        if skip_zero and not np.any(node.grad):
            continue  # the slip: its parents never lose this consumer
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            share = backward_fn(node.grad)
            parent.grad = parent.grad + share if add else share
            consumers[parent] -= 1
            if consumers[parent] == 0:
                ready.append(parent)


def backward_counting_consumers(output, fifo=False):
    """Counts each parent once per consumer (a set of parents), but lowers the count once
    per edge: a node used twice by one consumer becomes ready too early."""
    consumers, stack, seen = {}, [output], {output}
    while stack:
        node = stack.pop()
        for parent in set(node.parents):
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    output.grad = np.ones_like(output.data)
    ready = [output]
    while ready:
        node = ready.pop(0) if fifo else ready.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
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
    lesson11.check_11_3(backward)
    lesson11.check_11_3(lesson11.backward)
    assert capsys.readouterr().out.count("Exercise 11.3: correct.") == 2


def test_11_3_variant_passes(capsys) -> None:
    lesson11.check_11_3(backward_variant)
    assert "Exercise 11.3: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (backward_recursive, "recursion limit"),
        (lambda output: _walk(output, add=False), "half the right value"),
        (backward_every_time, "ran more than once"),
        (backward_first_arrival, "ran before all its consumers"),
        # the hidden graph where a has two consumers that each use it twice
        (backward_counting_consumers, r"\(a \* a\) \* tanh\(a \+ a\).* ran before all its"),
        (lambda output: backward_counting_consumers(output, fifo=True), r"ran before all its"),
        (lambda output: _walk(output, seed=False), r"output.grad = np.ones_like"),
        (backward_resets_leaves, "backward reset x.grad"),
        # the edge cases of the hidden data: a zero gradient, a leaf as the output
        (lambda output: _walk(output, skip_zero=True), "whose gradient is zero still runs"),
        (lambda output: _walk(output, leaf_return=True), "also when the output is a leaf"),
        (RefValue, "not a class"),
        ("backward", "backward should be a function"),
    ],
)
def test_11_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_3(answer)


def test_11_3_recursion_hint_names_the_chain() -> None:
    with pytest.raises(CheckError, match="chain of 10,000 nodes"):
        lesson11.check_11_3(backward_recursive)


def test_11_3_does_not_need_the_learners_value() -> None:
    """A wrong Exercise 11.1 cannot fail check 11.3: it builds its graphs itself."""
    import inspect

    assert list(inspect.signature(lesson11.check_11_3).parameters) == ["backward"]
    assert list(inspect.signature(lesson11.check_11_2).parameters) == ["sub", "div", "sigmoid"]


# --------------------------------------------------------------------------- Exercise 11.4


def test_11_4_reference_passes(capsys) -> None:
    lesson11.check_11_4(4.0, 36.0)
    lesson11.check_11_4(4, np.float64(36))  # written differently: ints, a NumPy scalar
    assert capsys.readouterr().out.count("Exercise 11.4: correct.") == 2


def test_11_4_answer_is_what_the_reference_engine_does() -> None:
    x, a, y = lesson11.twice_backward_graph()
    lesson11.backward(y)
    lesson11.backward(y)
    assert (float(a.grad), float(x.grad)) == (4.0, 36.0)


@pytest.mark.parametrize(
    ("a_grad", "x_grad", "hint"),
    [
        (4.0, 24.0, "retain_graph=True"),
        (4.0, 12.0, "x.grad after ONE backward"),
        (4.0, 48.0, "if the seed were added as well"),
        (2.0, 36.0, "a.grad after ONE backward"),
        (6.0, 48.0, "if the seed were added; backward SETS"),
        (3.0, 36.0, r"predicted_a_grad is 3, expected 4: that is 2 \+ 1: .*two edges"),
        (4.0, 30.0, r"predicted_x_grad is 30, expected 36\.$"),
        (None, None, "Exercise 11.4 is not written yet"),
        ([4.0], 36.0, r"has shape \(1,\), expected \(\): write one number"),
    ],
)
def test_11_4_mistakes(a_grad, x_grad, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_4(a_grad, x_grad)


# --------------------------------------------------------------------------- Exercise 11.5


def mlp_forward_backward(
    x, labels, W1, b1, W2, b2, *, stable=True, mean=True, sum_bias=True, mask=True, relu_ge=False
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
    d_z1 = (d_h * ((z1 >= 0) if relu_ge else (z1 > 0))) if mask else d_h
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


def test_11_5_reference_passes(capsys) -> None:
    lesson11.check_11_5(mlp_forward_backward)
    assert "Exercise 11.5: correct." in capsys.readouterr().out


def mlp_variant(x, labels, W1, b1, W2, b2):
    """Correct, written differently: an explicit one-hot, a softmax from exp / sum."""
    n, classes = x.shape[0], W2.shape[0]
    onehot = np.eye(classes)[labels]
    z1 = x @ W1.T + b1
    h = z1 * (z1 > 0)
    logits = h @ W2.T + b2
    m = logits.max(axis=1, keepdims=True)
    exps = np.exp(logits - m)
    softmax = exps / exps.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(exps.sum(axis=1)) + m[:, 0] - (logits * onehot).sum(axis=1))
    d_logits = (softmax - onehot) / n
    d_h = d_logits @ W2
    d_z1 = np.where(z1 > 0, d_h, 0.0)
    return dict(
        loss=loss,
        logits=d_logits,
        W2=d_logits.T @ h,
        b2=np.sum(d_logits, 0),
        h=d_h,
        z1=d_z1,
        W1=d_z1.T @ x,
        b1=np.sum(d_z1, 0),
        x=d_z1 @ W1,
    )


def test_11_5_variant_passes(capsys) -> None:
    lesson11.check_11_5(mlp_variant)
    assert "Exercise 11.5: correct." in capsys.readouterr().out


def test_11_5_hidden_data_has_exact_zeros_in_z1() -> None:
    case = lesson11._mlp_case_ties()
    z1 = case["x"] @ case["W1"].T + case["b1"]
    assert np.count_nonzero(z1 == 0) >= 2


def test_11_5_reference_agrees_with_minigrad() -> None:
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
        (_slipped_mlp(relu_ge=True), r"that is a \(z1 >= 0\) mask"),
        (_transposed_weight, "did you forget a transpose"),
        (lambda *args: None, "return a dict"),
        (lambda *args: {"loss": 0.0}, "the dict has no 'logits'"),
    ],
)
def test_11_5_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_5(answer)


def test_11_5_mask_at_ties_names_the_entries_without_dumping_matrices() -> None:
    with pytest.raises(CheckError) as caught:
        lesson11.check_11_5(_slipped_mlp(relu_ge=True))
    message = str(caught.value)
    assert message == (
        "Exercise 11.5: result['z1'] on a batch of 4 is wrong at entries [1, 0] and [1, 2], "
        "where z1 is exactly 0: that is a (z1 >= 0) mask, but relu'(0) is taken as 0 (as in "
        "minigrad and PyTorch), so mask with (z1 > 0)."
    )
    assert len(message) < 250


# --------------------------------------------------------------------------- Exercise 11.6


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


def train_adding_every_key(grad_fn, params, x, labels, lr, steps):
    """Updates every gradient it got, adding the intermediates and x to params."""
    params = {name: value.copy() for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(grads.pop("loss"))
        params = {name: params.get(name, 0.0) - lr * grad for name, grad in grads.items()}
    return params, losses


def train_one_step_short(grad_fn, params, x, labels, lr, steps):
    return train_by_hand(grad_fn, params, x, labels, lr, steps - 1)


def train_loss_after_update(grad_fn, params, x, labels, lr, steps):
    """Records the loss after each update: every loss one step late."""
    params = {name: value.copy() for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        for name in params:
            params[name] = params[name] - lr * grads[name]
        losses.append(grad_fn(x, labels, **params)["loss"])
    return params, losses


def train_variant(grad_fn, params, x, labels, lr, steps):
    """Correct, written differently: copies with np.array, -= on the copies, a tuple out."""
    own = {name: np.array(params[name]) for name in params}
    history = []
    for _ in range(steps):
        grads = grad_fn(x, labels, W1=own["W1"], b1=own["b1"], W2=own["W2"], b2=own["b2"])
        history.append(float(grads["loss"]))
        for name in ("W1", "b1", "W2", "b2"):
            own[name] -= lr * grads[name]
    return own, tuple(history)


def test_11_6_variant_passes(capsys) -> None:
    lesson11.check_11_6(train_variant)
    assert "Exercise 11.6: correct." in capsys.readouterr().out


def test_11_6_one_step_is_checked() -> None:
    """The boundary run of 1 step: a loop of range(steps - 1) returns no loss at all."""
    calls = []

    def records_calls(grad_fn, params, x, labels, lr, steps):
        calls.append(steps)
        return (
            train_one_step_short(grad_fn, params, x, labels, lr, steps)
            if steps == 1
            else (train_by_hand(grad_fn, params, x, labels, lr, steps))
        )

    with pytest.raises(CheckError, match=r"returned 0 loss value\(s\), expected 1"):
        lesson11.check_11_6(records_calls)
    assert calls == [8, 1]


def test_mlp_by_hand_agrees_with_minigrad() -> None:
    """The course's NumPy solution of 11.5, which the cells after Exercise 11.6 train with."""
    for inputs in (lesson11._mlp_case(3), lesson11._mlp_case(11, n=6, scale=900.0)):
        expected = lesson11.mlp_reference(**{k: v.copy() for k, v in inputs.items()})
        got = lesson11.mlp_by_hand(**inputs)
        for key in lesson11.MLP_KEYS:
            np.testing.assert_allclose(got[key], expected[key], rtol=1e-10, atol=1e-12)
    lesson11.check_11_5(lesson11.mlp_by_hand)


def train_mutating_then_raising(grad_fn, params, x, labels, lr, steps):
    """Writes into the caller's arrays, then fails (a typo in a key)."""
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        for name in params:
            params[name] -= lr * grads[name]
        losses.append(grads["losses"])
    return params, losses


def mlp_mutating_then_raising(x, labels, W1, b1, W2, b2):
    """Scales the caller's weights in place, then fails."""
    W1 *= 10.0
    W2 *= 10.0
    raise ValueError("a slip after the damage")


def _lesson_cells(*prefixes: str) -> list[str]:
    """The source of the lesson's code cell that starts with each prefix."""
    cells = nbformat.read(LESSON, as_version=4).cells
    found = []
    for prefix in prefixes:
        hits = [c.source for c in cells if c.cell_type == "code" and c.source.startswith(prefix)]
        assert len(hits) == 1, prefix
        found.append(hits[0])
    return found


def test_cells_after_11_6_use_the_course_and_copies_whatever_the_answer() -> None:
    """An answer that changes its inputs and then raises fails its check, and the lesson's
    training cell after it still draws minigrad's curve: it calls the course's solutions,
    on a copy of `start`, never the learner's functions (issue 36)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import minigrad
    import minigrad.nn.functional as F

    with pytest.raises(CheckError, match="raised KeyError"):
        lesson11.check_11_6(train_mutating_then_raising)
    with pytest.raises(CheckError, match="raised ValueError"):
        lesson11.check_11_5(mlp_mutating_then_raising)

    setup, figure = _lesson_cells("def make_spirals(", "# The course's solutions of Exercises 11.5")
    assert "train_by_hand(" not in figure.replace("lesson11.train_by_hand(", "")
    assert "mlp_forward_backward" not in figure
    namespace = {"np": np, "minigrad": minigrad, "F": F, "plt": plt, "lesson11": lesson11}
    exec(setup, namespace)  # noqa: S102 - the lesson's own cell
    start = {name: value.copy() for name, value in namespace["start"].items()}
    # The learner's broken answers, defined as the exercise cells would define them.
    namespace["train_by_hand"] = train_mutating_then_raising
    namespace["mlp_forward_backward"] = mlp_mutating_then_raising
    namespace["plot_training"] = lambda *args: None
    exec(figure, namespace)  # noqa: S102 - the lesson's own cell
    for name, value in start.items():
        np.testing.assert_array_equal(namespace["start"][name], value)
    gap = np.max(np.abs(np.array(namespace["hand_losses"]) - namespace["engine_losses"]))
    assert gap < 1e-9


def test_11_6_reference_passes(capsys) -> None:
    lesson11.check_11_6(train_by_hand)
    assert "Exercise 11.6: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (train_in_place, "changed the arrays of the params dict"),
        (train_uphill, "the loss goes up"),
        (train_rebinding, "only rebinds the loop variable"),
        (train_every_key, "Update only the names in params"),
        (train_adding_every_key, r"raised NotAParameterError: .*added keys of grads to params"),
        (train_one_step_short, r"returned 7 loss value\(s\), expected 8"),
        (train_loss_after_update, "every loss is one step late"),
        (lambda *args: [0.0], "return a pair"),
    ],
)
def test_11_6_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_6(answer)


# --------------------------------------------------------------------------- Exercise 11.7


def _softplus(forward, share):
    """A softplus from forward(a) -> out and share(a, out, g) -> a's share."""

    def softplus(a):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = forward(a.data)

        def backward_fn(g):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                return share(a.data, out, g)

        return RefValue(out, (a,), (backward_fn,))

    return softplus


def _stable_forward(a):
    return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))


def _softplus_plain(forward, share):
    """As _softplus, without silencing NumPy: an overflow in the share warns (or raises,
    under the check's np.errstate(over="raise"))."""

    def softplus(a):
        out = forward(a.data)
        return RefValue(out, (a,), (lambda g: share(a.data, out, g),))

    return softplus


def _stable_sigmoid(a):
    """σ(a) from exp(-|a|) alone: no exponential can overflow."""
    z = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + z), z / (1 + z))


softplus_variant = _softplus_plain(
    lambda a: np.logaddexp(0.0, a), lambda a, out, g: g * _stable_sigmoid(a)
)


def test_11_7_reference_passes(capsys) -> None:
    lesson11.check_11_7(lesson11.softplus)
    lesson11.check_11_7(softplus_variant)
    assert capsys.readouterr().out.count("Exercise 11.7: correct.") == 2


def test_11_7_naive_softplus_is_nan_where_the_reference_is_finite() -> None:
    """The NaN the exercise removes: e^a / (1 + e^a) at a = 800 is inf/inf."""
    a = lesson11.SOFTPLUS_TAILS
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(a) / (1 + np.exp(a))
    assert np.isnan(naive[a == 800.0]).all()
    node = RefValue(a.copy())
    out = lesson11.softplus(node)
    lesson11.backward(out)
    assert np.all(np.isfinite(out.data)) and np.all(np.isfinite(node.grad))
    np.testing.assert_allclose(node.grad, np.exp(-np.logaddexp(0.0, -a)), atol=1e-300)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            _softplus(lambda a: np.log(1 + np.exp(a)), lambda a, out, g: g * np.exp(a - out)),
            r"\.data contains inf or nan: np\.log\(1 \+ np\.exp\(a\)\) overflows",
        ),
        (
            _softplus(_stable_forward, lambda a, out, g: g * np.exp(a) / (1 + np.exp(a))),
            r"e\^a / \(1 \+ e\^a\) is inf/inf = nan at a = 800",
        ),
        (_softplus(_stable_forward, lambda a, out, g: np.exp(a - out)), "local derivative alone"),
        (_softplus(_stable_forward, lambda a, out, g: g / (1 + np.exp(a))), r"that is σ\(-a\)"),
        (_softplus(_stable_forward, lambda a, out, g: g * np.exp(a)), "the inner e\\^a alone"),
        (
            _softplus(
                _stable_forward, lambda a, out, g: g * np.exp(a - out) * (1 - np.exp(a - out))
            ),
            "the derivative of σ",
        ),
        (
            _softplus(lambda a: np.log1p(np.exp(-np.abs(a))), lambda a, out, g: g),
            "the m in front is missing",
        ),
        (lambda a: a.data, "return a new Value"),
        (1.0, "softplus should be a function"),
    ],
)
def test_11_7_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson11.check_11_7(answer)


def test_11_7_share_with_one_minus_exp_cancels_in_the_negative_tail() -> None:
    """g * (1 - exp(-out)) is right to 1e-8 everywhere, but 0 instead of 4.2e-18 at a = -40
    and 1.7e-4 off relative to its size at a = -30: the visible check holds the share to
    relative accuracy at a = -30 (grad_output is not 0 there) and names the cancellation."""
    a = np.array(-30.0)
    out = _stable_forward(a)
    assert abs((1 - np.exp(-out)) / np.exp(a - out) - 1) > 1e-4
    cancels = _softplus_plain(_stable_forward, lambda a, out, g: g * (1 - np.exp(-out)))
    with pytest.raises(
        CheckError, match=r"not relative to its size where it is tiny: at a = -30 .*"
        r"1 - exp\(-out\) cancels where softplus is tiny.*exp\(a - out\)"
    ):
        lesson11.check_11_7(cancels)
    # Where the hidden tests hold the share to relative accuracy too (a = -40, -100, -700).
    check_cell = next(c.source for c in nbformat.read(LESSON, as_version=4).cells
                      if c.source.startswith("# Check Exercise 11.7"))
    assert "the share at a = -40, -100, -700 (relative error)" in check_cell


def test_11_7_share_that_overflows_but_comes_out_right_is_named() -> None:
    """g / (1 + exp(-a)) is exactly right (1/inf = 0 at a = -800), and exp(-a) overflows
    there; so does a where() whose discarded branch overflows. The check runs the share with
    overflow raised and names the entry and the exponential."""
    over_left = _softplus_plain(_stable_forward, lambda a, out, g: g / (1 + np.exp(-a)))
    with pytest.raises(
        CheckError, match=r"an exponential overflows at a = -800 \(exp\(-a\) = exp\(800\) is "
        r"inf\): the result happens to be right"
    ) as caught:
        lesson11.check_11_7(over_left)
    assert "a = 800" not in str(caught.value)

    branches = _softplus_plain(_stable_forward, lambda a, out, g: g * np.where(
        a >= 0, 1 / (1 + np.exp(-a)), np.exp(a) / (1 + np.exp(a))))
    with pytest.raises(CheckError, match=r"overflows at a = -800 .* and at a = 800 \(exp\(a\)"):
        lesson11.check_11_7(branches)


def test_11_7_forward_shifted_by_a_not_abs_a_is_named() -> None:
    """max(a, 0) + log1p(exp(-a)) is inf at a = -800 only: the hint says shift by |a|, not
    that np.log(1 + np.exp(a)) overflows at +800."""
    shifted_by_a = _softplus(
        lambda a: np.maximum(a, 0) + np.log1p(np.exp(-a)), lambda a, out, g: g * np.exp(a - out)
    )
    with pytest.raises(CheckError, match=r"inf at a = -800 only: shift by \|a\|.*exp\(-a\) "
                       r"overflows at a = -800") as caught:
        lesson11.check_11_7(shifted_by_a)
    assert "np.log(1 + np.exp(a))" not in str(caught.value)


def test_11_7_changing_grad_output_in_place_is_named() -> None:
    def softplus_in_place(a):
        out = _stable_forward(a.data)

        def share(g):
            g *= np.exp(a.data - out)
            return g

        return RefValue(out, (a,), (share,))

    with pytest.raises(CheckError, match="changed grad_output in place"):
        lesson11.check_11_7(softplus_in_place)

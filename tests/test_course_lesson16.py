"""Tests of lesson 16's exercise checks and references: the references agree with the engine
(and with PyTorch where it is installed), right answers written several ways pass, each named
mistake gets its own hint, the first case of each check tells the mistakes apart, and the
hidden tests catch what the visible checks let through."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import minigrad
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad.course import CheckError, lesson16

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "lessons" / "16_sequences_and_attention.ipynb"

# --------------------------------------------------------------------------- references


def composed(q, k, v, scale, causal=False):
    """Attention with minigrad's operations, as the lesson's section 3 writes it."""
    scores = (q @ k.transpose(-2, -1)) * scale
    if causal:
        tokens = scores.shape[-1]
        scores = scores.masked_fill(minigrad.tril(minigrad.ones(tokens, tokens)) == 0,
                                    float("-inf"))  # fmt: skip
    return scores.softmax(-1) @ v


@pytest.mark.parametrize(
    ("shape", "value_size", "causal"),
    [((5, 3), 4, False), ((2, 3, 6, 4), 4, True), ((1, 2, 4, 5), 2, False), ((7, 2), 3, True)],
)
def test_attention_backward_is_the_engines(shape, value_size, causal) -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(shape), rng.standard_normal(shape)
    v = rng.standard_normal((*shape[:-1], value_size))
    dy = rng.standard_normal((*shape[:-1], value_size))
    variables = [minigrad.Variable(a, requires_grad=True) for a in (q, k, v)]
    composed(*variables, 0.4, causal).backward(minigrad.Variable(dy))
    got = lesson16.attention_backward(dy, q, k, v, 0.4, causal)
    for mine, variable in zip(got, variables):
        np.testing.assert_allclose(mine, variable.grad.data, rtol=1e-10, atol=1e-12)
    out, p = lesson16.attention_forward(q, k, v, 0.4, causal)
    np.testing.assert_allclose(out, composed(*variables, 0.4, causal).data, atol=1e-12)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)


def test_attention_backward_agrees_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    dy = rng.standard_normal((2, 3, 5, 4))
    for causal in (False, True):
        tensors = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = torch.nn.functional.scaled_dot_product_attention(*tensors, is_causal=causal)
        out.backward(torch.tensor(dy))
        got = lesson16.attention_backward(dy, q, k, v, 4**-0.5, causal)
        for mine, tensor in zip(got, tensors):
            np.testing.assert_allclose(mine, tensor.grad.numpy(), atol=1e-10)


def test_softmax_backward_is_the_jacobian_vector_product() -> None:
    rng = np.random.default_rng(2)
    scores, grad_p = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    p = lesson16.softmax(scores)
    by_jacobian = np.stack([(np.diag(r) - np.outer(r, r)) @ g for r, g in zip(p, grad_p)])
    np.testing.assert_allclose(lesson16.softmax_backward(grad_p, p), by_jacobian, atol=1e-14)
    assert np.isfinite(lesson16.softmax(np.array([1e4, -1e4, 0.0]))).all()
    assert lesson16.softmax(np.array([0.0, -np.inf]))[1] == 0.0


def test_lstm_cell_grads_are_the_engines_and_pytorchs() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 4)) * spread for spread in (1, 1, 2, 2, 2)]
    grad_c, c_prev, a_i, a_f, a_g = arrays
    leaves = [minigrad.Variable(a, requires_grad=True) for a in (c_prev, a_i, a_f, a_g)]
    c_prev_v, a_i_v, a_f_v, a_g_v = leaves
    c = a_f_v.sigmoid() * c_prev_v + a_i_v.sigmoid() * a_g_v.tanh()
    c.backward(minigrad.Variable(grad_c))
    got = lesson16.lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g)
    for mine, leaf in zip(got, (a_i_v, a_f_v, a_g_v, c_prev_v)):
        np.testing.assert_allclose(mine, leaf.grad.data, rtol=1e-12, atol=1e-14)
    torch = pytest.importorskip("torch")
    # PyTorch's own LSTMCell: its gate blocks are i, f, g, o; grad of c' flows through c_prev.
    cell = torch.nn.LSTMCell(2, 4, dtype=torch.float64)
    x = torch.tensor(rng.standard_normal((3, 2)))
    h0 = torch.tensor(rng.standard_normal((3, 4)))
    c0 = torch.tensor(c_prev, requires_grad=True)
    gates = x @ cell.weight_ih.T + cell.bias_ih + h0 @ cell.weight_hh.T + cell.bias_hh
    _, c1 = cell(x, (h0, c0))
    c1.backward(torch.tensor(grad_c))
    i, f, g, _ = gates.detach().numpy().reshape(3, 4, 4).transpose(1, 0, 2)
    expected_c_prev = lesson16.lstm_cell_grads(grad_c, c_prev, i, f, g)[3]
    np.testing.assert_allclose(c0.grad.numpy(), expected_c_prev, atol=1e-12)


class _Attention(minigrad.Function):
    """The lesson's Attention Function (section 3), saving q, k, v and P."""

    @staticmethod
    def forward(q, k, v, scale, causal):
        return lesson16.attention_forward(q.data, k.data, v.data, scale, causal)

    @staticmethod
    def setup_context(ctx, inputs, output):
        q, k, v, scale, _ = inputs
        ctx.scale = scale
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(q, k, v, output[1])

    @staticmethod
    def backward(ctx, grad_output, _grad_p):
        q, k, v, p = ctx.saved_tensors
        grad_v = p.transpose(-2, -1) @ grad_output
        grad_p = grad_output @ v.transpose(-2, -1)
        grad_scores = p * (grad_p - (grad_p * p).sum(-1, keepdim=True))
        return (grad_scores @ k * ctx.scale, grad_scores.transpose(-2, -1) @ q * ctx.scale,
                grad_v, None, None)  # fmt: skip


@pytest.mark.parametrize("case", lesson16._COUNT_CASES[:3] + [(2, 2, 7, 3)])
def test_attention_counts_are_what_a_pack_hook_sees(case) -> None:
    batch, heads, tokens, size = case
    rng = np.random.default_rng(4)
    q, k, v = (minigrad.Variable(rng.standard_normal((batch, heads, tokens, size)),
                                 requires_grad=True) for _ in range(3))  # fmt: skip
    buffers = {}

    def pack(variable):
        array = variable.data
        while isinstance(array.base, np.ndarray):
            array = array.base
        buffers[id(array)] = array
        return variable

    with saved_tensors_hooks(pack, lambda variable: variable):
        out, p = _Attention.apply(q, k, v, size**-0.5, True)
    saved, unmasked = lesson16.attention_counts(batch, heads, tokens, size)
    assert sum(array.size for array in buffers.values()) == saved
    assert np.count_nonzero(p.data) == unmasked  # softmax weights are never exactly 0 here
    out.sum().backward()
    assert minigrad.gradcheck(lambda a, b, c: _Attention.apply(a, b, c, 0.5, True)[0], (q, k, v))


def test_the_data_file_is_found_from_the_lesson_and_the_student_version(monkeypatch) -> None:
    for folder in (ROOT / "lessons", ROOT / "lessons" / "exercises", ROOT):
        monkeypatch.chdir(folder)
        assert lesson16.data_file("sonnets.txt").resolve() == (
            ROOT / "lessons" / "data" / "sonnets.txt"
        )
    header = (ROOT / "lessons" / "data" / "sonnets.txt").read_text(encoding="utf-8")
    header = header.splitlines()[0]
    assert "public domain" in header and "Shakespeare" in header and "1609" in header
    size = (ROOT / "lessons" / "data" / "sonnets.txt").stat().st_size
    assert 2_000 < size < 10_000
    with pytest.raises(FileNotFoundError, match="copy it"):
        lesson16.data_file("no_such_text.txt")


# --------------------------------------------------------------------------- Exercise 16.1


def _swap(a):
    return np.swapaxes(a, -1, -2)


def attention_backward_by_steps(grad_output, q, k, v, scale):
    """The lesson's solution."""
    scores = q @ _swap(k) * scale
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    grad_p = grad_output @ _swap(v)
    grad_scores = p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))
    return grad_scores @ k * scale, _swap(grad_scores) @ q * scale, _swap(p) @ grad_output


def attention_backward_by_einsum(grad_output, q, k, v, scale):
    """Written differently: einsum, and softmax through its log-sum-exp."""
    scores = np.einsum("...id,...jd->...ij", q, k) * scale
    top = scores.max(axis=-1, keepdims=True)
    p = np.exp(scores - top - np.log(np.exp(scores - top).sum(axis=-1, keepdims=True)))
    grad_v = np.einsum("...ij,...ie->...je", p, grad_output)
    grad_p = np.einsum("...ie,...je->...ij", grad_output, v)
    inner = np.einsum("...ij,...ij->...i", grad_p, p)[..., None]
    grad_scores = p * (grad_p - inner) * scale
    return (np.einsum("...ij,...jd->...id", grad_scores, k),
            np.einsum("...ij,...id->...jd", grad_scores, q), grad_v)  # fmt: skip


def attention_backward_by_jacobians(grad_output, q, k, v, scale):
    """Written differently again: the full Jacobian of each row's softmax, over leading axes."""
    grads = [np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)]
    for index in np.ndindex(*q.shape[:-2]):
        qq, kk, vv, dy = q[index], k[index], v[index], grad_output[index]
        scores = qq @ kk.T * scale
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad_p = dy @ vv.T
        grad_scores = np.stack([(np.diag(r) - np.outer(r, r)) @ g for r, g in zip(p, grad_p)])
        grads[0][index] = grad_scores @ kk * scale
        grads[1][index] = grad_scores.T @ qq * scale
        grads[2][index] = p.T @ dy
    return tuple(grads)


@pytest.mark.parametrize(
    "answer",
    [attention_backward_by_steps, attention_backward_by_einsum, attention_backward_by_jacobians,
     lesson16.attention_backward],
)  # fmt: skip
def test_16_1_right_answers_pass(answer, capsys) -> None:
    lesson16.check_16_1(answer)
    assert capsys.readouterr().out.startswith("Exercise 16.1: correct on these cases. Grading also")


def _attention_model(hint):
    """The lesson's answer with the gradients a named mistake changes replaced."""

    def answer(grad_output, q, k, v, scale):
        grads = dict(zip(("grad_q", "grad_k", "grad_v"),
                         lesson16.attention_backward(grad_output, q, k, v, scale)))  # fmt: skip
        for name, mistakes in lesson16._attention_mistakes(grad_output, q, k, v, scale).items():
            if hint in mistakes:
                grads[name] = mistakes[hint]
        return grads["grad_q"], grads["grad_k"], grads["grad_v"]

    return answer


_ATTENTION_HINTS = sorted(
    {hint for mistakes in lesson16._attention_mistakes(*(np.eye(2),) * 4, 0.5).values()
     for hint in mistakes}  # fmt: skip
)


@pytest.mark.parametrize("hint", _ATTENTION_HINTS)
def test_16_1_every_named_mistake_gets_its_hint(hint) -> None:
    with pytest.raises(CheckError) as raised:
        lesson16.check_16_1(_attention_model(hint))
    assert hint in str(raised.value)


def _rowsum_dropped(grad_output, q, k, v, scale):
    scores = q @ _swap(k) * scale
    p = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    grad_scores = p * (grad_output @ _swap(v))
    return grad_scores @ k * scale, _swap(grad_scores) @ q * scale, _swap(p) @ grad_output


def _p_not_transposed(grad_output, q, k, v, scale):
    gq, gk, _ = attention_backward_by_steps(grad_output, q, k, v, scale)
    scores = q @ _swap(k) * scale
    p = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    return gq, gk, p @ grad_output


def _no_scale(grad_output, q, k, v, scale):
    gq, gk, gv = attention_backward_by_steps(grad_output, q, k, v, scale)
    return gq / scale, gk / scale, gv


def _sigmoid_like(grad_output, q, k, v, scale):
    scores = q @ _swap(k) * scale
    p = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    grad_scores = p * (1 - p) * (grad_output @ _swap(v))
    return grad_scores @ k * scale, _swap(grad_scores) @ q * scale, _swap(p) @ grad_output


def _wrong_order(grad_output, q, k, v, scale):
    gq, gk, gv = attention_backward_by_steps(grad_output, q, k, v, scale)
    return gv, gq, gk


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_rowsum_dropped, "row-sum term"),
        (_p_not_transposed, r"that is P dO: .*dV = Pᵀ dO"),
        (_no_scale, "the scale is missing"),
        (_sigmoid_like, "only the diagonal of softmax's Jacobian"),
        (_wrong_order, "the shape of q and k: return the gradients in the order of the inputs"),
        (lambda dy, q, k, v, scale: attention_backward_by_steps(dy, q, k, v, scale)[:2],
         r"should return 3 values, \(grad_q, grad_k, grad_v\); got 2"),
        (lambda dy, q, k, v, scale: None, "is None: did you forget to `return` the gradients"),
        (lambda dy, q, k, v, scale: (dy @ v, q, k), "Follow the shapes"),
        (lambda dy, q, k, v, scale: (q @ k.T, *attention_backward_by_steps(dy, q, k, v, scale)[1:]),
         "that is the shape of P"),
        ("not a function", "should be a function; got a str"),
    ],
)  # fmt: skip
def test_16_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson16.check_16_1(answer)


def test_16_1_first_case_tells_the_mistakes_apart() -> None:
    tokens, size, value_size, scale = lesson16._ATTENTION_CASES[0]
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((tokens, size)), rng.standard_normal((tokens, size))
    v, dy = rng.standard_normal((tokens, value_size)), rng.standard_normal((tokens, value_size))
    names = ("grad_q", "grad_k", "grad_v")
    right = dict(zip(names, lesson16.attention_backward(dy, q, k, v, scale)))
    for name, mistakes in lesson16._attention_mistakes(dy, q, k, v, scale).items():
        values = [right[name], *mistakes.values()]
        for first, second in itertools.combinations(values, 2):
            assert not np.allclose(first, second, rtol=1e-6, atol=1e-8), name


def test_16_1_the_visible_check_uses_matrices_and_a_scale_above_one() -> None:
    cases = lesson16._ATTENTION_CASES
    assert any(scale > 1 for *_, scale in cases)  # dividing by the scale shows
    assert any(size != value_size for _, size, value_size, _ in cases)


# --------------------------------------------------------------------------- Exercise 16.2


def lstm_by_exp(grad_c, c_prev, a_i, a_f, a_g):
    """Written differently: σ' = e^(-a)/(1 + e^(-a))², tanh' = 1/cosh²."""

    def sigmoid_prime(a):
        return np.exp(-a) / (1 + np.exp(-a)) ** 2

    f = 1 / (1 + np.exp(-a_f))
    return (grad_c * np.tanh(a_g) * sigmoid_prime(a_i), grad_c * c_prev * sigmoid_prime(a_f),
            grad_c / (1 + np.exp(-a_i)) / np.cosh(a_g) ** 2, grad_c * f)  # fmt: skip


@pytest.mark.parametrize("answer", [lstm_by_exp, lesson16.lstm_cell_grads])
def test_16_2_right_answers_pass(answer, capsys) -> None:
    lesson16.check_16_2(answer)
    assert capsys.readouterr().out.startswith("Exercise 16.2: correct on these cases. Grading also")


def _lstm_model(hint):
    def answer(grad_c, c_prev, a_i, a_f, a_g):
        names = ("grad_a_i", "grad_a_f", "grad_a_g", "grad_c_prev")
        grads = dict(zip(names, lesson16.lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g)))
        for name, mistakes in lesson16._lstm_mistakes(grad_c, c_prev, a_i, a_f, a_g).items():
            if hint in mistakes:
                grads[name] = mistakes[hint]
        return tuple(grads[name] for name in names)

    return answer


_LSTM_HINTS = sorted(
    {hint for mistakes in lesson16._lstm_mistakes(*(np.ones(2),) * 5).values()
     for hint in mistakes}  # fmt: skip
)


@pytest.mark.parametrize("hint", _LSTM_HINTS)
def test_16_2_every_named_mistake_gets_its_hint(hint) -> None:
    with pytest.raises(CheckError) as raised:
        lesson16.check_16_2(_lstm_model(hint))
    assert hint in str(raised.value)


def _c_instead_of_c_prev(grad_c, c_prev, a_i, a_f, a_g):
    i, f, g = 1 / (1 + np.exp(-a_i)), 1 / (1 + np.exp(-a_f)), np.tanh(a_g)
    c = f * c_prev + i * g
    return grad_c * g * i * (1 - i), grad_c * c * f * (1 - f), grad_c * i * (1 - g**2), grad_c * f


def _derivatives_swapped(grad_c, c_prev, a_i, a_f, a_g):
    i, f, g = 1 / (1 + np.exp(-a_i)), 1 / (1 + np.exp(-a_f)), np.tanh(a_g)
    return (grad_c * g * (1 - i**2), grad_c * c_prev * (1 - f**2), grad_c * i * g * (1 - g),
            grad_c * f)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_c_instead_of_c_prev, "uses the new cell state c"),
        (_derivatives_swapped, "tanh's derivative and the sigmoid's are swapped"),
        (lambda dc, cp, ai, af, ag: lesson16.lstm_cell_grads(dc, cp, ai, af, ag)[:3],
         r"should return 4 values"),
        (lambda dc, cp, ai, af, ag: None, "is None"),
        (5, "should be a function; got an int"),
    ],
)  # fmt: skip
def test_16_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson16.check_16_2(answer)


def test_16_2_first_case_tells_the_mistakes_apart() -> None:
    shape, spread = lesson16._LSTM_CASES[0]
    rng = np.random.default_rng(6)
    grad_c, c_prev = rng.standard_normal(shape), rng.standard_normal(shape)
    pre = [spread * rng.standard_normal(shape) for _ in range(3)]
    names = ("grad_a_i", "grad_a_f", "grad_a_g", "grad_c_prev")
    right = dict(zip(names, lesson16.lstm_cell_grads(grad_c, c_prev, *pre)))
    for name, mistakes in lesson16._lstm_mistakes(grad_c, c_prev, *pre).items():
        values = [right[name], *mistakes.values()]
        for first, second in itertools.combinations(values, 2):
            assert not np.allclose(first, second, rtol=1e-6, atol=1e-8), name


# --------------------------------------------------------------------------- Exercise 16.3


def counts_by_loops(batch, heads, tokens, head_size):
    allowed = sum(query + 1 for query in range(tokens))
    saved = 3 * tokens * head_size + tokens**2
    return batch * heads * saved, batch * heads * allowed


@pytest.mark.parametrize("answer", [counts_by_loops, lesson16.attention_counts])
def test_16_3_right_answers_pass(answer, capsys) -> None:
    lesson16.check_16_3(answer)
    assert capsys.readouterr().out.startswith("Exercise 16.3: correct on these cases. Grading also")


_SAVED_HINTS, _UNMASKED_HINTS = (list(m) for m in lesson16._count_mistakes(2, 3, 10, 4))


def _count_model(hint):
    def answer(batch, heads, tokens, head_size):
        saved, unmasked = lesson16.attention_counts(batch, heads, tokens, head_size)
        saved_mistakes, unmasked_mistakes = lesson16._count_mistakes(batch, heads, tokens,
                                                                     head_size)  # fmt: skip
        return saved_mistakes.get(hint, saved), unmasked_mistakes.get(hint, unmasked)

    return answer


@pytest.mark.parametrize("hint", _SAVED_HINTS + _UNMASKED_HINTS)
def test_16_3_every_named_mistake_gets_its_hint(hint) -> None:
    with pytest.raises(CheckError) as raised:
        lesson16.check_16_3(_count_model(hint))
    assert hint in str(raised.value)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda b, h, t, d: (b * h * (3 * t * d + t * t), b * h * t * t), "every entry, T²"),
        (lambda b, h, t, d: (b * h * (3 * t * d + t * (t + 1) // 2), b * h * t * (t + 1) // 2),
         "only the lower triangle of P"),
        # an off-by-one far out in a large count still shows: counts are compared exactly
        (lambda b, h, t, d: (b * h * (3 * t * d + t * t), b * h * t * (t + 1) // 2 + 1),
         "expected"),
        (lambda b, h, t, d: b * h * (3 * t * d + t * t), "should return 2 values"),
        (lambda b, h, t, d: (np.ones(2), 1), "has shape"),
    ],
)  # fmt: skip
def test_16_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson16.check_16_3(answer)


def test_16_3_first_case_tells_the_mistakes_apart() -> None:
    case = lesson16._COUNT_CASES[0]
    saved, unmasked = lesson16.attention_counts(*case)
    saved_mistakes, unmasked_mistakes = lesson16._count_mistakes(*case)
    assert len({saved, *saved_mistakes.values()}) == len(saved_mistakes) + 1
    assert len({unmasked, *unmasked_mistakes.values()}) == len(unmasked_mistakes) + 1
    assert case[0] != case[1] and 1 not in case[:2]  # batch and heads forgotten differ


# --------------------------------------------------------------------------- the notebook


def _check_cell(exercise: str) -> str:
    notebook = nbformat.read(LESSON, as_version=4)
    first_line = f"# Check Exercise {exercise}"
    return next(c.source for c in notebook.cells if c.source.startswith(first_line))


_NAMES = {"16.1": "attention_backward", "16.2": "lstm_cell_grads", "16.3": "attention_counts"}


@pytest.mark.parametrize(
    ("exercise", "answer"),
    [
        ("16.1", attention_backward_by_einsum),
        ("16.1", attention_backward_by_jacobians),
        ("16.2", lstm_by_exp),
        ("16.3", counts_by_loops),
    ],
)
def test_hidden_tests_pass_right_answers(exercise, answer, capsys) -> None:
    """The check cell as nbgrader grades it (hidden tests included), on another right answer."""
    exec(_check_cell(exercise), {_NAMES[exercise]: answer})
    assert capsys.readouterr().out.startswith(f"Exercise {exercise}: correct on these cases.")


def _dot_t(grad_output, q, k, v, scale):
    scores = q @ k.T * scale
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    grad_p = grad_output @ v.T
    grad_scores = p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))
    return grad_scores @ k * scale, grad_scores.T @ q * scale, p.T @ grad_output


def _overflowing(grad_output, q, k, v, scale):
    scores = q @ _swap(k) * scale
    p = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    grad_p = grad_output @ _swap(v)
    grad_scores = p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))
    return grad_scores @ k * scale, _swap(grad_scores) @ q * scale, _swap(p) @ grad_output


def _aliasing(grad_c, c_prev, a_i, a_f, a_g):
    i, f, g = 1 / (1 + np.exp(-a_i)), 1 / (1 + np.exp(-a_f)), np.tanh(a_g)
    grads = grad_c * g * i * (1 - i), grad_c * c_prev * f * (1 - f), grad_c * i * (1 - g**2)
    grad_c_prev = grad_c
    grad_c_prev *= f
    return (*grads, grad_c_prev)


def _mask_built(batch, heads, tokens, head_size):
    allowed = int(np.tril(np.ones((tokens, tokens), dtype=bool)).sum())
    return batch * heads * (3 * tokens * head_size + tokens * tokens), batch * heads * allowed


@pytest.mark.parametrize(
    ("exercise", "answer", "hint"),
    [
        ("16.1", _dot_t, "a.T reverses every axis"),
        ("16.1", _overflowing, "holds nan or inf: exp of a score in the thousands overflows"),
        ("16.2", _aliasing, "changed the caller's grad_c in place"),
        ("16.3", _mask_built, "Count with the formula instead"),
    ],
)
def test_hidden_tests_catch_what_the_visible_check_lets_through(exercise, answer, hint) -> None:
    check = getattr(lesson16, f"check_{exercise.replace('.', '_')}")
    with np.errstate(all="ignore"):
        check(answer)  # the visible check passes
        with pytest.raises(Exception, match=hint) as raised:
            exec(_check_cell(exercise), {_NAMES[exercise]: answer})
    assert type(raised.value).__name__ == "CheckError"  # the hidden tests' fresh copy's


def _stored_text() -> str:
    notebook = nbformat.read(LESSON, as_version=4)
    return "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code" and not cell.source.startswith("# NBVAL_IGNORE_OUTPUT")
        for output in cell.outputs
    )


def test_the_lesson_says_what_it_prints() -> None:
    """The claims of the prose, in the stored outputs: vanishing and exploding by scale, the
    LSTM's gradient kept with an open forget gate, the hook's count equal to the formula, the
    loss falling and the compiled step replaying."""
    text = _stored_text()
    assert "scale 0.5: × " in text and re.search(r"scale 0\.5: × [\d.]+ per step back: vanishes",
                                                 text)  # fmt: skip
    assert re.search(r"scale 4\.0: × [\d.]+ per step back: explodes", text)
    assert re.search(r"scale 2\.0: × [\d.]+ per step back: about level", text)
    bias_3 = re.search(r"LSTM, forget bias 3\.0: +(.*)", text)[1].split()
    assert float(bias_3[-1]) > float(bias_3[0]) / 2
    rows = re.findall(r"^ +(\d+) +([\d,]+) +4 +([\d,]+) ", text, re.MULTILINE)
    assert len(rows) == 4 and all(saved == formula for _, saved, formula in rows)
    assert text.count("tracemalloc agrees within 2% plus 10 kB: True") == 4
    means = [float(m) for m in re.findall(r"mean training loss ([\d.]+)", text)]
    assert len(means) == 4 and means == sorted(means, reverse=True)
    before, after = map(float, re.search(r"held-out loss: ([\d.]+) before training, ([\d.]+) "
                                         r"after", text).groups())  # fmt: skip
    assert after < before - 1.5
    assert re.search(r"1 variant\(s\), 398 replay\(s\)", text)
    for line in (
        "gradcheck(attention, causal=True): True",
        "equal to lesson16.attention_backward: True",
        "rows of v.grad that are not 0: [0, 1, 2]",
        "Exercise 16.3: correct on these cases.",
    ):
        assert line in text

"""Tests of lesson 12's exercise checks: right answers (written several ways) pass, each
named mistake gets its own hint, and the hidden data holds edge cases that matter."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.autograd import forward_ad, functional
from minigrad.course import CheckError, lesson12

# --------------------------------------------------------------------------- Exercise 12.1


def _scaled_cos(name: str, jvp, save: bool = True, value=None) -> type:
    """A ScaledCos (y = a * cos(b)) whose jvp is `jvp(a, b, ta, tb)` on Variables."""

    def forward(ctx, a, b):
        if save:
            ctx.save_for_forward(a, b)
        return value(a.data, b.data) if value else a.data * np.cos(b.data)

    def jvp_method(ctx, ta, tb):
        a, b = ctx.saved_for_forward
        return jvp(a, b, ta, tb)

    return type(
        name,
        (minigrad.Function,),
        {"forward": staticmethod(forward), "jvp": staticmethod(jvp_method)},
    )


ScaledCos = _scaled_cos("ScaledCos", lambda a, b, ta, tb: ta * b.cos() - a * b.sin() * tb)


def test_12_1_reference_passes(capsys) -> None:
    lesson12.check_12_1(ScaledCos)
    assert capsys.readouterr().out == "Exercise 12.1: correct.\n"


def test_12_1_variant_passes(capsys) -> None:
    """Written differently: terms in the other order, a negation, Variable operations."""
    answer = _scaled_cos(
        "ScaledCosVariant", lambda a, b, ta, tb: -(a * tb * b.sin()) + b.cos() * ta
    )
    lesson12.check_12_1(answer)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("rule", "hint"),
    [
        (
            lambda a, b, ta, tb: -(a.data * tb.data) * np.sin(b.data) + np.cos(b.data) * ta.data,
            "all of jvp is computed with NumPy on .data",
        ),
        (
            lambda a, b, ta, tb: ta * np.cos(b.data) - a * b.sin() * tb,
            "part of jvp is computed with NumPy on .data",
        ),
    ],
)
def test_12_1_numpy_on_data_is_named(rule, hint) -> None:
    """The right numbers, but a tangent that cannot be differentiated again, against the
    exercise's "write it with Variable operations"."""
    with pytest.raises(CheckError, match=rf"numbers are right, but {hint}"):
        lesson12.check_12_1(_scaled_cos("ScaledCosOnData", rule))


class ScaledCosWithBackward(minigrad.Function):
    """Written differently: forward also saves for backward, jvp via the chain rule through
    a helper Variable c = cos(b), and a backward the check never calls."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_forward(a, b)
        ctx.save_for_backward(a, b)
        return a.data * np.cos(b.data)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b.cos(), -grad_output * a * b.sin()

    @staticmethod
    def jvp(ctx, a_tangent, b_tangent):
        a, b = ctx.saved_for_forward
        cos_tangent = -b.sin() * b_tangent
        return a_tangent * b.cos() + a * cos_tangent


def test_12_1_answer_with_backward_passes(capsys) -> None:
    lesson12.check_12_1(ScaledCosWithBackward)
    assert "correct" in capsys.readouterr().out


class NoJvp(minigrad.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a.data * np.cos(b.data)


class ReadsSavedTensors(minigrad.Function):
    """PyTorch's spelling: jvp unpacks ctx.saved_tensors, which in jvp holds what
    save_for_forward kept (as in PyTorch); the check accepts it."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_forward(a, b)
        return a.data * np.cos(b.data)

    @staticmethod
    def jvp(ctx, a_tangent, b_tangent):
        a, b = ctx.saved_tensors
        return a_tangent * b.cos() - a * b.sin() * b_tangent


def _wrong(name, rule):
    return _scaled_cos(name, rule)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # the mistakes issue 19 names: the tangent factor, one input's term, sign, cos/sin
        (_wrong("ForgotDotB", lambda a, b, ta, tb: ta * b.cos() - a * b.sin()),
         "not multiplied by b's tangent"),
        (_wrong("ForgotDotA", lambda a, b, ta, tb: b.cos() - a * b.sin() * tb),
         "not multiplied by a's tangent"),
        (_wrong("NoTangents", lambda a, b, ta, tb: b.cos() - a * b.sin()),
         "tangents are left out"),
        (_wrong("OnlyA", lambda a, b, ta, tb: ta * b.cos()), "term of b is missing"),
        (_wrong("OnlyB", lambda a, b, ta, tb: -a * b.sin() * tb), "term of a is missing"),
        (_wrong("PlusSin", lambda a, b, ta, tb: ta * b.cos() + a * b.sin() * tb), "wrong sign"),
        (_wrong("MinusCos", lambda a, b, ta, tb: ta * b.cos() - a * b.cos() * tb),
         "term of b uses cos\\(b\\)"),
        (_wrong("PlusCos", lambda a, b, ta, tb: ta * b.cos() + a * b.cos() * tb),
         "the derivative of sin"),
        (_wrong("SinRule", lambda a, b, ta, tb: ta * b.sin() + a * b.cos() * tb),
         "rule of a·sin\\(b\\)"),
        (_wrong("SinInA", lambda a, b, ta, tb: ta * b.sin() - a * b.sin() * tb),
         "term of a uses sin\\(b\\)"),
        (_wrong("Swapped", lambda a, b, ta, tb: tb * b.cos() - a * b.sin() * ta),
         "tangents are swapped"),
        # the product of the factors' tangents, ȧ·(cos b)˙ = ȧ·ḃ·(-sin(b))
        (_wrong("TangentProduct", lambda a, b, ta, tb: -ta * tb * b.sin()),
         r"that is ȧ·ḃ·\(-sin\(b\)\), the product of the two factors' tangents"),
        (_wrong("Primal", lambda a, b, ta, tb: a * b.cos()), "value a·cos\\(b\\), not its"),
        (_scaled_cos("NoSave", lambda a, b, ta, tb: ta, save=False),
         "call `ctx.save_for_forward\\(a, b\\)`"),
        (_wrong("NoReturn", lambda a, b, ta, tb: None), "jvp must `return`"),
        (_scaled_cos("ValueSin", lambda a, b, ta, tb: ta, value=lambda a, b: a * np.sin(b)),
         "that is a·sin\\(b\\): the value is a·cos\\(b\\)"),
        (_scaled_cos("ValueCos", lambda a, b, ta, tb: ta, value=lambda a, b: np.cos(b)),
         "that is cos\\(b\\): multiply by a"),
        (NoJvp, "has no jvp"),
        (ScaledCos.apply, "not `ScaledCos.apply`"),
        (lambda a, b: a, "subclasses minigrad.Function"),
    ],
)  # fmt: skip
def test_12_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_1(answer)


def test_12_1_accepts_pytorchs_spelling_of_the_saved_values() -> None:
    lesson12.check_12_1(ReadsSavedTensors)


def test_12_1_hidden_data_has_edge_cases() -> None:
    """A zero tangent, b = 0 entries, an input without tangent, and a single entry."""
    cases = lesson12._SCALED_COS_CASES
    assert any(ta is None or tb is None for _, _, ta, tb in cases)
    assert any(ta is not None and not np.any(ta) for _, _, ta, _ in cases)
    assert any(np.any(np.asarray(b) == 0) for _, b, _, _ in cases)
    assert any(np.size(a) == 1 for a, _, _, _ in cases)


def test_12_1_right_only_where_b_is_zero_is_caught() -> None:
    """Dropping the term of b is right exactly where sin(b) = 0: other entries catch it."""
    only_a = _wrong("OnlyA", lambda a, b, ta, tb: ta * b.cos())
    with pytest.raises(CheckError, match="term of b is missing"):
        lesson12.check_12_1(only_a)


def test_12_1_first_case_tells_the_mistakes_apart() -> None:
    """In the first case every named mistake gives a different value (else a hint would
    name the wrong one)."""
    a, b, ta, tb = (np.asarray(v, float) for v in lesson12._SCALED_COS_CASES[0])
    values = list(lesson12._scaled_cos_mistakes(a, b, ta, tb).values())
    values.append(ta * np.cos(b) - a * np.sin(b) * tb)
    for i, first in enumerate(values):
        for second in values[i + 1 :]:
            assert not np.allclose(first, second)


def test_12_1_rule_agrees_with_pytorch() -> None:
    """The check's closed form, against torch.func.jvp on the same cases."""
    torch = pytest.importorskip("torch")
    for a_values, b_values, ta_values, tb_values in lesson12._SCALED_COS_CASES:
        a, b = np.asarray(a_values, float), np.asarray(b_values, float)
        ta = np.zeros_like(a) if ta_values is None else np.asarray(ta_values, float)
        tb = np.zeros_like(b) if tb_values is None else np.asarray(tb_values, float)
        _, tangent = torch.func.jvp(
            lambda x, y: x * torch.cos(y),
            (torch.tensor(a), torch.tensor(b)),
            (torch.tensor(ta), torch.tensor(tb)),
        )
        np.testing.assert_allclose(tangent.numpy(), ta * np.cos(b) - a * np.sin(b) * tb)


# --------------------------------------------------------------------------- Exercise 12.2


def jacobian_by_columns(f, x):
    columns = []
    for j in range(x.numel()):
        e_j = np.zeros(x.shape)
        e_j[j] = 1.0
        _, column = functional.jvp(f, x, minigrad.Variable(e_j))
        columns.append(column.data)
    return np.stack(columns, axis=1)


def jacobian_with_dual_level(f, x):
    columns = []
    for j in range(x.numel()):
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, np.eye(x.numel())[j])
            columns.append(forward_ad.unpack_dual(f(dual)).tangent.data)
    return minigrad.Variable(np.stack(columns, axis=1))


def jacobian_filled_in_place(f, x):
    """Written differently: a preallocated (m, n) array filled column by column."""
    identity = np.eye(x.numel())
    first = functional.jvp(f, x, minigrad.Variable(identity[0]))[1].data
    jacobian = np.empty((first.size, x.numel()))
    jacobian[:, 0] = first
    for j in range(1, x.numel()):
        jacobian[:, j] = functional.jvp(f, x, minigrad.Variable(identity[j]))[1].data
    return jacobian


def _columns_with(tangent_for, count=lambda x: x.numel()):
    """jacobian_by_columns with the tangent for column j given by tangent_for(x, j), for
    j in range(count(x))."""

    def answer(f, x):
        columns = []
        for j in range(count(x)):
            _, column = functional.jvp(f, x, minigrad.Variable(tangent_for(x, j)))
            columns.append(column.data)
        return np.stack(columns, axis=1)

    return answer


def _unit(x, j):
    e = np.zeros(x.shape)
    e[j] = 1.0
    return e


def jacobian_stacked_as_rows(f, x):
    return jacobian_by_columns(f, x).T


def jacobian_by_rows(f, x):
    return functional.jacobian(f, x).data


def jacobian_list_of_columns(f, x):
    return [functional.jvp(f, x, minigrad.Variable(e))[1] for e in np.eye(x.numel())]


def jacobian_without_level(f, x):
    dual = forward_ad.make_dual(x, np.eye(x.numel())[0])
    return f(dual)


def jacobian_first_column_only(f, x):
    return functional.jvp(f, x, minigrad.Variable(_unit(x, 0)))[1].data


def test_12_2_reference_passes(capsys) -> None:
    lesson12.check_12_2(jacobian_by_columns)
    assert capsys.readouterr().out == "Exercise 12.2: correct.\n"


@pytest.mark.parametrize(
    "answer",
    [
        jacobian_with_dual_level,
        jacobian_filled_in_place,
        lambda f, x: functional.jacobian(f, x, strategy="forward-mode"),
    ],
)
def test_12_2_other_right_answers_pass(answer, capsys) -> None:
    lesson12.check_12_2(answer)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # a missing column, an extra one, rows for columns (issue 19)
        (_columns_with(_unit, lambda x: x.numel() - 1), "2 columns for an x with 3 entries"),
        (_columns_with(_unit, lambda x: x.numel() + 1), "j ran past the last entry"),
        (jacobian_first_column_only, "a single column"),
        (jacobian_stacked_as_rows, "columns ended up as rows"),
        (_columns_with(lambda x, j: np.ones(x.shape)), "not all ones"),
        (_columns_with(lambda x, j: x.data), "not the input x itself"),
        (_columns_with(lambda x, j: x.data[j] * _unit(x, j)), "not x_j·e_j"),
        (_columns_with(lambda x, j: 2 * _unit(x, j)), "J times 2: the tangents were scaled"),
        (jacobian_by_rows, "2 backward passes: that is reverse mode"),
        (jacobian_list_of_columns, "list of Variables: stack the columns"),
        (jacobian_without_level, "with forward_ad.dual_level"),
        (lambda f, x: None, "forget to `return` the Jacobian"),
    ],
)
def test_12_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_2(answer)


def test_12_2_missing_column_is_not_called_a_sum() -> None:
    """Issue 19: a missing column used to get "did you sum or average over an axis"."""
    with pytest.raises(CheckError) as caught:
        lesson12.check_12_2(_columns_with(_unit, lambda x: x.numel() - 1))
    assert "sum" not in str(caught.value)
    assert "one column per input entry" in str(caught.value)


def test_12_2_rows_count_wrong() -> None:
    def first_output_only(f, x):
        return jacobian_by_columns(f, x)[:1]

    with pytest.raises(CheckError, match="1 row, but f has 2 outputs"):
        lesson12.check_12_2(first_output_only)


def test_12_2_too_many_passes() -> None:
    def one_pass_per_entry(f, x):
        for _ in range(10):
            f(x)
        return jacobian_by_columns(f, x)

    with pytest.raises(CheckError, match="one pass per input entry"):
        lesson12.check_12_2(one_pass_per_entry)


def test_12_2_hidden_data_has_edge_cases() -> None:
    """Wide, tall and square Jacobians, a zero column at x_j = 0, and a single input."""
    shapes = [jac(np.asarray(x)).shape for _, _, jac, x in lesson12._JACOBIAN_CASES]
    assert any(m < n for m, n in shapes) and any(m > n for m, n in shapes)
    assert any(m == n for m, n in shapes) and any(n == 1 for _, n in shapes)
    assert any(
        np.any(np.all(jac(np.asarray(x)) == 0, axis=0)) for _, _, jac, x in lesson12._JACOBIAN_CASES
    )


def test_12_2_closed_forms_agree_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for _, f, jacobian_np, x_values in lesson12._JACOBIAN_CASES:
        x = np.asarray(x_values, float)
        ours = jacobian_by_columns(f, minigrad.Variable(x))
        np.testing.assert_allclose(ours, jacobian_np(x), rtol=1e-10)
    # the wide case through torch.func.jacfwd, independently of minigrad
    wide = torch.tensor(lesson12._WIDE)
    x = np.asarray(lesson12._JACOBIAN_CASES[0][3])
    got = torch.func.jacfwd(lambda t: torch.tanh(wide @ t))(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, lesson12._JACOBIAN_CASES[0][2](x), rtol=1e-10)


# --------------------------------------------------------------------------- Exercise 12.3


def hv_by_hand(w, v):
    return 4 * (w @ w) * v + 8 * (w @ v) * w


def hv_through_the_hessian(w, v):
    """Written differently: form H = 4 (w·w) I + 8 w wᵀ, then multiply (as a Variable)."""
    hessian = 4 * np.dot(w, w) * np.eye(w.size) + 8 * np.outer(w, w)
    return minigrad.Variable(hessian @ v)


def hv_with_minigrad(w, v):
    """Written differently: functional.hvp on f itself."""
    _, hv = functional.hvp(
        lambda u: (u * u).sum() * (u * u).sum(), minigrad.Variable(w), minigrad.Variable(v)
    )
    return hv


@pytest.mark.parametrize("answer", [hv_by_hand, hv_through_the_hessian, hv_with_minigrad])
def test_12_3_right_answers_pass(answer, capsys) -> None:
    lesson12.check_12_3(answer)
    assert capsys.readouterr().out == "Exercise 12.3: correct.\n"


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda w, v: 4 * (w @ w) * v, "only the term from moving the last w"),
        (lambda w, v: 8 * (w @ v) * w, "only the term from moving the factor"),
        (lambda w, v: 4 * (w @ w) * w, "that is the gradient"),
        (lambda w, v: 4 * (w @ w) * v + 4 * (w @ v) * w, "half what it should be"),
        (lambda w, v: 2 * (w @ w) * v + 4 * (w @ v) * w, "that is half of Hv"),
        (lambda w, v: hv_by_hand(w, np.ones_like(v)), "not all ones"),
        (lambda w, v: 4 * (w @ v) * v + 8 * (w @ w) * w, "dot products are swapped"),
        (
            lambda w, v: 4 * (w @ w) * v + 8 * (w @ w) * v,
            r"that is 4 \(w·w\) v \+ 8 \(w·w\) v: "
            "in the rank-one term 8 w wᵀ v the vectors w and v swapped places",
        ),
        (lambda w, v: 12 * w * w * v, "the sum of fourth powers"),
        (lambda w, v: v @ hv_by_hand(w, v), "single number.*vᵀHv"),
        (lambda w, v: 4 * (w @ w) * (w @ v), "single number.*∇f·v"),
        (lambda w, v: 4 * (w @ w) * np.eye(w.size) + 8 * np.outer(w, w), "that is H itself"),
        (lambda w, v: None, "forget to `return` Hv"),
        (lambda w, v: w.data @ w.data, "raised TypeError.*NumPy arrays here, not Variables"),
        (lambda w, v: 4 * w.dot(w).item() * v.item(), "raised ValueError"),
        (lambda w, v: w.norm() ** 2, "raised AttributeError.*NumPy arrays here"),
    ],
)
def test_12_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_3(answer)


def test_12_3_hidden_data_has_edge_cases() -> None:
    """A single entry, v = 0, v at right angles to w, and w = 0."""
    cases = [(np.asarray(w), np.asarray(v)) for w, v in lesson12._QUARTIC_CASES]
    assert any(w.size == 1 for w, _ in cases)
    assert any(not v.any() for _, v in cases)
    assert any(not w.any() for w, _ in cases)
    assert any(w.any() and v.any() and w @ v == 0 for w, v in cases)


def test_12_3_mistake_right_on_an_edge_case_is_still_caught() -> None:
    """Dropping the term along w is right when v is at right angles to w; other cases
    catch it, with its hint."""
    with pytest.raises(CheckError, match="only the term from moving the last w"):
        lesson12.check_12_3(lambda w, v: 4 * (w @ w) * v)


def test_12_3_closed_form_agrees_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for w_values, v_values in lesson12._QUARTIC_CASES:
        w = torch.tensor(w_values, dtype=torch.float64)
        v = torch.tensor(v_values, dtype=torch.float64)
        hessian = torch.func.hessian(lambda u: (u @ u) ** 2)(w)
        np.testing.assert_allclose(
            (hessian @ v).numpy(), hv_by_hand(np.asarray(w_values), np.asarray(v_values)),
            atol=1e-12,
        )  # fmt: skip


# --------------------------------------------------------------------------- Exercise 12.4


def vjp_by_transposing(u, A, d, c):
    p_bar = np.broadcast_to(u[None, :], c.shape)
    s_bar = (c * p_bar).sum(axis=1)
    g_bar = np.zeros(A.shape[0])
    g_bar[1:4] = s_bar
    return A.T @ (d * g_bar)


def vjp_through_the_jacobian_rows(u, A, d, c):
    """Written differently: J's rows c.T @ E, then diag(d) and A, as one matrix product."""
    padded = np.zeros((c.shape[1], A.shape[0]))
    padded[:, 1:4] = c.T
    return minigrad.Variable(((padded * d) @ A).T @ u)


def vjp_by_minigrad(u, A, d, c):
    """Written differently (and against the rule NumPy only, which the grade enforces):
    minigrad's reverse mode on the linear function itself."""
    t = minigrad.Variable(np.zeros(A.shape[0]), requires_grad=True)
    h = (minigrad.Variable(A) @ t) * minigrad.Variable(d)
    out = (minigrad.Variable(c) * h[1:4].reshape(3, 1)).sum(axis=0)
    out.backward(minigrad.Variable(u))
    return t.grad


@pytest.mark.parametrize(
    "answer", [vjp_by_transposing, vjp_through_the_jacobian_rows, vjp_by_minigrad]
)
def test_12_4_right_answers_pass(answer, capsys) -> None:
    lesson12.check_12_4(answer)
    assert capsys.readouterr().out == "Exercise 12.4: correct.\n"


def _steps(last=None, scale_d=None, scale_c=None, unbroadcast=None, where=slice(1, 4)):
    """vjp_by_transposing with one step swapped for a mistaken one."""

    def answer(u, A, d, c):
        b_bar = scale_c(u, c) if scale_c else c * u[None, :]
        s_bar = unbroadcast(b_bar) if unbroadcast else b_bar.sum(axis=1)
        g_bar = np.zeros(A.shape[0])
        g_bar[where] = s_bar
        h_bar = scale_d(g_bar, d) if scale_d else d * g_bar
        return last(A, h_bar) if last else A.T @ h_bar

    return answer


def vjp_in_forward_order(u, A, d, c):
    """The transposes applied in the JVP's own order: A.T first, on u of shape (k,)."""
    h = A.T @ u
    g = d * h
    s = np.zeros(A.shape[0])
    s[1:4] = g[1:4]
    return (c * s[1:4, None]).sum(axis=1)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # issue 36: not reversing the order, A instead of A.T, no padding / no broadcast back
        (vjp_in_forward_order, "transpose the steps in reverse order"),
        (_steps(last=lambda A, g: A @ g), "the last step uses A"),
        (_steps(last=lambda A, g: np.linalg.solve(A, g)), "transposing is not inverting"),
        (_steps(where=slice(0, 3)), "puts s_bar in the wrong place"),
        (_steps(unbroadcast=lambda b: b.mean(axis=1)), "takes a mean"),
        (_steps(unbroadcast=lambda b: b[:, 0]), "keeps one column"),
        (_steps(scale_d=lambda g, d: g), "the scale by d is missing"),
        (_steps(scale_d=lambda g, d: g / d), "the scale by d is divided out"),
        (_steps(scale_c=lambda u, c: u / c), "the scale by c is divided out"),
        (_steps(scale_c=lambda u, c: np.broadcast_to(u, c.shape)), "the scale by c is missing"),
        # right, except that u = 0 does not give zeros
        (lambda u, A, d, c: vjp_by_transposing(u, A, d, c) + (not u.any()) * A[0],
         "expected zeros: the transpose is linear"),
        (lambda u, A, d, c: (c * u).sum(axis=0), "that is the output's shape"),
        (lambda u, A, d, c: vjp_by_transposing(u, A, d, c) + 0.1 * A[0], "⟨vjp\\(u\\), t⟩"),
        (lambda u, A, d, c: None, "forget to `return`"),
        ("A.T @ u", "should be a function"),
    ],
)
def test_12_4_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_4(answer)


def test_12_4_mistakes_are_told_apart_on_the_first_case() -> None:
    """Every named mistake gives its own vector on the first case (else a hint would name
    the wrong one), and none gives the right one."""
    u, A, d, c = lesson12._transpose_case(*lesson12._TRANSPOSE_CASES[0])
    values = list(lesson12._transpose_mistakes(u, A, d, c).values())
    values.append(vjp_by_transposing(u, A, d, c))
    for i, first in enumerate(values):
        for second in values[i + 1 :]:
            assert not np.allclose(first, second)


def test_12_4_hidden_data_has_edge_cases() -> None:
    """k = 1, 2, 3, a d with a zero entry and u = 0."""
    cases = lesson12._TRANSPOSE_CASES
    assert {k for _, k, *_ in cases} == {1, 2, 3}
    assert any(zeros for *_, zeros, _ in cases) and any(zero_u for *_, zero_u in cases)


def test_12_4_linear_jvp_is_the_jvp_of_the_lessons_f() -> None:
    """linear_jvp against minigrad's forward mode on f, and its transpose against minigrad's
    reverse mode on f, at a point where d = tanh'(A x0)."""
    rng = np.random.default_rng(5)
    A, c, x0 = rng.normal(size=(5, 5)), rng.normal(size=(3, 2)), rng.normal(size=5)
    d = 1 - np.tanh(A @ x0) ** 2
    t, u = rng.normal(size=5), rng.normal(size=2)

    def f(x):
        return (minigrad.Variable(c) * (minigrad.Variable(A) @ x).tanh()[1:4].reshape(3, 1)).sum(
            axis=0
        )

    _, jt = functional.jvp(f, minigrad.Variable(x0), minigrad.Variable(t))
    np.testing.assert_allclose(lesson12.linear_jvp(t, A, d, c), jt.data)
    x = minigrad.Variable(x0, requires_grad=True)
    f(x).backward(minigrad.Variable(u))
    np.testing.assert_allclose(vjp_by_transposing(u, A, d, c), x.grad.data)
    np.testing.assert_allclose(lesson12._jacobian_of_linear_jvp(A, d, c).T @ u, x.grad.data)


def test_12_4_closed_form_agrees_with_pytorch(real_torch) -> None:
    torch = real_torch
    for case in lesson12._TRANSPOSE_CASES:
        u, A, d, c = lesson12._transpose_case(*case)
        A_t, d_t, c_t = torch.tensor(A), torch.tensor(d), torch.tensor(c)

        def jvp_in_torch(t, A_t=A_t, d_t=d_t, c_t=c_t):
            return (c_t * (d_t * (A_t @ t))[1:4, None]).sum(dim=0)

        _, vjp = torch.func.vjp(jvp_in_torch, torch.zeros(A.shape[0], dtype=torch.float64))
        (got,) = vjp(torch.tensor(u))
        np.testing.assert_allclose(got.numpy(), vjp_by_transposing(u, A, d, c), atol=1e-12)


def test_12_4_exercise_cell_passes_copies() -> None:
    """An answer that writes into its arguments changes neither the lesson's arrays nor
    the identity the exercise cell prints: the cell passes copies."""
    import nbformat

    lesson = Path(__file__).resolve().parent.parent / "lessons" / "12_forward_mode.ipynb"
    cells = nbformat.read(lesson, as_version=4).cells
    setup = next(c.source for c in cells if c.source.startswith("def linear_jvp("))
    exercise = next(c.source for c in cells if c.source.startswith("# Exercise 12.4:"))
    body = exercise[exercise.index("    ### BEGIN SOLUTION"):exercise.index(
        "    ### END SOLUTION") + len("    ### END SOLUTION")]
    writes_into_its_arguments = "\n".join([
        "    result = A.T @ (d * np.pad(c @ u, (1, A.shape[0] - 4)))",
        "    u[:] = 0.0",
        "    A[:] = 0.0",
        "    d[:] = 0.0",
        "    c[:] = 0.0",
        "    return result",
    ])
    namespace = {"np": np, "minigrad": minigrad, "functional": functional}
    exec(setup, namespace)  # noqa: S102 - the lesson's own cell
    kept = {name: namespace[name].copy() for name in ("A_ex", "c_ex", "d_ex", "t_ex")}
    exec(exercise.replace(body, writes_into_its_arguments), namespace)  # noqa: S102
    for name, value in kept.items():
        np.testing.assert_array_equal(namespace[name], value)
    np.testing.assert_array_equal(namespace["u_ex"], [1.0, -2.0])


# --------------------------------------------------------------------------- Exercise 12.5


class Tagged:
    """The lesson's Tagged, as a learner's notebook defines it."""

    def __init__(self, value, tangent, tag):
        self.value, self.tangent, self.tag = value, tangent, tag

    @staticmethod
    def split(v, tag):
        if isinstance(v, Tagged) and v.tag == tag:
            return v.value, v.tangent
        return v, 0.0

    @staticmethod
    def top(a, b):
        return max(v.tag for v in (a, b) if isinstance(v, Tagged))

    def __add__(self, other):
        tag = Tagged.top(self, other)
        (a, da), (b, db) = Tagged.split(self, tag), Tagged.split(other, tag)
        return Tagged(a + b, da + db, tag)

    def __mul__(self, other):
        tag = Tagged.top(self, other)
        (a, da), (b, db) = Tagged.split(self, tag), Tagged.split(other, tag)
        return Tagged(a * b, da * b + a * db, tag)

    __radd__ = __add__
    __rmul__ = __mul__


tags = itertools.count(1)


def derivative(f, x):
    tag = next(tags)
    out = f(Tagged(x, 1.0, tag))
    if isinstance(out, Tagged) and out.tag == tag:
        return out.tangent
    return 0.0


_depth = [0]


def derivative_by_depth(f, x):
    """Written differently: the tag is the nesting depth (Autodidax's levels), which is
    enough for calls that nest properly."""
    _depth[0] += 1
    tag = _depth[0]
    try:
        out = f(Tagged(x, 1.0, tag))
    finally:
        _depth[0] -= 1
    return out.tangent if getattr(out, "tag", None) == tag else 0


def _derivative(next_tag, own_tag_only=True, seed=lambda x, tag: Tagged(x, 1.0, tag)):
    def answer(f, x):
        tag = next_tag()
        out = f(seed(x, tag))
        if not own_tag_only:
            return out.tangent
        if isinstance(out, Tagged) and out.tag == tag:
            return out.tangent
        return 0.0

    return answer


def _count(step):
    state = [0]

    def next_tag():
        state[0] += step
        return state[0]

    return next_tag


@pytest.mark.parametrize("answer", [derivative, derivative_by_depth])
def test_12_5_right_answers_pass(answer, capsys) -> None:
    lesson12.check_12_5(answer)
    assert capsys.readouterr().out == "Exercise 12.5: correct.\n"


class Dual:
    """Section 1's Dual: one ε for every call."""

    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(
            self.value * other.value, self.tangent * other.value + self.value * other.tangent
        )

    __radd__ = __add__
    __rmul__ = __mul__


def derivative_untagged(f, x):
    """Without tags: perturbation confusion."""
    out = f(Dual(x, 1.0))
    return out.tangent if isinstance(out, Dual) else 0.0


def derivative_assumes_tagged(f, x):
    """Right on every nested case, but f's result is taken to be a Tagged always."""
    tag = next(tags)
    out = f(Tagged(x, 1.0, tag))
    return out.tangent if out.tag == tag else 0.0


def derivative_any_tag(f, x):
    tag = next(tags)
    out = f(Tagged(x, 1.0, tag))
    return out.tangent if isinstance(out, Tagged) else 0.0


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # issue 36: untagged (2 instead of 1), reading the wrong tag
        (_derivative(lambda: 1), "is 2, expected 1: every call uses the same tag"),
        (derivative_untagged, "is 2, expected 1: every call uses the same tag"),
        (derivative_any_tag, "read whatever its tag"),
        (_derivative(_count(-1)), "the tags go down"),
        (derivative_assumes_tagged, "raised AttributeError.*its derivative along this call"),
        (lambda f, x: f(Tagged(x, 1.0, next(tags))), "not a number: return the tangent"),
        (lambda f, x: None, "is None"),
        (3.0, "should be a function"),
    ],
)
def test_12_5_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_5(answer)


def derivative_returns_the_tagged(f, x):
    """Returns f's result itself, a Tagged of its own tag, instead of its tangent."""
    tag = next(tags)
    out = f(Tagged(x, 1.0, tag))
    return out if isinstance(out, Tagged) and out.tag == tag else 0.0


def test_12_5_returning_the_tagged_itself_is_named() -> None:
    """The inner call returns its Tagged; the outer call then reads 0 (the tag is not its
    own), which matched "the tags go down" before: now the returned Tagged is named."""
    with pytest.raises(CheckError, match=r"returned Tagged\(\.\.\., tag \d+\), the dual "
                       r"number of its own tag.*return the tangent") as caught:
        lesson12.check_12_5(derivative_returns_the_tagged)
    assert "tags go down" not in str(caught.value)


def test_12_5_untagged_gives_2_on_the_lessons_example() -> None:
    """The example of section 8: 1 with tags, 2 with untagged duals."""
    label, build, expected = lesson12._NESTED_CASES[0]
    assert "x + y" in label and expected == 1.0
    assert build(derivative) == 1.0 and build(derivative_untagged) == 2.0


def test_12_5_hidden_data_has_edge_cases() -> None:
    """An inner function that ignores its variable, a function that ignores x, three
    levels, and a derivative at a tagged point."""
    labels = [label for label, _, _ in lesson12._NESTED_CASES]
    assert any("ignores y" in label for label in labels)
    assert any("f ignores x" in label for label in labels)
    assert any(label.count("d/d") == 3 for label in labels)
    assert any("at y = x" in label for label in labels)


def test_12_5_nested_cases_agree_with_torch_func(real_torch) -> None:
    """torch.func.jvp nests with levels: it gives the expected numbers of every case."""
    torch = real_torch

    def torch_derivative(f, x):
        x = torch.as_tensor(x, dtype=torch.float64)
        one = torch.ones((), dtype=torch.float64)
        return torch.func.jvp(lambda u: f(u) + 0 * u, (x,), (one,))[1]  # + 0 * u: a tensor

    for _, build, expected in lesson12._NESTED_CASES:
        assert float(build(torch_derivative)) == pytest.approx(expected)


# --------------------------------------------------------------------------- the lesson's text


def _text_above(grade_id: str) -> str:
    """The lesson's markdown and code above the exercise cell `grade_id`, lower-cased."""
    import nbformat

    lesson = Path(__file__).resolve().parent.parent / "lessons" / "12_forward_mode.ipynb"
    cells = nbformat.read(lesson, as_version=4).cells
    above = []
    for cell in cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return "\n".join(above).lower()
        above.append(cell.source)
    raise AssertionError(f"no cell {grade_id}")


@pytest.mark.parametrize(
    ("grade_id", "answers"),
    [
        # 12.2 derives which tangents give J (issue 36: its recipe was spelled out above it)
        ("exercise_12_2", ["e_j", "column $j$", "unit vector"]),
        # 12.4 derives the transposes of the slice, the broadcast and the sum
        ("exercise_12_4", ["pad", "put `u` into", "sum and broadcast", "scatteradd"]),
        # 12.5 works out what to return when f's result does not carry the call's tag
        ("exercise_12_5", ["return 0", "out.tag == tag"]),
    ],
)
def test_derivation_answers_are_not_written_above_the_exercise(grade_id, answers) -> None:
    text = _text_above(grade_id)
    assert [answer for answer in answers if answer in text] == []

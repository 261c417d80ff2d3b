"""Tests of lesson 12's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd import forward_ad, functional
from minigrad.course import CheckError, lesson12

# --------------------------------------------------------------------------- Exercise 12.1


def _scaled_sin(name: str, jvp, save: bool = True, value=None) -> type:
    """A ScaledSin (y = a * sin(b)) whose jvp is `jvp(a, b, ta, tb)` on Variables."""

    def forward(ctx, a, b):
        if save:
            ctx.save_for_forward(a, b)
        return value(a.data, b.data) if value else a.data * np.sin(b.data)

    def jvp_method(ctx, ta, tb):
        a, b = ctx.saved_for_forward
        return jvp(a, b, ta, tb)

    return type(
        name,
        (minigrad.Function,),
        {"forward": staticmethod(forward), "jvp": staticmethod(jvp_method)},
    )


ScaledSin = _scaled_sin("ScaledSin", lambda a, b, ta, tb: ta * b.sin() + a * b.cos() * tb)


def test_12_1_reference_passes(capsys) -> None:
    lesson12.check_12_1(ScaledSin)
    assert "Exercise 12.1: correct." in capsys.readouterr().out


def test_12_1_numpy_jvp_passes(capsys) -> None:
    answer = _scaled_sin(
        "ScaledSinNumpy",
        lambda a, b, ta, tb: ta.data * np.sin(b.data) + a.data * np.cos(b.data) * tb.data,
    )
    lesson12.check_12_1(answer)
    assert "correct" in capsys.readouterr().out


class NoJvp(minigrad.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a.data * np.sin(b.data)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_scaled_sin("Primal", lambda a, b, ta, tb: a * b.sin()), "value a·sin\\(b\\), not its"),
        (_scaled_sin("OnlyA", lambda a, b, ta, tb: ta * b.sin()), "term of b is missing"),
        (_scaled_sin("OnlyB", lambda a, b, ta, tb: a * b.cos() * tb), "term of a is missing"),
        (
            _scaled_sin("NoTangents", lambda a, b, ta, tb: b.sin() + a * b.cos()),
            "tangents are left out",
        ),
        (
            _scaled_sin("SinNotCos", lambda a, b, ta, tb: ta * b.sin() + a * b.sin() * tb),
            "derivative of sin is cos",
        ),
        (
            _scaled_sin("Minus", lambda a, b, ta, tb: ta * b.sin() - a * b.cos() * tb),
            "wrong sign",
        ),
        (
            _scaled_sin("Swapped", lambda a, b, ta, tb: tb * b.sin() + a * b.cos() * ta),
            "tangents are swapped",
        ),
        (
            _scaled_sin("NoSave", lambda a, b, ta, tb: ta, save=False),
            "call `ctx.save_for_forward\\(a, b\\)`",
        ),
        (_scaled_sin("NoReturn", lambda a, b, ta, tb: None), "jvp must `return`"),
        (
            _scaled_sin("WrongValue", lambda a, b, ta, tb: ta, value=lambda a, b: np.sin(b)),
            "that is sin\\(b\\): multiply by a",
        ),
        (NoJvp, "has no jvp"),
        (ScaledSin.apply, "not `ScaledSin.apply`"),
        (lambda a, b: a, "subclasses minigrad.Function"),
    ],
)
def test_12_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_1(answer)


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


def _columns_with(tangent_for):
    """jacobian_by_columns with the tangent for column j given by tangent_for(x, j)."""

    def answer(f, x):
        columns = []
        for j in range(x.numel()):
            _, column = functional.jvp(f, x, minigrad.Variable(tangent_for(x, j)))
            columns.append(column.data)
        return np.stack(columns, axis=1)

    return answer


def jacobian_stacked_as_rows(f, x):
    return jacobian_by_columns(f, x).T


def jacobian_by_rows(f, x):
    return functional.jacobian(f, x).data


def jacobian_list_of_columns(f, x):
    return [functional.jvp(f, x, minigrad.Variable(e))[1] for e in np.eye(x.numel())]


def jacobian_without_level(f, x):
    dual = forward_ad.make_dual(x, np.eye(x.numel())[0])
    return f(dual)


def test_12_2_reference_passes(capsys) -> None:
    lesson12.check_12_2(jacobian_by_columns)
    assert "Exercise 12.2: correct." in capsys.readouterr().out


def test_12_2_dual_level_answer_passes(capsys) -> None:
    lesson12.check_12_2(jacobian_with_dual_level)
    assert "correct" in capsys.readouterr().out


def _unit(x, j):
    e = np.zeros(x.shape)
    e[j] = 1.0
    return e


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (jacobian_stacked_as_rows, "columns ended up as rows"),
        (_columns_with(lambda x, j: np.ones(x.shape)), "not all ones"),
        (_columns_with(lambda x, j: x.data), "not the input x itself"),
        (_columns_with(lambda x, j: x.data[j] * _unit(x, j)), "not x_j·e_j"),
        (_columns_with(lambda x, j: 2 * _unit(x, j)), "J times 2: the tangents were scaled"),
        (jacobian_by_rows, "that is reverse mode"),
        (jacobian_list_of_columns, "list of Variables: stack the columns"),
        (jacobian_without_level, "with forward_ad.dual_level"),
        (lambda f, x: None, "forget to `return`"),
    ],
)
def test_12_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_2(answer)


def test_12_2_too_many_passes() -> None:
    def one_pass_per_entry(f, x):
        for _ in range(10):
            f(x)
        return jacobian_by_columns(f, x)

    with pytest.raises(CheckError, match="one pass per input entry"):
        lesson12.check_12_2(one_pass_per_entry)


# --------------------------------------------------------------------------- Exercise 12.3


def hvp_forward_over_reverse(f, w, v):
    with forward_ad.dual_level():
        leaf = minigrad.Variable(w.data, requires_grad=True)
        dual = forward_ad.make_dual(leaf, v)
        (g,) = minigrad.grad(f(dual), dual)
        return forward_ad.unpack_dual(g).tangent


def hvp_returns_gradient(f, w, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(minigrad.Variable(w.data, requires_grad=True), v)
        (g,) = minigrad.grad(f(dual), dual)
        return forward_ad.unpack_dual(g).primal


def hvp_returns_pair(f, w, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(minigrad.Variable(w.data, requires_grad=True), v)
        (g,) = minigrad.grad(f(dual), dual)
        return forward_ad.unpack_dual(g)


def hvp_tangent_of_output(f, w, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(minigrad.Variable(w.data, requires_grad=True), v)
        return forward_ad.unpack_dual(f(dual)).tangent


def hvp_without_requires_grad(f, w, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(w, v)
        (g,) = minigrad.grad(f(dual), dual)
        return forward_ad.unpack_dual(g).tangent


def hvp_with_ones(f, w, v):
    return hvp_forward_over_reverse(f, w, minigrad.Variable(np.ones(w.shape)))


def hvp_reverse_over_reverse(f, w, v):
    leaf = minigrad.Variable(w.data, requires_grad=True)
    (g,) = minigrad.grad(f(leaf), leaf, create_graph=True)
    return minigrad.grad((g * v).sum(), leaf)[0]


def hvp_unpacks_outside(f, w, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(minigrad.Variable(w.data, requires_grad=True), v)
        (g,) = minigrad.grad(f(dual), dual)
    return forward_ad.unpack_dual(g).tangent


def test_12_3_reference_passes(capsys) -> None:
    lesson12.check_12_3(hvp_forward_over_reverse)
    assert "Exercise 12.3: correct." in capsys.readouterr().out


def test_12_3_functional_hvp_passes(capsys) -> None:
    lesson12.check_12_3(lambda f, w, v: functional.hvp(f, w, v)[1])
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (hvp_returns_gradient, "the gradient ∇f\\(w\\), the primal of the gradient"),
        (hvp_returns_pair, "the pair unpack_dual returns"),
        (hvp_tangent_of_output, "single number.*It equals ∇f·v"),
        (hvp_without_requires_grad, "requires_grad=True before make_dual"),
        (hvp_with_ones, "H·1: the tangent must be v"),
        (hvp_reverse_over_reverse, "reverse-over-reverse"),
        (hvp_unpacks_outside, "with forward_ad.dual_level"),
        (lambda f, w, v: None, "forget to `return`"),
    ],
)
def test_12_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson12.check_12_3(answer)

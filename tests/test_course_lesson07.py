"""Checks of lesson 07: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import minigrad
from minigrad.course import CheckError, lesson07
from minigrad.text import feedback as language

# --------------------------------------------------------------------------- Exercise 7.1


def _note(x: minigrad.Variable, feedback: minigrad.Variable) -> str:
    return f"For the {x.role}, before shouting: {feedback.data}"


def _shout(
    forward: Callable = lambda x, times: minigrad.Variable(
        x.data.upper() + "!" * times, role=x.role
    ),
    backward: Callable | None = None,
) -> type:
    """A Shout whose forward returns forward(x, times) and whose backward returns
    backward(x, feedback); by default the reference answer."""
    if backward is None:

        def backward(x, feedback):
            return minigrad.Variable(_note(x, feedback), role=f"feedback to {x.role}"), None

    class Shout(minigrad.Function):
        @staticmethod
        def forward(ctx, x, times):
            ctx.save_for_backward(x)
            return forward(x, times)

        @staticmethod
        def backward(ctx, feedback):
            (x,) = ctx.saved_variables
            return backward(x, feedback)

    return Shout


class ShoutAfnioStyle(minigrad.Function):
    """Assigns x.grad and returns the same Variable, as in afnio's documentation."""

    @staticmethod
    def forward(ctx, x, times):
        ctx.save_for_backward(x)
        return minigrad.Variable(x.data.upper() + "!" * times, role=x.role, requires_grad=True)

    @staticmethod
    def backward(ctx, feedback):
        (x,) = ctx.saved_variables
        x.grad = minigrad.Variable(_note(x, feedback), role=f"feedback to {x.role}")
        return x.grad, None


def _assign_another(x, feedback):
    """Assigns x.grad one Variable and returns an equal but different one."""
    x.grad = minigrad.Variable(_note(x, feedback), role=f"feedback to {x.role}")
    return minigrad.Variable(_note(x, feedback), role=f"feedback to {x.role}"), None


def _assign_and_return_none(x, feedback):
    x.grad = minigrad.Variable(_note(x, feedback), role=f"feedback to {x.role}")
    return None, None


def _variable(text: str, role: str | None) -> minigrad.Variable:
    return minigrad.Variable(text, role=role)


def test_7_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_1(_shout())
    assert "Exercise 7.1: correct." in capsys.readouterr().out


def test_7_1_afnio_style_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_1(ShoutAfnioStyle)
    assert "Exercise 7.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("shout", "hint"),
    [
        (_shout(lambda x, t: _variable(x.data + "!" * t, x.role)), "not in capitals"),
        (_shout(lambda x, t: _variable(x.data.upper(), x.role)), "exclamation marks are missing"),
        (_shout(lambda x, t: _variable(x.data.upper() + "!", x.role)), "but times is 3"),
        (_shout(lambda x, t: x.data.upper() + "!" * t), "has role None, expected 'slogan'"),
        (_shout(lambda x, t: x.upper() + "!" * t), r"x.data.upper\(\)"),
        (
            _shout(backward=lambda x, f: (_note(x, f), None)),
            "returned a str for x; return a text Variable with a role",
        ),
        (
            _shout(backward=lambda x, f: _variable(_note(x, f), f"feedback to {x.role}")),
            "returns two values: the feedback for x, then None for times",
        ),
        (
            _shout(backward=lambda x, f: [_variable(_note(x, f), f"feedback to {x.role}"), None]),
            "return a tuple",
        ),
        (
            _shout(backward=lambda x, f: (_variable(_note(x, f), None), _variable("2", None))),
            "return None in its place",
        ),
        (_shout(backward=lambda x, f: (_variable(_note(x, f), None), None)), "it has no role"),
        (
            _shout(backward=lambda x, f: (_variable(_note(x, f), x.role), None)),
            "that is the input's own role",
        ),
        (
            _shout(
                backward=lambda x, f: (
                    _variable(f"For the {x.role}: {f.grad}", f"feedback to {x.role}"),
                    None,
                )
            ),
            r"feedback.data \(feedback.grad is None\)",
        ),
        (
            _shout(backward=lambda x, f: (_variable(f.data, f"feedback to {x.role}"), None)),
            "should name the input's role",
        ),
        (
            _shout(
                backward=lambda x, f: (
                    _variable(f"For the {x.role}: {f.data.upper()}", f"feedback to {x.role}"),
                    None,
                )
            ),
            "you shouted the feedback too",
        ),
        (_shout(backward=lambda x, f: (minigrad.Variable(1.0), None)), "a text Variable"),
        (_shout(backward=_assign_another), "holds a feedback twice"),
        (_shout(backward=_assign_and_return_none), "returned None for x"),
    ],
)
def test_7_1_mistakes_get_a_hint(shout: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson07.check_7_1(shout)


def test_7_1_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="not `Shout.apply`"):
        lesson07.check_7_1(_shout().apply)
    with pytest.raises(CheckError, match="should subclass minigrad.Function"):
        lesson07.check_7_1(str)
    with pytest.raises(CheckError, match="should be a class"):
        lesson07.check_7_1(lambda x, times: x)


def test_7_1_unwritten_stub() -> None:
    class Shout(minigrad.Function):
        @staticmethod
        def forward(ctx, x, times):
            raise NotImplementedError("Exercise 7.1: write Shout")

        @staticmethod
        def backward(ctx, feedback):
            raise NotImplementedError("Exercise 7.1: write Shout")

    with pytest.raises(CheckError, match="not written yet"):
        lesson07.check_7_1(Shout)


# --------------------------------------------------------------------------- Exercise 7.2


def _words_that_fit(text: str, limit: int) -> int:
    count, length = 0, -1
    for word in text.split():
        if length + 1 + len(word) > limit:
            break
        length += 1 + len(word)
        count += 1
    return count


def _max_characters(
    score: Callable = lambda text, limit: min(1.0, limit / len(text)),
    lines: Callable = lambda text, limit: [
        language.at_most_words(_words_that_fit(text, limit), len(text.split()))
    ],
    base: type = minigrad.text.Rule,
) -> type:
    """A MaxCharacters whose judge returns score(text, limit) and, over the limit,
    lines(text, limit); by default the reference answer."""

    class MaxCharacters(base):
        def __init__(self, limit):
            self.limit = limit

        def judge(self, text):
            if len(text) <= self.limit:
                return score(text, self.limit), []
            return score(text, self.limit), lines(text, self.limit)

    return MaxCharacters


def test_7_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_2(_max_characters())
    assert "Exercise 7.2: correct." in capsys.readouterr().out


def test_7_2_words_that_fit_agrees() -> None:
    for limit, text, _, wanted in lesson07.MAX_CHARACTER_CASES:
        if wanted is not None:
            assert lesson07.words_that_fit(text, limit) == wanted[0]
            assert _words_that_fit(text, limit) == wanted[0]


class JudgesWithText(minigrad.text.Rule):
    """Returns its instruction as one str."""

    def __init__(self, limit):
        self.limit = limit

    def judge(self, text):
        if len(text) <= self.limit:
            return 1.0, []
        return self.limit / len(text), language.at_most_words(2, len(text.split()))


class AlwaysInstructs(minigrad.text.Rule):
    """Asks to shorten even a text within the limit."""

    def __init__(self, limit):
        self.limit = limit

    def judge(self, text):
        fit = _words_that_fit(text, self.limit)
        return min(1.0, self.limit / len(text)), [language.at_most_words(fit, len(text.split()))]


@pytest.mark.parametrize(
    ("rule", "hint"),
    [
        (_max_characters(score=lambda t, n: len(t) / n), "that is len\\(text\\) / limit"),
        (_max_characters(score=lambda t, n: 100 * min(1.0, n / len(t))), "a percentage"),
        (_max_characters(score=lambda t, n: float(len(t) <= n)), "partial credit"),
        (_max_characters(score=lambda t, n: -1.0), "outside \\[0, 1\\]"),
        (
            _max_characters(score=lambda t, n: minigrad.Variable(min(1.0, n / len(t)))),
            "plain float",
        ),
        (JudgesWithText, "instructions as a str"),
        (AlwaysInstructs, "return an empty list"),
        (_max_characters(lines=lambda t, n: []), "returned no instruction"),
        (_max_characters(lines=lambda t, n: ["Make it shorter."]), "cannot act on"),
        (
            _max_characters(lines=lambda t, n: [f"Use at most {n} characters (it has {len(t)})."]),
            "at_most_words",
        ),
        (
            _max_characters(lines=lambda t, n: [language.at_most_words(n, len(t.split()))]),
            "the instruction counts words",
        ),
        (
            _max_characters(
                lines=lambda t, n: [language.at_most_words(len(t[:n].split()), len(t.split()))]
            ),
            "cut in half",
        ),
        (
            _max_characters(
                lines=lambda t, n: [language.at_most_words(_words_that_fit(t, n), len(t))]
            ),
            "len\\(text.split\\(\\)\\)",
        ),
        (_max_characters(base=object), "should subclass minigrad.text.Rule"),
    ],
)
def test_7_2_mistakes_get_a_hint(rule: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson07.check_7_2(rule)


def test_7_2_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="not an instance"):
        lesson07.check_7_2(_max_characters()(30))
    with pytest.raises(CheckError, match="should be a class"):
        lesson07.check_7_2(lambda text: (1.0, []))


def test_7_2_one_word_too_few() -> None:
    rule = _max_characters(
        lines=lambda t, n: [language.at_most_words(_words_that_fit(t, n) - 1, len(t.split()))]
    )
    with pytest.raises(CheckError, match="one more word still fits"):
        lesson07.check_7_2(rule)


def test_7_2_counting_letters_without_the_spaces_gets_its_own_hint() -> None:
    """A learner who sums len(word) and forgets the spaces between words gets k too big."""
    rule = _max_characters(
        lines=lambda t, n: [
            language.at_most_words(lesson07._fits_without_spaces(t, n), len(t.split()))
        ]
    )
    with pytest.raises(CheckError, match="leave out the spaces between words"):
        lesson07.check_7_2(rule)

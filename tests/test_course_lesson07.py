"""Checks of lesson 07: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable

import pytest

import minigrad
from minigrad.course import CheckError, lesson07
from minigrad.text import feedback as language

# --------------------------------------------------------------------------- Exercise 7.1


def _restate(line: str, times: int, at_most: Callable, at_least: Callable) -> str:
    """A line of feedback on the repeated text, its word limit restated by the two rules
    given (each maps (k, n, times) to the limit for x)."""
    parsed = language.parse(line)
    kind = parsed[0].kind if parsed else None
    if kind not in ("at_most", "at_least"):
        return line
    limit, whole = parsed[0].argument
    if kind == "at_most":
        return language.at_most_words(at_most(limit, whole, times), whole // times)
    return language.at_least_words(at_least(limit, whole, times), whole // times)


FLOOR = lambda k, n, t: k // t  # noqa: E731 - the right rules, as lambdas to swap out
CEIL = lambda k, n, t: -(-k // t)  # noqa: E731


def _repeat(
    forward: Callable = lambda x, times: minigrad.Variable(" ".join([x.data] * times), role=x.role),
    backward: Callable | None = None,
    at_most: Callable = FLOOR,
    at_least: Callable = CEIL,
) -> type:
    """A Repeat whose forward returns forward(x, times) and whose backward returns
    backward(x, feedback, times); by default the reference answer with the limit rules."""
    if backward is None:

        def backward(x, feedback, times):
            lines = [
                _restate(line, times, at_most, at_least) for line in feedback.data.splitlines()
            ]
            return minigrad.Variable("\n".join(lines), role=f"feedback to {x.role}"), None

    class Repeat(minigrad.Function):
        @staticmethod
        def forward(ctx, x, times):
            ctx.save_for_backward(x)
            ctx.times = times
            return forward(x, times)

        @staticmethod
        def backward(ctx, feedback):
            (x,) = ctx.saved_variables
            return backward(x, feedback, ctx.times)

    return Repeat


def _note(x, feedback, times):
    lines = [_restate(line, times, FLOOR, CEIL) for line in feedback.data.splitlines()]
    return "\n".join(lines)


class RepeatAfnioStyle(minigrad.Function):
    """Assigns x.grad and returns the same Variable, as in afnio's documentation; rounds
    with math.floor and math.ceil and rewrites the number in the line with a regex."""

    @staticmethod
    def forward(ctx, x, times):
        ctx.save_for_backward(x)
        ctx.times = times  # a number: on ctx, as PyTorch (save_for_backward refuses it)
        return minigrad.Variable(
            " ".join(x.data for _ in range(times)), role=x.role, requires_grad=True
        )

    @staticmethod
    def backward(ctx, feedback):
        (x,) = ctx.saved_variables
        times = ctx.times
        own = len(x.data.split())
        lines = []
        for line in feedback.data.splitlines():
            match = re.match(r"(Shorten|Lengthen) the text to at (most|least) (\d+) words", line)
            if match:
                share = int(match.group(3)) / times
                limit = math.floor(share) if match.group(2) == "most" else math.ceil(share)
                verb, bound = match.group(1), match.group(2)
                line = f"{verb} the text to at {bound} {limit} words (it has {own})."
            lines.append(line)
        x.grad = minigrad.Variable("\n".join(lines), role=f"feedback to {x.role}")
        return x.grad, None


def _assign_another(x, feedback, times):
    """Assigns x.grad one Variable and returns an equal but different one."""
    x.grad = minigrad.Variable(_note(x, feedback, times), role=f"feedback to {x.role}")
    return minigrad.Variable(_note(x, feedback, times), role=f"feedback to {x.role}"), None


def _assign_and_return_none(x, feedback, times):
    x.grad = minigrad.Variable(_note(x, feedback, times), role=f"feedback to {x.role}")
    return None, None


def _variable(text: str, role: str | None) -> minigrad.Variable:
    return minigrad.Variable(text, role=role)


def test_7_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_1(_repeat())
    assert "Exercise 7.1: correct." in capsys.readouterr().out


def test_7_1_library_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_1(lesson07.Repeat)
    assert "Exercise 7.1: correct." in capsys.readouterr().out


def test_7_1_afnio_style_with_a_regex_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_1(RepeatAfnioStyle)
    assert "Exercise 7.1: correct." in capsys.readouterr().out


def test_7_1_hidden_data_has_ties_and_times_one() -> None:
    """An evenly divisible limit (where floor and ceil agree) and times = 1 (the identity)."""
    cases = lesson07.REPEAT_CASES
    assert any(times == 1 for _, _, times, _ in cases)
    limits = [
        (language.parse(line)[0].argument[0], times)
        for _, _, times, lines in cases
        for line in lines
        if language.parse(line)[0].kind == "at_most"
    ]
    assert any(k % t == 0 for k, t in limits) and any(k % t for k, t in limits)


@pytest.mark.parametrize(
    ("repeat", "hint"),
    [
        # The word limit, the part to derive.
        (_repeat(at_most=lambda k, n, t: k), "that is the limit for the whole repeated text"),
        (
            _repeat(at_most=lambda k, n, t: max(n // t - (n - k), 0)),
            "gives one copy the whole excess",
        ),
        (_repeat(at_most=CEIL), r"rounded the wrong way: 3 words per copy make 9 > 7; round down"),
        (_repeat(at_least=FLOOR), r"rounded the wrong way: 4 words per copy make 8 < 9; round up"),
        (
            _repeat(
                backward=lambda x, f, t: (
                    _variable(
                        _note(x, f, t).replace("(it has 3)", "(it has 9)"), f"feedback to {x.role}"
                    ),
                    None,
                )
            ),
            "the line for x says it has 9 words; x itself has 3",
        ),
        (
            _repeat(
                backward=lambda x, f, t: (
                    _variable(
                        "\n".join(
                            line
                            for line in _note(x, f, t).splitlines()
                            if language.parse(line)[0].kind != "note"
                        ),
                        f"feedback to {x.role}",
                    ),
                    None,
                )
            ),
            "the line 'Make it calmer.' is missing",
        ),
        (
            _repeat(
                backward=lambda x, f, t: (
                    _variable(f.data + "\n" + _note(x, f, t), f"feedback to {x.role}"),
                    None,
                )
            ),
            "replace the limit on the whole by the one for x",
        ),
        (
            _repeat(
                backward=lambda x, f, t: (
                    _variable(
                        f.data.replace("at most 7", f"at most {7 / t:.2f}"),
                        f"feedback to {x.role}",
                    ),
                    None,
                )
            ),
            "no readable word limit",
        ),
        # forward
        (_repeat(lambda x, t: _variable(x.data * t, x.role)), "the copies run into each other"),
        (_repeat(lambda x, t: _variable("\n".join([x.data] * t), x.role)), "on separate lines"),
        (_repeat(lambda x, t: _variable(" ".join([x.data] * (t + 1)), x.role)), "4 copies"),
        (_repeat(lambda x, t: " ".join([x.data] * t)), "has role None, expected 'slogan'"),
        (
            _repeat(lambda x, t: _variable(" ".join([x.strip()] * t), x.role)),
            r"x is a Variable, not a str: its text is x.data",
        ),
        # what backward returns
        (
            _repeat(backward=lambda x, f, t: (_note(x, f, t), None)),
            "returned a str for x; return a text Variable with a role",
        ),
        (
            _repeat(backward=lambda x, f, t: _variable(_note(x, f, t), f"feedback to {x.role}")),
            "returns two values: the feedback for x, then None for times",
        ),
        (
            _repeat(
                backward=lambda x, f, t: [_variable(_note(x, f, t), f"feedback to {x.role}"), None]
            ),
            "return a tuple",
        ),
        (
            _repeat(
                backward=lambda x, f, t: (_variable(_note(x, f, t), None), _variable("2", None))
            ),
            "return None in its place",
        ),
        (_repeat(backward=lambda x, f, t: (_variable(_note(x, f, t), None), None)), "no role"),
        (
            _repeat(backward=lambda x, f, t: (_variable(_note(x, f, t), x.role), None)),
            "that is the input's own role",
        ),
        (
            _repeat(backward=lambda x, f, t: (minigrad.Variable(1.0), None)),
            "backward returned a number for x, which is text",
        ),
        (_repeat(backward=_assign_another), "holds a feedback twice"),
        (_repeat(backward=_assign_and_return_none), "returned None for x"),
    ],
)
def test_7_1_mistakes_get_a_hint(repeat: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson07.check_7_1(repeat)


def test_7_1_restated_line_rules() -> None:
    assert lesson07.restated_line("Shorten the text to at most 10 words (it has 12).", 3) == (
        "Shorten the text to at most 3 words (it has 4)."
    )
    assert lesson07.restated_line("Lengthen the text to at least 10 words (it has 6).", 3) == (
        "Lengthen the text to at least 4 words (it has 2)."
    )
    assert lesson07.restated_line("Make it warmer.", 3) == "Make it warmer."


def test_7_1_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="not `Repeat.apply`"):
        lesson07.check_7_1(_repeat().apply)
    with pytest.raises(CheckError, match="should subclass minigrad.Function"):
        lesson07.check_7_1(str)
    with pytest.raises(CheckError, match="should be a class"):
        lesson07.check_7_1(lambda x, times: x)


def test_7_1_unwritten_stub() -> None:
    class Repeat(minigrad.Function):
        @staticmethod
        def forward(ctx, x, times):
            raise NotImplementedError("Exercise 7.1: write Repeat")

        @staticmethod
        def backward(ctx, feedback):
            raise NotImplementedError("Exercise 7.1: write Repeat")

    with pytest.raises(CheckError, match="not written yet"):
        lesson07.check_7_1(Repeat)


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


def test_7_2_accumulate_answer_passes(capsys: pytest.CaptureFixture) -> None:
    """Written differently: the lengths of the prefixes with itertools.accumulate."""

    class MaxCharacters(minigrad.text.Rule):
        def __init__(self, limit):
            self.limit = limit

        def judge(self, text):
            if len(text) <= self.limit:
                return 1.0, []
            words = text.split()
            # prefix k joined by spaces has sum(len) + (k - 1) characters
            lengths = itertools.accumulate(len(word) + 1 for word in words)
            fit = sum(1 for length in lengths if length - 1 <= self.limit)
            return self.limit / len(text), [language.at_most_words(fit, len(words))]

    lesson07.check_7_2(MaxCharacters)
    assert "correct" in capsys.readouterr().out


def test_7_2_hidden_data_has_the_tie_and_no_word_fitting() -> None:
    cases = lesson07.MAX_CHARACTER_CASES
    assert any(len(text) == limit for limit, text, _, _ in cases)
    assert any(wanted is not None and wanted[0] == 0 for _, _, _, wanted in cases)


def test_7_2_strict_comparison_at_the_limit_is_caught() -> None:
    """`len(text) < limit` treats a text of exactly `limit` characters as too long."""

    class MaxCharacters(minigrad.text.Rule):
        def __init__(self, limit):
            self.limit = limit

        def judge(self, text):
            if len(text) < self.limit:
                return 1.0, []
            fit = _words_that_fit(text, self.limit)
            score = min(1.0, self.limit / len(text))
            return score, [language.at_most_words(fit, len(text.split()))]

    with pytest.raises(CheckError, match="within the limit 12: nothing needs to change"):
        lesson07.check_7_2(MaxCharacters)


def test_7_2_first_word_assumed_to_fit_is_caught() -> None:
    """Counting from 1, as if the first word always fitted: only a text whose first word is
    longer than the limit shows it."""
    rule = _max_characters(
        lines=lambda t, n: [language.at_most_words(max(_words_that_fit(t, n), 1), len(t.split()))]
    )
    with pytest.raises(CheckError, match="asks for at most 1 word, expected 0: one word too many"):
        lesson07.check_7_2(rule)


def test_7_2_constructor_without_the_limit_is_named_from_its_signature() -> None:
    class MaxCharacters(minigrad.text.Rule):
        def __init__(self):
            self.limit = 30

        def judge(self, text):
            return 1.0, []

    with pytest.raises(CheckError, match=r"MaxCharacters\(\) cannot be called as MaxCharacters"):
        lesson07.check_7_2(MaxCharacters)


# --------------------------------------------------------------------------- Exercise 7.3


def _headline(returns: Callable) -> type:
    """A Headline whose backward shares the lines out correctly (by the inputs' roles), then
    hands them over as returns(title, tagline, for_title, for_tagline) does."""

    class Headline(minigrad.Function):
        @staticmethod
        def forward(ctx, title, tagline):
            ctx.save_for_backward(title, tagline)
            return minigrad.Variable(f"{title.data}: {tagline.data}", role="headline")

        @staticmethod
        def backward(ctx, feedback):
            title, tagline = ctx.saved_variables
            for_title, for_tagline = [], []
            for line in feedback.data.splitlines():
                if line.startswith(f"[{title.role}]"):
                    for_title.append(line)
                elif line.startswith(f"[{tagline.role}]"):
                    for_tagline.append(line)
                else:
                    for_title.append(line)
                    for_tagline.append(line)
            return returns(title, tagline, for_title, for_tagline)

    return Headline


def _headline_note(part, lines, role=None):
    return minigrad.Variable("\n".join(lines), role=role or f"feedback to {part.role}")


def _or_none(part, lines):
    return _headline_note(part, lines) if lines else None


def _returned(title, tagline, for_title, for_tagline):
    return _or_none(title, for_title), _or_none(tagline, for_tagline)


def _assigned_and_returned(title, tagline, for_title, for_tagline):
    """afnio style done right: assigns title.grad only when there is something, and returns
    that very Variable."""
    note = _or_none(title, for_title)
    if note is not None:
        title.grad = note
    return note, _or_none(tagline, for_tagline)


def _buggy(title, tagline, for_title, for_tagline):
    """The lesson's BuggyHeadline: tagline's note in title's slot, title's assigned."""
    title.grad = _headline_note(title, for_title)
    return _headline_note(tagline, for_tagline), None


def _swapped(title, tagline, for_title, for_tagline):
    return _or_none(tagline, for_tagline), _or_none(title, for_title)


def _assigned_not_returned(title, tagline, for_title, for_tagline):
    """The order fixed, the assignment kept: the earlier feedback is replaced."""
    if for_title:
        title.grad = _headline_note(title, for_title)
    return None, _or_none(tagline, for_tagline)


def _empty_instead_of_none(title, tagline, for_title, for_tagline):
    return _headline_note(title, for_title), _headline_note(tagline, for_tagline)


def _common_lines_to_title_only(title, tagline, for_title, for_tagline):
    own = [line for line in for_tagline if line.startswith(f"[{tagline.role}]")]
    return _or_none(title, for_title), _or_none(tagline, own)


def _role_of_the_other(title, tagline, for_title, for_tagline):
    wrong = _headline_note(tagline, for_tagline, "feedback to title") if for_tagline else None
    return _or_none(title, for_title), wrong


def _one_value(title, tagline, for_title, for_tagline):
    return _or_none(title, for_title)


def _assigned_and_another_returned(title, tagline, for_title, for_tagline):
    """title.grad assigned, and a different Variable with the same text returned for it."""
    if for_title:
        title.grad = _headline_note(title, for_title)
    return _or_none(title, for_title), _or_none(tagline, for_tagline)


def _role_prefix_stripped(title, tagline, for_title, for_tagline):
    """Each part's own lines kept without their "[role] " prefix."""

    def stripped(part, lines):
        prefix = f"[{part.role}]"
        return [line[len(part.role) + 2 :].strip() if line.startswith(prefix) else line
                for line in lines]  # fmt: skip

    return _or_none(title, stripped(title, for_title)), _or_none(
        tagline, stripped(tagline, for_tagline)
    )


def _joined_with_blank_lines(title, tagline, for_title, for_tagline):
    """A part's lines joined with "\n\n" instead of "\n"."""

    def note(part, lines):
        text = "\n\n".join(lines)
        return minigrad.Variable(text, role=f"feedback to {part.role}") if lines else None

    return note(title, for_title), note(tagline, for_tagline)


@pytest.mark.parametrize("returns", [_returned, _assigned_and_returned])
def test_7_3_correct_answers_pass(returns, capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_3(_headline(returns))
    assert "Exercise 7.3: correct." in capsys.readouterr().out


def test_7_3_library_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson07.check_7_3(lesson07.Headline)
    assert "Exercise 7.3: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("returns", "hint"),
    [
        (_buggy, r"returned the feedback for the tagline .* in title's slot"),
        (_swapped, r"returned the feedback for the tagline .* in title's slot"),
        (_assigned_not_returned, r"had from an earlier backward .* is gone.*replaces"),
        (_empty_instead_of_none, r"tagline\.grad is an empty text.*Return None"),
        (_common_lines_to_title_only, r"tagline did not get 'Make it sound warmer\.'"),
        (_role_of_the_other, r"has role 'feedback to title', expected 'feedback to tagline'"),
        (_one_value, r"backward returned 1 gradient, expected 2"),
        (
            _assigned_and_another_returned,
            r"title\.grad holds its feedback twice: backward assigned title\.grad and also "
            r"returned feedback for it.*Return it only",
        ),
        (
            _role_prefix_stripped,
            r"title got 'Use title case\.' where the feedback has '\[title\] Use title "
            r"case\.': backward stripped the role prefix .*Keep each line as written",
        ),
        (
            _joined_with_blank_lines,
            r"joined with a blank line .* where one newline is wanted: .*as BuggyHeadline",
        ),
    ],
)
def test_7_3_names_the_mistake(returns, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson07.check_7_3(_headline(returns))


def test_7_3_shares_follow_the_roles() -> None:
    advice = "[title] A.\n[tagline] B.\nC.\n[slogan] D."
    assert lesson07.headline_shares(advice, "title", "tagline") == (
        "[title] A.\nC.\n[slogan] D.",
        "[tagline] B.\nC.\n[slogan] D.",
    )
    assert lesson07.headline_shares("[title] A.", "title", "tagline") == ("[title] A.", None)


def test_7_3_the_lessons_buggy_headline_loses_feedback_as_the_lesson_says() -> None:
    """The symptoms the lesson describes: one pass puts both notes on title and none on
    tagline; a second pass replaces title's earlier feedback."""
    buggy = _headline(_buggy)
    title = minigrad.Variable("Cheap Mug", role="title", requires_grad=True)
    tagline = minigrad.Variable("keeps coffee hot", role="tagline", requires_grad=True)
    buggy.apply(title, tagline).backward(minigrad.Variable("[title] A.\n[tagline] B.\nC."))
    assert title.grad.data == "[title] A.\nC.\n\n[tagline] B.\nC."
    assert tagline.grad is None
    other = minigrad.Variable("now 20% off", role="tagline", requires_grad=True)
    buggy.apply(title, other).backward(minigrad.Variable("[title] D."))
    assert "[title] A." not in title.grad.data

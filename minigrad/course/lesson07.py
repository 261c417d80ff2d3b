"""Checks for lesson 07 (textual feedback).

7.1 `Repeat`, a text Function whose backward restates a word limit on the repeated text in
the terms of its input (the learner works out the share of each copy); 7.2 `MaxCharacters`,
a Rule whose instructions the RuleBasedEngine can act on; 7.3 `Headline`, the backward of
a given buggy Function fixed (feedback in the wrong input's slot, and assigned to `.grad`
instead of returned, so it replaces what was there). Each check runs the learner's
answer on texts of its own and compares with what it computes here; nothing leaves the
machine (the default engine is the offline RuleBasedEngine). Errors are told apart by type
and fields, and by what the learner's code returned (minigrad.course.function_checks).
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from minigrad.core.function import Function
from minigrad.core.variable import Variable
from minigrad.course import check
from minigrad.course import function_checks as run
from minigrad.text import feedback as language
from minigrad.text.evaluate import Rule
from minigrad.text.rule_based import RuleBasedEngine
from minigrad.text.tgd import TGD

# --------------------------------------------------------------------------- Exercise 7.1

# (text, role, times, feedback lines). Limits that divide evenly by times and limits that do
# not, both directions, times = 1, and lines that must pass unchanged.
REPEAT_CASES = (
    (
        "keep it simple",
        "slogan",
        3,
        ("Shorten the text to at most 7 words (it has 9).", "Make it calmer."),
    ),
    (
        "good morning team",
        "greeting",
        2,
        ("Lengthen the text to at least 9 words (it has 6).", 'Remove the word "team".'),
    ),
    ("buy now", "call to action", 3, ("Shorten the text to at most 3 words (it has 6).",)),
    (
        "hello there",
        "opening",
        1,
        ("Say who you are.", "Shorten the text to at most 1 word (it has 2)."),
    ),
)


def repeated(text: str, times: int) -> str:
    """What Repeat.apply(x, times) holds: x's text `times` times, joined by single spaces."""
    return " ".join([text] * times)


def restated_line(line: str, times: int) -> str:
    """One line of feedback on the repeated text, in the terms of x (the text repeated).

    A word limit k on the whole (n = times · m words) is a limit on each copy: at most
    floor(k / times) words, at least ceil(k / times); every other line is unchanged."""
    instructions = language.parse(line)
    if not instructions or instructions[0].kind not in ("at_most", "at_least"):
        return line
    kind = instructions[0].kind
    limit, whole = instructions[0].argument
    words = whole // times
    if kind == "at_most":
        return language.at_most_words(limit // times, words)
    return language.at_least_words(-(-limit // times), words)


def _function_class(exercise: str, fn: Any, name: str) -> type[Function]:
    """`fn` as a Function subclass with a backward, or a CheckError saying what it is."""
    return check.function_class(exercise, fn, name, "ctx, feedback")


def _text_hints() -> list[check.HintRule]:
    return [
        (
            AttributeError,
            lambda error: (
                isinstance(getattr(error, "obj", None), Variable) and hasattr(str, error.name)
            ),
            "x is a Variable, not a str: its text is x.data, so call str methods on x.data.",
        ),
    ]


def _apply_repeat(
    exercise: str, cls: type[Function], x: Variable, times: int, seen: run.Spied
) -> Variable:
    """Repeat.apply(x, times) through a spy; its output checked to be one text Variable."""
    call = f"Repeat.apply(x, {times})"
    output = run.apply(exercise, cls, (x, times), call, seen, _text_hints())
    if isinstance(output, tuple):
        check.fail(
            exercise,
            f"{call} returned a tuple of {run.count(len(output), 'value')}; forward has one "
            f"output, the repeated text: return it alone.",
        )
    if not isinstance(output, Variable) or not output.is_text:
        check.fail(
            exercise, f"{call} should give a text Variable; got {check.with_article(output)}."
        )
    return output


def _check_repeated(exercise: str, output: Variable, text: str, role: str, times: int) -> None:
    """The forward value and role of Repeat.apply(x, times)."""
    call = f"Repeat.apply(x, {times}) with x = {text!r}"
    expected = repeated(text, times)
    got = output.data
    if got != expected:
        if got == text * times:
            hint = "the copies run into each other: join them with single spaces."
        elif got == "\n".join([text] * times):
            hint = "the copies are on separate lines; join them with single spaces."
        elif got == repeated(text, times + 1) or got == repeated(text, times - 1):
            count = len(got.split()) // max(len(text.split()), 1)
            hint = f"it holds {count} copies, times is {times}."
        else:
            hint = "forward returns x's text times times, joined by single spaces."
        check.fail(exercise, f"{call} gave {got!r}, expected {expected!r}: {hint}")
    if output.role != role:
        check.fail(
            exercise,
            f"the output of {call} has role {output.role!r}, expected {role!r}: give it the "
            f"input's role, Variable(..., role=x.role), so feedback further on can name it.",
        )
    if output.grad_fn is None:
        check.fail(
            exercise,
            "the output has no grad_fn, so nothing was recorded: call Repeat.apply(x, times), "
            "never Repeat.forward directly.",
        )


def _run_backward(exercise: str, output: Variable, advice: str, seen: run.Spied) -> None:
    """output.backward(feedback); the engine's complaints become hints."""
    returned = seen.backward
    try:
        run.run_backward(
            exercise,
            output,
            Variable(advice),
            seen,
            returns="feedback_for_x, None",
            count_hint=(
                "Repeat.forward has two inputs, x and times, so backward returns two values: "
                "the feedback for x, then None for times."
            ),
            number_hint=(
                "backward returned feedback for times, which is a plain int, not a Variable: "
                "return None in its place (`return feedback_for_x, None`)."
            ),
        )
    except check.CheckError:
        returned = seen.backward
        first = returned[0] if isinstance(returned, tuple) and returned else returned
        if isinstance(first, Variable) and not first.is_text:
            check.fail(
                exercise,
                "backward returned a number for x, which is text: the feedback for a text is "
                "a text Variable, Variable(note, role=f'feedback to {x.role}').",
            )
        raise


def _returned_feedback(exercise: str, seen: run.Spied, role: str) -> Variable:
    """The feedback backward returned for x: a text Variable with the right role."""
    result = seen.backward
    if result is run.NOTHING:
        check.fail(exercise, "backward was never called.")
    first = result[0] if isinstance(result, tuple) and result else result
    if first is None:
        check.fail(
            exercise,
            "backward returned None for x: return the feedback Variable (you may also assign "
            "it to x.grad as afnio does; minigrad then adds it once).",
        )
    if isinstance(first, str):
        check.fail(
            exercise,
            "backward returned a str for x; return a text Variable with a role, "
            "Variable(text, role=f'feedback to {x.role}'): a str carries no role.",
        )
    if not isinstance(first, Variable) or not first.is_text:
        check.fail(
            exercise,
            f"the feedback for x should be a text Variable; got {check.with_article(first)}.",
        )
    wanted_role = f"feedback to {role}"
    if first.role != wanted_role:
        if first.role is None:
            hint = "it has no role; give it one: role=f'feedback to {x.role}'."
        elif first.role == role:
            hint = "that is the input's own role; feedback's role is f'feedback to {x.role}'."
        else:
            hint = "write it as role=f'feedback to {x.role}'."
        check.fail(
            exercise,
            f"the feedback for x has role {first.role!r}, expected {wanted_role!r}: {hint}",
        )
    return first


def _limit_mistake(got: int, line: str, times: int) -> str | None:
    """The name of the slip that turns a limit k on the whole into `got` for one copy."""
    kind = language.parse(line)[0].kind
    limit, whole = language.parse(line)[0].argument
    words = whole // times
    floor, ceil = limit // times, -(-limit // times)
    shorten = kind == "at_most"
    known = [
        (
            limit,
            f"that is the limit for the whole repeated text; x appears {times} times in it, "
            f"so each copy gets a share of the limit.",
        ),
        (
            words - (whole - limit) if shorten else words + (limit - whole),
            "that gives one copy the whole excess (or shortfall), as route does for the parts "
            "of a join; here every copy of x changes with x, so the limit is shared by all "
            f"{times} copies.",
        ),
        (
            ceil if shorten else floor,
            f"{limit} / {times} rounded the wrong way: "
            + (
                f"{ceil} words per copy make {ceil * times} > {limit}; round down."
                if shorten
                else f"{floor} words per copy make {floor * times} < {limit}; round up."
            ),
        ),
    ]
    for value, hint in known:
        if got == value and got != (floor if shorten else ceil):
            return hint
    return None


def _check_restated(
    exercise: str, note: str, lines: tuple[str, ...], times: int, what: str
) -> None:
    """The feedback for x holds every line, word limits restated for one copy."""
    got_lines = [line for line in note.splitlines() if line.strip()]
    got_limits = [
        (line, language.parse(line)[0])
        for line in got_lines
        if language.parse(line) and language.parse(line)[0].kind in ("at_most", "at_least")
    ]
    for line in lines:
        wanted = restated_line(line, times)
        if wanted == line and not language.parse(line)[0].kind.startswith("at_"):
            if not any(line in got for got in got_lines):
                check.fail(
                    exercise,
                    f"{what}: the feedback for x is {note!r}; the line {line!r} is missing. "
                    f"Lines other than word limits concern x as they are: pass them on "
                    f"unchanged.",
                )
            continue
        kind = language.parse(line)[0].kind
        same_kind = [(text, ins) for text, ins in got_limits if ins.kind == kind]
        if not same_kind:
            check.fail(
                exercise,
                f"{what}: the feedback for x is {note!r}; it has no readable word limit for "
                f"{line!r}. Write the restated line with minigrad.text.feedback."
                f"{'at_most_words' if kind == 'at_most' else 'at_least_words'}(k, m), with "
                f"whole numbers, so the rule-based engine can act on it.",
            )
        if len(same_kind) > 1:
            check.fail(
                exercise,
                f"{what}: the feedback for x holds {len(same_kind)} word limits of this kind, "
                f"{[text for text, _ in same_kind]}; replace the limit on the whole by the one "
                f"for x, do not add it.",
            )
        got_text, instruction = same_kind[0]
        want = language.parse(wanted)[0].argument
        got_limit, got_count = instruction.argument
        if got_limit != want[0]:
            mistake = _limit_mistake(got_limit, line, times)
            check.fail(
                exercise,
                f"{what}: for {line!r} x was asked for {got_text!r}, expected {wanted!r}"
                + (f": {mistake}" if mistake else ".")
                + " Work it out: the repeated text has times · m words when x has m.",
            )
        if got_count != want[1]:
            check.fail(
                exercise,
                f"{what}: for {line!r} the line for x says it has {got_count} words; x itself "
                f"has {want[1]} (the whole text's {language.parse(line)[0].argument[1]} words "
                f"are {times} copies of x).",
            )


def _check_grad(exercise: str, x: Variable, expected: str, role: str, when: str) -> None:
    """x.grad holds `expected`, each feedback once."""
    if x.grad is None:
        check.fail(exercise, f"x.grad is None {when}: did backward return the feedback?")
    got = x.grad.data
    if got == expected:
        if x.grad.role != f"feedback to {role}":
            check.fail(
                exercise,
                f"x.grad has role {x.grad.role!r}, expected 'feedback to {role}'.",
            )
        return
    pieces = expected.split("\n\n")
    if any(got.count(piece) > expected.count(piece) for piece in pieces):
        check.fail(
            exercise,
            f"x.grad holds a feedback twice {when}: {got!r}. backward assigned x.grad one "
            f"Variable and returned another, so both were added. Return the very Variable "
            f"you assigned (`return x.grad, None`), or do not assign x.grad at all.",
        )
    if len(pieces) > 1 and got == pieces[-1]:
        check.fail(
            exercise,
            f"x.grad holds only the last feedback {when}: {got!r}, expected {expected!r}. "
            f"Do not overwrite x.grad with the new feedback alone: return it and let the "
            f"engine join it to what is there.",
        )
    check.fail(exercise, f"x.grad is {got!r} {when}, expected {expected!r}.")


def check_7_1(repeat: Any) -> None:
    """Repeat(x, times): x's text times times; backward restates word limits for x."""
    exercise = "7.1"
    cls = _function_class(exercise, repeat, "Repeat")
    seen = run.Spied()
    for text, role, times, lines in REPEAT_CASES:
        x = Variable(text, role=role, requires_grad=True)
        output = _apply_repeat(exercise, cls, x, times, seen)
        _check_repeated(exercise, output, text, role, times)
        advice = "\n".join(lines)
        _run_backward(exercise, output, advice, seen)
        feedback = _returned_feedback(exercise, seen, role)
        what = f"Repeat.apply(x, {times}) with x = {text!r}"
        _check_restated(exercise, feedback.data, lines, times, what)
        _check_grad(exercise, x, feedback.data, role, "after one backward")

    # One input, two Repeats: the two feedbacks are joined on x.grad, each once.
    role = "call to action"
    x = Variable("buy now", role=role, requires_grad=True)
    notes = []
    for times, advice in (
        (2, "Say please."),
        (3, "Shorten the text to at most 4 words (it has 6)."),
    ):
        output = _apply_repeat(exercise, cls, x, times, seen)
        _run_backward(exercise, output, advice, seen)
        notes.append(_returned_feedback(exercise, seen, role).data)
    _check_grad(exercise, x, "\n\n".join(notes), role, "after two backward passes")
    check.passed(exercise)


class Repeat(Function):
    """The reference: x's text `times` times; backward restates word limits for one copy."""

    @staticmethod
    def forward(ctx: Any, x: Variable, times: int) -> Variable:
        ctx.save_for_backward(x)
        ctx.times = times
        return Variable(repeated(x.data, times), role=x.role)

    @staticmethod
    def backward(ctx: Any, feedback: Variable) -> tuple[Variable, None]:
        (x,) = ctx.saved_variables
        lines = [restated_line(line, ctx.times) for line in feedback.data.splitlines()]
        return Variable("\n".join(lines), role=f"feedback to {x.role}"), None


# --------------------------------------------------------------------------- Exercise 7.2

# (limit, text, expected score, expected (k, words) of the instruction or None)
# "Keep calm ok" has exactly 12 characters (the tie: within the limit), and no word of
# "Extraordinary mug" fits in 8 (k = 0).
MAX_CHARACTER_CASES = (
    (30, "A sturdy mug that keeps your coffee hot for hours.", 30 / 50, (6, 10)),
    (30, "Handmade ceramic mug.", 1.0, None),
    (12, "Keep calm and carry on", 12 / 22, (2, 5)),
    (12, "Keep calm ok", 1.0, None),
    (8, "Extraordinary mug", 8 / 17, (0, 2)),
)


def words_that_fit(text: str, limit: int) -> int:
    """How many of the text's first words, joined by single spaces, fit in `limit` chars."""
    count, length = 0, -1
    for word in text.split():
        if length + 1 + len(word) > limit:
            break
        length += 1 + len(word)
        count += 1
    return count


def _rule_class(exercise: str, cls: Any) -> type:
    if isinstance(cls, Rule):
        check.fail(
            exercise,
            "pass the class, `MaxCharacters`, not an instance such as MaxCharacters(30): the "
            "check makes its own with other limits.",
        )
    if not isinstance(cls, type):
        check.fail(
            exercise,
            f"MaxCharacters should be a class (a Rule subclass); got {check.with_article(cls)}.",
        )
    if not issubclass(cls, Rule):
        check.fail(
            exercise,
            "MaxCharacters should subclass minigrad.text.Rule: `class "
            "MaxCharacters(minigrad.text.Rule):`. Rule gives it the call rule(text) -> (score, "
            "explanation).",
        )
    if cls.judge is Rule.judge:
        check.fail(exercise, "MaxCharacters has no judge method: define `def judge(self, text)`.")
    return cls


def _judged(exercise: str, rule: Any, text: str, limit: int) -> tuple[float, list[str]]:
    """rule.judge(text), checked to be (a number, a list of str)."""
    what = f"MaxCharacters({limit}).judge({text!r})"
    result = check.call(exercise, what, rule.judge, text)
    if not isinstance(result, tuple) or len(result) != 2:
        check.fail(
            exercise,
            f"{what} returned {check.with_article(result)}; judge returns two things, "
            f"(score, lines): `return score, lines`.",
        )
    score, lines = result
    if (
        isinstance(score, Variable)
        or not isinstance(score, (int, float))
        or isinstance(score, bool)
    ):
        check.fail(
            exercise,
            f"{what} returned a score that is {check.with_article(score)}; the score is a "
            f"plain float between 0 and 1.",
        )
    if isinstance(lines, str):
        check.fail(
            exercise,
            f"{what} returned the instructions as a str, {lines!r}; return a list of lines, "
            f"[line] (an empty list when nothing needs to change). Checklist extends its "
            f"list with yours, and a str would be split into single characters.",
        )
    if not isinstance(lines, (list, tuple)) or not all(isinstance(line, str) for line in lines):
        check.fail(
            exercise,
            f"{what} returned instructions {lines!r}; they should be a list of str.",
        )
    return float(score), list(lines)


def _check_score(exercise: str, what: str, score: float, text: str, limit: int) -> None:
    expected = min(1.0, limit / len(text))
    if not 0.0 <= score <= 1.0:
        if math.isclose(score, len(text) / limit):
            hint = "that is len(text) / limit; the score is limit / len(text)."
        elif math.isclose(score, 100 * expected):
            hint = "that is a percentage; a score lies between 0 and 1."
        else:
            hint = f"a score lies between 0 and 1; here it is limit / len(text) = {expected:.4g}."
        check.fail(exercise, f"{what} gave the score {score:.4g}, outside [0, 1]: {hint}")
    if math.isclose(score, expected, rel_tol=1e-9, abs_tol=1e-12):
        return
    if expected < 1.0 and score == 0.0:
        hint = (
            "a text over the limit still gets partial credit, limit / len(text), so a "
            "shorter text scores better than a longer one."
        )
    elif expected == 1.0:
        hint = "a text within the limit (len(text) <= limit) scores 1.0."
    else:
        hint = f"over the limit the score is limit / len(text) = {limit} / {len(text)}."
    check.fail(exercise, f"{what} gave the score {score:.4g}, expected {expected:.4g}: {hint}")


def _check_lines(
    exercise: str, what: str, lines: list[str], text: str, limit: int, wanted: tuple | None
) -> None:
    if wanted is None:
        if lines:
            check.fail(
                exercise,
                f"{what} returned {lines!r} for a text of {len(text)} characters, within the "
                f"limit {limit}: nothing needs to change, so return an empty list.",
            )
        return
    if not lines:
        check.fail(
            exercise,
            f"{what} returned no instruction for a text of {len(text)} characters, over the "
            f"limit {limit}: say how to shorten it.",
        )
    if len(lines) != 1:
        check.fail(exercise, f"{what} returned {len(lines)} lines; return one instruction.")
    (line,) = lines
    instructions = language.parse(line)
    if not instructions or instructions[0].kind != "at_most":
        check.fail(
            exercise,
            f"the RuleBasedEngine cannot act on {line!r}: it reads only the feedback "
            f"language. Write the line with minigrad.text.feedback.at_most_words(k, count).",
        )
    k, count = instructions[0].argument
    want_k, want_count = wanted
    if k != want_k:
        if k == limit:
            hint = (
                "that is the limit in characters, but the instruction counts words: k is "
                "how many of the first words fit."
            )
        elif k == want_k + 1 or k == _fits_without_spaces(text, limit):
            hint = (
                "one word too many: the first k words, joined by single spaces "
                "(' '.join(words[:k])), must fit within the limit; did you count the word "
                "that gets cut in half, or leave out the spaces between words?"
            )
        elif k == want_k - 1:
            hint = "one word too few: one more word still fits within the limit."
        else:
            hint = "k is the number of first words that, joined by spaces, fit the limit."
        check.fail(
            exercise,
            f"{what} asks for at most {k} {'word' if k == 1 else 'words'}, expected {want_k}: "
            f"{hint}",
        )
    if count != want_count:
        check.fail(
            exercise,
            f"{what} says the text has {count} words; it has {want_count} "
            f"(len(text.split())). When the judged text is a page made of parts, format and "
            f"join use that number to restate the limit for the part that must shrink.",
        )


def _check_in_use(exercise: str, cls: type) -> None:
    """Through Evaluate (rule(text)) and TGD with the RuleBasedEngine, for real."""
    limit, start = 30, "A sturdy mug that keeps your coffee hot for hours."
    rule = cls(limit)
    tagline = Variable(start, role="tagline", requires_grad=True)
    optimizer = TGD([tagline], engine=RuleBasedEngine())
    for _ in range(4):
        optimizer.zero_grad()
        score, explanation = check.call(exercise, "rule(tagline)", rule, tagline, RuleBasedEngine())
        if score.item() == 1.0:
            break
        explanation.backward()
        if tagline.grad is None or not tagline.grad.data.strip():
            check.fail(
                exercise,
                "explanation.backward() gave the tagline no feedback: the RuleBasedEngine "
                "keeps only lines it can read, so write the instruction in the feedback "
                "language.",
            )
        optimizer.step()
    if len(tagline.data) > limit:
        check.fail(
            exercise,
            f"four TGD steps with MaxCharacters({limit}) left {tagline.data!r} "
            f"({len(tagline.data)} characters): the instruction should make the engine "
            f"shorten the text until it fits.",
        )


def _check_constructor(exercise: str, cls: type) -> None:
    """MaxCharacters(limit) must be a valid call: read from the class's signature."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read: the call itself will tell
        return
    try:
        signature.bind(30)
    except TypeError:
        check.fail(
            exercise,
            f"MaxCharacters{signature} cannot be called as MaxCharacters(30): it takes the "
            f"limit, `def __init__(self, limit):`, and keeps it (`self.limit = limit`).",
        )


def check_7_2(max_characters: Any) -> None:
    """MaxCharacters(limit): score min(1, limit/len), one at_most_words instruction."""
    exercise = "7.2"
    cls = _rule_class(exercise, max_characters)
    _check_constructor(exercise, cls)
    for limit, text, _, wanted in MAX_CHARACTER_CASES:
        rule = check.call(exercise, f"MaxCharacters({limit})", cls, limit)
        what = f"MaxCharacters({limit}).judge({text!r})"
        score, lines = _judged(exercise, rule, text, limit)
        _check_score(exercise, what, score, text, limit)
        _check_lines(exercise, what, lines, text, limit, wanted)
    _check_in_use(exercise, cls)
    check.passed(exercise)


def _fits_without_spaces(text: str, limit: int) -> int:
    """How many first words fit when the spaces between them are (wrongly) not counted."""
    total, fitting = 0, 0
    for word in text.split():
        total += len(word)
        if total > limit:
            break
        fitting += 1
    return fitting


# --------------------------------------------------------------------------- Exercise 7.3

# The visible feedback on a headline: a line for each part, and one about the whole.
HEADLINE_ADVICE = (
    "[title] Use title case.",
    "[tagline] End with a full stop.",
    "Make it sound warmer.",
)


def headline(title: str, tagline: str) -> str:
    """What Headline.apply(title, tagline) holds: "<title>: <tagline>"."""
    return f"{title}: {tagline}"


def headline_shares(
    feedback: str, title_role: str, tagline_role: str
) -> tuple[str | None, str | None]:
    """The feedback text for (title, tagline): a line that starts with "[<role>]" goes to the
    part with that role only, every other line to both, in their order; None for a part
    that gets no line."""
    for_title, for_tagline = [], []
    for line in feedback.splitlines():
        if line.startswith(f"[{title_role}]"):
            for_title.append(line)
        elif line.startswith(f"[{tagline_role}]"):
            for_tagline.append(line)
        else:
            for_title.append(line)
            for_tagline.append(line)
    return ("\n".join(for_title) or None), ("\n".join(for_tagline) or None)


class Headline(Function):
    """The reference: "<title>: <tagline>"; backward hands each part the lines for it."""

    @staticmethod
    def forward(ctx: Any, title: Variable, tagline: Variable) -> Variable:
        ctx.save_for_backward(title, tagline)
        return Variable(headline(title.data, tagline.data), role="headline")

    @staticmethod
    def backward(ctx: Any, feedback: Variable) -> tuple[Variable | None, Variable | None]:
        title, tagline = ctx.saved_variables
        shares = headline_shares(feedback.data, title.role, tagline.role)
        return tuple(
            None if share is None else Variable(share, role=f"feedback to {part.role}")
            for part, share in zip((title, tagline), shares)
        )


def _apply_headline(
    exercise: str, cls: type[Function], title: Variable, tagline: Variable, seen: run.Spied
) -> Variable:
    """Headline.apply(title, tagline) through a spy; its output checked."""
    call = "Headline.apply(title, tagline)"
    output = run.apply(exercise, cls, (title, tagline), call, seen, _text_hints())
    if not isinstance(output, Variable) or not output.is_text:
        check.fail(
            exercise, f"{call} should give a text Variable; got {check.with_article(output)}."
        )
    expected = headline(title.data, tagline.data)
    if output.data != expected:
        check.fail(
            exercise,
            f"{call} gave {output.data!r}, expected {expected!r}: forward is given; keep it "
            f"as it is and write backward only.",
        )
    return output


def _headline_backward(exercise: str, output: Variable, advice: str, seen: run.Spied) -> None:
    run.run_backward(
        exercise,
        output,
        Variable(advice),
        seen,
        returns="feedback_for_title, feedback_for_tagline",
        count_hint=(
            "forward has two inputs, title and tagline, so backward returns two values, in "
            "that order: the feedback for title, then the feedback for tagline."
        ),
        number_hint="backward returned something that is not a text Variable for an input.",
        hints=_text_hints(),
    )


def _check_returned_roles(
    exercise: str, seen: run.Spied, roles: tuple[str, str], shares: tuple[str | None, ...]
) -> None:
    """Each feedback backward returned is a text Variable named for its own input, and
    not the other input's share (`shares`: what each should get)."""
    returned = seen.backward
    if not isinstance(returned, tuple) or len(returned) != 2:
        return  # the engine has already complained about the count
    for index, (name, role, value) in enumerate(zip(("title", "tagline"), roles, returned)):
        if value is None:
            continue
        if isinstance(value, str) or not isinstance(value, Variable) or not value.is_text:
            check.fail(
                exercise,
                f"backward returned {check.with_article(value)} for {name}; return a text "
                f"Variable with a role, Variable(text, role=f'feedback to {{{name}.role}}').",
            )
        wanted = f"feedback to {role}"
        other = ("title", "tagline")[1 - index]
        if value.data != shares[index] and value.data == shares[1 - index]:
            check.fail(
                exercise,
                f"backward returned the feedback for the {other} ({value.data!r}) in "
                f"{name}'s slot. It returns one value per input of forward, in forward's "
                f"order: (feedback for title, feedback for tagline).",
            )
        if value.role != wanted:
            check.fail(
                exercise,
                f"the feedback backward returned for {name} has role {value.role!r}, expected "
                f"{wanted!r}: name the part it is for, role=f'feedback to {{{name}.role}}'.",
            )


def _without_role(line: str) -> str:
    """The line with a leading "[<role>]" taken off: "[title] Be short." -> "Be short."."""
    if line.startswith("[") and "]" in line:
        return line[line.index("]") + 1 :].strip()
    return line


def _part_mistake(
    name: str,
    other: str,
    got: str | None,
    want: str | None,
    other_want: str | None,
    before: str | None,
) -> str:
    """The hint for a part whose .grad is `got` where `want` was expected (`before` is what
    it held before this backward; `other_want` is what the other part should get now)."""
    pieces = [] if got is None else got.split("\n\n")
    wanted_now = None if want is None else want.split("\n\n")[-1]
    other_now = None if other_want is None else other_want.split("\n\n")[-1]
    if before is not None and (got is None or before not in got):
        return (
            f"the feedback {name} had from an earlier backward ({before!r}) is gone. "
            f"Assigning {name}.grad = ... replaces what it holds; return the feedback "
            f"instead and let the engine join it to what is there (assigning it as well is "
            f"fine only if you return that very Variable)."
        )
    if (
        wanted_now is not None
        and len(pieces) >= 2
        and pieces[-2:] == [wanted_now, wanted_now]
        and pieces.count(wanted_now) > want.split("\n\n").count(wanted_now)
    ):
        return (
            f"{name}.grad holds its feedback twice: backward assigned {name}.grad and also "
            f"returned feedback for it, which the engine joined to what was assigned. Return "
            f"it only."
        )
    if want is not None and got is not None and got != want:
        if got.replace("\n\n", "\n") == want.replace("\n\n", "\n"):
            return (
                f"the lines of {name}'s feedback are joined with a blank line ('\\n\\n') "
                f"where one newline is wanted: join them with '\\n'.join(lines), as "
                f"BuggyHeadline does. A blank line is what the engine puts between feedback "
                f"from different backwards."
            )
    if want is not None and got is None:
        return (
            f"{name}.grad is None, but {name} should get lines. backward returns one value "
            f"per input of forward, in forward's order, (feedback for title, feedback for "
            f"tagline): did its feedback end up in the other slot, or get assigned and "
            f"not returned?"
        )
    if want is None and got == "":
        return (
            f"{name}.grad is an empty text: backward returned an empty feedback for {name}, "
            f"which has no line to act on. Return None for a part that gets no line."
        )
    if got and (got.endswith("\n\n") or "" in pieces):
        return (
            f"{name}.grad ends in an empty piece: backward returned an empty feedback for "
            f"{name}, and the engine joined it to what was there. Return None for a part that "
            f"gets no line."
        )
    if other_now is not None and other_now != wanted_now and other_now in pieces:
        if wanted_now is not None and wanted_now in pieces:
            return (
                f"{name}.grad holds the {other}'s feedback as well as its own: backward put the "
                f"{other}'s feedback in {name}'s slot. It returns one value per input of "
                f"forward, in forward's order: (feedback for title, feedback for tagline)."
            )
        return (
            f"{name} got the {other}'s feedback: the two are swapped. backward returns one "
            f"value per input of forward, in forward's order: (feedback for title, feedback "
            f"for tagline)."
        )
    if got is not None and wanted_now is not None:
        last = got.split("\n\n")[-1].splitlines()
        wanted_lines = wanted_now.splitlines()
        missing = [line for line in wanted_lines if line not in last]
        extra = [line for line in last if line not in wanted_lines]
        for line in extra:
            stripped = [w for w in wanted_lines if _without_role(w) == line != w]
            if stripped:
                return (
                    f"{name} got {line!r} where the feedback has {stripped[0]!r}: backward "
                    f"stripped the role prefix ({stripped[0][: -len(line)].strip()!r}) from "
                    f"the line. Keep each line as written, its role in brackets included."
                )
        if extra:
            return (
                f"{name} got {extra[0]!r}, a line for the {other} only: a line that starts "
                f"with the {other}'s role in brackets goes to the {other} alone."
            )
        if missing:
            return (
                f"{name} did not get {missing[0]!r}. A line that starts with no part's role "
                f"in brackets is about the whole headline: both parts get it."
            )
    return "each part gets the lines that start with its role in brackets, and every other line."


def _check_headline_grads(
    exercise: str,
    parts: tuple[Variable, Variable],
    wanted: tuple[str | None, str | None],
    before: tuple[str | None, str | None],
    when: str,
) -> None:
    """title.grad and tagline.grad hold `wanted` (None: no feedback)."""
    names = ("title", "tagline")
    for index in (0, 1):
        part, want = parts[index], wanted[index]
        got = None if part.grad is None else part.grad.data
        if got == want:
            continue
        hint = _part_mistake(
            names[index], names[1 - index], got, want, wanted[1 - index], before[index]
        )
        check.fail(
            exercise,
            f"{when}, {names[index]}.grad is {got!r}, expected {want!r}: {hint}",
        )


def check_7_3(headline_cls: Any) -> None:
    """Headline(title, tagline): backward hands each part its own lines and the common ones,
    returned in forward's order, so they accumulate (None for a part with no line)."""
    exercise = "7.3"
    cls = _function_class(exercise, headline_cls, "Headline")
    seen = run.Spied()
    roles = ("title", "tagline")
    title = Variable("Cheap Mug", role="title", requires_grad=True)
    tagline = Variable("keeps coffee hot", role="tagline", requires_grad=True)

    # 1. One headline, one backward: each part its lines and the line about the whole.
    advice = "\n".join(HEADLINE_ADVICE)
    output = _apply_headline(exercise, cls, title, tagline, seen)
    _headline_backward(exercise, output, advice, seen)
    first = headline_shares(advice, *roles)
    _check_returned_roles(exercise, seen, roles, first)
    when = f"after one backward with the feedback {advice!r}"
    _check_headline_grads(exercise, (title, tagline), first, (None, None), when)

    # 2. title in a second headline: its feedback joins what title already has; the new
    # tagline gets no line, so nothing.
    other_tagline = Variable("now 20% off", role="tagline", requires_grad=True)
    advice = '[title] Remove the word "Cheap".'
    output = _apply_headline(exercise, cls, title, other_tagline, seen)
    _headline_backward(exercise, output, advice, seen)
    second = headline_shares(advice, *roles)
    _check_returned_roles(exercise, seen, roles, second)
    wanted = ("\n\n".join([first[0], second[0]]), None)
    when = f"after a second headline with the same title and the feedback {advice!r}"
    _check_headline_grads(exercise, (title, other_tagline), wanted, (first[0], None), when)

    # 3. A third, with a line for the tagline only: title must keep what it has, unchanged.
    advice = "[tagline] Say how long it keeps coffee hot."
    output = _apply_headline(exercise, cls, title, tagline, seen)
    _headline_backward(exercise, output, advice, seen)
    third = headline_shares(advice, *roles)
    _check_returned_roles(exercise, seen, roles, third)
    wanted = (wanted[0], "\n\n".join([first[1], third[1]]))
    when = f"after a third headline with the feedback {advice!r}"
    _check_headline_grads(exercise, (title, tagline), wanted, (wanted[0], first[1]), when)
    check.passed(exercise)

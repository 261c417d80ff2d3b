"""Checks for lesson 07 (textual feedback).

7.1 `Shout`, a text Function whose backward passes feedback through, naming the input's
role; 7.2 `MaxCharacters`, a Rule whose instructions the RuleBasedEngine can act on. Each
check runs the learner's answer on texts of its own and compares with what it computes
here; nothing leaves the machine (the default engine is the offline RuleBasedEngine).
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.autodiff.errors import (
    GradientCountError,
    GradientForNonVariableError,
)
from minigrad.autodiff.function import Function
from minigrad.course import check
from minigrad.text import feedback as language
from minigrad.text.evaluate import Rule
from minigrad.text.rule_based import RuleBasedEngine
from minigrad.text.tgd import TGD
from minigrad.variable import Variable

# --------------------------------------------------------------------------- Exercise 7.1

SHOUT_CASES = (
    ("keep it simple", "slogan", 1, "Make it calmer."),
    ("good morning, team", "greeting", 3, 'Remove the word "team".'),
)


def _function_class(exercise: str, fn: Any, name: str) -> type[Function]:
    """`fn` as a Function subclass with a backward, or a CheckError saying what it is."""
    return check.function_class(exercise, fn, name, "ctx, feedback")


def _spy(cls: type[Function], returned: list) -> type[Function]:
    """A subclass of `cls` that records what its backward returns."""

    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        result = cls.backward(ctx, *grad_outputs)
        returned.append(result)
        return result

    spy = type(cls.__name__, (cls,), {"backward": staticmethod(backward)})
    spy.__qualname__ = cls.__qualname__
    return spy


def _shout_hints() -> list[check.HintRule]:
    return [
        (
            AttributeError,
            "upper",
            "x is a Variable, not a str: its text is x.data, so write x.data.upper().",
        ),
        (
            TypeError,
            "can only concatenate",
            "build the text from x.data (a str), e.g. x.data.upper() + '!' * times.",
        ),
    ]


def _apply_shout(
    exercise: str, cls: type[Function], x: Variable, times: int, returned: list
) -> Variable:
    """Shout.apply(x, times) through a spy; its output checked to be one text Variable."""
    call = f"Shout.apply(x, {times})"
    try:
        output = _spy(cls, returned).apply(x, times)
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if isinstance(error, TypeError) and "returned None" in str(error):
            check.fail(exercise, f"{call}: forward returned None; did you forget `return`?")
        if isinstance(error, TypeError) and "positional argument" in str(error):
            check.fail(
                exercise,
                f"{call} raised TypeError: {error}. forward takes ctx first, then the two "
                f"inputs: forward(ctx, x, times).",
            )
        check.explain_error(exercise, call, error, _shout_hints())
    if isinstance(output, tuple):
        check.fail(
            exercise,
            f"{call} returned a tuple of {len(output)}; forward has one output, the shouted "
            f"text: return it alone.",
        )
    if not isinstance(output, Variable) or not output.is_text:
        check.fail(
            exercise, f"{call} should give a text Variable; got {check.with_article(output)}."
        )
    return output


def _check_shouted(exercise: str, output: Variable, text: str, role: str, times: int) -> None:
    """The forward value and role of Shout.apply(x, times)."""
    call = f"Shout.apply(x, {times}) with x = {text!r}"
    expected = text.upper() + "!" * times
    got = output.data
    if got != expected:
        if got == text + "!" * times:
            hint = "the text is not in capitals: use x.data.upper()."
        elif got == text.upper():
            hint = "the exclamation marks are missing: add '!' * times."
        elif got.rstrip("!") == text.upper():
            count = len(got) - len(got.rstrip("!"))
            hint = f"it ends with {count} '!' but times is {times}: add '!' * times."
        elif got == text[::-1].upper() + "!" * times or got == text[::-1]:
            hint = "the text is reversed: that was Reverse; Shout keeps the order."
        else:
            hint = "Shout returns x.data.upper() followed by times exclamation marks."
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
            "the output has no grad_fn, so nothing was recorded: call Shout.apply(x, times), "
            "never Shout.forward directly.",
        )


def _run_backward(exercise: str, output: Variable, advice: str, returned: list) -> None:
    """output.backward(feedback); the engine's complaints become hints."""
    try:
        output.backward(Variable(advice))
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if check.is_stub(error):
            check.not_written(exercise)
        if returned and isinstance(returned[-1], list):
            check.fail(
                exercise,
                "backward returned a list: return a tuple, `return feedback_for_x, None`.",
            )
        text = str(error)
        if isinstance(error, GradientCountError):
            check.fail(
                exercise,
                f"{text} Shout.forward has two inputs, x and times, so backward returns two "
                f"values: the feedback for x, then None for times.",
            )
        if isinstance(error, GradientForNonVariableError):
            check.fail(
                exercise,
                "backward returned feedback for times, which is a plain int, not a Variable: "
                "return None in its place (`return feedback_for_x, None`).",
            )
        if "numeric gradient" in text:
            check.fail(
                exercise,
                "backward returned a number for x, which is text: the feedback for a text is "
                "a text Variable.",
            )
        check.explain_error(exercise, "backward", error)


def _returned_feedback(exercise: str, returned: list, role: str, advice: str) -> str:
    """The feedback backward returned for x: a text Variable with the right role and text."""
    if not returned:
        check.fail(exercise, "backward was never called.")
    result = returned[-1]
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
    note = first.data
    if advice not in note:
        if advice.upper() in note:
            hint = "you shouted the feedback too: pass its text through unchanged."
        elif "None" in note:
            hint = (
                "it says 'None' where the feedback belongs: the text of the feedback "
                "Variable is feedback.data (feedback.grad is None)."
            )
        else:
            hint = "include the text it received, feedback.data."
        check.fail(
            exercise,
            f"the feedback for x is {note!r}; it should contain the feedback given to the "
            f"shouted text, {advice!r}: {hint}",
        )
    if role not in note:
        check.fail(
            exercise,
            f"the feedback for x is {note!r}; it should name the input's role, {role!r}, e.g. "
            f"f'For the {{x.role}}: {{feedback.data}}'.",
        )
    return note


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


def check_7_1(shout: Any) -> None:
    """Shout(x, times): x.data.upper() + '!' * times; backward passes feedback to x, named."""
    exercise = "7.1"
    cls = _function_class(exercise, shout, "Shout")
    for text, role, times, advice in SHOUT_CASES:
        x = Variable(text, role=role, requires_grad=True)
        returned: list = []
        output = _apply_shout(exercise, cls, x, times, returned)
        _check_shouted(exercise, output, text, role, times)
        _run_backward(exercise, output, advice, returned)
        note = _returned_feedback(exercise, returned, role, advice)
        _check_grad(exercise, x, note, role, "after one backward")

    # One input, two Shouts: the two feedbacks are joined on x.grad, each once.
    role = "call to action"
    x = Variable("buy now", role=role, requires_grad=True)
    notes = []
    for times, advice in ((1, "Say please."), (2, "Say why it is worth it.")):
        returned = []
        output = _apply_shout(exercise, cls, x, times, returned)
        _run_backward(exercise, output, advice, returned)
        notes.append(_returned_feedback(exercise, returned, role, advice))
    _check_grad(exercise, x, "\n\n".join(notes), role, "after two backward passes")
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 7.2

# (limit, text, expected score, expected (k, words) of the instruction or None)
MAX_CHARACTER_CASES = (
    (30, "A sturdy mug that keeps your coffee hot for hours.", 30 / 50, (6, 10)),
    (30, "Handmade ceramic mug.", 1.0, None),
    (12, "Keep calm and carry on", 12 / 22, (2, 5)),
    (12, "Keep calm ok", 1.0, None),
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
            f"{what} asks for at most {k} words, expected {want_k}: {hint}",
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


def check_7_2(max_characters: Any) -> None:
    """MaxCharacters(limit): score min(1, limit/len), one at_most_words instruction."""
    exercise = "7.2"
    cls = _rule_class(exercise, max_characters)
    for limit, text, _, wanted in MAX_CHARACTER_CASES:
        rule = check.call(
            exercise,
            f"MaxCharacters({limit})",
            cls,
            limit,
            hints=[
                (
                    TypeError,
                    "argument",
                    "MaxCharacters takes the limit: def __init__(self, limit).",
                )
            ],
        )
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

"""Textual autodiff (minigrad.text): text Functions, evaluators, the feedback language,
RuleBasedEngine and TGD.

Everything here runs offline: with the default engine (RuleBasedEngine) or with a fake
engine that records its calls. The HTTP engine has its own file, test_text_engine_http.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import minigrad as mg
import minigrad.text as mt
from minigrad import Variable
from minigrad.text import (
    TGD,
    Checklist,
    Evaluate,
    ExactMatch,
    MustExclude,
    MustInclude,
    Regex,
    RuleBasedEngine,
    WordCount,
    default_engine,
    set_default_engine,
)
from minigrad.text import feedback as language
from minigrad.text.feedback import Instruction


@pytest.fixture(autouse=True)
def _restore_default_engine():
    """Tests may change the default engine; every test starts and ends with the built-in one."""
    set_default_engine(None)
    yield
    set_default_engine(None)


def param(text: str, role: str | None = "answer") -> Variable:
    """A text leaf that requires grad: what TGD optimizes."""
    return Variable(text, role=role, requires_grad=True)


class RecordingEngine:
    """A fake engine: records every call and answers predictably.

    feedback() answers "advice for <role>"; rewrite() appends `suffix` to the text (or
    returns `result` as it is, to test what TGD does with a bad answer).
    """

    _unset = object()

    def __init__(self, suffix: str = "+", result: Any = _unset) -> None:
        self.suffix = suffix
        self.result = result
        self.feedback_calls: list[tuple[str, str]] = []
        self.rewrite_calls: list[dict[str, Any]] = []

    def feedback(self, judgement: str, *, role: str) -> str:
        self.feedback_calls.append((judgement, role))
        return f"advice for {role}"

    def rewrite(self, text: str, feedback: str, *, role: str, constraints: Sequence[str]) -> Any:
        self.rewrite_calls.append(
            {"text": text, "feedback": feedback, "role": role, "constraints": list(constraints)}
        )
        if self.result is not RecordingEngine._unset:
            return self.result
        return text + self.suffix


def explanation_of(rule: mt.Rule, text: str) -> str:
    """The explanation Evaluate writes: a summary line, then the rule's instructions."""
    score, lines = rule.judge(text)
    summary = f"{type(rule).__name__}: score {score:.2f}."
    return "\n".join([summary, *lines]) if lines else f"{summary} Nothing to change."


# --------------------------------------------------------------------------- Concat and Slice


def test_concat_forward_and_backward_route_the_feedback_to_the_operands():
    a, b = param("Hello", role="greeting"), param("world", role="subject")
    fixed = Variable("!", role="mark")
    y = a + " " + b + fixed
    assert y.data == "Hello world!"
    assert y.is_text
    assert y.grad_fn.name() == "ConcatBackward"
    y.backward(Variable('Add the word "minigrad".\nBe warmer.'))
    # An instruction goes where it can act: a word is added by the last trainable part;
    # free text concerns the whole and reaches every operand.
    assert a.grad.data == "Be warmer."
    assert b.grad.data == 'Add the word "minigrad".\nBe warmer.'
    assert a.grad.role == "feedback to greeting"
    assert b.grad.role == "feedback to subject"
    assert fixed.grad is None  # requires no grad: gets nothing


def test_slice_forward_and_backward():
    x = param("Hello world", role="text")
    y = x[:5]
    assert y.data == "Hello"
    assert y.grad_fn.name() == "SliceBackward"
    y.backward(Variable("Be warmer."))
    assert x.grad.data == "Be warmer."


# --------------------------------------------------------------------------- Format


def test_format_fills_the_template_from_variables_and_str():
    title = param("Kettle", role="title")
    y = mt.format("{title}: {body} ({title})", title=title, body="boils water")
    assert y.data == "Kettle: boils water (Kettle)"
    assert y.is_text and y.requires_grad
    assert y.grad_fn.name() == "FormatBackward"


def test_format_routes_each_line_to_the_inputs_it_concerns():
    title = param("Fast kettle", role="title")
    body = param("A cheap kettle that boils water", role="body")
    y = mt.format("{title}\n\n{body}", title=title, body=body)
    y.backward(
        Variable(
            "[title] Shorten the text to at most 1 word (it has 2).\n"
            'Remove the word "cheap".\n'
            "Be friendlier.\n"
            "\n"
            "[body] Make the text match the pattern /^A/."
        )
    )
    # "[role]" lines go to that input only; a removal goes to the inputs containing the
    # word; any other line (the blank one is dropped) concerns the whole and goes to all.
    assert title.grad.data == (
        "[title] Shorten the text to at most 1 word (it has 2).\nBe friendlier."
    )
    assert body.grad.data == (
        'Remove the word "cheap".\nBe friendlier.\n[body] Make the text match the pattern /^A/.'
    )
    assert title.grad.role == "feedback to title"
    assert body.grad.role == "feedback to body"


def test_format_routes_additions_and_patterns_to_the_part_that_can_act():
    intro = param("Meet", role="intro")
    body = param("our kettle", role="body")
    y = mt.format("{intro} {body} {fixed}", intro=intro, body=body, fixed=Variable("today"))
    y.backward(
        Variable(
            'Add the word "minigrad".\n'
            "Make the text match the pattern /^Hello/.\n"
            "Make the text match the pattern /\\.$/."
        )
    )
    # An addition or an end pattern goes to the last trainable part, a start pattern to
    # the first; the fixed part (no grad) is never chosen.
    assert intro.grad.data == "Make the text match the pattern /^Hello/."
    assert body.grad.data == ('Add the word "minigrad".\nMake the text match the pattern /\\.$/.')


def test_format_restates_a_word_limit_for_one_part():
    brand = Variable("Acme kettles", role="brand")  # fixed
    short, long = param("fast", role="short"), param("one two three four five six", role="long")
    y = mt.format("{brand}: {short} {long}", brand=brand, short=short, long=long)
    assert len(language.words_of(y.data)) == 9
    y.backward(Variable("Shorten the text to at most 5 words (it has 9)."))
    # The whole has 4 words too many: the longest trainable part gives them up.
    assert short.grad is None
    assert long.grad.data == "Shorten the text to at most 2 words (it has 6)."

    short.grad = long.grad = None
    y = mt.format("{brand}: {short} {long}", brand=brand, short=short, long=long)
    y.backward(Variable("Lengthen the text to at least 12 words (it has 9)."))
    # A shortfall is asked of the last trainable part.
    assert short.grad is None
    assert long.grad.data == "Lengthen the text to at least 9 words (it has 6)."


def test_format_uses_the_field_name_when_an_input_has_no_role():
    first, second = param("one", role=None), param("two", role=None)
    y = mt.format("{first} {second}", first=first, second=second)
    y.backward(Variable('[second] Add the word "three".'))
    assert first.grad is None  # no line concerned it: no feedback at all
    assert second.grad.data == '[second] Add the word "three".'


def test_format_gives_no_feedback_to_inputs_that_require_no_grad():
    brand = Variable("Acme", role="brand")  # fixed: requires no grad
    body = param("boils water", role="body")
    y = mt.format("{brand}: {body} {extra}", brand=brand, body=body, extra="now")
    y.backward(Variable("[brand] Be bolder.\nBe shorter."))
    assert brand.grad is None
    assert body.grad.data == "Be shorter."


def test_format_template_errors_are_clear():
    x = param("kettle")
    with pytest.raises(ValueError, match=r"uses \{body\} but no text was given.*given: title"):
        mt.format("{title} {body}", title=x)
    for template in ("{} {title}", "{0} {title}"):
        with pytest.raises(
            ValueError, match=r"is not a plain name.*named fields such as \{title\}"
        ):
            mt.format(template, title=x)
    with pytest.raises(TypeError, match="template must be a str; got int"):
        mt.format(5, title=x)


def test_format_keeps_literal_braces_and_still_routes():
    x = param("kettle", role="item")
    y = mt.format('{{"item": "{item}"}}', item=x)
    assert y.data == '{"item": "kettle"}'
    y.backward(Variable('[item] Add the word "fast".'))
    assert x.grad.data == '[item] Add the word "fast".'


@pytest.mark.parametrize("template", ["{title.foo}", "{title.upper}"])
def test_format_rejects_attribute_fields(template: str):
    with pytest.raises(ValueError, match="named fields"):
        mt.format(template, title=param("kettle"))


# --------------------------------------------------------------------------- Join


def test_join_forward_and_routing():
    title = param("Fast kettle", role="title")
    body = param("cheap and quick", role=None)  # routed as "part 1"
    fixed = "Buy now"
    y = mt.join([title, body, fixed], separator=" | ")
    assert y.data == "Fast kettle | cheap and quick | Buy now"
    assert y.grad_fn.name() == "JoinBackward"
    y.backward(Variable('[part 1] Add the word "tea".\nRemove the word "fast".\nBe friendly.'))
    assert title.grad.data == 'Remove the word "fast".\nBe friendly.'
    assert body.grad.data == '[part 1] Add the word "tea".\nBe friendly.'


def test_join_default_separator_is_a_space():
    assert mt.join(["a", Variable("b")]).data == "a b"


def test_join_bad_arguments():
    with pytest.raises(TypeError, match="non-empty list"):
        mt.join([])
    with pytest.raises(TypeError, match="non-empty list"):
        mt.join("abc")
    with pytest.raises(TypeError, match="separator must be a str; got int"):
        mt.join(["a", "b"], separator=1)


# --------------------------------------------------------------------------- Split


def test_split_on_whitespace_and_on_a_separator():
    x = param("alpha  beta\tgamma\n", role="list")
    pieces = mt.split(x)
    assert [p.data for p in pieces] == ["alpha", "beta", "gamma"]
    assert all(p.is_text and p.requires_grad for p in pieces)
    assert pieces[0].grad_fn.name() == "SplitBackward"

    parts = mt.split(Variable("title | body text"), " | ")
    assert [p.data for p in parts] == ["title", "body text"]
    assert not any(p.requires_grad for p in parts)  # the input requires no grad
    assert [p.data for p in mt.split("a, b ,c", ",")] == ["a", " b ", "c"]


def test_split_feedback_from_several_pieces_lands_on_the_input_by_part():
    x = param("alpha beta gamma", role="list")
    first, _, last = mt.split(x)
    _, e0 = MustInclude(["one"])(first)
    _, e2 = WordCount(max_words=0)(last)
    mg.autograd.backward([e0, e2])
    assert x.grad.data == (
        'In part 0 ("alpha"): Add the word "one".\n'
        # A limit on one piece is restated for the whole: 3 words, part 2 must lose 1.
        'In part 2 ("gamma"): Shorten the text to at most 2 words (it has 3).'
    )


def test_split_piece_feedback_with_several_lines_and_explicit_feedback():
    x = param("title | the body", role="doc")
    _, body = mt.split(x, " | ")
    body.backward(Variable("Line one.\nLine two."))
    assert x.grad.data == 'In part 1 ("the body"): Line one.\nIn part 1 ("the body"): Line two.'


def test_split_bad_inputs():
    with pytest.raises(ValueError, match="empty"):
        mt.split(param("   "))
    with pytest.raises(ValueError, match="separator must be a non-empty str or None"):
        mt.split(param("a b"), "")


# --------------------------------------------------------------------------- evaluators


RULE_CASES = [
    # (id, rule, text, score, instruction lines)
    ("exact-pass", ExactMatch("Hello"), "Hello", 1.0, []),
    ("exact-fail", ExactMatch("Hello"), "hello", 0.0, ['Replace the whole text with "Hello".']),
    ("include-any-case", MustInclude(["minigrad", "fast"]), "MiniGrad is FAST!", 1.0, []),
    (
        "include-whole-words",
        MustInclude(["minigrad", "fast"]),
        "minigrads are fast",
        0.5,
        ['Add the word "minigrad".'],
    ),
    (
        "include-not-inside-a-word",
        MustInclude(["cat"]),
        "concatenate",
        0.0,
        ['Add the word "cat".'],
    ),
    ("exclude-pass", MustExclude(["cheap"]), "the cheapest kettle", 1.0, []),
    (
        "exclude-any-case",
        MustExclude(["cheap", "bad", "ugly"]),
        "Cheap! And BAD.",
        1 / 3,
        ['Remove the word "cheap".', 'Remove the word "bad".'],
    ),
    ("count-max-pass", WordCount(max_words=5), "one two three four five", 1.0, []),
    (
        "count-max-fail",
        WordCount(max_words=5),
        "one two three four five six seven eight",
        5 / 8,
        ["Shorten the text to at most 5 words (it has 8)."],
    ),
    (
        "count-min-fail",
        WordCount(min_words=4),
        "one two",
        2 / 4,
        ["Lengthen the text to at least 4 words (it has 2)."],
    ),
    ("count-both-low-edge", WordCount(min_words=2, max_words=3), "one two", 1.0, []),
    ("count-both-high-edge", WordCount(min_words=2, max_words=3), "one two three", 1.0, []),
    (
        "count-both-too-few",
        WordCount(min_words=2, max_words=3),
        "one",
        1 / 2,
        ["Lengthen the text to at least 2 words (it has 1)."],
    ),
    (
        "count-both-too-many",
        WordCount(min_words=2, max_words=3),
        "one two three four five six",
        3 / 6,
        ["Shorten the text to at most 3 words (it has 6)."],
    ),
    ("count-punctuation-is-not-a-word", WordCount(max_words=2), "Hello , world !", 1.0, []),
    ("regex-start-pass", Regex("^Meet"), "Meet minigrad", 1.0, []),
    (
        "regex-start-fail",
        Regex("^Meet"),
        "We Meet minigrad",
        0.0,
        ["Make the text match the pattern /^Meet/."],
    ),
    ("regex-end-pass", Regex(r"\.$"), "Done.", 1.0, []),
    ("regex-end-fail", Regex(r"\.$"), "Done", 0.0, ["Make the text match the pattern /\\.$/."]),
    (
        "checklist",
        Checklist([MustInclude(["minigrad"]), WordCount(max_words=2), Regex("^hello")]),
        "hello big world",
        (0.0 + 2 / 3 + 1.0) / 3,
        ['Add the word "minigrad".', "Shorten the text to at most 2 words (it has 3)."],
    ),
    (
        "checklist-pass",
        Checklist([MustInclude(["minigrad"]), WordCount(max_words=5)]),
        "hello minigrad",
        1.0,
        [],
    ),
]


@pytest.mark.parametrize(
    ("rule", "text", "score", "lines"),
    [case[1:] for case in RULE_CASES],
    ids=[case[0] for case in RULE_CASES],
)
def test_rule_scores_and_explains(rule: mt.Rule, text: str, score: float, lines: list[str]):
    got_score, got_lines = rule.judge(text)
    assert got_score == pytest.approx(score)
    assert got_lines == lines
    score_var, explanation = rule(Variable(text, role="answer"))
    assert score_var.item() == pytest.approx(score)
    assert explanation.data == explanation_of(rule, text)
    summary = explanation.data.splitlines()[0]
    assert summary.startswith(f"{type(rule).__name__}: score {score:.2f}.")
    if not lines:
        assert explanation.data.endswith("Nothing to change.")


def test_rule_repr_shows_its_settings():
    assert repr(MustInclude(["a"])) == "MustInclude(['a'])"
    assert repr(WordCount(max_words=3)) == "WordCount(min_words=None, max_words=3)"
    assert repr(Checklist([Regex("^a")])) == "Checklist(Regex('^a'))"


def test_evaluate_outputs_a_plain_score_and_a_text_explanation():
    answer = param("hello world")
    score, explanation = MustInclude(["minigrad"])(answer)
    assert not score.is_text and score.shape == ()
    assert score.item() == 0.0
    assert not score.requires_grad and score.grad_fn is None
    assert explanation.is_text and explanation.requires_grad
    assert explanation.grad_fn.name() == "EvaluateBackward"
    assert explanation.role == "evaluation of answer"
    with pytest.raises(RuntimeError, match="does not require grad"):
        score.backward()


def test_explanation_backward_with_no_argument_gives_feedback_to_the_judged_text():
    answer = param("hello world", role="answer")
    _, explanation = Checklist([MustInclude(["minigrad"]), WordCount(max_words=1)])(answer)
    explanation.backward()
    # The default engine keeps the instructions and drops the summary line.
    assert answer.grad.data == (
        'Add the word "minigrad".\nShorten the text to at most 1 word (it has 2).'
    )
    assert answer.grad.is_text
    assert answer.grad.role == "feedback to answer"


def test_explanation_backward_through_a_template():
    topic = param("kettles", role="topic")
    prompt = mt.format("Write about {topic}.", topic=topic)
    _, explanation = MustExclude(["kettles"])(prompt)
    explanation.backward()
    assert topic.grad.data == 'Remove the word "kettles".'
    assert topic.grad.role == "feedback to topic"


def test_a_passing_text_gets_empty_feedback():
    answer = param("hello minigrad")
    _, explanation = MustInclude(["minigrad"])(answer)
    explanation.backward()
    assert answer.grad.data == ""


def test_a_text_without_role_gets_feedback_to_text():
    answer = param("hello", role=None)
    _, explanation = MustInclude(["minigrad"])(answer)
    assert explanation.role == "evaluation of text"
    explanation.backward()
    assert answer.grad.role == "feedback to text"


def test_evaluate_uses_the_engine_it_is_given():
    engine = RecordingEngine()
    answer = param("hello", role="answer")
    _, explanation = MustInclude(["minigrad"])(answer, engine)
    explanation.backward()
    assert engine.feedback_calls == [(explanation.data, "answer")]
    assert answer.grad.data == "advice for answer"


def test_explicit_feedback_on_an_explanation_is_the_judgement_the_engine_sees():
    engine = RecordingEngine()
    answer = param("hello", role="answer")
    _, explanation = MustInclude(["minigrad"])(answer, engine)
    explanation.backward(Variable("Be more concise."))
    assert engine.feedback_calls == [("Be more concise.", "answer")]


def test_judging_a_str_records_nothing_to_differentiate():
    score, explanation = MustInclude(["x"])("no x here")
    assert score.item() == 1.0
    assert not explanation.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        explanation.backward()


@pytest.mark.parametrize(
    "make_output",
    [
        pytest.param(lambda x: x + "!", id="concat"),
        pytest.param(lambda x: mt.format("Say {x}", x=x), id="format"),
        pytest.param(lambda x: mt.join([x, x]), id="join"),
        pytest.param(lambda x: mt.split(x)[0], id="split"),
        pytest.param(lambda x: x[1:], id="slice"),
    ],
)
def test_backward_without_feedback_on_other_text_outputs_still_raises(make_output: Callable):
    output = make_output(param("hello there"))
    with pytest.raises(RuntimeError, match="feedback, which cannot be created implicitly"):
        output.backward()


# --------------------------------------------------------------------------- accumulation


def test_two_evaluators_on_one_parameter_join_their_feedback():
    answer = param("hello world", role="answer")
    _, first = MustInclude(["minigrad"])(answer)
    _, second = WordCount(max_words=1)(answer)
    mg.autograd.backward([first, second])
    parts = answer.grad.data.split("\n\n")
    assert sorted(parts) == sorted(
        ['Add the word "minigrad".', "Shorten the text to at most 1 word (it has 2)."]
    )
    assert answer.grad.role == "feedback to answer"


def test_feedback_from_two_backward_calls_accumulates():
    answer = param("hello world", role="answer")
    MustInclude(["minigrad"])(answer)[1].backward()
    WordCount(max_words=1)(answer)[1].backward()
    assert answer.grad.data == (
        'Add the word "minigrad".\n\nShorten the text to at most 1 word (it has 2).'
    )
    assert answer.grad.role == "feedback to answer"


def test_a_parameter_used_twice_in_a_format_gets_both_shares_once():
    word = param("cheap kettle", role="word")
    other = param("tea", role="other")
    y = mt.format("{a} / {b} / {c}", a=word, b=word, c=other)
    y.backward(Variable('[other] Add the word "hot".\nRemove the word "cheap".\nBe brief.'))
    share = 'Remove the word "cheap".\nBe brief.'
    assert word.grad.data == share + "\n\n" + share  # one share per use, joined once
    assert word.grad.role == "feedback to word"
    assert other.grad.data == '[other] Add the word "hot".\nBe brief.'


# --------------------------------------------------------------------------- feedback language


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (language.add_word("minigrad"), Instruction("add", "minigrad")),
        (language.remove_word("cheap"), Instruction("remove", "cheap")),
        (language.keep_word("café"), Instruction("keep", "café")),
        (language.at_most_words(5, 7), Instruction("at_most", (5, 7))),
        (language.at_least_words(12, 4), Instruction("at_least", (12, 4))),
        ("Shorten the text to at most 1 word.", Instruction("at_most", (1, None))),
        (language.match_pattern(r"^Meet\.$"), Instruction("pattern", r"^Meet\.$")),
        (language.replace_with('say "hi"'), Instruction("replace", 'say "hi"')),
        ('[title] Add the word "x".', Instruction("add", "x")),
        ('In part 2 ("a b"): Remove the word "b".', Instruction("remove", "b")),
        ("Be friendlier.", Instruction("note", "Be friendlier.")),
    ],
)
def test_parse_reads_each_form(line: str, expected: Instruction):
    assert language.parse(line) == [expected]


def test_parse_skips_blank_lines_and_rejects_non_str():
    assert language.parse("\n  \n") == []
    with pytest.raises(TypeError, match="feedback must be a str; got bytes"):
        language.parse(b"Add the word")


def test_route_shares_lines_among_inputs():
    shares = language.route(
        '[title] Add the word "x".\n\nRemove the word "cheap".\nBe nice.',
        [("title", "fast kettle"), ("body", "a CHEAP thing"), ("", "cheap")],
    )
    assert shares == [
        '[title] Add the word "x".\nBe nice.',
        'Remove the word "cheap".\nBe nice.',
        'Remove the word "cheap".\nBe nice.',
    ]


def test_route_sends_actionable_lines_to_trainable_parts_only():
    parts = [("a", "x y z"), ("b", "one two"), ("c", "p q r s")]
    trainable = [True, True, False]
    feedback = (
        'Add the word "new".\n'
        "Make the text match the pattern /^Meet/.\n"
        "Make the text match the pattern /done$/.\n"
        "Shorten the text to at most 3 words."  # no count: the parts' words, 9
    )
    assert language.route(feedback, parts, trainable) == [
        "Make the text match the pattern /^Meet/.\nShorten the text to at most 0 words (it has 3).",
        'Add the word "new".\nMake the text match the pattern /done$/.',
        "",
    ]
    # Without `trainable` every part may act: the last one gets the addition.
    assert language.route('Add the word "new".', parts) == ["", "", 'Add the word "new".']


# --------------------------------------------------------------------------- RuleBasedEngine


ENGINE_CASES = [
    # (id, text, feedback, constraints, expected text, expected last_unhandled)
    ("add", "fast kettle", 'Add the word "minigrad".', [], "fast kettle minigrad", []),
    (
        "add-present-any-case",
        "MiniGrad rocks",
        'Add the word "minigrad".',
        [],
        "MiniGrad rocks",
        [],
    ),
    # Prose (it ends with "!"): the clause ", Cheap!" goes whole, the sentence keeps its mark.
    ("remove", "cheap kettle, Cheap!", 'Remove the word "cheap".', [], "Kettle!", []),
    (
        "remove-whole-words-only",
        "cheapest kettle",
        'Remove the word "cheap".',
        [],
        "cheapest kettle",
        [],
    ),
    (
        "keep-protects-from-removal",
        "minigrad rocks",
        'Remove the word "minigrad".',
        ['Keep the word "minigrad".'],
        "minigrad rocks",
        [],
    ),
    (
        "keep-protects-from-shortening",
        "minigrad one two three",
        "Shorten the text to at most 1 word.",
        ['Keep the word "three".'],
        "three",
        [],
    ),
    (
        "keep-wins-over-the-limit",
        "alpha beta",
        "Shorten the text to at most 1 word.",
        ['Keep the word "alpha".', 'Keep the word "beta".'],
        "alpha beta",
        [],
    ),
    (
        "added-word-survives-shortening",
        "one two three",
        'Add the word "minigrad".\nShorten the text to at most 2 words (it has 3).',
        [],
        "one minigrad",
        [],
    ),
    (
        "at-most-drops-filler-first",
        "this is really a very fast kettle",
        "Shorten the text to at most 4 words (it has 7).",
        [],
        "this is fast kettle",
        [],
    ),
    (
        "at-most-drops-trailing-words",
        "one two three four five six",
        "Shorten the text to at most 4 words (it has 6).",
        [],
        "one two three four",
        [],
    ),
    (
        "at-most-limit-is-about-this-text",
        "one two three four five six",
        "Shorten the text to at most 5 words (it has 9).",
        [],
        "one two three four five",
        [],
    ),
    (
        "at-most-last-limit-counts",
        "one two three four",
        "Shorten the text to at most 2 words.\nShorten the text to at most 3 words.",
        [],
        "one two three",
        [],
    ),
    (
        "at-most-without-count",
        "one two three four five six",
        "Shorten the text to at most 5 words.",
        [],
        "one two three four five",
        [],
    ),
    (
        "at-least",
        "one two",
        "Lengthen the text to at least 5 words (it has 2).",
        [],
        "one two simple clear and",
        [],
    ),
    (
        "at-least-limit-is-about-this-text",
        "one two",
        "Lengthen the text to at least 4 words (it has 9).",
        [],
        "one two simple clear",
        [],
    ),
    (
        "pattern-prefix",
        "the team",
        "Make the text match the pattern /^Meet/.",
        [],
        "Meet the team",
        [],
    ),
    (
        "pattern-suffix",
        "one two",
        "Make the text match the pattern /done$/.",
        [],
        "one two done",
        [],
    ),
    (
        # Asked to end with a period, the text is a sentence: it starts with a capital too.
        "pattern-dot-suffix",
        "one two",
        "Make the text match the pattern /\\.$/.",
        [],
        "One two.",
        [],
    ),
    (
        "pattern-already-met",
        "Meet us",
        "Make the text match the pattern /^Meet/.",
        [],
        "Meet us",
        [],
    ),
    (
        "pattern-not-literal",
        "one two",
        "Make the text match the pattern /^[A-Z]/.",
        [],
        "one two",
        ["the pattern /^[A-Z]/ is not a plain literal"],
    ),
    (
        "replace",
        "anything at all",
        'Replace the whole text with "hello there".',
        [],
        "hello there",
        [],
    ),
    (
        "notes-are-listed",
        "one two",
        'Be friendlier.\n[body] Add the word "x".\nMention the price.',
        [],
        "one two x",
        ["Be friendlier.", "Mention the price."],
    ),
    (
        "constraint-limit-wins-over-feedback",
        "one two three four five",
        "Lengthen the text to at least 6 words.",
        ["Shorten the text to at most 4 words."],
        "one two three four",
        [],
    ),
    (
        "garbage-leaves-the-text-alone",
        "one two",
        "%%% ???\n\n   !!!   \nAdd the word\n",
        [],
        "one two",
        ["%%% ???", "!!!", "Add the word"],
    ),
]


@pytest.mark.parametrize(
    ("text", "feedback", "constraints", "expected", "unhandled"),
    [case[1:] for case in ENGINE_CASES],
    ids=[case[0] for case in ENGINE_CASES],
)
def test_rule_based_rewrite(
    text: str, feedback: str, constraints: list[str], expected: str, unhandled: list[str]
):
    engine = RuleBasedEngine()
    assert engine.rewrite(text, feedback, role="answer", constraints=constraints) == expected
    assert engine.last_unhandled == unhandled


def test_rule_based_feedback_keeps_only_instructions():
    engine = RuleBasedEngine()
    judgement = 'Checklist: score 0.50.\nAdd the word "x".\nsome note\nRemove the word "y".'
    assert engine.feedback(judgement, role="answer") == 'Add the word "x".\nRemove the word "y".'
    assert engine.feedback("MustInclude: score 1.00. Nothing to change.", role="answer") == ""


def test_rule_based_engine_is_deterministic():
    cases = [(text, fb, cons) for _, text, fb, cons, _, _ in ENGINE_CASES]
    first = [RuleBasedEngine().rewrite(t, f, constraints=c) for t, f, c in cases]
    second = [RuleBasedEngine().rewrite(t, f, constraints=c) for t, f, c in cases]
    assert first == second


def test_rule_based_engine_is_deterministic_across_processes():
    """Another interpreter, with another hash seed, rewrites the same texts the same way."""
    cases = [(text, fb, cons) for _, text, fb, cons, _, _ in ENGINE_CASES]
    here = [RuleBasedEngine().rewrite(t, f, constraints=c) for t, f, c in cases]
    script = (
        "import json, sys\n"
        "from minigrad.text.rule_based import RuleBasedEngine\n"
        "cases = json.loads(sys.stdin.read())\n"
        "print(json.dumps([RuleBasedEngine().rewrite(t, f, constraints=c) for t, f, c in cases]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == here


def test_rule_based_rewrite_keeps_line_breaks_it_was_not_asked_to_change():
    engine = RuleBasedEngine()
    assert engine.rewrite("line one\nline two", "Be nicer.") == "line one\nline two"
    assert engine.rewrite("x", language.replace_with("a  b")) == "a  b"


@pytest.mark.parametrize(
    ("text", "feedback", "rule"),
    [
        ("a cheap/fast kettle", 'Remove the word "cheap".', MustExclude(["cheap"])),
        ("so «cheap» here", 'Remove the word "cheap".', MustExclude(["cheap"])),
        ("便宜 cheap。", 'Remove the word "cheap".', MustExclude(["cheap"])),
        ("a very cheap kettle", 'Remove the word "very cheap".', MustExclude(["very cheap"])),
        ("hi", "Make the text match the pattern /^Hello$/.", Regex("^Hello$")),
    ],
    ids=["slash", "guillemets", "cjk-full-stop", "phrase", "both-anchors"],
)
def test_rule_based_engine_reports_what_it_cannot_do(text: str, feedback: str, rule: mt.Rule):
    engine = RuleBasedEngine()
    new_text = engine.rewrite(text, feedback)
    assert rule.judge(new_text)[0] == 1.0 or engine.last_unhandled


def _python_calls(run) -> int:
    """How many Python function calls run() makes: a measure of work that, unlike a
    timing, does not depend on how busy the machine is."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def test_shortening_a_long_text_full_of_filler_takes_linear_work():
    def shorten(copies: int):
        text = " ".join(["the", "cat", "sat"] * copies)
        return lambda: RuleBasedEngine().rewrite(text, "Shorten the text to at most 5 words.")

    assert shorten(2000)() == "cat sat cat sat cat"
    # Four times the text may take about four times the work, never sixteen (quadratic).
    assert _python_calls(shorten(2000)) <= 5 * _python_calls(shorten(500))


# --------------------------------------------------------------------------- pipelines


def optimize(
    make_param: Callable[[], Variable],
    forward: Callable[[Variable], Variable],
    rule: mt.Rule,
    steps: int = 5,
    **tgd_options: Any,
) -> list[tuple[float, str]]:
    """Run TGD for up to `steps` steps; returns (score, parameter text) at each evaluation."""
    p = make_param()
    optimizer = TGD([p], **tgd_options)
    history = []
    for _ in range(steps + 1):
        optimizer.zero_grad()
        score, explanation = rule(forward(p))
        history.append((score.item(), p.data))
        if score.item() == 1.0 or len(history) > steps:
            break
        explanation.backward()
        optimizer.step()
    return history


def test_acceptance_hello_world_reaches_a_perfect_score_deterministically():
    rule = Checklist([MustInclude(["minigrad"]), WordCount(max_words=5)])

    def run() -> list[tuple[float, str]]:
        return optimize(lambda: param("hello world", role="answer"), lambda p: p, rule)

    first, second = run(), run()
    assert first == second  # identical texts at each step
    assert first[0] == (0.5, "hello world")
    assert first[-1][0] == 1.0
    assert len(first) - 1 <= 5
    final = first[-1][1]
    assert language.contains_word(final, "minigrad")
    assert len(language.words_of(final)) <= 5


LONG_DESCRIPTION = (
    "This really is a very cheap and truly amazing kettle that boils water so quickly "
    "that your morning tea is ready before you are"
)


def test_acceptance_product_description_through_a_template():
    brand = Variable("Acme", role="brand")  # fixed part of the prompt
    rule = Checklist(
        [
            MustInclude(["minigrad", "fast"]),
            MustExclude(["cheap", "very"]),
            WordCount(min_words=8, max_words=15),
            Regex(r"^Acme presents: "),
            Regex(r"\.$"),
        ]
    )

    def forward(description: Variable) -> Variable:
        return mt.format("{brand} presents: {description}", brand=brand, description=description)

    def run() -> list[tuple[float, str]]:
        return optimize(lambda: param(LONG_DESCRIPTION, role="description"), forward, rule)

    first, second = run(), run()
    assert first == second
    assert first[0][0] < 0.5
    assert first[-1][0] == 1.0
    assert len(first) - 1 <= 5
    output = forward(Variable(first[-1][1])).data
    for each in rule.rules:
        assert each.judge(output)[0] == 1.0, (each, output)
    assert brand.data == "Acme" and brand.grad is None


def test_pipeline_from_an_empty_text():
    rule = Checklist([MustInclude(["minigrad"]), WordCount(min_words=3)])
    history = optimize(lambda: param(""), lambda p: p, rule)
    assert history[0][0] == 0.0
    assert history[-1][0] == 1.0
    assert history[-1][1].startswith("minigrad")


@pytest.mark.parametrize(
    "combine",
    [
        pytest.param(lambda a, b: mt.join([a, b]), id="join"),
        pytest.param(lambda a, b: mt.format("{a} and {b}", a=a, b=b), id="format"),
    ],
)
def test_two_parameters_sharing_a_word_budget_converge(combine: Callable):
    a, b = param("a1 a2 a3", role="a"), param("b1 b2 b3 b4", role="b")
    optimizer = TGD([a, b])
    rule = WordCount(min_words=4, max_words=5)
    scores = []
    for _ in range(6):
        optimizer.zero_grad()
        score, explanation = rule(combine(a, b))
        scores.append(score.item())
        if score.item() == 1.0:
            break
        explanation.backward()
        optimizer.step()
    assert scores[0] < 1.0
    assert scores[-1] == 1.0 and len(scores) - 1 <= 5


def test_a_word_limit_through_concat_converges():
    history = optimize(
        lambda: param("one two three four five six seven", role="description"),
        lambda p: "Product: " + p,
        WordCount(max_words=5),
    )
    assert history[-1][0] == 1.0


def test_feedback_on_a_piece_changes_only_that_piece():
    doc = param("t1 | t2 two", role="doc")
    optimizer = TGD([doc])
    _, body = mt.split(doc, " | ")
    WordCount(max_words=1)(body)[1].backward()
    optimizer.step()
    pieces = doc.data.split(" | ")
    assert len(pieces) == 2 and pieces[0] == "t1"
    assert len(pieces[1].split()) <= 1


# --------------------------------------------------------------------------- TGD


def test_tgd_rewrites_only_parameters_with_feedback():
    engine = RecordingEngine()
    with_feedback, without, blank = param("a", "one"), param("b", "two"), param("c", "three")
    with_feedback.grad = Variable("change it")
    blank.grad = Variable("  \n ")
    optimizer = TGD([with_feedback, without, blank], engine=engine)
    optimizer.step()
    assert with_feedback.data == "a+"
    assert without.data == "b" and blank.data == "c"
    assert without._version == 0 and blank._version == 0
    assert engine.rewrite_calls == [
        {"text": "a", "feedback": "change it", "role": "one", "constraints": []}
    ]


def test_tgd_step_bumps_the_version_counter():
    p = param("a")
    p.grad = Variable("change it")
    before = p._version
    TGD([p], engine=RecordingEngine()).step()
    assert p._version == before + 1
    assert p.is_leaf and p.requires_grad and p.is_text


def test_tgd_zero_grad_clears_feedback():
    a, b = param("a"), param("b")
    a.grad, b.grad = Variable("x"), Variable("y")
    optimizer = TGD([a, b], engine=RecordingEngine())
    optimizer.zero_grad()
    assert a.grad is None and b.grad is None
    optimizer.step()
    assert a.data == "a" and b.data == "b"


@pytest.mark.parametrize(
    ("momentum", "advice"),
    [
        (0, ["f1", "f2", "f3"]),
        (1, ["f1", "f1\nf2", "f2\nf3"]),
        (2, ["f1", "f1\nf2", "f1\nf2\nf3"]),
    ],
)
def test_tgd_momentum_shows_the_engine_past_feedback(momentum: int, advice: list[str]):
    engine = RecordingEngine()
    p = param("t")
    optimizer = TGD([p], engine=engine, momentum=momentum)
    for name in ("f1", "f2", "f3"):
        optimizer.zero_grad()
        p.grad = Variable(name)
        optimizer.step()
        optimizer.zero_grad()
        optimizer.step()  # no feedback: no call, no history
    assert [call["feedback"] for call in engine.rewrite_calls] == advice
    assert p.data == "t+++"


def test_tgd_passes_role_and_constraints_to_the_engine():
    engine = RecordingEngine()
    named, anonymous = param("a", role="title"), param("b", role=None)
    named.grad, anonymous.grad = Variable("x"), Variable("y")
    constraints = ['Keep the word "minigrad".', "Shorten the text to at most 9 words."]
    TGD([named, anonymous], engine=engine, constraints=constraints).step()
    assert [call["role"] for call in engine.rewrite_calls] == ["title", "text"]
    assert all(call["constraints"] == constraints for call in engine.rewrite_calls)


def test_tgd_constraints_win_with_the_default_engine():
    p = param("hello minigrad", role="answer")
    optimizer = TGD([p], constraints=['Keep the word "minigrad".'])
    MustExclude(["minigrad"])(p)[1].backward()
    optimizer.step()
    assert p.data == "hello minigrad"


def test_tgd_uses_the_default_engine_set_at_step_time():
    engine = RecordingEngine(suffix="!")
    p = param("a")
    optimizer = TGD([p])
    set_default_engine(engine)
    MustInclude(["x"])(p)[1].backward()
    assert p.grad.data == "advice for answer"  # Evaluate's backward used it too
    optimizer.step()
    assert p.data == "a!"
    assert default_engine() is engine
    assert "default engine" in repr(optimizer)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: TGD(param("a")), TypeError, r"wrap a single one: \[prompt\]"),
        (lambda: TGD([]), ValueError, "no parameters"),
        (
            lambda: TGD([Variable(np.array(1.0), requires_grad=True)]),
            ValueError,
            "parameter 0 must be a text Variable",
        ),
        (lambda: TGD([param("a"), Variable("b")]), ValueError, "parameter 1 .*requires_grad=True"),
        (lambda: TGD([param("a")], momentum=-1), ValueError, "momentum .*int >= 0; got -1"),
        (lambda: TGD([param("a")], momentum=1.5), ValueError, "momentum"),
        (lambda: TGD([param("a")], momentum=True), ValueError, "momentum"),
        (lambda: TGD([param("a")], constraints="Keep it"), TypeError, "constraints must be a list"),
        (lambda: TGD([param("a")], constraints=[1]), TypeError, "constraints must be a list"),
    ],
    ids=[
        "single-variable",
        "no-parameters",
        "numeric",
        "no-requires-grad",
        "negative-momentum",
        "float-momentum",
        "bool-momentum",
        "constraints-str",
        "constraints-int",
    ],
)
def test_tgd_bad_arguments(make: Callable, error: type[Exception], message: str):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("bad", [None, 42, b"bytes"])
def test_tgd_rejects_an_engine_that_returns_no_str(bad: Any):
    p = param("keep me")
    p.grad = Variable("change it")
    engine = RecordingEngine(result=bad)
    with pytest.raises(TypeError, match=f"RecordingEngine.rewrite returned {type(bad).__name__}"):
        TGD([p], engine=engine).step()
    assert p.data == "keep me" and p._version == 0


# --------------------------------------------------------------------------- bad inputs


NUMERIC = Variable(np.array([1.0, 2.0]), requires_grad=True)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: param("a") + NUMERIC, r"concatenate text with a numeric Variable of shape \(2,\)"),
        (lambda: "a" + Variable(np.array(1.0)), "numeric Variable of shape"),
        (lambda: mt.format("{x}", x=NUMERIC), r"format: x= must be text.*numeric.*\(2,\)"),
        (lambda: mt.join(["a", NUMERIC]), r"join: part 1 must be text.*numeric"),
        (lambda: mt.split(NUMERIC), r"split: the input must be text.*numeric"),
        (
            lambda: MustInclude(["a"])(NUMERIC),
            r"MustInclude: its input must be text \(a text Variable or a str\); got a numeric",
        ),
        (
            lambda: WordCount(max_words=1)(NUMERIC),
            r"WordCount: its input must be text \(a text Variable or a str\); got a numeric",
        ),
        (
            lambda: Checklist([Regex("a")])(NUMERIC),
            r"Checklist: its input must be text \(a text Variable or a str\); got a numeric",
        ),
        (
            lambda: ExactMatch("a")(3),
            r"ExactMatch: its input must be text \(a text Variable or a str\); got int",
        ),
        (lambda: Evaluate.apply("text", "not a rule", None), "expects a Rule"),
    ],
    ids=[
        "concat",
        "concat-left",
        "format",
        "join",
        "split",
        "include",
        "count",
        "checklist",
        "int",
        "not-a-rule",
    ],
)
def test_numbers_into_text_functions_are_rejected(call: Callable, message: str):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: Regex("(unclosed"), ValueError, r"'\(unclosed' is not a valid regular expression"),
        (lambda: Regex(5), TypeError, "pattern must be a str"),
        (lambda: MustInclude([]), ValueError, "non-empty list"),
        (lambda: MustExclude([]), ValueError, "non-empty list"),
        (lambda: MustInclude(["ok", "  "]), ValueError, "non-empty words"),
        (lambda: MustInclude("minigrad"), TypeError, "list of words"),
        (lambda: ExactMatch(None), TypeError, "expected must be a str"),
        (lambda: WordCount(), ValueError, "min_words, max_words or both"),
        (lambda: WordCount(min_words=5, max_words=2), ValueError, "min_words 5 > max_words 2"),
        (lambda: WordCount(max_words=-1), ValueError, "max_words must be an int >= 0"),
        (lambda: WordCount(min_words=1.5), ValueError, "min_words must be an int"),
        (lambda: Checklist([]), TypeError, "non-empty list of rules"),
        (lambda: Checklist(["not a rule"]), TypeError, "non-empty list of rules"),
    ],
)
def test_bad_rule_arguments(make: Callable, error: type[Exception], message: str):
    with pytest.raises(error, match=message):
        make()


def test_empty_text_has_defined_results():
    assert language.words_of("") == []
    assert WordCount(max_words=5).judge("") == (1.0, [])
    assert WordCount(min_words=3).judge("") == (
        0.0,
        ["Lengthen the text to at least 3 words (it has 0)."],
    )
    assert MustInclude(["x"]).judge("") == (0.0, ['Add the word "x".'])
    assert MustExclude(["x"]).judge("") == (1.0, [])
    assert Regex("^$").judge("") == (1.0, [])
    assert ExactMatch("").judge("") == (1.0, [])
    assert (param("") + "").data == ""
    engine = RuleBasedEngine()
    assert engine.rewrite("", "Lengthen the text to at least 2 words (it has 0).") == "simple clear"
    assert engine.rewrite("", "") == ""


def test_huge_text_is_handled():
    text = " ".join(f"w{i % 1000}" for i in range(200_000))
    p = param(text, role="document")
    rule = Checklist(
        [MustInclude(["minigrad"]), MustExclude(["w5"]), WordCount(max_words=5), Regex("^Hello")]
    )
    score, explanation = rule(p)
    assert score.item() == pytest.approx((0 + 0 + 5 / 200_000 + 0) / 4)
    assert "(it has 200000)" in explanation.data
    explanation.backward()
    TGD([p]).step()
    assert rule.judge(p.data)[0] == 1.0
    assert p.data.startswith("Hello ") and len(p.data.split()) == 5
    assert len(mt.split(Variable(text[:300_000]))) > 40_000


def test_a_checklist_step_takes_linear_work_in_the_text_length():
    def step(words: int):
        def run():
            p = param(" ".join(f"w{i % 1000}" for i in range(words)), role="document")
            rule = Checklist(
                [MustInclude(["minigrad"]), MustExclude(["w5"]), WordCount(max_words=5)]
            )
            rule(p)[1].backward()
            TGD([p]).step()

        return run

    # Four times the words may take about four times the work, never sixteen (quadratic).
    assert _python_calls(step(8000)) <= 5 * _python_calls(step(2000))


def test_non_ascii_words_are_counted_and_matched():
    assert language.words_of("naïve café, déjà vu") == ["naïve", "café", "déjà", "vu"]
    assert language.words_of("我 喜欢 minigrad") == ["我", "喜欢", "minigrad"]
    # An emoji is not a word (it is neither a letter nor a digit), but it can be matched.
    assert language.words_of("I ❤️ minigrad 🚀") == ["I", "minigrad"]
    assert MustInclude(["CAFÉ"]).judge("un café noir") == (1.0, [])
    assert MustInclude(["喜欢"]).judge("我 喜欢 minigrad") == (1.0, [])
    assert MustInclude(["🚀"]).judge("launch 🚀 now") == (1.0, [])
    assert MustExclude(["déjà"]).judge("Déjà vu") == (0.0, ['Remove the word "déjà".'])
    assert WordCount(max_words=2).judge("Ça va très bien") == (
        0.5,
        ["Shorten the text to at most 2 words (it has 4)."],
    )
    assert Regex("^Ça").judge("Ça va") == (1.0, [])
    assert language.parse(language.add_word("日本語")) == [Instruction("add", "日本語")]


def test_non_ascii_pipeline():
    rule = Checklist([MustInclude(["café", "🚀"]), MustExclude(["très"])])
    history = optimize(lambda: param("Un très bon CAFÉ"), lambda p: p, rule)
    assert history[-1] == (1.0, "Un bon CAFÉ 🚀")


def test_malformed_feedback_for_the_engine():
    engine = RuleBasedEngine()
    with pytest.raises(TypeError, match="str feedback; got str and int"):
        engine.rewrite("text", 5)
    with pytest.raises(TypeError, match="str text"):
        engine.rewrite(None, 'Add the word "x".')
    with pytest.raises(TypeError, match="a judgement is a str; got NoneType"):
        engine.feedback(None, role="answer")
    with pytest.raises(TypeError, match="constraints must be a list of str"):
        engine.rewrite("text", "", constraints='Keep the word "x".')
    # A line that looks almost like an instruction is a note: listed, not acted on.
    assert engine.rewrite("one two", 'Add the word minigrad\nRemove "two"') == "one two"
    assert engine.last_unhandled == ["Add the word minigrad", 'Remove "two"']


def test_set_default_engine_checks_its_argument():
    for bad in (object(), 5, "rule-based"):
        with pytest.raises(TypeError, match="needs feedback.*and rewrite.*lacks them"):
            set_default_engine(bad)
    assert isinstance(default_engine(), RuleBasedEngine)
    mine = RuleBasedEngine()
    set_default_engine(mine)
    assert default_engine() is mine
    set_default_engine(None)
    assert isinstance(default_engine(), RuleBasedEngine) and default_engine() is not mine


def test_set_default_engine_rejects_a_class():
    with pytest.raises(TypeError):
        set_default_engine(RuleBasedEngine)


def test_a_lone_dash_or_bar_is_not_a_word_for_wordcount_or_the_engine() -> None:
    """WordCount and the rule-based engine's shortening count words the same way: a token
    with no letter or digit ("-", "|", "--") is no word, a hyphenated word is one."""
    assert language.words_of("fast - cheap | well-known -- it's") == [
        "fast",
        "cheap",
        "well-known",
        "it's",
    ]
    score, lines = WordCount(max_words=2).judge("fast - cheap")
    assert (score, lines) == (1.0, [])

"""The RuleBasedEngine's rewrites of prose read as sentences (minigrad.text.prose).

Before, TGD could reach a perfect checklist score with text such as "kettle is and it is
durable cheap": single words deleted and appended. Now a text written as sentences is
edited clause by clause. Each example below runs the TGD loop a student writes (lesson
07) and checks the exact texts it produces, that each one reads as a sentence, and that
the checklist is fully met.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from minigrad import Variable
from minigrad.text import (
    TGD,
    Checklist,
    MustExclude,
    MustInclude,
    Regex,
    RuleBasedEngine,
    WordCount,
    set_default_engine,
)
from minigrad.text import feedback as language


@pytest.fixture(autouse=True)
def _restore_default_engine():
    """Every test starts and ends with the built-in engine."""
    set_default_engine(None)
    yield
    set_default_engine(None)


# Words that need a word after them: none may end a clause.
DANGLING = {
    "and", "or", "but", "so", "is", "are", "was", "were", "be", "it", "a", "an", "the",
    "of", "for", "in", "on", "with", "to", "that", "very", "really", "also", "not",
}  # fmt: skip


def problems_with(text: str) -> list[str]:
    """What keeps `text` from reading as sentences; an empty list when it does."""
    problems = []
    if not text[:1].isupper():
        problems.append("it does not start with a capital letter")
    if not text.endswith("."):
        problems.append("it does not end with a period")
    for clause in re.split(r"[,;:.!?]", text):
        words = clause.split()
        if words and words[-1].lower() in DANGLING:
            problems.append(f"the clause {clause.strip()!r} ends on {words[-1]!r}")
    words = [word.lower() for word in language.words_of(text)]
    for first, second in zip(words, words[1:]):
        if first == second:
            problems.append(f"the word {first!r} is doubled")
    return problems


def optimize(start: str, rule: Checklist, steps: int = 5, momentum: int = 0) -> list[str]:
    """The TGD loop of lesson 07; returns the text at each evaluation, the start first."""
    text = Variable(start, role="text", requires_grad=True)
    optimizer = TGD([text], momentum=momentum)
    texts = [text.data]
    for _ in range(steps):
        optimizer.zero_grad()
        score, explanation = rule(text)
        if score.item() == 1.0:
            break
        explanation.backward()
        optimizer.step()
        texts.append(text.data)
    return texts


def checklist(include: list[str], exclude: list[str], max_words: int, *, period: bool = False):
    rules = [MustInclude(include), MustExclude(exclude), WordCount(max_words=max_words)]
    return Checklist(rules + ([Regex(r"\.$")] if period else []))


# (id, start, include, exclude, at most, ask for a final period, the texts TGD writes)
EXAMPLES = [
    (
        # The text of issue 12: before, TGD ended at "kettle is and it is durable cheap".
        "kettle",
        "The kettle is good and it is also very good for tea.",
        ["durable", "cheap"],
        ["good"],
        9,
        False,
        # The clause "and it is also very good for tea" goes whole; in the main clause
        # the words to add take the place of "good".
        ["The kettle is durable and cheap."],
    ),
    (
        "mug",
        "This cheap mug keeps your coffee hot for hours, and it looks great on any desk.",
        ["ceramic", "handmade"],
        ["cheap"],
        10,
        False,
        # Shortened by whole units: the clause ", and it looks ...", then "for hours".
        ["This ceramic and handmade mug keeps your coffee hot."],
    ),
    (
        "lamp",
        "Our desk lamp is really bright. It is made of cheap plastic, but it lasts for "
        "years. Order one today!",
        ["brass"],
        ["plastic", "cheap"],
        10,
        False,
        # "plastic" gives its place to "brass", "cheap" goes; the modifier "really", the
        # clause ", but it lasts for years" and the last sentence make room.
        ["Our desk lamp is bright. It is made of brass."],
    ),
    (
        # No final period yet, but one is asked for: the text is edited as a sentence.
        "bottle",
        "A light plastic bottle that keeps water cold all day on every hike",
        ["steel"],
        ["plastic"],
        8,
        True,
        # "on every hike" goes whole; the phrase "that keeps water cold all day" loses
        # its end.
        ["A light steel bottle that keeps water cold."],
    ),
    (
        "assistant-prompt",
        "You are a helpful assistant and you answer in long paragraphs.",
        ["concise"],
        ["long"],
        8,
        False,
        # The clause with "long" goes; "concise" joins the clause with "are" by "and".
        ["You are a helpful assistant and concise."],
    ),
    (
        "tutor-prompt",
        "You are a friendly tutor who always writes very long answers, and you never give "
        "examples.",
        ["short"],
        ["long", "never"],
        10,
        False,
        # "very long" is replaced as a whole; the clause with "never" goes.
        ["You are a friendly tutor who always writes short answers."],
    ),
]


@pytest.mark.parametrize(
    ("start", "include", "exclude", "max_words", "period", "expected"),
    [case[1:] for case in EXAMPLES],
    ids=[case[0] for case in EXAMPLES],
)
def test_tgd_rewrites_read_as_sentences(
    start: str,
    include: list[str],
    exclude: list[str],
    max_words: int,
    period: bool,
    expected: list[str],
):
    rule = checklist(include, exclude, max_words, period=period)
    texts = optimize(start, rule)
    assert texts == [start, *expected]
    assert rule.judge(start)[0] < 1.0
    final = texts[-1]
    assert rule.judge(final)[0] == 1.0
    for text in texts[1:]:
        assert problems_with(text) == [], text
    assert all(language.contains_word(final, word) for word in include)
    assert not any(language.contains_word(final, word) for word in exclude)
    assert len(language.words_of(final)) <= max_words


def test_every_text_on_a_longer_run_is_a_sentence():
    """Lesson 07's worked example: plain TGD goes back and forth, momentum settles it;
    every text written on the way is a sentence."""
    rule = checklist(["ceramic", "handmade"], ["cheap"], 10, period=True)
    start = "A cheap mug that keeps your coffee hot all day in glazed ceramic"
    plain = optimize(start, rule)
    assert plain == [
        start,
        "A handmade mug that keeps your coffee hot all day.",
        "A handmade mug that keeps your coffee hot all day, ceramic.",
        "A handmade mug that keeps your coffee hot all day.",
        "A handmade mug that keeps your coffee hot all day, ceramic.",
        "A handmade mug that keeps your coffee hot all day.",
    ]
    with_momentum = optimize(start, rule, momentum=1)
    assert with_momentum == [
        start,
        "A handmade mug that keeps your coffee hot all day.",
        "A handmade mug that keeps your coffee hot, ceramic.",
    ]
    assert rule.judge(with_momentum[-1])[0] == 1.0
    for text in plain[1:] + with_momentum[1:]:
        assert problems_with(text) == [], text


def test_the_examples_are_the_same_in_another_process():
    """No randomness and no dependence on the hash seed: another interpreter agrees."""
    cases = [
        (start, include, exclude, limit) for _, start, include, exclude, limit, _, _ in EXAMPLES
    ]
    feedback = [
        "\n".join(
            [language.add_word(w) for w in include]
            + [language.remove_word(w) for w in exclude]
            + [language.at_most_words(limit, len(language.words_of(start)))]
        )
        for start, include, exclude, limit in cases
    ]
    pairs = [(start, advice) for (start, *_), advice in zip(cases, feedback)]
    here = [RuleBasedEngine().rewrite(start, advice) for start, advice in pairs]
    script = (
        "import json, sys\n"
        "from minigrad.text.rule_based import RuleBasedEngine\n"
        "pairs = json.loads(sys.stdin.read())\n"
        "print(json.dumps([RuleBasedEngine().rewrite(t, f) for t, f in pairs]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "4321"},
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == here


# --------------------------------------------------------------------------- one rule each

REMOVE, ADD, AT_MOST = language.remove_word, language.add_word, language.at_most_words

# (id, text, feedback lines, constraints, expected rewrite)
RULES = [
    (
        "a-clause-with-the-word-goes-whole",
        "The kettle boils fast and it is very good for tea.",
        [REMOVE("good")],
        [],
        "The kettle boils fast.",
    ),
    (
        "the-word-goes-with-its-modifiers",
        "This very cheap kettle boils fast.",
        [REMOVE("cheap")],
        [],
        "This kettle boils fast.",
    ),
    (
        "words-to-add-take-its-place",
        "This cheap kettle boils fast.",
        [REMOVE("cheap"), ADD("steel")],
        [],
        "This steel kettle boils fast.",
    ),
    (
        "in-its-place-they-join-a-list",
        "A cheap and light kettle.",
        [REMOVE("cheap"), ADD("steel"), ADD("durable")],
        [],
        "A steel, durable and light kettle.",
    ),
    (
        "no-and-is-left-behind",
        "A light and cheap kettle.",
        [REMOVE("cheap")],
        [],
        "A light kettle.",
    ),
    (
        "a-list-loses-only-the-item",
        "It boils water, fast and cheap.",
        [REMOVE("cheap")],
        [],
        "It boils water, fast.",
    ),
    (
        "a-clause-left-with-nothing-to-say-goes",
        "It is good.",
        [REMOVE("good")],
        [],
        "",
    ),
    (
        "words-to-add-make-a-list-at-the-end",
        "This kettle boils water fast.",
        [ADD("steel"), ADD("durable")],
        [],
        "This kettle boils water fast, steel and durable.",
    ),
    (
        "one-word-joins-a-clause-with-is-by-and",
        "You are a helpful assistant.",
        [ADD("concise")],
        [],
        "You are a helpful assistant and concise.",
    ),
    (
        "a-list-at-the-end-is-extended",
        "The kettle is durable and cheap.",
        [ADD("light")],
        [],
        "The kettle is durable, cheap and light.",
    ),
    (
        "asked-for-a-period-it-is-a-sentence",
        "the kettle boils fast",
        [language.match_pattern(r"\.$")],
        [],
        "The kettle boils fast.",
    ),
    (
        "a-prefix-keeps-the-case-of-what-follows",
        "the kettle boils fast.",
        [language.match_pattern("^Meet")],
        [],
        "Meet the kettle boils fast.",
    ),
    (
        "shortening-drops-modifiers-first",
        "The kettle is really very fast.",
        [AT_MOST(4, 6)],
        [],
        "The kettle is fast.",
    ),
    (
        "then-clauses",
        "The kettle boils water fast, and it looks good on any stove.",
        [AT_MOST(6, 12)],
        [],
        "The kettle boils water fast.",
    ),
    (
        "then-sentences",
        "The kettle boils fast. It looks good. It is light.",
        [AT_MOST(6, 10)],
        [],
        "The kettle boils fast.",
    ),
    (
        "then-phrases-the-last-first",
        "The kettle boils water in two minutes on any stove.",
        [AT_MOST(7, 10)],
        [],
        "The kettle boils water in two minutes.",
    ),
    (
        "a-relative-phrase-may-lose-its-end",
        "A light bottle that keeps water cold all day.",
        [AT_MOST(7, 9)],
        [],
        "A light bottle that keeps water cold.",
    ),
    (
        "then-list-items-not-kept",
        "We sell a brief, polite and detailed guide.",
        [AT_MOST(7, 8)],
        ['Keep the word "brief".'],
        "We sell a brief and polite guide.",
    ),
    (
        "then-a-main-clause-not-kept",
        "The kettle boils fast, and it is made of steel.",
        [AT_MOST(6, 10)],
        ['Keep the word "steel".'],
        "It is made of steel.",
    ),
    (
        "lengthening-adds-a-list",
        "A mug.",
        [language.at_least_words(5, 2)],
        [],
        "A mug, simple and clear.",
    ),
]


@pytest.mark.parametrize(
    ("text", "lines", "constraints", "expected"),
    [case[1:] for case in RULES],
    ids=[case[0] for case in RULES],
)
def test_each_rewrite_rule(text: str, lines: list[str], constraints: list[str], expected: str):
    engine = RuleBasedEngine()
    assert engine.rewrite(text, "\n".join(lines), constraints=constraints) == expected
    assert engine.last_unhandled == []


def test_untouched_prose_comes_back_as_it_was():
    engine = RuleBasedEngine()
    assert engine.rewrite("it boils.\nIt pours.", "Be friendlier.") == "it boils.\nIt pours."
    assert engine.rewrite("It boils fast.", ADD("boils")) == "It boils fast."


def test_text_that_is_not_prose_is_edited_word_by_word():
    """A title or a keyword list has no sentence to keep: no capital or period is added."""
    engine = RuleBasedEngine()
    feedback = "\n".join([REMOVE("cheap"), language.match_pattern("^Handmade")])
    assert engine.rewrite("Cheap Mug", feedback) == "Handmade Mug"
    assert engine.rewrite("fast kettle", ADD("minigrad")) == "fast kettle minigrad"

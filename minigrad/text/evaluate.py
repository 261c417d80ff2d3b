"""Evaluators: rules that judge a text, and Evaluate, the Function that applies one.

`score, explanation = MustInclude(["minigrad"])(answer)` records an EvaluateBackward node.
The score (between 0 and 1) is a number and carries no gradient. The explanation is a text
Variable; `explanation.backward()` starts from the explanation itself, and Evaluate's
backward has a feedback engine turn it into feedback for the judged text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.text import feedback
from minigrad.text.feedback_engine import FeedbackEngine, check_engine, default_engine
from minigrad.text.template import text_of


class Rule:
    """What an evaluator checks. `judge(text)` returns (score in [0, 1], instruction lines)."""

    def judge(self, text: str) -> tuple[float, list[str]]:
        raise NotImplementedError(f"{type(self).__name__} must implement judge(text).")

    def __call__(
        self, text: Variable | str, engine: FeedbackEngine | None = None
    ) -> tuple[Variable, Variable]:
        """Judge `text`: returns (score, explanation) Variables."""
        check_engine(engine)
        return Evaluate.apply(text, self, engine)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._settings()})"

    def _settings(self) -> str:
        return ""


class ExactMatch(Rule):
    """Score 1 when the text equals `expected` exactly, else 0."""

    def __init__(self, expected: str) -> None:
        self.expected = _text_argument(expected, "ExactMatch", "expected")

    def judge(self, text: str) -> tuple[float, list[str]]:
        if text == self.expected:
            return 1.0, []
        return 0.0, [feedback.replace_with(self.expected)]

    def _settings(self) -> str:
        return repr(self.expected)


class MustInclude(Rule):
    """Score: the share of `words` the text contains (whole words, any case)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = _word_list(words, "MustInclude")

    def judge(self, text: str) -> tuple[float, list[str]]:
        missing = [w for w in self.words if not feedback.contains_word(text, w)]
        return 1 - len(missing) / len(self.words), [feedback.add_word(w) for w in missing]

    def _settings(self) -> str:
        return repr(self.words)


class MustExclude(Rule):
    """Score: the share of `words` the text avoids."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = _word_list(words, "MustExclude")

    def judge(self, text: str) -> tuple[float, list[str]]:
        present = [w for w in self.words if feedback.contains_word(text, w)]
        return 1 - len(present) / len(self.words), [feedback.remove_word(w) for w in present]

    def _settings(self) -> str:
        return repr(self.words)


class WordCount(Rule):
    """Score 1 inside [min_words, max_words]; outside, bound / count (or count / bound)."""

    def __init__(self, min_words: int | None = None, max_words: int | None = None) -> None:
        for label, value in (("min_words", min_words), ("max_words", max_words)):
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"WordCount: {label} must be an int >= 0 or None; got {value!r}.")
        if min_words is None and max_words is None:
            raise ValueError("WordCount needs min_words, max_words or both.")
        if min_words is not None and max_words is not None and min_words > max_words:
            raise ValueError(f"WordCount: min_words {min_words} > max_words {max_words}.")
        self.min_words, self.max_words = min_words, max_words

    def judge(self, text: str) -> tuple[float, list[str]]:
        count = len(feedback.words_of(text))
        if self.max_words is not None and count > self.max_words:
            return self.max_words / count, [feedback.at_most_words(self.max_words, count)]
        if self.min_words is not None and count < self.min_words:
            return count / self.min_words, [feedback.at_least_words(self.min_words, count)]
        return 1.0, []

    def _settings(self) -> str:
        return f"min_words={self.min_words}, max_words={self.max_words}"


class Regex(Rule):
    """Score 1 when the regular expression `pattern` is found in the text, else 0."""

    def __init__(self, pattern: str) -> None:
        pattern = _text_argument(pattern, "Regex", "pattern")
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(
                f"Regex: {pattern!r} is not a valid regular expression: {error}."
            ) from None
        self.pattern = pattern

    def judge(self, text: str) -> tuple[float, list[str]]:
        if re.search(self.pattern, text):
            return 1.0, []
        return 0.0, [feedback.match_pattern(self.pattern)]

    def _settings(self) -> str:
        return repr(self.pattern)


class Checklist(Rule):
    """Several rules at once: the mean of their scores and all of their instructions."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        rules = list(rules) if isinstance(rules, (list, tuple)) else rules
        if not isinstance(rules, list) or not rules or not all(isinstance(r, Rule) for r in rules):
            got = [type(r).__name__ for r in rules] if isinstance(rules, list) else rules
            raise TypeError(
                "Checklist expects a non-empty list of rules, e.g. "
                f"[MustInclude(['minigrad']), WordCount(max_words=5)]; got {got!r}."
            )
        self.rules = rules

    def judge(self, text: str) -> tuple[float, list[str]]:
        scores, lines = [], []
        for rule in self.rules:
            score, rule_lines = rule.judge(text)
            scores.append(score)
            lines.extend(rule_lines)
        return sum(scores) / len(scores), lines

    def _settings(self) -> str:
        return ", ".join(repr(rule) for rule in self.rules)


class Evaluate(Function):
    """(score, explanation) = rule applied to x. Backward: feedback for x from the explanation."""

    # engine.backward() may start from an explanation with no feedback given: the
    # explanation is its own feedback (see _seed_gradients in core/engine.py).
    explains = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, rule: Rule, engine: FeedbackEngine | None) -> tuple:
        if not isinstance(rule, Rule):
            raise TypeError(f"Evaluate expects a Rule (e.g. MustInclude([...])); got {rule!r}.")
        text = text_of(x, type(rule).__name__, "its input")
        score, lines = rule.judge(text)
        summary = f"{type(rule).__name__}: score {score:.2f}."
        explanation = "\n".join([summary, *lines]) if lines else f"{summary} Nothing to change."
        ctx.role = x.role if isinstance(x, Variable) and x.role else "text"
        ctx.engine = engine
        score_variable = Variable(np.asarray(float(score)))
        ctx.mark_non_differentiable(score_variable)
        return score_variable, Variable(explanation, role=f"evaluation of {ctx.role}")

    @staticmethod
    def backward(ctx: FunctionCtx, grad_score: Any, judgement: Variable) -> tuple:
        if not ctx.needs_input_grad[0] or judgement is None:
            return None, None, None
        engine = ctx.engine if ctx.engine is not None else default_engine()
        advice = engine.feedback(judgement.data, role=ctx.role)
        return Variable(advice, role=f"feedback to {ctx.role}"), None, None


def _text_argument(value: Any, who: str, label: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{who}: {label} must be a str; got {type(value).__name__}.")
    return value


def _word_list(words: Any, who: str) -> list[str]:
    if isinstance(words, str):
        raise TypeError(f'{who} expects a list of words, e.g. ["minigrad"]; got the str {words!r}.')
    words = list(words) if isinstance(words, (list, tuple)) else None
    if not words or not all(isinstance(w, str) and w.strip() for w in words):
        raise ValueError(f"{who} expects a non-empty list of non-empty words.")
    return [w.strip() for w in words]

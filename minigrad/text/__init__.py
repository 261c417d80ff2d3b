"""Textual autodiff: Functions on text Variables whose gradients are feedback texts."""

from minigrad.text import feedback, kind
from minigrad.text.concat import Concat, Slice
from minigrad.text.evaluate import (
    Checklist,
    Evaluate,
    ExactMatch,
    MustExclude,
    MustInclude,
    Regex,
    Rule,
    WordCount,
)
from minigrad.text.feedback_engine import FeedbackEngine, default_engine, set_default_engine
from minigrad.text.openai_compatible import OpenAICompatibleEngine
from minigrad.text.rule_based import RuleBasedEngine
from minigrad.text.template import Format, Join, Split, format, join, split  # noqa: A004
from minigrad.text.tgd import TGD

__all__ = [
    "TGD",
    "Checklist",
    "Concat",
    "Evaluate",
    "ExactMatch",
    "FeedbackEngine",
    "Format",
    "Join",
    "MustExclude",
    "MustInclude",
    "OpenAICompatibleEngine",
    "Regex",
    "Rule",
    "RuleBasedEngine",
    "Slice",
    "Split",
    "WordCount",
    "default_engine",
    "feedback",
    "format",
    "join",
    "kind",
    "set_default_engine",
    "split",
]

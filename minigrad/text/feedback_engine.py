"""What a feedback engine does, and which one is used when none is given.

In textual autodiff a language model plays two parts. In backward it turns a judgement
("the answer lacks the word X") into feedback for one input. In the optimizer step it
rewrites a text given its feedback and some constraints. Any object with these two
methods is an engine; minigrad's default, RuleBasedEngine, does both offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class FeedbackEngine(Protocol):
    """The two things a model does in textual autodiff."""

    def feedback(self, judgement: str, *, role: str) -> str:
        """Backward: feedback for the input whose role is `role`, from a judgement of it."""
        ...

    def rewrite(self, text: str, feedback: str, *, role: str, constraints: Sequence[str]) -> str:
        """Optimizer step: `text` changed as `feedback` asks, keeping to `constraints`."""
        ...


_default: FeedbackEngine | None = None


def default_engine() -> FeedbackEngine:
    """The engine used when none is given: RuleBasedEngine unless set_default_engine changed it."""
    global _default
    if _default is None:
        from minigrad.text.rule_based import RuleBasedEngine  # here: it imports this module

        _default = RuleBasedEngine()
    return _default


def set_default_engine(engine: FeedbackEngine | None) -> None:
    """Use `engine` wherever none is given (None restores RuleBasedEngine)."""
    global _default
    check_engine(engine)
    _default = engine


def check_engine(engine: object) -> None:
    """A TypeError unless `engine` is None or an engine object (an instance, not a class)."""
    if isinstance(engine, type):
        raise TypeError(f"pass an engine object, not the class: {engine.__name__}().")
    if engine is not None and not isinstance(engine, FeedbackEngine):
        raise TypeError(
            f"an engine needs feedback(judgement, *, role) and rewrite(text, feedback, *, "
            f"role, constraints) methods; {type(engine).__name__} lacks them."
        )

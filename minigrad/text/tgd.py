"""TGD, textual gradient descent: rewrite each text parameter as its feedback asks.

The numeric step p ← p - lr·∇p becomes: p ← engine.rewrite(p, feedback on p). With
momentum k the engine also sees the feedback of the last k steps, so advice that was
followed once is not undone the step after.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from minigrad.core.checks import check_iterable
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.text.feedback_engine import FeedbackEngine, check_engine, default_engine


class TGD:
    """step(): rewrite every text parameter from its `.grad` (its feedback); zero_grad()."""

    def __init__(
        self,
        parameters: Iterable[Variable],
        engine: FeedbackEngine | None = None,
        constraints: Sequence[str] = (),
        momentum: int = 0,
    ) -> None:
        if isinstance(parameters, Variable):
            raise TypeError("TGD expects a list of text Variables; wrap a single one: [prompt].")
        self.parameters = check_iterable(
            parameters, "parameters", "TGD", "text Variables, e.g. TGD([prompt])"
        )
        if not self.parameters:
            raise ValueError("TGD got no parameters; pass the text Variables to optimize.")
        for index, param in enumerate(self.parameters):
            if not isinstance(param, Variable) or not param.is_text or not param.requires_grad:
                raise ValueError(
                    f"TGD parameter {index} must be a text Variable with requires_grad=True; "
                    f"got {param!r}."
                )
        constraints = check_iterable(
            constraints, "constraints", "TGD", "str, e.g. ['Keep the word \"x\".']"
        )
        if not all(isinstance(c, str) for c in constraints):
            raise TypeError(
                f"constraints must be a list of str, e.g. ['Keep the word \"x\".']; got "
                f"{constraints!r}."
            )
        if not isinstance(momentum, int) or isinstance(momentum, bool) or momentum < 0:
            raise ValueError(f"momentum is a number of past steps, an int >= 0; got {momentum!r}.")
        check_engine(engine)
        self.engine = engine
        self.constraints = list(constraints)
        self.momentum = momentum
        self.history: list[list[str]] = [[] for _ in self.parameters]

    def step(self) -> None:
        engine = self.engine if self.engine is not None else default_engine()
        with no_grad():
            for index, param in enumerate(self.parameters):
                if param.grad is None or not param.grad.data.strip():
                    continue  # no feedback: nothing to change
                current = param.grad.data
                past = self.history[index][-self.momentum :] if self.momentum else []
                advice = "\n".join([*past, current])
                new_text = engine.rewrite(
                    param.data, advice, role=param.role or "text", constraints=self.constraints
                )
                if not isinstance(new_text, str):
                    raise TypeError(
                        f"{type(engine).__name__}.rewrite returned {type(new_text).__name__}; "
                        f"an engine must return the new text as a str."
                    )
                self.history[index].append(current)
                # A str cannot change in place: the parameter gets the new text, and its
                # version moves on so any graph that saved the old text can tell.
                param.data = new_text
                param._shared_version_counter().value += 1

    def zero_grad(self) -> None:
        """Clear the feedback, so the next backward starts afresh."""
        for param in self.parameters:
            param.grad = None

    def __repr__(self) -> str:
        engine = type(self.engine).__name__ if self.engine is not None else "default engine"
        count = len(self.parameters)
        plural = "" if count == 1 else "s"
        return f"TGD({count} parameter{plural}, {engine}, momentum={self.momentum})"

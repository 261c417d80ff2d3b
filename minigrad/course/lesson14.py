"""Checks for lesson 14 (textual optimization over a dataset).

14.1 `optimize_page`, a TGD loop that rewrites a description inside a page template;
14.2 `minibatch_loss`, the mean score and the per-example explanations of a minibatch,
whose backward sums the feedback on the prompt; 14.3 `fit`, minibatch TGD steps that keep
a step only when the validation score does not get worse. Each check runs the learner's
answer on data of its own and compares with what it computes here; nothing leaves the
machine (the default engine is the offline RuleBasedEngine).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import minigrad
from minigrad.course import check
from minigrad.text.evaluate import Checklist, MustExclude, MustInclude, Regex, Rule, WordCount
from minigrad.text.feedback_engine import default_engine, set_default_engine
from minigrad.text.rule_based import RuleBasedEngine
from minigrad.text.template import format as fill
from minigrad.text.tgd import TGD
from minigrad.variable import Variable

# --------------------------------------------------------------------------- Exercise 14.1

PAGE_TEMPLATE = "{name}: {description}"
PAGE_NAME = "Pocket Lamp"
PAGE_CONSTRAINTS = ('Keep the word "brass".', 'Keep the word "rechargeable".')
PAGE_STARTS = (
    "This small plastic lamp lights your desk for hours in polished brass",
    "Our rechargeable brass lamp lights your desk at work or at home",
    # Within the word limit but without "rechargeable": adding it makes the page too long,
    # which only the next step's feedback says, so this one takes two steps (and shows
    # whether each step starts from fresh feedback).
    "A small brass lamp that lights your desk all night",
)


def page_checklist() -> Rule:
    """The checklist the 14.1 check judges pages with."""
    from minigrad.text.evaluate import Checklist, MustExclude, MustInclude, Regex, WordCount

    return Checklist(
        [
            MustInclude(["brass", "rechargeable"]),
            MustExclude(["plastic"]),
            WordCount(max_words=12),
            Regex(r"\.$"),
        ]
    )


def reference_rows(
    name: str, start: str, checklist: Rule, constraints: Sequence[str], max_steps: int
) -> list[tuple[str, float]]:
    """What optimize_page should return, computed with an engine of its own."""
    description = Variable(start, role="product description", requires_grad=True)
    optimizer = TGD([description], engine=RuleBasedEngine(), constraints=list(constraints))
    rows = []
    for step in range(max_steps + 1):
        optimizer.zero_grad()
        page = fill(PAGE_TEMPLATE, name=name, description=description)
        score, explanation = checklist(page, RuleBasedEngine())
        rows.append((page.data, score.item()))
        if score.item() == 1.0 or step == max_steps:
            break
        explanation.backward()
        optimizer.step()
    return rows


class _Recorder(RuleBasedEngine):
    """The RuleBasedEngine, noting what each rewrite was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str, str, list[str]]] = []

    def rewrite(
        self, text: str, feedback: str, *, role: str = "text", constraints: Sequence[str] = ()
    ) -> str:
        self.calls.append((text, feedback, role, list(constraints)))
        return super().rewrite(text, feedback, role=role, constraints=constraints)


def _run_optimize(
    exercise: str, optimize_page: Callable, start: str, max_steps: int, recorder: _Recorder
) -> Any:
    """optimize_page(...) with `recorder` as the default engine (restored afterwards)."""
    previous = default_engine()
    set_default_engine(recorder)
    try:
        return check.call(
            exercise,
            "optimize_page(name, start, checklist, constraints)",
            optimize_page,
            PAGE_NAME,
            start,
            page_checklist(),
            list(PAGE_CONSTRAINTS),
            max_steps,
            hints=[
                (
                    ValueError,
                    "requires_grad=True",
                    "TGD only rewrites texts that require grad: make the description with "
                    "requires_grad=True.",
                ),
                (
                    RuntimeError,
                    "does not require grad",
                    "the explanation was not recorded: the description must require grad, "
                    "go into format as the Variable itself (description=description, not "
                    "description.data, which is a plain str and gets no feedback), and "
                    "nothing may run under no_grad.",
                ),
            ],
        )
    finally:
        set_default_engine(previous)


def _check_rows_shape(exercise: str, rows: Any) -> list[tuple[str, float]]:
    if not isinstance(rows, list):
        check.fail(
            exercise,
            f"optimize_page returned {check.with_article(rows)}; return the list of rows, "
            f"one (page text, score) tuple per step.",
        )
    if not rows:
        check.fail(exercise, "optimize_page returned an empty list: record the first page too.")
    for index, row in enumerate(rows):
        if not isinstance(row, tuple) or len(row) != 2:
            check.fail(
                exercise,
                f"row {index} is {row!r}; each row is a tuple (page text, score).",
            )
        page, score = row
        if isinstance(page, Variable):
            check.fail(
                exercise,
                f"row {index} holds the page as a Variable; store its text, page.data.",
            )
        if isinstance(score, Variable):
            check.fail(
                exercise,
                f"row {index} holds the score as a Variable; store the number, score.item().",
            )
        if not isinstance(page, str) or not isinstance(score, (int, float)):
            check.fail(exercise, f"row {index} is {row!r}; each row is (page text, score).")
    return rows


def _check_fresh_feedback(exercise: str, recorder: _Recorder, *, same_rows: bool) -> None:
    """Each rewrite saw one step's feedback: feedbacks joined by a blank line mean that
    .grad kept accumulating because zero_grad was not called."""
    if not any("\n\n" in call[1] for call in recorder.calls):
        return
    message = (
        "the engine was asked to apply feedback from earlier steps as well (feedbacks "
        "joined by a blank line): call optimizer.zero_grad() every step, so each step "
        "starts from fresh feedback."
    )
    if same_rows:
        message += (
            " Your pages came out right anyway, because the RuleBasedEngine applies only "
            "the newest word limit and skips advice already followed; a language model "
            "would act on the stale advice again."
        )
    check.fail(exercise, message)


def _diagnose_rows(
    exercise: str, rows: list, expected: list, recorder: _Recorder, max_steps: int
) -> None:
    """The likely mistake behind rows that differ from the reference."""
    if rows[0][0] != expected[0][0]:
        check.fail(
            exercise,
            f"the first row's page is {rows[0][0]!r}, expected {expected[0][0]!r}: the first "
            f"row is the starting page, filled from the template {PAGE_TEMPLATE!r} before any "
            f"step.",
        )
    _check_fresh_feedback(exercise, recorder, same_rows=False)
    if recorder.calls and any(not call[3] for call in recorder.calls):
        check.fail(
            exercise,
            "TGD rewrote the description without the constraints: pass them, "
            "TGD([description], constraints=constraints).",
        )
    pages = {page for page, _ in rows}
    if len(rows) > 1 and len(pages) == 1:
        if recorder.calls:
            check.fail(
                exercise,
                "TGD rewrote the description, but every row shows the same page: fill the "
                "template inside the loop, so each step judges the current description.",
            )
        check.fail(
            exercise,
            "the page never changed, because TGD's step found no feedback: call "
            "explanation.backward() before optimizer.step(), and optimizer.zero_grad() "
            "before backward, not between backward and step.",
        )
    reached = [index for index, (_, score) in enumerate(rows) if score == 1.0]
    if reached and reached[0] < len(rows) - 1:
        check.fail(
            exercise,
            f"the score reached 1.0 at row {reached[0]}, but the loop went on to "
            f"{len(rows)} rows: stop as soon as the score is 1.0.",
        )
    if len(rows) > max_steps + 1:
        check.fail(
            exercise,
            f"{len(rows)} rows for max_steps={max_steps}: at most max_steps steps, so at "
            f"most max_steps + 1 rows (the start and one per step).",
        )
    for index, (row, wanted) in enumerate(zip(rows, expected)):
        if row[0] != wanted[0] or not math.isclose(row[1], wanted[1]):
            check.fail(
                exercise,
                f"row {index} is {row!r}, expected {wanted!r}.",
            )
    check.fail(exercise, f"optimize_page returned {len(rows)} rows, expected {len(expected)}.")


def check_14_1(optimize_page: Callable) -> None:
    """optimize_page(name, start, checklist, constraints, max_steps): the rows of a TGD loop."""
    exercise = "14.1"
    if not callable(optimize_page):
        check.fail(
            exercise,
            f"optimize_page should be a function; got {check.with_article(optimize_page)}.",
        )
    for start in PAGE_STARTS:
        for max_steps in (8, 1):
            expected = reference_rows(
                PAGE_NAME, start, page_checklist(), PAGE_CONSTRAINTS, max_steps
            )
            recorder = _Recorder()
            rows = _run_optimize(exercise, optimize_page, start, max_steps, recorder)
            rows = _check_rows_shape(exercise, rows)
            same = len(rows) == len(expected) and all(
                row[0] == wanted[0] and math.isclose(row[1], wanted[1])
                for row, wanted in zip(rows, expected)
            )
            if not same:
                _diagnose_rows(exercise, rows, expected, recorder, max_steps)
            _check_fresh_feedback(exercise, recorder, same_rows=True)
    check.passed(exercise)


# --------------------------------------------------------------------------- the data of 14.2, 14.3

ITEMS = (
    "Felt laptop sleeve",
    "Maple spice rack",
    "Clay plant pot",
    "Silk sleep mask",
    "Pine bird feeder",
    "Steel lunch box",
    "Jute door mat",
    "Cork yoga block",
)
EXTRAS = ("", " in three sizes", " for small spaces", " with a soft lining")
NEEDS = (("shipping", 0.7), ("warranty", 0.4), ("vegan", 0.25), ("local", 0.25), ("refill", 0.15))
PROMPT_START = "Cheap deals on sale items, order today and we ship to your door"
PROMPT_ROLE = "store note"


def make_examples(count: int, seed: int) -> list[dict]:
    """Examples like the lesson's, with keys of their own: item, needs, bans, limit."""
    rng = random.Random(seed)
    examples = []
    for _ in range(count):
        item = rng.choice(ITEMS) + rng.choice(EXTRAS)
        needs = [word for word, share in NEEDS if rng.random() < share] or ["shipping"]
        bans = ["cheap"] + (["sale"] if rng.random() < 0.5 else [])
        room = rng.choice([3, 4, 5])
        examples.append(
            {"item": item, "needs": needs, "bans": bans, "limit": len(item.split()) + room}
        )
    return examples


def model(prompt: Variable, example: dict) -> Variable:
    """The check's model: the item, a dash, then the prompt."""
    return fill("{item} - {note}", item=example["item"], note=prompt)


def checklist_for(example: dict) -> Rule:
    """The check's per-example checklist."""
    return Checklist(
        [
            MustInclude(example["needs"]),
            MustExclude(example["bans"]),
            WordCount(max_words=example["limit"]),
            Regex(r"\.$"),
        ]
    )


def reference_loss(prompt: Variable, batch: Sequence[dict], model_fn=model, judge=checklist_for):
    """(mean score, explanations): what minibatch_loss should return."""
    scores, explanations = [], []
    for example in batch:
        score, explanation = judge(example)(model_fn(prompt, example))
        scores.append(score.item())
        explanations.append(explanation)
    return sum(scores) / len(scores), explanations


def validation_score(prompt: Variable, examples: Sequence[dict]) -> float:
    """The mean checklist score over `examples`, recording nothing."""
    with minigrad.no_grad():
        scores = [
            checklist_for(ex)(model(prompt, ex), RuleBasedEngine())[0].item() for ex in examples
        ]
    return sum(scores) / len(scores)


# --------------------------------------------------------------------------- Exercise 14.2

LOSS_SEED = 2
LOSS_BATCH_SIZES = (3, 2)


def _loss_hints() -> list[check.HintRule]:
    return [
        (
            (KeyError, TypeError),
            "",
            "build each output with the model you are given, model(prompt, example), and "
            "judge it with checklist_for(example): the check's examples are not the lesson's.",
        ),
    ]


def _feedback_pieces(text: str | None) -> list[str]:
    """The per-example feedbacks a .grad holds, in a canonical order."""
    if text is None:
        return []
    return sorted(piece for piece in text.split("\n\n") if piece.strip())


def _explanation_list(exercise: str, explanations: Any, batch: list, first_text: str) -> list:
    """The explanations as a list of recorded text Variables, or the mistake named."""
    size = len(batch)
    if isinstance(explanations, Variable):
        if explanations.grad_fn is None:
            check.fail(
                exercise,
                "you returned one new Variable made from texts: it has no graph back to the "
                "prompt, so backward cannot reach it. Return the list of explanation "
                "Variables, one per example.",
            )
        name = explanations.grad_fn.name()
        if name == "EvaluateBackward" and explanations.data == first_text:
            hint = "it is the first example's alone: judge every example of the minibatch."
        elif name == "EvaluateBackward":
            hint = (
                "you judged the minibatch as one text. Each example has its own checklist "
                "(its own words and its own word limit): judge each output separately."
            )
        else:
            hint = (
                "texts do not add up like numbers: `+` and join glue the explanations into "
                "one text, and its backward would need feedback of its own. Return the list "
                "of explanations; minigrad.backward(explanations) then sums their feedback "
                "on the prompt."
            )
        check.fail(
            exercise,
            f"minibatch_loss returned one explanation for a minibatch of {size}: {hint}",
        )
    if not isinstance(explanations, (list, tuple)):
        check.fail(
            exercise,
            f"the explanations should be a list of text Variables, one per example; got "
            f"{check.with_article(explanations)}.",
        )
    explanations = list(explanations)
    if any(isinstance(item, str) for item in explanations):
        check.fail(
            exercise,
            "the explanations are str: keep the explanation Variables themselves (not "
            "explanation.data), since backward starts from them.",
        )
    if len(explanations) != size:
        if len(explanations) == 1:
            hint = "judge every example of the minibatch, not only one."
        else:
            hint = "one explanation per example: loop over the whole batch."
        check.fail(
            exercise,
            f"{len(explanations)} explanation(s) for a minibatch of {size} examples: {hint}",
        )
    for item in explanations:
        if not isinstance(item, Variable) or not item.is_text:
            check.fail(
                exercise,
                f"each explanation should be a text Variable; got {check.with_article(item)}.",
            )
        if item.grad_fn is None:
            check.fail(
                exercise,
                "an explanation has no grad_fn, so nothing was recorded: pass the prompt "
                "Variable itself to the model (not prompt.data), and do not work under "
                "no_grad.",
            )
    return explanations


def _check_loss_score(exercise: str, score: Any, scores: list[float]) -> None:
    if isinstance(score, Variable):
        check.fail(
            exercise,
            "the score is a Variable; return a plain float, the mean of score.item() over "
            "the examples.",
        )
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        check.fail(exercise, f"the score should be a float; got {check.with_article(score)}.")
    expected = sum(scores) / len(scores)
    if math.isclose(score, expected, rel_tol=1e-9, abs_tol=1e-12):
        return
    if math.isclose(score, sum(scores)):
        hint = "that is the sum; divide by the number of examples, len(batch)."
    elif math.isclose(score, scores[0]):
        hint = "that is the first example's score alone: average over every example."
    else:
        hint = "the minibatch score is the mean of the examples' scores."
    check.fail(
        exercise,
        f"the score of a minibatch of {len(scores)} is {score:.4g}, expected {expected:.4g}: "
        f"{hint}",
    )


def _same_checklist_pieces(batch: Sequence[dict]) -> list[str]:
    """The feedback pieces when every output is judged by the first example's checklist."""
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    judge = checklist_for(batch[0])
    minigrad.backward([judge(model(prompt, example))[1] for example in batch])
    return _feedback_pieces(prompt.grad.data)


def check_14_2(minibatch_loss: Callable) -> None:
    """minibatch_loss(prompt, batch, model, checklist_for) -> (mean score, explanations)."""
    exercise = "14.2"
    if not callable(minibatch_loss):
        check.fail(
            exercise,
            f"minibatch_loss should be a function; got {check.with_article(minibatch_loss)}.",
        )
    examples = make_examples(sum(LOSS_BATCH_SIZES), LOSS_SEED)
    start = 0
    for size in LOSS_BATCH_SIZES:
        batch = examples[start : start + size]
        start += size
        expected_prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
        scores, reference_explanations = [], []
        for example in batch:
            one_score, explanation = checklist_for(example)(model(expected_prompt, example))
            scores.append(one_score.item())
            reference_explanations.append(explanation)
        minigrad.backward(reference_explanations)
        wanted = _feedback_pieces(expected_prompt.grad.data)

        prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
        result = check.call(
            exercise,
            "minibatch_loss(prompt, batch, model, checklist_for)",
            minibatch_loss,
            prompt,
            batch,
            model,
            checklist_for,
            hints=_loss_hints(),
        )
        if not isinstance(result, tuple) or len(result) != 2:
            check.fail(
                exercise,
                f"minibatch_loss returned {check.with_article(result)}; return two things, "
                f"`return score, explanations`.",
            )
        score, explanations = result
        first_text = reference_explanations[0].data
        explanations = _explanation_list(exercise, explanations, batch, first_text)
        try:
            minigrad.backward(explanations)
        except Exception as error:  # noqa: BLE001 - any error becomes a hint
            check.explain_error(exercise, "minigrad.backward(explanations)", error)
        got = _feedback_pieces(None if prompt.grad is None else prompt.grad.data)
        if got == wanted:
            _check_loss_score(exercise, score, scores)
            continue
        if not got:
            check.fail(
                exercise,
                "backward left the prompt without feedback: the outputs must be built from "
                "the prompt Variable you were given.",
            )
        if got == _same_checklist_pieces(batch):
            check.fail(
                exercise,
                "every example was judged with the first example's checklist: judge each "
                "output with its own, checklist_for(example).",
            )
        check.fail(
            exercise,
            f"after minigrad.backward(explanations) the prompt's feedback is "
            f"{prompt.grad.data!r}; expected the feedback of each example, joined: "
            f"{expected_prompt.grad.data!r}.",
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 14.3

FIT_SEED = 5
FIT_BATCH_SIZE = 3


def fit_data() -> tuple[list[list[dict]], list[dict]]:
    """The check's minibatches (12 training examples, 3 a batch) and validation set."""
    examples = make_examples(24, FIT_SEED)
    train, val = examples[:12], examples[12:]
    batches = [train[i : i + FIT_BATCH_SIZE] for i in range(0, len(train), FIT_BATCH_SIZE)]
    return batches, val


def reference_fit(
    batches: Sequence[Sequence[dict]], val: Sequence[dict], mode: str = "validation"
) -> tuple[list[tuple[float, bool]], str]:
    """(rows, final prompt text) of the loop fit should be; `mode` plants a known mistake:
    "keep" never reverts, "train" compares training scores, "stale" beats the last score."""
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    optimizer = TGD([prompt], engine=RuleBasedEngine())
    best = validation_score(prompt, val)
    rows = []
    for batch in batches:
        previous = prompt.data
        optimizer.zero_grad()
        before, explanations = reference_loss(prompt, batch)
        minigrad.backward(explanations)
        optimizer.step()
        score = validation_score(prompt, val)
        if mode == "train":
            with minigrad.no_grad():
                after, _ = reference_loss(prompt, batch)
            worse = after < before
        else:
            worse = mode != "keep" and score < best
        if worse:
            prompt.data = previous
        if not worse or mode == "stale":
            best = score
        rows.append((score, worse))
    return rows, prompt.data


class _SpyTGD(TGD):
    """TGD that notes, at each step, whether its parameter had feedback."""

    def __init__(self, parameters: list[Variable], state: dict) -> None:
        super().__init__(parameters, engine=RuleBasedEngine())
        self.state = state  # state["needs feedback"]: the last minibatch had a rule to fix
        self.zero_grads = 0
        self.steps_without_feedback = 0
        self.steps = 0

    def zero_grad(self) -> None:
        self.zero_grads += 1
        super().zero_grad()

    def step(self) -> None:
        self.steps += 1
        if self.parameters[0].grad is None and self.state.get("needs feedback"):
            self.steps_without_feedback += 1
        super().step()


def _rows_of(exercise: str, rows: Any, count: int) -> list[tuple[float, bool]]:
    if not isinstance(rows, list):
        check.fail(
            exercise,
            f"fit returned {check.with_article(rows)}; return the list of rows, one "
            f"(validation score, reverted) tuple per minibatch.",
        )
    if len(rows) != count:
        check.fail(
            exercise,
            f"fit returned {len(rows)} rows for {count} minibatches: one row per step.",
        )
    for index, row in enumerate(rows):
        if not isinstance(row, tuple) or len(row) != 2:
            check.fail(
                exercise, f"row {index} is {row!r}; each row is (validation score, reverted)."
            )
        score, reverted = row
        if isinstance(score, Variable) or not isinstance(score, (int, float)):
            check.fail(exercise, f"row {index} holds {score!r} as the score; store a float.")
        if not isinstance(reverted, bool):
            check.fail(exercise, f"row {index} holds {reverted!r} as `reverted`; store a bool.")
    return rows


def check_14_3(fit: Callable) -> None:
    """fit(prompt, optimizer, batches, loss_fn, validate): keep a step only if validation
    does not get worse; returns one (validation score, reverted) row per minibatch."""
    exercise = "14.3"
    if not callable(fit):
        check.fail(exercise, f"fit should be a function; got {check.with_article(fit)}.")
    batches, val = fit_data()
    expected_rows, expected_text = reference_fit(batches, val)

    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    state: dict = {}
    optimizer = _SpyTGD([prompt], state)
    loss_calls: list[tuple[Variable, str]] = []
    validations: list[str] = []

    def loss_fn(given: Any, batch: Sequence[dict]) -> tuple[float, list[Variable]]:
        if isinstance(given, Variable):
            loss_calls.append((given, given.data))
        score, explanations = reference_loss(given, batch)
        state["needs feedback"] = score < 1.0
        return score, explanations

    def validate(given: Any) -> float:
        validations.append(given.data if isinstance(given, Variable) else str(given))
        return validation_score(given, val)

    previous_engine = default_engine()
    set_default_engine(RuleBasedEngine())
    try:
        rows = check.call(
            exercise,
            "fit(prompt, optimizer, batches, loss_fn, validate)",
            fit,
            prompt,
            optimizer,
            batches,
            loss_fn,
            validate,
        )
    finally:
        set_default_engine(previous_engine)
    rows = _rows_of(exercise, rows, len(batches))

    if any(given is not prompt for given, _ in loss_calls):
        check.fail(
            exercise,
            "after a revert you went on with a new Variable, but the optimizer still holds "
            "the prompt it was given and rewrites that one. Restore the text of the same "
            "Variable: prompt.data = previous.",
        )
    if optimizer.steps_without_feedback:
        check.fail(
            exercise,
            "optimizer.step() found no feedback on the prompt: call "
            "minigrad.backward(explanations) before the step (and zero_grad before the loss).",
        )
    if optimizer.zero_grads < len(batches):
        check.fail(
            exercise,
            f"optimizer.zero_grad() ran {optimizer.zero_grads} time(s) for {len(batches)} "
            f"steps: call it every step, or feedback from earlier minibatches piles up.",
        )
    if len(loss_calls) > len(batches):
        check.fail(
            exercise,
            "you ran the loss again after the step: that compares scores on the training "
            "minibatch, which the step was made to improve. Decide with validate(prompt), "
            "the validation score.",
        )
    if len(validations) < len(batches):
        check.fail(
            exercise,
            f"validate was called {len(validations)} time(s) for {len(batches)} steps: call "
            f"it after every step, and once before the first, so that each step is compared "
            f"on the validation set.",
        )
    decisions = [reverted for _, reverted in rows]
    expected_decisions = [reverted for _, reverted in expected_rows]
    # The text each step started from, as loss_fn saw it, then the final text.
    seen = [text for _, text in loss_calls] + [prompt.data]
    for index, reverted in enumerate(decisions):
        if reverted and index + 1 < len(seen) and seen[index + 1] != seen[index]:
            check.fail(
                exercise,
                f"row {index} says reverted, but the next step started from "
                f"{seen[index + 1]!r}, not from {seen[index]!r}. Save the text, "
                f"previous = prompt.data (a str), before the step: `previous = prompt` "
                f"keeps the same Variable, which TGD rewrites, so nothing is restored.",
            )
    if decisions != expected_decisions:
        for mode, hint in (
            (
                "stale",
                "after a revert the score to beat is the restored prompt's, not the "
                "rejected one's: update the best score only when you keep a step.",
            ),
        ):
            if decisions == [r for _, r in reference_fit(batches, val, mode)[0]]:
                check.fail(exercise, hint)
        for index, (got, wanted) in enumerate(zip(decisions, expected_decisions)):
            if got == wanted:
                continue
            score, kept = expected_rows[index]
            if wanted:
                check.fail(
                    exercise,
                    f"step {index} made the validation score worse ({score:.3f}, down from "
                    f"the best so far), but you kept it: when validate(prompt) is lower than "
                    f"before the step, put the previous text back, prompt.data = previous.",
                )
            check.fail(
                exercise,
                f"step {index} did not make the validation score worse ({score:.3f}), but "
                f"you reverted it: revert only when the new score is strictly lower than "
                f"the best so far.",
            )
    for index, (row, wanted) in enumerate(zip(rows, expected_rows)):
        if not math.isclose(row[0], wanted[0]):
            check.fail(
                exercise,
                f"row {index} holds the validation score {row[0]:.4g}, expected "
                f"{wanted[0]:.4g}: store validate(prompt) of the text the step produced, "
                f"before any revert.",
            )
    if prompt.data != expected_text:
        check.fail(
            exercise,
            f"after fit the prompt holds {prompt.data!r}, expected {expected_text!r}: it "
            f"should end with the last text that was kept.",
        )
    check.passed(exercise)

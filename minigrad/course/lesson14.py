"""Checks for lesson 14 (textual optimization over a dataset), and the references the lesson
runs after an exercise.

14.1 `predicted`: the lines of feedback that each part of a page receives through
`format`'s backward (lesson 07's textual Jacobian), predicted before a cell shows them;
14.2 `train`: a training loop with two bugs, fixed (the validation set's feedback leaked
into the update, and without `zero_grad` feedback piled up across steps); 14.3 `fit`: keep
a step only when the validation score does not get worse, and keep it on a tie. The checks
run the answers on data of their own (a batch of one, a minibatch with nothing to fix, ties
in validation) with the offline RuleBasedEngine; nothing leaves the machine.

`reference_step`, `reference_train` and `reference_fit` are the answers of 14.2 and 14.3,
no more: the lesson's cells after an exercise use them, never the learner's code.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from minigrad.core.engine import backward
from minigrad.core.errors import NoGradFnError
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.course import check
from minigrad.text import feedback as language
from minigrad.text.evaluate import Checklist, MustExclude, MustInclude, Regex, WordCount
from minigrad.text.feedback_engine import default_engine, set_default_engine
from minigrad.text.rule_based import RuleBasedEngine
from minigrad.text.template import format as fill
from minigrad.text.tgd import TGD

# The longest piece of a learner's text or of a feedback that a message quotes.
QUOTE = 60


def _clip(text: Any, limit: int = QUOTE) -> str:
    """`text` in quotes for a message, cut to `limit` characters with "..." when longer."""
    text = str(text).replace("\n", " / ")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


# --------------------------------------------------------------------------- Exercise 14.1

# The page of Exercise 14.1, as lesson 14 builds it: a trainable title and description,
# and the shop's name, a plain str, between them.
PAGE_TEMPLATE = "{title} by {shop}: {description}"
PAGE_TITLE = "Cheap Mug"
PAGE_SHOP = "Clay & Co"
PAGE_DESCRIPTION = "Keeps your coffee hot for hours and it is very sturdy"
PARTS = ("title", "shop", "description")


def page_checklist() -> Checklist:
    """The page's checklist in Exercise 14.1."""
    return Checklist(
        [
            MustExclude(["cheap"]),
            MustInclude(["dishwasher-safe"]),
            WordCount(max_words=12),
            Regex("^Handmade"),
            Regex(r"\.$"),
        ]
    )


def _lines(feedback: Variable | None) -> list[str]:
    if feedback is None:
        return []
    return [line.strip() for line in feedback.data.splitlines() if line.strip()]


def routed_feedback() -> dict[str, list[str]]:
    """What backward gives each part of the exercise's page: the lines, part by part."""
    title = Variable(PAGE_TITLE, role="title", requires_grad=True)
    description = Variable(PAGE_DESCRIPTION, role="description", requires_grad=True)
    page = fill(PAGE_TEMPLATE, title=title, shop=PAGE_SHOP, description=description)
    _, explanation = page_checklist()(page, RuleBasedEngine())
    explanation.backward()
    return {"title": _lines(title.grad), "shop": [], "description": _lines(description.grad)}


def page_feedback() -> list[str]:
    """The lines of feedback on the whole page (what backward sends into format)."""
    page = fill(PAGE_TEMPLATE, title=PAGE_TITLE, shop=PAGE_SHOP, description=PAGE_DESCRIPTION)
    _, explanation = page_checklist()(page, RuleBasedEngine())
    return RuleBasedEngine().feedback(explanation.data, role="page").splitlines()


def _predicted_lines(exercise: str, part: str, value: Any) -> list[str]:
    """A part's predicted lines as a list of str: a list, a tuple, one str (one line per
    line), or None/[] for nothing."""
    if value is None:
        return []
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, (list, tuple)):
        check.fail(
            exercise,
            f"predicted[{part!r}] should be a list of lines (str); got "
            f"{check.with_article(value)}.",
        )
    lines = []
    for item in value:
        if not isinstance(item, str):
            check.fail(
                exercise,
                f"predicted[{part!r}] holds {check.with_article(item)}; each line is a str, "
                f"such as 'Add the word \"handmade\".'",
            )
        lines += [line.strip() for line in item.splitlines() if line.strip()]
    return lines


def _source(instruction: language.Instruction) -> tuple:
    """Which line of the page's feedback an instruction stands for: a word limit is known
    by its kind, whatever its number; any other line by its kind and its argument."""
    if instruction.kind in ("at_most", "at_least"):
        return (instruction.kind,)
    return (instruction.kind, instruction.argument)


def _route_hint(kind: str, argument: Any, title: bool, description: bool) -> str | None:
    """The rule a misrouted line broke, or None when it went where it should."""
    if kind == "remove":
        wanted, rule = (
            (True, False),
            (
                f'Remove the word "{argument}" goes only to the parts that contain the word: '
                f"the title."
            ),
        )
    elif kind == "add":
        wanted, rule = (
            (False, True),
            (
                f'Add the word "{argument}" goes to the last trainable part, the description '
                f"(the page ends where the description ends), and to no other part."
            ),
        )
    elif kind == "pattern" and str(argument).startswith("^"):
        wanted, rule = (
            (True, False),
            (
                f"A pattern for the start, /{argument}/, goes to the first trainable part, the "
                f"title, and to no other part."
            ),
        )
    elif kind == "pattern":
        wanted, rule = (
            (False, True),
            (
                f"A pattern for the end, /{argument}/, goes to the last trainable part, the "
                f"description, and to no other part."
            ),
        )
    else:
        return None
    if (title, description) == wanted:
        return None
    if not title and not description:
        return f"your prediction sends one of the page's lines nowhere. {rule}"
    return rule


def check_14_1(predicted: Any) -> None:
    """predicted: {"title": [...], "description": [...]} (and "shop", empty), the lines each
    part of the page receives when backward runs through format."""
    exercise = "14.1"
    if predicted is None:  # the cell assigns None before the learner's answer
        check.not_written(exercise)
    if not isinstance(predicted, dict):
        check.fail(
            exercise,
            f"predicted should be a dict from part to lines, {{'title': [...], "
            f"'description': [...]}}; got {check.with_article(predicted)}.",
        )
    unknown = [key for key in predicted if key not in PARTS]
    if unknown:
        check.fail(
            exercise,
            f"the page has no part {unknown[0]!r}; its parts are 'title', 'shop' and "
            f"'description'.",
        )
    for part in ("title", "description"):
        if part not in predicted:
            check.fail(
                exercise,
                f"predicted has no entry for {part!r}: give the lines it receives "
                f"(an empty list if none).",
            )
    got = {part: _predicted_lines(exercise, part, predicted.get(part)) for part in PARTS}
    if got["shop"]:
        check.fail(
            exercise,
            "the shop name is a plain str, not a Variable: it gets no feedback at all, "
            "whatever it contains. Give it [] (or leave it out).",
        )
    whole = [language.parse(line)[0] for line in page_feedback()]
    known = {_source(instruction) for instruction in whole}
    parsed: dict[str, list[language.Instruction]] = {}
    for part in ("title", "description"):
        parsed[part] = []
        for line in got[part]:
            instruction = language.parse(line)[0]
            if instruction.kind == "note":
                check.fail(
                    exercise,
                    f"{_clip(line)} is not a line of the feedback language: each predicted "
                    f"line is one of the page's lines, a word limit restated as "
                    f"'Shorten the text to at most k words (it has n).'",
                )
            if _source(instruction) not in known:
                check.fail(
                    exercise,
                    f"the page's feedback has no line like {_clip(line)}: predict only "
                    f"where its own lines go.",
                )
            parsed[part].append(instruction)
        counts = Counter(_source(instruction) for instruction in parsed[part])
        if any(count > 1 for count in counts.values()):
            check.fail(exercise, f"the {part} receives each line of the page's feedback once.")
    sources = {part: {_source(i) for i in parsed[part]} for part in parsed}
    if all(sources[part] == known for part in ("title", "description")):
        check.fail(
            exercise,
            "you sent every line to both parts, as happens to free text. These are "
            "instructions, and format's backward sends each where it can act (lesson 07, "
            "section 6).",
        )
    for instruction in whole:
        source = _source(instruction)
        hint = _route_hint(
            instruction.kind,
            instruction.argument,
            source in sources["title"],
            source in sources["description"],
        )
        if hint:
            check.fail(exercise, hint)
    _check_limit(exercise, whole, parsed)
    check.passed(exercise)


def _check_limit(exercise: str, whole: list, parsed: dict[str, list]) -> None:
    """The page's word limit: on the description alone, restated in its own terms."""
    (page_limit,) = [i for i in whole if i.kind == "at_most"]
    limit, count = page_limit.argument
    page_words = len(language.words_of(fill_page()))
    title_words = len(language.words_of(PAGE_TITLE))
    own = len(language.words_of(PAGE_DESCRIPTION))
    expected = own - (count - limit)
    on_title = [i for i in parsed["title"] if i.kind == "at_most"]
    on_description = [i for i in parsed["description"] if i.kind == "at_most"]
    if on_title:
        check.fail(
            exercise,
            "the title got a word limit. A limit on the page goes to one part, the longest "
            "trainable one, which gives up the page's whole excess; the title gets none.",
        )
    if not on_description:
        check.fail(
            exercise,
            "the page's word limit reaches no part: it goes to the longest trainable part, "
            "restated in that part's own terms.",
        )
    got_limit, got_count = on_description[0].argument
    if got_limit == limit:
        check.fail(
            exercise,
            f"the description got the page's own limit, at most {limit} words of "
            f"{page_words}. Restate it in the description's terms: it keeps its own words "
            f"minus the page's excess.",
        )
    if got_limit == limit - title_words:
        check.fail(
            exercise,
            f"at most {got_limit} leaves out words of the page that are not the title's: "
            f"the page's {page_words} words also count the shop name and the template's "
            f'"by". The excess is what the whole page has over its limit.',
        )
    if got_limit == expected - 1:
        check.fail(
            exercise,
            f'at most {got_limit} is one short: "&" is not a word (words are runs of '
            f"letters, digits, ' and -, as minigrad.text.feedback.words_of finds them).",
        )
    if got_limit != expected:
        check.fail(
            exercise,
            f"the description's limit is at most {got_limit} words; count again: its own "
            f"words minus the page's excess (the page's words minus {limit}).",
        )
    if got_count not in (own, None):
        check.fail(
            exercise,
            f"\"(it has {got_count})\" should count the description's own words, not the page's.",
        )


def fill_page() -> str:
    """The text of the exercise's page."""
    return PAGE_TEMPLATE.format(title=PAGE_TITLE, shop=PAGE_SHOP, description=PAGE_DESCRIPTION)


# --------------------------------------------------------------------------- the data of 14.2, 14.3

PROMPT_START = "Cheap deals on sale items, order today and we ship to your door"
PROMPT_ROLE = "store note"


def _example(item: str, needs: list[str], bans: list[str], room: int) -> dict:
    """An example like the lesson's, with keys of its own; `room` is the words left for
    the note in the listing's slot (the dash of the listing counts as one)."""
    return {"item": item, "needs": needs, "bans": bans, "limit": len(item.split()) + room}


def model(prompt: Variable, example: dict) -> Variable:
    """The checks' model: the item, a dash, then the prompt."""
    return fill("{item} - {note}", item=example["item"], note=prompt)


def checklist_for(example: dict) -> Checklist:
    """The checks' per-example checklist."""
    return Checklist(
        [
            MustInclude(example["needs"]),
            MustExclude(example["bans"]),
            WordCount(max_words=example["limit"]),
            Regex(r"\.$"),
        ]
    )


def loss_fn(prompt: Variable, examples: Sequence[dict]) -> tuple[float, list[Variable]]:
    """(mean score, one explanation per example): the checks' minibatch loss."""
    scores, explanations = [], []
    for example in examples:
        score, explanation = checklist_for(example)(model(prompt, example), RuleBasedEngine())
        scores.append(score.item())
        explanations.append(explanation)
    return sum(scores) / len(scores), explanations


def validation_score(prompt: Variable | str, examples: Sequence[dict]) -> float:
    """The mean checklist score over `examples`, recording nothing."""
    with no_grad():
        score, _ = loss_fn(prompt if isinstance(prompt, Variable) else Variable(prompt), examples)
    return score


def check_data() -> tuple[list[list[dict]], list[dict]]:
    """(minibatches, validation set) of the 14.2 and 14.3 checks.

    Written out rather than drawn at random, for what a run of TGD steps on them does with
    the offline engine (tests/test_course_lesson14.py asserts it): the minibatches have 3,
    1 (a batch of one), 3, 3 and 2 examples. With reverts (14.3), step 0 raises the
    validation score; step 1 adds "refill", which no validation example asks for, so the
    note changes and the score ties the best; step 2 lowers it (revert); step 3 lowers it
    less, to a score between the rejected one and the best; step 4's minibatch is
    satisfied already, so nothing changes: a tie again. Without reverts (14.2) step 4 has
    nothing to fix either.
    """
    batches = [
        [
            _example("Jute door mat", ["shipping", "warranty"], ["cheap", "sale"], 4),
            _example("Cork yoga block for small spaces", ["shipping"], ["cheap"], 5),
            _example("Clay plant pot in three sizes", ["warranty"], ["cheap", "sale"], 4),
        ],
        [_example("Maple spice rack", ["refill"], ["cheap"], 5)],
        [
            _example("Silk sleep mask", ["vegan", "local"], ["cheap"], 3),
            _example("Felt laptop sleeve with a soft lining", ["local"], ["cheap", "sale"], 3),
            _example("Pine bird feeder", ["vegan"], ["cheap"], 4),
        ],
        [
            _example("Cork yoga block", ["shipping", "vegan"], ["cheap"], 5),
            _example("Felt laptop sleeve", ["warranty", "vegan"], ["cheap"], 4),
            _example("Maple spice rack with a soft lining", ["shipping"], ["cheap", "sale"], 5),
        ],
        [
            _example("Steel lunch box", ["shipping"], ["cheap"], 6),
            _example("Jute door mat for small spaces", ["warranty"], ["cheap", "sale"], 6),
        ],
    ]
    val = [
        _example("Felt laptop sleeve", ["shipping"], ["cheap"], 5),
        _example("Maple spice rack in three sizes", ["shipping", "warranty"], ["cheap", "sale"], 6),
        _example("Clay plant pot", ["shipping"], ["cheap", "sale"], 5),
        _example("Silk sleep mask for small spaces", ["warranty"], ["cheap"], 5),
        _example("Pine bird feeder", ["shipping", "vegan"], ["cheap"], 6),
        _example("Steel lunch box with a soft lining", ["shipping"], ["cheap", "sale"], 5),
    ]
    return batches, val


def _pieces(text: str | None) -> Counter:
    """The per-example feedbacks a .grad holds (joined by blank lines), counted."""
    if not text:
        return Counter()
    return Counter(piece.strip() for piece in text.split("\n\n") if piece.strip())


def _feedback_of(text: str, examples: Sequence[dict]) -> Counter:
    """The feedback pieces that `examples` give a prompt holding `text`."""
    prompt = Variable(text, role=PROMPT_ROLE, requires_grad=True)
    _, explanations = loss_fn(prompt, examples)
    backward(explanations)
    return _pieces(None if prompt.grad is None else prompt.grad.data)


# --------------------------------------------------------------------------- Exercise 14.2


def reference_step(
    prompt: Variable,
    optimizer: TGD,
    batch: Sequence[Any],
    loss: Callable[[Variable, Sequence[Any]], tuple[float, list[Variable]]],
) -> None:
    """One TGD step on a minibatch: fresh feedback, from the minibatch's examples only."""
    optimizer.zero_grad()
    _, explanations = loss(prompt, batch)
    backward(explanations)
    optimizer.step()


def reference_train(
    prompt: Variable,
    optimizer: TGD,
    batches: Sequence[Sequence[Any]],
    val_set: Sequence[Any],
    loss: Callable[[Variable, Sequence[Any]], tuple[float, list[Variable]]],
) -> list[tuple[float, str]]:
    """Exercise 14.2's answer: a step per minibatch, then the validation score (recording
    nothing); one (validation score, prompt text) row per step."""
    history = []
    for batch in batches:
        reference_step(prompt, optimizer, batch, loss)
        with no_grad():
            score, _ = loss(prompt, val_set)
        history.append((score, prompt.data))
    return history


class _SpyTGD(TGD):
    """TGD that notes, at each step, the text it rewrites and the feedback it acts on, and
    at each zero_grad the feedback it clears."""

    def __init__(self, parameters: list[Variable]) -> None:
        super().__init__(parameters, engine=RuleBasedEngine())
        self.steps: list[tuple[str, str | None]] = []
        self.cleared: list[tuple[str, str | None]] = []

    def _now(self) -> tuple[str, str | None]:
        param = self.parameters[0]
        return param.data, None if param.grad is None else param.grad.data

    def zero_grad(self) -> None:
        self.cleared.append(self._now())
        super().zero_grad()

    def step(self) -> None:
        self.steps.append(self._now())
        super().step()


def _history_of(exercise: str, history: Any, count: int) -> list[tuple[float, str]]:
    """The rows train returned, or the mistake in their form named."""
    if not isinstance(history, list):
        check.fail(
            exercise,
            f"train returned {check.with_article(history)}; return the history, a list of "
            f"(validation score, note text) rows, as buggy_train does.",
        )
    if len(history) != count:
        check.fail(
            exercise, f"train returned {len(history)} rows for {count} minibatches: one per step."
        )
    for index, row in enumerate(history):
        if not isinstance(row, tuple) or len(row) != 2:
            check.fail(
                exercise, f"the row of step {index + 1} is {_clip(row)}; each row is (score, text)."
            )
        score, text = row
        if isinstance(text, Variable):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds the note as a Variable, which TGD keeps "
                f"rewriting; store its text, note.data.",
            )
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds {check.with_article(score)} as the "
                f"score; a float.",
            )
        if not isinstance(text, str):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds {check.with_article(text)} as the text.",
            )
    return history


def _stale_and_leaked(spy: _SpyTGD, batches: list, val: list) -> tuple[list[int], list[int]]:
    """The steps whose feedback held earlier minibatches' pieces, and those that held
    validation pieces."""
    stale, leaked = [], []
    earlier: Counter = Counter()
    for index, (text, grad) in enumerate(spy.steps):
        if index >= len(batches):
            break
        own = _feedback_of(text, batches[index])
        extra = _pieces(grad) - own
        validation = _feedback_of(text, val)
        if extra & (validation - earlier):
            leaked.append(index)
        if extra & (earlier - validation):
            stale.append(index)
        earlier += own
    return stale, leaked


# Examples whose feedback a note holds before train gets it (a backward ran before
# training, as in the lesson's section 5): none of the check's minibatches asks for their words.
EARLIER_14_2 = [
    _example("Teak salad bowl", ["oiled"], ["cheap"], 5),
    _example("Wool felt coaster", ["washable"], ["cheap", "sale"], 4),
]


def _watching_validation(
    val: list, loss: Callable, spy: _SpyTGD
) -> tuple[Callable[[Variable, Sequence[dict]], tuple[float, list[Variable]]], list[int]]:
    """`loss` as train gets it, and a list that notes, each time a backward reaches one of
    the validation set's explanations, how many steps had run by then. A validation
    backward is seen where it happens, whatever clears .grad afterwards."""
    sent: list[int] = []

    def watched(prompt: Variable, examples: Sequence[dict]) -> tuple[float, list[Variable]]:
        score, explanations = loss(prompt, examples)
        scored = isinstance(examples, (list, tuple)) and len(examples) > 0
        if scored and all(example in val for example in examples):
            for explanation in explanations:
                if isinstance(explanation, Variable) and explanation.requires_grad:
                    explanation.register_hook(lambda feedback: sent.append(len(spy.steps)))
        return score, explanations

    return watched, sent


def _call_train(
    exercise: str, train: Callable, prompt: Variable, spy: _SpyTGD, data: tuple, loss: Callable
) -> Any:
    """train(prompt, spy, batches, val, loss) with the offline engine as the default."""
    batches, val = data
    previous_engine = default_engine()
    set_default_engine(RuleBasedEngine())
    try:
        return check.call(
            exercise,
            "train(note, optimizer, batches, val_set, loss_fn)",
            train,
            prompt,
            spy,
            batches,
            val,
            loss,
            hints=[
                (
                    NoGradFnError,
                    "Under no_grad nothing is recorded: validation only scores, so drop the "
                    "backward of its explanations.",
                ),
            ],
        )
    finally:
        set_default_engine(previous_engine)


def _check_fresh_start(exercise: str, train: Callable) -> None:
    """A note that holds feedback when train gets it: step 1 must act on its own minibatch's
    feedback alone, which zero_grad at the end of a step (step(); zero_grad()) misses."""
    batches, val = check_data()
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    backward(loss_fn(prompt, EARLIER_14_2)[1])
    before = _pieces(prompt.grad.data)
    spy = _SpyTGD([prompt])
    _call_train(exercise, train, prompt, spy, (batches, val), loss_fn)
    for index, (text, grad) in enumerate(spy.steps[: len(batches)]):
        if (_pieces(grad) - _feedback_of(text, batches[index])) & before:
            check.fail(
                exercise,
                f"given a note that already held feedback (a backward ran before training), "
                f"step {index + 1} acted on it as well as on its minibatch's: zero_grad at the "
                f"end of a step (step(); zero_grad()) leaves the first step whatever was there. "
                f"Call optimizer.zero_grad() at the start of every step, before the loss.",
            )


def check_14_2(train: Callable) -> None:
    """train(note, optimizer, batches, val_set, loss_fn): buggy_train with its bugs fixed.

    Run twice: on a note without feedback, watching the feedback each step acts on and every
    backward that reaches the validation set's explanations; then on a note that holds
    feedback from before training, whose first step must not act on it."""
    exercise = "14.2"
    if not callable(train):
        check.fail(exercise, f"train should be a function; got {check.with_article(train)}.")
    batches, val = check_data()
    reference_prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    expected = reference_train(
        reference_prompt, TGD([reference_prompt], engine=RuleBasedEngine()), batches, val, loss_fn
    )
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    spy = _SpyTGD([prompt])
    watched_loss, validation_sent = _watching_validation(val, loss_fn, spy)
    history = _call_train(exercise, train, prompt, spy, (batches, val), watched_loss)
    history = _history_of(exercise, history, len(batches))
    if len(spy.steps) != len(batches):
        check.fail(
            exercise,
            f"optimizer.step() ran {len(spy.steps)} time(s) for {len(batches)} minibatches: "
            f"one step per minibatch.",
        )
    stale, leaked = _stale_and_leaked(spy, batches, val)
    if stale and leaked:
        check.fail(
            exercise,
            f"both bugs are still there: from step {min(stale + leaked) + 1} on, each step acts "
            f"on the validation set's feedback and on the feedback of earlier minibatches.",
        )
    if leaked:
        check.fail(
            exercise,
            f"step {leaked[0] + 1} acted on feedback from the validation set: it learned from the "
            f"examples that are meant to judge it. Validation only scores: no backward from "
            f"its explanations (or score it under minigrad.no_grad()).",
        )
    if stale:
        check.fail(
            exercise,
            f"step {stale[0] + 1} acted on the feedback of earlier minibatches as well as its "
            f"own: feedback piles up on .grad until it is cleared. Call optimizer.zero_grad() "
            f"at the start of every step.",
        )
    for index, (text, grad) in enumerate(spy.steps):
        if not _pieces(grad) and _feedback_of(text, batches[index]):
            check.fail(
                exercise,
                f"step {index + 1} found no feedback on the note: run backward on the "
                f"minibatch's explanations before optimizer.step(), and zero_grad before "
                f"the loss, not between backward and step.",
            )
    # A backward that reached the validation set's explanations, whatever cleared .grad
    # afterwards (zero_grad, `note.grad = None`); and, should one escape the hooks, feedback
    # of the validation set found on .grad when zero_grad clears it or at the end.
    looked_at = [*spy.cleared, (prompt.data, None if prompt.grad is None else prompt.grad.data)]
    found = any(grad and _pieces(grad) & _feedback_of(text, val) for text, grad in looked_at)
    if validation_sent or found:
        when = f" after step {validation_sent[0]}" if validation_sent else ""
        check.fail(
            exercise,
            f"validation still sends feedback to the note: a backward ran from the validation "
            f"set's explanations{when}. Clearing .grad before the next step (zero_grad, "
            f"note.grad = None) hides it from the steps, but each of those backward calls "
            f"costs a request to a language model. Validation only scores: drop that backward.",
        )
    for index, ((score, text), (want_score, want_text)) in enumerate(zip(history, expected)):
        if text != want_text:
            check.fail(
                exercise,
                f"the row of step {index + 1} holds the text {_clip(text)}, expected "
                f"{_clip(want_text)}: record note.data after the step.",
            )
        if not math.isclose(score, want_score, rel_tol=1e-9, abs_tol=1e-12):
            before = validation_score(spy.steps[index][0], val)
            hint = (
                "that is the score of the note before the step: validate after optimizer.step()."
                if math.isclose(score, before)
                else "record the mean validation score of the note after the step."
            )
            check.fail(
                exercise,
                f"the row of step {index + 1} holds the validation score {score:.4g}, expected "
                f"{want_score:.4g}: {hint}",
            )
    _check_fresh_start(exercise, train)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 14.3


def reference_fit(
    prompt: Variable,
    batches: Sequence[Sequence[Any]],
    take_step: Callable[[Sequence[Any]], None],
    validate: Callable[[Variable], float],
) -> list[tuple[float, bool]]:
    """Exercise 14.3's answer: a step per minibatch, undone when the validation score falls
    below the best so far; a tie keeps the step. One (validation score, reverted) row per
    step, the score being that of the text the step produced."""
    best = validate(prompt)
    rows = []
    for batch in batches:
        previous = prompt.data  # a str: the text to come back to
        take_step(batch)
        score = validate(prompt)
        reverted = score < best
        if reverted:
            prompt.data = previous  # the same Variable, which the optimizer holds
        else:
            best = score
        rows.append((score, reverted))
    return rows


def _fit_variant(batches: list, val: list, mistake: str | None) -> list[tuple[float, bool]]:
    """The rows of fit with one known mistake planted: "ties" reverts on a tie, "stale"
    compares with the last score tried (kept or not), "inverted" reverts when the score
    rises, "never" never reverts."""
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    optimizer = TGD([prompt], engine=RuleBasedEngine())
    best = validation_score(prompt, val)
    rows = []
    for batch in batches:
        previous = prompt.data
        reference_step(prompt, optimizer, batch, loss_fn)
        score = validation_score(prompt, val)
        reverted = {
            None: score < best,
            "ties": score <= best,
            "stale": score < best,
            "inverted": score > best,
            "never": False,
        }[mistake]
        if reverted:
            prompt.data = previous
        if not reverted or mistake == "stale":
            best = score
        rows.append((score, reverted))
    return rows


FIT_MISTAKES = {
    "ties": (
        "you reverted step {step}, whose validation score ({score:.3f}) equals the best "
        "so far: a tie is not worse. Revert only when the new score is strictly lower, "
        "score < best, and keep the step on a tie."
    ),
    "stale": (
        "after a revert the score to beat is still the best kept one, not the rejected "
        "step's: update best only when you keep a step."
    ),
    "inverted": (
        "your decisions are the wrong way round: you reverted steps that raised the "
        "validation score and kept those that lowered it. Revert when score < best."
    ),
    "never": (
        "no step was reverted, but step {step} lowered the validation score "
        "({score:.3f}, below the best so far): put the saved text back, "
        "prompt.data = previous."
    ),
}


def _fit_rows(exercise: str, rows: Any, count: int) -> list[tuple[float, bool]]:
    if not isinstance(rows, list):
        check.fail(
            exercise,
            f"fit returned {check.with_article(rows)}; return the list of rows, one "
            f"(validation score, reverted) tuple per minibatch.",
        )
    if len(rows) != count:
        check.fail(
            exercise, f"fit returned {len(rows)} rows for {count} minibatches: one per step."
        )
    for index, row in enumerate(rows):
        if not isinstance(row, tuple) or len(row) != 2:
            check.fail(
                exercise,
                f"the row of step {index + 1} is {_clip(row)}; each row is "
                f"(validation score, reverted).",
            )
        score, reverted = row
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds {check.with_article(score)} as the "
                f"score; a float.",
            )
        if not isinstance(reverted, bool):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds {check.with_article(reverted)} as "
                f"`reverted`; a bool, such as the result of score < best.",
            )
    return rows


def check_14_3(fit: Callable) -> None:
    """fit(prompt, batches, take_step, validate): undo a step that lowers the validation
    score below the best so far, keep it on a tie; one (score, reverted) row per step."""
    exercise = "14.3"
    if not callable(fit):
        check.fail(exercise, f"fit should be a function; got {check.with_article(fit)}.")
    batches, val = check_data()
    expected = _fit_variant(batches, val, None)
    prompt = Variable(PROMPT_START, role=PROMPT_ROLE, requires_grad=True)
    optimizer = TGD([prompt], engine=RuleBasedEngine())
    started: list[str] = []  # the text each step started from
    validated: list[tuple[bool, str]] = []  # (given the prompt itself?, its text)

    def take_step(batch: Sequence[dict]) -> None:
        started.append(prompt.data)
        reference_step(prompt, optimizer, batch, loss_fn)

    def validate(given: Any) -> float:
        text = given.data if isinstance(given, Variable) else str(given)
        validated.append((given is prompt, text))
        return validation_score(text, val)

    rows = check.call(
        exercise, "fit(prompt, batches, take_step, validate)", fit, prompt, batches, take_step,
        validate,
    )  # fmt: skip
    rows = _fit_rows(exercise, rows, len(batches))
    if len(started) != len(batches):
        check.fail(
            exercise,
            f"take_step ran {len(started)} time(s) for {len(batches)} minibatches: call "
            f"take_step(batch) once for each.",
        )
    if any(not itself for itself, _ in validated):
        check.fail(
            exercise,
            "after a revert you went on with a new Variable, but the optimizer holds the "
            "prompt it was given and rewrites that one. Put the text back into the same "
            "Variable: prompt.data = previous.",
        )
    if len(validated) != len(batches) + 1:
        check.fail(
            exercise,
            f"validate ran {len(validated)} time(s) for {len(batches)} steps: once before "
            f"the first step (the score to beat) and once after each step.",
        )
    decisions = [reverted for _, reverted in rows]
    for index, reverted in enumerate(decisions):
        text_after = started[index + 1] if index + 1 < len(started) else prompt.data
        if reverted and text_after != started[index]:
            check.fail(
                exercise,
                f"step {index + 1} says reverted, but the next step started from the text "
                f"it produced. Save the text, previous = prompt.data (a str), before the "
                f"step: previous = prompt keeps the Variable that TGD rewrites, so nothing "
                f"is restored.",
            )
        if not reverted and text_after != validated[index + 1][1]:
            check.fail(
                exercise,
                f"step {index + 1} says kept, but the text changed after validation: "
                f"restore the saved text only when you revert.",
            )
    expected_decisions = [reverted for _, reverted in expected]
    if decisions != expected_decisions:
        index = next(i for i, (a, b) in enumerate(zip(decisions, expected_decisions)) if a != b)
        score = expected[index][0]
        for mistake, hint in FIT_MISTAKES.items():
            if decisions == [r for _, r in _fit_variant(batches, val, mistake)]:
                check.fail(exercise, hint.format(step=index + 1, score=score))
        if expected_decisions[index]:
            check.fail(
                exercise,
                f"step {index + 1} lowered the validation score ({score:.3f}, below the best so "
                f"far), but you kept it: revert when score < best.",
            )
        check.fail(
            exercise,
            f"step {index + 1} did not lower the validation score ({score:.3f}), but you "
            f"reverted it: revert only when the score falls below the best so far.",
        )
    for index, ((score, _), (want, _)) in enumerate(zip(rows, expected)):
        if not math.isclose(score, want, rel_tol=1e-9, abs_tol=1e-12):
            check.fail(
                exercise,
                f"the row of step {index + 1} holds the score {score:.4g}, expected "
                f"{want:.4g}: record validate(prompt) of the text the step produced, "
                f"before any revert.",
            )
    check.passed(exercise)

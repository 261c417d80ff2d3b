"""Checks of lesson 14: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import minigrad
from minigrad.course import CheckError, lesson14

# --------------------------------------------------------------------------- Exercise 14.1


def _optimize(
    *,
    zero_grad: bool = True,
    constraints: bool = True,
    page_inside: bool = True,
    backward: bool = True,
    stop: bool = True,
    requires_grad: bool = True,
    item: bool = True,
    pass_data: bool = False,
) -> Callable:
    """An optimize_page with one planted mistake (or none, by default)."""

    def optimize_page(name, start, checklist, given_constraints, max_steps=8):
        description = minigrad.Variable(
            start, role="product description", requires_grad=requires_grad
        )
        optimizer = minigrad.text.TGD(
            [description], constraints=given_constraints if constraints else []
        )
        page = minigrad.text.format("{name}: {description}", name=name, description=description)
        rows = []
        for step in range(max_steps + 1):
            if zero_grad:
                optimizer.zero_grad()
            if page_inside:
                page = minigrad.text.format(
                    "{name}: {description}",
                    name=name,
                    description=description.data if pass_data else description,
                )
            score, explanation = checklist(page)
            rows.append((page.data, score.item() if item else score))
            if (stop and score.item() == 1.0) or step == max_steps:
                break
            if backward:
                explanation.backward()
            optimizer.step()
        return rows

    return optimize_page


def test_14_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson14.check_14_1(_optimize())
    assert "Exercise 14.1: correct." in capsys.readouterr().out


def test_14_1_reference_rows_improve() -> None:
    for start in lesson14.PAGE_STARTS:
        rows = lesson14.reference_rows(
            lesson14.PAGE_NAME, start, lesson14.page_checklist(), lesson14.PAGE_CONSTRAINTS, 8
        )
        assert rows[-1][1] == 1.0 and rows[0][1] < 1.0


@pytest.mark.parametrize(
    ("optimize", "hint"),
    [
        (_optimize(zero_grad=False), "call optimizer.zero_grad\\(\\) every step"),
        (_optimize(constraints=False), "without the constraints"),
        (_optimize(page_inside=False), "fill the template inside the loop"),
        (_optimize(backward=False), "call explanation.backward\\(\\) before optimizer.step"),
        (_optimize(stop=False), "stop as soon as the score is 1.0"),
        (_optimize(requires_grad=False), "requires_grad=True"),
        (_optimize(item=False), "score.item\\(\\)"),
        (_optimize(pass_data=True), "not description.data"),
    ],
)
def test_14_1_mistakes_get_a_hint(optimize: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson14.check_14_1(optimize)


def test_14_1_forgotten_zero_grad_is_caught_even_when_the_pages_agree() -> None:
    # The RuleBasedEngine applies only the newest word limit, so stale feedback leaves the
    # pages as they should be; the check still sees the accumulated feedback.
    with pytest.raises(CheckError, match="came out right anyway"):
        lesson14.check_14_1(_optimize(zero_grad=False))


def test_14_1_momentum_is_not_a_mistake(capsys: pytest.CaptureFixture) -> None:
    def with_momentum(name, start, checklist, constraints, max_steps=8):
        description = minigrad.Variable(start, role="product description", requires_grad=True)
        optimizer = minigrad.text.TGD([description], constraints=constraints, momentum=1)
        rows = []
        for step in range(max_steps + 1):
            optimizer.zero_grad()
            page = minigrad.text.format("{name}: {description}", name=name, description=description)
            score, explanation = checklist(page)
            rows.append((page.data, score.item()))
            if score.item() == 1.0 or step == max_steps:
                break
            explanation.backward()
            optimizer.step()
        return rows

    lesson14.check_14_1(with_momentum)
    assert "Exercise 14.1: correct." in capsys.readouterr().out


def test_14_1_default_engine_is_restored() -> None:
    before = minigrad.text.default_engine()
    with pytest.raises(CheckError):
        lesson14.check_14_1(_optimize(zero_grad=False))
    assert minigrad.text.default_engine() is before


def test_14_1_first_row_is_the_start() -> None:
    def skips_start(name, start, checklist, constraints, max_steps=8):
        rows = _optimize()(name, start, checklist, constraints, max_steps)
        return rows[1:] or rows

    with pytest.raises(CheckError, match="the first row is the starting page"):
        lesson14.check_14_1(skips_start)


def test_14_1_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="should be a function"):
        lesson14.check_14_1([("page", 1.0)])
    with pytest.raises(CheckError, match="return the list of rows"):
        lesson14.check_14_1(lambda name, start, checklist, constraints, max_steps: None)


# --------------------------------------------------------------------------- Exercise 14.2


def _loss(
    *,
    only_first=False,
    as_str=False,
    joined=False,
    one_text=False,
    no_grad=False,
    summed=False,
    data=False,
    same_checklist=False,
    rewrap=False,
) -> Callable:
    """A minibatch_loss with one planted mistake (or none, by default)."""

    def minibatch_loss(prompt, batch, model, checklist_for):
        examples = batch[:1] if only_first else batch
        source = prompt.data if data else prompt
        if one_text:
            page = minigrad.text.join([model(source, example) for example in examples], "\n")
            score, explanation = checklist_for(batch[0])(page)
            return score.item(), explanation
        scores, explanations = [], []
        for example in examples:
            judge = checklist_for(batch[0] if same_checklist else example)
            if no_grad:
                with minigrad.no_grad():
                    score, explanation = judge(model(source, example))
            else:
                score, explanation = judge(model(source, example))
            scores.append(score.item())
            explanations.append(explanation)
        total = sum(scores) if summed else sum(scores) / len(scores)
        if as_str:
            return total, [explanation.data for explanation in explanations]
        if joined:
            whole = explanations[0]
            for explanation in explanations[1:]:
                whole = whole + explanation
            return total, whole
        if rewrap:
            return total, minigrad.Variable("\n\n".join(e.data for e in explanations))
        if only_first:
            return total, explanations[0]
        return total, explanations

    return minibatch_loss


def test_14_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson14.check_14_2(_loss())
    assert "Exercise 14.2: correct." in capsys.readouterr().out


def test_14_2_a_tuple_of_explanations_passes(capsys: pytest.CaptureFixture) -> None:
    def as_tuple(prompt, batch, model, checklist_for):
        score, explanations = _loss()(prompt, batch, model, checklist_for)
        return score, tuple(explanations)

    lesson14.check_14_2(as_tuple)
    assert "Exercise 14.2: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("loss", "hint"),
    [
        (_loss(only_first=True), "the first example's alone"),
        (_loss(one_text=True), "judged the minibatch as one text"),
        (_loss(joined=True), "texts do not add up like numbers"),
        (_loss(rewrap=True), "no graph back to the prompt"),
        (_loss(as_str=True), "the explanations are str"),
        (_loss(no_grad=True), "nothing was recorded"),
        (_loss(data=True), "not prompt.data"),
        (_loss(summed=True), "that is the sum"),
        (_loss(same_checklist=True), "the first example's checklist"),
    ],
)
def test_14_2_mistakes_get_a_hint(loss: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson14.check_14_2(loss)


def test_14_2_only_first_in_a_list_gets_a_hint() -> None:
    def first_in_list(prompt, batch, model, checklist_for):
        score, explanation = checklist_for(batch[0])(model(prompt, batch[0]))
        return score.item(), [explanation]

    with pytest.raises(CheckError, match="judge every example of the minibatch"):
        lesson14.check_14_2(first_in_list)


def test_14_2_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="should be a function"):
        lesson14.check_14_2("loss")
    with pytest.raises(CheckError, match="return two things"):
        lesson14.check_14_2(lambda prompt, batch, model, checklist_for: None)


def test_14_2_unwritten_stub() -> None:
    def minibatch_loss(prompt, batch, model, checklist_for):
        raise NotImplementedError("Exercise 14.2: write it")

    with pytest.raises(CheckError, match="not written yet"):
        lesson14.check_14_2(minibatch_loss)


def test_14_2_using_the_lessons_keys_gets_a_hint() -> None:
    def lesson_keys(prompt, batch, model, checklist_for):
        return _loss()(
            prompt, [{"product": example["product"]} for example in batch], model, checklist_for
        )

    with pytest.raises(CheckError, match="the check's examples are not the lesson's"):
        lesson14.check_14_2(lesson_keys)


# --------------------------------------------------------------------------- Exercise 14.3


def _fit(
    *,
    revert=True,
    on_train=False,
    alias=False,
    new_variable=False,
    stale=False,
    zero_grad=True,
    backward=True,
) -> Callable:
    """A fit with one planted mistake (or none, by default)."""

    def fit(prompt, optimizer, batches, loss_fn, validate):
        best = validate(prompt)
        rows = []
        for batch in batches:
            previous = prompt if alias else prompt.data
            if zero_grad:
                optimizer.zero_grad()
            before, explanations = loss_fn(prompt, batch)
            if backward:
                minigrad.backward(explanations)
            optimizer.step()
            score = validate(prompt)
            if on_train:
                with minigrad.no_grad():
                    after, _ = loss_fn(prompt, batch)
                worse = after < before
            else:
                worse = score < best
            worse = worse and revert
            if worse:
                if new_variable:
                    prompt = minigrad.Variable(previous, role=prompt.role, requires_grad=True)
                elif alias:
                    prompt.data = previous.data
                else:
                    prompt.data = previous
            if not worse or stale:
                best = score
            rows.append((score, worse))
        return rows

    return fit


def test_14_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson14.check_14_3(_fit())
    assert "Exercise 14.3: correct." in capsys.readouterr().out


def test_14_3_data_has_a_revert_and_a_later_gain() -> None:
    batches, val = lesson14.fit_data()
    rows, _ = lesson14.reference_fit(batches, val)
    decisions = [reverted for _, reverted in rows]
    assert any(decisions) and not decisions[-1]
    assert lesson14.reference_fit(batches, val, "keep")[0] != rows


@pytest.mark.parametrize(
    ("fit", "hint"),
    [
        (_fit(revert=False), "but you kept it"),
        (_fit(on_train=True), "ran the loss again after the step"),
        (_fit(alias=True), "`previous = prompt` keeps the same Variable"),
        (_fit(new_variable=True), "the optimizer still holds"),
        (_fit(stale=True), "the score to beat is the restored prompt's"),
        (_fit(zero_grad=False), "call it every step"),
        (_fit(backward=False), "found no feedback"),
    ],
)
def test_14_3_mistakes_get_a_hint(fit: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson14.check_14_3(fit)


def test_14_3_wrong_kind_of_answer() -> None:
    with pytest.raises(CheckError, match="should be a function"):
        lesson14.check_14_3([])
    with pytest.raises(CheckError, match="return the list of rows"):
        lesson14.check_14_3(lambda prompt, optimizer, batches, loss_fn, validate: None)


def test_14_3_default_engine_is_restored() -> None:
    before = minigrad.text.default_engine()
    with pytest.raises(CheckError):
        lesson14.check_14_3(_fit(revert=False))
    assert minigrad.text.default_engine() is before

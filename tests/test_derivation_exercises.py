"""Every lesson has at least two derivation exercises (issue 36): exercises whose answer is
written nowhere above them. The learner derives a gradient or a rule, predicts a number
before a cell shows it, counts what a graph keeps, or finds the bug in given code.

DERIVATIONS names them per lesson; the test holds each name to the lesson as it stands:
the exercise exists, its task says what kind of derivation it is (one of VERBS in its
first line or the markdown above it), and its check cell has hidden tests (what the grade
adds; tests/test_hidden_tests.py checks those run)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_hidden_catches_disclosed import exercise_text

from minigrad.course.exercise_cells import exercise_cells

ROOT = Path(__file__).resolve().parent.parent
LESSONS = {path.name[:2]: path for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))}

DERIVATIONS = {
    "00": ["0.1", "0.4"],  # a slope by hand; the chain and product rules by hand
    "01": ["1.1", "1.3"],  # predict is_leaf/requires_grad; rebuild a drawn graph
    "02": ["2.1", "2.2"],  # backward by hand; an order backward can run in
    "03": ["3.1", "3.3"],  # Cube's and Divide's derivatives
    "04": ["4.2", "4.4"],  # what a broken SGD step changes; the bytes a graph keeps
    "05": ["5.1", "5.4"],  # a dense layer stored (in, out); a bilinear layer's backward
    "06": ["6.2", "6.5"],  # RelaxedImplies' backward; a chain of GradFactors by hand
    "07": ["7.1", "7.3"],  # Repeat's textual backward; the bugs of BuggyHeadline
    "08": ["8.1", "8.3"],  # a guarded difference kernel; SiLU's derivative as a kernel
    "09": ["9.5", "9.6"],  # a fixed point's implicit backward; what a hook receives
    "10": ["10.2", "10.3"],  # which calls trace again; the rule behind it
    "11": ["11.2", "11.4", "11.5", "11.7"],  # sub/div/sigmoid; a second backward; an MLP; softplus
    "12": ["12.1", "12.3", "12.4", "12.5"],  # a JVP rule; H v; a transpose; perturbation confusion
    "13": ["13.1", "13.3"],  # distinct buffers; a checkpoint schedule's peak
    "14": ["14.1", "14.2"],  # the feedback that reaches each part; a loop's two bugs
    "15": ["15.1", "15.2", "15.3", "15.4"],  # conv and batch norm backwards; sizes; fields
    "16": ["16.1", "16.2", "16.3"],  # attention's and the LSTM's backwards; counts
}
VERBS = ("by hand", "derive", "work out", "find out", "predict", "count", "bug", "formula",
         "rebuild", "without", "numpy only", "transpose", "fix", "order")


def test_every_lesson_is_listed() -> None:
    assert sorted(DERIVATIONS) == sorted(LESSONS)


@pytest.mark.parametrize("number", sorted(DERIVATIONS))
def test_each_lesson_has_two_derivations_that_say_so(number: str) -> None:
    lesson = LESSONS[number]
    notebook = nbformat.read(lesson, as_version=4)
    texts = exercise_text(notebook, lesson.name)
    checks = {role.exercise: notebook.cells[index].source
              for index, role in exercise_cells(notebook, lesson.name) if role.kind == "check"}
    names = DERIVATIONS[number]
    assert len(names) >= 2, f"{lesson.name}: fewer than two derivation exercises"
    for name in names:
        assert name in texts, f"{lesson.name}: no Exercise {name}"
        assert any(verb in texts[name].lower() for verb in VERBS), (
            f"{lesson.name}: Exercise {name}'s task does not say what the learner derives")
        assert "### BEGIN HIDDEN TESTS" in checks.get(name, ""), (
            f"{lesson.name}: Exercise {name} has no hidden tests")

"""Hidden tests: every check cell has them, and they defend against a patched check.

A check cell's hidden tests (between nbgrader's `### BEGIN HIDDEN TESTS` markers) run only
when nbgrader grades a submission. They call `grading.run_hidden("N.k", ...)`, which runs
the visible check again from fresh copies of the course's modules and then cases of its
own. That they catch answers the visible check lets through (tests/hidden_catches/) is
tested where each lesson runs with wrong answers, tests/test_lessons_run_on.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course import grading
from minigrad.course.check import CheckError
from minigrad.course.exercise_cells import BEGIN_HIDDEN, END_HIDDEN, exercise_cells

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
CATCHES = Path(__file__).resolve().parent / "hidden_catches"


def _hidden_part(source: str) -> str:
    if BEGIN_HIDDEN not in source:
        return ""
    return source.split(BEGIN_HIDDEN, 1)[1].split(END_HIDDEN, 1)[0]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_check_cell_has_hidden_tests(lesson: Path) -> None:
    notebook = nbformat.read(lesson, as_version=4)
    missing = []
    for index, role in exercise_cells(notebook, lesson.name):
        if role.kind != "check":
            continue
        hidden = _hidden_part(notebook.cells[index].source)
        if not re.search(rf"grading\.run_hidden\(\s*\"{re.escape(role.exercise)}\"", hidden):
            missing.append(role.exercise)
    assert not missing, (
        f"{lesson.name}: the check cells of these exercises need hidden tests that call "
        f"grading.run_hidden(\"N.k\", ...) (site/writing-an-exercise.md): {missing}"
    )


def test_run_hidden_ignores_a_patched_check_and_leaves_the_patch_alone() -> None:
    from minigrad.course import check, lesson00

    patched_check, patched_fail = lesson00.check_0_1, check.fail
    lesson00.check_0_1 = lambda value: print("Exercise 0.1: correct.")
    check.fail = lambda exercise, message: None
    try:
        lesson00.check_0_1(13.0)  # the student's patch passes anything
        with pytest.raises(Exception, match="sign error") as raised:
            grading.run_hidden("0.1", None, 13.0)
        assert type(raised.value).__name__ == "CheckError"
        assert check.fail is not patched_fail and lesson00.check_0_1 is not patched_check
        assert sys.modules["minigrad.course.lesson00"] is lesson00  # the student's modules stay
    finally:
        lesson00.check_0_1, check.fail = patched_check, patched_fail
    with pytest.raises(CheckError, match="sign error"):
        lesson00.check_0_1(13.0)


def test_run_hidden_passes_a_right_answer_quietly(capsys: pytest.CaptureFixture) -> None:
    grading.run_hidden("0.1", None, 11.0)
    assert capsys.readouterr().out == ""


def test_run_hidden_for_an_exercise_a_course_added() -> None:
    """No check_N_k in the package (an instructor's own exercise, its check in the check
    cell): only the hidden cases run, with a fresh check module."""
    grading.run_hidden("0.9", None, 1.0)  # nothing to rerun, nothing to fail
    seen = []
    grading.run_hidden("42.1", lambda check, value: seen.append((check.__name__, value)), 3)
    assert seen == [("minigrad.course.check", 3)]

    def wrong(check: object, value: float) -> None:
        check.expect_close("42.1", "value", value, 2.0)

    with pytest.raises(Exception, match=r"Exercise 42\.1: value is 3, expected 2") as raised:
        grading.run_hidden("42.1", wrong, 3.0)
    assert type(raised.value).__name__ == "CheckError"

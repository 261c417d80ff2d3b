"""Hidden tests: every check cell has them, they defend against a patched check, and they
catch answers the visible check lets through.

A check cell's hidden tests (between nbgrader's `### BEGIN HIDDEN TESTS` markers) run only
when nbgrader grades a submission. They call `grading.run_hidden("N.k", ...)`, which runs
the visible check again from fresh copies of the course's modules and then cases of its
own. tests/hidden_catches/lessonNN.py lists answers that pass a lesson's visible checks;
here the lesson runs with them, as nbgrader runs a submission, and each hidden test must
fail while its visible check prints "correct.".
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from test_lessons_run_on import with_wrong_answers

from minigrad.course import grading
from minigrad.course.check import CheckError
from minigrad.course.exercise_cells import BEGIN_HIDDEN, END_HIDDEN, exercise_cells
from minigrad.course.make_exercises import annotate

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
        f"grading.run_hidden(\"N.k\", ...) (README, Writing an exercise): {missing}"
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


def _catches(lesson: Path) -> dict[str, list[str]]:
    path = CATCHES / f"lesson{lesson.name[:2]}.py"
    spec = importlib.util.spec_from_file_location(f"hidden_catches_{lesson.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CAUGHT


CAUGHT_LESSONS = [p for p in LESSONS if (CATCHES / f"lesson{p.name[:2]}.py").exists()]


@pytest.mark.parametrize("lesson", CAUGHT_LESSONS, ids=lambda p: p.stem)
def test_hidden_tests_catch_what_the_visible_check_passes(lesson: Path) -> None:
    caught = _catches(lesson)
    notebook = annotate(nbformat.read(lesson, as_version=4), lesson.name)
    roles = dict(exercise_cells(notebook, lesson.name))
    check_cells = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        role = roles.get(index)
        if role is not None and f"Exercise {role.exercise}" in caught:
            if role.kind == "exercise":
                cell.source = with_wrong_answers(cell.source, caught[f"Exercise {role.exercise}"])
            elif role.kind == "check":
                check_cells[role.exercise] = cell
    assert len(check_cells) == len(caught), f"exercises in CAUGHT that {lesson.name} lacks"
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(lesson.parent)}},
    )
    client.execute()
    problems = []
    for exercise, cell in check_cells.items():
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if f"Exercise {exercise}: correct." not in printed:
            problems.append(f"{exercise}: the visible check did not pass it: {errors[:1]}")
        elif not errors or errors[0].ename != "CheckError":
            problems.append(f"{exercise}: the hidden tests did not catch it")
        elif not errors[0].evalue.startswith(f"Exercise {exercise}"):
            problems.append(f"{exercise}: caught with another exercise's message: {errors[0]}")
    assert not problems, f"{lesson.name}:\n" + "\n".join(problems)

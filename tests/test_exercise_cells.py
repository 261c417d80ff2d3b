"""Exercise ids, points and nbgrader metadata: read from the cells' first lines, checked in
order, and stored in every lesson as `make exercises` writes them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from minigrad.course.exercise_cells import (
    ExerciseFormatError,
    exercise_cells,
    nbgrader_metadata,
)
from minigrad.course.make_exercises import annotate, student_version

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


def _exercise(number: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(
        f"# Exercise {number}: set y\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION"
    )


def _check(number: str, suffix: str = "") -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(f"# Check Exercise {number}{suffix}\nassert y == 2")


def _answer(number: str, suffix: str = "") -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(
        f"*Your answer to Exercise {number} (graded by hand{suffix}):*\n"
        "### BEGIN SOLUTION\nBecause.\n### END SOLUTION"
    )


def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = list(cells)
    return notebook


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_ids_run_in_order_and_metadata_is_stored(lesson: Path) -> None:
    notebook = nbformat.read(lesson, as_version=4)
    roles = exercise_cells(notebook, lesson.name)  # raises when ids are out of order
    numbers = [role.exercise for _, role in roles if role.kind != "check"]
    lesson_number = int(lesson.name[:2])
    assert numbers == [f"{lesson_number}.{k}" for k in range(1, len(numbers) + 1)]
    assert annotate(notebook, lesson.name) == notebook, (
        f"{lesson.name}: nbgrader metadata is out of date: run `make exercises`"
    )
    for index, role in roles:
        assert notebook.cells[index].metadata["nbgrader"] == nbgrader_metadata(role)


def test_ids_are_unique_across_the_course() -> None:
    ids = []
    for lesson in LESSONS:
        notebook = nbformat.read(lesson, as_version=4)
        ids += [role.grade_id for _, role in exercise_cells(notebook, lesson.name)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        # 13.3 placed before 13.1 (the example)
        ((_exercise("13.3"), _check("13.3"), _exercise("13.1")), "13.3 comes where .*13.1"),
        ((_exercise("13.1"), _check("13.1"), _exercise("13.1")), "13.1 is defined twice"),
        ((_exercise("13.1"), _check("13.1"), _exercise("13.3")), "13.3 comes where .*13.2"),
        ((_exercise("12.1"),), "belongs to lesson 12, not lesson 13"),
        ((_check("13.1"), _exercise("13.1")), "check cell of Exercise 13.1, but no earlier"),
        ((_exercise("13.1"), _exercise("13.2"), _check("13.1")), "check cell of Exercise 13.1"),
        ((_exercise("13.1"), _check("13.1"), _check("13.1")), "check cell of Exercise 13.1"),
        ((_answer("13.2"),), "13.2 comes where .*13.1"),
    ],
)
def test_ids_out_of_order_are_refused(cells: tuple, message: str) -> None:
    with pytest.raises(ExerciseFormatError, match=message):
        exercise_cells(_notebook(*cells), "13_memory.ipynb")


def test_points_come_from_the_first_line() -> None:
    notebook = _notebook(
        _exercise("4.1"), _check("4.1"), _exercise("4.2"), _check("4.2", " (3 points)"),
        _answer("4.3"), _answer("4.4", ", 2 points"),
    )
    roles = [role for _, role in exercise_cells(notebook, "04_x.ipynb")]
    assert [(r.kind, r.grade_id, r.points) for r in roles] == [
        ("exercise", "exercise_4_1", 0),
        ("check", "check_4_1", 1),
        ("exercise", "exercise_4_2", 0),
        ("check", "check_4_2", 3),
        ("answer", "answer_4_3", 1),
        ("answer", "answer_4_4", 2),
    ]
    metadata = [nbgrader_metadata(role) for role in roles]
    assert metadata[1] == {"grade": True, "grade_id": "check_4_1", "locked": True, "points": 1,
                           "schema_version": 3, "solution": False, "task": False}
    assert metadata[0]["solution"] and not metadata[0]["grade"] and "points" not in metadata[0]
    assert metadata[5]["solution"] and metadata[5]["grade"] and metadata[5]["points"] == 2


def test_a_markdown_solution_needs_the_answer_line() -> None:
    cell = nbformat.v4.new_markdown_cell("Answer:\n### BEGIN SOLUTION\nx\n### END SOLUTION")
    with pytest.raises(ExerciseFormatError, match="must start with '\\*Your answer to Exercise"):
        exercise_cells(_notebook(cell), "04_x.ipynb")


def test_student_version_of_a_written_answer_and_hidden_tests() -> None:
    check = _check("4.1")
    check.source += "\n### BEGIN HIDDEN TESTS\nassert y + 1 == 3\n### END HIDDEN TESTS"
    student = student_version(_notebook(_exercise("4.1"), check, _answer("4.2")), "04_x.ipynb")
    assert student.cells[1].source == "# Check Exercise 4.1\nassert y == 2"
    assert student.cells[1].metadata["editable"] is False
    assert "Because" not in student.cells[2].source
    assert student.cells[2].source.startswith("*Your answer to Exercise 4.2")


def test_hidden_tests_outside_a_check_cell_are_refused() -> None:
    cell = nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS")
    with pytest.raises(ExerciseFormatError, match="hidden tests belong in a check cell"):
        student_version(_notebook(cell), "04_x.ipynb")

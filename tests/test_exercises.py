"""Student versions: lessons/exercises/ matches the lessons and holds no solution text."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from minigrad.course.make_exercises import (
    BEGIN,
    END,
    RAISES,
    ExerciseFormatError,
    strip_solutions,
    student_version,
)

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


def _solution_lines(source: str) -> list[str]:
    """The non-blank lines between BEGIN and END SOLUTION markers."""
    lines, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def _comparable(notebook: nbformat.NotebookNode) -> list[tuple]:
    return [
        (cell.cell_type, cell.source, sorted(cell.metadata.get("tags", [])))
        for cell in notebook.cells
    ]


def test_every_lesson_has_a_student_version() -> None:
    exercises = sorted(p.name for p in (ROOT / "lessons/exercises").glob("*.ipynb"))
    assert exercises == [p.name for p in LESSONS], "run `make exercises`"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_student_version_is_in_sync(lesson: Path) -> None:
    """A test that fails when a lesson changed and `make exercises` was not run."""
    stored = nbformat.read(ROOT / "lessons/exercises" / lesson.name, as_version=4)
    expected = student_version(nbformat.read(lesson, as_version=4), lesson.name)
    assert _comparable(stored) == _comparable(expected), (
        f"lessons/exercises/{lesson.name} is out of date: run `make exercises`"
    )


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_student_version_holds_no_solution(lesson: Path) -> None:
    original = nbformat.read(lesson, as_version=4)
    student = nbformat.read(ROOT / "lessons/exercises" / lesson.name, as_version=4)
    student_text = "\n".join(cell.source for cell in student.cells)
    assert BEGIN not in student_text and END not in student_text
    student_lines = {line.strip() for line in student_text.splitlines()}
    regions = [cell.source for cell in original.cells if BEGIN in cell.source]
    assert len(regions) >= 2, f"{lesson.name} should have at least 2 exercises"
    for region in regions:
        for line in _solution_lines(region):
            # A solution line may also appear in the lesson's own text (e.g. an import);
            # what counts is that the region's code is gone.
            if line not in student_lines:
                continue
            elsewhere = [c.source for c in original.cells if BEGIN not in c.source]
            assert any(line in text for text in elsewhere), f"solution line left: {line!r}"
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_each_exercise_has_a_check_cell_after_it(lesson: Path) -> None:
    cells = nbformat.read(lesson, as_version=4).cells
    for index, cell in enumerate(cells):
        if cell.cell_type == "code" and BEGIN in cell.source:
            name = re.match(r"# (Exercise \d+\.\d+):", cell.source).group(1)
            following = [c for c in cells[index + 1 :] if c.cell_type == "code"]
            assert following and following[0].source.startswith(f"# Check {name}"), (
                f"{lesson.name}: {name} is not followed by its check cell"
            )


def test_strip_solutions_keeps_indentation_and_names_the_exercise() -> None:
    source = (
        "# Exercise 3.1: write the backward of Cube\n"
        "def backward(ctx, grad):\n"
        "    ### BEGIN SOLUTION\n"
        "    (x,) = ctx.saved_tensors\n"
        "    return 3 * x**2 * grad\n"
        "    ### END SOLUTION\n"
        "print('after')"
    )
    assert strip_solutions(source, "test") == (
        "# Exercise 3.1: write the backward of Cube\n"
        "def backward(ctx, grad):\n"
        "    raise NotImplementedError('Exercise 3.1: write the backward of Cube')\n"
        "print('after')"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION", "must start with a line"),
        ("# Exercise 1.1: do it\n### BEGIN SOLUTION\nx = 1", "never closed"),
        ("# Exercise 1.1: do it\nx = 1\n### END SOLUTION", "without"),
        ("# Exercise 1.1: do it\n### BEGIN SOLUTION\n### BEGIN SOLUTION\n", "inside a region"),
    ],
)
def test_malformed_markers_are_reported(source: str, message: str) -> None:
    with pytest.raises(ExerciseFormatError, match=message):
        strip_solutions(source, "lesson.ipynb, cell 3")


def test_student_version_tags_exercise_and_check_cells() -> None:
    lesson = nbformat.v4.new_notebook()
    lesson.cells = [
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell(
            "# Exercise 1.1: set y\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION"
        ),
        nbformat.v4.new_code_cell("# Check Exercise 1.1\nassert y == 2"),
    ]
    lesson.cells[0].outputs = [nbformat.v4.new_output("stream", text="1")]
    student = student_version(lesson, "01_test.ipynb")
    assert [cell.metadata.get("tags", []) for cell in student.cells] == [[], [RAISES], [RAISES]]
    assert student.cells[0].outputs == []
    assert "y = 2" not in student.cells[1].source
    assert lesson.cells[1].source.count("y = 2") == 1  # the lesson itself is left alone


def _notebook(*sources: str) -> nbformat.NotebookNode:
    lesson = nbformat.v4.new_notebook()
    lesson.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return lesson


def test_an_exercise_cell_without_solution_markers_is_reported() -> None:
    lesson = _notebook(
        "# Exercise 1.1: set y\ny = 2",
        "# Check Exercise 1.1\nassert y == 2",
    )
    with pytest.raises(ExerciseFormatError, match=r"cell 0 .*Exercise 1\.1.* no '### BEGIN"):
        student_version(lesson, "01_test.ipynb")


@pytest.mark.parametrize(
    "sources",
    [
        # A check cell for an exercise the notebook does not have.
        (
            "# Exercise 1.1: set y\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION",
            "# Check Exercise 1.2\nassert y == 2",
        ),
        # A check cell before its exercise.
        (
            "# Check Exercise 1.1\nassert y == 2",
            "# Exercise 1.1: set y\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION",
        ),
    ],
)
def test_a_check_cell_without_its_exercise_is_reported(sources: tuple[str, str]) -> None:
    with pytest.raises(ExerciseFormatError, match=r"check cell of Exercise 1\.\d, but no earlier"):
        student_version(_notebook(*sources), "01_test.ipynb")

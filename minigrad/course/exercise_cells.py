"""What each cell of a lesson is to the course's tools: an exercise, its check, or a written
answer graded by hand, read from the cell's first line and nbgrader's markers.

    # Exercise 2.1: compute dy/dx by hand               <- code cell, the learner's answer
    ### BEGIN SOLUTION ... ### END SOLUTION              (the solution, removed for students)

    # Check Exercise 2.1 (2 points)                      <- code cell right after it, graded
    lesson02.check_2_1(grad_x)                            (1 point unless the line says)
    ### BEGIN HIDDEN TESTS ... ### END HIDDEN TESTS      (run when grading only)

    *Your answer to Exercise 2.5 (graded by hand, 2 points):*   <- markdown cell
    ### BEGIN SOLUTION ... ### END SOLUTION              (a model answer for the grader)

Exercise ids in lesson NN run NN.1, NN.2, ... in the order the cells come. `nbgrader_metadata`
gives each such cell the metadata nbgrader's commands read (schema 3): an exercise cell is
a solution cell, a check cell a locked grade cell with its points, a written answer a
solution cell graded by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
EXERCISE_LINE = re.compile(r"^# (Exercise (\d+)\.(\d+)): (.+)$")
CHECK_LINE = re.compile(r"^# Check (Exercise (\d+)\.(\d+))\b(?: \((\d+) points?\))?")
ANSWER_LINE = re.compile(
    r"^\*Your answer to (Exercise (\d+)\.(\d+)) \(graded by hand(?:, (\d+) points?)?\):\*"
)
# What a written answer becomes in the student version (nbgrader's ClearSolutions.text_stub).
TEXT_STUB = "*Your answer here, in a few sentences.*"


class ExerciseFormatError(ValueError):
    """A lesson's exercise cells are not in the form the course's tools understand."""


@dataclass(frozen=True)
class ExerciseCell:
    """One cell with a role: kind is "exercise", "check" or "answer"; exercise is "2.1"."""

    kind: str
    exercise: str
    points: int  # 0 for an exercise cell: its check cell carries the points
    text: str  # an exercise cell's task, e.g. "compute dy/dx by hand"; "" otherwise

    @property
    def grade_id(self) -> str:
        return f"{self.kind}_{self.exercise.replace('.', '_')}"


def classify(cell: nbformat.NotebookNode, where: str) -> ExerciseCell | None:
    """The role of `cell` from its first line, or None for an ordinary cell."""
    first_line = cell.source.split("\n", 1)[0]
    if cell.cell_type == "markdown":
        answer = ANSWER_LINE.match(first_line)
        if answer is None:
            if BEGIN in cell.source:
                raise ExerciseFormatError(
                    f"{where}: a markdown cell with {BEGIN!r} must start with "
                    f"'*Your answer to Exercise N.k (graded by hand):*'; it starts with "
                    f"{first_line!r}."
                )
            return None
        _require_region(cell.source, where, first_line)
        return ExerciseCell("answer", _number(answer), int(answer.group(4) or 1), "")
    if cell.cell_type != "code":
        return None
    exercise = EXERCISE_LINE.match(first_line)
    if exercise is not None:
        _require_region(cell.source, where, first_line)
        return ExerciseCell("exercise", _number(exercise), 0, exercise.group(4))
    if BEGIN in cell.source:
        raise ExerciseFormatError(
            f"{where}: a cell with {BEGIN!r} must start with a line "
            f"'# Exercise N.k: <what to do>'; it starts with {first_line!r}."
        )
    check = CHECK_LINE.match(first_line)
    if check is not None:
        return ExerciseCell("check", _number(check), int(check.group(4) or 1), "")
    return None


def _number(match: re.Match) -> str:
    """"2.1" from a match whose groups 2 and 3 are the lesson and exercise numbers."""
    return f"{int(match.group(2))}.{int(match.group(3))}"


def _require_region(source: str, where: str, first_line: str) -> None:
    if BEGIN not in source:
        raise ExerciseFormatError(
            f"{where} starts with {first_line!r} but has no {BEGIN!r} ... {END!r} region: "
            f"mark the solution, or do not start the cell with that line."
        )


def exercise_cells(lesson: nbformat.NotebookNode, name: str) -> list[tuple[int, ExerciseCell]]:
    """(index, role) of every exercise, check and answer cell of lesson `name`
    ("NN_title.ipynb"), after checking the ids: lesson NN numbers its exercises NN.1, NN.2,
    ... in order, each once, and a check cell follows its own exercise cell."""
    lesson_number = int(name[:2]) if name[:2].isdigit() else None
    found: list[tuple[int, ExerciseCell]] = []
    defined: list[str] = []  # exercise ids in the order their cells come
    checked: set[str] = set()
    for index, cell in enumerate(lesson.cells):
        where = f"{name}, cell {index}"
        role = classify(cell, where)
        if role is None:
            continue
        if role.kind == "check":
            if not defined or defined[-1] != role.exercise or role.exercise in checked:
                raise ExerciseFormatError(
                    f"{where} is the check cell of Exercise {role.exercise}, but no earlier "
                    f"cell starts with '# Exercise {role.exercise}: ...' (a check cell comes "
                    f"after its exercise's cell, once)."
                )
            checked.add(role.exercise)
        else:
            _expect_next_id(role.exercise, defined, lesson_number, where)
            defined.append(role.exercise)
        found.append((index, role))
    return found


def _expect_next_id(exercise: str, defined: list[str], lesson: int | None, where: str) -> None:
    """Raise unless `exercise` is the id that comes next after `defined` in lesson `lesson`."""
    major, minor = (int(part) for part in exercise.split("."))
    if lesson is None:  # a notebook not named NN_title.ipynb: take the first id's lesson
        lesson = int(defined[0].split(".")[0]) if defined else major
    expected = f"{lesson}.{len(defined) + 1}"
    if exercise == expected:
        return
    if exercise in defined:
        problem = f"Exercise {exercise} is defined twice"
    elif major != lesson:
        problem = f"Exercise {exercise} belongs to lesson {major}, not lesson {lesson}"
    else:
        problem = f"Exercise {exercise} comes where Exercise {expected} should"
    raise ExerciseFormatError(
        f"{where}: {problem}. Exercises are numbered {lesson}.1, {lesson}.2, ... in the order "
        f"their cells come: renumber them (and their check cells and checks)."
    )


def nbgrader_metadata(role: ExerciseCell) -> dict:
    """The `nbgrader` cell metadata nbgrader's commands read for a cell with this role."""
    metadata = {
        "grade": role.kind in ("check", "answer"),
        "grade_id": role.grade_id,
        "locked": role.kind == "check",
        "schema_version": 3,
        "solution": role.kind in ("exercise", "answer"),
        "task": False,
    }
    if role.points:
        metadata["points"] = role.points
    return metadata

"""Student versions of the lessons: `make exercises` (python -m minigrad.course.make_exercises).

In a lesson, each exercise's solution sits between nbgrader's markers, in a code cell whose
first line names the exercise:

    # Exercise 2.1: compute the gradient of y with respect to x
    ### BEGIN SOLUTION
    ...
    ### END SOLUTION

The student version replaces every region by
`raise NotImplementedError("Exercise 2.1: compute the gradient of y with respect to x")`
(indented like the region), clears all outputs, and tags the exercise cells and their
check cells (first line `# Check Exercise N.k`) "raises-exception", so nbval accepts the
error an unsolved exercise raises. A cell that names an exercise but has no solution
region, and a check cell for an exercise that no earlier cell defines, are errors
(ExerciseFormatError): both would leave the student version silently wrong.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
EXERCISE_LINE = re.compile(r"^# (Exercise \d+\.\d+): (.+)$")
CHECK_LINE = re.compile(r"^# Check (Exercise \d+\.\d+)\b")
RAISES = "raises-exception"


class ExerciseFormatError(ValueError):
    """A lesson's solution markers are not in the form the generator understands."""


def strip_solutions(source: str, where: str) -> str:
    """The cell's source with each solution region replaced by a NotImplementedError."""
    lines = source.splitlines()
    first = EXERCISE_LINE.match(lines[0]) if lines else None
    if first is None:
        raise ExerciseFormatError(
            f"{where}: a cell with {BEGIN!r} must start with a line "
            f"'# Exercise N.k: <what to do>'; it starts with {lines[0] if lines else ''!r}."
        )
    message = f"{first.group(1)}: {first.group(2)}"
    kept, inside = [], False
    for number, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ExerciseFormatError(f"{where}, line {number}: {BEGIN!r} inside a region.")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            kept.append(f"{indent}raise NotImplementedError({message!r})")
        elif marker == END:
            if not inside:
                raise ExerciseFormatError(f"{where}, line {number}: {END!r} without {BEGIN!r}.")
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ExerciseFormatError(f"{where}: {BEGIN!r} is never closed by {END!r}.")
    return "\n".join(kept)


def student_version(lesson: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """A copy of `lesson` with solutions removed, outputs cleared and exercise cells tagged."""
    notebook = nbformat.from_dict(lesson)
    exercises: set[str] = set()  # the exercises defined so far, e.g. "Exercise 2.1"
    for index, cell in enumerate(notebook.cells):
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        cell.execution_count = None
        where = f"{name}, cell {index}"
        first_line = cell.source.split("\n", 1)[0]
        exercise = EXERCISE_LINE.match(first_line)
        check = CHECK_LINE.match(first_line)
        tags = [tag for tag in cell.metadata.get("tags", []) if tag != RAISES]
        if exercise and BEGIN not in cell.source:
            raise ExerciseFormatError(
                f"{where} starts with {first_line!r} but has no {BEGIN!r} ... {END!r} region: "
                f"mark the solution, or do not start the cell with '# Exercise N.k:'."
            )
        if BEGIN in cell.source:
            cell.source = strip_solutions(cell.source, where)
            exercises.add(exercise.group(1))
            tags.append(RAISES)
        elif check:
            if check.group(1) not in exercises:
                raise ExerciseFormatError(
                    f"{where} is the check cell of {check.group(1)}, but no earlier cell "
                    f"starts with '# {check.group(1)}: ...'."
                )
            tags.append(RAISES)
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
    return notebook


def write_exercises(lessons: Path) -> list[Path]:
    """Write the student version of every lesson lessons/NN_name.ipynb, with or without
    exercises, to lessons/exercises/NN_name.ipynb."""
    out_dir = lessons / "exercises"
    out_dir.mkdir(exist_ok=True)
    written = []
    for path in sorted(lessons.glob("[0-9][0-9]_*.ipynb")):
        lesson = nbformat.read(path, as_version=4)
        student = student_version(lesson, path.name)
        target = out_dir / path.name
        nbformat.write(student, target)
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    lessons = Path(argv[0] if argv else "lessons")
    if not lessons.is_dir():
        print(f"make_exercises: {lessons} is not a folder of lessons.", file=sys.stderr)
        return 2
    for path in write_exercises(lessons):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

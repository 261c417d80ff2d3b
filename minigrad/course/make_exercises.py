"""Student versions of the lessons: `make exercises` (python -m minigrad.course.make_exercises).

A lesson marks its exercises as exercise_cells.py describes. The student version

- replaces each solution region of an exercise cell by
  `raise NotImplementedError("Exercise 2.1: compute the gradient of y with respect to x")`
  (the cell's first line, indented like the region), and a written answer's region by
  TEXT_STUB;
- drops the hidden tests of each check cell (they run only when a submission is graded);
- clears all outputs, and tags exercise and check cells "raises-exception", so nbval accepts
  the error an unsolved exercise raises;
- locks check cells (not editable, not deletable), as nbgrader's release does.

`make exercises` first writes each lesson's nbgrader metadata from its cells' first lines
(`annotate`), then the student versions. nbgrader's own `generate_assignment` produces the
same student version: the course's nbgrader configuration replaces its solution clearing by
`student_cell` (minigrad.course.grading.named_stubs), and a test compares the two.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from minigrad.course.exercise_cells import (
    BEGIN,
    BEGIN_HIDDEN,
    CHECK_LINE,
    END,
    END_HIDDEN,
    EXERCISE_LINE,
    TEXT_STUB,
    ExerciseCell,
    ExerciseFormatError,
    exercise_cells,
    nbgrader_metadata,
)

__all__ = [
    "BEGIN",
    "CHECK_LINE",
    "END",
    "EXERCISE_LINE",
    "RAISES",
    "ExerciseFormatError",
    "annotate",
    "strip_solutions",
    "student_cell",
    "student_version",
]

RAISES = "raises-exception"


def strip_solutions(source: str, where: str) -> str:
    """The exercise cell's source with each solution region replaced by a NotImplementedError
    that names the exercise (its first line)."""
    lines = source.splitlines()
    first = EXERCISE_LINE.match(lines[0]) if lines else None
    if first is None:
        raise ExerciseFormatError(
            f"{where}: a cell with {BEGIN!r} must start with a line "
            f"'# Exercise N.k: <what to do>'; it starts with {lines[0] if lines else ''!r}."
        )
    stub = f"raise NotImplementedError({first.group(1) + ': ' + first.group(4)!r})"
    return _replace_regions(lines, BEGIN, END, stub, where)


def strip_hidden_tests(source: str, where: str) -> str:
    """The check cell's source without its hidden tests, marker lines included."""
    return _replace_regions(source.splitlines(), BEGIN_HIDDEN, END_HIDDEN, None, where)


def _replace_regions(
    lines: list[str], begin: str, end: str, stub: str | None, where: str
) -> str:
    """`lines` joined, each begin...end region replaced by `stub` at the marker's indent (or
    dropped when stub is None)."""
    kept, inside = [], False
    for number, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker == begin:
            if inside:
                raise ExerciseFormatError(f"{where}, line {number}: {begin!r} inside a region.")
            inside = True
            if stub is not None:
                indent = line[: len(line) - len(line.lstrip())]
                kept.append(indent + stub)
        elif marker == end:
            if not inside:
                raise ExerciseFormatError(f"{where}, line {number}: {end!r} without {begin!r}.")
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ExerciseFormatError(f"{where}: {begin!r} is never closed by {end!r}.")
    return "\n".join(kept)


def student_cell(
    cell: nbformat.NotebookNode,
    role: ExerciseCell | None,
    where: str,
    keep_hidden_tests: bool = False,
) -> None:
    """Turn one cell of a lesson into its student form, in place (outputs aside). nbgrader
    keeps the hidden tests until it has saved the check cells for grading, then drops them
    itself: `keep_hidden_tests=True`."""
    cell.metadata.pop("execution", None)  # when the instructor's copy ran: not the students'
    tags = [tag for tag in cell.metadata.get("tags", []) if tag != RAISES]
    if role is not None and role.kind == "exercise":
        cell.source = strip_solutions(cell.source, where)
        tags.append(RAISES)
    elif role is not None and role.kind == "answer":
        cell.source = _replace_regions(cell.source.splitlines(), BEGIN, END, TEXT_STUB, where)
    elif role is not None and role.kind == "check":
        if not keep_hidden_tests:
            cell.source = strip_hidden_tests(cell.source, where)
        tags.append(RAISES)
        cell.metadata["editable"] = False
        cell.metadata["deletable"] = False
    elif BEGIN_HIDDEN in cell.source:
        raise ExerciseFormatError(
            f"{where}: hidden tests belong in a check cell (first line '# Check Exercise N.k')."
        )
    if role is not None and role.kind != "check":
        cell.metadata["deletable"] = False  # nbgrader's release: solution cells stay
    if tags:
        cell.metadata["tags"] = tags
    else:
        cell.metadata.pop("tags", None)


def annotate(lesson: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """A copy of `lesson` whose exercise, check and answer cells carry nbgrader's metadata
    (and no other cell does)."""
    notebook = nbformat.from_dict(lesson)
    roles = dict(exercise_cells(notebook, name))
    for index, cell in enumerate(notebook.cells):
        role = roles.get(index)
        if role is None:
            cell.metadata.pop("nbgrader", None)
        else:
            cell.metadata["nbgrader"] = nbgrader_metadata(role)
    return notebook


def student_version(lesson: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """A copy of `lesson` with solutions and hidden tests removed, outputs cleared, exercise
    and check cells tagged, and nbgrader's metadata on the exercise cells."""
    notebook = annotate(lesson, name)
    roles = dict(exercise_cells(notebook, name))
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        student_cell(cell, roles.get(index), f"{name}, cell {index}")
    return notebook


def write_exercises(lessons: Path) -> list[Path]:
    """Write nbgrader's metadata into every lesson lessons/NN_name.ipynb (when it changed),
    and its student version to lessons/exercises/NN_name.ipynb."""
    out_dir = lessons / "exercises"
    out_dir.mkdir(exist_ok=True)
    written = []
    for path in sorted(lessons.glob("[0-9][0-9]_*.ipynb")):
        lesson = nbformat.read(path, as_version=4)
        annotated = annotate(lesson, path.name)
        if annotated != lesson:
            nbformat.write(annotated, path)
            written.append(path)
        target = out_dir / path.name
        nbformat.write(student_version(annotated, path.name), target)
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    lessons = Path(argv[0] if argv else "lessons")
    if not lessons.is_dir():
        print(f"make_exercises: {lessons} is not a folder of lessons.", file=sys.stderr)
        return 2
    try:
        for path in write_exercises(lessons):
            print(f"wrote {path}")
    except ExerciseFormatError as error:
        print(f"make_exercises: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

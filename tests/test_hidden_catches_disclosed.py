"""A visible check never says "correct." to a wrong answer without warning (issue 36): for
every answer in tests/hidden_catches/ (one the visible check lets through and only the
graded hidden tests reject), the exercise's own text says what the visible check does not
try, in a sentence with the words "does not try". A learner working alone then knows
that "correct." covers the cases the check names, not the ones the grade adds.

The text is the markdown between the previous exercise's check cell (or the lesson's
start) and the exercise cell, plus the exercise cell's comment lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

from minigrad.course.exercise_cells import exercise_cells

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
CATCHES = Path(__file__).resolve().parent / "hidden_catches"
PHRASE = "does not try"


def _caught(lesson: Path) -> list[str]:
    path = CATCHES / f"lesson{lesson.name[:2]}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"caught_{lesson.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [name.removeprefix("Exercise ") for name in module.CAUGHT]


def exercise_text(notebook: nbformat.NotebookNode, lesson_name: str) -> dict[str, str]:
    """Each exercise's task text: the markdown since the last check cell, and the comment
    lines of the exercise cell itself."""
    texts: dict[str, str] = {}
    start = 0
    for index, role in exercise_cells(notebook, lesson_name):
        if role.kind == "check":
            start = index + 1
            continue
        if role.kind != "exercise" or role.exercise in texts:
            continue
        markdown = [cell.source for cell in notebook.cells[start:index]
                    if cell.cell_type == "markdown"]
        comments = [line for line in notebook.cells[index].source.splitlines()
                    if line.lstrip().startswith("#")]
        texts[role.exercise] = "\n".join(markdown + comments)
    return texts


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_hidden_catch_is_disclosed_in_the_exercise_text(lesson: Path) -> None:
    caught = _caught(lesson)
    if not caught:
        pytest.skip("no answer here passes the visible check and fails the grade")
    notebook = nbformat.read(lesson, as_version=4)
    texts = exercise_text(notebook, lesson.name)
    silent = [number for number in caught if PHRASE not in texts.get(number, "").lower()]
    assert not silent, (
        f"{lesson.name}: an answer in tests/hidden_catches/ passes the visible check of "
        f"{silent}, and the exercise's text does not warn the learner: say what the check "
        f"does not try (a sentence with {PHRASE!r}), or make the visible check catch it."
    )

"""A lesson runs on, whatever the answer: student versions with deliberately wrong answers.

The README promises that cells after an exercise never depend on the learner's answer. The
student versions already run with every exercise unfinished (nbval-lax in `make test`);
here each solution region is replaced by a plausible *wrong* answer instead (from
tests/wrong_answers/lessonNN.py), the notebook is run top to bottom in a fresh kernel with
nbclient, and

- every cell that is neither an exercise nor a check cell must run without an error;
- every check cell must raise: the check has to catch the wrong answer.
"""

from __future__ import annotations

import importlib.util
import os
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from minigrad.course.make_exercises import (
    BEGIN,
    CHECK_LINE,
    END,
    EXERCISE_LINE,
    RAISES,
    student_version,
)

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
WRONG_DIR = Path(__file__).resolve().parent / "wrong_answers"


def wrong_answers(lesson: Path) -> dict[str, list[str]]:
    """WRONG from tests/wrong_answers/lessonNN.py: exercise -> one code string per region."""
    path = WRONG_DIR / f"lesson{lesson.name[:2]}.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"wrong_answers_{lesson.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.WRONG


def regions(source: str) -> list[str]:
    """The indentation of each solution region's BEGIN line, in order."""
    return [
        line[: len(line) - len(line.lstrip())]
        for line in source.splitlines()
        if line.strip() == BEGIN
    ]


def with_wrong_answers(source: str, answers: list[str]) -> str:
    """The cell's source with region k replaced by answers[k], indented like its marker."""
    kept, inside, index = [], False, 0
    for line in source.splitlines():
        marker = line.strip()
        if marker == BEGIN:
            indent = line[: len(line) - len(line.lstrip())]
            kept.append(textwrap.indent(textwrap.dedent(answers[index]).strip("\n"), indent))
            index += 1
            inside = True
        elif marker == END:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def wrong_version(lesson: Path) -> tuple[nbformat.NotebookNode, list[str]]:
    """The student version of `lesson` with wrong answers in place of the solutions, and
    the exercises that have no wrong answer on file or the wrong number of regions."""
    original = nbformat.read(lesson, as_version=4)
    notebook = student_version(original, lesson.name)  # tags, cleared outputs
    answers = wrong_answers(lesson)
    problems = []
    for cell, source in zip(notebook.cells, (c.source for c in original.cells)):
        if cell.cell_type != "code" or BEGIN not in source:
            continue
        exercise = EXERCISE_LINE.match(source.split("\n", 1)[0]).group(1)
        given = answers.get(exercise)
        if given is None or len(given) != len(regions(source)):
            problems.append(
                f"{exercise}: {len(regions(source))} region(s), "
                f"{'no wrong answer' if given is None else f'{len(given)} wrong answer(s)'}"
            )
            continue
        cell.source = with_wrong_answers(source, given)
    return notebook, problems


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_exercise_has_a_wrong_answer(lesson: Path) -> None:
    _, problems = wrong_version(lesson)
    assert not problems, (
        f"tests/wrong_answers/lesson{lesson.name[:2]}.py must give one wrong answer per "
        f"solution region of every exercise: {problems}"
    )
    extra = set(wrong_answers(lesson)) - {
        EXERCISE_LINE.match(c.source.split("\n", 1)[0]).group(1)
        for c in nbformat.read(lesson, as_version=4).cells
        if c.cell_type == "code" and BEGIN in c.source
    }
    assert not extra, f"wrong answers for exercises lesson {lesson.name} does not have: {extra}"


def _error(cell: nbformat.NotebookNode) -> str | None:
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            return f"{output.ename}: {output.evalue}"
    return None


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_runs_on_with_wrong_answers(lesson: Path) -> None:
    notebook, problems = wrong_version(lesson)
    if problems:
        pytest.fail(
            f"missing wrong answers (see test_every_exercise_has_a_wrong_answer): {problems}"
        )
    env_before = os.environ.get("NUMBA_ENABLE_CUDASIM")
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # the kernel inherits it
    try:
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(lesson.parent)}},
        )
        client.execute()
    finally:
        if env_before is None:
            os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    broken, accepted = [], []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        first = cell.source.split("\n", 1)[0]
        error = _error(cell)
        tagged = RAISES in cell.metadata.get("tags", [])
        if not tagged and error is not None:
            broken.append(f"cell {index} ({first[:60]!r}): {error[:300]}")
        check = CHECK_LINE.match(first)
        if check and error is None:
            accepted.append(f"{check.group(1)} (cell {index}) accepted the wrong answer")
        elif check and not re.match(r"(CheckError|NotImplementedError)\b", error):
            accepted.append(
                f"{check.group(1)} (cell {index}) raised {error[:200]} instead of CheckError"
            )
    assert not broken, (
        f"{lesson.name}: with wrong answers these cells after an exercise fail (they must use "
        f"the library's version, not the learner's):\n" + "\n".join(broken)
    )
    assert not accepted, f"{lesson.name}:\n" + "\n".join(accepted)


def test_wrong_answer_substitution_keeps_indentation() -> None:
    source = (
        "# Exercise 3.1: write Cube\n"
        "def backward(ctx, grad):\n"
        f"    {BEGIN}\n"
        "    return 3 * grad\n"
        f"    {END}\n"
        "print('after')"
    )
    assert with_wrong_answers(source, ["x = 1\nreturn x"]) == (
        "# Exercise 3.1: write Cube\n"
        "def backward(ctx, grad):\n"
        "    x = 1\n"
        "    return x\n"
        "print('after')"
    )

"""A lesson runs on, whatever the answer, and its hidden tests catch what the self-check
lets through: each lesson run once with deliberately wrong answers, as nbgrader grades it.

The README promises that cells after an exercise never depend on the learner's answer. The
student versions already run with every exercise unfinished (nbval-lax in `make test`);
here each solution region is replaced by a plausible *wrong* answer instead, and the
notebook is run top to bottom in a fresh kernel with nbclient, with its check cells as
nbgrader runs them when grading (hidden tests included). An exercise's answer comes from
tests/hidden_catches/lessonNN.py when it has one there (an answer that passes the visible
check), and otherwise from tests/wrong_answers/lessonNN.py. Then

- every cell that is neither an exercise nor a check cell must run without an error;
- every check cell must raise CheckError: the check has to catch the wrong answer;
- for an answer from hidden_catches, the visible check must have printed "correct." first,
  so the CheckError comes from the hidden tests.

One run per lesson does both jobs (the lessons' own run time is most of `make test`'s); the
cost is that an exercise with a hidden catch does not also run its wrong answer here, which
tests/test_course_lessonNN.py gives to the check function directly.
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

from minigrad.course.exercise_cells import exercise_cells
from minigrad.course.make_exercises import (
    BEGIN,
    END,
    EXERCISE_LINE,
    annotate,
)

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
WRONG_DIR = Path(__file__).resolve().parent / "wrong_answers"
CATCHES_DIR = Path(__file__).resolve().parent / "hidden_catches"


def _answers(folder: Path, lesson: Path, name: str) -> dict[str, list[str]]:
    path = folder / f"lesson{lesson.name[:2]}.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"{folder.name}_{lesson.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def wrong_answers(lesson: Path) -> dict[str, list[str]]:
    """WRONG from tests/wrong_answers/lessonNN.py: exercise -> one code string per region."""
    return _answers(WRONG_DIR, lesson, "WRONG")


def hidden_catches(lesson: Path) -> dict[str, list[str]]:
    """CAUGHT from tests/hidden_catches/lessonNN.py: answers only the hidden tests reject."""
    return _answers(CATCHES_DIR, lesson, "CAUGHT")


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
    """The lesson as nbgrader grades it (hidden tests in the check cells, outputs cleared) with
    wrong answers in place of the solutions, and the exercises whose answers on file do not
    fit (missing, or the wrong number of regions)."""
    notebook = annotate(nbformat.read(lesson, as_version=4), lesson.name)
    wrong, caught = wrong_answers(lesson), hidden_catches(lesson)
    problems = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    for index, role in exercise_cells(notebook, lesson.name):
        cell = notebook.cells[index]
        if role.kind != "exercise":
            continue
        exercise = f"Exercise {role.exercise}"
        for source_name, answers in (("hidden_catches", caught), ("wrong_answers", wrong)):
            given = answers.get(exercise)
            if given is not None and len(given) != len(regions(cell.source)):
                problems.append(
                    f"{exercise}: {len(regions(cell.source))} region(s), {len(given)} "
                    f"answer(s) in tests/{source_name}/"
                )
        if wrong.get(exercise) is None:
            problems.append(f"{exercise}: {len(regions(cell.source))} region(s), no wrong answer")
        if problems:
            continue
        cell.source = with_wrong_answers(cell.source, caught.get(exercise) or wrong[exercise])
    return notebook, problems


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_exercise_has_a_wrong_answer(lesson: Path) -> None:
    _, problems = wrong_version(lesson)
    assert not problems, (
        f"tests/wrong_answers/lesson{lesson.name[:2]}.py must give one wrong answer per "
        f"solution region of every exercise: {problems}"
    )
    extra = (set(wrong_answers(lesson)) | set(hidden_catches(lesson))) - {
        EXERCISE_LINE.match(c.source.split("\n", 1)[0]).group(1)
        for c in nbformat.read(lesson, as_version=4).cells
        if c.cell_type == "code" and BEGIN in c.source
    }
    assert not extra, f"answers on file for exercises {lesson.name} does not have: {extra}"


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
    # The roles of the lesson's cells (the run notebook has the same cells, answers filled in).
    roles = dict(exercise_cells(nbformat.read(lesson, as_version=4), lesson.name))
    caught = hidden_catches(lesson)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        first = cell.source.split("\n", 1)[0]
        error = _error(cell)
        role = roles.get(index)
        if role is None and error is not None:
            broken.append(f"cell {index} ({first[:60]!r}): {error[:300]}")
        if role is None or role.kind != "check":
            continue
        exercise = f"Exercise {role.exercise}"
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        if error is None:
            accepted.append(f"{exercise} (cell {index}) accepted the wrong answer")
        elif not re.match(rf"CheckError: {re.escape(exercise)}\b", error):
            accepted.append(f"{exercise} (cell {index}) raised {error[:200]} instead of CheckError")
        elif exercise in caught and f"{exercise}: correct" not in printed:
            accepted.append(
                f"{exercise} (cell {index}): the hidden catch should pass the visible check and "
                f"fail only the hidden tests; the visible check raised {error[:200]}"
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

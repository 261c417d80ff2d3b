"""One student version: what `nbgrader generate_assignment` releases is what `make exercises`
wrote to lessons/exercises/, for every lesson (cell types, sources, tags, nbgrader's roles).

The course's nbgrader configuration (minigrad.course.grading.config) swaps nbgrader's
solution clearing for make_exercises' own, so the named stubs survive; nbgrader adds only its
checksums. nbgrader runs in this process through its NbGraderAPI, as formgrader does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbgrader.apps import NbGraderAPI  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.grading.config import configure  # noqa: E402
from minigrad.course.grading.make_course import make_course  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


def _comparable(notebook: nbformat.NotebookNode) -> list[tuple]:
    rows = []
    for cell in notebook.cells:
        metadata = {key: value for key, value in cell.metadata.items() if key != "nbgrader"}
        roles = dict(cell.metadata.get("nbgrader", {}))
        for added in ("checksum", "cell_type"):  # nbgrader's bookkeeping for autograde
            roles.pop(added, None)
        rows.append((cell.cell_type, cell.source, metadata, roles))
    return rows


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = tmp_path_factory.mktemp("release") / "course"
    names = make_course(course, ROOT / "lessons", generate=False)
    config = configure(Config())
    config.CourseDirectory.root = str(course)
    api = NbGraderAPI(config=config)
    path = os.environ.get("PATH", "")
    # nbgrader sets up its gradebook by running `alembic`, from this Python's scripts.
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + path
    try:
        for name in names:
            result = api.generate_assignment(name)
            error = result.get("error")
            assert result["success"], f"nbgrader generate_assignment {name}:\n{error}"
    finally:
        os.environ["PATH"] = path
    return course / "release"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_nbgrader_releases_the_student_version(released: Path, lesson: Path) -> None:
    release = nbformat.read(released / lesson.stem / lesson.name, as_version=4)
    student = nbformat.read(ROOT / "lessons/exercises" / lesson.name, as_version=4)
    assert _comparable(release) == _comparable(student)
    text = (released / lesson.stem / lesson.name).read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "run_hidden"):
        assert marker not in text


OWN_EXERCISE = [
    nbformat.v4.new_code_cell(
        "# Exercise 0.5: the slope of sin(x) * x at x = 1, as a float named product_slope\n"
        "product_slope = None\n### BEGIN SOLUTION\n"
        "x = minigrad.Variable(1.0, requires_grad=True)\n(x.sin() * x).backward()\n"
        "product_slope = x.grad.item()\n### END SOLUTION"
    ),
    nbformat.v4.new_code_cell(
        "# Check Exercise 0.5 (3 points)\nfrom minigrad.course import grading\n\n"
        "check = grading.fresh_module('check')\n"
        "check.expect_close('0.5', 'product_slope', product_slope, 1.3817732906760363)\n"
        "check.passed('0.5')\n### BEGIN HIDDEN TESTS\n"
        "grading.run_hidden('0.5', None, product_slope)\n### END HIDDEN TESTS"
    ),
]


def _course_with(tmp_path: Path, cells: list) -> tuple[Path, NbGraderAPI]:
    """A course with lesson 00 only, its source copy extended by `cells`, as an instructor
    edits it in COURSE/source."""
    course = tmp_path / "course"
    make_course(course, ROOT / "lessons", only=["00"], generate=False)
    source = course / "source" / "00_welcome" / "00_welcome.ipynb"
    notebook = nbformat.read(source, as_version=4)
    recap = next(i for i, cell in enumerate(notebook.cells) if cell.source.startswith("## Recap"))
    notebook.cells[recap:recap] = cells
    for cell in notebook.cells:  # and 0.1 worth 2 points now
        first = "# Check Exercise 0.1"
        if cell.source.startswith(first):
            cell.source = cell.source.replace(first, first + " (2 points)")
    nbformat.write(notebook, source)
    config = configure(Config())
    config.CourseDirectory.root = str(course)
    return course, NbGraderAPI(config=config)


def _generate(api: NbGraderAPI) -> dict:
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + path
    try:
        return api.generate_assignment("00_welcome")
    finally:
        os.environ["PATH"] = path


def test_an_exercise_added_in_the_course_source_needs_no_other_step(tmp_path: Path) -> None:
    """A new exercise and a changed "(N points)" in COURSE/source take effect with
    `nbgrader generate_assignment` alone: roles and points come from the first lines."""
    course, api = _course_with(tmp_path, [nbformat.v4.new_markdown_cell("## Exercise 0.5"),
                                          *OWN_EXERCISE])
    result = _generate(api)
    assert result["success"], result.get("error")
    release = nbformat.read(course / "release/00_welcome/00_welcome.ipynb", as_version=4)
    sources = [cell.source for cell in release.cells]
    stub = "raise NotImplementedError('Exercise 0.5: the slope of sin(x) * x at x = 1, as a "
    assert any(stub in text for text in sources)
    assert not any("run_hidden" in text or "x.sin() * x" in text for text in sources)
    with api.gradebook as gradebook:
        cells = gradebook.find_notebook("00_welcome", "00_welcome").grade_cells
        points = {cell.name: cell.max_score for cell in cells}
    assert points == {"check_0_1": 2, "check_0_2": 1, "check_0_3": 1, "check_0_4": 1,
                      "check_0_5": 3}


def test_a_misnumbered_exercise_in_the_course_source_is_refused(tmp_path: Path) -> None:
    cells = [nbformat.from_dict(cell) for cell in OWN_EXERCISE]
    cells[0].source = cells[0].source.replace("Exercise 0.5", "Exercise 0.6")
    cells[1].source = cells[1].source.replace("Exercise 0.5", "Exercise 0.6")
    _, api = _course_with(tmp_path, cells)
    result = _generate(api)
    assert not result["success"]
    assert "Exercise 0.6 comes where Exercise 0.5 should" in result["log"] + result.get("error", "")

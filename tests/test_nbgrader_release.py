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

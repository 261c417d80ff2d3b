"""Findings of a review that attacked a class's grading from the README alone, each kept fixed.

- collect, run as the instructor, followed symbolic links: an inbound entry that is a link
  to the course's source folder was collected as a submission (the solutions, full marks,
  the model answers in that student's feedback); a link inside a submission copied the
  gradebook or /etc/shadow into it; a link named `ada+...+2099-...` and pointing at another
  folder of ada's replaced her submission. A named pipe, a sparse file past the size limit
  or a folder name that is no time stopped the whole class's collect, and a folder without
  timestamp.txt stopped the class's `release_feedback`.
- the sandbox's /tmp and /dev/shm are in memory and had no size: one submission filled the
  machine's memory with files, past its address-space limit.
- hidden tests that killed the kernel failed every later exercise's hidden tests too.
- a cell that is no exercise could patch the grader (`np.allclose = ...`) unread by the rules,
  and an answer reading `linecache` or adding an audit hook could put the hidden tests' code
  into its own feedback.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.auth import Authenticator  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from test_grading_sandbox import _execute, _notebook, needs_sandbox  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.grading import collect, sandbox  # noqa: E402
from minigrad.course.grading.rules import (  # noqa: E402
    EnforceRules,
    broken_rules,
    changes_outside_exercises,
)

ASSIGNMENT = "00_tiny"


@pytest.fixture(autouse=True)
def _alembic_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # nbgrader runs alembic, from the virtual environment's bin folder.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])


# --------------------------------------------------------------------------- collect


def _tiny_notebook(answer: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(answer)]
    return notebook


def _course(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A course with one released assignment, an exchange, and a folder only the
    instructor can read, holding the solutions and a secret."""
    course, exchange, private = tmp_path / "course", tmp_path / "exchange", tmp_path / "private"
    (course / "release" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(_tiny_notebook("answer = None"),
                   course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
    (private / "source").mkdir(parents=True)
    nbformat.write(_tiny_notebook("answer = 'THE SOLUTION'"),
                   private / "source" / f"{ASSIGNMENT}.ipynb")
    (private / "gradebook.db").write_text("EVERYONE'S GRADES")
    (exchange / "minigrad" / "inbound").mkdir(parents=True)
    return course, exchange, private


def _entry(exchange: Path, student: str, stamp: str, suffix: str) -> Path:
    return exchange / "minigrad" / "inbound" / f"{student}+{ASSIGNMENT}+{stamp}+{suffix}"


def _submission(exchange: Path, student: str, second: int, answer: str,
                timestamp: bool = True) -> Path:
    """One submission folder, as `nbgrader submit` leaves it (or, without timestamp.txt, as a
    student writing into the exchange by hand might)."""
    stamp = f"2026-01-05 10:00:{second:02d}.000000 UTC"
    folder = _entry(exchange, student, stamp, f"{second:04x}")
    folder.mkdir()
    nbformat.write(_tiny_notebook(answer), folder / f"{ASSIGNMENT}.ipynb")
    if timestamp:
        (folder / "timestamp.txt").write_text(stamp)
    return folder


def _collect(course: Path, exchange: Path, **options: object) -> None:
    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = "minigrad"
    for name, value in options.items():
        setattr(config.CourseDirectory, name, value)
    config.Exchange.root = str(exchange)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    collect.RepairingCollect(coursedir=coursedir, authenticator=Authenticator(config=config),
                             config=config, log=logging.getLogger("test_review")).start()


def _submitted(course: Path, student: str) -> Path:
    return course / "submitted" / student / ASSIGNMENT


def test_collect_follows_no_symbolic_link(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    course, exchange, private = _course(tmp_path)
    # A link named as a submission, to the instructor's source folder.
    _entry(exchange, "mallory2", "2026-01-05 10:00:01.000000 UTC", "aaaa").symlink_to(
        private / "source")
    # ada's real submission, and a later-dated link in her name to another of her folders.
    _submission(exchange, "ada", 2, "answer = 'ada submitted this'")
    elsewhere = tmp_path / "ada-elsewhere"
    elsewhere.mkdir()
    nbformat.write(_tiny_notebook("answer = 'not what ada submitted'"),
                   elsewhere / f"{ASSIGNMENT}.ipynb")
    _entry(exchange, "ada", "2099-01-01 00:00:00.000000 UTC", "bbbb").symlink_to(elsewhere)
    # A real folder whose notebook and extra files are links to files only the grader reads.
    folder = _submission(exchange, "mallory", 3, "unused")
    (folder / f"{ASSIGNMENT}.ipynb").unlink()
    (folder / f"{ASSIGNMENT}.ipynb").symlink_to(private / "source" / f"{ASSIGNMENT}.ipynb")
    (folder / "leak.db").symlink_to(private / "gradebook.db")
    (folder / "leak_dir").symlink_to(private)
    (folder / "notes.txt").write_text("mine")

    with caplog.at_level(logging.WARNING, logger="test_review"):
        _collect(course, exchange)

    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ada", "mallory"]
    ada = nbformat.read(_submitted(course, "ada") / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert "ada submitted this" in ada.cells[-1].source
    mallory = _submitted(course, "mallory")
    assert sorted(p.name for p in mallory.iterdir()) == [
        f"{ASSIGNMENT}.ipynb", "notes.txt", "submission_secret.txt", "timestamp.txt"]
    copied = "".join(path.read_text() for path in mallory.rglob("*") if path.is_file())
    assert "THE SOLUTION" not in copied and "EVERYONE'S GRADES" not in copied
    graded = nbformat.read(mallory / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert "answer = None" in [cell.source for cell in graded.cells]  # the unanswered one
    note = graded.cells[0].source
    assert "`leak.db` (a symbolic link)" in note and "not links to them" in note
    warnings = [record.getMessage() for record in caplog.records]
    assert any("mallory2" in w and "is a symbolic link" in w for w in warnings)
    assert any("2099-01-01" in w and "is a symbolic link" in w for w in warnings)


def test_one_odd_submission_does_not_stop_the_class_s_collect(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    course, exchange, _ = _course(tmp_path)
    _submission(exchange, "ben", 1, "answer = 1")
    os.mkfifo(_submission(exchange, "frank", 2, "answer = 2") / "pipe")
    with open(_submission(exchange, "zed", 3, "answer = 3") / "sparse.bin", "wb") as file:
        file.truncate(3 * 2**20)  # sparse: a few bytes on disk, 3 MB to copy
    yan = _submission(exchange, "yan", 4, "answer = 4")
    for index in range(3):  # three of 1 MB each: past a 2 MB limit for the whole folder
        with open(yan / f"big{index}.bin", "wb") as file:
            file.truncate(2**20)
    _entry(exchange, "xia", "not a time", "cccc").mkdir()
    _submission(exchange, "hand", 5, "answer = 5", timestamp=False)
    (_submission(exchange, "walt", 6, "answer = 6") / "submission_secret.txt").write_text("")

    with caplog.at_level(logging.WARNING, logger="test_review"):
        _collect(course, exchange, max_file_size=2000, max_dir_size=2000)  # kB

    collected = sorted(p.name for p in (course / "submitted").iterdir() if any(p.iterdir()))
    assert collected == ["ben", "frank", "hand", "walt", "zed"]
    assert not (_submitted(course, "frank") / "pipe").exists()
    assert not (_submitted(course, "zed") / "sparse.bin").exists()
    stamp = (_submitted(course, "hand") / "timestamp.txt").read_text()
    assert stamp == "2026-01-05 10:00:05.000000 UTC"  # from the folder's name
    for student in collected:  # what release_feedback reads: an empty one stopped it
        secret = (_submitted(course, student) / "submission_secret.txt").read_text()
        assert len(secret) == 128 and int(secret, 16) >= 0
    messages = [record.getMessage() for record in caplog.records]
    assert any("xia" in m and "holds no time" in m for m in messages)
    assert any("yan" in m and "max_dir_size" in m for m in messages)


# --------------------------------------------------------------------------- the sandbox


@needs_sandbox
@pytest.mark.skipif(not sandbox._bwrap_sizes_tmpfs(), reason="this bwrap has no --size")
def test_the_sandbox_s_in_memory_folders_are_capped(tmp_path: Path) -> None:
    code = ("import errno\nfor folder in ('/tmp', '/dev/shm'):\n    try:\n"
            "        open(folder + '/fill', 'wb').write(b'x' * (20 << 20))\n"
            "        print(folder, 'filled')\n    except OSError as error:\n"
            "        print(folder, errno.errorcode[error.errno])")
    slot = sandbox.Slot()
    workdir = sandbox.make_workdir(slot)
    try:
        command = sandbox.sandboxed([sys.executable, "-c", code], workdir, "bwrap",
                                    sandbox.Limits(cpu_s=30, tmp_bytes=16 * 2**20), slot, [])
        import subprocess

        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    finally:
        slot.release()
    assert done.stdout.split("\n")[:2] == ["/tmp ENOSPC", "/dev/shm ENOSPC"], done.stderr


def _check(number: int, test: str) -> str:
    """A check cell for exercise 99.`number` (no check in the package) whose hidden tests
    run `test`."""
    return (
        f"print('visible check {number}')\n### BEGIN HIDDEN TESTS\n"
        "from minigrad.course import grading\n\n"
        f"def hidden_tests(check, value):\n    {test}\n\n"
        f"grading.run_hidden('99.{number}', hidden_tests, answer)\n### END HIDDEN TESTS"
    )


@needs_sandbox
def test_hidden_tests_that_kill_the_kernel_fail_that_exercise_only(tmp_path: Path) -> None:
    notebook = _notebook(
        "answer = 2",
        _check(1, "import os; os._exit(1)"),
        _check(2, "assert value == 2"),
        _check(3, "check.fail('99.3', 'the hidden case fails')"),
        "import os\nos._exit(1)  # a last cell that kills the kernel whenever it runs",
    )
    outputs = _execute(notebook, tmp_path)
    assert outputs[1][-1].startswith("HiddenTestsDidNotFinish")
    assert outputs[2] == ["visible check 2\n"]  # its hidden tests ran, in a new kernel
    assert outputs[3][-1].startswith("CheckError: Exercise 99.3: the hidden case fails")
    assert outputs[4][0].startswith("KernelDied")


# --------------------------------------------------------------------------- the rules


LESSON_CELL = "import numpy as np\nstate = {}\nnp.random.seed = print  # the lesson's own"


def _graded(course: Path, *cells: tuple[str, str | None]) -> nbformat.NotebookNode:
    """The release of a two-exercise notebook in `course`, and a submission of it made of
    `cells` (source, grade id or None), with outputs as if run."""
    release = nbformat.v4.new_notebook()
    release.cells = [nbformat.v4.new_code_cell(LESSON_CELL)]
    (course / "release" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(release, course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    graded = nbformat.v4.new_notebook()
    for source, grade_id in cells:
        cell = nbformat.v4.new_code_cell(source)
        if source.startswith(LESSON_CELL) and source != LESSON_CELL:
            cell.id = release.cells[0].id  # the lesson's cell, edited in place
        if grade_id:
            cell.metadata["nbgrader"] = {"grade_id": grade_id, "grade": "check" in grade_id,
                                         "solution": "exercise" in grade_id, "points": 1}
            if "check" in grade_id:
                cell.outputs = [nbformat.v4.new_output("stream", text="correct.\n")]
        graded.cells.append(cell)
    return graded


def _resources(course: Path) -> dict:
    return {"metadata": {"path": str(course / "autograded" / "eve" / ASSIGNMENT)},
            "nbgrader": {"notebook": ASSIGNMENT, "assignment": ASSIGNMENT}}


@pytest.mark.parametrize("patch", [
    "np.allclose = lambda *args, **kwargs: True",
    "import numpy\nsetattr(numpy, 'allclose', print)",
    "import sys\nsys.modules['numpy.testing'] = None",
    "import builtins\nbuiltins.abs = lambda value: 0",
])
def test_a_cell_that_is_no_exercise_may_not_patch_the_grader(tmp_path: Path, patch: str) -> None:
    graded = _graded(tmp_path, (LESSON_CELL, None), ("answer = 1", "exercise_9_1"),
                     ("", "check_9_1"), ("# my helpers\n" + patch, None),
                     ("answer = 2", "exercise_9_2"), ("", "check_9_2"))
    graded, _ = EnforceRules().preprocess(graded, _resources(tmp_path))
    from nbgrader.utils import determine_grade

    for index in (2, 5):  # both checks, the one above the patch too (hidden tests run last)
        outputs = graded.cells[index].outputs
        assert determine_grade(graded.cells[index])[0] == 0
        assert outputs[0].ename == "RuleBroken"
        assert "a cell of yours that is no exercise ('# my helpers')" in outputs[0].evalue
        assert outputs[0].evalue.endswith("(rule: no tampering with the grader).")


def test_the_lesson_s_own_cells_and_ordinary_cells_are_not_held_against_anyone(
    tmp_path: Path,
) -> None:
    edited = LESSON_CELL + "\nprint('I added this line')"
    graded = _graded(tmp_path, (LESSON_CELL, None), (edited, None),
                     ("x = np.allclose(1, 1)\nvalues = {}\nvalues['allclose'] = np.allclose", None),
                     ("answer = 1", "exercise_9_1"), ("", "check_9_1"))
    before = nbformat.writes(graded)
    graded, _ = EnforceRules().preprocess(graded, _resources(tmp_path))
    assert nbformat.writes(graded) == before
    assert changes_outside_exercises(edited, [], LESSON_CELL) == []
    assert changes_outside_exercises(edited, [], "") == ["numpy.random.seed"]
    rewritten = "import numpy as np\nnp.random.seed = len  # the learner's line, the lesson's name"
    assert changes_outside_exercises(rewritten, [], LESSON_CELL) == []
    assert changes_outside_exercises(rewritten + "\nnp.isclose = len", [], LESSON_CELL) == [
        "numpy.isclose"]


@pytest.mark.parametrize(("answer", "name"), [
    ("import sys\nsys.addaudithook(print)", "sys.addaudithook"),
    ("import linecache\nseen = list(linecache.cache)", "linecache"),
])
def test_reading_the_grader_s_code_is_tampering(answer: str, name: str) -> None:
    messages = broken_rules("9.1", answer + "\nanswer = 1", [])
    assert any(name in message and message.endswith("(rule: no tampering with the grader).")
               for message in messages), messages


@pytest.mark.parametrize(("answer", "shown"), [
    ("import linecache\nsecret = linecache.cache", False),  # read the grader's code: rule only
    ("import sys\nframe = sys._getframe(1)", False),
    ("import numpy as np\nnp.allclose = print", True),  # patched it: the verdicts stay too
])
def test_a_check_whose_answer_read_the_grader_shows_the_rule_only(
    tmp_path: Path, answer: str, shown: bool
) -> None:
    graded = _graded(tmp_path, (answer, "exercise_9_1"), ("", "check_9_1"))
    leaked = nbformat.v4.new_output("error", ename="CheckError",
                                    evalue="def hidden_tests(check, value): ...", traceback=[])
    graded.cells[1].outputs.append(leaked)
    graded, _ = EnforceRules().preprocess(graded, _resources(tmp_path))
    assert ("def hidden_tests" in nbformat.writes(graded.cells[1])) is shown
    assert graded.cells[1].outputs[0].ename == "RuleBroken"

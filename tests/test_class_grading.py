"""A class graded end to end with nbgrader, as site/teaching.md ("Teaching a class") says to.

The instructor's steps run as site/teaching.md's commands (`nbgrader release_assignment`,
`collect`, `autograde`, `generate_feedback`, `export`) on a course folder from
`make course` (minigrad.course.grading.make_course); the students fetch and submit through
nbgrader's local exchange. Fifteen submissions of lessons 00 and 03 cover what a real class
hands in: all correct, partly correct, a syntax error, an edited check cell, a deleted check
cell, an endless loop, a kernel that dies, a huge printout, a notebook never executed, a
patched check, a renamed notebook, the work done in a copy, an empty file, answers only the
hidden tests catch, and a written answer graded by hand.
The test asserts the exact score table (nbgrader's gradebook through the course's CSV
export) and that each feedback file names the mistake of every failed exercise.
"""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from test_lessons_run_on import with_wrong_answers

nbgrader = pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.auth import Authenticator  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.exercise_cells import exercise_cells  # noqa: E402
from minigrad.course.grading.make_course import make_course, nbgrader_env  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
WELCOME, CUSTOM = "00_welcome", "03_custom_functions"
CELL_TIMEOUT_S = 10  # the course's default is 60; the endless loop waits this long

# Answers, exercise -> code of each solution region (the lesson's own solution otherwise).
SIGN_ERROR = {"0.1": ["slope_by_hand = 13.0"]}
PATCHED_CHECK = {
    "0.1": [
        "slope_by_hand = 13.0\n"
        "from minigrad.course import lesson00\n"
        "lesson00.check_0_1 = lambda value: print('Exercise 0.1: correct.')"
    ]
}
SWAPPED = {"0.3": ["grad_a, grad_b = 8.0, 3.0"]}
SYNTAX_ERROR = {"0.2": ["x = minigrad.Variable(2.0, requires_grad=True\nslope = 11.0"]}
ENDLESS = {"0.2": ["while True:\n    pass"]}
CRASH = {"0.2": ["import os\nos._exit(1)"]}  # the kernel dies, as when memory runs out
LONG_PRINT = {"0.3": ["grad_a, grad_b = 3.0, 8.0\nprint('x' * 3_000_000)"]}
CUBE_3X = {"3.1": ["ctx.save_for_backward(x)\nreturn x**3", "(x,) = ctx.saved_tensors\n"
                   "return 3 * x * grad_output"]}
DIVIDE_ON_CLASS = {  # passes the visible check; the hidden tests use two Divides in one graph
    "3.3": [
        "Divide.a, Divide.b = a, b\nreturn a / b",
        "a, b = Divide.a, Divide.b\ngrad_a = grad_b = None\nif ctx.needs_input_grad[0]:\n"
        "    grad_a = grad_output / b\nif ctx.needs_input_grad[1]:\n"
        "    grad_b = -grad_output * a / b**2\nreturn grad_a, grad_b",
    ]
}
SCALED_EXP_ON_CLASS = {
    "3.2": [
        "out = minigrad.exp(k * x)\nctx.save_for_backward(out)\nScaledExp.k = k\nreturn out",
        "(out,) = ctx.saved_tensors\nreturn ScaledExp.k * out * grad_output, None",
    ]
}
WRITTEN = "Save the output s for sigmoid, s(1 - s); save x for the square, the sign is lost."


def _edit_check_cell(notebook: nbformat.NotebookNode, exercise: str) -> None:
    """The student rewrites a check cell so that it always passes."""
    for cell in notebook.cells:
        if cell.source.startswith(f"# Check Exercise {exercise}"):
            cell.source = f"print('Exercise {exercise}: correct.')"


def _delete_check_cell(notebook: nbformat.NotebookNode, exercise: str) -> None:
    marker = f"# Check Exercise {exercise}"
    notebook.cells = [cell for cell in notebook.cells if not cell.source.startswith(marker)]


# student -> assignment -> (answers, what else the student does to the notebook)
CLASS = {
    "ada": {WELCOME: ({}, "execute"), CUSTOM: ({}, "write answer")},
    "ben": {WELCOME: (SIGN_ERROR, None), CUSTOM: ({**CUBE_3X, **DIVIDE_ON_CLASS}, None)},
    "cai": {WELCOME: (SYNTAX_ERROR, None)},
    "dee": {WELCOME: (SIGN_ERROR, "edit check 0.1")},
    "eve": {WELCOME: (SWAPPED, "delete check 0.3")},
    "fay": {WELCOME: (ENDLESS, None)},
    "gus": {WELCOME: (LONG_PRINT, None)},  # never executed: submitted as written, no outputs
    "hal": {WELCOME: (PATCHED_CHECK, None)},
    "ivy": {WELCOME: ({}, "rename")},
    "jon": {WELCOME: ({}, "empty")},
    "kim": {CUSTOM: (SCALED_EXP_ON_CLASS, None)},
    "lee": {WELCOME: (CRASH, None)},
    "mia": {WELCOME: ({}, "work in a copy")},  # the release submitted untouched beside it
}

# The score table nbgrader's gradebook holds after autograding (columns as the export
# writes them; "?" waits for a grader, "" means nothing was submitted for that lesson).
HEADER = ["student_id", "0.1", "0.2", "0.3", "0.4", "3.1", "3.2", "3.3", "3.4", "3.5",
          "total", "max_score"]
EXPECTED = {
    "ada": ["1", "1", "1", "1", "1", "1", "2", "1", "?", "9", "11"],
    "ben": ["0", "1", "1", "1", "0", "1", "0", "1", "0", "5", "11"],
    "cai": ["1", "0", "1", "1", "", "", "", "", "", "3", "4"],
    "dee": ["0", "1", "1", "1", "", "", "", "", "", "3", "4"],
    "eve": ["1", "1", "0", "1", "", "", "", "", "", "3", "4"],
    "fay": ["1", "0", "1", "1", "", "", "", "", "", "3", "4"],
    "gus": ["1", "1", "1", "1", "", "", "", "", "", "4", "4"],
    "hal": ["0", "1", "1", "1", "", "", "", "", "", "3", "4"],
    "ivy": ["1", "1", "1", "1", "", "", "", "", "", "4", "4"],
    "jon": ["0", "0", "0", "0", "", "", "", "", "", "0", "4"],
    "kim": ["", "", "", "", "1", "0", "2", "1", "0", "4", "7"],
    "lee": ["1", "0", "1", "1", "", "", "", "", "", "3", "4"],
    "mia": ["1", "1", "1", "1", "", "", "", "", "", "4", "4"],
}
# What each student's feedback must say: the named mistake of every failed exercise.
FEEDBACK = {
    ("ben", WELCOME): ["Exercise 0.1: slope_by_hand is 13, expected 11: a sign error"],
    ("ben", CUSTOM): [
        "Exercise 3.1: x.grad is",
        "the derivative of x³ is 3x², not 3x",
        "Exercise 3.3: minigrad.gradcheck(lambda a, b: Divide.apply(a, b) * Divide.apply(b, a)",
    ],
    ("cai", WELCOME): ["SyntaxError", "NameError: name 'slope' is not defined"],
    ("dee", WELCOME): ["a sign error"],
    ("eve", WELCOME): ["grad_a and grad_b are swapped", "was missing from the submission"],
    ("fay", WELCOME): ["CellTimeoutError", "Exercise 0.2 is not written yet"],
    ("hal", WELCOME): ["Exercise 0.1: slope_by_hand is 13, expected 11: a sign error"],
    ("ivy", WELCOME): ["You submitted this notebook as 00_welcome-Copy1.ipynb"],
    ("jon", WELCOME): [
        "The submitted 00_welcome.ipynb was empty (0 bytes)",
        "Exercise 0.1 is not written yet",
    ],
    ("gus", WELCOME): ["... Output truncated (2,900,0"],
    ("lee", WELCOME): ["KernelDied: the Python kernel died while running this cell"],
    ("mia", WELCOME): ["You submitted this notebook as 00_welcome-Copy1.ipynb"],
    ("kim", CUSTOM): [
        "Exercise 3.2: minigrad.gradcheck(lambda x: ScaledExp.apply(x, 2) * "
        "ScaledExp.apply(x, -1.5), x) disagrees with your backward"
    ],
}


def _run(course: Path, *args: str) -> str:
    """One instructor command, `nbgrader ARGS` in the course folder, as site/teaching.md
    gives it."""
    env = nbgrader_env()
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stderr[-4000:]}"
    return done.stderr


def _student_config(exchange: Path, home: Path, student: str, assignment: str) -> tuple:
    config = Config()
    config.CourseDirectory.course_id = "minigrad"
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(home / ".cache")
    config.Exchange.assignment_dir = str(home)
    coursedir = CourseDirectory(config=config, root=str(home))
    coursedir.assignment_id = assignment
    coursedir.student_id = student
    return config, coursedir


def _fill(notebook: nbformat.NotebookNode, lesson: Path, answers: dict) -> None:
    """Write the answers into the student's notebook: the lesson's solution for every exercise
    not in `answers`, in the cell of the same index."""
    source = nbformat.read(lesson, as_version=4)
    for index, role in exercise_cells(source, lesson.name):
        if role.kind != "exercise":
            continue
        cell = source.cells[index]
        given = answers.get(role.exercise)
        if given is None:
            filled = "\n".join(
                line for line in cell.source.splitlines() if line.strip() not in
                ("### BEGIN SOLUTION", "### END SOLUTION")
            )
        else:
            filled = with_wrong_answers(cell.source, given)
        assert notebook.cells[index].source.startswith(f"# Exercise {role.exercise}:")
        notebook.cells[index].source = filled


def _submit(exchange: Path, homes: Path, student: str, assignment: str, answers: dict,
            action: str | None) -> None:
    """The student's side: fetch the release, answer, maybe misbehave, submit."""
    home = homes / student
    home.mkdir(parents=True, exist_ok=True)
    config, coursedir = _student_config(exchange, home, student, assignment)
    authenticator = Authenticator(config=config)
    ExchangeFetchAssignment(coursedir=coursedir, authenticator=authenticator,
                            config=config).start()
    path = home / assignment / f"{assignment}.ipynb"
    fetched = path.read_text()
    notebook = nbformat.read(path, as_version=4)
    _fill(notebook, LESSONS / f"{assignment}.ipynb", answers)
    if action == "edit check 0.1":
        _edit_check_cell(notebook, "0.1")
    elif action == "delete check 0.3":
        _delete_check_cell(notebook, "0.3")
    elif action == "write answer":
        for cell in notebook.cells:
            if cell.source.startswith("*Your answer to Exercise 3.5"):
                cell.source = cell.source.split("\n", 1)[0] + "\n\n" + WRITTEN
    nbformat.write(notebook, path)
    if action == "execute":
        from nbclient import NotebookClient

        NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(notebook, path)
    elif action == "rename":
        path.rename(path.with_name(f"{assignment}-Copy1.ipynb"))
    elif action == "work in a copy":
        path.rename(path.with_name(f"{assignment}-Copy1.ipynb"))
        path.write_text(fetched)
    elif action == "empty":
        path.write_text("")
    ExchangeSubmit(coursedir=coursedir, authenticator=authenticator, config=config).start()


def _table(course: Path) -> dict[str, list[str]]:
    with open(course / "grades.csv", newline="") as file:
        rows = list(csv.reader(file))
    assert rows[0] == HEADER
    return {row[0]: row[1:] for row in rows[1:]}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory,
                 grading_sandbox: None) -> Path:
    base = tmp_path_factory.mktemp("class")
    course, exchange, homes = base / "course", base / "exchange", base / "students"
    exchange.mkdir()
    os.chmod(exchange, 0o777)  # nbgrader requires a world-writable exchange
    make_course(course, LESSONS, "minigrad", str(exchange), ["00", "03"])
    with open(course / "nbgrader_config.py", "a") as file:  # as an instructor would edit it
        file.write(f"c.Execute.timeout = {CELL_TIMEOUT_S}\n")
    for assignment in (WELCOME, CUSTOM):
        _run(course, "release_assignment", assignment)
    for student, work in CLASS.items():
        for assignment, (answers, action) in work.items():
            _submit(exchange, homes, student, assignment, answers, action)
    logs = []
    for assignment in (WELCOME, CUSTOM):
        _run(course, "collect", assignment)
        logs.append(_run(course, "autograde", assignment))
        _run(course, "generate_feedback", assignment)
    _run(course, "export", "--to", "grades.csv")
    (course / "autograde.log").write_text("\n".join(logs))
    return course


def test_the_score_table_is_exact(graded_class: Path) -> None:
    table = _table(graded_class)
    assert table == EXPECTED


def test_feedback_names_each_mistake(graded_class: Path) -> None:
    missing = []
    for (student, assignment), phrases in FEEDBACK.items():
        path = graded_class / "feedback" / student / assignment / f"{assignment}.html"
        # The text a student reads: tags (code spans, highlighted tracebacks) removed.
        text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text())) if path.exists() else ""
        missing += [f"{student}/{assignment}: {p!r}" for p in phrases if p not in text]
    assert not missing, "feedback without the mistake's message:\n" + "\n".join(missing)


def test_only_the_edited_check_cell_is_reported(graded_class: Path) -> None:
    """nbgrader saved each check cell's checksum with its hidden tests; an untouched cell
    must not be reported as changed, the one dee edited must."""
    log = (graded_class / "autograde.log").read_text()
    changed = [line for line in log.splitlines() if "has changed!" in line]
    assert len(changed) == 1 and "checksum' for cell check_0_1" in changed[0], changed


def test_feedback_shows_no_hidden_test_code_and_no_runaway_output(graded_class: Path) -> None:
    for path in (graded_class / "feedback").rglob("*.html"):
        text = path.read_text()
        assert "HIDDEN TESTS" not in text and "run_hidden" not in text, path
        assert path.stat().st_size < 2_000_000, path


def test_feedback_shows_no_correct_beside_a_failed_check(graded_class: Path) -> None:
    """hal's patched check printed "Exercise 0.1: correct." before the hidden tests failed
    it; kim's 3.2 passed the visible check first. Their feedback must not say correct."""
    for student, assignment, exercise in (("hal", WELCOME, "0.1"), ("kim", CUSTOM, "3.2")):
        path = graded_class / "feedback" / student / assignment / f"{assignment}.html"
        text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))
        # Printed output only: hal's own code, quoted in the feedback, has the words too.
        printed = re.findall(rf"(?<!['\"])Exercise {re.escape(exercise)}: correct\.", text)
        assert not printed, student


def test_a_written_answer_waits_for_a_grader_then_counts(graded_class: Path) -> None:
    """formgrader's manual score, set through the gradebook, reaches the export."""
    with Gradebook(f"sqlite:///{graded_class / 'gradebook.db'}", "minigrad") as gradebook:
        grade = gradebook.find_grade("answer_3_5", CUSTOM, CUSTOM, "ada")
        assert grade.needs_manual_grade
        grade.manual_score = 2
        grade.needs_manual_grade = False
        gradebook.db.commit()
    _run(graded_class, "export", "--to", "grades.csv")
    assert _table(graded_class)["ada"] == ["1", "1", "1", "1", "1", "1", "2", "1", "2", "11", "11"]


def test_the_release_holds_no_solution_or_hidden_test(graded_class: Path) -> None:
    for assignment in (WELCOME, CUSTOM):
        released = (graded_class / "release" / assignment / f"{assignment}.ipynb").read_text()
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "run_hidden"):
            assert marker not in released
    released = (graded_class / "release" / CUSTOM / f"{CUSTOM}.ipynb").read_text()
    assert "the sign is lost" not in released and "the lost sign" not in released
    shutil.rmtree(graded_class / "release" / WELCOME / ".ipynb_checkpoints", ignore_errors=True)

"""Submissions nbgrader alone cannot grade, graded anyway, and the smaller grading fixes.

A tampered notebook (a check cell pasted twice, a forged graded cell worth 100 points, a
check's points raised, garbage metadata, a renamed grade_id) makes nbgrader's autograde fail
the whole submission: every exercise `!`, 0 points. The end-to-end test submits each through
nbgrader's exchange, collects, autogrades, exports and generates feedback with nbgrader's
commands, and asserts the exact scores and the note in the feedback; one submission is put
into submitted/ by hand, so that autograde's own repair (RepairCells) is what saves it.
Unit tests cover repair_cells itself, the timeout's message, a written answer's feedback
before it is graded, make_course's message and permissions, the CSV's max_score per row and
collect's owner check.
"""

from __future__ import annotations

import copy
import csv
import html
import logging
import os
import re
import stat
import sys
from pathlib import Path

import nbformat
import pytest
from test_class_grading import _fill, _run, _student_config

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.auth import Authenticator  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit  # noqa: E402
from nbgrader.nbgraderformat import MetadataValidator  # noqa: E402
from nbgrader.preprocessors import Execute  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.grading import collect, make_course  # noqa: E402
from minigrad.course.grading.make_course import nbgrader_env  # noqa: E402
from minigrad.course.grading.nbgrader_steps import (  # noqa: E402
    TIMEOUT_MESSAGE,
    ShortCheckTracebacks,
)
from minigrad.course.grading.repair_cells import released_notebook, repair_cells  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
WELCOME = "00_welcome"
CELL_TIMEOUT_S = 10
SIGN_ERROR = {"0.1": ["slope_by_hand = 13.0"]}


@pytest.fixture(autouse=True)
def _alembic_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """nbgrader's Gradebook runs `alembic` from PATH to set up a new gradebook."""
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])


def _find(notebook: nbformat.NotebookNode, start: str) -> int:
    return next(i for i, cell in enumerate(notebook.cells) if cell.source.startswith(start))


def _paste_check_twice(notebook: nbformat.NotebookNode) -> None:
    """Copy-paste: the check cell of 0.1 again right after itself."""
    at = _find(notebook, "# Check Exercise 0.1")
    notebook.cells.insert(at + 1, copy.deepcopy(notebook.cells[at]))


def _forge_bonus(notebook: nbformat.NotebookNode) -> None:
    cell = nbformat.v4.new_code_cell("print('bonus!')")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "my_bonus", "points": 100,
                                 "locked": False, "solution": False, "schema_version": 3}
    notebook.cells.append(cell)


def _raise_points(notebook: nbformat.NotebookNode) -> None:
    notebook.cells[_find(notebook, "# Check Exercise 0.2")].metadata.nbgrader["points"] = 50


def _garbage(notebook: nbformat.NotebookNode) -> None:
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {"abc": {"model_name": "IntSliderModel"}}, "version_major": 2,
        "version_minor": 0}}
    notebook.metadata["my_editor"] = ["anything"]
    notebook.cells[3].metadata["foo"] = {"bar": 1}
    notebook.cells[5].metadata["tags"] = "not a list"
    notebook.cells[_find(notebook, "# Check Exercise 0.3")].metadata.nbgrader["extra"] = "x"


def _rename(notebook: nbformat.NotebookNode) -> None:
    """The student renames exercise 0.2 in both of its cells' grade_ids."""
    for start in ("# Exercise 0.2", "# Check Exercise 0.2"):
        roles = notebook.cells[_find(notebook, start)].metadata.nbgrader
        roles["grade_id"] += "_mine"


def _everything(notebook: nbformat.NotebookNode) -> None:
    for tamper in (_paste_check_twice, _forge_bonus, _raise_points, _garbage):
        tamper(notebook)


# student -> (answers, tampering); "hand" is put into submitted/ by hand, after collect.
CLASS = {
    "dup": ({}, _paste_check_twice),
    "fake": ({}, _forge_bonus),
    "points": (SIGN_ERROR, _raise_points),
    "garbage": (SIGN_ERROR, _garbage),
    "renamed": ({}, _rename),
    "hand": ({}, _everything),
}
EXPECTED = {  # 0.1, 0.2, 0.3, 0.4, total, max_score
    "dup": ["1", "1", "1", "1", "4", "4"],
    "fake": ["1", "1", "1", "1", "4", "4"],
    "points": ["0", "1", "1", "1", "3", "4"],
    "garbage": ["0", "1", "1", "1", "3", "4"],
    "renamed": ["1", "1", "1", "1", "4", "4"],
    "hand": ["1", "1", "1", "1", "4", "4"],
}
FEEDBACK = {  # the note each feedback opens with, as a student reads it (code spans as text)
    "dup": ["Note from grading", "check_0_1 was in the notebook 2 times"],
    "fake": ["Note from grading", "my_bonus", "was run as an ordinary cell"],
    "points": ["Note from grading", "check_0_2 had its grading settings changed (points 50"],
    "garbage": ["a sign error"],
    "renamed": ["Note from grading", "exercise_0_2_mine", "check_0_2_mine",
                "was missing from the submission"],
    "hand": ["Note from grading", "check_0_1 was in the notebook 2 times", "my_bonus",
             "points 50"],
}


def _submit(exchange: Path, homes: Path, student: str) -> nbformat.NotebookNode:
    """Fetch, answer, tamper, submit; returns the notebook submitted."""
    answers, tamper = CLASS[student]
    home = homes / student
    home.mkdir(parents=True)
    config, coursedir = _student_config(exchange, home, student, WELCOME)
    authenticator = Authenticator(config=config)
    ExchangeFetchAssignment(coursedir=coursedir, authenticator=authenticator,
                            config=config).start()
    path = home / WELCOME / f"{WELCOME}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    _fill(notebook, LESSONS / f"{WELCOME}.ipynb", answers)
    tamper(notebook)
    nbformat.write(notebook, path)
    ExchangeSubmit(coursedir=coursedir, authenticator=authenticator, config=config).start()
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory,
           grading_sandbox: None) -> Path:
    base = tmp_path_factory.mktemp("repairs")
    course, exchange, homes = base / "course", base / "exchange", base / "students"
    make_course.make_course(course, LESSONS, "minigrad", str(exchange), ["00"])
    with open(course / "nbgrader_config.py", "a") as file:
        file.write(
            f"c.Execute.timeout = {CELL_TIMEOUT_S}\n"
            "# autograde's own repair, first (as config.py is to have it)\n"
            "from minigrad.course.grading.repair_cells import RepairCells\n"
            "_steps = [s for s in c.Autograde.sanitize_preprocessors if s is not RepairCells]\n"
            "c.Autograde.sanitize_preprocessors = [RepairCells, *_steps]\n"
        )
    _run(course, "release_assignment", WELCOME)
    submitted = {student: _submit(exchange, homes, student) for student in CLASS}
    _run(course, "collect", WELCOME)
    # As an instructor copying a submission in by hand (or nbgrader's zip_collect) would.
    nbformat.write(submitted["hand"], course / "submitted" / "hand" / WELCOME / f"{WELCOME}.ipynb")
    log = _run(course, "autograde", WELCOME)
    (course / "autograde.log").write_text(log)
    _run(course, "generate_feedback", WELCOME)
    _run(course, "export", "--to", "grades.csv")
    return course


def _feedback_text(course: Path, student: str) -> str:
    path = course / "feedback" / student / WELCOME / f"{WELCOME}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text())) if path.exists() else ""


def test_every_tampered_submission_is_graded_exactly(graded: Path) -> None:
    with open(graded / "grades.csv", newline="") as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["student_id", "0.1", "0.2", "0.3", "0.4", "total", "max_score"]
    assert {row[0]: row[1:] for row in rows[1:]} == EXPECTED


def test_the_feedback_carries_the_note(graded: Path) -> None:
    missing = [f"{student}: {phrase!r}" for student, phrases in FEEDBACK.items()
               for phrase in phrases if phrase not in _feedback_text(graded, student)]
    assert not missing, "\n".join(missing)


def test_collect_repaired_and_autograde_repaired_the_one_copied_in(graded: Path) -> None:
    """Collect repaired what came through the exchange, so autograde's RepairCells had only
    the submission copied in by hand to repair (once: one note, not two)."""
    log = (graded / "autograde.log").read_text()
    assert "hand: `check_0_1` was in the notebook 2 times" in log
    assert "dup: " not in log and "fake: " not in log
    for student in CLASS:
        path = graded / "autograded" / student / WELCOME / f"{WELCOME}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        notes = [cell for cell in notebook.cells if "Note from grading" in cell.source]
        assert len(notes) == (0 if student == "garbage" else 1), student
        assert set(notebook.metadata) <= {"kernelspec", "language_info"}, student
        ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in notebook.cells]
        assert ids.count("check_0_1") == 1 and "my_bonus" not in ids, student


def test_the_course_folder_is_private_and_the_exchange_open(graded: Path) -> None:
    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(graded) == 0o700 and mode(graded / "source") == 0o700
    assert mode(graded / "gradebook.db") == 0o600
    assert mode(graded.parent / "exchange") == 0o777


def test_released_notebook_from_the_gradebook_is_the_release(graded: Path) -> None:
    release = nbformat.read(graded / "release" / WELCOME / f"{WELCOME}.ipynb", as_version=4)
    graded_cells = [cell for cell in release.cells if "nbgrader" in cell.metadata]
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}") as gradebook:
        rebuilt = released_notebook(gradebook, WELCOME, WELCOME)
    assert len(rebuilt.cells) == len(graded_cells)
    for built, cell in zip(rebuilt.cells, graded_cells):
        expected = {key: value for key, value in cell.metadata.nbgrader.items()
                    if key != "checksum"}  # the gradebook's is of the cell with hidden tests
        assert {k: v for k, v in built.metadata.nbgrader.items() if k != "checksum"} == expected
        if not cell.metadata.nbgrader.solution:
            assert built.source == cell.source


# --- repair_cells on small notebooks -----------------------------------------------------

def _roles(grade_id: str, **roles: object) -> dict:
    base = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
            "solution": False, "task": False}
    return {**base, **roles}


def _release() -> nbformat.NotebookNode:
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# A lesson"),
        v4.new_code_cell("answer = None", metadata={"nbgrader": _roles("exercise_1",
                                                                        solution=True)}),
        v4.new_code_cell("check(answer)", metadata={
            "nbgrader": _roles("check_1", grade=True, locked=True, points=1),
            "editable": False, "deletable": False}),
        v4.new_markdown_cell("*Your answer*", metadata={
            "nbgrader": _roles("answer_2", grade=True, solution=True, points=2)}),
    ]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return v4.new_notebook(cells=cells, metadata={"kernelspec": kernel,
                                                  "language_info": {"name": "python"}})


def _ids(notebook: nbformat.NotebookNode) -> list[str | None]:
    return [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in notebook.cells]


def _valid(notebook: nbformat.NotebookNode) -> None:
    nbformat.validate(notebook)
    MetadataValidator().validate_nb(notebook)


def test_an_untouched_submission_is_left_as_it_is() -> None:
    release = _release()
    submission = copy.deepcopy(release)
    assert repair_cells(submission, release) == []
    assert submission == release


def test_a_forged_graded_cell_becomes_an_ordinary_cell() -> None:
    release, submission = _release(), _release()
    _forge_bonus(submission)
    submission.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {}}))
    notes = repair_cells(submission, release)
    assert len(notes) == 1 and "`my_bonus`" in notes[0]
    assert _ids(submission) == [None, "exercise_1", "check_1", "answer_2", None, None]
    assert submission.cells[-2].source == "print('bonus!')"  # its code still runs
    _valid(submission)


def test_a_pasted_check_cell_is_removed_and_the_original_kept() -> None:
    release, submission = _release(), _release()
    pasted = copy.deepcopy(submission.cells[2])
    submission.cells[2].source = "print('correct.')"  # the student edited the original
    submission.cells.insert(1, pasted)  # and pasted an unedited copy above the exercise
    notes = repair_cells(submission, release)
    assert notes == ["`check_1` was in the notebook 2 times: the copies were removed (the "
                     "instructor's cell runs, as released)."]
    assert _ids(submission) == [None, "check_1", "exercise_1", "answer_2"]
    assert submission.cells[1].source == "check(answer)"  # the copy equal to the release
    _valid(submission)


def test_a_pasted_answer_keeps_the_one_in_place_graded() -> None:
    release, submission = _release(), _release()
    submission.cells.insert(4, copy.deepcopy(submission.cells[3]))
    submission.cells[4].source = "my second thoughts"
    notes = repair_cells(submission, release)
    assert len(notes) == 1 and "`answer_2` was in the notebook 2 times" in notes[0]
    assert _ids(submission) == [None, "exercise_1", "check_1", "answer_2", None]
    assert submission.cells[4].source == "my second thoughts"  # kept, as an ordinary cell
    _valid(submission)


def test_raised_points_and_changed_roles_are_the_release_s_again() -> None:
    release, submission = _release(), _release()
    submission.cells[2].metadata.nbgrader.update(points=50, locked=False, extra="x")
    notes = repair_cells(submission, release)
    assert notes == ["`check_1` had its grading settings changed (locked False → True, "
                     "points 50 → 1); it was graded as released."]
    assert submission.cells[2].metadata.nbgrader == release.cells[2].metadata.nbgrader
    _valid(submission)


def test_garbage_metadata_is_dropped_without_a_note() -> None:
    release, submission = _release(), _release()
    submission.metadata.update(widgets={"state": {}}, kernelspec={"name": "evil"},
                               my_editor=[1])
    submission.cells[0].metadata.update(foo={"bar": 1}, tags="oops", collapsed="no")
    submission.cells[1].metadata.update(tags=["raises-exception"], jupyter={"a": True})
    assert repair_cells(submission, release) == []
    assert submission.metadata == release.metadata  # the release's kernel, nothing else
    assert submission.cells[0].metadata == {}
    assert submission.cells[1].metadata.tags == ["raises-exception"]
    assert submission.cells[1].metadata.jupyter == {"a": True}
    _valid(submission)


def test_a_renamed_or_missing_check_is_not_added_here() -> None:
    """nbgrader's add_missing_cells puts a missing check back, after the repair."""
    release, submission = _release(), _release()
    submission.cells[2].metadata.nbgrader.grade_id = "check_1_renamed"
    notes = repair_cells(submission, release)
    assert len(notes) == 1 and "`check_1_renamed`" in notes[0]
    assert _ids(submission) == [None, "exercise_1", None, "answer_2"]
    _valid(submission)


# --- a cell that runs past the per-cell timeout ------------------------------------------

def test_a_timed_out_cell_says_so_in_words(tmp_path: Path) -> None:
    """A real timeout under nbgrader's Execute, then the feedback's ShortCheckTracebacks."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print('before')\nwhile True:\n    pass"),
        nbformat.v4.new_code_cell("print('after')"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    config = Config()
    config.Execute.timeout = 2  # as a course's nbgrader_config.py sets it
    Execute(config=config).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    names = [o.ename for o in notebook.cells[0].outputs if o.output_type == "error"]
    assert names == ["KeyboardInterrupt", "CellTimeoutError"]  # what nbgrader leaves
    ShortCheckTracebacks(config=config).preprocess(notebook, {})
    errors = [o for o in notebook.cells[0].outputs if o.output_type == "error"]
    message = TIMEOUT_MESSAGE.format(seconds=2)
    assert message == ("this cell ran longer than the per-cell limit of 2 s (c.Execute.timeout) "
                       "and was stopped; the cells after it still ran.")
    assert [(e.ename, e.evalue, e.traceback) for e in errors] == [
        ("CellTimeoutError", message, [f"CellTimeoutError: {message}"])
    ]
    assert notebook.cells[0].outputs[0].text == "before\n"
    assert notebook.cells[1].outputs[0].text == "after\n"


# --- a written answer's feedback before a grader has scored it ---------------------------

def _feedback_html(course: Path, notebook: nbformat.NotebookNode) -> str:
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters.generate_feedback import GenerateFeedback
    from nbgrader.preprocessors import GetGrades

    from minigrad.course.grading.not_graded_yet import NotGradedYet

    # As GenerateFeedback sets its exporter up: nbgrader's template, and its stylesheet.
    formgrader = (Path(sys.modules[GenerateFeedback.__module__].__file__).parents[1]
                  / "server_extensions" / "formgrader")
    exporter = HTMLExporter(
        template_name="feedback", extra_template_basedirs=[str(formgrader / "templates")],
        extra_template_paths=[str(formgrader / "static/node_modules/bootstrap/dist/css")],
    )
    resources = {"nbgrader": {"db_url": f"sqlite:///{course / 'gradebook.db'}",
                              "notebook": "lesson", "assignment": "a", "student": "ada"}}
    for step in (NotGradedYet(), GetGrades()):
        notebook, resources = step.preprocess(notebook, resources)
    page, _ = exporter.from_notebook_node(notebook, resources)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_written_answer_awaits_a_grader_in_the_feedback(tmp_path: Path) -> None:
    release = _release()
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("a")
        gradebook.add_notebook("lesson", "a")
        gradebook.add_solution_cell("exercise_1", "lesson", "a")
        gradebook.add_grade_cell("check_1", "lesson", "a", max_score=1, cell_type="code")
        gradebook.add_grade_cell("answer_2", "lesson", "a", max_score=2, cell_type="markdown")
        gradebook.add_solution_cell("answer_2", "lesson", "a")
        gradebook.add_student("ada")
        gradebook.add_submission("a", "ada")
        check = gradebook.find_grade("check_1", "lesson", "a", "ada")
        check.auto_score, check.needs_manual_grade = 1, False
        gradebook.db.commit()
    page = _feedback_html(tmp_path, copy.deepcopy(release))
    assert "Score: ? / 2 — not graded yet." in page
    assert "0.0 / 2.0" not in page and "Score: 1.0 / 1.0" in page
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        answer = gradebook.find_grade("answer_2", "lesson", "a", "ada")
        answer.manual_score, answer.needs_manual_grade = 2, False
        gradebook.db.commit()
    page = _feedback_html(tmp_path, copy.deepcopy(release))
    assert "not graded yet" not in page and "Score: 2.0 / 2.0" in page


# --- make course: its message, and a private course folder -------------------------------

def test_a_second_make_course_counts_what_release_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def generate(course: Path, *args: str) -> None:  # nbgrader generate_assignment, quickly
        (course / "release" / args[1]).mkdir(parents=True, exist_ok=True)
        (course / "gradebook.db").touch()

    monkeypatch.setattr(make_course, "nbgrader", generate)
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    make_course.main([str(course), "--exchange", str(exchange), "--lessons", "00"])
    assert "1 assignment generated now; " in capsys.readouterr().out
    make_course.main([str(course), "--exchange", str(exchange), "--lessons", "00,03"])
    out = capsys.readouterr().out
    assert f"kept your copy of {course}/source/00_welcome/00_welcome.ipynb" in out
    assert (f"2 assignments generated now; {course}/release/ holds 2 assignments: "
            "00_welcome, 03_custom_functions.") in out
    assert stat.S_IMODE(course.stat().st_mode) == 0o700
    assert stat.S_IMODE((course / "source").stat().st_mode) == 0o700
    assert stat.S_IMODE((course / "gradebook.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o777


def test_make_course_refuses_an_exchange_inside_the_course(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="is inside the course folder"):
        make_course.make_course(tmp_path, LESSONS, exchange=str(tmp_path / "exchange"),
                                only=["00"], generate=False)


# --- the CSV's max_score: over what each student submitted -------------------------------

def test_max_score_counts_the_assignments_a_student_submitted(tmp_path: Path) -> None:
    from minigrad.course.grading.csv_export import ExerciseGradesCsv

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        for lesson, cells in (("00_a", {"check_0_1": 1, "check_0_2": 2}),
                              ("03_b", {"check_3_1": 4})):
            gradebook.add_assignment(lesson)
            gradebook.add_notebook(lesson, lesson)
            for name, points in cells.items():
                gradebook.add_grade_cell(name, lesson, lesson, max_score=points,
                                         cell_type="code")
        for student, lessons in (("ada", ["00_a", "03_b"]), ("ben", ["00_a"]),
                                 ("cai", ["03_b"]), ("dee", [])):
            gradebook.add_student(student)
            for lesson in lessons:
                gradebook.add_submission(lesson, student)
                for grade in gradebook.find_submission(lesson, student).notebooks[0].grades:
                    grade.auto_score, grade.needs_manual_grade = 1, False
        gradebook.db.commit()

        def export(*assignment: str) -> list[list[str]]:
            destination = tmp_path / "grades.csv"
            ExerciseGradesCsv(to=str(destination), assignment=list(assignment),
                              student=[]).export(gradebook)
            with open(destination, newline="") as file:
                return list(csv.reader(file))

        assert export() == [
            ["student_id", "0.1", "0.2", "3.1", "total", "max_score"],
            ["ada", "1", "1", "1", "3", "7"],
            ["ben", "1", "1", "", "2", "3"],
            ["cai", "", "", "1", "1", "4"],
            ["dee", "", "", "", "0", "0"],
        ]
        assert [row[-2:] for row in export("03_b")] == [
            ["total", "max_score"], ["1", "4"], ["0", "0"], ["1", "4"], ["0", "0"]
        ]


# --- collect: a submission made by another Unix user under a student's name ---------------

def _inbound(exchange: Path, student: str, second: int) -> str:
    """One submission folder in the exchange, as `nbgrader submit` leaves it."""
    stamp = f"2026-01-05 10:00:{second:02d}.000000 UTC"
    folder = exchange / "minigrad" / "inbound" / f"{student}+00_tiny+{stamp}+{second:04x}"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / "00_tiny.ipynb")
    (folder / "timestamp.txt").write_text(stamp)
    return folder.name


def test_collect_refuses_a_submission_made_by_another_unix_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    (course / "release" / "00_tiny").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), course / "release" / "00_tiny" / "00_tiny.ipynb")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("00_tiny")
    owners = {  # the folder -> its owner, as `os.stat` and `pwd` would say
        _inbound(exchange, "bob", 1): "bob",  # bob's own, earlier
        _inbound(exchange, "bob", 2): "alice",  # alice, as bob, later: refused
        _inbound(exchange, "fay", 3): "alice",  # only alice's, as fay: nothing collected
        _inbound(exchange, "carl", 4): "carl",
        _inbound(exchange, "hub_user", 5): "alice",  # not a Unix user here: a hub's name
        _inbound(exchange, "erin", 6): "root",  # copied in by an administrator
        _inbound(exchange, 'x"><img src=x onerror=alert(1)>', 7): "root",  # markup as an id
    }
    users = {"alice", "bob", "carl", "erin", "fay", "root"}
    monkeypatch.setattr(collect, "_unix_owner", lambda path: owners[os.path.basename(path)])
    monkeypatch.setattr(collect, "_is_unix_user", lambda name: name in users)
    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = "minigrad"
    config.Exchange.root = str(exchange)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = "00_tiny"
    logger = logging.getLogger("test_collect")
    with caplog.at_level(logging.WARNING, logger="test_collect"):
        collect.RepairingCollect(coursedir=coursedir, authenticator=Authenticator(config=config),
                                 config=config, log=logger).start()
    collected = sorted(path.name for path in (course / "submitted").iterdir())
    assert collected == ["bob", "carl", "erin", "hub_user"]
    stamp = (course / "submitted" / "bob" / "00_tiny" / "timestamp.txt").read_text()
    assert stamp == "2026-01-05 10:00:01.000000 UTC"  # bob's own, not alice's later one
    refused = sorted(r.getMessage() for r in caplog.records
                     if r.getMessage().startswith("Not collecting"))
    assert len(refused) == 3
    assert "submitted as student 'bob'" in refused[0] and "Unix user 'alice'" in refused[0]
    assert "submitted as student 'fay'" in refused[1]
    assert "may hold only letters, digits" in refused[2]
    assert "c.ExchangeCollect.check_owner = False" in refused[0]


def test_the_owner_is_read_from_the_folder(tmp_path: Path) -> None:
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    assert collect._unix_owner(str(tmp_path)) == me
    assert collect._is_unix_user(me) and not collect._is_unix_user("no-such-user-here-42")

"""The sandbox a graded submission's kernel runs in (minigrad/course/grading/sandbox.py) and
the execution step that uses it (sandboxed_execute.py), on small notebooks.

What a process inside can see and do is asked of the process itself (it reports back as
data); the hidden-test rules are checked on the executed notebook nbgrader would save.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from minigrad.course.grading import sandbox  # noqa: E402
from minigrad.course.grading.sandboxed_execute import (  # noqa: E402
    SandboxedExecute,
    _answer_names,
    _split_hidden,
)

ROOT = Path(__file__).resolve().parent.parent
try:
    sandbox.isolation()
    MISSING = None
except sandbox.SandboxUnavailableError as error:
    MISSING = str(error)
needs_sandbox = pytest.mark.skipif(MISSING is not None, reason=f"no sandbox here: {MISSING}")

PROBE = """
import json, os, resource, socket
report = {"uid": os.getuid(), "ppid": os.getppid(), "cwd": os.getcwd(),
          "files": sorted(os.listdir(".")), "secret": os.path.exists(SECRET),
          "repo_lessons": os.path.exists(REPO + "/lessons"),
          "package": os.path.exists(REPO + "/minigrad/__init__.py"),
          "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
          "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
          "environment": sorted(os.environ)}
try:
    open(REPO + "/minigrad/probe.txt", "w")
    report["package_writable"] = True
except OSError:
    report["package_writable"] = False
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=1)
    report["network"] = "connected"
except OSError as error:
    report["network"] = type(error).__name__
print(json.dumps(report))
"""


@needs_sandbox
def test_a_sandboxed_process_sees_only_its_folder_and_the_runtime(tmp_path: Path) -> None:
    secret = tmp_path / "course" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("grades")
    server = __import__("socket").socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    slot = sandbox.Slot()
    workdir = sandbox.make_workdir(slot)
    try:
        (workdir / "own.txt").write_text("mine")
        code = (f"SECRET = {str(secret)!r}\nREPO = {str(ROOT)!r}\n"
                f"PORT = {server.getsockname()[1]}\n" + PROBE)
        command = sandbox.sandboxed([sys.executable, "-c", code], workdir, "bwrap",
                                    sandbox.Limits(cpu_s=30), slot, [tmp_path])
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, HUB_API_TOKEN="secret"))
    finally:
        server.close()
        slot.release()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cwd"] == str(workdir) and report["files"] == ["own.txt"]
    assert not report["secret"] and not report["repo_lessons"]
    assert report["package"] and not report["package_writable"]
    assert report["network"] in ("ConnectionRefusedError", "OSError")
    assert report["ppid"] in (0, 1)  # the sandbox's own init, never the grader
    assert report["cpu"] == 30
    assert "HUB_API_TOKEN" not in report["environment"]
    if os.geteuid() == 0:
        assert report["uid"] == slot.uid and report["nproc"] == sandbox.Limits.processes
    assert not (ROOT / "minigrad" / "probe.txt").exists()


def test_the_runtime_holds_the_package_but_not_the_repository() -> None:
    paths = sandbox._runtime_paths()
    assert (ROOT / "minigrad").resolve() in paths or any(
        (ROOT / "minigrad").resolve().is_relative_to(path) for path in paths
    )
    assert ROOT.resolve() not in paths
    assert not any((ROOT / "lessons").resolve().is_relative_to(path) for path in paths)


def test_a_course_folder_inside_the_runtime_is_covered(tmp_path: Path) -> None:
    inside = Path(sys.prefix) / "course-by-mistake"
    slot = sandbox.Slot()
    try:
        command = sandbox.sandboxed(["true"], tmp_path, "bwrap", sandbox.Limits(), slot,
                                    [inside])
    finally:
        slot.release()
    position = command.index(str(inside))
    assert command[position - 1] == "--tmpfs"


def test_unsafe_mode_runs_the_command_as_it_is(tmp_path: Path) -> None:
    assert sandbox.sandboxed(["python", "-V"], tmp_path, "unsafe", sandbox.Limits(), None,
                             []) == ["python", "-V"]


def test_hidden_tests_are_split_from_the_check_and_their_answers_named() -> None:
    cell = ("lesson03.check_3_1(Cube)\n### BEGIN HIDDEN TESTS\nfrom minigrad.course import "
            "grading\n\ndef hidden_tests(check, Cube):\n    pass\n\n"
            "grading.run_hidden('3.1', hidden_tests, Cube, other)\n### END HIDDEN TESTS")
    visible, hidden = _split_hidden(cell)
    assert visible == "lesson03.check_3_1(Cube)"
    assert "def hidden_tests" in hidden and "BEGIN" not in hidden
    assert _answer_names(hidden) == ["Cube", "other"]


def _notebook(*sources: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(notebook.cells):
        if "### BEGIN HIDDEN TESTS" in cell.source:
            cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"check_{index}",
                                         "points": 1, "solution": False, "locked": True}
    return notebook


def _execute(notebook: nbformat.NotebookNode, folder: Path, **options) -> list[list]:
    executor = SandboxedExecute(timeout=options.pop("timeout", 20), **options)
    executor.preprocess(notebook, {"metadata": {"path": str(folder)}, "unique_key": "nb"})
    return [
        [output.get("text") or f"{output.get('ename')}: {output.get('evalue')}"
         for output in cell.outputs]
        for cell in notebook.cells
    ]


def _check(answer: str, test: str) -> str:
    """A check cell whose hidden tests assert `test` about `answer`, printing on the way."""
    return (
        f"print('visible check of', {answer!r})\n### BEGIN HIDDEN TESTS\n"
        "from minigrad.course import grading\n\n"
        f"def hidden_tests(check, value):\n    print('HIDDEN PRINTOUT')\n"
        f"    if not ({test}):\n        check.fail('9.9', 'the hidden case fails')\n\n"
        f"grading.run_hidden('9.9', hidden_tests, {answer})\n### END HIDDEN TESTS"
    )


@needs_sandbox
def test_hidden_tests_run_last_quietly_on_the_answer_as_checked(tmp_path: Path) -> None:
    notebook = _notebook(
        "answer = 2",
        _check("answer", "value == 2"),
        "answer = 3  # later cells may reuse the name",
        "wrong = 5",
        _check("wrong", "value == 4"),
        "print([text for text in In if 'HIDDEN' + ' PRINTOUT' in text])",
    )
    outputs = _execute(notebook, tmp_path)
    assert outputs[1] == ["visible check of answer\n"]  # passed, and no hidden printout
    assert outputs[4][0] == "visible check of wrong\n"
    assert outputs[4][1].startswith("CheckError: Exercise 9.9: the hidden case fails")
    assert outputs[5] == ["[]\n"]
    assert "HIDDEN PRINTOUT" not in json.dumps(outputs)
    # The notebook nbgrader saves keeps the check cells as they were, hidden tests included.
    assert "### BEGIN HIDDEN TESTS" in notebook.cells[1].source


@needs_sandbox
def test_a_dead_kernel_is_replaced_and_the_answers_taken_again(tmp_path: Path) -> None:
    notebook = _notebook(
        "answer = 2",
        _check("answer", "value == 2"),
        "import os\nos._exit(1)",
        "print('still graded', answer)",
    )
    outputs = _execute(notebook, tmp_path)
    assert outputs[1] == ["visible check of answer\n"]  # its hidden tests passed too
    assert outputs[2][0].startswith("KernelDied")
    assert outputs[3] == ["still graded 2\n"]


@needs_sandbox
def test_an_endless_cell_is_stopped_and_a_runaway_submission_ends(tmp_path: Path) -> None:
    notebook = _notebook("while True:\n    pass", "print('next')", "import time\ntime.sleep(30)",
                         "time.sleep(30)", "print('never')")
    outputs = _execute(notebook, tmp_path, timeout=2, submission_timeout=5)
    assert any("CellTimeoutError" in text for text in outputs[0])
    assert outputs[1] == ["next\n"]
    assert outputs[4][0].startswith("NotRun: this cell was not run")


@needs_sandbox
def test_a_flood_of_output_is_dropped_past_the_cap(tmp_path: Path) -> None:
    notebook = _notebook("for _ in range(30):\n    print('x' * 1_000_000)", "print('after')")
    outputs = _execute(notebook, tmp_path)
    assert sum(len(text) for text in outputs[0]) < 21_000_000
    assert "dropped when graded" in outputs[0][-1]
    assert outputs[1] == ["after\n"]

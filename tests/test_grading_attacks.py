"""Hostile submissions graded as site/teaching.md says (`make grade`, nbgrader's commands), each
kernel in its sandbox: none can reach the course folder, the grader, the network or another
student, and each still gets the grade its own answers earn.

The attackers know where the course folder and the repository are (the test tells them), as
a student on the instructor's own machine could guess. Every attack prints what it got, and
the test reads that printout in the autograded notebook, checks the gradebook, the installed
package and the other students' grades afterwards, and asserts the exact score table.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import nbformat
import pytest
from test_class_grading import _run, _submit

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from minigrad.course.grading.grade import grade  # noqa: E402
from minigrad.course.grading.make_course import make_course  # noqa: E402
from minigrad.course.grading.sandbox import SandboxUnavailableError, isolation  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
WELCOME = "00_welcome"
PACKAGE_FILE = ROOT / "minigrad" / "course" / "lesson00.py"
MARKER = Path("/tmp") / f"minigrad-attack-{uuid.uuid4().hex}"

RIGHT_0_1 = "slope_by_hand = 11.0\n"


def _attack(code: str) -> dict:
    """Answers for lesson 00: the attack code, then the right answer to Exercise 0.1."""
    return {"0.1": [code + "\n" + RIGHT_0_1]}


GRADEBOOK = """
import os, sqlite3
for path in [COURSE + "/gradebook.db", os.path.join(os.getcwd(), "../../../gradebook.db")]:
    try:
        db = sqlite3.connect("file:" + path + "?mode=rw", uri=True)
        db.execute("UPDATE grade SET auto_score = 0, manual_score = 0")
        db.commit()
        print("ATTACK gradebook: rewrote", path)
    except Exception as error:
        print("ATTACK gradebook: blocked", type(error).__name__)
"""

SOLUTIONS = """
import glob, json, os
HIDDEN, SOLUTION = "BEGIN " + "HIDDEN TESTS", "BEGIN " + "SOLUTION"
paths = set()
for pattern in [COURSE + "/source/*/*.ipynb", COURSE + "/release/*/*.ipynb",
                COURSE + "/autograded/*/*/*.ipynb", COURSE + "/submitted/*/*/*.ipynb",
                REPO + "/lessons/*.ipynb", "*.ipynb", "../../*/*/*.ipynb", "/tmp/*/*.ipynb"]:
    paths |= {os.path.realpath(path) for path in glob.glob(pattern)}
texts = [open(path).read() for path in sorted(paths)]
print("ATTACK solutions: notebooks", len(paths), "with hidden tests",
      sum(HIDDEN in text for text in texts), "with solutions",
      sum(SOLUTION in text for text in texts))
slope_by_hand = None
for text in texts:
    for cell in json.loads(text)["cells"]:
        source = "".join(cell["source"])
        if source.startswith("# Exercise 0.1") and SOLUTION in source and "ATTACK" not in source:
            exec(source)
"""

HISTORY = """
import gc, linecache
marks = ("run_" + "hidden", "hidden_" + "tests")
seen = [text for text in In if any(mark in text for mark in marks)]
cached = [name for name, entry in linecache.cache.items()
          if any(mark in "".join(entry[2] if len(entry) > 2 else []) for mark in marks)]
functions = [o for o in gc.get_objects() if getattr(o, "__name__", "") == marks[1]]
print("ATTACK history: inputs", len(seen), "cached", len(cached), "functions", len(functions))
"""

KILL = """
import os, signal
for target in (os.getppid(), 1, -1):
    try:
        os.kill(target, signal.SIGKILL)
    except Exception as error:
        print("ATTACK kill", target, type(error).__name__)
"""

ESCAPE = """
import os, socket
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2)
    print("ATTACK network: connected")
except OSError as error:
    print("ATTACK network: blocked", type(error).__name__)
try:
    open(PACKAGE, "a").write("# changed by a student\\n")
    print("ATTACK package: changed")
except OSError as error:
    print("ATTACK package: blocked", type(error).__name__)
open(MARKER, "w").write("outside /tmp?")
print("ATTACK home:", os.path.expanduser("~"), "visible:", os.path.exists("/root/.ssh"),
      os.path.exists(COURSE), os.path.exists(REPO + "/lessons"))
print("ATTACK environment:", sorted(name for name in os.environ if "TOKEN" in name))
"""

RESOURCES = """
import os, signal, time
try:
    with open("big.bin", "wb") as file:
        file.write(b"x" * (512 * 2**20))
    print("ATTACK disk: wrote 512 MiB")
except OSError as error:
    print("ATTACK disk: refused", type(error).__name__)
try:
    hog = bytearray(16 * 2**30)
    print("ATTACK memory: got 16 GiB")
except MemoryError:
    print("ATTACK memory: refused")
print("x" * 5_000_000)
children = []
try:
    for _ in range(5000):
        pid = os.fork()
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        children.append(pid)
    print("ATTACK fork: unbounded")
except OSError as error:
    print("ATTACK fork: refused after", len(children), "children")
for pid in children:  # the kernel itself needs threads to go on
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
"""

SCRIPT = """
from IPython.display import HTML, Javascript, display
display(HTML("<script>document.title = 'pwned'</script><b id='pwned'>html</b>"))
display(Javascript("document.title = 'pwned'"))
"""


# student -> answers for lesson 00 (the lesson's solution for the others)
CLASS = {
    "a0_victim": {},
    "a1_kill": {"0.1": [KILL + "\n" + RIGHT_0_1]},
    "b_gradebook": _attack(GRADEBOOK),
    "c_solutions": {"0.1": [SOLUTIONS]},
    "d_history": {"0.2": [HISTORY + "\nx = minigrad.Variable(2.0, requires_grad=True)\n"
                          "f = x**3 - x\nf.backward()\nslope = x.grad.item()"]},
    "e_escape": _attack(ESCAPE),
    "f_resources": _attack(RESOURCES),
    "g_script": _attack(SCRIPT),
    "z_last": {},
}
# The sandbox contains every attack; the grading rules (rules.py) then refuse the answers
# that signal processes or run code given as text, whatever they reached.
EXPECTED = {
    "a0_victim": ["1", "1", "1"],
    "a1_kill": ["0", "1", "1"],  # os.kill: rule broken (and it reached only its sandbox)
    "b_gradebook": ["1", "1", "1"],
    "c_solutions": ["0", "1", "1"],  # no solution to copy, and exec: rule broken
    "d_history": ["1", "0", "1"],  # gc.get_objects in 0.2: rule broken
    "e_escape": ["1", "1", "1"],
    "f_resources": ["0", "1", "1"],  # os.kill of its own children: rule broken
    "g_script": ["1", "1", "1"],
    "z_last": ["1", "1", "1"],
}


def _serve() -> tuple[socket.socket, list]:
    """A TCP server on the machine's loopback that records anyone who connects."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    connections: list = []

    def accept() -> None:
        while True:
            try:
                connections.append(server.accept())
            except TimeoutError:
                continue
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return server, connections


def _printed(course: Path, student: str) -> str:
    """Everything the student's cells printed in the autograded notebook. A kernel may send
    one print() in two stream messages (under load, it flushes between the arguments), so a
    cell's outputs are joined as they came, with nothing put between them."""
    path = course / "autograded" / student / WELCOME / f"{WELCOME}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    return "\n".join(
        "".join(output.get("text", "") for output in cell.outputs)
        for cell in notebook.cells if cell.cell_type == "code"
    )


@pytest.fixture(scope="module")
def attacked_class(tmp_path_factory: pytest.TempPathFactory, grading_sandbox: None) -> dict:
    base = tmp_path_factory.mktemp("attacks")
    course, exchange, homes = base / "course", base / "exchange", base / "students"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    make_course(course, LESSONS, "minigrad", str(exchange), ["00"])
    with open(course / "nbgrader_config.py", "a") as file:
        file.write("c.Execute.timeout = 30\n")
    _run(course, "release_assignment", WELCOME)
    server, connections = _serve()
    package_before = hashlib.sha256(PACKAGE_FILE.read_bytes()).hexdigest()
    names = {"COURSE": str(course), "REPO": str(ROOT), "PORT": server.getsockname()[1],
             "PACKAGE": str(PACKAGE_FILE), "MARKER": str(MARKER)}
    prelude = "".join(f"{name} = {value!r}\n" for name, value in names.items())
    for student, answers in CLASS.items():
        answers = {exercise: [prelude + code for code in codes]
                   for exercise, codes in answers.items()}
        _submit(exchange, homes, student, WELCOME, answers, None)
    _run(course, "collect", WELCOME)
    # The victim is graded first, alone, so that a gradebook attack would find its grades.
    assert grade(course, WELCOME, jobs=1, student="a0_victim") == {"shard-1": 0}
    statuses = grade(course, WELCOME, jobs=2)
    _run(course, "generate_feedback", WELCOME)
    _run(course, "export", "--to", "grades.csv")
    server.close()
    package_after = hashlib.sha256(PACKAGE_FILE.read_bytes()).hexdigest()
    if package_after != package_before:  # put the repository back before failing
        subprocess.run(["git", "checkout", "--", str(PACKAGE_FILE)], cwd=ROOT, check=False)
    yield {"course": course, "statuses": statuses, "connections": connections,
           "package_changed": package_after != package_before}
    MARKER.unlink(missing_ok=True)


def test_the_score_table_is_exact(attacked_class: dict) -> None:
    with open(attacked_class["course"] / "grades.csv", newline="") as file:
        rows = list(csv.reader(file))
    assert rows[0][:4] == ["student_id", "0.1", "0.2", "0.3"]
    table = {row[0]: row[1:4] for row in rows[1:]}
    assert table == EXPECTED
    assert attacked_class["statuses"] == {"shard-1": 0, "shard-2": 0}


def test_the_gradebook_and_the_course_folder_are_out_of_reach(attacked_class: dict) -> None:
    printed = _printed(attacked_class["course"], "b_gradebook")
    assert printed.count("ATTACK gradebook: blocked") == 2 and "rewrote" not in printed
    printed = _printed(attacked_class["course"], "c_solutions")
    # Its own copy only: one notebook, no hidden tests, no solution.
    assert "ATTACK solutions: notebooks 1 with hidden tests 0 with solutions 0" in printed


def test_hidden_tests_never_reach_the_students_cells(attacked_class: dict) -> None:
    printed = _printed(attacked_class["course"], "d_history")
    path = attacked_class["course"] / "autograded" / "d_history" / WELCOME / f"{WELCOME}.ipynb"
    errors = [f"{output.get('ename')}: {output.get('evalue', '')[:200]}"
              for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"
              for output in cell.outputs if output.get("output_type") == "error"]
    history = [line for line in printed.splitlines() if line.startswith("ATTACK history")]
    # Say what the cell printed or raised: a count above 0, or a cell that never printed.
    assert history == ["ATTACK history: inputs 0 cached 0 functions 0"], (history, errors)
    for path in (attacked_class["course"] / "feedback").rglob("*.html"):
        text = path.read_text()
        assert "run_hidden" not in text and "hidden_tests" not in text, path


def test_the_grader_cannot_be_signalled(attacked_class: dict) -> None:
    printed = _printed(attacked_class["course"], "a1_kill")
    # Its parent is the sandbox's init (pid 1), which it may not signal; and no other
    # process is visible to it (kill(-1) finds none).
    assert printed.count("ATTACK kill 1 PermissionError") == 2
    assert "ATTACK kill -1 ProcessLookupError" in printed
    feedback = (attacked_class["course"] / "feedback" / "a1_kill" / WELCOME
                / f"{WELCOME}.html").read_text()
    assert "RuleBroken" in feedback and "os.kill" in feedback


def test_no_network_no_package_writes_no_shared_tmp(attacked_class: dict) -> None:
    printed = _printed(attacked_class["course"], "e_escape")
    assert "ATTACK network: blocked" in printed and not attacked_class["connections"]
    assert "ATTACK package: blocked" in printed and not attacked_class["package_changed"]
    assert not MARKER.exists()
    assert "visible: False False False" in printed
    assert "ATTACK environment: []" in printed


def test_resources_are_bounded(attacked_class: dict) -> None:
    printed = _printed(attacked_class["course"], "f_resources")
    assert "ATTACK fork: refused after" in printed and "unbounded" not in printed
    assert "ATTACK memory: refused" in printed
    assert "ATTACK disk: refused" in printed
    assert len(printed) < 1_000_000  # the 5 MB printout was cut


def test_student_html_and_javascript_do_not_survive(attacked_class: dict) -> None:
    course = attacked_class["course"]
    autograded = (course / "autograded" / "g_script" / WELCOME / f"{WELCOME}.ipynb").read_text()
    outputs = [output for cell in json.loads(autograded)["cells"]
               for output in cell.get("outputs", [])]
    rich = [output for output in outputs
            if set(output.get("data", {})) & {"text/html", "application/javascript"}]
    assert not rich
    feedback = (course / "feedback" / "g_script" / WELCOME / f"{WELCOME}.html").read_text()
    assert "<script>document.title" not in feedback


def test_refuses_without_a_sandbox_and_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailableError) as raised:
        isolation()
    message = str(raised.value)
    assert "bubblewrap" in message and "apt-get install bubblewrap" in message
    assert "--unsafe" in message
    assert isolation(unsafe=True) == "unsafe"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

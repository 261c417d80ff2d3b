"""A hostile submission's feedback and formgrader page, opened in a real (headless) browser.

A student adds cells whose outputs carry script (HTML with <script> and onerror=,
JavaScript, markdown output, SVG, LaTeX, a PNG whose width metadata adds an attribute, a
widget) and writes a written answer in raw HTML with a javascript: link. A tiny course
(make_course, with safe_outputs.protect in its config) autogrades it and writes its
feedback with the real `nbgrader autograde` and `nbgrader generate_feedback`; formgrader's
page is rendered as formgrader renders it. Each payload, if it runs, adds an element with
id "xss-<payload>" to the page; Chromium prints the page's DOM after its scripts ran.
The same notebook rendered without the protections is the control: its scripts do run,
so the browser would see an XSS if there were one.
"""

from __future__ import annotations

import base64
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbconvert.exporters import HTMLExporter  # noqa: E402
from nbgrader.converters import GenerateFeedback  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.grading.make_course import make_course, nbgrader_env  # noqa: E402
from minigrad.course.grading.safe_outputs import CSP_META  # noqa: E402

BROWSER = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome")
     if (found := shutil.which(name))),
    None,
)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no chromium, chromium-browser or google-chrome on PATH (`make browser` installs "
    "Debian's chromium when run as root; or: sudo apt-get install chromium)",
)

LESSON = "00_tiny"
STUDENT = "mallory"


def _mark(name: str, where: str = "") -> str:
    """JavaScript (no spaces: it also goes into an unquoted attribute) that adds an element
    with id xss-NAME to the page; the id is split so the page's text never holds it."""
    doc = f"{where}document"
    return f"{doc}.body.appendChild({doc}.createElement('b')).id='xs'+'s-{name}'"


def _png() -> str:
    """A 2x2 PNG, as graphviz and matplotlib outputs carry one."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff\x00\x00" * 2)
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(
        b"IEND", b"")
    return base64.b64encode(png).decode()


PNG = _png()
# payload name -> (output data, output metadata) of one display() in a cell of its own.
PAYLOADS = {
    # Also gives the JavaScript output below the `$` its template calls first.
    "html-script": ({"text/html": "<script>window.$=window.$||function(){};"
                                  f"{_mark('html-script')}</script>"}, {}),
    "html-img": ({"text/html": f'<img src="x" onerror="{_mark("html-img")}">'}, {}),
    "javascript": ({"application/javascript": _mark("javascript")}, {}),
    "markdown-output": ({"text/markdown": f'<img src="x" onerror="{_mark("markdown-output")}">'},
                        {}),
    "svg": ({"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg" '
                              f'onload="{_mark("svg")}"><script>{_mark("svg-script")}</script>'
                              "</svg>"}, {}),
    "latex": ({"text/latex": f'$x$ <img src="x" onerror="{_mark("latex")}">'}, {}),
    # nbconvert writes width= unquoted: "1 onerror=..." adds an attribute to the <img>.
    "png-width": ({"image/png": "AAAA", "text/plain": "<a picture>"},
                  {"image/png": {"width": f"1 onerror={_mark('png-width')}"}}),
    "widget": ({"application/vnd.jupyter.widget-view+json": {"model_id": "1", "version_major": 2,
                                                             "version_minor": 0},
                "text/plain": "IntSlider(value=0)"}, {}),
    # A graphviz drawing: SVG and PNG; the PNG must still show.
    "graphviz": ({"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'></svg>",
                  "image/png": PNG, "text/plain": "<graphviz.graphs.Digraph at 0x7f>"}, {}),
}
WRITTEN_ANSWER = (
    "My answer: the derivative of $x^2$ is $2x$, and `a < b` in code.\n\n"
    f"<script>{_mark('md-script')}</script>\n\n"
    f'<img src="x" onerror="{_mark("md-img")}">\n\n'
    f'<iframe src="javascript:{_mark("md-iframe", "parent.")}"></iframe>\n\n'
    f"[click me](javascript:{_mark('md-link')})\n"
)
# What runs in the control (plain nbconvert): an SVG shows as an <img> (no script there),
# LaTeX is escaped, a widget needs a renderer from the network, a link needs a click.
RUNS_UNPROTECTED = {"html-script", "html-img", "javascript", "markdown-output", "png-width",
                    "md-script", "md-img", "md-iframe"}

TINY_LESSON = [
    ("markdown", "# A tiny lesson\n\nWith a formula, $x^2$, and `code with <b>`."),
    ("code", "# Exercise 0.1: set answer to 2\nanswer = None\n### BEGIN SOLUTION\nanswer = 2\n"
             "### END SOLUTION"),
    ("code", "# Check Exercise 0.1\nassert answer == 2, f'answer is {answer}, expected 2'\n"
             "print('Exercise 0.1: correct.')"),
    ("markdown", "*Your answer to Exercise 0.2 (graded by hand):*\n\n### BEGIN SOLUTION\n"
                 "A model answer.\n### END SOLUTION"),
]


def _cell(kind: str, source: str) -> nbformat.NotebookNode:
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make(source)


def _hostile(release: Path) -> nbformat.NotebookNode:
    """The released notebook, answered, with the payload cells added as the student ran
    them (outputs included) and notebook-level widget state."""
    notebook = nbformat.read(release, as_version=4)
    for cell in notebook.cells:
        if cell.source.startswith("# Exercise 0.1"):
            cell.source = "answer = 2"
        elif cell.source.startswith("*Your answer to Exercise 0.2"):
            cell.source = cell.source.split("\n", 1)[0] + "\n\n" + WRITTEN_ANSWER
    for data, metadata in PAYLOADS.values():
        cell = _cell("code", f"display({data!r}, raw=True, metadata={metadata!r})")
        cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
        notebook.cells.append(cell)
    notebook.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                      "version_minor": 0}}
    return notebook


def _nbgrader(course: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=nbgrader_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stderr[-4000:]}"


def _render(path: Path, exporter: HTMLExporter, resources: dict, out: Path) -> Path:
    page, _ = exporter.from_filename(str(path), resources=resources)
    out.write_text(page)
    return out


def _feedback_unprotected(path: Path, out: Path) -> Path:
    """The feedback page as nbgrader alone writes it (its template, no neutralising, no CSP),
    with the scores its GetGrades step adds."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = 0
    graded = out.with_suffix(".ipynb")
    nbformat.write(notebook, graded)
    exporter = HTMLExporter(config=GenerateFeedback().config)
    grades = {"notebook": LESSON, "score": 1.0, "max_score": 2.0, "late_penalty": 0}
    return _render(graded, exporter, {"nbgrader": grades}, out)


def _formgrade(path: Path, out: Path) -> Path:
    """Formgrader's page for a submission, rendered as its SubmissionHandler renders it."""
    from nbgrader.server_extensions.formgrader import handlers

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": LESSON, "notebook_id": LESSON, "submission_id": "1",
                 "index": 0, "total": 1, "base_url": "", "student": STUDENT,
                 "last_name": None, "first_name": None, "notebook_path": str(path)}
    return _render(path, HTMLExporter(config=config), resources, out)


def _open(pages: dict[str, Path], profiles: Path) -> dict[str, tuple]:
    """Start a headless browser on each page; _doms waits for them."""
    running = {}
    for name, page in pages.items():
        command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--host-resolver-rules=MAP * ~NOTFOUND",  # CDN scripts: fail fast, offline
                   f"--user-data-dir={profiles / name.replace(', ', '-')}",
                   "--virtual-time-budget=2000", "--dump-dom", page.as_uri()]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        running[name] = (page, process)
    return running


def _doms(running: dict[str, tuple]) -> dict[str, str]:
    """Each page's DOM after its scripts ran (2 s of virtual time)."""
    doms = {}
    for name, (page, process) in running.items():
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0 and "</html>" in out, (
            f"{BROWSER} could not open {page} (exit {process.returncode}):\n{err[-2000:]}")
        doms[name] = out
    return doms


def _marks(dom: str) -> set[str]:
    return {name for name in [*PAYLOADS, "svg-script", "md-script", "md-img", "md-iframe",
                              "md-link"] if f'id="xss-{name}"' in dom}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, grading_sandbox: None) -> dict[str, str]:
    base = tmp_path_factory.mktemp("browser")
    lessons, course = base / "lessons", base / "course"
    lessons.mkdir()
    lesson = nbformat.v4.new_notebook(cells=[_cell(kind, text) for kind, text in TINY_LESSON])
    lesson.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
    nbformat.write(lesson, lessons / f"{LESSON}.ipynb")
    make_course(course, lessons, "minigrad")
    with open(course / "nbgrader_config.py", "a") as file:  # the same again is harmless
        file.write("from minigrad.course.grading.safe_outputs import protect\nprotect(c)\n")
    submitted = course / "submitted" / STUDENT / LESSON / f"{LESSON}.ipynb"
    submitted.parent.mkdir(parents=True)
    nbformat.write(_hostile(course / "release" / LESSON / f"{LESSON}.ipynb"), submitted)
    # The controls render the submission as the student ran it; they open while grading runs.
    controls = _open({
        "feedback, unprotected": _feedback_unprotected(submitted, base / "control.html"),
        "formgrader, unprotected": _formgrade(submitted, base / "formgrade-control.html"),
    }, base)
    _nbgrader(course, "autograde", LESSON)
    _nbgrader(course, "generate_feedback", LESSON)
    protected = _open({
        "feedback": course / "feedback" / STUDENT / LESSON / f"{LESSON}.html",
        "formgrader": _formgrade(course / "autograded" / STUDENT / LESSON / f"{LESSON}.ipynb",
                                 base / "formgrade.html"),
    }, base)
    return {**_doms(controls), **_doms(protected)}


@pytest.mark.parametrize("page", ["feedback, unprotected", "formgrader, unprotected"])
def test_the_control_shows_the_browser_would_catch_an_xss(pages: dict, page: str) -> None:
    missing = RUNS_UNPROTECTED - _marks(pages[page])
    assert not missing, f"{page}: these payloads did not run, so an XSS could go unseen: {missing}"


@pytest.mark.parametrize("page", ["feedback", "formgrader"])
def test_no_student_script_runs(pages: dict, page: str) -> None:
    assert _marks(pages[page]) == set(), f"{page}: student script ran"
    assert 'href="javascript:' not in pages[page].lower()


@pytest.mark.parametrize("page", ["feedback", "formgrader"])
def test_the_page_still_shows_text_and_pictures(pages: dict, page: str) -> None:
    dom = pages[page]
    assert "Exercise 0.1: correct." in dom
    assert "[HTML output shown as text: &lt;script&gt;" in dom
    assert "&lt;script&gt;" in dom  # the written answer's raw HTML, shown as text
    assert re.search(f'<img [^>]*src="data:image/png;base64,{re.escape(PNG)}"', dom), page


def test_the_feedback_carries_the_content_security_policy(pages: dict) -> None:
    head = pages["feedback"].split("</head>")[0]
    assert 'http-equiv="Content-Security-Policy"' in head
    assert CSP_META.split('content="')[1].split(";")[0] in head

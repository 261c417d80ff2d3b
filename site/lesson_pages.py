"""How a stored lesson becomes a web page: a Sphinx extension for the course website.

A lesson notebook holds the solutions and the grade's hidden tests. Before MyST-NB reads
it (Sphinx's `source-read` event), this extension rewrites the page's copy, never the file:

- under the title, a bar with the student notebook (a download) and, when the site is
  built with a JupyterLab or JupyterHub address, a link that opens it there;
- each exercise gets a box naming it, then the cell as the student notebook has it
  (`raise NotImplementedError(...)` where the solution goes), then the solution, folded;
- a written answer's model answer is folded too;
- a check cell loses its hidden tests, as in the student notebook;
- nbval's markers (`# NBVAL_IGNORE_OUTPUT`), which are for the tests, leave the code shown.

The address is a setting (`make site LAB_URL=...` or `HUB_URL=... REPO_URL=...`, read by
conf.py); with neither, no "open" link is written at all.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from urllib.parse import quote

import nbformat
from sphinx.application import Sphinx
from sphinx.util import logging

from minigrad.course.exercise_cells import BEGIN, END, exercise_cells
from minigrad.course.make_exercises import student_cell

LESSONS = "lessons/"
logger = logging.getLogger(__name__)
NBVAL_MARKER = re.compile(r"^# NBVAL_[A-Z_]+\n?", re.MULTILINE)


def open_url(app: Sphinx, path: str) -> str | None:
    """The link that opens `path` (relative to the repository, e.g.
    lessons/exercises/03_custom_functions.ipynb) in JupyterLab or on a JupyterHub, or None
    when the site was built without an address."""
    template = app.config.lesson_lab_url
    if template:
        return template.replace("{path}", path)
    hub, repo = app.config.lesson_hub_url, app.config.lesson_repo_url
    if not (hub and repo):
        return None
    # nbgitpuller clones the repository into a folder named after it, then opens urlpath.
    folder = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    query = (
        f"repo={quote(repo, safe='')}"
        f"&urlpath={quote(f'lab/tree/{folder}/{path}', safe='')}"
        f"&branch={quote(app.config.lesson_repo_branch, safe='')}"
    )
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def markdown_cell(text: str, cell_id: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text, id=cell_id)


def student_links(app: Sphinx, name: str) -> str:
    """'the student notebook (download) · open it in JupyterLab' for lesson `name`."""
    student = f"exercises/{name}.ipynb"
    links = f"{{download}}`the student notebook <{student}>`"
    url = open_url(app, f"{LESSONS}{student}")
    if url is not None:
        links += f" · [open it in JupyterLab]({url})"
    return links


def lesson_bar(app: Sphinx, name: str) -> nbformat.NotebookNode:
    text = (
        f"```{{admonition}} Work this lesson yourself\n:class: lesson-bar\n"
        f"This page is the complete lesson, solutions folded. To do the exercises, take "
        f"{student_links(app, name)}: there each solution is "
        f"`raise NotImplementedError(...)` and each check cell tells you whether your answer "
        f"is right. It runs inside the course's folder, after `make lab` (see \"Set up\" on the "
        f"[home page](../site/index.md)).\n```"
    )
    return markdown_cell(text, "lesson-bar")


def exercise_box(app: Sphinx, name: str, exercise: str) -> nbformat.NotebookNode:
    text = (
        f"```{{admonition}} Exercise {exercise}: yours to write\n:class: exercise\n"
        f"The cell below is what {student_links(app, name)} holds; write your answer "
        f"there and run the check cell after it. A solution is folded under the cell.\n```"
    )
    return markdown_cell(text, f"exercise-{exercise.replace('.', '-')}")


def folded_solution(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The instructor's cell, nbgrader's markers dropped, and its outputs (a prediction's
    answer is printed there): all of it shown only when the reader unfolds it."""
    folded = nbformat.from_dict(cell)
    folded.id = f"{cell.id}-solution"
    # The solution without nbgrader's markers: on the page they are noise.
    lines = cell.source.splitlines()
    folded.source = "\n".join(line for line in lines if line.strip() not in (BEGIN, END))
    folded.metadata["tags"] = [*folded.metadata.get("tags", []), "hide-cell"]
    folded.metadata["mystnb"] = {
        "code_prompt_show": "Show a solution",
        "code_prompt_hide": "Hide the solution",
    }
    return folded


def folded_answer(source: str) -> str:
    """A written answer's model answer inside <details>, so Markdown still renders in it."""
    lines = []
    for line in source.splitlines():
        if line.strip() == BEGIN:
            lines.append("<details class=\"model-answer\"><summary>Show a model answer</summary>\n")
        elif line.strip() == END:
            lines.append("\n</details>")
        else:
            lines.append(line)
    return "\n".join(lines)


def web_version(app: Sphinx, notebook: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The lesson as its page shows it (see the module docstring)."""
    roles = dict(exercise_cells(notebook, name))
    cells = [notebook.cells[0], lesson_bar(app, name)]
    for index, cell in enumerate(notebook.cells[1:], start=1):
        role = roles.get(index)
        where = f"{name}, cell {index}"
        if role is None:
            if cell.cell_type == "code" and NBVAL_MARKER.search(cell.source):
                cell = nbformat.from_dict(cell)
                cell.source = NBVAL_MARKER.sub("", cell.source)
            cells.append(cell)
        elif role.kind == "answer":
            answer = nbformat.from_dict(cell)
            answer.source = folded_answer(cell.source)
            cells.append(answer)
        else:  # an exercise or check cell: first as the student notebook shows it
            shown = nbformat.from_dict(cell)
            student_cell(shown, role, where)
            if role.kind == "check":
                cells.append(shown)
                continue
            shown.outputs = []
            shown.execution_count = None
            cells += [exercise_box(app, name, role.exercise), shown, folded_solution(cell)]
    page = nbformat.from_dict(notebook)
    page.cells = cells
    return page


def rewrite_lesson(app: Sphinx, docname: str, source: list[str]) -> None:
    """Sphinx's source-read: replace a lesson's text by its web version."""
    path = PurePosixPath(docname)
    if path.parent != PurePosixPath(LESSONS):
        return
    notebook = nbformat.reads(source[0], as_version=4)
    source[0] = json.dumps(web_version(app, notebook, path.name))


def check_addresses(app: Sphinx) -> None:
    """Say so when the "open" settings cannot mean what their author wanted (the build
    treats warnings as errors, so `make site` stops with this message)."""
    config = app.config
    if config.lesson_lab_url and "{path}" not in config.lesson_lab_url:
        logger.warning(f"LAB_URL={config.lesson_lab_url!r} has no {{path}}: every exercise "
                       f"would open the same page; write where the notebook's path goes, "
                       f"e.g. http://localhost:8888/lab/tree/{{path}}")
    if config.lesson_lab_url and config.lesson_hub_url:
        logger.warning("both LAB_URL and HUB_URL are set: give one (LAB_URL for a JupyterLab, "
                       "HUB_URL with REPO_URL for nbgitpuller links on a JupyterHub)")
    if config.lesson_hub_url and not config.lesson_repo_url:
        logger.warning(f"HUB_URL={config.lesson_hub_url!r} without REPO_URL: an nbgitpuller "
                       f"link needs the repository to clone; add REPO_URL=https://...")


def setup(app: Sphinx) -> dict[str, object]:
    # "env": the links are written when a page is read, so a new address re-reads them all.
    app.add_config_value("lesson_lab_url", "", "env", str)
    app.add_config_value("lesson_hub_url", "", "env", str)
    app.add_config_value("lesson_repo_url", "", "env", str)
    app.add_config_value("lesson_repo_branch", "main", "env", str)
    app.connect("builder-inited", check_addresses)
    app.connect("source-read", rewrite_lesson)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

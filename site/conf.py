"""Sphinx settings for the course website (`make site`).

The source folder is the repository itself, so a page links a lesson as
`../lessons/03_custom_functions.ipynb` and the same link works on GitHub. Only the site's
pages and the stored, executed lessons are read (MyST-NB with execution off): the site
shows exactly what nbval compares, and building needs neither a kernel nor a network
(sphinx-book-theme ships its styles and scripts inside the wheel). `lesson_pages.py`, beside
this file, marks the exercises and folds their solutions."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
sys.path.insert(0, str(SITE))  # lesson_pages.py
sys.path.insert(0, str(SITE.parent))  # minigrad, for the API reference and the exercise cells

project = "minigrad"
author = "the minigrad authors"
copyright = "2026, the minigrad authors"  # noqa: A001 (Sphinx's setting name)

root_doc = "site/index"
# MathJax from the sphinx-mathjax-offline wheel, not a CDN: the site reads offline.
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx-mathjax-offline",
              "lesson_pages", "op_table"]
include_patterns = ["site/*.md", "lessons/[0-9][0-9]_*.ipynb"]
exclude_patterns = [".venv", ".git", "site/_build", "course", "course-exchange", "build",
                    "**/.ipynb_checkpoints"]
nb_execution_mode = "off"  # the stored, executed lessons; never run again here
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "substitution"]
myst_heading_anchors = 3  # `page.md#a-heading` links work as on GitHub
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

# The API reference: signatures as written, members in the order of the source.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# Where "open in JupyterLab" links go: unset, there are none. LAB_URL is a template with
# {path} (e.g. http://localhost:8888/lab/tree/{path}); HUB_URL with REPO_URL makes
# nbgitpuller links that clone the repository on a JupyterHub.
lesson_lab_url = os.environ.get("MINIGRAD_LAB_URL", "")
lesson_hub_url = os.environ.get("MINIGRAD_HUB_URL", "")
lesson_repo_url = os.environ.get("MINIGRAD_REPO_URL", "")
lesson_repo_branch = os.environ.get("MINIGRAD_REPO_BRANCH", "main")

# How a reader gets the course's folder: from the repository when the build names it.
if lesson_repo_url:
    branch = f"-b {lesson_repo_branch} " if lesson_repo_branch != "main" else ""
    get_the_course = (f"Get the course with `git clone {branch}{lesson_repo_url}`, then `cd` "
                      f"into the folder it makes")
else:
    get_the_course = ("Get the course's folder: a `git clone` of its repository (your "
                      "instructor or the page that sent you here gives its address)")
myst_substitutions = {"get_the_course": get_the_course}

html_theme = "sphinx_book_theme"
html_title = "minigrad: automatic differentiation, built step by step"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_favicon = "_static/favicon.svg"  # else every browser asks for a /favicon.ico that is not there
# The home page is site/index.html; index.html at the top only sends the browser there.
html_extra_path = ["_root"]
# A page's source is the complete lesson, hidden tests included: not for download. Each
# lesson page links its student notebook instead (lesson_pages.py).
html_copy_source = False
html_theme_options = {
    "show_navbar_depth": 1,
    # Its menu would link the sources copied above, which are not copied: the page's own
    # download is its student notebook; the browser prints the page as PDF.
    "use_download_button": False,
    "repository_url": lesson_repo_url,
    "use_repository_button": bool(lesson_repo_url),
    "navbar_persistent": [],  # one search box, in the sidebar (not a second one in a top bar)
}
# The colour mode a first visit starts in (the theme's documented default, the reader's
# system setting); left unset, the theme's script logs "Got invalid theme mode".
html_context = {"default_mode": "auto"}


# The docstrings are written for a reader of the code: `x` is code, as in Markdown. reST
# reads `x` as a reference and a lone * as emphasis, so the API pages get ``x`` and \*.
CODE_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")


def docstring_as_rest(app, what, name, obj, options, lines: list[str]) -> None:
    pieces = CODE_SPAN.split("\n".join(lines))  # even indices: prose; odd: code
    for index in range(0, len(pieces), 2):
        pieces[index] = pieces[index].replace("*", r"\*")
    for index in range(1, len(pieces), 2):
        pieces[index] = f"``{pieces[index]}``"
    converted = "".join(pieces).split("\n")
    # An indented example after a blank line is code, as in Markdown: reST wants "::".
    for number in range(2, len(converted)):
        above, blank, line = converted[number - 2], converted[number - 1], converted[number]
        if blank.strip() or not above.strip() or not line.strip():
            continue
        if indent(line) > indent(above) and not above.rstrip().endswith("::"):
            converted[number - 2] = above.rstrip() + " ::"
    lines[:] = converted


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def setup(app) -> None:
    app.connect("autodoc-process-docstring", docstring_as_rest)

"""Sphinx settings for the course website (`make site`).

The lessons are rendered from their stored outputs (MyST-NB with execution off), so the
site shows exactly what nbval compares, and building needs neither a kernel nor a network:
sphinx-book-theme ships its styles and scripts inside the wheel."""

from __future__ import annotations

project = "minigrad"
author = "the minigrad authors"
copyright = "2026, the minigrad authors"  # noqa: A001 (Sphinx's setting name)

extensions = ["myst_nb"]
nb_execution_mode = "off"  # the stored, executed lessons; never run again here
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
exclude_patterns = ["_build", "lessons/exercises", "**/.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

html_theme = "sphinx_book_theme"
html_title = "minigrad: automatic differentiation, built step by step"
html_theme_options = {
    "show_navbar_depth": 1,
    "use_download_button": True,
}

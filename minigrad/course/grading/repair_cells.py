"""A submitted notebook's cells repaired against the release, so that nbgrader can grade it.

nbgrader's autograde fails a whole submission (every exercise `!`, 0 points) on cell
metadata it cannot take: a check cell pasted twice (a duplicate grade_id), a cell whose
metadata claims to be graded (`"grade_id": "my_bonus", "points": 100`), a grade_id renamed,
unknown keys inside the nbgrader metadata. Here the instructor's cells win, before nbgrader
looks at the notebook:

- a cell with nbgrader metadata the release does not have loses it: it runs as ordinary code;
- a grade_id found several times is kept on one cell (the one equal to the release's, else
  the one nearest the release's place); copies of a locked cell (a check) are removed, since
  nbgrader runs the instructor's code there anyway, and copies of an answer run as ordinary
  cells;
- a kept cell's nbgrader metadata is the release's (points, locked, grade, solution, task):
  points a student raised never count;
- cell metadata outside ALLOWED_CELL_METADATA, and notebook metadata other than the kernel's
  (widget state, editor settings), is dropped: no grade depends on it;
- a missing check cell is left missing: nbgrader puts it back (OverwriteCells.add_missing_cells).

`repair_cells` does it to a notebook (collect.py calls it on each submission); `RepairCells`
does it inside `nbgrader autograde`, where the release is read from the gradebook.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import nbformat
from nbformat import NotebookNode
from nbformat.corpus.words import generate_corpus_id
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from minigrad.course.make_exercises import strip_hidden_tests


def _is_flag(value: object) -> bool:
    return isinstance(value, bool)


def _is_tags(value: object) -> bool:
    """nbformat's rule: distinct strings without commas."""
    return (isinstance(value, list) and all(isinstance(tag, str) and tag and "," not in tag
                                            for tag in value) and len(set(value)) == len(value))


def _is_flags(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(flag, bool) for flag in value.values())


def _is_times(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(time, str) for time in value.values())


# Cell metadata kept, each with the test its value must pass (a value of another type could
# only break the notebook's validation); no other key changes how a cell is graded or shown.
ALLOWED_CELL_METADATA: dict[str, Callable[[object], bool]] = {
    "nbgrader": lambda value: isinstance(value, dict),
    "tags": _is_tags,
    "editable": _is_flag,
    "deletable": _is_flag,
    "collapsed": _is_flag,
    "scrolled": lambda value: isinstance(value, bool) or value == "auto",
    "jupyter": _is_flags,
    "execution": _is_times,
    "trusted": _is_flag,
}
NOTEBOOK_METADATA = ("kernelspec", "language_info")  # and the release's "nbgrader", if any
# What a student may not change about a graded cell, as the notes name it.
ROLE_KEYS = ("grade", "solution", "locked", "task", "points")


def repair_cells(notebook: NotebookNode, release: NotebookNode) -> list[str]:
    """Repair `notebook`, a submission, in place against `release`, the released notebook
    (see the module's docstring); return a note for each repair that can change a grade."""
    _clean_notebook_metadata(notebook, release)
    ids = set()
    for cell in notebook.cells:
        cell.metadata = nbformat.from_dict({
            key: value for key, value in cell.get("metadata", {}).items()
            if key in ALLOWED_CELL_METADATA and ALLOWED_CELL_METADATA[key](value)
        })
        if "id" in cell and cell.id in ids:  # a pasted cell, in a file edited by hand
            cell.id = generate_corpus_id()
        ids.add(cell.get("id"))
    released = _released_cells(release)
    notes = _strip_forged(notebook, released)
    notes += _deduplicate(notebook, released)
    for cell in notebook.cells:
        if "nbgrader" in cell.metadata:
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            roles = released[grade_id].metadata["nbgrader"]
            changed = _changed_roles(cell.metadata["nbgrader"], roles)
            cell.metadata["nbgrader"] = nbformat.from_dict(copy.deepcopy(roles))
            if changed:
                notes.append(f"`{grade_id}` had its grading settings changed ({changed}); "
                             "it was graded as released.")
    return notes


def add_note(notebook: NotebookNode, text: str) -> None:
    """Put `text` at the top of `notebook` as a "Note from grading" the feedback shows."""
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"**Note from grading:** {text}"))


def notes_text(notes: list[str]) -> str:
    """The notes of repair_cells as one paragraph for the student."""
    return "this notebook's cells were repaired before grading: " + " ".join(notes)


def _released_cells(release: NotebookNode) -> dict[str, NotebookNode]:
    """grade_id -> the release's cell with that id, in the release's order."""
    cells = {}
    for cell in release.cells:
        roles = cell.get("metadata", {}).get("nbgrader")
        if isinstance(roles, dict) and roles.get("grade_id"):
            cells[roles["grade_id"]] = cell
    return cells


def _clean_notebook_metadata(notebook: NotebookNode, release: NotebookNode) -> None:
    """Only the kernel's metadata stays, the release's where it has it (instructor's wins)."""
    kept = {}
    for key in NOTEBOOK_METADATA:
        value = release.metadata.get(key, notebook.metadata.get(key))
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            kept[key] = copy.deepcopy(value)
    if "nbgrader" in release.metadata:
        kept["nbgrader"] = copy.deepcopy(release.metadata["nbgrader"])
    notebook.metadata = nbformat.from_dict(kept)


def _strip_forged(notebook: NotebookNode, released: dict[str, NotebookNode]) -> list[str]:
    """Remove nbgrader metadata the release does not have; a note for each claimed role."""
    notes = []
    for cell in notebook.cells:
        roles = cell.metadata.get("nbgrader")
        grade_id = roles.get("grade_id") if roles is not None else None
        if roles is None or (isinstance(grade_id, str) and grade_id in released):
            continue
        del cell.metadata["nbgrader"]
        if grade_id or any(roles.get(key) for key in ROLE_KEYS):
            name = f"`{grade_id}`" if grade_id else "with no grade_id"
            notes.append(f"a cell marked as graded ({name}), which is not a cell of the "
                         "assignment, was run as an ordinary cell.")
    return notes


def _deduplicate(notebook: NotebookNode, released: dict[str, NotebookNode]) -> list[str]:
    """Keep each grade_id on one cell (see the module's docstring)."""
    order = list(released)
    places: dict[str, list[int]] = {}
    for index, cell in enumerate(notebook.cells):
        if "nbgrader" in cell.metadata:
            places.setdefault(cell.metadata["nbgrader"]["grade_id"], []).append(index)
    notes, dropped = [], set()
    for grade_id, indices in places.items():
        if len(indices) == 1:
            continue
        expected = _expected_place(grade_id, order, places)
        locked = _is_locked(released[grade_id].metadata["nbgrader"])
        # A copy of the instructor's cell as released is the original; an answer has no
        # released text to match, so there the place decides.
        original = released[grade_id].source
        same = [i for i in indices if locked and notebook.cells[i].source == original]
        kept = min(same or indices, key=lambda i: (abs(i - expected), i))
        copies = [i for i in indices if i != kept]
        if locked:
            dropped.update(copies)
            notes.append(f"`{grade_id}` was in the notebook {len(indices)} times: the copies "
                         "were removed (the instructor's cell runs, as released).")
        else:
            for index in copies:
                del notebook.cells[index].metadata["nbgrader"]
            notes.append(f"`{grade_id}` was in the notebook {len(indices)} times: the one "
                         "nearest its place was graded, the other copies ran as ordinary cells.")
    notebook.cells = [cell for i, cell in enumerate(notebook.cells) if i not in dropped]
    return notes


def _expected_place(grade_id: str, order: list[str], places: dict[str, list[int]]) -> int:
    """Where the cell belongs in the submission: right after the nearest earlier released
    cell found there once, else right before the nearest later one, else the top."""
    at = order.index(grade_id)
    for earlier in reversed(order[:at]):
        if len(places.get(earlier, [])) == 1:
            return places[earlier][0] + 1
    for later in order[at + 1:]:
        if len(places.get(later, [])) == 1:
            return places[later][0] - 1
    return 0


def _is_locked(roles: dict) -> bool:
    """nbgrader's rule (utils.is_locked): a check cell is locked, an answer never is."""
    if roles.get("solution"):
        return False
    return bool(roles.get("grade") or roles.get("locked"))


def _changed_roles(submitted: dict, released: dict) -> str:
    """'points 50 → 1', one entry per role the submission changed; '' when none."""
    changes = []
    for key in ROLE_KEYS:
        old, new = submitted.get(key), released.get(key)
        if key == "points" and new is not None:
            try:
                same = float(old) == float(new)
            except (TypeError, ValueError):
                same = False
        else:
            same = bool(old) == bool(new)
        if not same:
            changes.append(f"{key} {old} → {new}")
    return ", ".join(changes)


class RepairCells(NbGraderPreprocessor):
    """repair_cells during `nbgrader autograde`, against the release as the gradebook holds
    it. First in Autograde.sanitize_preprocessors: nbconvert validates the notebook after
    each step, so garbage metadata would fail the step before it."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        where = resources["nbgrader"]
        with Gradebook(where["db_url"]) as gradebook:
            release = released_notebook(gradebook, where["notebook"], where["assignment"])
        notes = repair_cells(nb, release)
        if notes:
            student = where.get("student", "?")
            for note in notes:
                self.log.warning("%s: %s", student, note)
            add_note(nb, notes_text(notes))
        return nb, resources


def released_notebook(gradebook: Gradebook, notebook_id: str, assignment_id: str) -> NotebookNode:
    """The release's graded, answer and locked cells, in order, with the nbgrader metadata
    generate_assignment gave them, rebuilt from the gradebook (autograde has no release
    folder); a check cell's source is the release's, without its hidden tests."""
    notebook = gradebook.find_notebook(notebook_id, assignment_id)
    points = {cell.name: cell.max_score for cell in notebook.grade_cells}
    points.update({cell.name: cell.max_score for cell in notebook.task_cells})
    solutions = {cell.name for cell in notebook.solution_cells}
    tasks = {cell.name for cell in notebook.task_cells}
    cells = []
    for source in notebook.source_cells:
        roles = {
            "cell_type": source.cell_type,
            "checksum": source.checksum,
            "grade": source.name in points and source.name not in tasks,
            "grade_id": source.name,
            "locked": source.locked,
            "schema_version": 3,
            "solution": source.name in solutions,
            "task": source.name in tasks,
        }
        if source.name in points:
            roles["points"] = points[source.name]
        text = source.source
        if source.locked and source.cell_type == "code":
            text = strip_hidden_tests(text, source.name)
        cells.append(nbformat.from_dict(
            {"cell_type": source.cell_type, "source": text, "metadata": {"nbgrader": roles}}
        ))
    try:
        kernelspec = json.loads(notebook.kernelspec or "{}")
    except (TypeError, ValueError):
        kernelspec = {}
    metadata = {"kernelspec": kernelspec} if kernelspec else {}
    return nbformat.from_dict({"cells": cells, "metadata": metadata})

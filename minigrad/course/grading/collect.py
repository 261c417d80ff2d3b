"""`nbgrader collect`, repairing the two submissions nbgrader's autograde cannot take.

nbgrader's autograde stops on a submission whose notebook was renamed ("No notebooks found")
or cannot be read (an empty file, a notebook cut short: NotJSONError), and the student gets
no grade at all. Collecting, this course

- grades a lone notebook with another name (00_welcome-Copy1.ipynb) as the assignment's
  notebook, when that is missing or still unanswered (the work was done in a copy), and
  otherwise says in the feedback which notebooks were not graded;
- replaces an unreadable notebook by the unanswered release (which grades to 0 points),
  keeping the file as NAME.ipynb.unreadable;

and puts a note saying so at the top of the notebook, which the student's feedback shows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
from nbgrader.exchange.default import ExchangeCollect


class RepairingCollect(ExchangeCollect):
    """ExchangeCollect that repairs each submission it copies (see the module's docstring)."""

    def do_copy(self, src: str, dest: str) -> None:
        super().do_copy(src, dest)
        release = Path(
            self.coursedir.format_path(
                self.coursedir.release_directory, ".", self.coursedir.assignment_id
            )
        )
        student = Path(dest).parent.name
        for note in repair_submission(Path(dest), release):
            self.log.warning("%s: %s", student, note)


def repair_submission(submission: Path, release: Path) -> list[str]:
    """Repair the submission folder in place against the release folder; return what was done."""
    expected = sorted(path.name for path in release.glob("*.ipynb"))
    notes = []
    for name in expected:
        path = submission / name
        others = [p for p in submission.glob("*.ipynb") if p.name not in expected]
        broken = path.exists() and _unreadable(path) is not None
        if len(others) == 1 and (
            not path.exists() or broken or _unanswered(path, release / name)
        ):
            if path.exists():  # the release kept as it came, the work done in a copy
                suffix = ".unreadable" if broken else ".unanswered"
                os.replace(path, path.with_name(name + suffix))
            others[0].rename(path)
            notes.append(f"graded {others[0].name} as {name}")
            _put_note(path, f"You submitted this notebook as `{others[0].name}`; it was "
                            f"graded as `{name}`, the assignment's name.")
        elif others and path.exists() and not broken:
            listed = ", ".join(f"`{other.name}`" for other in others)
            notes.append(f"graded {name}; not {listed}")
            _put_note(path, f"You also submitted {listed}: only `{name}` is graded.")
        problem = _unreadable(path) if path.exists() else None
        if problem is not None:
            kept = path.with_name(path.name + ".unreadable")
            os.replace(path, kept)
            shutil.copyfile(release / name, path)
            notes.append(f"{name} {problem}: graded as the unanswered notebook")
            _put_note(path, f"The submitted `{name}` {problem}, so it could not be graded; "
                            f"this is the unanswered notebook, which scores 0. Your file is "
                            f"kept as `{kept.name}`: ask your instructor.")
    return notes


def _unanswered(path: Path, released: Path) -> bool:
    """True when the submitted notebook's exercise cells are still the release's."""
    try:
        submitted = nbformat.read(path, as_version=4)
        original = nbformat.read(released, as_version=4)
    except Exception:  # noqa: BLE001 - unreadable is handled below, not here
        return False
    return _answers(submitted) == _answers(original)


def _answers(notebook: nbformat.NotebookNode) -> list[str]:
    return [
        cell.source
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    ]


def _unreadable(path: Path) -> str | None:
    """Why `path` is not a notebook nbgrader can grade, or None when it is one."""
    size = path.stat().st_size
    if size == 0:
        return "was empty (0 bytes)"
    try:
        nbformat.validate(nbformat.read(path, as_version=4))
    except Exception as error:  # noqa: BLE001 - any reason to refuse it is reported
        return f"is not a readable notebook ({type(error).__name__}, {size} bytes)"
    return None


def _put_note(path: Path, text: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"**Note from grading:** {text}"))
    nbformat.write(notebook, path)

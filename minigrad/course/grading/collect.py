"""`nbgrader collect`, repairing the two submissions nbgrader's autograde cannot take.

nbgrader's autograde stops on a submission whose notebook was renamed ("No notebooks found")
or cannot be read (an empty file, a notebook cut short: NotJSONError), and the student gets
no grade at all. Collecting, this course

- renames a lone notebook with another name (00_welcome-Copy1.ipynb) to the assignment's
  name, so the work in it is graded;
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
        if not path.exists():
            others = [p for p in submission.glob("*.ipynb") if p.name not in expected]
            if len(others) != 1:
                continue  # nothing to rename, or no telling which: nbgrader reports it
            others[0].rename(path)
            notes.append(f"renamed {others[0].name} to {name}")
            _put_note(path, f"You submitted this notebook as `{others[0].name}`; it was "
                            f"graded as `{name}`, the assignment's name.")
        problem = _unreadable(path)
        if problem is not None:
            kept = path.with_name(path.name + ".unreadable")
            os.replace(path, kept)
            shutil.copyfile(release / name, path)
            notes.append(f"{name} {problem}: graded as the unanswered notebook")
            _put_note(path, f"The submitted `{name}` {problem}, so it could not be graded; "
                            f"this is the unanswered notebook, which scores 0. Your file is "
                            f"kept as `{kept.name}`: ask your instructor.")
    return notes


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

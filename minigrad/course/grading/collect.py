"""`nbgrader collect`, repairing the submissions nbgrader's autograde cannot take, and
refusing one handed in under another student's name.

nbgrader's autograde stops on a submission whose notebook was renamed ("No notebooks found"),
cannot be read (an empty file, a notebook cut short: NotJSONError) or has cell metadata it
cannot take (a check cell pasted twice, a forged graded cell), and the student gets no grade
at all. Collecting, this course

- grades a lone notebook with another name (00_welcome-Copy1.ipynb) as the assignment's
  notebook, when that is missing or still unanswered (the work was done in a copy), and
  otherwise says in the feedback which notebooks were not graded;
- repairs the cells against the release (repair_cells.py: the instructor's cells win);
- replaces an unreadable notebook by the unanswered release (which grades to 0 points),
  keeping the file as NAME.ipynb.unreadable;

and puts a note saying so at the top of the notebook, which the student's feedback shows.

On one machine with real Unix users, `nbgrader submit --student=bob` run by alice files a
submission under bob's name, and nbgrader's collect only warns ("cheating attempt?"). Here
such a submission is not collected: see RepairingCollect.init_src.
"""

from __future__ import annotations

import copy
import glob
import os
import re
import shutil
from pathlib import Path

import nbformat
from nbgrader.exchange.default import ExchangeCollect

from minigrad.course.grading.repair_cells import add_note, notes_text, repair_cells

try:
    import pwd
except ImportError:  # Windows: no Unix users, so no owner to check
    pwd = None

# Owners whose submissions are taken under any student id: root (an administrator copied
# them), and jovyan, the one user every student's server runs as on a Docker JupyterHub.
SHARED_OWNERS = ("root", "jovyan")
STUDENT_ID = re.compile(r"[A-Za-z0-9._@-]{1,100}")


class RepairingCollect(ExchangeCollect):
    """ExchangeCollect that repairs each submission it copies and skips one submitted by
    another Unix user (see the module's docstring)."""

    def init_src(self) -> None:
        """nbgrader's choice of each student's latest submission, from the submissions that
        student's own Unix user made: a student id that names a Unix user other than the
        folder's owner (unless SHARED_OWNERS) is refused with a warning, and that student's
        latest own submission, if any, is collected instead. A student id that is no Unix user name
        (JupyterHub, ngshare) is taken as nbgrader takes it."""
        super().init_src()
        self.src_records = [record for record in self.src_records if self._plain_id(record)]
        if not self.check_owner or pwd is None:
            return
        chosen = []
        for record in self.src_records:
            student = record["username"]
            pattern = os.path.join(self.inbound_path,
                                   f"{glob.escape(student)}+{self.coursedir.assignment_id}+*")
            own = [other for other in map(self._path_to_record, glob.glob(pattern))
                   if not self._submitted_by_another_user(other)]
            if own:
                chosen.append(self._latest(own))
        self.src_records = chosen

    def _plain_id(self, record: dict) -> bool:
        """True for a student id of letters, digits and . _ @ -; another (markup, spaces)
        is refused with a warning: formgrader shows ids unescaped in its pages."""
        if STUDENT_ID.fullmatch(record["username"]):
            return True
        self.log.warning("Not collecting %s: its student id %r may hold only letters, digits "
                         "and . _ @ - (formgrader would show it as HTML).",
                         record["filename"], record["username"])
        return False

    def _submitted_by_another_user(self, record: dict) -> bool:
        """True (with a warning) when the record's folder belongs to an existing Unix user
        other than the student it names."""
        student = record["username"]
        path = os.path.join(self.inbound_path, record["filename"])
        owner = _unix_owner(path)
        if owner is None or owner == student or owner in SHARED_OWNERS:
            return False
        if not _is_unix_user(student):
            return False
        self.log.warning(
            "Not collecting %s: it was submitted as student %r, who is a Unix user here, but "
            "its folder belongs to Unix user %r (did %s run `nbgrader submit --student=%s`?). "
            "Ask both; to collect it anyway, set c.ExchangeCollect.check_owner = False.",
            path, student, owner, owner, student,
        )
        return True

    def _latest(self, records: list[dict]) -> dict:
        """nbgrader's rule: the latest, or with --before-duedate the latest before it."""
        records = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            early = [record for record in records if record["timestamp"] <= self.duedate]
            records = early or records
        return records[0]

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
        if path.exists():
            repaired = _repair_cells(path, release / name)
            notes += [f"{name}: {note}" for note in repaired]
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


def _repair_cells(path: Path, released: Path) -> list[str]:
    """repair_cells on the notebook at `path`, written back when it changed; its notes, also
    put in the notebook. [] for a file that is no notebook: the unreadable case takes it."""
    try:
        notebook = nbformat.read(path, as_version=4)
        submitted = copy.deepcopy(notebook)
        notes = repair_cells(notebook, nbformat.read(released, as_version=4))
    except Exception:  # noqa: BLE001 - whatever it is, _unreadable names it next
        return []
    if notes:
        add_note(notebook, notes_text(notes))
    if notebook != submitted:
        nbformat.write(notebook, path)
    return notes


def _unix_owner(path: str) -> str | None:
    """The Unix user name owning `path`, or None when its uid has no name."""
    try:
        return pwd.getpwuid(os.stat(path).st_uid).pw_name
    except KeyError:
        return None


def _is_unix_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _put_note(path: Path, text: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    add_note(notebook, text)
    nbformat.write(notebook, path)

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

Collect runs as the instructor (often root), and the exchange's inbound folder is writable by
every student, who can put there by hand what `nbgrader submit` never makes. nbgrader's
collect copies with `shutil.copytree`, which follows symbolic links: a link named as a
submission, or a link inside one, had the instructor copy any file it can read (the course's
solutions, the gradebook, /etc/shadow) into that student's submission and feedback. And one
odd entry stopped the whole class's collect (a named pipe, a folder name that is no
timestamp, a sparse file past the size limit), or the class's `release_feedback` later (a
folder without timestamp.txt). Here

- an entry of the inbound folder that is a symbolic link, not a folder, or whose name holds
  no timestamp is not collected (a warning says why), and the student's latest real
  submission is collected instead;
- inside a submission, symbolic links and special files (pipes, sockets) are not collected,
  and files are checked against nbgrader's size limits before anything is copied: a
  submission over them is left out with an error, the others are collected;
- a submission without a readable timestamp.txt gets one, the time in its folder's name,
  and one without a well-formed submission_secret.txt a new one;
- a submission without the assignment's notebook gets the unanswered one, with a note.
"""

from __future__ import annotations

import copy
import datetime
import glob
import os
import re
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

import nbformat
from nbgrader.exchange.default import ExchangeCollect
from nbgrader.utils import parse_utc

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
        chosen = []
        for record in self.src_records:
            student = record["username"]
            pattern = os.path.join(self.inbound_path,
                                   f"{glob.escape(student)}+{self.coursedir.assignment_id}+*")
            own = [other for other in map(self._path_to_record, glob.glob(pattern))
                   if self._collectable(other)]
            if own:
                chosen.append(self._latest(own))
        self.src_records = chosen

    def _path_to_record(self, path: str) -> dict:
        """nbgrader's record of an inbound folder; a name whose time does not parse (made by
        hand: nbgrader's collect stopped on it) gets `problem` set instead of failing."""
        filename = os.path.basename(path)
        parts = filename.rsplit("+", 3)
        try:
            return super()._path_to_record(path)
        except Exception:  # noqa: BLE001 - dateutil's ParserError, ValueError, OverflowError
            return {"username": parts[0], "filename": filename,
                    "timestamp": datetime.datetime.min, "problem": "its name holds no time"}

    def _collectable(self, record: dict) -> bool:
        """False (with a warning) for an inbound entry that `nbgrader submit` did not make as
        the student it names: a symbolic link, not a folder, a name without a time, or a
        folder of another Unix user (see _submitted_by_another_user)."""
        path = os.path.join(self.inbound_path, record["filename"])
        problem = record.get("problem")
        if problem is None and os.path.islink(path):
            problem = f"it is a symbolic link (to {os.readlink(path)}), not a submission folder"
        elif problem is None and not os.path.isdir(path):
            problem = "it is not a folder"
        if problem is not None:
            self.log.warning("Not collecting %s: %s.", path, problem)
            return False
        if self.check_owner and pwd is not None and self._submitted_by_another_user(record):
            return False
        return True

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
        """nbgrader's copy (its include, ignore and size options), of the submission's plain
        files and folders only: no symbolic link is followed (nor kept) and no special file
        read. A submission over the size limits is left out, with an error."""
        student = Path(dest).parent.name
        max_file = 1000 * self.coursedir.max_file_size if self.coursedir.max_file_size else None
        files, skipped = _plain_files(Path(src), max_file)
        size = sum(size for _, size in files)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error(
                "Not collecting %s: its files take %d bytes, more than "
                "c.CourseDirectory.max_dir_size (%d kB).", src, size,
                self.coursedir.max_dir_size)
            return
        with tempfile.TemporaryDirectory(prefix="minigrad-collect-") as staging:
            copied = Path(staging) / "submission"
            copied.mkdir()
            for relative, _ in files:
                target = copied / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                _copy_plain_file(Path(src) / relative, target, Path(src))
            super().do_copy(str(copied), dest)
        for problem in _made_as_nbgrader_submit_does(Path(dest), os.path.basename(src)):
            self.log.warning("%s: %s", student, problem)
        release = Path(
            self.coursedir.format_path(
                self.coursedir.release_directory, ".", self.coursedir.assignment_id
            )
        )
        for note in repair_submission(Path(dest), release, skipped):
            self.log.warning("%s: %s", student, note)


def _made_as_nbgrader_submit_does(submission: Path, name: str) -> list[str]:
    """Give a submission folder made by hand what nbgrader's later steps read and
    `nbgrader submit` always writes: timestamp.txt, a time (autograde and release_feedback
    stop on the whole class without one), and submission_secret.txt, 128 hex digits
    (release_feedback hashes it; an empty one stopped it). What was done, in words."""
    done = []
    stamp = submission / "timestamp.txt"
    try:
        parse_utc(stamp.read_text())
    except Exception:  # noqa: BLE001 - missing, unreadable or not a time
        when = name.rsplit("+", 3)[2]
        stamp.write_text(when)
        done.append(f"its timestamp.txt was missing or no time (not made by `nbgrader "
                    f"submit`); the time in its folder's name was used: {when}")
    secret = submission / "submission_secret.txt"
    try:
        valid = re.fullmatch(r"[0-9a-f]{128}", secret.read_text()) is not None
    except (OSError, UnicodeDecodeError):
        valid = False
    if not valid:
        secret.write_text(secrets.token_hex(64))
        done.append("its submission_secret.txt was missing or malformed: a new one was made "
                    "(the student's `nbgrader fetch_feedback` will not find this feedback; "
                    "hand it over yourself)")
    return done


def _plain_files(folder: Path, max_file: int | None) -> tuple[list, list]:
    """([(path relative to `folder`, size)] of its regular files, at most `max_file` bytes
    each, and [(name, why)] of what is not collected: symbolic links (not followed), special
    files, files over the limit), read without following any link."""
    files, skipped = [], []
    for directory, folders, names in os.walk(folder):
        here = Path(directory)
        for name in list(folders):
            if os.path.islink(here / name):
                folders.remove(name)
                skipped.append((str((here / name).relative_to(folder)), "a symbolic link"))
        for name in names:
            path = here / name
            relative = str(path.relative_to(folder))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                skipped.append((relative, "a symbolic link"))
            elif not stat.S_ISREG(info.st_mode):
                skipped.append((relative, "not a plain file"))
            elif max_file is not None and info.st_size > max_file:
                skipped.append((relative, f"{info.st_size} bytes, over the size limit"))
            else:
                files.append((relative, info.st_size))
    return files, skipped


def _copy_plain_file(source: Path, target: Path, inside: Path) -> None:
    """Copy a regular file of the folder `inside`, refusing one that was swapped since it was
    listed for a link, a pipe, or a file outside the folder (a parent swapped for a link)."""
    descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as reading:
        if not stat.S_ISREG(os.fstat(reading.fileno()).st_mode):
            return
        opened = Path(f"/proc/self/fd/{reading.fileno()}")
        if opened.is_symlink() and inside.resolve() not in Path(os.readlink(opened)).parents:
            return
        with open(target, "wb") as writing:
            shutil.copyfileobj(reading, writing)
    shutil.copystat(source, target, follow_symlinks=False)


def repair_submission(submission: Path, release: Path,
                      skipped: list[tuple[str, str]] = ()) -> list[str]:
    """Repair the submission folder in place against the release folder; return what was
    done. `skipped` are the (name, why) of the submitted entries collect did not copy."""
    expected = sorted(path.name for path in release.glob("*.ipynb"))
    notes = []
    if skipped:
        listed = ", ".join(f"`{name}` ({kind})" for name, kind in skipped)
        notes.append(f"not collected: {listed}")
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
        if not path.exists() and not others:
            shutil.copyfile(release / name, path)
            notes.append(f"no {name} was submitted: graded as the unanswered notebook")
            _put_note(path, f"No `{name}` came with this submission, so this is the "
                            "unanswered notebook, which scores 0.")
        problem = _unreadable(path) if path.exists() else None
        if problem is not None:
            kept = path.with_name(path.name + ".unreadable")
            os.replace(path, kept)
            shutil.copyfile(release / name, path)
            notes.append(f"{name} {problem}: graded as the unanswered notebook")
            _put_note(path, f"The submitted `{name}` {problem}, so it could not be graded; "
                            f"this is the unanswered notebook, which scores 0. Your file is "
                            f"kept as `{kept.name}`: ask your instructor.")
    if skipped and expected and (submission / expected[0]).exists():
        listed = ", ".join(f"`{name}` ({kind})" for name, kind in skipped)
        _put_note(submission / expected[0], f"Not collected from your submission: {listed}. "
                  "Submit the files themselves, not links to them.")
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
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
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

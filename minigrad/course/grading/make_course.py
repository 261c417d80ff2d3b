"""`make course`: an nbgrader course folder made from the lessons, every assignment generated.

    python -m minigrad.course.grading.make_course COURSE [--course-id ID] [--exchange DIR]
                                                  [--lessons 00,03]

writes COURSE/nbgrader_config.py and COURSE/source/NN_name/NN_name.ipynb (one assignment per
lesson, with its solutions and hidden tests), then runs `nbgrader generate_assignment` for
each, which writes COURSE/release/ (what students get) and COURSE/gradebook.db. COURSE and
source/ are left readable by the instructor alone (0700, the gradebook 0600); the exchange,
which every student writes into, is the one shared folder.
A lesson already in COURSE/source is kept as it is: edit your copy there (points, extra
hidden tests) and run `nbgrader generate_assignment NN_name --force` again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from minigrad.course.make_exercises import annotate

LESSONS = Path(__file__).resolve().parents[3] / "lessons"

CONFIG = '''\
# nbgrader's configuration for this course (written by make_course; yours to edit).
from minigrad.course.grading.config import configure

c = get_config()  # noqa: F821 - nbgrader provides get_config
configure(c, course_id={course_id!r}, exchange={exchange!r})
'''


def make_course(
    course: Path,
    lessons: Path = LESSONS,
    course_id: str = "minigrad",
    exchange: str | None = None,
    only: list[str] | None = None,
    generate: bool = True,
) -> list[str]:
    """Write the course folder and (unless `generate` is False) generate each assignment;
    return the assignment names. `exchange` is created, open to every user as nbgrader's
    exchange must be, when it does not exist."""
    paths = sorted(lessons.glob("[0-9][0-9]_*.ipynb"))
    if only:
        paths = [path for path in paths if path.name[:2] in only]
        missing = sorted(set(only) - {path.name[:2] for path in paths})
        if missing:
            raise SystemExit(f"make_course: no lesson numbered {', '.join(missing)} in {lessons}.")
    if not paths:
        raise SystemExit(f"make_course: no lessons NN_name.ipynb in {lessons}.")
    if exchange and Path(os.path.abspath(exchange)).is_relative_to(course.resolve()):
        raise SystemExit(f"make_course: the exchange {exchange} is inside the course folder "
                         f"{course}, which only you may read; put it outside (students write "
                         "their submissions into it).")
    course.mkdir(parents=True, exist_ok=True)
    _make_private(course)
    config = course / "nbgrader_config.py"
    if exchange and not os.path.isdir(exchange):
        os.makedirs(exchange)
        os.chmod(exchange, 0o777)  # students write their submissions into it
    if not config.exists():
        exchange = os.path.abspath(exchange) if exchange else None
        config.write_text(CONFIG.format(course_id=course_id, exchange=exchange))
    names = []
    for path in paths:
        target = course / "source" / path.stem / path.name
        if target.exists():
            print(f"kept your copy of {target}")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            _make_private(course / "source")
            nbformat.write(annotate(nbformat.read(path, as_version=4), path.name), target)
            print(f"wrote {target}")
        # The texts a lesson reads (lessons/data/) go with it: nbgrader releases every file
        # of the assignment's folder, and the notebook finds them in data/.
        if (path.parent / "data").is_dir():
            shutil.copytree(path.parent / "data", target.parent / "data", dirs_exist_ok=True)
        names.append(path.stem)
    for name in names if generate else []:
        nbgrader(course, "generate_assignment", name, "--force")
    if (course / "gradebook.db").exists():
        _make_private(course / "gradebook.db", 0o600)
    return names


def _make_private(path: Path, mode: int = 0o700) -> None:
    """Only the instructor may read `path`: it holds the solutions, hidden tests or grades."""
    try:
        os.chmod(path, mode)
    except PermissionError as error:
        raise SystemExit(
            f"make_course: cannot make {path} private (mode {mode:o}): {error.strerror}. It "
            "holds solutions and grades; use a folder of your own for COURSE."
        ) from error


def nbgrader_env() -> dict[str, str]:
    """The environment for an nbgrader command: this Python's scripts on PATH (nbgrader
    runs `alembic` from there to set up its gradebook)."""
    scripts = os.path.dirname(sys.executable)
    return dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))


def nbgrader(course: Path, *args: str) -> None:
    """Run one nbgrader command in `course`."""
    command = [sys.executable, "-m", "nbgrader", *args]
    done = subprocess.run(command, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"make_course: `nbgrader {' '.join(args)}` failed in {course}:\n{done.stderr[-3000:]}"
        )
    print(f"nbgrader {' '.join(args)}: done")


def _count(number: int, noun: str) -> str:
    """'1 assignment', '2 assignments'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_course", description=__doc__.split("\n")[0])
    parser.add_argument("course", type=Path, help="the course folder to write")
    parser.add_argument("--course-id", default="minigrad")
    parser.add_argument("--exchange", default=None, help="nbgrader's exchange folder")
    parser.add_argument("--lessons", default="", help="lesson numbers, e.g. 00,03 (all if empty)")
    args = parser.parse_args(argv)
    only = [number.strip().zfill(2) for number in args.lessons.split(",") if number.strip()]
    names = make_course(args.course, LESSONS, args.course_id, args.exchange, only or None)
    released = sorted(path.name for path in (args.course / "release").glob("*") if path.is_dir())
    print(f"\n{_count(len(names), 'assignment')} generated now; {args.course}/release/ holds "
          f"{_count(len(released), 'assignment')}: {', '.join(released)}.")
    print(f"Next, in {args.course}:\n  nbgrader release_assignment {names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

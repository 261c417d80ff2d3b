"""`make course`: an nbgrader course folder made from the lessons, every assignment generated.

    python -m minigrad.course.grading.make_course COURSE [--course-id ID] [--exchange DIR]
                                                  [--lessons 00,03]

writes COURSE/nbgrader_config.py and COURSE/source/NN_name/NN_name.ipynb (one assignment per
lesson, with its solutions and hidden tests: keep COURSE private), then runs
`nbgrader generate_assignment` for each, which writes COURSE/release/ (what students get).
A lesson already in COURSE/source is kept as it is: edit your copy there (points, extra
hidden tests) and run `nbgrader generate_assignment NN_name --force` again.
"""

from __future__ import annotations

import argparse
import os
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
    course.mkdir(parents=True, exist_ok=True)
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
            nbformat.write(annotate(nbformat.read(path, as_version=4), path.name), target)
            print(f"wrote {target}")
        names.append(path.stem)
    for name in names if generate else []:
        nbgrader(course, "generate_assignment", name, "--force")
    return names


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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_course", description=__doc__.split("\n")[0])
    parser.add_argument("course", type=Path, help="the course folder to write")
    parser.add_argument("--course-id", default="minigrad")
    parser.add_argument("--exchange", default=None, help="nbgrader's exchange folder")
    parser.add_argument("--lessons", default="", help="lesson numbers, e.g. 00,03 (all if empty)")
    args = parser.parse_args(argv)
    only = [number.strip().zfill(2) for number in args.lessons.split(",") if number.strip()]
    names = make_course(args.course, LESSONS, args.course_id, args.exchange, only or None)
    print(f"\n{len(names)} assignments in {args.course}/release/. Next, in {args.course}:")
    print(f"  nbgrader release_assignment {names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

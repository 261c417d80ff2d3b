"""What grading a class costs: 150 submissions of one lesson, each in its own sandbox.

    python benchmarks/grading.py [NN] [--students 150] [--jobs 2]   (make bench-grading: 03)

Makes a course folder with the lesson (minigrad.course.grading.make_course), writes the
submissions into it as `nbgrader collect` leaves them (a third all correct, a third with a
wrong backward in the first exercise, a third unanswered), and times the instructor's
commands as site/teaching.md gives them: `make grade`'s autograding (minigrad.course.grading.grade:
JOBS shards of nbgrader's autograde at once, every submission's kernel in a bwrap sandbox),
`nbgrader generate_feedback` and `export`. The baseline, measured in the same run, is the
lesson's own run time top to bottom in a fresh kernel, unsandboxed (nbclient, as nbval runs
it): the ratio says what grading, isolation included, adds per submission.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minigrad.course.exercise_cells import BEGIN, END, exercise_cells  # noqa: E402
from minigrad.course.grading.grade import grade  # noqa: E402
from minigrad.course.grading.make_course import make_course, nbgrader_env  # noqa: E402


def nbgrader(course: Path, *args: str) -> float:
    """Run `nbgrader ARGS` in the course folder; its wall seconds."""
    env = nbgrader_env()
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return seconds


def submissions(lesson: Path, release: Path, students: int) -> list[nbformat.NotebookNode]:
    """`students` notebooks: correct, a wrong first exercise, unanswered, in turn."""
    source = nbformat.read(lesson, as_version=4)
    released = nbformat.read(release, as_version=4)
    roles = exercise_cells(source, lesson.name)
    first = next(index for index, role in roles if role.kind == "exercise")
    answered = nbformat.from_dict(released)
    for index, role in roles:
        if role.kind == "exercise":
            lines = source.cells[index].source.splitlines()
            answered.cells[index].source = "\n".join(
                line for line in lines if line.strip() not in (BEGIN, END)
            )
    wrong = nbformat.from_dict(answered)
    # A wrong answer that still runs: the first exercise's answer negated at its return.
    wrong.cells[first].source = wrong.cells[first].source.replace("return ", "return -", 1)
    kinds = (answered, wrong, released)
    return [nbformat.from_dict(kinds[number % 3]) for number in range(students)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lesson", nargs="?", default="03")
    parser.add_argument("--students", type=int, default=150)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    lesson = next((ROOT / "lessons").glob(f"{args.lesson.zfill(2)}_*.ipynb"))
    name = lesson.stem

    start = time.perf_counter()
    notebook = nbformat.read(lesson, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(lesson.parent)}}).execute()
    lesson_s = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as folder:
        course = Path(folder) / "course"
        make_course(course, ROOT / "lessons", "minigrad", None, [args.lesson.zfill(2)])
        release = course / "release" / name / f"{name}.ipynb"
        for number, submitted in enumerate(submissions(lesson, release, args.students)):
            target = course / "submitted" / f"student{number:02d}" / name
            target.mkdir(parents=True)
            nbformat.write(submitted, target / f"{name}.ipynb")
            (target / "timestamp.txt").write_text("2026-11-27 12:00:00.000000 UTC")
        start = time.perf_counter()
        statuses = grade(course, name, jobs=args.jobs)
        autograde_s = time.perf_counter() - start
        if any(statuses.values()):
            raise SystemExit(f"make grade failed: {statuses}; logs in {course / 'logs'}")
        feedback_s = nbgrader(course, "generate_feedback", name)
        export_s = nbgrader(course, "export", "--to", "grades.csv")
        rows = (course / "grades.csv").read_text().splitlines()

    per = autograde_s / args.students
    print(f"lesson {name}, {args.students} submissions, {args.jobs} jobs on {os.cpu_count()} "
          f"cores, Python {sys.version.split()[0]}")
    print("| step | seconds | per submission |\n|---|---|---|")
    print(f"| the lesson itself, top to bottom, fresh kernel | {lesson_s:.1f} | |")
    print(f"| make grade (nbgrader autograde, {args.jobs} at once, sandboxed) | {autograde_s:.1f} "
          f"| {per:.2f} ({per / lesson_s:.2f}x the lesson) |")
    print(f"| the same, in core-seconds | {autograde_s * args.jobs:.1f} "
          f"| {per * args.jobs:.2f} ({per * args.jobs / lesson_s:.2f}x the lesson) |")
    print(f"| nbgrader generate_feedback | {feedback_s:.1f} | {feedback_s / args.students:.2f} |")
    print(f"| nbgrader export (CSV) | {export_s:.1f} | |")
    print(f"grades.csv: {len(rows) - 1} students; first rows: {rows[1:4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

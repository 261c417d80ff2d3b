"""`make grade`: autograde a class's submissions of one lesson, several at a time.

    python -m minigrad.course.grading.grade COURSE ASSIGNMENT_OR_NUMBER [--jobs N]
                                            [--student ID] [--force] [--unsafe]

nbgrader's `autograde` grades one submission after another in one process. This splits the
class into JOBS shards and runs one `nbgrader autograde` per shard at the same time, with the
course's configuration (each submission in its own sandbox, sandbox.py). Every shard's log
goes to COURSE/logs/autograde/ASSIGNMENT/shard-K.log. A submission whose kernel is killed
or runs away costs that student the cells it broke (the CSV shows `!` where nothing could
be graded), never the other students: their shards go on.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minigrad.course.grading.make_course import nbgrader_env

# The gradebook is one SQLite file; a shard that found it locked tries again.
LOCKED = "database is locked"
TRIES = 3


def assignment_name(course: Path, given: str) -> str:
    """'03' or '3' or '03_custom_functions' -> '03_custom_functions' (from COURSE/source)."""
    names = sorted(path.name for path in (course / "source").iterdir() if path.is_dir())
    if given in names:
        return given
    matches = [name for name in names if given.isdigit() and name[:2] == given.zfill(2)]
    if len(matches) != 1:
        raise SystemExit(
            f"grade: no assignment {given!r} in {course / 'source'}; there are: "
            f"{', '.join(names) or 'none (run make course first)'}."
        )
    return matches[0]


def submitted_students(course: Path, assignment: str) -> list[str]:
    """Students with a collected submission of `assignment` (COURSE/submitted/ID/ASSIGNMENT)."""
    return sorted(
        path.parent.name for path in (course / "submitted").glob(f"*/{assignment}") if path.is_dir()
    )


def shards(students: list[str], jobs: int) -> list[list[str]]:
    """`students` dealt round-robin into at most `jobs` non-empty shards."""
    dealt = [students[start::jobs] for start in range(max(1, jobs))]
    return [shard for shard in dealt if shard]


def grade(course: Path, assignment: str, jobs: int = 2, student: str | None = None,
          force: bool = False, unsafe: bool = False) -> dict[str, int]:
    """Autograde every submission of `assignment` (or only `student`'s); return each shard
    log's exit status."""
    students = [student] if student else submitted_students(course, assignment)
    if not students:
        raise SystemExit(f"grade: nothing collected for {assignment} in {course / 'submitted'}; "
                         f"run `nbgrader collect {assignment}` first.")
    logs = course / "logs" / "autograde" / assignment
    logs.mkdir(parents=True, exist_ok=True)
    groups = shards(students, jobs)
    print(f"Autograding {len(students)} submissions of {assignment} in {len(groups)} "
          f"parallel shards (logs in {logs})...")

    def run(number: int) -> int:
        others = sorted(set(students) - set(groups[number]))
        command = [sys.executable, "-m", "nbgrader", "autograde", assignment, "--student",
                   groups[number][0] if len(groups[number]) == 1 else "*"]
        if others and len(groups[number]) > 1:
            command.append(f"--CourseDirectory.student_id_exclude={','.join(others)}")
        if force:
            command.append("--force")
        if unsafe:
            command.append("--SandboxedExecute.unsafe=True")
        log = logs / f"shard-{number + 1}.log"
        for _ in range(TRIES):
            with open(log, "w") as file:
                done = subprocess.run(command, cwd=course, env=nbgrader_env(), stdout=file,
                                      stderr=subprocess.STDOUT)
            if done.returncode == 0 or LOCKED not in log.read_text(errors="replace"):
                return done.returncode
            if "--force" not in command:  # what was graded before the lock, again
                command.append("--force")
        return done.returncode

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        statuses = dict(zip([f"shard-{n + 1}" for n in range(len(groups))],
                            pool.map(run, range(len(groups)))))
    seconds = time.perf_counter() - started
    failed = [name for name, status in statuses.items() if status != 0]
    print(f"Done in {seconds:.1f} s ({seconds / len(students):.2f} s per submission).")
    if failed:
        print(f"nbgrader reported errors in {', '.join(failed)}: read their logs in {logs}; "
              "a submission it could not grade shows `!` in `nbgrader export`'s CSV.")
    return statuses


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade", description=__doc__.split("\n")[0])
    parser.add_argument("course", type=Path, help="the course folder (make course's COURSE)")
    parser.add_argument("assignment", help="the lesson number (03) or assignment name")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--student", default=None, help="only this student (a dry run)")
    parser.add_argument("--force", action="store_true", help="grade again what was graded")
    parser.add_argument("--unsafe", action="store_true",
                        help="no sandbox: submissions run as you (not recommended)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    course = args.course.resolve()
    assignment = assignment_name(course, args.assignment)
    statuses = grade(course, assignment, args.jobs, args.student, args.force, args.unsafe)
    return 0 if all(status == 0 for status in statuses.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

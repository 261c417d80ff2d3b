"""What a check cell's hidden tests call when a submission is graded.

A student's code runs in the same Python as the checks, so it can replace a check
(`lesson00.check_0_1 = print`) or a helper (`check.fail = ...`). Hidden tests therefore run
the check again from a fresh copy of the course's modules, loaded from their files and
never seen by the student's code, and give their own cases that copy's `check` module.
What this does not defend against (code that patches minigrad itself, NumPy or Python's
import machinery) is listed in site/teaching.md, "Teaching a class".
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

COURSE = "minigrad.course"


def fresh_module(name: str) -> ModuleType:
    """minigrad.course.<name> imported again from its file, with fresh copies of every course
    module it imports; the modules the student's code sees are left as they were."""
    parent = sys.modules["minigrad"]
    kept = {key: module for key, module in sys.modules.items() if _is_course(key)}
    kept_attribute = parent.__dict__.get("course")
    for key in kept:
        del sys.modules[key]
    try:
        return importlib.import_module(f"{COURSE}.{name}")
    finally:
        for key in [key for key in sys.modules if _is_course(key)]:
            del sys.modules[key]
        sys.modules.update(kept)
        if kept_attribute is not None:
            parent.course = kept_attribute


def _is_course(key: str) -> bool:
    return key == COURSE or key.startswith(COURSE + ".")


def run_hidden(
    exercise: str, tests: Callable[..., None] | None = None, *answers: Any
) -> None:
    """Exercise `exercise`'s ("2.1") check on `answers` again, from fresh modules and quietly
    (when minigrad.course.lessonNN has `check_N_k`), then `tests(check, *answers)` with a
    fresh `minigrad.course.check`: cases the visible check does not try. Either raises
    CheckError with the mistake."""
    lesson_number = int(exercise.split(".")[0])
    try:
        lesson = fresh_module(f"lesson{lesson_number:02d}")
    except ModuleNotFoundError:
        lesson = None
    visible = getattr(lesson, f"check_{exercise.replace('.', '_')}", None)
    if visible is not None:
        with contextlib.redirect_stdout(io.StringIO()):  # its "correct." is printed already
            visible(*answers)
    # An exercise a course added has no check in the package: its check cell holds it, and
    # nbgrader restores that cell before running it, so only these cases are left to run.
    if tests is not None:
        tests(fresh_module("check"), *answers)

"""Grading a class with nbgrader: the course folder, its configuration, named stubs, the CSV
export, and the hidden tests' fresh checks (the one part a graded notebook imports)."""

from minigrad.course.grading.recheck import fresh_module, run_hidden

__all__ = ["fresh_module", "run_hidden"]

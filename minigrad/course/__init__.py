"""The course's machinery: exercise checks (one module per lesson) and student versions."""

from minigrad.course.check import CheckError

__all__ = ["CheckError"]

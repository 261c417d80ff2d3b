"""A module a compiled step's helpers reach into (tests/test_compile_reviewer_hunt.py):
a setting read as `helper.SCALE`, and a function `outer` that calls `inner`, which a loop
may rebind between calls."""

SCALE = 1.0


def inner(value):
    return value


def outer(value):
    return inner(value)

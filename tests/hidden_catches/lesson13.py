"""Answers that pass lesson 13's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # (Exercise 13.1's former catch, parameters compared by their own id instead of their
    # owner's, is caught by the visible check now: `p.data` is a view of the parameter's
    # array, so its own id never names the buffer.)
}

"""Answers that pass lesson 04's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # Recording switched off and back on by hand: right when the caller records, but a
    # step called from inside no_grad switches recording on for the caller.
    "Exercise 4.2": [
        "minigrad.set_grad_enabled(False)\n"
        "for p in params:\n"
        "    if p.grad is None:\n"
        "        continue\n"
        "    p -= lr * p.grad\n"
        "    p.grad = None\n"
        "minigrad.set_grad_enabled(True)"
    ],
}

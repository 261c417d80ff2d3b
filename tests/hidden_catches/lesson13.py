"""Answers that pass lesson 13's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # (Exercise 13.1's former catch, parameters compared by their own id instead of their
    # owner's, is caught by the visible check now: `p.data` is a view of the parameter's
    # array, so its own id never names the buffer.)
    # The right placement, and the peaks the visible check measures copied into a table
    # instead of predicted: the graded check asks for 1, 128 and 1024 blocks too.
    "Exercise 13.3": [
        "if len(blocks) == 1:\n"
        "    return blocks[0](h)\n"
        "middle = len(blocks) // 2\n"
        "first, second = blocks[:middle], blocks[middle:]\n"
        "h = checkpoint(lambda v: bisect(first, v), h)\n"
        "return checkpoint(lambda v: bisect(second, v), h)",
        "return {2: 3, 4: 4, 8: 5, 16: 6, 32: 7, 64: 8}[n]",
    ],
}

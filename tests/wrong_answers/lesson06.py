"""Deliberately wrong answers for lesson 06's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # f kept, but backward forgets to scale: the gradient passes unchanged.
    "Exercise 6.1": [
        "ctx.f = f\nreturn x",
        "return grad_output, None",
    ],
    # The sign of d/da flipped: (1 - b) instead of (b - 1).
    "Exercise 6.2": [
        "ctx.save_for_backward(a, b)\nreturn 1 - a + a * b",
        "a, b = ctx.saved_tensors\nreturn grad_output * (1 - b), grad_output * a",
    ],
    # The plain average of the 16 gates, softmax weights forgotten.
    "Exercise 6.3": [
        "return relaxed_gates(a, b).mean(-1)",
    ],
}

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
    # f2 applied to both paths into z: 2·f2·z instead of z + f2·z.
    "Exercise 6.5": [
        "z = w * x\n"
        "grad_z = 2 * f2 * z\n"
        "return z * z, grad_z * x, f1 * grad_z * w",
    ],
}

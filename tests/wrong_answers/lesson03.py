"""Deliberately wrong answers for lesson 03's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The power rule half applied: 3x instead of 3x².
    "Exercise 3.1": [
        "ctx.save_for_backward(x)\nreturn x**3",
        "(x,) = ctx.saved_tensors\nreturn 3 * x * grad_output",
    ],
    # The chain factor k (the derivative of the inner k·x) is missing.
    "Exercise 3.2": [
        "out = minigrad.exp(k * x)\nctx.save_for_backward(out)\nctx.k = k\nreturn out",
        "(out,) = ctx.saved_tensors\nreturn out * grad_output, None",
    ],
    # A sign error in d(a/b)/db.
    "Exercise 3.3": [
        "ctx.save_for_backward(a, b)\nreturn a / b",
        "a, b = ctx.saved_tensors\n"
        "grad_a = grad_b = None\n"
        "if ctx.needs_input_grad[0]:\n"
        "    grad_a = grad_output / b\n"
        "if ctx.needs_input_grad[1]:\n"
        "    grad_b = grad_output * a / b**2\n"
        "return grad_a, grad_b",
    ],
    # The None for k is forgotten: one gradient for two inputs.
    "Exercise 3.4": [
        "return minigrad.exp(k * x)",
        "_, k = inputs\nctx.save_for_backward(output)\nctx.k = k",
        "(out,) = ctx.saved_tensors\nreturn ctx.k * out * grad_output",
    ],
}

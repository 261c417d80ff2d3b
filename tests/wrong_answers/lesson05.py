"""Deliberately wrong answers for lesson 05's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The lesson's (out, in) formula for the weight copied into the (in, out) layout.
    "Exercise 5.1": [
        "grad_x = grad_output @ W.T\n"
        "grad_W = grad_output.T @ x\n"
        "grad_b = grad_output.sum(0)\n"
        "return grad_x, grad_W, grad_b",
    ],
    # The squared norms: the square root forgotten.
    "Exercise 5.2": [
        "per_sample = grad_output.unsqueeze(-1) * x.unsqueeze(-2)\n"
        "return (per_sample * per_sample).sum((1, 2))",
    ],
    # forward skips a missing bias, but backward returns a gradient for it anyway.
    "Exercise 5.3": [
        "ctx.save_for_backward(x, weight)\n"
        "out = x.data @ weight.data.T\n"
        "return out if bias is None else out + bias.data",
        "x, weight = ctx.saved_tensors\n"
        "return grad_output @ weight, grad_output.T @ x, grad_output.sum(0)",
    ],
    # grad_output left out of the weight's gradient: the outer products summed unscaled.
    "Exercise 5.4": [
        "g = grad_output.unsqueeze(1)\n"
        "return g * (x2 @ W.T), x1.T @ x2, g * (x1 @ W), grad_output.sum()",
    ],
}

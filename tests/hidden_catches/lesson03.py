"""Answers that pass lesson 03's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # x kept on the class instead of ctx: right for one Cube, wrong for two in one graph.
    "Exercise 3.1": [
        "Cube.x = x\nreturn x**3",
        "return 3 * Cube.x**2 * grad_output",
    ],
    # k kept on the class: two ScaledExps with different k in one graph share the last one.
    "Exercise 3.2": [
        "out = minigrad.exp(k * x)\nctx.save_for_backward(out)\nScaledExp.k = k\nreturn out",
        "(out,) = ctx.saved_tensors\nreturn ScaledExp.k * out * grad_output, None",
    ],
    # a and b kept on the class: Divide(a, b) * Divide(b, a) mixes up the two calls.
    "Exercise 3.3": [
        "Divide.a, Divide.b = a, b\nreturn a / b",
        "a, b = Divide.a, Divide.b\n"
        "grad_a = grad_b = None\n"
        "if ctx.needs_input_grad[0]:\n"
        "    grad_a = grad_output / b\n"
        "if ctx.needs_input_grad[1]:\n"
        "    grad_b = -grad_output * a / b**2\n"
        "return grad_a, grad_b",
    ],
    "Exercise 3.4": [
        "return minigrad.exp(k * x)",
        "_, k = inputs\nctx.save_for_backward(output)\nScaledExpSetup.k = k",
        "(out,) = ctx.saved_tensors\nreturn ScaledExpSetup.k * out * grad_output, None",
    ],
}

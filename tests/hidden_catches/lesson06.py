"""Answers that pass lesson 06's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # The broadcast axes summed by hand, as the check's own case has them (a (3, 1), b (4,)):
    # with a (4,) and b (3, 1) the sums land on the wrong axes.
    "Exercise 6.2": [
        "ctx.save_for_backward(a, b)\nreturn 1 - a + a * b",
        "a, b = ctx.saved_tensors\n"
        "grad_a = grad_output * (b - 1)\n"
        "grad_b = grad_output * a\n"
        "if grad_a.shape != a.shape:\n"
        "    grad_a = grad_a.sum(1, keepdim=True)\n"
        "if grad_b.shape != b.shape:\n"
        "    grad_b = grad_b.sum(0)\n"
        "return grad_a, grad_b",
    ],
    # A softmax written by hand, without subtracting the largest logit: right for small
    # logits, nan once one logit is large (exp(800) overflows).
    "Exercise 6.3": [
        "weights = logits.exp() / logits.exp().sum()\n"
        "return (relaxed_gates(a, b) * weights).sum(-1)",
    ],
}

"""Answers that pass lesson 05's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # keepdim, then the .squeeze() a shape hint suggests: right while out > 1, but with one
    # output grad_b is squeezed to a single number instead of shape (1,).
    "Exercise 5.1": [
        "grad_x = grad_output @ W.T\n"
        "grad_W = x.T @ grad_output\n"
        "grad_b = grad_output.sum(0, keepdim=True).squeeze()\n"
        "return grad_x, grad_W, grad_b",
    ],
    # Whether there is a bias kept on the class instead of ctx: right for one layer, wrong
    # for two in one graph, one with a bias and one without.
    "Exercise 5.3": [
        "ctx.save_for_backward(x, weight)\n"
        "LinearOptionalBias.has_bias = bias is not None\n"
        "out = x.data @ weight.data.T\n"
        "if bias is not None:\n"
        "    out = out + bias.data\n"
        "return out",
        "x, weight = ctx.saved_tensors\n"
        "grad_bias = grad_output.sum(0) if LinearOptionalBias.has_bias else None\n"
        "return grad_output @ weight, grad_output.T @ x, grad_bias",
    ],
}

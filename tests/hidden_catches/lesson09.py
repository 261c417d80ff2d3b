"""Answers that pass lesson 09's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not.

Exercise 9.1 has none: its visible check already tries f'' > 0, f'' < 0 and f'' = 0 with
several lr and names every slip of the guard and the two steps; the hidden cases (a small
f'' > 0, a Newton step to the right, the default lr) found no further realistic one."""

CAUGHT = {
    # The second derivative with backward(), returning w.grad: right on a fresh w, but the
    # gradient stays in w.grad, so a second call on the same w returns both H v's summed.
    "Exercise 9.2": [
        "(g,) = minigrad.grad(f(w), w, create_graph=True)\n"
        "(g * v).sum().backward()\n"
        "return w.grad",
    ],
    # Clips only when some entry is above 1: a gradient whose only large entries are
    # negative comes back unclipped.
    "Exercise 9.3": [
        "if (grad.data > 1).any():\n"
        "    return grad.clamp(-1.0, 1.0)\n"
        "return grad",
    ],
    # x given a new array (x.data = ...) instead of written into its own: y looks right, but
    # a Variable sharing y's array never sees the change.
    "Exercise 9.4": [
        "x.data = np.maximum(x.data, 0)\nctx.mark_dirty(x)\nctx.save_for_backward(x)\nreturn x",
        "(output,) = ctx.saved_tensors\nreturn grad * (output.data > 0)",
    ],
    # u = grad + (∂f/∂z)^T u iterated a fixed 100 times: enough where ||W||_2 <= 0.8 (the
    # visible cases), far from it where ||W||_2 = 0.97 (0.97^100 is about 0.05).
    "Exercise 9.5": [
        "z, _ = solve_fixed_point(a.data, W)\nctx.z, ctx.W = z, W\nreturn z",
        "s = 1.0 - ctx.z**2\n"
        "u = grad.data\n"
        "for _ in range(100):\n"
        "    u = grad.data + ctx.W.T @ (s * u)\n"
        "return s * u, None",
    ],
    # A loop over the entries: right for 1-d (and 2-d, row by row) arrays, but a single
    # number, a 0-d array, cannot be iterated.
    "Exercise 9.6": [
        "received = np.array([wi + xi**2 for xi, wi in zip(x, w)])\n"
        "return received, 2 * x * np.clip(received, -1.0, 1.0) + 3.0",
    ],
}

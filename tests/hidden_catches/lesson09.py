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
}

"""Deliberately wrong answers for lesson 09's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # No guard: a Newton step everywhere (towards a maximum where f'' < 0, and a division
    # by 0 where f'' = 0).
    "Exercise 9.1": [
        "point = minigrad.Variable(x, requires_grad=True)\n"
        "(first,) = minigrad.grad(f(point), point, create_graph=True)\n"
        "(second,) = minigrad.grad(first, point)\n"
        "return x - first.item() / second.item() if second.item() != 0 else x",
    ],
    # The gradient itself, not H v.
    "Exercise 9.2": [
        "(g,) = minigrad.grad(f(w), w, create_graph=True)\nreturn g",
    ],
    # Negative entries clipped to 0 instead of -1.
    "Exercise 9.3": [
        "return grad.clamp(0.0, 1.0)",
    ],
    # forward right, backward lets the gradient through everywhere.
    "Exercise 9.4": [
        "np.maximum(x.data, 0, out=x.data)\nctx.mark_dirty(x)\nctx.save_for_backward(x)\nreturn x",
        "return grad",
    ],
    # forward right; backward one step through f only, s * grad, without (I - ∂f/∂z)^{-1}.
    "Exercise 9.5": [
        "z, _ = solve_fixed_point(a.data, W)\nctx.z, ctx.W = z, W\nreturn z",
        "return (1.0 - ctx.z**2) * grad.data, None",
    ],
    # The hook left out: x.grad computed from the unclipped gradient.
    "Exercise 9.6": [
        "received = w + x**2\nreturn received, 2 * x * received + 3.0",
    ],
}

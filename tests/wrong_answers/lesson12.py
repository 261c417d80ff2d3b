"""Deliberately wrong answers for lesson 12's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The term of b is not multiplied by b's tangent ("forgot ×ḃ").
    "Exercise 12.1": [
        "ctx.save_for_forward(a, b)\nreturn a.data * np.cos(b.data)",
        "a, b = ctx.saved_for_forward\nreturn a_tangent * b.cos() - a * b.sin()",
    ],
    # One column short: range(x.numel() - 1).
    "Exercise 12.2": [
        """
columns = []
for j in range(x.numel() - 1):
    e_j = np.zeros(x.shape)
    e_j[j] = 1.0
    _, column = functional.jvp(f, x, minigrad.Variable(e_j))
    columns.append(column.data)
return np.stack(columns, axis=1)
""",
    ],
    # Only the term from moving the last w; the factor (w·w) is treated as a constant.
    "Exercise 12.3": [
        "return 4 * (w @ w) * v",
    ],
    # The last step transposed with A instead of A.T.
    "Exercise 12.4": [
        """
b_bar = c * u[None, :]
g_bar = np.zeros(A.shape[0])
g_bar[1:4] = b_bar.sum(axis=1)
return A @ (d * g_bar)
""",
    ],
    # Perturbation confusion: the same tag for every call, as the untagged Dual.
    "Exercise 12.5": [
        """
out = f(Tagged(x, 1.0, 1))
if isinstance(out, Tagged) and out.tag == 1:
    return out.tangent
return 0.0
""",
    ],
}

"""Answers that pass lesson 12's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # The tangents used as plain numbers (.data): the right tangent, differentiable in a and
    # b, but not in the tangents themselves, so the JVP cannot be transposed into a VJP.
    "Exercise 12.1": [
        "ctx.save_for_forward(a, b)\nreturn a.data * np.cos(b.data)",
        "a, b = ctx.saved_for_forward\n"
        "return a_tangent.data * b.cos() - a * b.sin() * b_tangent.data",
    ],
    # Forward finite differences: n + 1 plain calls of f (the visible check allows n + 1) and
    # within its tolerance, but no call carries a tangent and the columns are off by ~1e-7.
    "Exercise 12.2": [
        """
h = 1e-7
y = f(x).data
columns = []
for j in range(x.numel()):
    moved = x.data.copy()
    moved[j] += h
    columns.append((f(minigrad.Variable(moved)).data - y) / h)
return np.stack(columns, axis=1)
""",
    ],
    # The right Hv, computed by scaling the caller's w and v in place.
    "Exercise 12.3": [
        "ww, wv = w @ w, w @ v\nv *= 4 * ww\nw *= 8 * wv\nreturn v + w",
    ],
    # The slice's transpose written into a vector of fixed length 4, the lesson's n: right
    # for every visible case (n = 4), wrong for the A of 6 × 6 and 7 × 7 of the grade.
    "Exercise 12.4": [
        """
g_bar = np.zeros(4)
g_bar[1:4] = (c * u[None, :]).sum(axis=1)
return A.T @ (d * g_bar)
""",
    ],
}

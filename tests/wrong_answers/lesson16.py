"""Deliberately wrong answers for lesson 16's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # Softmax's row-sum term dropped: dS = P ⊙ dP.
    "Exercise 16.1": [
        """
scores = q @ np.swapaxes(k, -1, -2) * scale
p = np.exp(scores - scores.max(axis=-1, keepdims=True))
p /= p.sum(axis=-1, keepdims=True)
grad_scores = p * (grad_output @ np.swapaxes(v, -1, -2))
grad_v = np.swapaxes(p, -1, -2) @ grad_output
return grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale, grad_v
""",
    ],
    # The sigmoid's derivative left out of the two gates' gradients.
    "Exercise 16.2": [
        """
i, f, g = 1 / (1 + np.exp(-a_i)), 1 / (1 + np.exp(-a_f)), np.tanh(a_g)
return grad_c * g, grad_c * c_prev, grad_c * i * (1 - g**2), grad_c * f
""",
    ],
    # The heads forgotten, and the whole square counted as allowed.
    "Exercise 16.3": [
        "return batch * (3 * tokens * head_size + tokens**2), batch * tokens**2",
    ],
}

"""Answers that pass lesson 16's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # Transposes written .T: right for the visible check's matrices, wrong for a batch of heads
    # (q of shape (2, 3, 5, 4)), where .T reverses every axis.
    "Exercise 16.1": [
        """
scores = q @ k.T * scale
p = np.exp(scores - scores.max(axis=-1, keepdims=True))
p /= p.sum(axis=-1, keepdims=True)
grad_p = grad_output @ v.T
grad_scores = p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))
return grad_scores @ k * scale, grad_scores.T @ q * scale, p.T @ grad_output
""",
    ],
    # The right numbers, but grad_c_prev is a second name for the caller's grad_c, and *=
    # changes it (the visible check passes copies).
    "Exercise 16.2": [
        """
i, f, g = 1 / (1 + np.exp(-a_i)), 1 / (1 + np.exp(-a_f)), np.tanh(a_g)
grad_a_i = grad_c * g * i * (1 - i)
grad_a_f = grad_c * c_prev * f * (1 - f)
grad_a_g = grad_c * i * (1 - g**2)
grad_c_prev = grad_c
grad_c_prev *= f
return grad_a_i, grad_a_f, grad_a_g, grad_c_prev
""",
    ],
    # The mask built to count its entries: right up to the visible check's 1,024 tokens, a
    # MemoryError for a context of 16,777,216.
    "Exercise 16.3": [
        """
allowed = int(np.tril(np.ones((tokens, tokens), dtype=bool)).sum())
return batch * heads * (3 * tokens * head_size + tokens * tokens), batch * heads * allowed
""",
    ],
}

"""Deliberately wrong answers for lesson 15's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # Section 4's stride-1 recipe as it is: the kernel not flipped, and stride and padding
    # left out (dx has the wrong shape).
    "Exercise 15.1": [
        """
k, kw = weight.shape[2:]
full = np.pad(grad_output, ((0, 0), (0, 0), (k - 1, k - 1), (kw - 1, kw - 1)))
windows = sliding_window_view(full, (k, kw), axis=(2, 3))
return np.einsum("nohwkl,ockl->nchw", windows, weight)
""",
    ],
    # The path through the mean dropped: μ treated as a constant.
    "Exercise 15.2": [
        """
sigma = np.sqrt(x.var(axis=0) + eps)
normalized = (x - x.mean(axis=0)) / sigma
return (grad_output - normalized * (grad_output * normalized).mean(axis=0)) / sigma
""",
    ],
    # The padding forgotten.
    "Exercise 15.3": [
        """
sizes = []
for kernel, stride, padding, dilation in layers:
    size = (size - dilation * (kernel - 1) - 1) // stride + 1
    sizes.append(size)
return sizes
""",
    ],
    # The strides ignored: every layer's taps one input apart.
    "Exercise 15.4": [
        "return 1 + sum(dilation * (kernel - 1) for kernel, _, _, dilation in layers)",
    ],
}

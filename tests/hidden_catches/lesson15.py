"""Answers that pass lesson 15's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # The padding cut off with [p:-p]: right for every padding the visible check uses (1 and
    # 2), empty for padding 0, where -0 is 0.
    "Exercise 15.1": [
        """
n, out_channels, rows, cols = grad_output.shape
k, kw = weight.shape[2:]
height, width = input_size
spread = np.zeros((n, out_channels, (rows - 1) * stride + 1, (cols - 1) * stride + 1))
spread[:, :, ::stride, ::stride] = grad_output
extra_rows = height + 2 * padding - ((rows - 1) * stride + k)
extra_cols = width + 2 * padding - ((cols - 1) * stride + kw)
full = np.pad(
    spread, ((0, 0), (0, 0), (k - 1, k - 1 + extra_rows), (kw - 1, kw - 1 + extra_cols))
)
windows = sliding_window_view(full, (k, kw), axis=(2, 3))
padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
return padded[:, :, padding:-padding, padding:-padding]
""",
    ],
    # Right numbers, but x and grad_output centred and scaled in place: the caller's arrays
    # change (the visible check passes copies).
    "Exercise 15.2": [
        """
sigma = np.sqrt(x.var(axis=0) + eps)
x -= x.mean(axis=0)
x /= sigma
grad_output -= grad_output.mean(axis=0)
return (grad_output - x * (grad_output * x).mean(axis=0)) / sigma
""",
    ],
    # Walks from the output with layers.reverse(): the right field, the caller's list reversed.
    "Exercise 15.4": [
        """
field = 1
layers.reverse()
for kernel, stride, _, dilation in layers:
    field = stride * (field - 1) + dilation * (kernel - 1) + 1
return field
""",
    ],
}

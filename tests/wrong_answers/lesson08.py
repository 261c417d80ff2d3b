"""Deliberately wrong answers for lesson 08's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The map kernel's guard copied: thread n - 1 reads x[n].
    "Exercise 8.1": [
        "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n"
        "if i < x.size:\n"
        "    out[i] = x[i + 1] - x[i]",
    ],
    # No zero outside the matrix: those elements keep whatever the tile held.
    "Exercise 8.2": [
        "ty = cuda.threadIdx.y\n"
        "tx = cuda.threadIdx.x\n"
        "row = tile_row * tile.shape[0] + ty\n"
        "col = tile_col * tile.shape[0] + tx\n"
        "if row < matrix.shape[0] and col < matrix.shape[1]:\n"
        "    tile[ty, tx] = matrix[row, col]",
    ],
    # Only x·σ'(x): the product rule's first term, σ(x), is missing.
    "Exercise 8.3": [
        "i = cuda.grid(1)\n"
        "if i < x.size:\n"
        "    s = 1.0 / (1.0 + math.exp(-x[i]))\n"
        "    grad_x[i] = grad_out[i] * x[i] * s * (1.0 - s)",
    ],
}

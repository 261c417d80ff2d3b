"""Answers that pass lesson 08's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not.

Exercise 8.1 has none: its visible check already launches spare threads, a single full
block, one output and none, and names every guard and index slip that changes the output;
the hidden cases (other block sizes, an oversized grid) found no further honest mistake."""

CAUGHT = {
    # The tile size hard-coded as the lesson's 4 instead of read from tile.shape[0]: right
    # for the check's 4 x 4 blocks, wrong for 2 x 2 and 3 x 3 tiles.
    "Exercise 8.2": [
        "ty = cuda.threadIdx.y\n"
        "tx = cuda.threadIdx.x\n"
        "row = tile_row * 4 + ty\n"
        "col = tile_col * 4 + tx\n"
        "if row < matrix.shape[0] and col < matrix.shape[1]:\n"
        "    tile[ty, tx] = matrix[row, col]\n"
        "else:\n"
        "    tile[ty, tx] = 0.0",
    ],
    # The block size hard-coded as the check's 16 threads: right for its launches (16 threads,
    # or a single block), wrong for blocks of 3, 7 or 8 threads.
    "Exercise 8.3": [
        "i = cuda.blockIdx.x * 16 + cuda.threadIdx.x\n"
        "if i < x.size:\n"
        "    s = 1.0 / (1.0 + math.exp(-x[i]))\n"
        "    grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))",
    ],
}

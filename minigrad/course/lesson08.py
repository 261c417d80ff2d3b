"""Checks for lesson 08 (CUDA kernels), run in Numba's CUDA simulator or on a GPU.

Each check launches the learner's kernel or device function on inputs of its own, at
sizes that are not multiples of the block or the tile, and compares with NumPy. The
arrays handed to a kernel are views into larger buffers: in the simulator an index past
the end raises IndexError, and on a GPU (which does not check) a stray write lands in the
padding, where the check sees it.

This module imports numba: the lesson has chosen the simulator (NUMBA_ENABLE_CUDASIM=1)
before its check cells import it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, NoReturn

import numba
import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernels' globals

from minigrad.course import check

# The simulator prefixes an error raised inside a kernel with the thread that raised it.
_THREAD_PREFIX = re.compile(r"^tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]: ")
PAD = 64  # extra elements around every array a kernel gets, to catch stray writes on a GPU


def _split_thread(error: BaseException) -> tuple[str, tuple[int, int] | None]:
    """The error's message without the simulator's prefix, and (threadIdx.x, blockIdx.x)."""
    text = str(error)
    match = _THREAD_PREFIX.match(text)
    if match is None:
        return text, None
    return text[match.end() :], (int(match.group(1)), int(match.group(4)))


def _raise_stub_or(exercise: str, what: str, error: BaseException, hints: list) -> NoReturn:
    """Turn an error raised inside a kernel into a CheckError (the unwritten stub first)."""
    message, _ = _split_thread(error)
    if isinstance(error, NotImplementedError) and message.startswith("Exercise "):
        check.not_written(exercise)
    plain = error
    if message != str(error):
        try:
            plain = type(error)(message)
        except Exception:  # noqa: BLE001 - an exception type with another signature
            plain = error
    check.explain_error(exercise, what, plain, hints)


def _python_function(exercise: str, name: str, value: Any) -> tuple[Callable, bool | None]:
    """The Python function behind `value`, and whether it was jitted as a device function
    (True), a kernel (False) or not jitted at all (None)."""
    if hasattr(value, "py_func") and hasattr(value, "targetoptions"):  # on a GPU
        return value.py_func, bool(value.targetoptions.get("device", False))
    if type(value).__name__ == "FakeCUDAKernel":  # in the simulator
        return value.fn, bool(value._device)
    if inspect.isfunction(value):
        return value, None
    check.fail(
        exercise,
        f"`{name}` should be a function decorated with @cuda.jit; got "
        f"{check.with_article(value)}. Did you pass something else, or call it?",
    )


def _padded(host: np.ndarray, fill: float) -> tuple[Any, Any]:
    """`host` on the device as a view into a buffer with PAD extra elements (each dimension)
    filled with `fill`: returns (the whole buffer, the view)."""
    big_shape = tuple(size + PAD for size in host.shape)
    big = np.full(big_shape, fill)
    big[tuple(slice(0, size) for size in host.shape)] = host
    device = cuda.to_device(big)
    return device, device[tuple(slice(0, size) for size in host.shape)]


NAME_HINTS = [
    (
        NameError,
        "'n'",
        "Inside a kernel only its arguments exist: take the length from an array, "
        "n = x.size (or x.shape[0]).",
    ),
    (
        NameError,
        "'cuda'",
        "Import it once at the top of the notebook, `from numba import cuda`: the "
        "simulator replaces that global while a kernel runs.",
    ),
    (
        AttributeError,
        "threadIdx",
        "Use the `cuda` imported at the top of the notebook (`from numba import cuda`), "
        "not one imported inside a function or under another name.",
    ),
]


# --------------------------------------------------------------------------- Exercise 8.1

# (n, threads per block, factor): n is never a multiple of the block except in the last.
SCALE_CASES = ((37, 16, 2.5), (5, 4, -3.0), (1, 16, 0.5), (24, 8, 1.5))


def _written_by(index: Callable[[int, int, int, int], int], n: int, threads: int) -> np.ndarray:
    """Which elements a guarded kernel with this index formula writes (a bool mask)."""
    blocks = -(-n // threads)
    mask = np.zeros(n, dtype=bool)
    for block in range(blocks):
        for thread in range(threads):
            i = index(block, thread, threads, blocks)
            if 0 <= i < n:
                mask[i] = True
    return mask


# A wrong index formula -> its hint. (b, t, B, G) = blockIdx.x, threadIdx.x, blockDim.x,
# gridDim.x.
INDEX_MISTAKES: tuple[tuple[Callable[[int, int, int, int], int], str], ...] = (
    (
        lambda b, t, B, G: t,
        "only the first {threads} elements were written: the index uses threadIdx.x alone, "
        "so every block writes the same elements. Add the block's start: "
        "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x (or i = cuda.grid(1)).",
    ),
    (
        lambda b, t, B, G: b * G + t,
        "the blocks overlap and leave the end unwritten: the index multiplies blockIdx.x by "
        "gridDim.x (the number of blocks); a block starts blockDim.x (threads per block) "
        "elements after the previous one: i = blockIdx.x * blockDim.x + threadIdx.x.",
    ),
    (
        lambda b, t, B, G: b + t,
        "the blocks overlap: i = blockIdx.x + threadIdx.x makes block 1 start at element 1. "
        "Multiply by the block size: i = blockIdx.x * blockDim.x + threadIdx.x.",
    ),
    (
        lambda b, t, B, G: b * B,
        "only the first element of each block was written: add threadIdx.x, "
        "i = blockIdx.x * blockDim.x + threadIdx.x.",
    ),
    (
        lambda b, t, B, G: b,
        "only the first few elements were written, one per block: the index uses blockIdx.x "
        "alone. i = blockIdx.x * blockDim.x + threadIdx.x.",
    ),
)


def _launch_scale(kernel: Any, n: int, threads: int, factor: float, x_host: np.ndarray) -> tuple:
    """Launch kernel[blocks, threads](out, x, factor); return (out buffer, x buffer) on host."""
    out_big, out = _padded(np.full(n, np.nan), np.nan)
    x_big, x = _padded(x_host, -7.0)
    blocks = -(-n // threads)
    kernel[blocks, threads](out, x, factor)
    cuda.synchronize()
    return out_big.copy_to_host(), x_big.copy_to_host()


def check_8_1(scale_kernel: Any) -> None:
    """scale_kernel(out, x, factor): out[i] = factor * x[i], one thread per element, guarded."""
    exercise = "8.1"
    function, device = _python_function(exercise, "scale_kernel", scale_kernel)
    if device:
        check.fail(
            exercise,
            "scale_kernel is a device function (@cuda.jit(device=True)), which only other "
            "GPU code can call. A kernel is launched from the host with "
            "kernel[blocks, threads](...): decorate it with plain @cuda.jit.",
        )
    kernel = cuda.jit(function) if device is None else scale_kernel
    rng = np.random.default_rng(81)
    for n, threads, factor in SCALE_CASES:
        x_host = rng.uniform(0.5, 2.0, size=n) * rng.choice([-1.0, 1.0], size=n)
        expected = factor * x_host
        blocks = -(-n // threads)
        launch = f"scale_kernel[{blocks}, {threads}](out, x, {factor}) with n = {n}"
        try:
            out_big, x_big = _launch_scale(kernel, n, threads, factor, x_host)
        except IndexError as error:
            message, where = _split_thread(error)
            place = ""
            hint = (
                "The grid is rounded up to whole blocks, so some threads have i >= n: "
                "each thread must test `if i < n:` (strictly less: x[n] is already past "
                "the end) before it touches x[i] or out[i]."
            )
            if where is not None:
                thread, block = where
                i = block * threads + thread
                place = (
                    f" in thread {thread} of block {block} (i = {block}·{threads} + {thread} = {i})"
                )
                if i < n:
                    hint = (
                        "That thread's own index is inside the array, so the index formula "
                        "is off: i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x."
                    )
            check.fail(exercise, f"{launch} raised IndexError{place}: {message}. {hint}")
        except Exception as error:  # noqa: BLE001 - the learner's kernel may raise anything
            _raise_stub_or(exercise, launch, error, NAME_HINTS)
        got = out_big[:n]
        if not np.all(np.isnan(out_big[n:])):
            check.fail(
                exercise,
                f"{launch} wrote past the end of out: threads with i >= n must do nothing. "
                f"Did you forget the guard `if i < n:` (or write `i <= n`)?",
            )
        if not np.array_equal(x_big[:n], x_host):
            check.fail(
                exercise,
                f"{launch} changed x: write only into out (the arguments come in the "
                f"order out, x, factor).",
            )
        if np.allclose(got, expected, rtol=1e-12, atol=0.0):
            continue
        _diagnose_scale(exercise, launch, got, expected, x_host, n, threads, factor)
    check.passed(exercise)


def _diagnose_scale(
    exercise: str,
    launch: str,
    got: np.ndarray,
    expected: np.ndarray,
    x_host: np.ndarray,
    n: int,
    threads: int,
    factor: float,
) -> None:
    """Name the likely mistake behind a wrong out (NaN marks an element never written)."""
    missing = np.isnan(got)
    if missing.all():
        check.fail(
            exercise,
            f"{launch} wrote nothing into out (the check fills it with nan first). Is the "
            f"body written, with the `raise NotImplementedError` line gone, and are the "
            f"arguments in the order (out, x, factor)?",
        )
    if missing[-1] and not missing[:-1].any():
        check.fail(
            exercise,
            f"{launch} left the last element, out[{n - 1}], unwritten: the guard must be "
            f"`if i < n:`, not `if i < n - 1:`.",
        )
    for index, hint in INDEX_MISTAKES:
        written = _written_by(index, n, threads)
        if np.array_equal(~missing, written) and np.allclose(got[written], expected[written]):
            check.fail(exercise, f"{launch}: {hint.format(threads=threads)}")
    written = ~missing
    if np.allclose(got[written], x_host[written]):
        check.fail(exercise, f"{launch} copied x into out: multiply by factor.")
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        check.fail(
            exercise,
            f"{launch} left {int(missing.sum())} of {n} elements unwritten (the first is "
            f"out[{first}]): each i from 0 to n - 1 needs exactly one thread, "
            f"i = blockIdx.x * blockDim.x + threadIdx.x.",
        )
    check.expect_close(exercise, f"out after {launch}", got, expected, rtol=1e-12, atol=0.0)


# --------------------------------------------------------------------------- Exercise 8.2

TILE = 4  # the harness's tile: blocks of 4 x 4 threads keep the simulator quick
MARKER = -999.0  # what the shared tile holds before load_tile runs
OUTSIDE = -5.0  # what lies just outside a matrix (reached only on a GPU, which does not check)

# (matrix shape, (tile_row, tile_col)): a tile inside, tiles on the bottom/right edges, 1 x 1.
LOAD_CASES = (
    ((10, 7), (1, 0)),
    ((10, 7), (2, 1)),
    ((4, 9), (0, 2)),
    ((1, 1), (0, 0)),
    ((6, 13), (1, 3)),
)
MATMUL_SHAPES = (((1, 1), (1, 1)), ((5, 6), (6, 7)), ((4, 8), (8, 4)), ((7, 3), (3, 5)))


def labelled_matrix(rows: int, cols: int) -> np.ndarray:
    """matrix[r, c] = 1000 + 100 r + c: each value says where it was read from."""
    r, c = np.indices((rows, cols))
    return (1000.0 + 100.0 * r + c).astype(np.float64)


def reference_tile(
    matrix: np.ndarray,
    tile_row: int,
    tile_col: int,
    size: int = TILE,
    limits: tuple[int, int] | None = None,
) -> np.ndarray:
    """The tile load_tile should produce, in NumPy. `limits` replaces (rows, cols) in the
    bounds test, to compute what a wrong test gives."""
    rows, cols = matrix.shape if limits is None else limits
    tile = np.zeros((size, size))
    for ty in range(size):
        for tx in range(size):
            row, col = tile_row * size + ty, tile_col * size + tx
            if row < rows and col < cols:
                tile[ty, tx] = matrix[row, col]
    return tile


def _load_harness(load_tile: Any) -> Any:
    """A kernel whose one block runs load_tile into a shared tile and copies it out."""
    size = TILE

    @cuda.jit
    def load_harness(out, matrix, tile_row, tile_col, marker):
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        tile = cuda.shared.array((size, size), numba.float64)
        tile[ty, tx] = marker  # so an element load_tile never writes shows up
        cuda.syncthreads()
        load_tile(tile, matrix, tile_row, tile_col)
        cuda.syncthreads()
        out[ty, tx] = tile[ty, tx]

    return load_harness


def _matmul_harness(load_tile: Any) -> Any:
    """The tiled matmul with both loads done by load_tile."""
    size = TILE

    @cuda.jit
    def matmul_harness(c, a, b):
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        row = cuda.blockIdx.y * size + ty
        col = cuda.blockIdx.x * size + tx
        a_tile = cuda.shared.array((size, size), numba.float64)
        b_tile = cuda.shared.array((size, size), numba.float64)
        acc = 0.0
        for step in range((a.shape[1] + size - 1) // size):
            load_tile(a_tile, a, cuda.blockIdx.y, step)
            load_tile(b_tile, b, step, cuda.blockIdx.x)
            cuda.syncthreads()
            for j in range(size):
                acc += a_tile[ty, j] * b_tile[j, tx]
            cuda.syncthreads()
        if row < c.shape[0] and col < c.shape[1]:
            c[row, col] = acc

    return matmul_harness


LOAD_HINTS = [
    (
        TypeError,
        "positional argument",
        "load_tile takes four arguments, (tile, matrix, tile_row, tile_col), and reads the "
        "thread's position from cuda.threadIdx inside.",
    ),
    *NAME_HINTS,
]


def check_8_2(load_tile: Any) -> None:
    """load_tile(tile, matrix, tile_row, tile_col): thread (ty, tx) copies
    matrix[tile_row*T + ty, tile_col*T + tx] into tile[ty, tx], or 0 outside matrix."""
    exercise = "8.2"
    function, device = _python_function(exercise, "load_tile", load_tile)
    if device is False:
        check.fail(
            exercise,
            "load_tile is decorated as a kernel (@cuda.jit). It is called by every thread "
            "of another kernel, so it is a device function: @cuda.jit(device=True).",
        )
    device_function = cuda.jit(device=True)(function) if device is None else load_tile
    harness = _load_harness(device_function)
    for shape, (tile_row, tile_col) in LOAD_CASES:
        matrix = labelled_matrix(*shape)
        got = _run_load(exercise, harness, matrix, tile_row, tile_col)
        _diagnose_tile(exercise, got, matrix, tile_row, tile_col)
    _check_in_matmul(exercise, _matmul_harness(device_function))
    check.passed(exercise)


def _run_load(
    exercise: str, harness: Any, matrix: np.ndarray, tile_row: int, tile_col: int
) -> np.ndarray:
    """The tile the learner's load_tile leaves in shared memory, as a NumPy array."""
    rows, cols = matrix.shape
    launch = f"load_tile on a {rows} x {cols} matrix, tile ({tile_row}, {tile_col})"
    _, view = _padded(matrix, OUTSIDE)
    out = cuda.to_device(np.full((TILE, TILE), np.nan))
    try:
        harness[1, (TILE, TILE)](out, view, tile_row, tile_col, MARKER)
        cuda.synchronize()
    except IndexError as error:
        message, _ = _split_thread(error)
        check.fail(
            exercise,
            f"{launch} raised IndexError: {message}. A thread read outside the matrix: "
            f"read matrix[row, col] only when `row < matrix.shape[0] and col < "
            f"matrix.shape[1]` (strictly less: the last row is shape[0] - 1; the rows are "
            f"shape[0], the columns shape[1]), and store 0 otherwise.",
        )
    except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
        _raise_stub_or(exercise, launch, error, LOAD_HINTS)
    return out.copy_to_host()


def _diagnose_tile(
    exercise: str, got: np.ndarray, matrix: np.ndarray, tile_row: int, tile_col: int
) -> None:
    """Compare one loaded tile with the reference; name the likely mistake."""
    rows, cols = matrix.shape
    # The values say where they were read from: 1405 is row 4, column 5.
    where = (
        f"tile ({tile_row}, {tile_col}) of a {rows} x {cols} matrix (element [r, c] = "
        f"1000 + 100·r + c)"
    )
    expected = reference_tile(matrix, tile_row, tile_col)
    if np.array_equal(got, expected):
        return
    if np.isin(OUTSIDE, got):
        check.fail(
            exercise,
            f"{where} holds values from outside the matrix: test "
            f"`row < matrix.shape[0] and col < matrix.shape[1]` before reading.",
        )
    if (got == MARKER).all():
        check.fail(
            exercise,
            f"load_tile wrote nothing into {where}: each thread must store into "
            f"tile[ty, tx] (ty = cuda.threadIdx.y, tx = cuda.threadIdx.x).",
        )
    if (got == MARKER).any():
        check.fail(
            exercise,
            f"some elements of {where} were never written (they still hold the "
            f"marker {MARKER:g}): a thread whose element lies outside the matrix must "
            f"store 0, `else: tile[ty, tx] = 0`, or the previous step's values stay in "
            f"shared memory and are added to the sums.",
        )
    mistakes = {
        "the tile is transposed: threadIdx.x is the column (neighbouring threads read "
        "neighbouring elements of a row), threadIdx.y the row; store "
        "matrix[tile_row*T + ty, tile_col*T + tx] in tile[ty, tx].": expected.T,
        "that is tile (tile_col, tile_row): tile_row picks the rows "
        "(row = tile_row*T + ty), tile_col the columns.": reference_tile(
            matrix, tile_col, tile_row
        ),
        "the last row and column of the matrix were dropped: the test is `row < rows` "
        "(rows = matrix.shape[0]), not `row < rows - 1`.": reference_tile(
            matrix, tile_row, tile_col, limits=(rows - 1, cols - 1)
        ),
        "the tile starts at the wrong element: tile (tile_row, tile_col) starts at row "
        "tile_row*T and column tile_col*T, with T = tile.shape[0]; did you forget to "
        "multiply by T?": _unscaled_tile(matrix, tile_row, tile_col),
    }
    if rows != cols:
        # The bounds test with rows and columns exchanged (where it reads outside the
        # matrix, the launch has raised IndexError already).
        mistakes[
            "the bounds test compares row with the number of columns: the rows are "
            "matrix.shape[0], the columns matrix.shape[1] (`row < matrix.shape[0] and "
            "col < matrix.shape[1]`)."
        ] = reference_tile(matrix, tile_row, tile_col, limits=(min(rows, cols),) * 2)
    check.expect_close(exercise, where, got, expected, mistakes, 0.0, 0.0)


def _unscaled_tile(matrix: np.ndarray, tile_row: int, tile_col: int) -> np.ndarray:
    """What load_tile gives when it forgets to multiply the tile indices by T."""
    shifted = np.zeros((matrix.shape[0] + TILE * 4, matrix.shape[1] + TILE * 4))
    shifted[: matrix.shape[0], : matrix.shape[1]] = matrix
    tile = shifted[tile_row : tile_row + TILE, tile_col : tile_col + TILE].copy()
    r, c = np.indices((TILE, TILE))
    tile[(tile_row + r >= matrix.shape[0]) | (tile_col + c >= matrix.shape[1])] = 0.0
    return tile


def _check_in_matmul(exercise: str, harness: Any) -> None:
    """Run the tiled matmul built on load_tile and compare with NumPy."""
    rng = np.random.default_rng(82)
    for a_shape, b_shape in MATMUL_SHAPES:
        a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
        c = cuda.to_device(np.full((a_shape[0], b_shape[1]), np.nan))
        grid = (-(-b_shape[1] // TILE), -(-a_shape[0] // TILE))
        launch = f"the tiled matmul using load_tile on {a_shape} @ {b_shape}"
        try:
            harness[grid, (TILE, TILE)](c, cuda.to_device(a), cuda.to_device(b))
            cuda.synchronize()
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            _raise_stub_or(exercise, launch, error, LOAD_HINTS)
        check.expect_close(exercise, f"C from {launch}", c.copy_to_host(), a @ b, rtol=1e-10)

"""Checks for lesson 08 (CUDA kernels), run in Numba's CUDA simulator or on a GPU.

Each check launches the learner's kernel or device function on inputs of its own, at
sizes that are and are not multiples of the block or the tile, and compares with NumPy.
The arrays handed to a kernel are views into larger buffers: in the simulator an index past
the end raises IndexError, and on a GPU (which does not check) a stray write lands in the
padding, where the check sees it.

Errors are told apart by type and by what the learner's code is, never by the wording of
a message: the simulator re-raises an error from a kernel thread as a new exception of the
same type (its fields are lost), so the thread that raised is read from the simulator's
thread object in the traceback, and a NameError or AttributeError is explained from the
names the learner's function uses (its bytecode and globals).

This module imports numba: the lesson has chosen the simulator (NUMBA_ENABLE_CUDASIM=1)
before its check cells import it.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import math
from collections.abc import Callable
from typing import Any, NoReturn

import numba
import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernels' globals

from minigrad.course import check

PAD = 64  # extra elements around every array a kernel gets, to catch stray writes on a GPU


def _thread_of(error: BaseException) -> tuple[int, int, int, int] | None:
    """(threadIdx.x, threadIdx.y, blockIdx.x, blockIdx.y) of the simulator thread that
    raised `error`, read from the simulator's thread object in the traceback (None on a GPU
    or when no such frame is there)."""
    traceback = error.__traceback__
    while traceback is not None:
        thread = traceback.tb_frame.f_locals.get("self")
        if hasattr(thread, "threadIdx") and hasattr(thread, "blockIdx"):
            t, b = thread.threadIdx, thread.blockIdx
            return int(t.x), int(t.y), int(b.x), int(b.y)
        traceback = traceback.tb_next
    return None


def _without_thread_prefix(error: BaseException) -> str:
    """The message without the "tid=[...] ctaid=[...]: " the simulator puts in front."""
    text = str(error)
    where = _thread_of(error)
    if where is None:
        return text
    traceback = error.__traceback__
    while traceback is not None:
        thread = traceback.tb_frame.f_locals.get("self")
        if hasattr(thread, "threadIdx"):
            prefix = f"tid={list(thread.threadIdx)} ctaid={list(thread.blockIdx)}: "
            return text.removeprefix(prefix)
        traceback = traceback.tb_next
    return text


def _globals_used(function: Callable) -> list[tuple[str, str | None]]:
    """(global name, the attribute read from it right after, or None) for each global
    `function` reads, from its bytecode."""
    used = []
    instructions = list(dis.get_instructions(function))
    for index, instruction in enumerate(instructions):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            name = str(instruction.argval).removeprefix("NULL + ").removesuffix(" + NULL")
            following = instructions[index + 1] if index + 1 < len(instructions) else None
            attribute = (
                str(following.argval).removeprefix("NULL|self + ")
                if following is not None and following.opname in ("LOAD_ATTR", "LOAD_METHOD")
                else None
            )
            used.append((name, attribute))
    return used


def _undefined_names(function: Callable) -> list[str]:
    """The globals `function` reads that exist neither in its module nor among builtins."""
    scope = getattr(function, "__globals__", {})
    return [
        name
        for name, _ in _globals_used(function)
        if name not in scope and not hasattr(builtins, name)
    ]


def _imports_inside(function: Callable) -> bool:
    return any(ins.opname == "IMPORT_NAME" for ins in dis.get_instructions(function))


def _name_rules(function: Callable) -> list[check.HintRule]:
    """Hint rules for the learner's kernel, matched by error type and by what the
    function's own code reads."""

    def undefined(error: BaseException) -> str | None:
        if not isinstance(error, NameError):
            return None
        missing = _undefined_names(function)
        if "n" in missing:
            return (
                "Inside a kernel only its arguments exist, and n is not one of them: take "
                "the length from an array, n = x.size (or x.shape[0])."
            )
        if "cuda" in missing:
            return (
                "Import it once at the top of the notebook, `from numba import cuda`: the "
                "simulator replaces that global while a kernel runs."
            )
        if missing:
            return (
                f"{', '.join(missing)} is neither an argument of the kernel nor defined at "
                f"the top of the notebook."
            )
        return None

    def cuda_reached_otherwise(error: BaseException) -> str | None:
        if not isinstance(error, AttributeError):
            return None
        if _imports_inside(function) or ("numba", "cuda") in _globals_used(function):
            return (
                "Use the `cuda` imported at the top of the notebook (`from numba import "
                "cuda`), not one imported inside a function or reached as numba.cuda: the "
                "simulator swaps only that global for its stand-in that knows the thread."
            )
        return None

    return [undefined, cuda_reached_otherwise]


def _raise_stub_or(
    exercise: str, what: str, error: BaseException, hints: list[check.HintRule]
) -> NoReturn:
    """Turn an error raised inside a kernel into a CheckError (the unwritten stub first)."""
    message = _without_thread_prefix(error)
    if isinstance(error, NotImplementedError) and message.startswith("Exercise "):
        check.not_written(exercise)
    plain = error
    if message != str(error):
        # The same type and traceback, without the thread prefix (which the hint names).
        try:
            plain = type(error)(message).with_traceback(error.__traceback__)
        except Exception:  # noqa: BLE001 - an exception type with another signature
            plain = error
    where = _thread_of(error)
    if where is not None:
        tx, ty, bx, by = where
        if ty == 0 and by == 0:
            what = f"{what}, in thread {tx} of block {bx},"
        else:
            what = f"{what}, in thread (y={ty}, x={tx}) of block (y={by}, x={bx}),"
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


def _check_parameters(exercise: str, function: Callable, name: str, params: str) -> None:
    """The learner's function must take exactly the arguments it is called with."""
    wanted = [part.strip() for part in params.split(",")]
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # nothing to read: the launch will tell
        return
    try:
        signature.bind(*wanted)
    except TypeError:
        check.fail(
            exercise,
            f"{name}{signature} does not fit the call {name}({params}): it takes "
            f"{len(wanted)} arguments, in that order"
            + (
                ", and reads the thread's position from cuda.threadIdx inside."
                if name == "load_tile"
                else "."
            ),
        )


# --------------------------------------------------------------------------- Exercise 8.1

# (n, threads per block): out has n - 1 elements, one thread each. 37 and 16 leave 12 spare
# threads; 17 and 16 give exactly one full block (no spare thread: the last thread is the
# boundary); 2 gives one output; 1 gives none at all (the check still launches one block).
DIFF_CASES = ((37, 16), (17, 16), (2, 4), (1, 4), (9, 4))


def diff_reference(x: np.ndarray) -> np.ndarray:
    """out[i] = x[i + 1] - x[i] for i = 0 .. n - 2 (np.diff)."""
    return x[1:] - x[:-1]


def _written_by(index: Callable[[int, int, int, int], int], size: int, threads: int) -> np.ndarray:
    """Which outputs a guarded kernel with this index formula writes (a bool mask)."""
    blocks = max(1, -(-size // threads))
    mask = np.zeros(size, dtype=bool)
    for block in range(blocks):
        for thread in range(threads):
            i = index(block, thread, threads, blocks)
            if 0 <= i < size:
                mask[i] = True
    return mask


# A wrong index formula -> its hint. (b, t, B, G) = blockIdx.x, threadIdx.x, blockDim.x,
# gridDim.x.
INDEX_MISTAKES: tuple[tuple[Callable[[int, int, int, int], int], str], ...] = (
    (
        lambda b, t, B, G: t,
        "only the first {threads} outputs were written: the index uses threadIdx.x alone, "
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
)


def _launch_diff(kernel: Any, n: int, threads: int, x_host: np.ndarray) -> tuple:
    """kernel[blocks, threads](out, x) with one thread per output (at least one block);
    returns the out and x buffers, padding included, on the host."""
    size = n - 1
    out_big, out = _padded(np.full(size, np.nan), np.nan)
    x_big, x = _padded(x_host, -7.0)
    blocks = max(1, -(-size // threads))
    kernel[blocks, threads](out, x)
    cuda.synchronize()
    return out_big.copy_to_host(), x_big.copy_to_host()


def _index_error(exercise: str, launch: str, error: IndexError, n: int, threads: int) -> NoReturn:
    """The CheckError for a thread that indexed past an array."""
    message = _without_thread_prefix(error)
    where = _thread_of(error)
    hint = (
        "The grid is rounded up to whole blocks, so some threads have an index past the "
        f"last output. Each output i reads x[i + 1], so the last valid i is n - 2 = {n - 2}: "
        "guard with `if i < out.size:` (out.size = n - 1), not `if i < x.size:`."
    )
    place = ""
    if where is not None:
        thread, _, block, _ = where
        i = block * threads + thread
        place = f" in thread {thread} of block {block} (i = {block}·{threads} + {thread} = {i})"
        if i == n - 1:
            hint = (
                f"That thread has i = n - 1 = {i}: your guard let it through (as `i < x.size` "
                f"or `i <= out.size` do) and it read x[i + 1] = x[{n}], one past the end. "
                f"A thread that reads its right neighbour must stop one earlier: "
                f"`if i < out.size:` (= n - 1), or `if i + 1 < x.size:`."
            )
        elif i < n - 1:
            hint = (
                f"That thread's own index is a valid output (i < n - 1 = {n - 1}), so it "
                "went outside an array another way: check the index formula, i = "
                "cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x, the reads x[i] and "
                "x[i + 1], and the order of the arguments, (out, x)."
            )
    check.fail(exercise, f"{launch} raised IndexError{place}: {message}. {hint}")


def _kernel_of(
    exercise: str, name: str, answer: Any, params: str, launch_hint: str
) -> tuple[Callable, Any]:
    """(the learner's Python function, its kernel ready to launch): refused, with
    `launch_hint`, when it is a device function; its parameters checked; a plain Python
    function compiled with cuda.jit."""
    function, device = _python_function(exercise, name, answer)
    if device:
        check.fail(
            exercise,
            f"{name} is a device function (@cuda.jit(device=True)), which only other GPU code "
            f"can call. {launch_hint}",
        )
    _check_parameters(exercise, function, name, params)
    return function, (cuda.jit(function) if device is None else answer)


def check_8_1(diff_kernel: Any) -> None:
    """diff_kernel(out, x): out[i] = x[i + 1] - x[i] for i < n - 1, one thread per output,
    guarded so that no thread reads past x or writes past out."""
    exercise = "8.1"
    function, kernel = _kernel_of(
        exercise, "diff_kernel", diff_kernel, "out, x",
        "A kernel is launched from the host with kernel[blocks, threads](...): decorate it "
        "with plain @cuda.jit.",
    )
    rng = np.random.default_rng(81)
    for n, threads in DIFF_CASES:
        x_host = np.round(rng.normal(size=n) * 10.0, 3)
        expected = diff_reference(x_host)
        size = n - 1
        blocks = max(1, -(-size // threads))
        launch = (
            f"diff_kernel[{blocks}, {threads}](out, x) with n = {n} ({size} output"
            f"{'' if size == 1 else 's'})"
        )
        try:
            out_big, x_big = _launch_diff(kernel, n, threads, x_host)
        except IndexError as error:
            _index_error(exercise, launch, error, n, threads)
        except Exception as error:  # noqa: BLE001 - the learner's kernel may raise anything
            _raise_stub_or(exercise, launch, error, _name_rules(function))
        got = out_big[:size]
        if not np.all(np.isnan(out_big[size:])):
            check.fail(
                exercise,
                f"{launch} wrote past the end of out: a thread with i >= n - 1 = {size} wrote "
                f"out[i]. Guard with `if i < out.size:`.",
            )
        if not np.array_equal(x_big[:n], x_host):
            check.fail(
                exercise,
                f"{launch} changed x: write only into out (the arguments come in the order "
                f"out, x).",
            )
        if np.allclose(got, expected, rtol=1e-12, atol=0.0):
            continue
        _diagnose_diff(exercise, launch, got, expected, x_host, threads)
    check.passed(exercise)


def _diagnose_diff(
    exercise: str,
    launch: str,
    got: np.ndarray,
    expected: np.ndarray,
    x_host: np.ndarray,
    threads: int,
) -> None:
    """Name the likely mistake behind a wrong out (NaN marks an element never written)."""
    size = len(expected)
    missing = np.isnan(got)
    if missing.all():
        check.fail(
            exercise,
            f"{launch} wrote nothing into out (the check fills it with nan first). Is the "
            f"body written, with the `raise NotImplementedError` line gone, and are the "
            f"arguments in the order (out, x)?",
        )
    if size > 1 and missing[-1] and not missing[:-1].any():
        check.fail(
            exercise,
            f"{launch} left the last output, out[{size - 1}] = x[{size}] - x[{size - 1}], "
            f"unwritten: that thread reads x[n - 1], the last element, which exists. The "
            f"guard is `if i < n - 1:` (i.e. i < out.size), not `if i < n - 2:`.",
        )
    for index, hint in INDEX_MISTAKES:
        written = _written_by(index, size, threads)
        if np.array_equal(~missing, written) and np.allclose(got[written], expected[written]):
            check.fail(exercise, f"{launch}: {hint.format(threads=threads)}")
    written = ~missing
    if np.allclose(got[written], -expected[written]):
        check.fail(
            exercise,
            f"{launch} gave x[i] - x[i + 1]: the sign is reversed; out[i] = x[i + 1] - x[i].",
        )
    backward = np.concatenate(([x_host[0] - x_host[-1]], expected[:-1]))
    if np.allclose(got[written], backward[written]):
        check.fail(
            exercise,
            f"{launch} gave x[i] - x[i - 1] (and out[0] reads x[-1], the last element: NumPy "
            f"and Numba wrap negative indices): out[i] = x[i + 1] - x[i].",
        )
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        check.fail(
            exercise,
            f"{launch} left {int(missing.sum())} of {size} outputs unwritten (the first is "
            f"out[{first}]): each i from 0 to n - 2 needs exactly one thread, "
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
    _check_parameters(exercise, function, "load_tile", "tile, matrix, tile_row, tile_col")
    hints = _name_rules(function)
    device_function = cuda.jit(device=True)(function) if device is None else load_tile
    harness = _load_harness(device_function)
    for shape, (tile_row, tile_col) in LOAD_CASES:
        matrix = labelled_matrix(*shape)
        got = _run_load(exercise, harness, matrix, tile_row, tile_col, hints)
        _diagnose_tile(exercise, got, matrix, tile_row, tile_col)
    _check_in_matmul(exercise, _matmul_harness(device_function), hints)
    check.passed(exercise)


def _run_load(
    exercise: str,
    harness: Any,
    matrix: np.ndarray,
    tile_row: int,
    tile_col: int,
    hints: list[check.HintRule],
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
        message = _without_thread_prefix(error)
        check.fail(
            exercise,
            f"{launch} raised IndexError: {message}. A thread read outside the matrix: "
            f"read matrix[row, col] only when `row < matrix.shape[0] and col < "
            f"matrix.shape[1]` (strictly less: the last row is shape[0] - 1; the rows are "
            f"shape[0], the columns shape[1]), and store 0 otherwise.",
        )
    except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
        _raise_stub_or(exercise, launch, error, hints)
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
        "the last column of the matrix was stored as 0: the column test is one short; "
        "`col < matrix.shape[1]` keeps every column.": reference_tile(
            matrix, tile_row, tile_col, limits=(rows, cols - 1)
        ),
        "the last row of the matrix was stored as 0: the row test is one short; "
        "`row < matrix.shape[0]` keeps every row.": reference_tile(
            matrix, tile_row, tile_col, limits=(rows - 1, cols)
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


def _check_in_matmul(exercise: str, harness: Any, hints: list[check.HintRule]) -> None:
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
            _raise_stub_or(exercise, launch, error, hints)
        check.expect_close(exercise, f"C from {launch}", c.copy_to_host(), a @ b, rtol=1e-10)


# --------------------------------------------------------------------------- Exercise 8.3

# (n, threads per block): spare threads in the last block, one full block, a single element,
# and a block larger than the array. Every launch uses 16 threads or one block.
SILU_CASES = ((37, 16), (16, 16), (1, 16), (5, 8))


def sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + np.exp(-x))


def silu_derivative(x: np.ndarray) -> np.ndarray:
    """d/dx [x σ(x)] = σ(x) + x σ(x)(1 - σ(x)) = σ(x)(1 + x(1 - σ(x)))."""
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def silu_backward_reference(grad_out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """grad_x = grad_out · silu'(x), elementwise."""
    return grad_out * silu_derivative(x)


def _silu_mistakes(grad_out: np.ndarray, x: np.ndarray) -> dict[str, np.ndarray]:
    """What the usual slips give, each with its hint."""
    s, flipped = sigmoid(x), sigmoid(-x)
    return {
        "that is silu'(x) alone: backward multiplies the local derivative by the gradient "
        "that arrives, grad_x[i] = grad_out[i] * silu'(x[i]).": silu_derivative(x),
        "that is grad_out · σ(x) alone, as if σ(x) were a constant factor. By the product "
        "rule, d/dx [x · σ(x)] = 1 · σ(x) + x · σ'(x): the second term is missing.": grad_out * s,
        "that is grad_out · x · σ'(x) alone: by the product rule, the x in front contributes "
        "σ(x) as well, d/dx [x · σ(x)] = σ(x) + x · σ'(x).": grad_out * x * s * (1.0 - s),
        "that is grad_out · σ'(x), the derivative of the sigmoid, not of x · σ(x): add the "
        "product rule's other term.": grad_out * s * (1.0 - s),
        "that uses σ'(x) = σ(x); the sigmoid's derivative is σ(x)(1 - σ(x)).": grad_out
        * (s + x * s),
        "that is the forward, grad_out · x · σ(x): backward needs the derivative of "
        "x · σ(x), not its value.": grad_out * x * s,
        "the sigmoid has the wrong sign inside: σ(x) = 1 / (1 + exp(-x)), so σ(0) = 1/2 "
        "and σ(x) -> 1 for large x.": grad_out * flipped * (1.0 + x * (1.0 - flipped)),
    }


def _silu_inputs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x from -6 to 6 (0 included when n is odd, where σ = 1/2) in shuffled order, and a
    grad_out that is not all ones, so a missing factor shows."""
    x = np.linspace(-6.0, 6.0, n) if n > 1 else np.array([1.5])
    return rng.permutation(x), np.round(rng.uniform(-2.0, 2.0, size=n), 3)


def _launch_silu(
    kernel: Any,
    n: int,
    threads: int,
    x_host: np.ndarray,
    g_host: np.ndarray,
    grad_x_fill: float = np.nan,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """kernel[blocks, threads](grad_x, grad_out, x), grad_x filled with `grad_x_fill` (nan:
    an element left unwritten shows); the three padded buffers, on the host."""
    gx_big, grad_x = _padded(np.full(n, grad_x_fill), np.nan)
    g_big, grad_out = _padded(g_host, -7.0)
    x_big, x = _padded(x_host, -7.0)
    kernel[-(-n // threads), threads](grad_x, grad_out, x)
    cuda.synchronize()
    return gx_big.copy_to_host(), g_big.copy_to_host(), x_big.copy_to_host()


def _adds_into_grad_x(
    kernel: Any, n: int, threads: int, x_host: np.ndarray, g_host: np.ndarray
) -> bool:
    """Whether the kernel, launched again on a grad_x of zeros, gives the right values: it
    wrote with `+=`, which leaves a grad_x filled with nan all nan."""
    try:
        gx_big, _, _ = _launch_silu(kernel, n, threads, x_host, g_host, grad_x_fill=0.0)
    except Exception:  # noqa: BLE001 - it ran once already; any failure means "no"
        return False
    return bool(
        np.allclose(gx_big[:n], silu_backward_reference(g_host, x_host), rtol=1e-9, atol=1e-12)
    )


def check_8_3(silu_backward: Any) -> None:
    """silu_backward(grad_x, grad_out, x): grad_x[i] = grad_out[i] · silu'(x[i]) with
    silu(x) = x σ(x), one thread per element, guarded."""
    exercise = "8.3"
    function, kernel = _kernel_of(
        exercise, "silu_backward", silu_backward, "grad_x, grad_out, x",
        "Launch it from the host: decorate it with plain @cuda.jit.",
    )
    rng = np.random.default_rng(83)
    for n, threads in SILU_CASES:
        x_host, g_host = _silu_inputs(n, rng)
        blocks = -(-n // threads)
        launch = f"silu_backward[{blocks}, {threads}](grad_x, grad_out, x) with n = {n}"
        try:
            gx_big, g_big, x_big = _launch_silu(kernel, n, threads, x_host, g_host)
        except IndexError as error:
            check.fail(
                exercise,
                f"{launch} raised IndexError: {_without_thread_prefix(error)}. The grid is "
                f"rounded up to whole blocks, so some threads have i >= n: guard with "
                f"`if i < x.size:`.",
            )
        except Exception as error:  # noqa: BLE001 - the learner's kernel may raise anything
            _raise_stub_or(exercise, launch, error, _name_rules(function))
        got = gx_big[:n]
        if not np.all(np.isnan(gx_big[n:])):
            check.fail(
                exercise, f"{launch} wrote past the end of grad_x: guard with `if i < x.size:`."
            )
        if not (np.array_equal(x_big[:n], x_host) and np.array_equal(g_big[:n], g_host)):
            check.fail(
                exercise,
                f"{launch} changed x or grad_out: write only into grad_x (the arguments come "
                f"in the order grad_x, grad_out, x).",
            )
        missing = np.isnan(got)
        if missing.all() and _adds_into_grad_x(kernel, n, threads, x_host, g_host):
            check.fail(
                exercise,
                f"after {launch}, grad_x is still nan everywhere: write it with `=`, not "
                f"`+=`. The check fills grad_x with nan first, and nan + v is nan (on a "
                f"grad_x of zeros, your kernel gives the right values).",
            )
        if missing.all():
            check.fail(
                exercise,
                f"{launch} wrote nothing into grad_x (the check fills it with nan first). Is "
                f"the body written, and are the arguments in the order (grad_x, grad_out, x)?",
            )
        if missing.any():
            first = int(np.flatnonzero(missing)[0])
            check.fail(
                exercise,
                f"{launch} left {int(missing.sum())} of {n} elements unwritten (the first is "
                f"grad_x[{first}]): each i from 0 to n - 1 needs exactly one thread, "
                f"i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x, guarded by "
                f"`if i < x.size:`.",
            )
        check.expect_close(
            exercise,
            f"grad_x after {launch}, for x = {_short_list(x_host)} and grad_out = "
            f"{_short_list(g_host)}",
            got,
            silu_backward_reference(g_host, x_host),
            _silu_mistakes(g_host, x_host),
            rtol=1e-9,
            atol=1e-12,
        )
    check.passed(exercise)


def _short_list(values: np.ndarray) -> str:
    """A few numbers of an array, for a message."""
    shown = ", ".join(f"{v:.4g}" for v in values[:4])
    return f"[{shown}{', ...' if len(values) > 4 else ''}]"


@cuda.jit
def silu_backward(grad_x, grad_out, x):  # a kernel: Numba types the arguments at launch
    """The reference: grad_x[i] = grad_out[i] · σ(x[i]) (1 + x[i] (1 - σ(x[i])))."""
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))

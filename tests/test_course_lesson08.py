"""Tests of lesson 08's exercise checks, in Numba's CUDA simulator (conftest.py turns it on):
the reference answers pass, the usual kernel mistakes get their hint."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cuda  # module level: the simulator swaps this global while a kernel runs

from minigrad.course import CheckError, lesson08

# --------------------------------------------------------------------------- Exercise 8.1


@cuda.jit
def diff_kernel(out, x):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size - 1:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_with_grid_and_out_size(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = -x[i] + x[i + 1]


def diff_not_decorated_neighbour_guard(out, x):
    i = cuda.grid(1)
    if i + 1 < len(x):
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_guard_of_the_map(out, x):
    """The lesson's map guard copied: thread n - 1 reads x[n]."""
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_without_guard(out, x):
    i = cuda.grid(1)
    out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_guard_two_short(out, x):
    i = cuda.grid(1)
    if i < x.size - 2:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_reversed(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] - x[i + 1]


@cuda.jit
def diff_backward_difference(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] - x[i - 1]


@cuda.jit
def diff_thread_index_only(out, x):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_grid_dim(out, x):
    i = cuda.blockIdx.x * cuda.gridDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_block_plus_thread(out, x):
    i = cuda.blockIdx.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_undefined_n(out, x):
    i = cuda.grid(1)
    if i < n - 1:  # noqa: F821 - the mistake under test: n is not an argument
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_arguments_swapped(x, out):
    i = cuda.grid(1)
    if i < out.size - 1:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_stub(out, x):
    raise NotImplementedError("Exercise 8.1: write diff_kernel")


@cuda.jit(device=True)
def diff_as_device_function(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i + 1] - x[i]


@cuda.jit
def diff_three_arguments(out, x, n):
    i = cuda.grid(1)
    if i < n - 1:
        out[i] = x[i + 1] - x[i]


def diff_imports_cuda_inside(out, x):
    from numba import cuda as local_cuda

    i = local_cuda.grid(1)
    if i < x.size - 1:
        out[i] = x[i + 1] - x[i]


@pytest.mark.parametrize(
    "kernel", [diff_kernel, diff_with_grid_and_out_size, diff_not_decorated_neighbour_guard]
)
def test_8_1_accepts_correct_kernels(kernel, capsys) -> None:
    lesson08.check_8_1(kernel)
    assert "Exercise 8.1: correct." in capsys.readouterr().out


def test_8_1_hidden_data_has_the_boundaries() -> None:
    """A full block with no spare thread, one output, and no output at all."""
    cases = lesson08.DIFF_CASES
    assert any((n - 1) % threads == 0 and n > 2 for n, threads in cases)
    assert any(n == 2 for n, _ in cases) and any(n == 1 for n, _ in cases)


@pytest.mark.parametrize(
    ("kernel", "hint"),
    [
        (diff_guard_of_the_map, r"in thread 4 of block 2 \(i = 2·16 \+ 4 = 36\).*i = n - 1 = 36"),
        (diff_without_guard, r"IndexError in thread"),
        (diff_guard_two_short, r"left the last output.*not `if i < n - 2:`"),
        (diff_reversed, r"the sign is reversed"),
        (diff_backward_difference, r"gave x\[i\] - x\[i - 1\]"),
        (diff_thread_index_only, r"uses threadIdx.x alone"),
        (diff_grid_dim, r"multiplies blockIdx.x by gridDim.x"),
        (diff_block_plus_thread, r"i = blockIdx.x \+ threadIdx.x makes block 1 start"),
        (diff_undefined_n, r"NameError: name 'n' is not defined.*n = x.size"),
        (diff_arguments_swapped, r"i < n - 1 = 36.*the order of the arguments, \(out, x\)"),
        (diff_stub, r"Exercise 8.1 is not written yet"),
        (diff_as_device_function, r"device function.*plain @cuda.jit"),
        (diff_three_arguments, r"does not fit the call diff_kernel\(out, x\)"),
        (diff_imports_cuda_inside, r"not one imported inside a function"),
    ],
)
def test_8_1_names_the_mistake(kernel, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson08.check_8_1(kernel)


def test_8_1_refuses_what_is_not_a_function() -> None:
    with pytest.raises(CheckError, match="decorated with @cuda.jit; got a float"):
        lesson08.check_8_1(2.5)


# --------------------------------------------------------------------------- Exercise 8.2


@cuda.jit(device=True)
def load_tile(tile, matrix, tile_row, tile_col):
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    size = tile.shape[0]
    row = tile_row * size + ty
    col = tile_col * size + tx
    if row < matrix.shape[0] and col < matrix.shape[1]:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


def load_tile_not_decorated(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * 4 + ty, tile_col * 4 + tx
    value = 0.0
    if row < matrix.shape[0] and col < matrix.shape[1]:
        value = matrix[row, col]
    tile[ty, tx] = value


@cuda.jit(device=True)
def load_tile_less_equal(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * tile.shape[0] + ty, tile_col * tile.shape[0] + tx
    if row <= matrix.shape[0] - 1 + 1 and col <= matrix.shape[1]:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


@cuda.jit(device=True)
def load_tile_bounds_swapped(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * tile.shape[0] + ty, tile_col * tile.shape[0] + tx
    if row < matrix.shape[1] and col < matrix.shape[0]:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


@cuda.jit(device=True)
def load_tile_without_zeros(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * tile.shape[0] + ty, tile_col * tile.shape[0] + tx
    if row < matrix.shape[0] and col < matrix.shape[1]:
        tile[ty, tx] = matrix[row, col]


@cuda.jit(device=True)
def load_tile_transposed(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * tile.shape[0] + ty, tile_col * tile.shape[0] + tx
    if row < matrix.shape[0] and col < matrix.shape[1]:
        tile[tx, ty] = matrix[row, col]
    else:
        tile[tx, ty] = 0.0


@cuda.jit(device=True)
def load_tile_tiles_swapped(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_col * tile.shape[0] + ty, tile_row * tile.shape[0] + tx
    if row < matrix.shape[0] and col < matrix.shape[1]:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


@cuda.jit(device=True)
def load_tile_drops_the_edge(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row * tile.shape[0] + ty, tile_col * tile.shape[0] + tx
    if row < matrix.shape[0] - 1 and col < matrix.shape[1] - 1:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


@cuda.jit(device=True)
def load_tile_unscaled(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row, col = tile_row + ty, tile_col + tx
    if row < matrix.shape[0] and col < matrix.shape[1]:
        tile[ty, tx] = matrix[row, col]
    else:
        tile[ty, tx] = 0.0


@cuda.jit(device=True)
def load_tile_stub(tile, matrix, tile_row, tile_col):
    """Thread (ty, tx) loads one element."""
    raise NotImplementedError("Exercise 8.2: write load_tile")


@cuda.jit
def load_tile_as_kernel(tile, matrix, tile_row, tile_col):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    tile[ty, tx] = matrix[tile_row * 4 + ty, tile_col * 4 + tx]


@cuda.jit(device=True)
def load_tile_extra_argument(tile, matrix, tile_row, tile_col, size):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    tile[ty, tx] = matrix[tile_row * size + ty, tile_col * size + tx]


@pytest.mark.parametrize("function", [load_tile, load_tile_not_decorated])
def test_8_2_accepts_correct_loads(function, capsys) -> None:
    lesson08.check_8_2(function)
    assert "Exercise 8.2: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("function", "hint"),
    [
        (load_tile_less_equal, r"IndexError.*strictly less: the last row is shape\[0\] - 1"),
        (load_tile_bounds_swapped, r"compares row with the number of columns: the rows are"),
        (load_tile_without_zeros, r"never written.*`else: tile\[ty, tx\] = 0`"),
        (load_tile_transposed, r"the tile is transposed: threadIdx.x is the column"),
        (load_tile_tiles_swapped, r"that is tile \(tile_col, tile_row\)"),
        (load_tile_drops_the_edge, r"not `row < rows - 1`"),
        (load_tile_unscaled, r"did you forget to multiply by T\?"),
        (load_tile_stub, r"Exercise 8.2 is not written yet"),
        (load_tile_as_kernel, r"decorated as a kernel.*@cuda.jit\(device=True\)"),
        (load_tile_extra_argument, r"does not fit the call load_tile.*takes 4 arguments"),
    ],
)
def test_8_2_names_the_mistake(function, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson08.check_8_2(function)


def test_8_2_reference_tile_pads_with_zeros() -> None:
    matrix = lesson08.labelled_matrix(10, 7)
    tile = lesson08.reference_tile(matrix, 2, 1)
    np.testing.assert_array_equal(
        tile,
        [[1804, 1805, 1806, 0], [1904, 1905, 1906, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    )


@cuda.jit(device=True)
def load_tile_clamped_read(tile, matrix, tile_row, tile_col):
    """Written differently: reads a clamped element, then multiplies by an inside flag."""
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row = tile_row * tile.shape[0] + ty
    col = tile_col * tile.shape[1] + tx
    inside = row < matrix.shape[0] and col < matrix.shape[1]
    safe_row = min(row, matrix.shape[0] - 1)
    safe_col = min(col, matrix.shape[1] - 1)
    tile[ty, tx] = matrix[safe_row, safe_col] if inside else 0.0


def test_8_2_clamped_read_passes(capsys) -> None:
    lesson08.check_8_2(load_tile_clamped_read)
    assert "Exercise 8.2: correct." in capsys.readouterr().out


def test_8_2_hidden_data_has_the_edges() -> None:
    """A 1 x 1 matrix, a tile entirely inside, and tiles that stick out at the bottom and
    at the right."""
    cases = lesson08.LOAD_CASES
    tile = lesson08.TILE
    assert ((1, 1), (0, 0)) in cases
    inside = [(r + 1) * tile <= m and (c + 1) * tile <= n for (m, n), (r, c) in cases]
    assert any(inside) and not all(inside)
    assert any((r + 1) * tile > m for (m, n), (r, c) in cases)
    assert any((c + 1) * tile > n for (m, n), (r, c) in cases)


def test_8_2_undefined_tile_size_is_named_from_the_code() -> None:
    @cuda.jit(device=True)
    def load_tile_global_size(tile, matrix, tile_row, tile_col):
        ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
        row = tile_row * TILE_SIZE + ty  # noqa: F821 - the mistake under test
        col = tile_col * TILE_SIZE + tx  # noqa: F821
        tile[ty, tx] = matrix[row, col] if row < matrix.shape[0] and col < matrix.shape[1] else 0

    with pytest.raises(CheckError, match="TILE_SIZE is neither an argument of the kernel"):
        lesson08.check_8_2(load_tile_global_size)


@cuda.jit
def diff_guard_less_equal(out, x):
    i = cuda.grid(1)
    if i <= out.size:  # the mistake under test: lets i = n - 1 through
        out[i] = x[i + 1] - x[i]


def test_8_1_a_guard_written_with_out_size_is_not_called_i_less_than_n() -> None:
    """Found by the audit: `i <= out.size` was told it had passed `i < n`."""
    with pytest.raises(CheckError, match=r"your guard let it through \(as `i < x.size` or"):
        lesson08.check_8_1(diff_guard_less_equal)


@cuda.jit(device=True)
def load_tile_last_column_short(tile, matrix, tile_row, tile_col):
    size = tile.shape[0]
    row = tile_row * size + cuda.threadIdx.y
    col = tile_col * size + cuda.threadIdx.x
    if row < matrix.shape[0] and col < matrix.shape[1] - 1:  # the mistake under test
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = matrix[row, col]
    else:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = 0.0


@cuda.jit(device=True)
def load_tile_last_row_short(tile, matrix, tile_row, tile_col):
    size = tile.shape[0]
    row = tile_row * size + cuda.threadIdx.y
    col = tile_col * size + cuda.threadIdx.x
    if row < matrix.shape[0] - 1 and col < matrix.shape[1]:  # the mistake under test
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = matrix[row, col]
    else:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = 0.0


@pytest.mark.parametrize(
    ("function", "hint"),
    [
        (load_tile_last_column_short, r"the last column of the matrix was stored as 0"),
        (load_tile_last_row_short, r"the last row of the matrix was stored as 0"),
    ],
)
def test_8_2_one_bound_one_short_is_named(function, hint) -> None:
    """Found by the audit: a single bound one short got numbers only."""
    with pytest.raises(CheckError, match=hint):
        lesson08.check_8_2(function)


# --------------------------------------------------------------------------- Exercise 8.3


@cuda.jit
def silu_backward(grad_x, grad_out, x):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * (s + x[i] * s * (1.0 - s))


def silu_backward_not_decorated(grad_x, grad_out, x):
    """tanh form of the sigmoid, σ(x) = (1 + tanh(x / 2)) / 2, and guarded with shape[0]."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = 0.5 * (1.0 + math.tanh(0.5 * x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_without_grad_out(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_sigma_as_constant(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        grad_x[i] = grad_out[i] / (1.0 + math.exp(-x[i]))


@cuda.jit
def silu_backward_second_term_only(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * x[i] * s * (1.0 - s)


@cuda.jit
def silu_backward_sigmoid_derivative(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 - s)


@cuda.jit
def silu_backward_sign_slip(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_unguarded(grad_x, grad_out, x):
    i = cuda.grid(1)
    s = 1.0 / (1.0 + math.exp(-x[i]))
    grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_thread_index_only(grad_x, grad_out, x):
    i = cuda.threadIdx.x
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_block_of_16(grad_x, grad_out, x):
    """The hidden catch: right for the visible launches, wrong for other block sizes."""
    i = cuda.blockIdx.x * 16 + cuda.threadIdx.x
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] = grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_added_into_grad_x(grad_x, grad_out, x):
    """Right on a grad_x of zeros; the check's grad_x starts as nan, and nan + v is nan."""
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        grad_x[i] += grad_out[i] * s * (1.0 + x[i] * (1.0 - s))


@cuda.jit
def silu_backward_writing_nothing(grad_x, grad_out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 1.0 / (1.0 + math.exp(-x[i]))
        s = grad_out[i] * s


@pytest.mark.parametrize(
    "kernel", [silu_backward, silu_backward_not_decorated, lesson08.silu_backward]
)
def test_8_3_accepts_correct_kernels(kernel, capsys) -> None:
    lesson08.check_8_3(kernel)
    assert "Exercise 8.3: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kernel", "hint"),
    [
        (silu_backward_without_grad_out, r"that is silu'\(x\) alone"),
        (silu_backward_sigma_as_constant, r"as if σ\(x\) were a constant factor"),
        (silu_backward_second_term_only, r"that is grad_out · x · σ'\(x\) alone"),
        (silu_backward_sigmoid_derivative, "the derivative of the sigmoid, not of x · σ"),
        (silu_backward_sign_slip, "the sigmoid has the wrong sign inside"),
        (silu_backward_unguarded, r"raised IndexError.*guard with `if i < x.size:`"),
        (silu_backward_thread_index_only, r"left \d+ of 37 elements unwritten"),
        (
            silu_backward_added_into_grad_x,
            r"grad_x is still nan everywhere: write it with `=`, not `\+=`.*nan \+ v is nan",
        ),
        (silu_backward_writing_nothing, r"wrote nothing into grad_x"),
    ],
)
def test_8_3_names_the_mistake(kernel, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson08.check_8_3(kernel)


def test_8_3_a_device_function_is_refused() -> None:
    @cuda.jit(device=True)
    def silu_backward_device(grad_x, grad_out, x):
        return None

    with pytest.raises(CheckError, match="is a device function"):
        lesson08.check_8_3(silu_backward_device)


def test_8_3_reference_matches_central_differences() -> None:
    """The check's closed form against finite differences of x·σ(x), away from it."""
    x = np.linspace(-8.0, 8.0, 41)
    step = 1e-6
    silu = lambda v: v / (1.0 + np.exp(-v))  # noqa: E731
    numeric = (silu(x + step) - silu(x - step)) / (2 * step)
    np.testing.assert_allclose(lesson08.silu_derivative(x), numeric, rtol=1e-6, atol=1e-8)
    assert lesson08.silu_derivative(np.array([0.0]))[0] == 0.5


def test_8_3_hidden_data_has_spare_threads_and_one_element() -> None:
    cases = lesson08.SILU_CASES
    assert any(n % threads for n, threads in cases)  # spare threads in the last block
    assert any(n == 1 for n, _ in cases)
    assert any(threads > n for n, threads in cases)


def test_8_3_a_block_size_of_16_passes_the_visible_check(capsys) -> None:
    """Left to the hidden tests (tests/hidden_catches/lesson08.py): every visible launch
    has 16 threads per block or a single block."""
    lesson08.check_8_3(silu_backward_block_of_16)
    assert "Exercise 8.3: correct." in capsys.readouterr().out

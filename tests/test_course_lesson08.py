"""Tests of lesson 08's exercise checks, in Numba's CUDA simulator (conftest.py turns it on):
the reference answers pass, the usual kernel mistakes get their hint."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda  # module level: the simulator swaps this global while a kernel runs

from minigrad.course import CheckError, lesson08

# --------------------------------------------------------------------------- Exercise 8.1


@cuda.jit
def scale_kernel(out, x, factor):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_with_grid(out, x, factor):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * factor


def scale_not_decorated(out, x, factor):
    i = cuda.grid(1)
    if i < len(x):
        out[i] = factor * x[i]


@cuda.jit
def scale_without_guard(out, x, factor):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = factor * x[i]


@cuda.jit
def scale_guard_less_equal(out, x, factor):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i <= x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_guard_minus_one(out, x, factor):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size - 1:
        out[i] = factor * x[i]


@cuda.jit
def scale_thread_index_only(out, x, factor):
    i = cuda.threadIdx.x
    if i < x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_grid_dim(out, x, factor):
    i = cuda.blockIdx.x * cuda.gridDim.x + cuda.threadIdx.x
    if i < x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_block_plus_thread(out, x, factor):
    i = cuda.blockIdx.x + cuda.threadIdx.x
    if i < x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_forgets_factor(out, x, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


@cuda.jit
def scale_undefined_n(out, x, factor):
    i = cuda.grid(1)
    if i < n:  # noqa: F821 - the mistake under test: n is not an argument
        out[i] = factor * x[i]


@cuda.jit
def scale_arguments_swapped(x, out, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = factor * x[i]


@cuda.jit
def scale_stub(out, x, factor):
    raise NotImplementedError("Exercise 8.1: write scale_kernel")


@cuda.jit(device=True)
def scale_as_device_function(out, x, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = factor * x[i]


@pytest.mark.parametrize("kernel", [scale_kernel, scale_with_grid, scale_not_decorated])
def test_8_1_accepts_correct_kernels(kernel, capsys) -> None:
    lesson08.check_8_1(kernel)
    assert "Exercise 8.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kernel", "hint"),
    [
        (scale_without_guard, r"IndexError in thread .*forget|`if i < n:` \(strictly less"),
        (scale_guard_less_equal, r"`if i < n:` \(strictly less: x\[n\] is already past"),
        (scale_guard_minus_one, r"not `if i < n - 1:`"),
        (scale_thread_index_only, r"uses threadIdx.x alone"),
        (scale_grid_dim, r"multiplies blockIdx.x by gridDim.x"),
        (scale_block_plus_thread, r"i = blockIdx.x \+ threadIdx.x makes block 1 start"),
        (scale_forgets_factor, r"copied x into out: multiply by factor"),
        (scale_undefined_n, r"NameError.*n = x.size"),
        (scale_arguments_swapped, r"changed x: write only into out"),
        (scale_stub, r"Exercise 8.1 is not written yet"),
        (scale_as_device_function, r"device function.*plain @cuda.jit"),
    ],
)
def test_8_1_names_the_mistake(kernel, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson08.check_8_1(kernel)


def test_8_1_refuses_what_is_not_a_function() -> None:
    with pytest.raises(CheckError, match="decorated with @cuda.jit; got a float"):
        lesson08.check_8_1(2.5)


def test_8_1_missing_guard_names_the_thread() -> None:
    with pytest.raises(CheckError, match=r"in thread \d+ of block \d+ \(i = "):
        lesson08.check_8_1(scale_without_guard)


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
        (load_tile_extra_argument, r"TypeError.*takes four arguments"),
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

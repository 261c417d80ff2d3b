"""What a convolution layer keeps for backward: its input and its weight, the same arrays
the caller holds (no copy), nothing else. The im2col matrix (K times the input) is made,
used and freed inside forward. Counted two ways: by the distinct buffers the saved values
point at (a saved_tensors_hooks pack hook sees each one), and by tracemalloc, which
measures what the forward leaves allocated."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import minigrad.nn.functional as F
from minigrad import Variable
from minigrad.core.function import saved_tensors_hooks


def _base(array: np.ndarray) -> np.ndarray:
    while array.base is not None:
        array = array.base
    return array


def test_conv_saves_its_input_and_weight_and_nothing_else() -> None:
    rng = np.random.default_rng(0)
    x = Variable(rng.standard_normal((8, 3, 16, 16)), requires_grad=True)
    w = Variable(rng.standard_normal((6, 3, 5, 5)), requires_grad=True)
    b = Variable(rng.standard_normal(6), requires_grad=True)
    saved: list[np.ndarray] = []

    def pack(variable: Variable) -> Variable:
        saved.append(variable.data)
        return variable

    with saved_tensors_hooks(pack, lambda variable: variable):
        F.conv2d(x, w, b, padding=2)
    distinct = {id(_base(array)) for array in saved}
    assert distinct == {id(_base(x._data)), id(_base(w._data))}


def test_tracemalloc_sees_only_the_output_stay_after_forward() -> None:
    """The forward's peak holds the padded input and the im2col matrix; afterwards only
    the output (and small bookkeeping) stays allocated."""
    rng = np.random.default_rng(1)
    x = Variable(rng.standard_normal((8, 3, 32, 32)), requires_grad=True)
    w = Variable(rng.standard_normal((6, 3, 5, 5)), requires_grad=True)
    output_bytes = 8 * 6 * 32 * 32 * 8
    columns_bytes = 3 * 25 * 8 * 32 * 32 * 8  # C·K rows, N·P columns, float64
    F.conv2d(x, w, padding=2)  # warm up: first-call allocations are not the layer's
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        y = F.conv2d(x, w, padding=2)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    kept = after - before
    assert output_bytes <= kept < output_bytes + 64 * 1024, (kept, output_bytes)
    assert peak - before >= columns_bytes  # the columns existed, inside forward only
    assert y.shape == (8, 6, 32, 32)

"""Lesson 13's memory claims, measured with tracemalloc, independently of the lesson's meter.

NumPy reports every buffer it allocates to tracemalloc, so tracemalloc sees what a training
step really holds, shared arrays and views included, without knowing anything about saved
values. The model is the lesson's: blocks of Linear(32, 32) then Tanh, a batch of 256
float64 rows, the mean square of the output as the loss. Each measurement gives every
parameter and the input a gradient while tracing first (the weights and their gradients
are the same whatever forward keeps), then reports what forward left alive and the peak
of the whole step, both above what existed before. `a` is one block output's bytes.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import minigrad
from minigrad import nn
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad.course import lesson13
from minigrad.utils.checkpoint import checkpoint

BATCH, WIDTH, DEPTH = 256, 32, 64
A = BATCH * WIDTH * 8  # one block output, float64


def _blocks(depth: int, hidden: int | None = None) -> list:
    minigrad.manual_seed(0)
    if hidden is None:
        return [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh()) for _ in range(depth)]
    return [
        nn.Sequential(nn.Linear(WIDTH, hidden), nn.Tanh(), nn.Linear(hidden, WIDTH))
        for _ in range(depth)
    ]


def _input() -> minigrad.Variable:
    data = np.random.default_rng(1).standard_normal((BATCH, WIDTH))
    return minigrad.Variable(data, requires_grad=True)


def _plain(blocks: list, h: minigrad.Variable) -> minigrad.Variable:
    for block in blocks:
        h = block(h)
    return h


def _segments(k: int):
    def forward(blocks: list, h: minigrad.Variable) -> minigrad.Variable:
        for start in range(0, len(blocks), k):
            h = checkpoint(nn.Sequential(*blocks[start : start + k]), h)
        return h

    return forward


def _numpy_bytes() -> int:
    numpy_only = tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)
    snapshot = tracemalloc.take_snapshot().filter_traces([numpy_only])
    return sum(trace.size for trace in snapshot.traces)


def _traced(forward, blocks: list, x: minigrad.Variable, hooks=None) -> dict[str, int]:
    """kept (all, and NumPy's buffers only) when forward ends, and the peak of the step."""
    parameters = [p for block in blocks for p in block.parameters()]
    gc.collect()
    tracemalloc.start()
    try:
        for leaf in [*parameters, x]:
            leaf.grad = minigrad.Variable(np.zeros_like(leaf.data))
        numpy_before = _numpy_bytes()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        if hooks is None:
            loss = (forward(blocks, x) ** 2).mean()
        else:
            with saved_tensors_hooks(*hooks):
                loss = (forward(blocks, x) ** 2).mean()
        kept, forward_peak = tracemalloc.get_traced_memory()
        numpy_kept = _numpy_bytes() - numpy_before
        tracemalloc.reset_peak()
        loss.backward()
        peak = max(forward_peak, tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
    return {"kept": kept - before, "numpy_kept": numpy_kept, "peak": peak - before}


@pytest.fixture(scope="module")
def deep() -> dict:
    """Measurements at depth 64: plain, a checkpoint around every block, segments of 8."""
    blocks, x = _blocks(DEPTH), _input()
    return {
        "blocks": blocks,
        "x": x,
        "plain": _traced(_plain, blocks, x),
        "every block": _traced(_segments(1), blocks, x),
        "segments of 8": _traced(_segments(8), blocks, x),
    }


def test_plain_forward_keeps_one_array_per_block(deep) -> None:
    # Tanh keeps its output, the next Linear the same array; weight.T is the weight.
    assert deep["plain"]["numpy_kept"] == pytest.approx(DEPTH * A, rel=0.001)


def test_the_distinct_buffer_count_agrees_with_tracemalloc(deep) -> None:
    blocks, x = deep["blocks"], deep["x"]
    saved: list[np.ndarray] = []

    def keep(variable):
        saved.append(variable.data)
        return variable

    with saved_tensors_hooks(keep, lambda variable: variable):
        (_plain(blocks, x) ** 2).mean()
    weights = [p.data for block in blocks for p in block.parameters()]
    activations, kept_weights = lesson13.distinct_bytes(saved, weights)
    made = activations - x.data.nbytes  # x was allocated before the step
    plain = deep["plain"]
    assert plain["numpy_kept"] == pytest.approx(made, rel=0.001)
    assert plain["kept"] - plain["numpy_kept"] < 1500 * len(saved)  # about 1 kB per value
    assert kept_weights == DEPTH * WIDTH * WIDTH * 8  # the weights, not the biases
    # Adding up every saved value's .nbytes (the old meter) more than doubles it.
    assert sum(array.nbytes for array in saved) > 2 * plain["kept"]
    # The peak of the step: the meter's, plus a few a of backward's working arrays.
    assert 0 <= plain["peak"] - made < 10 * A  # with the graph's Python objects


def test_a_checkpoint_around_every_block_saves_almost_nothing_here(deep) -> None:
    plain, every = deep["plain"], deep["every block"]
    # The same arrays: each block's input is the previous block's Tanh output.
    assert every["numpy_kept"] == pytest.approx(plain["numpy_kept"], rel=0.001)
    assert every["kept"] > 0.95 * plain["kept"]
    assert every["peak"] > 0.95 * plain["peak"]


def test_segments_of_sqrt_n_blocks_keep_less_than_half(deep) -> None:
    plain, segments = deep["plain"], deep["segments of 8"]
    assert segments["kept"] < 0.2 * plain["kept"]  # 8 segment inputs instead of 64 arrays
    assert segments["peak"] < 0.5 * plain["peak"]


@pytest.mark.parametrize("k", [4, 8, 16])
def test_the_segment_model_n_over_k_plus_k(deep, k) -> None:
    # peak(k) = (n/k + k) a of saved buffers, x among them (not new, so minus one), plus
    # backward's working arrays; kept when forward ends: the n/k segment inputs (x among
    # them) and the last output.
    measured = deep["segments of 8"] if k == 8 else _traced(_segments(k), deep["blocks"], deep["x"])
    model = (DEPTH / k + k - 1) * A
    assert model <= measured["peak"] < model + 10 * A
    assert measured["numpy_kept"] == pytest.approx(DEPTH / k * A, rel=0.001)
    if k != 8:
        assert measured["peak"] > deep["segments of 8"]["peak"]  # k = 8 = sqrt(64) is the best


@pytest.mark.parametrize("depth", [16, 36])
def test_segments_of_sqrt_n_grow_like_two_sqrt_n_and_plain_like_n(depth) -> None:
    # The depth sweep: plain n + 1 arrays (x not new here), segments of sqrt(n) 2 sqrt(n).
    blocks, x = _blocks(depth), _input()
    k = round(depth**0.5)
    plain = _traced(_plain, blocks, x)["peak"]
    every = _traced(_segments(1), blocks, x)["peak"]
    segments = _traced(_segments(k), blocks, x)["peak"]
    assert depth * A <= plain < (depth + 10) * A
    assert depth * A <= every < (depth + 10) * A
    assert (2 * k - 1) * A <= segments < (2 * k + 9) * A


def test_a_checkpoint_around_each_wide_block_saves_most_of_its_memory() -> None:
    # Linear(32, 128) -> Tanh -> Linear(128, 32) keeps its input and a 4a hidden output.
    blocks, x = _blocks(8, hidden=4 * WIDTH), _input()
    plain = _traced(_plain, blocks, x)
    every = _traced(_segments(1), blocks, x)
    assert plain["numpy_kept"] == pytest.approx(8 * 5 * A, rel=0.001)
    assert every["numpy_kept"] == pytest.approx(8 * A, rel=0.001)
    assert every["peak"] < 0.6 * plain["peak"]  # recomputing one block still needs its 4a


def _half_hooks(weights: list[np.ndarray], once: bool):
    """float16 saved values: a copy per saved value, or (once) one per buffer and none of
    the weights (kept as they are)."""
    weight_ids = {id(lesson13.owner(w)) for w in weights}
    copies: dict[int, tuple] = {}

    def pack(variable):
        array = variable.detach().numpy()  # the engine's array (variable.data is a view)
        if once and id(lesson13.owner(array)) in weight_ids:
            return variable
        cached = copies.get(id(array))
        if once and cached is not None and cached[0]() is array and cached[1]() is not None:
            return cached[1](), array.dtype
        half = array.astype(np.float16)
        copies[id(array)] = (weakref.ref(array), weakref.ref(half))
        return half, array.dtype

    def unpack(packed):
        if isinstance(packed, minigrad.Variable):
            return packed
        half, dtype = packed
        return minigrad.Variable(half.astype(dtype))

    return pack, unpack


def test_an_offload_store_of_every_saved_value_holds_twice_the_activations() -> None:
    # A pack hook sees saved values, not buffers: each block output is copied twice (for the
    # Tanh and for the next Linear), and each weight.T once.
    blocks, x = _blocks(16), _input()
    store: list[np.ndarray] = []

    def offload(variable):
        store.append(variable.data.copy())
        return len(store) - 1

    hooks = (offload, lambda position: minigrad.Variable(store[position]))
    in_place = _traced(_plain, blocks, x)["numpy_kept"]
    offloaded = _traced(_plain, blocks, x, hooks)["numpy_kept"]
    assert in_place == pytest.approx(16 * A, rel=0.001)
    # 16 outputs twice, x's copy once, the loss's saved output, 16 weights (1/8 a each).
    assert offloaded == pytest.approx((2 * 16 + 1 + 16 / 8) * A, rel=0.01)
    assert offloaded > 1.9 * in_place


def test_float16_once_per_buffer_keeps_a_quarter() -> None:
    blocks, x = _blocks(8), _input()
    weights = [p.data for block in blocks for p in block.parameters()]
    full = _traced(_plain, blocks, x)["numpy_kept"]
    once = _traced(_plain, blocks, x, _half_hooks(weights, once=True))["numpy_kept"]
    every = _traced(_plain, blocks, x, _half_hooks(weights, once=False))["numpy_kept"]
    assert full == pytest.approx(8 * A, rel=0.001)
    # x's copy is new memory here (x itself existed before): 9 quarter-arrays.
    assert once == pytest.approx(9 * A / 4, rel=0.01)
    # A copy of every saved value: each block output twice, and the weights copied.
    assert every > 1.9 * once


def test_the_recursive_schedule_keeps_least_and_its_peak_grows_like_log_n(deep) -> None:
    # Section 7: lesson13.bisect holds x, one saved input per level and the recomputed
    # block's output at its peak, log2(n) + 2 arrays (x not new here, so minus one), plus
    # the graph objects and working arrays of a recomputed graph open at every level.
    blocks, x = deep["blocks"], deep["x"]
    recursive = _traced(lesson13.bisect, blocks, x)
    # When forward ends: the second half's input and the last output (x is not new).
    assert recursive["numpy_kept"] == pytest.approx(2 * A, rel=0.001)
    model = (np.log2(DEPTH) + 1) * A
    assert model <= recursive["peak"] < model + 15 * A
    assert recursive["peak"] < deep["segments of 8"]["peak"] < 0.5 * deep["plain"]["peak"]
    shallow = _traced(lesson13.bisect, _blocks(16), x)["peak"]
    assert recursive["peak"] - shallow < 6 * A  # 16 -> 64 blocks: two more levels


def test_checkpoints_built_from_hooks_keep_what_the_function_keeps(deep) -> None:
    # Section 7's hooked_checkpoint: pack keeps a number, the first unpack recomputes.
    def hooked(function, h):
        recomputed, packed = [], []

        def pack(variable):
            packed.append(None)
            return len(packed) - 1

        def unpack(number):
            if not recomputed:
                keep = (lambda v: recomputed.append(v) or v, lambda v: v)
                with minigrad.enable_grad(), saved_tensors_hooks(*keep):
                    function(h)
            return recomputed[number]

        with saved_tensors_hooks(pack, unpack):
            return function(h)

    def segments_by_hooks(blocks, h):
        for start in range(0, len(blocks), 8):
            h = hooked(lambda v, s=start: _plain(blocks[s : s + 8], v), h)
        return h

    by_hooks = _traced(segments_by_hooks, deep["blocks"], deep["x"])
    function = deep["segments of 8"]
    assert by_hooks["numpy_kept"] == pytest.approx(function["numpy_kept"], rel=0.001)
    assert by_hooks["peak"] < 0.5 * deep["plain"]["peak"]
    assert abs(by_hooks["peak"] - function["peak"]) < 3 * A

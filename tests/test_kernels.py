"""The CUDA kernels and DeviceArray against NumPy, in Numba's CUDA simulator.

conftest.py sets NUMBA_ENABLE_CUDASIM=1 before numba is imported, so these run without a
GPU (and on a GPU with NUMBA_ENABLE_CUDASIM=0). The simulator runs every CUDA thread as
a Python thread, so sizes stay small (up to about 32) and hypothesis draws few examples.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import minigrad.kernels as kernels
from minigrad.kernels import DeviceArray, elementwise, layout, matmul, reduce

FLOATS = [np.float32, np.float64]
FEW = settings(max_examples=8, deadline=None)
RNG = np.random.default_rng(8)


def on_device(array) -> DeviceArray:
    return DeviceArray.from_host(array)


def data(shape, dtype=np.float64, low=-2.0, high=2.0) -> np.ndarray:
    return RNG.uniform(low, high, size=shape).astype(dtype)


def assert_matches(result, expected, rtol=None) -> None:
    """Same shape, same dtype, same values (to float32 or float64 rounding) as NumPy."""
    assert isinstance(result, DeviceArray), type(result)
    expected = np.asarray(expected)
    host = result.to_host()
    assert host.shape == expected.shape, (host.shape, expected.shape)
    assert host.dtype == expected.dtype, (host.dtype, expected.dtype)
    if rtol is None:
        rtol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(host, expected, rtol=rtol, atol=rtol)


# ------------------------------------------------------------------------------ layout
def test_layout_contiguous_strides_and_broadcasting() -> None:
    assert layout.contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert layout.contiguous_strides(()) == ()
    assert layout.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    assert layout.broadcast_shapes((2, 3, 4), (4,), ()) == (2, 3, 4)
    assert layout.broadcast_strides((3, 1), (1, 1), (2, 3, 4)) == (0, 1, 0)
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(2, 3\) "):
        layout.broadcast_shapes((2, 3), (4,))


def test_layout_coalesce_merges_what_every_operand_walks_contiguously() -> None:
    # contiguous (2, 3, 4) read twice: one flat dimension of 24
    assert layout.coalesce((2, 3, 4), (12, 4, 1), (12, 4, 1)) == ((24,), [(24 // 24,), (1,)])
    # a row broadcast over 3 rows: the stride-0 dimension cannot merge with the row
    assert layout.coalesce((3, 4), (4, 1), (0, 1)) == ((3, 4), [(4, 1), (0, 1)])
    # size-1 dimensions vanish; a 0-d layout becomes one dimension of size 1
    assert layout.coalesce((1, 5, 1), (5, 1, 1)) == ((5,), [(1,)])
    assert layout.coalesce((), ()) == ((1,), [(0,)])
    assert layout.is_contiguous((2, 3), (3, 1)) and not layout.is_contiguous((2, 3), (1, 2))


# ------------------------------------------------------------------- DeviceArray basics
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1, 1), (3, 5), (0, 3)])
def test_round_trip_to_the_device_and_back(dtype, shape) -> None:
    host = (
        RNG.uniform(-5, 5, size=shape) > 0 if dtype == np.bool_ else RNG.uniform(-5, 5, size=shape)
    ).astype(dtype)
    device = on_device(host)
    assert (device.shape, device.dtype, device.ndim, device.size) == (
        host.shape,
        host.dtype,
        host.ndim,
        host.size,
    )
    if host.size:  # NumPy gives an empty array strides of 0
        assert device.strides == host.strides
    back = device.to_host()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)


def test_metadata_len_item_and_conversions() -> None:
    x = on_device(np.arange(6.0).reshape(2, 3))
    assert len(x) == 2 and x.device == "cuda" and x.flags.c_contiguous and x.flags.writeable
    assert x.T.flags.c_contiguous is False
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x.numpy().shape == (2, 3)
    assert x.sum().item() == 15.0 and float(x.sum()) == 15.0 and int(x[1, 2]) == 5
    assert [row.tolist() for row in x] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert "DeviceArray([[0., 1., 2.]" in repr(x)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    with pytest.raises(TypeError, match="len"):
        len(x.sum())


def test_implicit_conversion_to_numpy_raises() -> None:
    x = on_device(np.ones(3))
    with pytest.raises(TypeError, match=r"call \.to_host\(\) \(or \.numpy\(\)\)"):
        np.asarray(x)
    with pytest.raises(TypeError, match="to_host"):
        np.array(x)


@pytest.mark.parametrize("dtype", [np.complex128, np.float16, object])
def test_unsupported_dtypes_are_refused(dtype) -> None:
    with pytest.raises(TypeError, match="not supported on cuda"):
        DeviceArray.from_host(np.zeros(2, dtype=dtype))


def test_makers_and_numba_interop() -> None:
    assert_matches(kernels.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    assert_matches(kernels.ones(4), np.ones(4))
    assert_matches(kernels.full((2, 2), 7, np.int64), np.full((2, 2), 7))
    assert kernels.empty((3, 0)).shape == (3, 0)
    x = on_device(np.arange(6.0).reshape(2, 3))
    numba_array = x.T.to_numba()  # a contiguous copy: the transpose was a strided view
    assert numba_array.shape == (3, 2)
    assert_matches(DeviceArray.from_numba(numba_array), np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(TypeError, match="numba device array"):
        DeviceArray.from_numba(np.ones(2))


def test_package_helpers_and_lazy_import() -> None:
    assert kernels.is_available()
    simulated = kernels.device_name() == "CUDA simulator"
    assert simulated == (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1")
    probe = "import sys, minigrad.kernels; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_no_gpu_and_no_simulator_says_which_to_get() -> None:
    probe = (
        "import os; os.environ['NUMBA_ENABLE_CUDASIM'] = '0'\n"
        "import numpy as np\n"
        "from minigrad.kernels import DeviceArray\n"
        "try:\n"
        "    DeviceArray.from_host(np.ones(2))\n"
        "except RuntimeError as error:\n"
        "    print('RuntimeError:', error)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "NUMBA_ENABLE_CUDASIM": "0"}
    for name in ("PYTHONPATH", "PYTHONSAFEPATH"):  # make test-gpu's minigrad, built for it
        if name in os.environ:
            env[name] = os.environ[name]
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    if "RuntimeError" not in out.stdout:
        pytest.skip("this machine has a CUDA GPU")
    assert "NUMBA_ENABLE_CUDASIM=1" in out.stdout and "NVIDIA GPU" in out.stdout


# ------------------------------------------------------------------------------- views
def test_transpose_permute_and_t_are_views_with_permuted_strides() -> None:
    host = data((2, 3, 4))
    x = on_device(host)
    assert x.T.buffer is x.buffer and x.T.element_strides == (1, 4, 12)
    assert_matches(x.T, host.T)
    assert_matches(x.transpose(1, 0, 2), host.transpose(1, 0, 2))
    assert_matches(x.permute((2, 0, 1)), host.transpose(2, 0, 1))
    assert_matches(x.transpose(-1, 0, 1), host.transpose(2, 0, 1))
    assert_matches(x.swapaxes(0, 2), host.swapaxes(0, 2))
    assert_matches(np.transpose(x), host.T)
    with pytest.raises(ValueError, match="don't match"):
        x.transpose(0, 0, 1)


def test_reshape_views_contiguous_data_and_copies_strided_data() -> None:
    host = data((4, 6))
    x = on_device(host)
    view = x.reshape(3, 8)
    assert view.buffer is x.buffer
    assert_matches(view, host.reshape(3, 8))
    assert_matches(x.reshape((2, -1, 3)), host.reshape(2, -1, 3))
    assert_matches(x.reshape(-1), host.reshape(-1))
    copied = x.T.reshape(24)  # the transpose is not contiguous: reshape copies
    assert copied.buffer is not x.buffer
    assert_matches(copied, host.T.reshape(24))
    assert_matches(np.reshape(x.T, (6, 4)), host.T.reshape(6, 4))
    assert_matches(x.sum().reshape(1, 1), host.sum().reshape(1, 1))
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        x.reshape(5, 5)
    with pytest.raises(ValueError, match="one unknown dimension"):
        x.reshape(-1, -1)


def test_basic_indexing_gives_views() -> None:
    host = data((4, 5, 3))
    x = on_device(host)
    for key in [
        1,
        -1,
        (slice(None), 2),
        (slice(1, 4, 2), slice(None, None, -1)),
        (Ellipsis, 0),
        (None, 2, slice(1, 3)),
        (slice(5, 9),),
        (2, 4, 1),
    ]:
        assert_matches(x[key], host[key])
    assert x[1:3].buffer is x.buffer
    with pytest.raises(IndexError, match="out of bounds"):
        x[4]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(NotImplementedError, match=r"\.cpu\(\)"):
        x[[0, 1]]


def test_setitem_writes_through_strided_views() -> None:
    host = data((4, 5))
    x = on_device(host)
    x[1] = 7.0
    x[:, ::2] = on_device(np.arange(3.0))  # broadcast over the rows
    x[...] = x.T.T  # the same elements in the same order: no copy needed
    host[1] = 7.0
    host[:, ::2] = np.arange(3.0)
    assert_matches(x, host)


def test_broadcast_to_is_a_read_only_view() -> None:
    host = data((3, 1))
    x = np.broadcast_to(on_device(host), (2, 3, 4))
    assert x.element_strides == (0, 1, 0) and not x.flags.writeable
    assert_matches(x, np.broadcast_to(host, (2, 3, 4)))
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0
    with pytest.raises(ValueError, match="cannot broadcast"):
        on_device(host).broadcast_to((3, 2, 2))


def test_copy_astype_expand_dims_squeeze() -> None:
    host = data((3, 1, 2))
    x = on_device(host)
    y = x.copy()
    y[0] = 0.0
    assert_matches(x, host)  # the copy has its own memory
    assert_matches(x.astype(np.float32), host.astype(np.float32))
    assert_matches(x.astype(np.int64), host.astype(np.int64))
    assert x.astype(np.float64, copy=False) is x
    assert_matches(x.squeeze(), host.squeeze())
    assert_matches(np.squeeze(x, axis=1), host.squeeze(1))
    assert_matches(np.expand_dims(x, 0), host[None])
    with pytest.raises(ValueError, match="size not equal to one"):
        x.squeeze(0)


# ------------------------------------------------------------------ elementwise: unary
UNARY_CASES = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "sigmoid": lambda x: 0.5 * (1 + np.tanh(0.5 * x)),
    "relu": lambda x: np.maximum(x, 0),
    "sqrt": np.sqrt,
    "abs": np.abs,
    "sign": np.sign,
    "square": np.square,
    "identity": lambda x: x.copy(),
    "relu_mask": lambda x: (x > 0).astype(x.dtype),
    "tanh_grad": lambda y: 1 - y * y,
    "sigmoid_grad": lambda y: y * (1 - y),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY_CASES))
def test_unary_ops_match_numpy(op, dtype) -> None:
    low = 0.1 if op in ("log", "sqrt") else -3.0
    host = data((3, 5), dtype, low=low, high=3.0)
    with np.errstate(all="ignore"):
        expected = UNARY_CASES[op](host).astype(dtype)
    assert_matches(elementwise.unary(op, on_device(host)), expected)


def test_unary_edge_values_match_numpy() -> None:
    host = np.array([0.0, -1.0, np.nan, np.inf, -np.inf, 800.0, -0.0])
    x = on_device(host)
    with np.errstate(all="ignore"):
        for op, fn in [
            ("log", np.log),
            ("sqrt", np.sqrt),
            ("exp", np.exp),
            ("relu", lambda v: np.maximum(v, 0)),
            ("sign", np.sign),
            ("abs", np.abs),
            ("tanh", np.tanh),
        ]:
            np.testing.assert_array_equal(elementwise.unary(op, x).to_host(), fn(host), op)


def test_unary_dtypes_follow_numpy() -> None:
    ints = on_device(np.array([1, 2, 3], dtype=np.int32))
    assert elementwise.unary("exp", ints).dtype == np.float64
    assert elementwise.unary("neg", ints).dtype == np.int32
    mask = on_device(np.array([True, False]))
    assert_matches(~mask, np.array([False, True]))
    assert_matches(np.logical_not(mask), np.array([False, True]))
    assert_matches(~ints, ~np.array([1, 2, 3], dtype=np.int32))
    assert_matches(np.invert(mask), np.array([False, True]))
    with pytest.raises(TypeError, match="bools and integers only"):
        _ = ~on_device(np.ones(2))
    with pytest.raises(ValueError, match="unknown unary op 'sin'"):
        elementwise.unary("sin", ints)


# ----------------------------------------------------------------- elementwise: binary
BINARY_CASES = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "gt": np.greater,
    "lt": np.less,
    "ge": np.greater_equal,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "relu_backward": lambda g, x: np.where(x > 0, g, 0).astype(np.result_type(g, x)),
    "tanh_backward": lambda g, y: g * (1 - y * y),
    "sigmoid_backward": lambda g, y: g * y * (1 - y),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(BINARY_CASES))
def test_binary_ops_broadcast_like_numpy(op, dtype) -> None:
    a = data((3, 1, 4), dtype, low=0.5)
    b = data((5, 1), dtype)
    b[0, 0] = a[0, 0, 0]  # one equal pair, for the comparisons
    expected = BINARY_CASES[op](a, b)
    assert_matches(elementwise.binary(op, on_device(a), on_device(b)), expected)


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 1), (1, 1)),
        ((7,), (7,)),
        ((3, 1), (1, 4)),
        ((2, 3, 4), (4,)),
        ((1,), (5, 1)),
        ((), (3,)),
        ((2, 1, 3), (4, 1)),
        ((0, 3), (1, 3)),
    ],
)
def test_add_broadcasting_shapes(shapes) -> None:
    a, b = data(shapes[0]), data(shapes[1])
    assert_matches(on_device(a) + on_device(b), a + b)


@FEW
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
    op=st.sampled_from(["add", "mul", "maximum", "gt"]),
    dtype=st.sampled_from(FLOATS),
)
def test_binary_broadcasting_property(shapes, op, dtype) -> None:
    a, b = data(shapes.input_shapes[0], dtype), data(shapes.input_shapes[1], dtype)
    assert_matches(elementwise.binary(op, on_device(a), on_device(b)), BINARY_CASES[op](a, b))


def test_strided_operands_transposes_and_negative_steps() -> None:
    a, b = data((4, 5)), data((5, 4))
    x, y = on_device(a), on_device(b)
    assert_matches(x + y.T, a + b.T)
    assert_matches(x[::-1, 1::2] * y.T[::-1, 1::2], a[::-1, 1::2] * b.T[::-1, 1::2])
    assert_matches(x[:, None, :] - x[None, :, :], a[:, None, :] - a[None, :, :])


def test_broadcast_errors_name_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(2, 3\) \(4,\)"):
        on_device(np.ones((2, 3))) + on_device(np.ones(4))


def test_scalars_and_dtype_promotion_follow_numpy() -> None:
    f32, f64 = data((2, 3), np.float32), data((2, 3), np.float64)
    x32, x64 = on_device(f32), on_device(f64)
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    xi = on_device(ints)
    assert_matches(x32 + x64, f32 + f64)  # float64
    assert_matches(x32 * 0.5, f32 * 0.5)  # a Python float is weak: float32 stays
    assert_matches(x32 * np.float64(0.5), f32 * np.float64(0.5))  # a NumPy float64 is not
    assert_matches(2 - x32, 2 - f32)
    assert_matches(np.float64(2.0) * x32, np.float64(2.0) * f32)  # NumPy scalar on the left
    assert_matches(np.float32(3.0) - x32, np.float32(3.0) - f32)
    assert_matches(1 / x64, 1 / f64)
    assert_matches(2.0**x32, 2.0**f32)
    assert_matches(x32**2, f32**2)
    assert_matches(xi / 4, ints / 4)  # true division of integers: float64
    assert_matches(xi + 1.5, ints + 1.5)
    assert_matches(xi > 2.5, ints > 2.5)  # compared in float64, not as ints
    assert_matches(x32 * (xi > 2), f32 * (ints > 2))  # a bool mask times floats
    assert_matches(x64 + np.array(2.0), f64 + 2.0)  # a 0-d host array acts as a number
    assert_matches((x64 > 0) & (x64 < 1), (f64 > 0) & (f64 < 1))
    assert_matches((x64 > 0) | (x64 < -1), (f64 > 0) | (f64 < -1))
    assert_matches((x64 > 0) ^ (x64 < 1), (f64 > 0) ^ (f64 < 1))
    assert_matches(np.bool_(True) & (x64 > 0), np.bool_(True) & (f64 > 0))  # np.bitwise_and
    assert_matches(xi & 6, ints & 6)
    with pytest.raises(TypeError, match="bools and integers only"):
        _ = x64 & x64
    assert_matches(-x32, -f32)
    assert_matches(abs(x32), np.abs(f32))
    assert_matches(x64 == x64.T.T, np.ones((2, 3), bool))


def test_where_broadcasts_three_operands() -> None:
    c, a, b = data((3, 1)) > 0, data((1, 4)), data((3, 4), np.float32)
    assert_matches(np.where(on_device(c), on_device(a), on_device(b)), np.where(c, a, b))
    assert_matches(np.where(on_device(c), on_device(a), 0.0), np.where(c, a, 0.0))
    with pytest.raises(NotImplementedError, match="one argument"):
        np.where(on_device(c))


def test_in_place_operators_write_into_the_array() -> None:
    host = data((3, 3))
    x = on_device(host)
    buffer = x.buffer
    x += 1.0
    x -= on_device(np.arange(3.0))
    x *= 2
    x /= 4
    host = ((host + 1.0) - np.arange(3.0)) * 2 / 4
    assert x.buffer is buffer
    assert_matches(x, host)
    # x += x.T reads what other threads write: the transpose is copied first (as NumPy).
    x += x.T
    assert_matches(x, host + host.T)
    ints = on_device(np.arange(3))
    with pytest.raises(TypeError, match="cannot cast the result, float64, to out's dtype int64"):
        ints += 0.5
    with pytest.raises(ValueError, match="out has shape"):
        elementwise.binary("add", x, on_device(np.ones((2, 3, 3))), out=x)


def test_mixing_host_and_device_arrays_names_both_devices() -> None:
    x, host = on_device(np.ones(3)), np.ones(3)
    for attempt in (
        lambda: x + host,
        lambda: host + x,
        lambda: host * x,
        lambda: x > host,
        lambda: np.add(host, x),
        lambda: np.maximum(x, host),
        lambda: x @ np.ones((3, 2)),
        lambda: np.ones((2, 3)) @ x,
        lambda: np.where(x > 0, x, host),
        lambda: np.sum(x + host),
    ):
        with pytest.raises(TypeError, match=r"cuda.*cpu"):
            attempt()


def test_operators_with_unknown_types_return_notimplemented() -> None:
    x = on_device(np.ones(2))
    with pytest.raises(TypeError, match="unsupported operand"):
        x + "text"
    assert (x == None) is False  # noqa: E711 (Python falls back to identity)


# --------------------------------------------------------------------------- reductions
def _reduction_cases():
    for shape in [(1, 1), (5,), (3, 5), (2, 3, 4)]:
        for axis in [None, *range(len(shape)), -1]:
            yield shape, axis


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(("shape", "axis"), list(_reduction_cases()))
def test_sum_max_mean_along_every_axis(shape, axis, keepdims) -> None:
    host = data(shape, np.float64)
    x = on_device(host)
    assert_matches(x.sum(axis=axis, keepdims=keepdims), host.sum(axis=axis, keepdims=keepdims))
    assert_matches(x.max(axis=axis, keepdims=keepdims), host.max(axis=axis, keepdims=keepdims))
    assert_matches(x.mean(axis=axis, keepdims=keepdims), host.mean(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("strategy", ["tree", "columns"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_both_reduction_strategies_agree_with_numpy(axis, strategy, dtype) -> None:
    host = data((3, 5, 4), dtype)
    x = on_device(host)
    for kind, fn in [("sum", np.sum), ("max", np.max)]:
        assert_matches(reduce.reduce_axis(x, axis, kind, strategy), fn(host, axis=axis))
    # on a strided view too
    assert_matches(reduce.reduce_axis(x.T, axis, "min", strategy), host.T.min(axis=axis))


def test_tuple_axes_min_and_float32_results() -> None:
    host = data((2, 3, 2, 3), np.float32)
    x = on_device(host)
    assert_matches(x.sum(axis=(0, 2)), host.sum(axis=(0, 2)))
    assert_matches(x.max(axis=(1, -1), keepdims=True), host.max(axis=(1, 3), keepdims=True))
    assert_matches(np.min(x, axis=(0, 1, 2, 3)), host.min())
    assert_matches(x.mean(axis=(0, 3)), host.mean(axis=(0, 3)))


def test_lengths_that_need_the_fold_loop_and_the_two_pass_sum(monkeypatch) -> None:
    # With 8 threads per block, a row of 37 is folded 5 elements per thread before the
    # tree, and a 100-element sum goes through the grid-stride partials first.
    monkeypatch.setattr(reduce, "BLOCK", 8)
    host = data((3, 37))
    x = on_device(host)
    assert_matches(x.sum(axis=1), host.sum(axis=1))
    assert_matches(x.max(axis=1), host.max(axis=1))
    assert_matches(x.T.sum(axis=0), host.sum(axis=1))
    flat = data(100)
    assert_matches(on_device(flat).sum(), flat.sum())
    assert_matches(on_device(flat).max(), flat.max())
    assert_matches(on_device(np.arange(100)).sum(), np.arange(100).sum())


def test_a_row_longer_than_one_block() -> None:
    host = data(300, np.float32)  # 256 threads, the first 44 take two elements each
    assert_matches(on_device(host).sum(axis=0), host.sum(axis=0))


def test_reduction_dtypes_empty_axes_and_size_one_axes() -> None:
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert_matches(on_device(ints).sum(axis=0), ints.sum(axis=0))  # int64, as NumPy
    assert_matches(on_device(ints).max(), ints.max())  # int32
    assert_matches(on_device(ints).mean(axis=1), ints.mean(axis=1))  # float64
    mask = ints > 4
    assert_matches(on_device(mask).sum(axis=1), mask.sum(axis=1))
    empty = np.zeros((0, 3))
    assert_matches(on_device(empty).sum(axis=0), empty.sum(axis=0))
    assert_matches(on_device(empty).sum(axis=1), empty.sum(axis=1))
    assert_matches(on_device(empty).sum(), empty.sum())
    assert_matches(on_device(empty).max(axis=1), empty.max(axis=1))  # (0,): nothing to do
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        on_device(empty).max(axis=0)
    with pytest.raises(ValueError, match="zero-size"):
        on_device(empty).max()
    single = data((4, 1, 3))
    assert_matches(on_device(single).sum(axis=1), single.sum(axis=1))
    assert_matches(on_device(np.array(2.5)).sum(), np.array(2.5).sum())
    with pytest.raises(np.exceptions.AxisError):
        on_device(single).sum(axis=3)


def test_max_propagates_nan_and_argmax_takes_the_first_maximum() -> None:
    host = np.array([[1.0, 3.0, 3.0, 0.5], [np.nan, 2.0, np.nan, 7.0], [4.0, 4.0, 4.0, 4.0]])
    x = on_device(host)
    np.testing.assert_array_equal(x.max(axis=1).to_host(), host.max(axis=1))
    assert_matches(x.argmax(axis=1), host.argmax(axis=1))
    assert_matches(x.argmax(axis=0, keepdims=True), host.argmax(axis=0, keepdims=True))
    assert_matches(np.argmax(x[0]), host[0].argmax())
    assert_matches(x[2].argmax(), np.argmax(host[2]))


@pytest.mark.parametrize(
    ("grad_shape", "shape"),
    [
        ((4, 3, 5), (3, 1)),
        ((2, 3), (2, 3)),
        ((2, 3), (3,)),
        ((2, 3), ()),
        ((5,), (1,)),
        ((2, 3, 4), (2, 1, 4)),
        ((1, 1), (1,)),
    ],
)
def test_sum_to_shape_undoes_broadcasting(grad_shape, shape) -> None:
    grad = data(grad_shape)
    expected = grad
    while expected.ndim > len(shape):
        expected = expected.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1:
            expected = expected.sum(axis=axis, keepdims=True)
    assert_matches(reduce.sum_to_shape(on_device(grad), shape), expected.reshape(shape))


def test_sum_to_shape_refuses_a_shape_that_does_not_broadcast() -> None:
    with pytest.raises(ValueError, match=r"shape \(4,\) does not broadcast"):
        reduce.sum_to_shape(on_device(np.ones((2, 3))), (4,))
    with pytest.raises(ValueError, match="does not broadcast"):
        reduce.sum_to_shape(on_device(np.ones(3)), (2, 3))


# ------------------------------------------------------------------------------- matmul
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((1, 1), (1, 1)),
        ((5, 7), (7, 3)),
        ((4, 4), (4, 4)),
        ((9, 2), (2, 10)),
        ((3, 0), (0, 2)),
        ((0, 3), (3, 2)),
        ((2, 5, 7), (7, 3)),
        ((5, 7), (2, 7, 3)),
        ((3, 1, 4, 5), (2, 5, 6)),
        ((7,), (7, 3)),
        ((5, 7), (7,)),
        ((7,), (7,)),
        ((2, 3, 4), (4,)),
    ],
)
def test_matmul_with_small_tiles_matches_numpy(a_shape, b_shape, dtype) -> None:
    a, b = data(a_shape, dtype), data(b_shape, dtype)
    assert_matches(matmul.matmul(on_device(a), on_device(b), tile=4), a @ b)


def test_matmul_with_the_real_tile_on_shapes_that_are_not_multiples() -> None:
    a, b = data((17, 3), np.float32), data((3, 18), np.float32)
    assert_matches(on_device(a) @ on_device(b), a @ b)  # 2 x 2 blocks of 16 x 16 threads
    a, b = data((2, 3, 20)), data((20, 2))  # k spans two tiles, batch of two
    assert_matches(np.matmul(on_device(a), on_device(b)), a @ b)


def test_matmul_reads_transposed_views_and_promotes_dtypes() -> None:
    x, w = data((6, 5), np.float32), data((3, 5), np.float32)
    assert_matches(matmul.matmul(on_device(x), on_device(w).T, tile=4), x @ w.T)
    assert_matches(matmul.matmul(on_device(x).T, on_device(x), tile=4), x.T @ x)
    mixed = data((5, 2), np.float64)
    assert_matches(matmul.matmul(on_device(x), on_device(mixed), tile=4), x @ mixed)
    ints = np.arange(6).reshape(2, 3)
    assert_matches(matmul.matmul(on_device(ints), on_device(ints.T), tile=2), ints @ ints.T)


SMALL_BLOCKING = (8, 8, 4, 2, 2)  # 16 threads, each a 2 x 2 block of C


@FEW
@given(
    m=st.integers(1, 9),
    k=st.integers(1, 9),
    n=st.integers(1, 9),
    batch=st.sampled_from([(), (2,), (1, 2)]),
    tile=st.sampled_from([2, 4]),
    method=st.sampled_from(["tiled", "blocked"]),
)
def test_matmul_property(m, k, n, batch, tile, method) -> None:
    a, b = data(batch + (m, k)), data((k, n))
    result = matmul.matmul(
        on_device(a), on_device(b), tile=tile, method=method, blocking=SMALL_BLOCKING
    )
    assert_matches(result, a @ b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((1, 1), (1, 1)), ((9, 5), (5, 11)), ((8, 8), (8, 8)), ((2, 3, 6), (6, 17)), ((6,), (6, 3))],
)
def test_register_blocked_matmul_matches_numpy(a_shape, b_shape, dtype) -> None:
    a, b = data(a_shape, dtype), data(b_shape, dtype)
    result = matmul.matmul(on_device(a), on_device(b), method="blocked", blocking=SMALL_BLOCKING)
    assert_matches(result, a @ b)


def test_register_blocked_matmul_loads_transposed_operands() -> None:
    # A transposed view is contiguous along the other direction: the loads follow it.
    x, w, t = data((10, 7), np.float32), data((9, 7), np.float32), data((7, 10), np.float32)
    x_d, w_d, t_d = on_device(x), on_device(w), on_device(t)
    for a, b, expected in [(x_d, w_d.T, x @ w.T), (t_d.T, w_d.T, t.T @ w.T)]:
        result = matmul.matmul(a, b, method="blocked", blocking=SMALL_BLOCKING)
        assert_matches(result, expected)


def test_auto_picks_the_blocked_kernel_when_c_has_enough_tiles(monkeypatch) -> None:
    used = []
    original = matmul.make_blocked_kernel
    monkeypatch.setattr(
        matmul, "make_blocked_kernel", lambda *args: used.append(args) or original(*args)
    )
    a, b = data((12, 5)), data((5, 12))
    tiny = (2, 2, 4, 1, 1)  # C is 6 x 6 = 36 tiles of 2 x 2: enough for "auto"
    assert_matches(matmul.matmul(on_device(a), on_device(b), blocking=tiny), a @ b)
    assert len(used) == 1
    assert_matches(matmul.matmul(on_device(a[:4]), on_device(b), blocking=tiny), a[:4] @ b)
    assert len(used) == 1  # 2 x 6 = 12 tiles: the tiled kernel
    with pytest.raises(ValueError, match="TM must divide BM"):
        matmul.matmul(on_device(a), on_device(b), blocking=(8, 8, 4, 3, 2))
    with pytest.raises(ValueError, match="method"):
        matmul.matmul(on_device(a), on_device(b), method="fast")


def test_matmul_errors() -> None:
    a = on_device(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"not aligned.*\(3\).*\(4\)"):
        a @ on_device(np.ones((4, 2)))
    with pytest.raises(ValueError, match="0-d"):
        matmul.matmul(a, a.sum())
    with pytest.raises(ValueError, match="batch dimensions"):
        on_device(np.ones((2, 2, 3))) @ on_device(np.ones((3, 3, 2)))
    with pytest.raises(ValueError, match="tile"):
        matmul.matmul(a, a.T, tile=64)


# ---------------------------------------------------------------------- NumPy dispatch
def test_numpy_ufuncs_dispatch_to_the_kernels() -> None:
    a, b = data((2, 3), low=0.5), data((1, 3), low=0.5)
    x, y = on_device(a), on_device(b)
    for ufunc in (
        np.add,
        np.subtract,
        np.multiply,
        np.true_divide,
        np.divide,
        np.power,
        np.maximum,
        np.minimum,
        np.greater,
        np.less,
        np.greater_equal,
        np.less_equal,
        np.equal,
        np.not_equal,
    ):
        assert_matches(ufunc(x, y), ufunc(a, b))
    for ufunc in (
        np.negative,
        np.exp,
        np.log,
        np.tanh,
        np.sqrt,
        np.absolute,
        np.abs,
        np.sign,
        np.square,
    ):
        assert_matches(ufunc(x), ufunc(a))
    out = kernels.empty((2, 3))
    assert np.exp(x, out=out) is out
    assert_matches(out, np.exp(a))
    assert_matches(np.add.reduce(x), np.add.reduce(a))  # axis 0 by default, as NumPy
    assert_matches(np.add.reduce(x, axis=1, keepdims=True), np.add.reduce(a, axis=1, keepdims=True))
    assert_matches(np.maximum.reduce(x, axis=None), np.maximum.reduce(a, axis=None))
    assert_matches(np.matmul(x, y.T), a @ b.T)


def test_numpy_functions_dispatch_to_the_kernels() -> None:
    a = data((2, 3, 4))
    x = on_device(a)
    assert_matches(np.sum(x, axis=1), np.sum(a, axis=1))
    assert_matches(np.sum(x, axis=(0, 2), keepdims=True), np.sum(a, axis=(0, 2), keepdims=True))
    assert_matches(np.max(x, axis=-1), np.max(a, axis=-1))
    assert_matches(np.amax(x), np.amax(a))
    assert_matches(np.mean(x, axis=0), np.mean(a, axis=0))
    assert_matches(np.transpose(x, (1, 0, 2)), np.transpose(a, (1, 0, 2)))
    assert_matches(np.reshape(x, (6, 4)), np.reshape(a, (6, 4)))
    assert_matches(np.ones_like(x), np.ones_like(a))
    assert_matches(np.zeros_like(x, dtype=np.float32), np.zeros_like(a, dtype=np.float32))
    assert_matches(np.full_like(x, 3.5), np.full_like(a, 3.5))
    assert_matches(np.broadcast_to(x[:, :1], (2, 3, 4)), np.broadcast_to(a[:, :1], (2, 3, 4)))
    assert_matches(np.concatenate([x, x[:, :1]], axis=1), np.concatenate([a, a[:, :1]], axis=1))
    assert_matches(np.stack([x[0], x[1]], axis=1), np.stack([a[0], a[1]], axis=1))
    assert_matches(np.swapaxes(x, 0, 1), np.swapaxes(a, 0, 1))
    assert_matches(np.copy(x), a)
    assert np.shape(x) == (2, 3, 4) and np.ndim(x) == 3 and np.size(x) == 24


def test_unsupported_numpy_calls_say_to_move_to_the_cpu() -> None:
    x = on_device(np.ones((2, 2)))
    message = r"np\.sin is not supported on cuda yet; move the Variable to the CPU with \.cpu\(\)"
    with pytest.raises(NotImplementedError, match=message):
        np.sin(x)
    with pytest.raises(NotImplementedError, match=r"np\.cumsum is not supported on cuda yet"):
        np.cumsum(x)
    with pytest.raises(NotImplementedError, match=r"np\.add\.accumulate is not supported"):
        np.add.accumulate(x)
    with pytest.raises(NotImplementedError, match="dtype"):
        np.sum(x, dtype=np.float32)
    with pytest.raises(TypeError, match="to_host"):  # np.testing converts its arguments
        np.testing.assert_allclose(x, np.ones((2, 2)))



def _shared_arrays_made_at_once(threads: int) -> list:
    """The arrays `threads` threads get from one cuda.shared.array line, all at once."""
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    shared, start, got = FakeCUDAShared(0), threading.Barrier(threads), []

    def thread() -> None:
        start.wait()
        got.append(shared.array((4, 4), np.float32))

    running = [threading.Thread(target=thread) for _ in range(threads)]
    for each in running:
        each.start()
    for each in running:
        each.join()
    return got


@pytest.mark.skipif(
    kernels.device_name() != "CUDA simulator", reason="the simulator's shared memory only"
)
def test_the_threads_of_a_block_always_get_one_shared_array() -> None:
    # The simulator makes a block's shared array when the first thread reaches the line;
    # without a lock two threads could each make one (a once-in-a-while wrong result).
    # Many threads reaching the line at the same moment must still get one array. (With
    # Numba's own simulator method and 1 µs thread switches, about 1 try in 40 got two.)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(100):
            got = _shared_arrays_made_at_once(16)
            assert len(got) == 16 and all(array is got[0] for array in got)
    finally:
        sys.setswitchinterval(previous)

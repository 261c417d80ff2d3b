"""Convolutions on "cuda" (Numba's CUDA simulator here; the real GPU in `make test-gpu`):
conv1d/conv2d forward and both gradients, conv_transpose2d, unfold and fold run on the
kernels (im2col and col2im in kernels/convolution.py, then the tiled matmul), the data
staying on the device, equal to the CPU path, which tests/test_conv_pool_norm.py checks
against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad.nn.functional as F
from minigrad import Variable, nn
from minigrad.nn._functions.convolution import Geometry, fold, windows


def pair(array: np.ndarray) -> tuple[Variable, Variable]:
    """The same leaf on the CPU and on cuda."""
    cpu = Variable(array, requires_grad=True)
    gpu = Variable(array).to("cuda")
    gpu.requires_grad = True
    return cpu, gpu


CASES = [
    # (x shape, weight shape, stride, padding, dilation, groups)
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 4, 8, 7), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 2, 9), (3, 2, 3), 2, 1, 1, 1),
]


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_forward_and_gradients_on_cuda_equal_the_cpu(
    x_shape, w_shape, stride, padding, dilation, groups, dtype
) -> None:
    rng = np.random.default_rng(0)
    conv = F.conv2d if len(x_shape) == 4 else F.conv1d
    x_cpu, x_gpu = pair(rng.standard_normal(x_shape).astype(dtype))
    w_cpu, w_gpu = pair(rng.standard_normal(w_shape).astype(dtype))
    b_cpu, b_gpu = pair(rng.standard_normal(w_shape[0]).astype(dtype))
    y_cpu = conv(x_cpu, w_cpu, b_cpu, stride, padding, dilation, groups)
    y_gpu = conv(x_gpu, w_gpu, b_gpu, stride, padding, dilation, groups)
    assert y_gpu.device == "cuda" and type(y_gpu.data).__name__ == "DeviceArray"
    assert y_gpu.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(
        y_gpu.detach().numpy(), y_cpu.detach().numpy(), rtol=tolerance, atol=tolerance
    )
    seed = rng.standard_normal(y_cpu.shape).astype(dtype)
    y_cpu.backward(Variable(seed))
    y_gpu.backward(Variable(seed).to("cuda"))
    for cpu, gpu in ((x_cpu, x_gpu), (w_cpu, w_gpu), (b_cpu, b_gpu)):
        assert gpu.grad.device == "cuda"
        np.testing.assert_allclose(
            gpu.grad.numpy(), cpu.grad.numpy(), rtol=tolerance, atol=tolerance
        )


def test_conv2d_module_trains_on_cuda() -> None:
    rng = np.random.default_rng(1)
    layer = nn.Conv2d(2, 3, 3, padding=1).double()
    x = Variable(rng.standard_normal((2, 2, 5, 5)))
    expected = layer(x)
    layer.to("cuda")
    got = layer(x.to("cuda"))
    np.testing.assert_allclose(
        got.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12
    )
    got.sum().backward()
    assert layer.weight.grad.device == "cuda"


def test_conv_transpose_unfold_fold_on_cuda() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 5, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    cpu = F.conv_transpose2d(Variable(x), Variable(w), stride=2, padding=1, output_padding=1)
    gpu = F.conv_transpose2d(Variable(x).to("cuda"), Variable(w).to("cuda"), stride=2,
                             padding=1, output_padding=1)
    np.testing.assert_allclose(gpu.numpy(), cpu.numpy(), rtol=1e-12, atol=1e-12)
    columns = F.unfold(Variable(x).to("cuda"), (2, 3), dilation=(1, 2), padding=1, stride=2)
    expected = F.unfold(Variable(x), (2, 3), dilation=(1, 2), padding=1, stride=2)
    np.testing.assert_allclose(columns.numpy(), expected.numpy())
    back = F.fold(columns, (5, 5), (2, 3), dilation=(1, 2), padding=1, stride=2)
    np.testing.assert_allclose(
        back.numpy(), F.fold(expected, (5, 5), (2, 3), dilation=(1, 2), padding=1, stride=2).numpy()
    )


@pytest.mark.parametrize(
    "size, kernel, stride, padding, dilation",
    [((6, 7), (3, 2), (2, 1), (1, 0), (1, 2)), ((9,), (3,), (2,), (1,), (1,))],
)
def test_im2col_and_col2im_kernels_equal_numpy(size, kernel, stride, padding, dilation) -> None:
    from minigrad.kernels import DeviceArray
    from minigrad.kernels import convolution as kernels

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, *size)).astype(np.float32)
    geometry = Geometry(stride, tuple((p, p) for p in padding), dilation)
    out = geometry.output_size(size, kernel)
    d = len(kernel)
    # NumPy's windows, in the kernels' layout (C, *K, N, *P)
    expected = windows(x, geometry, kernel).transpose((1, *range(2 + d, 2 + 2 * d), 0,
                                                       *range(2, 2 + d)))
    got = kernels.im2col(DeviceArray.from_host(x), kernel, out, stride, padding, dilation)
    np.testing.assert_array_equal(got.to_host(), expected)
    columns = rng.standard_normal(expected.shape).astype(np.float32)
    folded = kernels.col2im(DeviceArray.from_host(columns), size, stride, padding, dilation)
    np.testing.assert_allclose(folded.to_host(), fold(columns, geometry, size), rtol=1e-6)


def test_pooling_on_cuda_says_to_move_to_the_cpu() -> None:
    x = Variable(np.ones((1, 1, 4, 4))).to("cuda")
    with pytest.raises(NotImplementedError, match=r"max_pool is not supported on cuda yet"):
        F.max_pool2d(x, 2)

"""im2col and col2im: the two copies that turn a convolution into one matmul on the device.

For x (N, C, H, W), a kernel kh x kw, and windows every (stride_h, stride_w) apart,
`dilation` apart inside a window, over x padded by (pad_h, pad_w) before each dim:

    columns[c, th, tw, n, oh, ow] = x[n, c, oh·stride_h - pad_h + th·dil_h,
                                            ow·stride_w - pad_w + tw·dil_w]   (0 outside x)

`columns`, reshaped to (C·kh·kw, N·out_h·out_w), times the weight (C_out, C·kh·kw) is the
convolution (minigrad/nn/_functions/convolution.py does the matmul with matmul.py's
kernel). col2im is its adjoint: each element of x collects the columns entries that were
copied from it, which is how the input's gradient is put back together. One thread per
output element in both, and no atomics: col2im gathers (each x element loops over the
kernel taps and finds the windows that read it) rather than scatters.

A 1-D convolution is the 2-D one with H = 1 and a 1 x K kernel.
"""

from __future__ import annotations

from numba import cuda  # module level: the simulator finds `cuda` in the kernel's globals

from .buffers import StridedBuffer
from .launch import launch_1d


# fmt: off
@cuda.jit(cache=True)
def im2col_kernel(n, out, x, x_offset, x_strides, channels, batch, height, width,
                  kernel_h, kernel_w, out_h, out_w, stride_h, stride_w, pad_h, pad_w,
                  dil_h, dil_w, fill):
    i = cuda.grid(1)
    if i < n:
        # i walks out, contiguous (C, kh, kw, N, out_h, out_w): peel from the last dim
        ow = i % out_w
        rest = i // out_w
        oh = rest % out_h
        rest //= out_h
        b = rest % batch
        rest //= batch
        tw = rest % kernel_w
        rest //= kernel_w
        th = rest % kernel_h
        c = rest // kernel_h
        h = oh * stride_h - pad_h + th * dil_h
        w = ow * stride_w - pad_w + tw * dil_w
        if 0 <= h < height and 0 <= w < width:
            out[i] = x[x_offset + b * x_strides[0] + c * x_strides[1]
                       + h * x_strides[2] + w * x_strides[3]]
        else:
            out[i] = fill


@cuda.jit(cache=True)
def col2im_kernel(n, out, columns, c_offset, c_strides, channels, batch, height, width,
                  kernel_h, kernel_w, out_h, out_w, stride_h, stride_w, pad_h, pad_w,
                  dil_h, dil_w, zero):
    i = cuda.grid(1)
    if i < n:
        # i walks out, contiguous (N, C, H, W)
        w = i % width
        rest = i // width
        h = rest % height
        rest //= height
        c = rest % channels
        b = rest // channels
        total = zero  # of out's dtype
        for th in range(kernel_h):
            top = h + pad_h - th * dil_h  # = oh·stride_h for the window that reads (h, w)
            if top < 0 or top % stride_h != 0 or top // stride_h >= out_h:
                continue
            oh = top // stride_h
            for tw in range(kernel_w):
                left = w + pad_w - tw * dil_w
                if left < 0 or left % stride_w != 0 or left // stride_w >= out_w:
                    continue
                ow = left // stride_w
                total += columns[c_offset + c * c_strides[0] + th * c_strides[1]
                                 + tw * c_strides[2] + b * c_strides[3]
                                 + oh * c_strides[4] + ow * c_strides[5]]
        out[i] = total
# fmt: on


def _as_2d(
    x: StridedBuffer, stride: tuple, padding: tuple, dilation: tuple, kernel: tuple
) -> tuple:
    """A 1-D problem as a 2-D one with height 1; 2-D ones as they are."""
    if x.ndim == 4:
        return x, stride, padding, dilation, kernel
    batch, channels, length = x.shape
    strides = x.element_strides
    x = x.with_layout((batch, channels, 1, length), (strides[0], strides[1], 0, strides[2]))
    return x, (1, *stride), (0, *padding), (1, *dilation), (1, *kernel)


def im2col(
    x: StridedBuffer,
    kernel: tuple[int, ...],
    out: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    fill: float = 0,
) -> StridedBuffer:
    """x (N, C, *S) → columns (C, *K, N, *P), contiguous; `padding` is the amount before
    each spatial dim (the amount after only decides `out`)."""
    spatial = len(kernel)
    x2, stride2, padding2, dilation2, kernel2 = _as_2d(x, stride, padding, dilation, kernel)
    out2 = out if spatial == 2 else (1, *out)
    batch, channels, height, width = x2.shape
    shape = (channels, *kernel, batch, *out)
    result = x.new_empty(shape, x.dtype)
    launch_1d(
        im2col_kernel, result.size, result.buffer, x2.buffer, x2.offset, x2.element_strides,
        channels, batch, height, width, *kernel2, *out2, *stride2, *padding2, *dilation2,
        x.dtype.type(fill),
    )
    return result


def col2im(
    columns: StridedBuffer,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> StridedBuffer:
    """The adjoint of im2col: columns (C, *K, N, *P) → (N, C, *size), each element the sum
    of the columns entries copied from it."""
    spatial = len(size)
    channels = columns.shape[0]
    kernel = columns.shape[1 : 1 + spatial]
    batch, out = columns.shape[1 + spatial], columns.shape[2 + spatial :]
    strides = columns.element_strides
    if spatial == 1:
        # (C, K, N, P) read as (C, 1, K, N, 1, P)
        strides = (strides[0], 0, strides[1], strides[2], 0, strides[3])
        kernel, out, size2 = (1, *kernel), (1, *out), (1, *size)
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    else:
        size2 = size
    result = columns.new_empty((batch, channels, *size), columns.dtype)
    launch_1d(
        col2im_kernel, result.size, result.buffer, columns.buffer, columns.offset, strides,
        channels, batch, *size2, *kernel, *out, *stride, *padding, *dilation,
        columns.dtype.type(0),
    )
    return result

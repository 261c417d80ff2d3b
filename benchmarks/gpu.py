"""GPU benchmarks of minigrad.kernels; prints a Markdown table with the device and date.

    .venv/bin/python benchmarks/gpu.py            # needs an NVIDIA GPU (pip install -e ".[gpu]")
    .venv/bin/python benchmarks/gpu.py --quick    # smaller sizes, fewer repeats
    .venv/bin/python benchmarks/gpu.py --smoke    # tiny sizes in the CUDA simulator: checks
                                                  # this script runs; its timings mean nothing

Without a GPU it says so and exits 0 (it is not part of `make test` or `make bench`).

What is measured, each the best of several runs timed with CUDA events after a warm-up
run (which compiles the kernels):

- matmul, square fp32 matrices of 1024-8192, with the register-blocked kernel (what
  `matmul` runs at these sizes) and with the lesson's tiled kernel: TFLOP/s (2 n^3
  flops) against cuBLAS
  through CuPy when CuPy is installed; otherwise against a naive Numba kernel (one
  thread per output element, no shared memory), and the table says so.
- elementwise (a + b, exp(a)) and reductions (sum of everything, of each row, of each
  column) on 64M fp32 elements: bytes moved per second against a device-to-device copy
  of the same array (the faster of Numba's copy_to_device and CuPy's copyto), about the
  most a memory-bound kernel can reach.
- one MLP training step (forward, backward by hand, SGD) written once with NumPy calls:
  run on DeviceArrays on the GPU and on ndarrays by NumPy on the CPU.

Targets (issue 7): matmul >= 60% of cuBLAS at 4096; elementwise >= 80% and
reduction >= 70% of copy bandwidth.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# Before numba is imported: the simulator only for --smoke, the GPU otherwise (the
# simulator's timings would mean nothing).
SMOKE = "--smoke" in sys.argv[1:]
os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if SMOKE else "0"

try:
    import numba_cuda
    from numba import cuda
except Exception as error:  # numba-cuda missing, or no CUDA runtime library
    print(f"No GPU benchmark: numba-cuda cannot be imported ({error}).")
    sys.exit(0)

from minigrad import kernels  # noqa: E402
from minigrad.kernels import DeviceArray, elementwise, matmul  # noqa: E402

LEARNING_RATE = 0.1


def gpu_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Best time of `fn` over `repeats` runs, after one warm-up run (which compiles)."""
    fn()
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        if SMOKE:  # the simulator has no event timer
            start_time = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start_time)
            continue
        start, end = cuda.event(), cuda.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


@cuda.jit
def naive_matmul(out, a, b):
    """The baseline without CuPy: one thread per element of out, straight from memory."""
    row, col = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        acc = 0.0
        for j in range(a.shape[1]):
            acc += a[row, j] * b[j, col]
        out[row, col] = acc


def cupy_or_none() -> Any:
    if SMOKE:
        return None
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def bench_matmul(sizes: list[int], repeats: int, rows: list) -> None:
    cupy = cupy_or_none()
    rng = np.random.default_rng(0)
    for n in sizes:
        a_host = rng.standard_normal((n, n), dtype=np.float32)
        b_host = rng.standard_normal((n, n), dtype=np.float32)
        a, b = DeviceArray.from_host(a_host), DeviceArray.from_host(b_host)
        if cupy is not None:
            ca, cb = cupy.asarray(a_host), cupy.asarray(b_host)
            base = gpu_seconds(lambda ca=ca, cb=cb: cupy.matmul(ca, cb), repeats)
            name = "cuBLAS (CuPy)"
        else:
            out = cuda.device_array((n, n), dtype=np.float32)
            da, db = a.to_numba(), b.to_numba()
            naive = naive_matmul[((n + 15) // 16, (n + 15) // 16), (16, 16)]
            base = gpu_seconds(
                lambda naive=naive, out=out, da=da, db=db: naive(out, da, db), repeats
            )
            name = "naive Numba kernel (CuPy not installed: no cuBLAS)"
        flops = 2.0 * n**3
        for method, label in (("blocked", "register-blocked"), ("tiled", "tiled, TILE=16")):
            ours = gpu_seconds(
                lambda a=a, b=b, method=method: matmul.matmul(a, b, method=method), repeats
            )
            target = "≥ 60%" if n == 4096 and cupy is not None and method == "blocked" else ""
            rows.append(
                (
                    f"matmul {n}×{n} fp32, {label}",
                    f"{flops / ours / 1e12:.2f} TFLOP/s ({ours * 1e3:.2f} ms)",
                    f"{name}: {flops / base / 1e12:.2f} TFLOP/s",
                    f"{base / ours:.0%}",
                    target,
                )
            )


def count(elements: int) -> str:
    return f"{elements / 2**20:.0f}M" if elements >= 2**20 else str(elements)


def bench_memory(elements: int, repeats: int, rows: list) -> None:
    rng = np.random.default_rng(1)
    host = rng.standard_normal(elements, dtype=np.float32)
    a, b = DeviceArray.from_host(host), DeviceArray.from_host(host[::-1].copy())
    out = kernels.empty(elements, np.float32)
    copy_src, copy_dst = a.to_numba(), out.to_numba()
    nbytes = host.nbytes
    copy_time = gpu_seconds(lambda: copy_dst.copy_to_device(copy_src), repeats)
    copy_name = "Numba's copy_to_device"
    cupy = cupy_or_none()
    if cupy is not None:  # CuPy's copy kernel is the faster baseline where it is installed
        cupy_src, cupy_dst = cupy.asarray(host), cupy.empty_like(cupy.asarray(host))
        cupy_time = gpu_seconds(lambda: cupy.copyto(cupy_dst, cupy_src), repeats)
        if cupy_time < copy_time:
            copy_time, copy_name = cupy_time, "CuPy's copyto"
    copy_bw = 2 * nbytes / copy_time  # read + write
    rows.append(
        (
            f"device-to-device copy ({copy_name}), {count(elements)} fp32",
            f"{copy_bw / 1e9:.0f} GB/s",
            "(the baseline below)",
            "100%",
            "",
        )
    )
    side = int(np.sqrt(elements))
    square = a.reshape(-1)[: side * side].reshape(side, side)
    cases = [
        ("a + b", lambda: elementwise.binary("add", a, b, out=out), 3 * nbytes, "≥ 80%"),
        ("exp(a)", lambda: elementwise.unary("exp", a, out=out), 2 * nbytes, "≥ 80%"),
        ("sum(a)", lambda: a.sum(), nbytes, "≥ 70%"),
        (f"sum of each row, {side}×{side}", lambda: square.sum(axis=1), 4 * side * side, "≥ 70%"),
        (
            f"sum of each column, {side}×{side}",
            lambda: square.sum(axis=0),
            4 * side * side,
            "≥ 70%",
        ),
    ]
    for label, fn, moved, target in cases:
        seconds = gpu_seconds(fn, repeats)
        bandwidth = moved / seconds
        rows.append(
            (
                f"{label}, {count(elements)} fp32" if "each" not in label else label,
                f"{bandwidth / 1e9:.0f} GB/s ({seconds * 1e3:.3f} ms)",
                f"copy: {copy_bw / 1e9:.0f} GB/s",
                f"{bandwidth / copy_bw:.0%}",
                target,
            )
        )


def mlp_problem(batch: int, inputs: int, hidden: int, classes: int, to: Callable) -> dict:
    rng = np.random.default_rng(2)
    labels = rng.integers(0, classes, size=batch)
    arrays = {
        "x": rng.standard_normal((batch, inputs)),
        "onehot": np.eye(classes)[labels],
        "w1": rng.standard_normal((hidden, inputs)) / np.sqrt(inputs),
        "b1": np.zeros(hidden),
        "w2": rng.standard_normal((classes, hidden)) / np.sqrt(hidden),
        "b2": np.zeros(classes),
    }
    return {name: to(value.astype(np.float32)) for name, value in arrays.items()}


def mlp_step(p: dict) -> float:
    """One step of a relu MLP with softmax cross-entropy: the same code for both devices."""
    batch = p["x"].shape[0]
    z1 = p["x"] @ p["w1"].T + p["b1"]
    hidden = np.maximum(z1, 0)
    logits = hidden @ p["w2"].T + p["b2"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -(log_probs * p["onehot"]).sum() / batch
    grad_log_probs = -p["onehot"] / batch
    grad_logits = grad_log_probs - np.exp(log_probs) * grad_log_probs.sum(axis=1, keepdims=True)
    grads = {"w2": grad_logits.T @ hidden, "b2": grad_logits.sum(axis=0)}
    grad_z1 = (grad_logits @ p["w2"]) * (z1 > 0)
    grads["w1"], grads["b1"] = grad_z1.T @ p["x"], grad_z1.sum(axis=0)
    for name, grad in grads.items():
        p[name] -= LEARNING_RATE * grad
    return float(loss)  # copies one number back: the step is finished when this returns


def bench_mlp(shapes: list[tuple], repeats: int, rows: list) -> None:
    for batch, inputs, hidden, classes in shapes:
        gpu = mlp_problem(batch, inputs, hidden, classes, DeviceArray.from_host)
        cpu = mlp_problem(batch, inputs, hidden, classes, lambda v: v)
        losses = (mlp_step(gpu), mlp_step(cpu))
        assert np.isclose(*losses, rtol=1e-3), losses  # the two devices compute the same
        gpu_time = wall_seconds(lambda gpu=gpu: mlp_step(gpu), repeats)
        cpu_time = wall_seconds(lambda cpu=cpu: mlp_step(cpu), repeats)
        rows.append(
            (
                f"MLP step, batch {batch}, {inputs}→{hidden}→{classes} fp32",
                f"GPU: {gpu_time * 1e3:.2f} ms",
                f"NumPy on the CPU: {cpu_time * 1e3:.2f} ms",
                f"{cpu_time / gpu_time:.1f}x faster"
                if gpu_time < cpu_time
                else f"{gpu_time / cpu_time:.1f}x slower",
                "",
            )
        )


def wall_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall time (the step ends with a copy of the loss, so the GPU is done)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes in the CUDA simulator (no GPU needed)"
    )
    args = parser.parse_args()
    if not SMOKE and not cuda.is_available():
        print(
            "No CUDA GPU found: benchmarks/gpu.py measures the kernels on a real GPU and has "
            "nothing to measure here (the simulator's timings mean nothing). Run it on a "
            'machine with an NVIDIA GPU after `pip install -e ".[gpu]"`, or use --smoke to '
            "check that the script runs."
        )
        return
    if SMOKE:
        sizes, elements, mlps, repeats = [8, 20], 1024, [(8, 6, 10, 3)], 1
    elif args.quick:
        sizes, elements, mlps, repeats = [1024, 4096], 16 * 2**20, [(32, 64, 128, 10)], 5
    else:
        sizes = [1024, 2048, 4096, 8192]
        elements, repeats = 64 * 2**20, 10
        mlps = [(32, 64, 128, 10), (1024, 1024, 2048, 10), (4096, 1024, 4096, 10)]
    rows: list = []
    bench_matmul(sizes, repeats, rows)
    bench_memory(elements, repeats, rows)
    bench_mlp(mlps, 1 if SMOKE else max(repeats, 3), rows)

    today = datetime.date.today().isoformat()
    print(
        f"Measured with `benchmarks/gpu.py{' --quick' if args.quick else ''}"
        f"{' --smoke' if SMOKE else ''}` on {today}: {kernels.device_name()}, "
        f"numba-cuda {numba_cuda.__version__}, NumPy {np.__version__}, Python "
        f"{platform.python_version()}; best of {repeats} runs after a warm-up "
        f"(MLP: median wall time per step).\n"
    )
    print("| benchmark | minigrad.kernels | baseline | minigrad / baseline | target |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if SMOKE:
        print("\n(--smoke ran in the CUDA simulator: the timings above mean nothing.)")


if __name__ == "__main__":
    main()

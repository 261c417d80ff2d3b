"""Checks for lesson 00 (welcome), and its environment report."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from typing import Any

import numpy as np

import minigrad
from minigrad.course import check


def environment() -> None:
    """Print the versions in use, whether Graphviz's `dot` is installed, and where the CUDA
    kernels of lesson 08 will run. Every answer is a set-up that works."""
    dot = shutil.which("dot")
    lines = [
        f"Python    {platform.python_version()}",
        f"NumPy     {np.__version__}",
        f"minigrad  {minigrad.__version__}",
        f"Graphviz  {f'dot found at {dot}' if dot else 'dot not found: graphs are shown as text'}",
        f"CUDA      {cuda_status(os.environ.get('NUMBA_ENABLE_CUDASIM'), _gpu_name)}",
    ]
    # One write: print() per line lets Jupyter store the report as several outputs.
    sys.stdout.write("\n".join(lines) + "\n")


def cuda_status(simulator: str | None, gpu_name: Any) -> str:
    """Where kernels run, given NUMBA_ENABLE_CUDASIM (None when unset) and a function that
    returns the GPU's name, or None without one (asked only when it matters: it imports
    numba, which takes a moment)."""
    if simulator == "1":
        return "Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): kernels run on the CPU"
    gpu = gpu_name()
    if simulator == "0":
        if gpu:
            return f"GPU {gpu} (NUMBA_ENABLE_CUDASIM=0): kernels run on it"
        return (
            "no GPU found, and NUMBA_ENABLE_CUDASIM=0 asks for one: start Jupyter without it "
            "(make lab) to run the kernels in Numba's simulator"
        )
    if gpu:
        return (
            f"GPU {gpu} found; lesson 08 runs the kernels in Numba's simulator unless Jupyter "
            f"starts with NUMBA_ENABLE_CUDASIM=0"
        )
    return "no GPU: kernels will run in Numba's CUDA simulator, which lesson 08 turns on"


def _gpu_name() -> str | None:
    from numba import cuda

    if not cuda.is_available():
        return None
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def check_0_1(slope: Any) -> None:
    """slope = f'(2) for f(x) = x**3 - x, as a Python number (a float; an int is accepted)."""
    exercise = "0.1"
    if isinstance(slope, bool) or not isinstance(slope, (int, float)):
        if hasattr(slope, "item"):
            check.fail(
                exercise,
                f"slope is {check.with_article(slope)}; turn it into a Python float with .item().",
            )
        check.fail(exercise, f"slope should be a float; got {check.with_article(slope)}.")
    mistakes = {
        "that is f(2) itself, the value, not its slope; call backward() and read x.grad.": 6.0,
        "that is the slope of x**3 alone: the derivative of -x adds -1.": 12.0,
        "that is twice the slope: did you call backward() twice without resetting x.grad?": 22.0,
    }
    check.expect_close(exercise, "slope", slope, 11.0, mistakes)
    check.passed(exercise)


def check_0_2(grad_a: Any, grad_b: Any) -> None:
    """df/da and df/db for f(a, b) = a * b + b**2 at a = 2, b = 3."""
    exercise = "0.2"
    expected = (3.0, 8.0)
    got = (check.as_array(exercise, "grad_a", grad_a), check.as_array(exercise, "grad_b", grad_b))
    if all(g.shape == () for g in got) and (float(got[0]), float(got[1])) == (8.0, 3.0):
        check.fail(exercise, "grad_a and grad_b are swapped: df/da = b, df/db = a + 2b.")
    twice = "that is twice the answer: did you call backward() twice without zeroing .grad?"
    check.expect_close(
        exercise,
        "grad_a",
        got[0],
        expected[0],
        {
            "that is a: the derivative of a * b with respect to a is b.": 2.0,
            twice: 2 * expected[0],
        },
    )
    check.expect_close(
        exercise,
        "grad_b",
        got[1],
        expected[1],
        {
            "that is only a, the part from a * b: the b**2 term adds 2b.": 2.0,
            "that is only 2b, the part from b**2: a * b adds a.": 6.0,
            twice: 2 * expected[1],
        },
    )
    check.passed(exercise)

"""The installation itself: what a fresh machine needs for minigrad to import and run."""

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from numba import cuda  # conftest.py has chosen the CUDA simulator already

import minigrad


# The simulator resolves `cuda.grid` through the kernel's module globals, so the kernel
# and its `cuda` import live at module level.
@cuda.jit
def add_one(values):
    i = cuda.grid(1)
    if i < values.size:
        values[i] += 1.0


def test_distribution_is_minigrad_course() -> None:
    assert importlib.metadata.version("minigrad-course") == minigrad.__version__


def test_import_minigrad_does_not_import_numba() -> None:
    probe = "import sys, minigrad; print('numba' in sys.modules, 'graphviz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_kernels_package_installs_as_minigrad_kernels() -> None:
    kernels = minigrad.kernels  # loaded on first use
    assert kernels.__name__ == "minigrad.kernels"
    assert kernels.__doc__


def test_numba_cuda_runs_a_kernel_in_the_simulator() -> None:
    # numba-cuda needs the CUDA runtime library to import, even in the simulator; the
    # nvidia-cuda-runtime wheel provides it on machines without a CUDA toolkit.
    assert cuda.is_available()
    values = np.arange(5, dtype=np.float64)
    add_one[1, 8](values)
    np.testing.assert_array_equal(values, [1.0, 2.0, 3.0, 4.0, 5.0])


def test_make_setup_says_what_it_does_and_echoes_no_error_text() -> None:
    """`make lab` and `make test` start with `make setup`: on an installed machine it says
    one line per step it checks and never echoes a recipe's "error:" text on success."""
    if shutil.which("make") is None:
        return
    root = Path(__file__).resolve().parent.parent
    if not (root / ".venv" / ".installed").exists():
        return  # installed some other way: nothing for make to say
    out = subprocess.run(
        ["make", "--no-print-directory", "setup"], cwd=root, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "error:" not in out.stdout + out.stderr
    assert out.stdout.strip().startswith("[3/3] Graphviz"), out.stdout

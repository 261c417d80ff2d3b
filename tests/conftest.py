"""Shared test set-up: Numba's CUDA simulator, and fixed hypothesis examples on CI."""

import os

import pytest
from hypothesis import settings

# Tests never need a GPU: kernels run in Numba's CUDA simulator unless told otherwise.
# This must happen before anything imports numba.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

# Locally hypothesis draws new examples each run, to keep finding bugs; on CI it draws
# the same ones every time, so a run is repeatable and never red by chance.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="module")
def real_torch():
    """PyTorch itself, for tests that compare with it; they are skipped where it is absent."""
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def grading_sandbox() -> None:
    """For tests that autograde: skipped, saying why, where no submission can be sandboxed
    (no bubblewrap; `make test` installs it when run as root)."""
    pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")
    from minigrad.course.grading.sandbox import SandboxUnavailableError, isolation

    try:
        isolation()
    except SandboxUnavailableError as error:
        pytest.skip(f"no grading sandbox here: {error}")

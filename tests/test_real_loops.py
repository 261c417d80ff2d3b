"""The training loops of benchmarks/real_loops.py, written as PyTorch users write them, run
once eager and once compiled here (no timing: speed is for `make bench`). Each compiled
run must equal the eager one bit for bit (losses, evaluations, final parameters), and each
compiled step must replay or say in explain() why it stays eager (issue 21)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import real_loops  # noqa: E402

from minigrad.compiler import CompileFallbackWarning  # noqa: E402


@pytest.mark.parametrize("loop", real_loops.LOOPS, ids=lambda loop: loop.__name__[5:])
def test_a_real_loop_compiled_equals_eager_and_replays_or_says_why(loop) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        eager = loop(False)
        compiled = loop(True)
    assert real_loops.same_results(eager, compiled), real_loops.first_difference(eager, compiled)
    status = real_loops.replay_status("step", compiled["step"])
    assert status["explained"], status["note"]
    if not status["replays"]:
        assert "eager:" in compiled["step"].explain()

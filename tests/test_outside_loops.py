"""The 64 training loops of benchmarks/outside_loops.py, written by a reviewer who had not
read the compiler, in the idioms of pytorch/examples and PyTorch's tutorials, with the
changes users make between calls. Each runs once eager and once compiled here (speed is
for `make bench`): everything it keeps (losses, parameters, counters, kept gradients) must
be equal bit for bit, and each compiled step must replay or say in explain() why not."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import outside_loops  # noqa: E402
import real_loops  # noqa: E402

from minigrad.compiler import CompileFallbackWarning  # noqa: E402


@pytest.mark.parametrize("loop", outside_loops.LOOPS, ids=lambda loop: loop.__name__[5:])
def test_an_outside_loop_compiled_equals_eager_and_replays_or_says_why(loop) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        eager = loop(False)
        compiled = loop(True)
    assert real_loops.same_results(eager, compiled), real_loops.first_difference(eager, compiled)
    for name, step in real_loops.compiled_steps(compiled):
        status = real_loops.replay_status(name, step)
        assert status["explained"], status["note"]

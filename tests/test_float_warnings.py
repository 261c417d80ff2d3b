"""inf and nan as PyTorch gives them, without NumPy's RuntimeWarnings from the engine's own
lines (a fresh reviewer's finding, issue 35); NumPy in the user's own code still warns."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import numpy as np
import minigrad as torch

values = [
    torch.exp(torch.tensor([1000.0])).item(),
    torch.log(torch.tensor([0.0])).item(),
    (torch.tensor([1.0]) / 0).item(),
    torch.tensor([-1.0]).sqrt().item(),
    (torch.tensor([0.0]) / torch.tensor([0.0])).item(),
]
print(values)
np.log(np.zeros(1))  # the user's NumPy: warns as always
"""


def test_engine_lines_do_not_warn_and_user_numpy_does() -> None:
    result = subprocess.run([sys.executable, "-W", "default", "-c", PROGRAM],
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[inf, -inf, inf, nan, nan]"
    warned = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and warned[0].startswith("<string>:"), result.stderr

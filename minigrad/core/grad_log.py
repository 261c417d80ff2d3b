"""The `x.grad = g` assignments made while the engine runs backward formulas.

afnio's textual Functions set `x.grad = feedback` inside backward and also return it. The
engine opens a log for each backward it runs; Variable's `.grad` setter appends
(variable, previous .grad) to it, so the engine can put the previous value back and add
the returned gradient once, not twice (minigrad/core/engine.py).
"""

from __future__ import annotations

import threading


class _GradAssignmentLog(threading.local):
    # A class attribute, so every new thread starts with no log open.
    entries: list | None = None


grad_log = _GradAssignmentLog()

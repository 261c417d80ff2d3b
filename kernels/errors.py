"""The one error the kernels define for the engine to catch. Pure Python, no numba.

`minigrad.devices` re-exports it, so ``except DeviceMismatchError`` in the engine catches
exactly what the kernels raise, while importing it loads neither numba nor a kernel.
"""

from __future__ import annotations


class DeviceMismatchError(TypeError):
    """The kernels were handed arrays from two devices (`op` names the operation)."""

    def __init__(self, op: str, message: str) -> None:
        super().__init__(message)
        self.op = op

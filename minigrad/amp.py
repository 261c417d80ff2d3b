"""torch.amp's names, so code written for mixed precision runs: custom_fwd, custom_bwd, autocast.

minigrad has no mixed precision: every op runs in the dtype of its inputs. `autocast` is
therefore a context that changes no dtype (it warns once, so nobody expects float16), and
`custom_fwd`/`custom_bwd` return the Function's forward/backward as they are, which is
exactly what PyTorch's versions do whenever autocast is not casting.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

_warned = False


def custom_fwd(fwd: Callable | None = None, *, device_type: str = "cpu", cast_inputs: Any = None):
    """Decorator for a custom Function's forward (with or without arguments): unchanged here."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str = "cpu"):
    """Decorator for a custom Function's backward (with or without arguments): unchanged here."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class autocast:  # noqa: N801 (PyTorch's name)
    """`with minigrad.autocast("cuda"):` runs its block in the inputs' own dtypes (see above)."""

    def __init__(
        self,
        device_type: str = "cuda",
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        global _warned
        if self.enabled and not _warned:
            _warned = True
            warnings.warn(
                "minigrad.autocast: minigrad has no mixed precision, so ops inside run in "
                "their inputs' dtypes (no float16/bfloat16 casts).",
                stacklevel=2,
            )
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return run

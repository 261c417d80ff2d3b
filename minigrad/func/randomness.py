"""What random numbers mean inside vmap: its `randomness` argument.

vmap runs its function once per element of the mapped dimension. A random draw inside
(minigrad.randn, rand_like, dropout, ...) then needs a rule, PyTorch's three:

- "error" (the default): any draw raises, since either answer below may be a surprise;
- "different": each element draws its own numbers (what a loop does by itself);
- "same": every element gets the same numbers: the generator is put back to where it
  stood before the first element, before each element, so after vmap it has moved on by
  one element's draws, as if the function had run once.

All of minigrad's random numbers come from one generator (minigrad/factories.py), looked
up at each draw; "error" puts a stand-in there that refuses every draw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from minigrad import factories

MODES = ("error", "different", "same")

RANDOM_IN_ERROR_MODE = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation "
    "out of vmap"
)


def check_mode(randomness: Any) -> str:
    """randomness, if it is one of PyTorch's three; else its RuntimeError."""
    if not isinstance(randomness, str) or randomness not in MODES:
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    return randomness


class _RefusingGenerator:
    """minigrad's generator while vmap(randomness="error") runs: every draw raises.

    Its state stays readable (utils.checkpoint saves and restores it without drawing)."""

    def __init__(self, generator: Any) -> None:
        object.__setattr__(self, "_generator", generator)

    @property
    def bit_generator(self) -> Any:
        return self._generator.bit_generator

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(RANDOM_IN_ERROR_MODE)


@contextmanager
def randomness_rule(randomness: str) -> Iterator[Callable[[], None]]:
    """`with randomness_rule(mode) as before_each:`, calling before_each() before each
    element's call."""
    if randomness == "error":
        previous = factories._generator
        refusing = _RefusingGenerator(previous)
        factories._generator = refusing
        try:
            yield _nothing
        finally:
            # Unless the function reseeded (manual_seed puts a new generator in place).
            if factories._generator is refusing:
                factories._generator = previous
        return
    if randomness == "same":
        start = factories._generator.bit_generator.state

        def rewind() -> None:
            factories._generator.bit_generator.state = start

        yield rewind
        return
    yield _nothing  # "different": each call draws on from where the last one stopped


def _nothing() -> None:
    """Before each element: nothing to do."""


__all__ = ["MODES", "RANDOM_IN_ERROR_MODE", "check_mode", "randomness_rule"]

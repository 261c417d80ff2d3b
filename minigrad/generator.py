"""Generator: a source of random numbers of its own, as torch.Generator.

    g = minigrad.Generator().manual_seed(2147483647)
    W = minigrad.randn(27, 10, generator=g)     # the same W on every run
    ix = minigrad.randint(0, 100, (32,), generator=g)

A draw with `generator=g` takes the next numbers of g's stream, and only g's:
`minigrad.manual_seed` (which seeds the global generator that draws without `generator=`)
leaves g alone, and draws from g leave the global stream alone. Seeding g again with the
same seed repeats its draws exactly.

The numbers are not PyTorch's. Underneath is NumPy's PCG64 bit generator, seeded through
NumPy's SeedSequence; PyTorch's CPU generator is a Mersenne Twister (mt19937). The same
seed gives the same numbers in minigrad on every run and machine, and other numbers than
PyTorch's. Seeded with s, g draws what the global generator draws after
`minigrad.manual_seed(s)`, as in PyTorch.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable

# PyTorch's seed of a new Generator (and of the default one), kept so that
# Generator().initial_seed() reads the same in both libraries.
DEFAULT_SEED = 67280421310721

# get_state()'s bytes, little-endian: PCG64's 128-bit state and 128-bit increment, whether
# a 32-bit half of a 64-bit draw is buffered (1 byte) and that half (4 bytes), then the
# seed initial_seed() reports (8 bytes).
_LAYOUT = (("state", 16), ("inc", 16), ("has_uint32", 1), ("uinteger", 4), ("seed", 8))
STATE_SIZE = sum(size for _, size in _LAYOUT)


class Generator:
    """Random numbers of its own: Generator(device='cpu'), seeded with manual_seed(seed).

    A new Generator starts from PyTorch's default seed, 67280421310721. Its numbers come
    from NumPy's PCG64 (PyTorch's from mt19937): repeatable, but not PyTorch's numbers.
    `device` says where the Variables drawn with it live; minigrad draws every number on
    the host, and a 'cuda' Generator's numbers are copied to the GPU.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = _device(device)
        state.listener.unsupported(
            "a minigrad.Generator made inside the step is a new object on every call, which "
            "a replay cannot draw from; make it once, outside the step (seeding it inside "
            "with g.manual_seed(...) replays)"
        )
        self._numpy = np.random.default_rng(DEFAULT_SEED)  # what the factories draw from
        self._seed = DEFAULT_SEED

    def manual_seed(self, seed: int) -> Generator:
        """Start the stream again from `seed` (an int, -2**63 .. 2**64 - 1; a negative one
        is taken modulo 2**64, as PyTorch does). Returns the Generator itself."""
        seed = _checked_seed(seed)
        # One call as a whole: inside a step minigrad.compile replays, it seeds again.
        state.listener.opaque(functools.partial(Generator._start_from, self, seed))
        return self

    def seed(self) -> int:
        """Seed with a fresh non-deterministic 64-bit number (from the operating system's
        entropy) and return it."""
        state.listener.unsupported(
            "Generator.seed() draws a new seed from the operating system on each call, and "
            "a replay would reuse the traced one; seed the Generator outside the step, or "
            "use manual_seed(...)"
        )
        chosen = secrets.randbits(64)
        self._start_from(chosen)
        return chosen

    def initial_seed(self) -> int:
        """The seed the stream started from (the last manual_seed or seed())."""
        return self._seed

    def get_state(self) -> Variable:
        """The whole state as a uint8 Variable of STATE_SIZE (45) bytes: PCG64's state and
        increment, a buffered 32-bit half draw, and the initial seed (PyTorch's is the
        mt19937 state, 5056 bytes: the two do not mix). set_state(it) resumes there."""
        state.listener.unsupported(
            "Generator.get_state() reads the Generator's position in its stream, which a "
            "replay would not read again; call it outside the step"
        )
        numbers = self._numpy.bit_generator.state
        values = {
            "state": numbers["state"]["state"],
            "inc": numbers["state"]["inc"],
            "has_uint32": numbers["has_uint32"],
            "uinteger": numbers["uinteger"],
            "seed": self._seed,
        }
        raw = b"".join(values[name].to_bytes(size, "little") for name, size in _LAYOUT)
        return Variable(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Variable) -> Generator:
        """Resume from a state get_state() returned (a uint8 Variable of 45 bytes).
        Returns the Generator itself."""
        values = _unpacked(new_state)
        state.listener.opaque(functools.partial(Generator._resume, self, values))
        return self

    def __repr__(self) -> str:
        return f"<minigrad.Generator device={str(self.device)!r} initial_seed={self._seed}>"

    # ------------------------------------------------------------------- the changes

    def _start_from(self, seed: int) -> None:
        self._numpy = np.random.default_rng(seed)
        self._seed = seed

    def _resume(self, values: dict[str, int]) -> None:
        bits = np.random.PCG64()
        bits.state = {
            "bit_generator": "PCG64",
            "state": {"state": values["state"], "inc": values["inc"]},
            "has_uint32": values["has_uint32"],
            "uinteger": values["uinteger"],
        }
        self._numpy = np.random.Generator(bits)
        self._seed = values["seed"]


def _device(spec: Any) -> devices.device:
    """device= as a minigrad.device: 'cpu' (also for None), 'cuda', or an error."""
    if spec is None:
        return devices.device("cpu")
    if isinstance(spec, bool) or not isinstance(spec, (str, devices.device)):
        raise TypeError(
            f"Generator(): device must be 'cpu', 'cuda' or minigrad.device(...); got "
            f"{type(spec).__name__} {spec!r}."
        )
    try:
        return devices.device(spec)
    except ValueError as error:
        raise RuntimeError(f"Generator(): {error}") from None


def _checked_seed(seed: Any) -> int:
    """A seed as PyTorch takes it: an int in -2**63 .. 2**64 - 1, negatives modulo 2**64."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(
            f"manual_seed expected a long, but got {type(seed).__name__} ({seed!r}); pass an "
            f"int, e.g. manual_seed(42)."
        )
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(
            f"manual_seed: seed {seed} is out of range: a seed is 64 bits, -2**63 .. "
            f"2**64 - 1 (a negative one is taken modulo 2**64). Pass a smaller seed."
        )
    return seed % 2**64


def _unpacked(new_state: Any) -> dict[str, int]:
    """set_state's argument as the numbers of _LAYOUT, or PyTorch's errors."""
    if not isinstance(new_state, Variable) or new_state.is_text:
        raise TypeError(
            f"expected a uint8 Variable (PyTorch's ByteTensor) from Generator.get_state(), "
            f"but got {type(new_state).__name__}."
        )
    if new_state.dtype != np.uint8:
        raise TypeError(
            f"RNG state must be a uint8 Variable (PyTorch's ByteTensor), as "
            f"Generator.get_state() returns; got dtype {new_state.dtype}."
        )
    raw = np.ascontiguousarray(new_state.detach().cpu().numpy()).reshape(-1).tobytes()
    if len(raw) != STATE_SIZE:
        raise RuntimeError(
            f"Expected a minigrad Generator state of size {STATE_SIZE} but found the input "
            f"RNG state size to be {len(raw)}. Pass what Generator.get_state() returned (a "
            f"PyTorch state, 5056 bytes, does not fit minigrad's generator)."
        )
    values = {}
    start = 0
    for name, size in _LAYOUT:
        values[name] = int.from_bytes(raw[start : start + size], "little")
        start += size
    if values["inc"] % 2 == 0 or values["has_uint32"] > 1:
        raise RuntimeError(
            "set_state: these bytes are no Generator state (PCG64's increment is odd and "
            "the buffered-half flag 0 or 1). Pass what Generator.get_state() returned."
        )
    return values


__all__ = ["Generator"]

"""Checks of the arguments that public constructors and methods share: a flag, a
function, an iterable, a state dict. Each raises PyTorch's TypeError for a wrong kind,
naming the owner ("SGD", "DataLoader"), the argument, what it got and what it needs.

(The op table and nn.functional check theirs in minigrad/ops/arguments.py.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np


def _got(value: Any) -> str:
    """What a message says was received: the kind, and a short repr."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def check_flag(value: Any, name: str, owner: str) -> bool:
    """value as a bool: True or False (NumPy's bool too), else a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be True or False; got {_got(value)}.")
    return bool(value)


def check_callable(value: Any, name: str, owner: str, what: str = "a function") -> Callable:
    """value, if it can be called; else a TypeError saying what it should be."""
    if not callable(value):
        raise TypeError(f"{owner}: {name} must be {what}; got {_got(value)}.")
    return value


def check_iterable(value: Any, name: str, owner: str, what: str) -> list:
    """The items of value (a list, tuple, generator, ...) as a list; a TypeError for a
    number, None, a str or another single value."""
    single = isinstance(value, (str, bytes, dict)) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )
    if single or not isinstance(value, Iterable):
        raise TypeError(f"{owner}: {name} must be a list of {what}; got {_got(value)}.")
    return list(value)


def check_state_dict(value: Any, owner: str) -> dict:
    """value, if it is a dict (what state_dict() returned); else a TypeError."""
    if not isinstance(value, dict):
        raise TypeError(
            f"{owner}.load_state_dict expects a dict, as {owner}.state_dict() returns; got "
            f"{_got(value)}."
        )
    return value

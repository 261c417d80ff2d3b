"""Tuples that nodes share: shapes, dtypes and version counts recur from node to node.

Every 0-d op has the same input shapes, most saved values have version 0: nodes hold one
shared copy of each tuple, so a node has fewer objects for the garbage collector to walk.
"""

from __future__ import annotations

SHARED: dict = {}


def shared(value: tuple) -> tuple:
    """The shared copy of `value` (the first one seen), or `value` once the table is full."""
    found = SHARED.get(value)
    if found is None:
        if len(SHARED) >= 4096:
            return value
        found = SHARED[value] = value
    return found

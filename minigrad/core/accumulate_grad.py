"""AccumulateGrad: the graph node of a leaf, where the engine's walk ends."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any


class AccumulateGrad:
    """The graph node of a leaf that requires grad: it adds incoming gradients into `.grad`."""

    __slots__ = ("_variable", "_pre_hooks", "__weakref__")
    _retained = None  # only non-leaf nodes keep retained gradients
    _next_nodes = _next_nrs = next_functions = ()  # where the walk ends: no edges

    def __init__(self, variable: Any) -> None:
        # A weak reference: the leaf holds this node, so a strong one would make a cycle.
        self._variable = weakref.ref(variable)
        self._pre_hooks: dict[int, list[Callable]] | None = None

    @property
    def variable(self) -> Any:
        return self._variable()

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"

"""VersionCounter: how many times a Variable's data was changed in place.

Saved values remember the count when forward ran; backward compares, and refuses a value
changed since. Variables sharing memory (views, detach()) share one counter.
"""

from __future__ import annotations

import weakref
from typing import Any


class VersionCounter:
    """How many times the data was changed in place; shared by Variables sharing data.

    Made only when first needed (an in-place change, a view, a saved output): most
    Variables are never changed, and an object less per Variable is time and memory saved.
    """

    __slots__ = ("value", "views", "_prune_at")

    def __init__(self) -> None:
        self.value = 0
        self.views: list[weakref.ref] | None = None  # Variables that view this data
        self._prune_at = 8

    def add_view(self, view: Any) -> None:
        """Remember a view; dead ones are dropped each time the list doubles (amortised
        O(1) per view, where pruning on every call would make n views cost O(n^2))."""
        if self.views is None:
            self.views = []
        elif len(self.views) >= self._prune_at:
            self.views = [ref for ref in self.views if ref() is not None]
            self._prune_at = max(8, 2 * len(self.views))
        self.views.append(weakref.ref(view))

    def has_live_view_besides(self, variable: Any) -> bool:
        for ref in self.views or ():
            view = ref()
            if view is not None and view is not variable:
                return True
        return False

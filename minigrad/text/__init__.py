"""Textual autodiff: Functions on text Variables whose gradients are feedback texts."""

from minigrad.text.concat import Concat, Slice

__all__ = ["Concat", "Slice"]

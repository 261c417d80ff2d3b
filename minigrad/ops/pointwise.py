"""Elementwise functions beyond the basics: trigonometry, rounding, clamping, where."""

from __future__ import annotations

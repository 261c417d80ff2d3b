"""Picking elements by index along a dimension: gather, index_select, scatter_add, narrow."""

from __future__ import annotations

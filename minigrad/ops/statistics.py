"""Reductions beyond sum, mean and max: min, var, std, prod, cumsum, logsumexp, sort, topk."""

from __future__ import annotations

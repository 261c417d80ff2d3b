"""Products of matrices and vectors under PyTorch's names: mm, bmm, addmm, dot, outer, einsum."""

from __future__ import annotations

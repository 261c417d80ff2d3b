"""Numba-CUDA kernels for minigrad's hot numeric ops, installed as ``minigrad.kernels``.

This folder stays at the top of the repository but installs as the subpackage
``minigrad.kernels`` (a top-level ``kernels`` would shadow an unrelated PyPI package).
It will hold the elementwise, reduction and tiled matmul kernels; they are loaded on
first use, so ``import minigrad`` never imports numba. Nothing is imported here.
"""

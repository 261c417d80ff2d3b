"""Shared test set-up: Numba's CUDA simulator, chosen before anything imports numba."""

import os

# Tests never need a GPU: kernels run in Numba's CUDA simulator unless told otherwise.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

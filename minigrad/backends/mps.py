"""Apple's Metal (MPS) backend: minigrad has none."""


def is_available() -> bool:
    """False: minigrad runs no Metal kernels."""
    return False


def is_built() -> bool:
    """False: minigrad was not built with MPS."""
    return False

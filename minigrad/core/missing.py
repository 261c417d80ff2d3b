"""The error for a PyTorch name minigrad does not have yet, with the nearest spelling it has."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def missing_name(owner: str, name: str, known: Iterable[str]) -> AttributeError:
    """AttributeError: "minigrad does not have `Tensor.name` yet", plus the nearest names."""
    public = sorted({k for k in known if not k.startswith("_")})
    nearest = difflib.get_close_matches(name, public, n=3, cutoff=0.6)
    message = f"minigrad does not have `{owner}.{name}` yet."
    if nearest:
        spelled = ", ".join(f"`{owner}.{n}`" for n in nearest)
        message += f" The nearest existing spelling: {spelled}."
    message += " The names minigrad has are listed in the README (PyTorch coverage)."
    return AttributeError(message)

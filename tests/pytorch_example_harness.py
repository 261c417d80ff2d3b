"""What the tests that run PyTorch's own code share (test_pytorch_examples.py,
test_pytorch_tutorials.py, test_pytorch_docs_examples.py): the imports that change, the
inputs made equal in both libraries, the registry of examples, and the comparison.

Each example is a function `fn(torch)` that runs PyTorch's code with the library it is
given (minigrad, or real PyTorch when installed: the `real_torch` fixture of conftest.py)
and returns its results as a dict.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


def from_library(lib: Any, module: str, name: str) -> Any:
    """`from torch.<module> import <name>`, for the library `lib` (minigrad or torch)."""
    return getattr(importlib.import_module(f"{lib.__name__}.{module}"), name)


def same(torch: Any, like: Any, values: Any) -> Any:
    """A tensor holding `values`, with the dtype and requires_grad of `like`."""
    return torch.tensor(np.asarray(values), dtype=like.dtype, requires_grad=like.requires_grad)


def as_numpy(t: Any) -> np.ndarray:
    """A tensor's values as a NumPy array (a copy)."""
    return np.array(t.detach().numpy())


def compare(got: dict, expected: dict, rtol: float, atol: float) -> None:
    """minigrad's results against PyTorch's: flags and words exactly, numbers to rtol/atol."""
    assert sorted(got) == sorted(expected), "the example returned different keys"
    for key, want in expected.items():
        have = got[key]
        words = isinstance(want, list) and all(isinstance(item, str) for item in want)
        if isinstance(want, (bool, str)) or words:
            assert have == want, f"{key}: minigrad {have!r}, PyTorch {want!r}"
        else:
            np.testing.assert_allclose(
                np.asarray(have, dtype=np.float64),
                np.asarray(want, dtype=np.float64),
                rtol=rtol,
                atol=atol,
                err_msg=key,
            )


class Examples(dict):
    """name -> (fn, rtol, atol, check, xfail): `check(results)` is what the minigrad-only
    test asserts; `xfail` names the minigrad gap an example waits for."""

    def example(
        self,
        name: str,
        rtol: float = 1e-6,
        atol: float = 1e-8,
        check: Any = None,
        xfail: Any = None,
    ) -> Callable:
        """Register the decorated `fn(torch) -> dict of results` under `name`."""

        def register(fn: Callable) -> Callable:
            self[name] = (fn, rtol, atol, check, xfail)
            return fn

        return register

    def params(self) -> list:
        """The names as pytest parameters, the ones minigrad cannot run yet marked xfail."""
        params = []
        for name, (_, _, _, _, reason) in self.items():
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(name, marks=marks))
        return params

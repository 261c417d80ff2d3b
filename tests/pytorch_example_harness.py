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

    def tests(self, minigrad: Any) -> tuple:
        """The three tests a file of examples runs, to be bound to module-level test_ names:
        every example checks something; each runs with minigrad (its check passes); each
        gives PyTorch's results (skipped without PyTorch; `real_torch` is conftest's)."""

        def test_every_example_checks_something() -> None:
            assert all(check is not None for _, _, _, check, _ in self.values())

        @pytest.mark.parametrize("name", self.params())
        def test_example_runs_with_minigrad(name: str) -> None:
            fn, _, _, check, _ = self[name]
            check(fn(minigrad))

        @pytest.mark.parametrize("name", self.params())
        def test_example_matches_pytorch(name: str, real_torch: Any) -> None:
            fn, rtol, atol, _, _ = self[name]
            expected = fn(real_torch)
            compare(fn(minigrad), expected, rtol, atol)

        return (
            test_every_example_checks_something,
            test_example_runs_with_minigrad,
            test_example_matches_pytorch,
        )

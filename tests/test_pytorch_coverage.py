"""Which of the most used PyTorch names minigrad has (the list: docs/pytorch_names.txt).

The course website's PyTorch page (site/pytorch.md) states the counts; this test keeps them
honest, and checks that every name minigrad lacks fails with minigrad's own message rather
than Python's bare one.
"""

from __future__ import annotations

import pathlib
import re

import pytest

import minigrad
from minigrad import Variable

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = [
    line.strip()
    for line in (ROOT / "docs" / "pytorch_names.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]
SAMPLE = Variable([1.0, 2.0], requires_grad=True)


def _has(qualified: str) -> bool:
    owner, name = qualified.split(".", 1)
    try:
        getattr(SAMPLE if owner == "Tensor" else minigrad, name)
    except AttributeError:
        return False
    return True


def coverage() -> dict[str, tuple[int, int, list[str]]]:
    """For "Tensor" and "torch": (names minigrad has, names listed, the missing ones)."""
    table = {}
    for owner in ("Tensor", "torch"):
        listed = [n for n in NAMES if n.startswith(owner + ".")]
        missing = [n for n in listed if not _has(n)]
        table[owner] = (len(listed) - len(missing), len(listed), missing)
    return table


def test_the_list_is_well_formed() -> None:
    assert len(NAMES) == len(set(NAMES)), "a name is listed twice"
    assert all(re.fullmatch(r"(Tensor|torch)\.\w+", n) for n in NAMES)
    assert len(NAMES) >= 150


def test_the_pytorch_page_states_the_counts_this_test_measures() -> None:
    table = coverage()
    line = (
        f"PyTorch coverage: {table['Tensor'][0]} of {table['Tensor'][1]} `Tensor` names and "
        f"{table['torch'][0]} of {table['torch'][1]} `torch.*` names"
    )
    page = (ROOT / "site" / "pytorch.md").read_text()
    missing = sorted(table["Tensor"][2] + table["torch"][2])
    assert line in page, f"update site/pytorch.md to say: {line}. Missing: {missing}"


def test_coverage_is_high() -> None:
    table = coverage()
    for owner, (have, listed, missing) in table.items():
        assert have / listed >= 0.9, f"{owner}: only {have} of {listed}; missing {missing}"


@pytest.mark.parametrize("qualified", [n for n in NAMES if not _has(n)] or ["Tensor.sum"])
def test_a_missing_name_says_minigrad_does_not_have_it_yet(qualified: str) -> None:
    if _has(qualified):
        pytest.skip("minigrad has every listed name")
    owner, name = qualified.split(".", 1)
    with pytest.raises(AttributeError, match=rf"minigrad does not have `{owner}\.{name}` yet"):
        getattr(SAMPLE if owner == "Tensor" else minigrad, name)

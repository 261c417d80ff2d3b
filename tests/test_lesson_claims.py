"""Claims true (issue 36): every ratio a lesson's prose quotes ("1.3 to 1.5 times as
long", "0.5x") comes from a cell of the same lesson that computes it, or names its source.

A quoted ratio is a number or a range followed by "times", "x" or "×" in a markdown cell
(formulas in $...$ and code in backticks are not prose). It holds when a code cell of the
lesson prints a ratio (a number followed by "x" or "times", or after "ratio") inside the
quoted range, a quarter wider on each side for a single figure, or when its sentence cites
where it comes from (a link, "et al.", a year in parentheses)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))

WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "twice": 2, "half": 0.5}
NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(WORDS) + r")"
# "times" is a ratio when a comparison follows ("1.5 times as long", "eight times the
# weights"); "runs 500 times" and "calls it three times" are counts.
COMPARED = (r"(?:\s*(?:x|×)(?![\w×]|\s*\d)|\s+times\s+(?:as|the|more|less|faster|slower|"
            r"longer|larger|smaller|its|that|what)\b)")
RANGE = re.compile(NUMBER + r"\s*(?:x|×)?\s*(?:to|–|-)\s*" + NUMBER + COMPARED, re.I)
SINGLE = re.compile(r"(?<![\d.])" + NUMBER + COMPARED, re.I)
PRINTED = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x|×|times)(?![\w])|ratio\D{0,20}?(\d+(?:\.\d+)?)")
SOURCED = re.compile(r"\]\(http|et al\.|\((?:[^()]*\b)?(?:19|20)\d\d\)")


def _number(text: str) -> float:
    return WORDS[text.lower()] if text.lower() in WORDS else float(text)


def _prose(source: str) -> str:
    """Markdown without formulas and code, where numbers are not claims."""
    source = re.sub(r"\$\$.*?\$\$", " ", source, flags=re.S)
    source = re.sub(r"\$[^$]*\$", " ", source)
    return re.sub(r"`[^`]*`", " ", source)


def quoted_ratios(notebook: nbformat.NotebookNode) -> list[tuple[str, float, float]]:
    """(sentence, low, high) for each ratio the prose quotes without a source."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", _prose(cell.source)):
            if SOURCED.search(sentence):
                continue
            spans = []
            for match in RANGE.finditer(sentence):
                low, high = sorted((_number(match[1]), _number(match[2])))
                found.append((sentence.strip(), low, high))
                spans.append(match.span())
            for match in SINGLE.finditer(sentence):
                if any(start <= match.start() < end for start, end in spans):
                    continue
                value = _number(match[1])
                found.append((sentence.strip(), value * 0.75, value * 1.25))
    return found


def printed_ratios(notebook: nbformat.NotebookNode) -> list[float]:
    values = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            text = output.get("text", "") or "".join(
                output.get("data", {}).get("text/plain", ""))
            for match in PRINTED.finditer(text):
                values.append(float(match[1] or match[2]))
    return values


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_quoted_ratio_is_computed_by_a_cell_or_sourced(lesson: Path) -> None:
    notebook = nbformat.read(lesson, as_version=4)
    printed = printed_ratios(notebook)
    unsupported = [
        f"{sentence[:120]!r} (quotes {low:g} to {high:g})"
        for sentence, low, high in quoted_ratios(notebook)
        if not any(low <= value <= high for value in printed)
    ]
    assert not unsupported, (
        f"{lesson.name}: ratios quoted in the prose that no cell of the lesson prints (and "
        f"no source is named for): {unsupported}. Print the ratio in a cell (timings in a "
        f"NBVAL_IGNORE_OUTPUT cell), quote the range it falls in, or cite the source."
    )


def test_the_patterns_find_ranges_singles_and_skip_formulas() -> None:
    markdown = nbformat.v4.new_markdown_cell(
        "A step is about 1.3 to 1.5 times as long. Eight times as much as the weights. "
        "A $3 \\times 3$ kernel, a 1024 × 1024 layer and `x * 2` are no claims. "
        "Chen et al. found a sqrt(n) schedule costs one extra forward, 2 times."
    )
    notebook = nbformat.v4.new_notebook(cells=[markdown])
    quoted = [(low, high) for _, low, high in quoted_ratios(notebook)]
    assert quoted == [(1.3, 1.5), (6.0, 10.0)]

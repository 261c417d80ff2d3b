"""The lessons are stored executed, in order, with their outputs: check what is stored.

nbval (`make test`) re-runs every lesson and compares its outputs with the stored ones;
these tests check the stored files themselves, without running a kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("[0-9]*.ipynb"))
ADDRESS = re.compile(r"at 0x[0-9a-fA-F]+")


def _texts(output: dict) -> list[str]:
    """Every text an output carries: stream text, rich data (all MIME types), tracebacks."""
    texts = []
    if "text" in output:
        texts.append(output["text"])
    for value in output.get("data", {}).values():
        texts.append(value if isinstance(value, str) else str(value))
    texts.extend(output.get("traceback", []))
    return texts


@pytest.fixture(params=LESSONS, ids=lambda path: path.name)
def lesson(request: pytest.FixtureRequest) -> tuple[str, nbformat.NotebookNode]:
    path = request.param
    return path.name, nbformat.read(path, as_version=nbformat.NO_CONVERT)


def test_there_are_lessons() -> None:
    assert LESSONS, f"no lessons (NN_name.ipynb) found in {LESSONS_DIR}"


def test_file_name(lesson) -> None:
    name, _ = lesson
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", name), (
        f"{name}: lesson files are named NN_name.ipynb (two digits, lowercase snake_case)"
    )


def test_valid_nbformat(lesson) -> None:
    name, nb = lesson
    assert nb.nbformat == 4, f"{name}: nbformat {nb.nbformat}, expected 4"
    nbformat.validate(nb)  # raises ValidationError naming what is wrong


def test_kernelspec_is_python3(lesson) -> None:
    name, nb = lesson
    kernelspec = nb.metadata.get("kernelspec", {})
    assert kernelspec.get("name") == "python3", (
        f"{name}: kernelspec name is {kernelspec.get('name')!r}, expected 'python3' "
        f"(a kernel every installation has); set metadata.kernelspec.name"
    )


def test_title_cell(lesson) -> None:
    name, nb = lesson
    assert nb.cells, f"{name}: the notebook has no cells"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.lstrip().startswith("# "), (
        f"{name}: the first cell must be a markdown title ('# Lesson NN · ...'); got a "
        f"{first.cell_type} cell starting {first.source[:40]!r}"
    )


def test_executed_in_order(lesson) -> None:
    name, nb = lesson
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    counts = [cell.execution_count for cell in code_cells]
    expected = list(range(1, len(code_cells) + 1))
    assert counts == expected, (
        f"{name}: code cells have execution counts {counts}, expected {expected}. Execute "
        f"the notebook top to bottom in a fresh kernel and store it with outputs: "
        f"jupyter nbconvert --to notebook --execute --inplace lessons/{name} "
        f"(empty code cells are never executed: remove them)"
    )
    for cell in code_cells:
        for output in cell.outputs:
            if output.output_type == "execute_result":
                assert output.execution_count == cell.execution_count, (
                    f"{name}: cell {cell.execution_count} has a result stored with "
                    f"execution count {output.execution_count}"
                )


def test_no_errors_stored(lesson) -> None:
    name, nb = lesson
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            assert output.output_type != "error", (
                f"{name}: cell {index} stores an error: {output.get('ename')}: "
                f"{output.get('evalue')}"
            )


def test_no_memory_addresses(lesson) -> None:
    name, nb = lesson
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            for text in _texts(output):
                match = ADDRESS.search(text)
                assert match is None, (
                    f"{name}: cell {index} output shows a memory address ({match.group()}), "
                    f"which changes every run; print something stable instead (a repr "
                    f"without id(), or the value's data)"
                )


def test_lesson_shape(lesson) -> None:
    """Objectives, at least one figure, a worked example, 2+ exercises with checks, a recap."""
    name, nb = lesson
    markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert any("Objectives" in h for h in headings), f"{name}: no '## Objectives' section"
    assert any("Recap" in h for h in headings), f"{name}: no '## Recap' section"
    assert re.search(r"worked example", markdown, re.IGNORECASE), f"{name}: no worked example"
    figures = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if {"image/svg+xml", "image/png"} & set(output.get("data", {}))
    ]
    assert figures, f"{name}: no figure (a drawing or a plot) among the stored outputs"
    exercises = [c for c in nb.cells if c.cell_type == "code" and "### BEGIN SOLUTION" in c.source]
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("# Check ")]
    assert len(exercises) >= 2, f"{name}: {len(exercises)} exercises, expected at least 2"
    assert len(checks) == len(exercises), f"{name}: every exercise needs its check cell"

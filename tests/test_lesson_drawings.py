"""Every drawing stored in a lesson carries a PNG, so it shows wherever the notebook opens.

JupyterLab does not show the SVG of a notebook opened untrusted (one it did not run
itself), and neither do some viewers; a PNG beside it shows everywhere: JupyterLab
untrusted, GitHub, VS Code, nbconvert's HTML. minigrad.viz's drawings offer both, so this
holds once the lessons are executed again with the current minigrad.
"""

from __future__ import annotations

import base64
from pathlib import Path

import nbformat
import pytest

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("[0-9]*.ipynb"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# A lesson's drawing stays small in the stored notebook (a 256-colour palette at 144 dpi).
MAX_PNG_BYTES = 300_000


def drawings(path: Path) -> list[tuple[int, dict]]:
    """(cell number, output) for every stored output that is a minigrad drawing."""
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    found = []
    for number, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain", "")
            if "".join(text).startswith("<Drawing"):
                found.append((number, output))
    return found


def test_the_lessons_draw_graphs() -> None:
    """The check below has something to check."""
    assert sum(len(drawings(path)) for path in LESSONS) >= 10


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.name)
def test_every_drawing_has_a_png_beside_its_svg(path: Path) -> None:
    """image/png (base64 PNG data) next to image/svg+xml, with its display width."""
    missing = []
    for number, output in drawings(path):
        data = output["data"]
        png = base64.b64decode("".join(data.get("image/png", "")))
        if not png.startswith(PNG_MAGIC):
            missing.append(f"cell {number}: {''.join(data['text/plain'])}")
            continue
        assert "image/svg+xml" in data, f"cell {number}: no SVG"
        assert output.get("metadata", {}).get("image/png", {}).get("width", 0) > 0
        assert len(png) <= MAX_PNG_BYTES, f"cell {number}: PNG of {len(png)} bytes"
    assert not missing, (
        f"{path.name}: drawings stored without a PNG (execute the lesson again): {missing}"
    )

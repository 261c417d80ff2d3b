"""The figures script: it draws the README's figures, the same every run, readable at
a README's width."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest

import minigrad

ROOT = Path(__file__).resolve().parent.parent


def _figures_module():
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "figures/make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figures_script_writes_svg_and_png(tmp_path: Path) -> None:
    written = _figures_module().main(tmp_path)
    names = sorted(path.name for path in written)
    assert names == [
        "backward_steps.png",
        "backward_steps.svg",
        "neuron.png",
        "neuron.svg",
    ]
    for path in written:
        content = path.read_bytes()
        if path.suffix == ".png":
            assert content.startswith(b"\x89PNG\r\n\x1a\n")
        else:
            assert b"<svg" in content and b"</svg>" in content


def test_figures_are_the_same_every_run(tmp_path: Path) -> None:
    module = _figures_module()
    first = {p.name: p.read_bytes() for p in module.main(tmp_path / "a")}
    second = {p.name: p.read_bytes() for p in module.main(tmp_path / "b")}
    assert first == second


def test_neuron_figure_shows_data_and_gradients() -> None:
    x, w, b, z, y = _figures_module().neuron()
    minigrad.viz.backward_steps(y)
    source = minigrad.viz.draw(y).source
    for name in ("x", "w", "b", "z", "y"):
        assert f"<b>{name}</b>" in source
    # dy/db = 1 - tanh(z)^2, shown with 4 significant digits on b and on z.
    expected = format(1 - float(y.item()) ** 2, ".4g")
    assert source.count(f"grad {expected}") == 2
    assert w.grad is not None and b.grad.item() == pytest.approx(1 - y.item() ** 2)


README_WIDTH = 800  # CSS pixels: GitHub shows a README about this wide


def test_figures_read_at_readme_width(tmp_path: Path) -> None:
    """Shown 800 pixels wide at most, the smallest labels (9 pt) stay 8 pixels or more."""
    _figures_module().main(tmp_path)
    for name in ("neuron", "backward_steps"):
        png = (tmp_path / f"{name}.png").read_bytes()
        width_px = int.from_bytes(png[16:20], "big")
        shown_px = width_px * 96 / minigrad.viz.PNG_DPI  # its size on a page
        assert shown_px <= minigrad.viz.MAX_WIDTH_INCHES * 96 + 2
        svg = (tmp_path / f"{name}.svg").read_text(encoding="utf-8")
        # dot's own shrinking (to fit the width limit), then the page's.
        shrunk = float(re.search(r'transform="scale\(([\d.]+) ', svg).group(1))
        smallest = 9 * 96 / 72 * shrunk * min(1.0, README_WIDTH / shown_px)
        assert smallest >= 8, (name, smallest)


def test_backward_steps_figure_is_two_rows_of_three() -> None:
    """Six frames, read like a page: steps 1-3, then 4-6."""
    strip = _figures_module().drawings()["backward_steps"]
    rendered = subprocess.run(
        ["dot", "-Tjson"], input=strip.source, capture_output=True, text=True, check=True
    )
    corners = {}  # frame number -> (top, left), y growing downwards
    for obj in json.loads(rendered.stdout)["objects"]:
        if obj.get("name", "").startswith("cluster_"):
            left, _, _, top = map(float, obj["bb"].split(","))
            corners[int(obj["name"].removeprefix("cluster_"))] = (round(-top), round(left))
    tops = sorted({top for top, _ in corners.values()})
    assert len(tops) == 2
    rows = [sorted((c[1], f) for f, c in corners.items() if c[0] == top) for top in tops]
    assert [[f for _, f in row] for row in rows] == [[0, 1, 2], [3, 4, 5]]

"""The figures script: it draws the README's figures, the same every run."""

from __future__ import annotations

import importlib.util
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

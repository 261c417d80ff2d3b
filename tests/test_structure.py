"""Structure rules of issue 13: what the core imports, and what drawings may read."""

from __future__ import annotations

import ast
from pathlib import Path

import minigrad
from minigrad.variable import Variable, VersionCounter

PACKAGE = Path(minigrad.__file__).parent
FORBIDDEN = ("minigrad.text", "minigrad.viz", "minigrad.nn", "minigrad.course", "minigrad.kernels")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_core_imports_no_plug_in():
    files = [PACKAGE / "variable.py", *sorted((PACKAGE / "autodiff").glob("*.py"))]
    for path in files:
        for name in imported_modules(path):
            assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_variable_imports_neither_ops_nor_the_engine():
    names = imported_modules(PACKAGE / "variable.py")
    assert not any(name.startswith("minigrad.ops") for name in names)
    autodiff = {name for name in names if name.startswith("minigrad.autodiff.")}
    assert autodiff <= {"minigrad.autodiff.grad_mode", "minigrad.autodiff.mistakes"}


def test_autodiff_does_not_import_ops():
    for path in (PACKAGE / "autodiff").glob("*.py"):
        names = imported_modules(path)
        assert not any(name.startswith("minigrad.ops") for name in names), path.name


def test_viz_reads_the_graph_through_public_names_only():
    tree = ast.parse((PACKAGE / "viz.py").read_text())
    private = {"_step_observers", "_SavedOutput", "_input_refs", "_output_refs", "_saved"}
    private |= {"_output_metadata", "_output_nr", "_saved_versions", "_function"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("minigrad"):
            assert not any(alias.name.startswith("_") for alias in node.names), node.module
        if isinstance(node, ast.Attribute):
            assert node.attr not in private, node.attr
        if isinstance(node, ast.Name):
            assert node.id not in private, node.id


def test_version_counter_prunes_dead_views_amortised():
    counter = VersionCounter()
    alive = [Variable([1.0]) for _ in range(20)]
    for index in range(2000):
        counter.add_view(Variable([float(index)]))  # dies at once
    for view in alive:
        counter.add_view(view)
    assert len(counter.views) < 100
    assert counter.has_live_view_besides(alive[0])


def test_the_core_a_learner_follows_through_backward_reads_in_one_sitting():
    core = [
        PACKAGE / "variable.py",
        PACKAGE / "autodiff" / "function.py",
        PACKAGE / "autodiff" / "engine.py",
        PACKAGE / "autodiff" / "grad_mode.py",
    ]
    lines = sum(len(path.read_text().splitlines()) for path in core)
    assert lines <= 900, f"the core has {lines} lines; keep it at 900 or fewer"

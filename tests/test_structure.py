"""Structure rules of issue 13: what the core imports, and what drawings may read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minigrad
from minigrad.core.variable import Variable, VersionCounter

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
    files = [*sorted((PACKAGE / "core").glob("*.py")), *sorted((PACKAGE / "autodiff").glob("*.py"))]
    for path in files:
        for name in imported_modules(path):
            assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_variable_imports_neither_ops_nor_the_engine():
    names = imported_modules(PACKAGE / "core" / "variable.py")
    assert not any(name.startswith("minigrad.ops") for name in names)
    # Importing anything from minigrad.autodiff would run the package's __init__, which
    # imports function.py, which imports variable.py: a loop.
    assert not any(name.startswith("minigrad.autodiff") for name in names)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(path: Path, modules: set[str]) -> set[str]:
    """The minigrad modules a file imports when it is loaded (not inside functions)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names & modules


def _import_graph() -> dict[str, set[str]]:
    """module -> the modules loading it runs first. Importing a.b.c runs the packages a and
    a.b too, unless the importer is inside them (then they are already loading)."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        edges = set()
        for target in _module_level_imports(path, set(paths)):
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                loaded = ".".join(parts[:end])
                inside = (name + ".").startswith(loaded + ".")
                if loaded in paths and not inside:
                    edges.add(loaded)
        graph[name] = edges
    return graph


def test_no_module_imports_itself_back_through_a_loop():
    graph = _import_graph()
    loops = []
    for start in graph:
        # Depth-first from each module: reaching it again is a loop.
        seen, stack = set(), [(start, [start])]
        while stack:
            module, path = stack.pop()
            for target in graph[module]:
                if target == start:
                    loops.append(" -> ".join([*path, start]))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    assert not loops, "import loops:\n" + "\n".join(sorted(loops)[:10])


def test_autodiff_does_not_import_ops():
    # functional.py is a tool on the core (it stacks rows with the ops), and __init__.py
    # imports it last; the core and its other tools never need the ops.
    for path in (PACKAGE / "autodiff").glob("*.py"):
        if path.name in ("functional.py", "__init__.py"):
            continue
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
        PACKAGE / "core" / "variable.py",
        PACKAGE / "core" / "function.py",
        PACKAGE / "core" / "engine.py",
        PACKAGE / "core" / "grad_mode.py",
    ]
    lines = sum(len(path.read_text().splitlines()) for path in core)
    assert lines <= 900, f"the core has {lines} lines; keep it at 900 or fewer"


def test_autograd_and_autodiff_are_one_package_with_every_submodule_under_both_names():
    """DESIGN, third wave: minigrad.autograd (PyTorch's name) is minigrad.autodiff."""
    import importlib

    import minigrad

    assert minigrad.autograd is minigrad.autodiff
    submodules = sorted(path.stem for path in (PACKAGE / "autodiff").glob("*.py"))
    assert "functional" in submodules and "forward_ad" in submodules
    for name in submodules:
        if name == "__init__":
            continue
        pytorch_name = importlib.import_module(f"minigrad.autograd.{name}")
        assert pytorch_name is importlib.import_module(f"minigrad.autodiff.{name}"), name
    from minigrad.autograd.function import once_differentiable as pytorchs
    from minigrad.core.function import once_differentiable as ours

    assert ours is pytorchs is minigrad.autograd.once_differentiable
    # Importing a submodule never hides a function of the same name (gradcheck.py).
    assert callable(minigrad.autograd.gradcheck) and callable(minigrad.autodiff.gradcheck)
    assert minigrad.autograd.functional.jacobian is minigrad.autodiff.functional.jacobian
    with pytest.raises(ModuleNotFoundError, match="minigrad.autograd.no_such_module"):
        importlib.import_module("minigrad.autograd.no_such_module")

"""Structure rules (issues 13 and 23): what the core imports, where Variable's methods
live, what a learner reads from `y.backward()`, and what drawings may read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minigrad
from minigrad.core.variable import Variable, VersionCounter

PACKAGE = Path(minigrad.__file__).parent
CORE = PACKAGE / "core"
# What sits above the core: the core never imports it (at any depth).
FORBIDDEN = (
    "minigrad.text",
    "minigrad.viz",
    "minigrad.nn",
    "minigrad.course",
    "minigrad.kernels",
    "minigrad.ops",
    "minigrad.compiler",
    "minigrad.autodiff",
    "minigrad.autograd",
    "minigrad.optim",
    "minigrad.utils",
)


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


def test_the_core_imports_no_plug_in_and_no_tool():
    for path in sorted(CORE.glob("*.py")):
        for name in imported_modules(path):
            assert not name.startswith(FORBIDDEN), f"core/{path.name} imports {name}"


def test_the_core_has_no_late_imports():
    """DESIGN, third wave: no import-time cycle that needs an import inside a function."""
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    assert not isinstance(inner, (ast.Import, ast.ImportFrom)), (
                        f"core/{path.name}: {node.name} imports at call time"
                    )
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module"):
                raise AssertionError(f"core/{path.name} imports with importlib")


def test_variable_reaches_the_engine_through_a_module_reference():
    """Variable.backward calls core.engine at call time, as PyTorch's Tensor.backward calls
    torch.autograd: variable.py does not import the engine or the ops when it loads."""
    names = _module_level_imports(CORE / "variable.py", {"minigrad.core.engine"})
    assert not names
    everything = imported_modules(CORE / "variable.py")
    assert not any(name.startswith("minigrad.ops") for name in everything)
    assert "core.engine.run_backward(" in (CORE / "variable.py").read_text()


def _attached_to_variable(path: Path) -> list[str]:
    """`Variable.x = ...` and `setattr(Variable, ...)` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in ("Variable", "Tensor", "Parameter")
                ):
                    found.append(f"{path.name}:{node.lineno} Variable.{target.attr} =")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "setattr" and node.args:
                first = ast.unparse(node.args[0])
                if first in ("Variable", "Tensor", "Parameter", "cls"):
                    found.append(f"{path.name}:{node.lineno} setattr({first}, ...)")
    return found


def test_only_the_op_table_attaches_methods_to_variable():
    """Every non-op method of Variable is written in its class body (core/variable.py)."""
    attached = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = _attached_to_variable(path)
        if found:
            attached[str(path.relative_to(PACKAGE))] = found
    assert set(attached) == {"ops/table.py"}, attached
    for name in ("backward", "register_hook", "retain_grad", "item", "numpy", "tolist",
                 "__repr__", "__format__", "__bool__", "__array__", "device", "is_cuda"):
        assert name in Variable.__dict__, f"Variable.{name} is not in the class body"


def test_per_thread_state_is_one_object():
    """Grad mode, anomaly detection, the listener, the grad-assignment log and the
    saved-tensor hooks: one threading.local, in core/grad_mode.py (the modes that set it
    live beside it); nothing else keeps any."""
    subclasses = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base) for base in node.bases]
                if "threading.local" in bases or "local" in bases:
                    subclasses.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert subclasses == ["core/grad_mode.py:ThreadState"]
    from minigrad.core.grad_mode import ThreadState

    switches = {"grad_enabled", "anomaly_enabled", "listener", "grad_assignments"}
    assert switches | {"saved_tensors_hooks"} <= set(vars(ThreadState))


def test_the_core_never_asks_who_is_listening():
    """The compiler and forward_ad plug in through one Listener; the core calls its hooks
    unconditionally (no `recorder is not None` checks scattered through it)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        relative = str(path.relative_to(PACKAGE))
        assert "recorder is not None" not in text and "tracer." not in text, relative
        if relative.startswith(("core/", "ops/", "nn/", "optim/")):
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Compare) and "listener" in ast.unparse(node.left):
                    raise AssertionError(f"{relative}:{node.lineno} {ast.unparse(node)}")


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


# What a learner does not follow from the core: the ops a learner writes themselves, the
# tools above the core, and the fast paths (read later; lesson 11 points to them).
NOT_FOLLOWED = (
    "minigrad.ops",
    "minigrad.compiler",
    "minigrad.text",
    "minigrad.autodiff",
    "minigrad.core.fast_path",
)
ENTRIES = [
    ("minigrad.core.variable", "Variable.backward"),
    ("minigrad.core.function", "Function.apply"),
]


def test_the_path_a_learner_follows_from_backward_and_apply_reads_in_one_sitting():
    """From `y.backward()` and `Function.apply`, closing over every name called (functions,
    methods, class bodies, each file's docstring): with the fast paths counted, at most
    1,300 lines in at most 7 files when the program is right; without them, with every
    check and error message it can raise, under 1,500."""
    from learner_path import Closure

    with_fast_paths = tuple(name for name in NOT_FOLLOWED if name != "minigrad.core.fast_path")
    right = Closure(ENTRIES, stop=with_fast_paths, errors=False).lines()
    everything = Closure(ENTRIES, stop=NOT_FOLLOWED, errors=True).lines()
    assert sum(right.values()) <= 1300, sorted(right.items(), key=lambda item: -item[1])
    assert len(right) <= 7, sorted(right)
    assert sum(everything.values()) <= 1500, sorted(everything.items(), key=lambda i: -i[1])
    # It stays in the core (plus devices.is_on_cuda and two argument checks).
    assert {name.rsplit(".", 1)[0] for name in everything} <= {
        "minigrad.core", "minigrad"
    }


def test_the_core_is_a_handful_of_files():
    """One file per concept a learner opens; a helper too small to read alone joined the
    file whose reading it interrupted (issue 32: at most 12 files)."""
    files = sorted(path.name for path in (PACKAGE / "core").glob("*.py"))
    assert len(files) <= 12, files


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

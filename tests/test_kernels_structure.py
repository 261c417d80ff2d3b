"""Structure rules of issue 23 for kernels/: kernels on raw buffers below, DeviceArray above.

kernels/ installs as `minigrad.kernels` and reads as one package: no import circle among
its files (imports inside functions counted too), no kernels module imported late inside
a function, and nothing of the engine imported but its table of kinds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import minigrad.devices
import minigrad.kernels
from minigrad.core.variable import KINDS
from minigrad.kernels import elementwise, errors, reduce
from minigrad.kernels.buffers import StridedBuffer
from minigrad.kernels.device_array import DeviceArray

PACKAGE = "minigrad.kernels"
FOLDER = Path(minigrad.kernels.__file__).parent
FILES = sorted(FOLDER.glob("*.py"))
MODULES = {PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}" for path in FILES}


def module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement under `tree`, at any depth (inside functions too)."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def loaded(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The absolute names an import statement may load: `from . import x` loads kernels.x."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    # Every file here is a module of the one package, so `.` is minigrad.kernels.
    base = node.module if not node.level else ".".join(filter(None, [PACKAGE, node.module]))
    return {base} | {f"{base}.{alias.name}" for alias in node.names}


def kernel_modules(node: ast.Import | ast.ImportFrom) -> set[str]:
    return loaded(node) & (MODULES - {PACKAGE})


def import_graph() -> dict[str, set[str]]:
    """kernels module -> the kernels modules it imports anywhere in its file."""
    graph = {}
    for path in FILES:
        name = module_name(path)
        tree = ast.parse(path.read_text())
        graph[name] = set().union(*map(kernel_modules, imports(tree))) - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first == last), or None: a depth-first walk."""
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return path[path.index(name) :] + [name]
        if name in done:
            return None
        for target in sorted(graph.get(name, ())):
            cycle = walk(target, [*path, name])
            if cycle:
                return cycle
        done.add(name)
        return None

    for name in sorted(graph):
        cycle = walk(name, [])
        if cycle:
            return cycle
    return None


def test_the_kernels_have_no_import_circle():
    graph = import_graph()
    assert graph[f"{PACKAGE}.device_array"] >= {
        f"{PACKAGE}.elementwise",
        f"{PACKAGE}.reduce",
        f"{PACKAGE}.matmul",
        f"{PACKAGE}.numpy_api",
    }
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    # The kernels work on StridedBuffers: none of them imports the array built on them.
    users = sorted(name for name, targets in graph.items() if f"{PACKAGE}.device_array" in targets)
    assert users == [], users


def test_the_cycle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_function_in_the_kernels_imports_a_kernels_module():
    late = []
    for path in FILES:
        for function in ast.walk(ast.parse(path.read_text())):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in imports(function):
                    if kernel_modules(node) or (loaded(node) & {PACKAGE}):
                        late.append(f"{path.name}:{node.lineno} in {function.name}()")
    assert late == [], late


def test_the_kernels_import_nothing_of_the_engine_but_its_table_of_kinds():
    outside = []
    for path in FILES:
        for node in imports(ast.parse(path.read_text())):
            names = loaded(node)
            assert not any(name.startswith("minigrad.devices") for name in names), path.name
            engine = {
                name
                for name in names
                if name.startswith("minigrad.")
                and not (name == PACKAGE or name.startswith(f"{PACKAGE}."))
            }
            if engine:
                outside.append((path.name, sorted(engine)))
    # Only device_array.py, where DeviceArray is defined, registers it as numbers.
    # (The table of kinds is in minigrad/core/variable.py, beside the Variable it describes.)
    table = ["minigrad.core.variable", "minigrad.core.variable.NUMBERS"]
    assert outside == [("device_array.py", [*table, "minigrad.core.variable.register_kind"])]


def test_devices_registers_no_kind_and_reexports_the_kernels_error():
    source = Path(minigrad.devices.__file__).read_text()
    assert "kinds" not in {
        alias.asname or alias.name for node in imports(ast.parse(source)) for alias in node.names
    }
    assert minigrad.devices.DeviceMismatchError is errors.DeviceMismatchError
    assert issubclass(errors.DeviceMismatchError, TypeError)


def test_a_device_array_is_numbers_to_the_engine_once_its_module_is_imported():
    kind = KINDS[DeviceArray]
    assert kind.name == "numeric"
    zeros = kind.zeros((2, 3), np.dtype(np.float32))
    assert type(zeros) is DeviceArray and zeros.dtype == np.float32
    np.testing.assert_array_equal(zeros.to_host(), np.zeros((2, 3), np.float32))


def test_kernels_run_on_raw_strided_buffers_and_results_keep_the_operands_class():
    host = np.arange(6.0).reshape(2, 3)
    raw = StridedBuffer.from_host(host)
    total = reduce.sum_along(elementwise.binary("mul", raw, 2.0), axis=0)
    assert type(total) is StridedBuffer  # no DeviceArray needed, none made
    np.testing.assert_array_equal(total.buffer.copy_to_host(), (host * 2).sum(axis=0))
    result = elementwise.binary("mul", 2.0, DeviceArray.from_host(host))
    assert type(result) is DeviceArray  # the first array operand decides
    with pytest.raises(minigrad.devices.DeviceMismatchError) as caught:  # the engine's name
        elementwise.binary("add", raw, np.ones((2, 3)))
    assert caught.value.op == "add"

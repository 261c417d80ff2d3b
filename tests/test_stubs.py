"""The generated stubs (make stubs) are up to date and complete: an editor finds every
method of Variable, the op table's included, and every public name of minigrad."""

from __future__ import annotations

import ast

import minigrad
from minigrad.core.variable import Variable
from minigrad.ops.tooling import stub


def test_the_stubs_are_what_make_stubs_writes_now():
    assert stub.STUB.read_text() == stub.render(), "run `make stubs`: variable.pyi is stale"
    assert stub.PACKAGE_STUB.read_text() == stub.render_package(), (
        "run `make stubs`: minigrad/__init__.pyi is stale"
    )


def _defined(tree: ast.Module, class_name: str) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {item.name for item in node.body if isinstance(item, ast.FunctionDef)} | {
                item.target.id for item in node.body if isinstance(item, ast.AnnAssign)
            }
    raise AssertionError(f"no class {class_name} in the stub")


def test_variable_stub_lists_every_method_and_op_with_its_signature():
    tree = ast.parse(stub.STUB.read_text())
    listed = _defined(tree, "Variable")
    public = {name for name in dir(Variable) if not name.startswith("_") and name != "T"}
    assert public - listed == set()
    # The class body's own methods and the op table's, with their parameters.
    source = stub.STUB.read_text()
    assert "def backward(self, gradient: Any = ..., retain_graph: builtins.bool | None" in source
    assert "def exp(self) -> Variable: ..." in source
    assert "def __add__(self, other: Any) -> Variable: ..." in source
    assert "def register_hook(self, hook: Callable" in source
    assert "def __getattr__" not in source  # it would make every name look valid


def test_package_stub_lists_every_public_name():
    tree = ast.parse(stub.PACKAGE_STUB.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            declared |= {alias.asname for alias in node.names}
        elif isinstance(node, ast.FunctionDef):  # the op table's functions it makes itself
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):  # kernels/, installed as minigrad.kernels
            declared.add(node.target.id)
    assert set(minigrad.__all__) <= declared
    imported = declared
    assert {"no_grad", "Function", "exp", "nn", "optim", "float32"} <= imported


def test_every_import_in_the_package_stub_exists_at_runtime():
    """A stub import of a name its module lacks would leave an editor with Any."""
    import importlib

    tree = ast.parse(stub.PACKAGE_STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module.startswith("minigrad"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{node.module}.{alias.name}"


def test_variable_stub_annotations_name_the_builtins_not_the_methods():
    """Inside class Variable, `bool` is the method Variable.bool: annotations must say
    builtins.bool (mypy read `keepdim: bool` as a method and rejected 57 annotations)."""
    text = stub.STUB.read_text()
    assert "keepdim: builtins.bool" in text
    for name in ("bool", "int", "float"):
        assert f": {name} " not in text and f"-> {name}:" not in text, name

"""What a learner reads to follow `y.backward()` and `Function.apply`, closed over every
name they call: the functions reached, found with `ast` from two entry points."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "minigrad"


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    defs: dict = field(default_factory=dict)  # top-level name -> FunctionDef/ClassDef
    # local name -> ("module", dotted name) or ("name", module, attribute)
    imports: dict = field(default_factory=dict)


def _module_path(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] != "minigrad":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def load(name: str, cache: dict) -> Module | None:
    if name in cache:
        return cache[name]
    path = _module_path(name)
    if path is None:
        cache[name] = None
        return None
    module = Module(name, path, ast.parse(path.read_text()))
    for node in module.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            module.defs[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.defs.setdefault(target.id, node)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("minigrad"):
            for alias in node.names:
                local = alias.asname or alias.name
                if _module_path(f"{node.module}.{alias.name}") is not None:
                    module.imports[local] = ("module", f"{node.module}.{alias.name}")
                else:
                    module.imports[local] = ("name", node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("minigrad"):
                    local = alias.asname or alias.name.split(".")[0]
                    module.imports[local] = ("module", alias.name if alias.asname else "minigrad")
    cache[name] = module
    return module


@dataclass(frozen=True)
class Unit:
    module: str
    qualname: str  # "f", "Class", "Class.method"


class Closure:
    """The units (functions, methods, class bodies) reached from the entry points."""

    def __init__(
        self, entries: list[tuple[str, str]], stop: tuple[str, ...] = (), errors: bool = True
    ) -> None:
        self.cache: dict = {}
        self.stop = stop  # module prefixes a learner does not follow (the op table, tools)
        # errors=False: names called only when something went wrong (inside `raise ...` or
        # an `except` block) are not followed; a correct program never reaches them.
        self.errors = errors
        self.units: dict[Unit, ast.AST] = {}
        self.classes: dict[Unit, ast.ClassDef] = {}
        self.attributes: set[str] = set()  # x.name seen on objects: methods of any class reached
        todo = [self.find(module, qualname) for module, qualname in entries]
        while todo:
            found = todo.pop()
            if found is None:
                continue
            unit, node = found
            if unit in self.units:
                continue
            self.units[unit] = node
            todo.extend(self.references(unit, node))
            if "." in unit.qualname:  # a method: its class (header, slots, docstring) too
                todo.append(self.find(unit.module, unit.qualname.split(".")[0]))
            if isinstance(node, ast.ClassDef):  # a class reached late: the names seen so far
                todo.extend(self.method(unit.module, node, name) for name in self.attributes)

    # ------------------------------------------------------------------ resolution
    def find(self, module_name: str, qualname: str):
        if module_name.startswith(self.stop):
            return None
        module = load(module_name, self.cache)
        if module is None:
            return None
        head, _, rest = qualname.partition(".")
        node = module.defs.get(head)
        if node is None:
            target = module.imports.get(head)
            if target is None:
                return None
            if target[0] == "name":
                return self.find(target[1], target[2] + (f".{rest}" if rest else ""))
            return self.find(target[1], rest) if rest else None
        if isinstance(node, ast.ClassDef):
            self.classes[Unit(module_name, head)] = node
            if not rest:
                return Unit(module_name, head), node
            method = self.method(module_name, node, rest)
            return method
        if rest:
            return None
        return Unit(module_name, head), node

    def method(self, module_name: str, cls: ast.ClassDef, name: str):
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return Unit(module_name, f"{cls.name}.{name}"), item
        for base in cls.bases:  # inherited: look in the base class
            if isinstance(base, ast.Name):
                found = self.find(module_name, f"{base.id}.{name}")
                if found is not None:
                    return found
        return None

    def references(self, unit: Unit, node: ast.AST) -> list:
        module = load(unit.module, self.cache)
        found = []
        if isinstance(node, ast.ClassDef):
            # Subclassing a class runs its __init_subclass__; calling it runs __init__ (below).
            found.append(self.method(unit.module, node, "__init_subclass__"))
            body = [item for item in node.body if not isinstance(item, ast.FunctionDef)]
        else:
            body = [node]
        for part in body:
            for sub in self._walk(part):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    found.append(self.find(unit.module, sub.id))
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                    called = self.find(unit.module, sub.func.id)
                    if called is not None and isinstance(called[1], ast.ClassDef):
                        found.append(self.method(called[0].module, called[1], "__init__"))
                elif isinstance(sub, ast.Attribute):
                    found.extend(self.attribute(unit, module, sub))
        return found

    def _walk(self, node: ast.AST):
        """ast.walk, without what runs only on an error unless self.errors."""
        todo = [node]
        while todo:
            current = todo.pop()
            yield current
            for child in ast.iter_child_nodes(current):
                if not self.errors and isinstance(child, (ast.Raise, ast.ExceptHandler)):
                    continue
                todo.append(child)

    def attribute(self, unit: Unit, module: Module, node: ast.Attribute) -> list:
        chain = []
        value = node
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name):
            target = module.imports.get(value.id)
            if target is not None and target[0] == "module":
                dotted = target[1]
                names = list(reversed(chain))
                # core.engine.backward: walk submodules, then the def
                while names and _module_path(f"{dotted}.{names[0]}") is not None:
                    dotted = f"{dotted}.{names.pop(0)}"
                if names:
                    return [self.find(dotted, names[0])]
                return []
        # x.method(...) on an object: any method of that name on a class reached (so far,
        # or later), or on the class the current method belongs to.
        self.attributes.add(node.attr)
        found = []
        own_class = unit.qualname.split(".")[0] if "." in unit.qualname else None
        for class_unit, cls in list(self.classes.items()):
            own = class_unit.module == unit.module and cls.name == own_class
            if class_unit in self.units or own:
                found.append(self.method(class_unit.module, cls, node.attr))
        return found

    # ------------------------------------------------------------------ counting
    def lines(self) -> dict[str, int]:
        """Lines read per file: each function reached, each class body reached (without
        its methods), and the file's docstring."""
        per_file: dict[str, int] = {}
        for unit, node in self.units.items():
            if isinstance(node, ast.ClassDef):
                count = _class_lines(node)
            else:
                start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
                count = node.end_lineno - start + 1
            per_file[unit.module] = per_file.get(unit.module, 0) + count
        for name in per_file:
            docstring = load(name, self.cache).tree.body[0]
            if isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant):
                per_file[name] += docstring.end_lineno - docstring.lineno + 1
        return per_file


def _class_lines(node: ast.ClassDef) -> int:
    count = 1
    for item in node.body:
        if not isinstance(item, ast.FunctionDef):
            count += item.end_lineno - item.lineno + 1
    return count

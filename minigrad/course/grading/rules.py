"""Rules an answer keeps, read from its source: each exercise is graded on the learner's code.

A check runs the answer and compares what it gives with the right result, so an answer
that hands the work to the course's own solutions (`from minigrad.course import lesson11`)
or to the library function the exercise re-derives (`functional.jacobian` in Exercise 12.2)
would score full marks. These rules read the answer's source with `ast`, in the grader's
own process; the answer is never run here.

- Every exercise: no `minigrad.course` (the course's checks and reference solutions), no
  tampering with the Python that grades it (the recursion limit, tracing, frames, the
  garbage collector's lists, ctypes, signals, writing into imported modules, sys.modules
  or builtins), and no code given as text (exec, eval, `__import__`, IPython magics).
- Some exercises: the shortcut their task text rules out, in RULES below.

Names are followed through the imports and simple assignments of the cell and of the cells
above it (`from minigrad.autograd import functional`, `F = functional`), and into what an
earlier cell defines when the answer uses it. What the exercise cell was released with (its
stub: the lesson's own lines around the answer) is not held against the learner. This
reads source; it is not a sandbox, and a name built at run time can still get past it.

EnforceRules, an nbgrader autograde step, puts each broken rule on the exercise's check
cell as an error, so that check scores 0 and the feedback names the rule. It also reads the
code cells a student added or changed outside the exercises: one that writes into an
imported module, sys.modules or builtins (`np.allclose = ...` in a cell of its own) would
change every check and hidden test run after it, so it fails every exercise of the notebook.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

COURSE = "minigrad.course"
# Course names a lesson hands to its exercises: lesson 11's cells use the course's Value
# after Exercise 11.1, so that a slip in one exercise never fails another.
ALLOWED_COURSE_NAMES = ("minigrad.course.lesson11.Value",)


@dataclass(frozen=True)
class Rule:
    """What one exercise rules out: the dotted `names` (a module stands for everything in
    it), and with `recursion`, a function that calls itself."""

    asks: str  # the task, to follow "Exercise N.k ..."
    names: tuple[str, ...]
    instead: str  # what using one of the names does instead
    short: str  # the rule's name
    recursion: bool = False


# What differentiates for you, in minigrad (minigrad.autodiff is minigrad.autograd) or
# PyTorch; and for an answer by hand, with plain arithmetic or NumPy, every library.
DIFFERENTIATORS = (
    "minigrad.grad",
    "minigrad.autograd.grad",
    "minigrad.backward",
    "minigrad.autograd.backward",
    "minigrad.autograd.functional",
    "minigrad.autograd.forward_ad",
    "torch.autograd",
    "torch.func",
)
LIBRARIES = ("minigrad", "torch")
JACOBIANS = (
    "minigrad.autograd.functional.jacobian",
    "minigrad.autograd.functional.hessian",
    "torch.autograd.functional",
    "torch.func",
)
HESSIANS = (
    "minigrad.autograd.functional.hvp",
    "minigrad.autograd.functional.vhp",
    *JACOBIANS,
)


def _derive(asks: str) -> Rule:
    return Rule(asks, DIFFERENTIATORS, "which differentiates for you", "derive it yourself")


def _no_recursion(asks: str) -> Rule:
    return Rule(
        asks,
        ("sys.setrecursionlimit",),
        "which lifts Python's recursion limit instead",
        "no recursion",
        recursion=True,
    )


# Each exercise whose text rules a shortcut out. The stored solution of every exercise
# keeps every rule (tests/test_grading_rules.py).
RULES: dict[str, Rule] = {
    "0.1": Rule(
        "asks for the slope by hand, with plain arithmetic",
        LIBRARIES,
        "which differentiates for you",
        "no minigrad in Exercise 0.1",
    ),
    "0.4": Rule(
        "asks for g'(x) derived by hand, as plain arithmetic on x",
        LIBRARIES,
        "which differentiates for you",
        "no minigrad in Exercise 0.4",
    ),
    "1.2": _no_recursion("asks for a loop and a list of nodes still to visit"),
    "2.1": Rule(
        "asks for dy/dx and dy/dw by hand, with plain Python arithmetic on floats",
        LIBRARIES,
        "which differentiates for you",
        "no minigrad in Exercise 2.1",
    ),
    "2.2": _no_recursion("asks for a topological order without recursion"),
    "3.1": _derive("asks you to derive dy/dx yourself"),
    "3.2": _derive("asks you to derive ∂y/∂x yourself"),
    "3.3": _derive("asks you to work out both partial derivatives yourself"),
    "5.1": _derive("asks you to derive each gradient from the index formula"),
    "5.4": _derive("asks you to derive the bilinear layer's four gradients from its index formula"),
    "6.2": _derive("asks for a backward you derive"),
    "8.3": Rule(
        "asks you to derive SiLU's derivative by hand and write it in the kernel",
        LIBRARIES,
        "which computes it for you",
        "derive it by hand",
    ),
    "6.5": Rule(
        "asks you to predict the loss and both gradients by hand, with plain arithmetic",
        LIBRARIES,
        "which runs the graph instead of predicting it",
        "predict, do not run",
    ),
    "9.2": Rule(
        "asks for Hv with two calls to minigrad.grad, without building H",
        HESSIANS,
        "which does it for you",
        "no library Hessian",
    ),
    "9.5": _derive("asks for a backward you derive with the implicit function theorem"),
    "9.6": Rule(
        "asks you to derive what the hook receives and x.grad on paper, with NumPy only",
        LIBRARIES,
        "which computes them for you",
        "NumPy only",
    ),
    "11.2": _derive("asks you to derive the backward functions of sub, div and sigmoid"),
    "11.3": _no_recursion(
        "asks for an iterative walk, a loop and a ready list, at Python's default recursion limit"
    ),
    "11.4": Rule(
        "asks you to predict a.grad and x.grad on paper, pass by pass",
        ("backward", "mul", "add", "minigrad.course.lesson11.Value", "minigrad"),
        "which runs the passes instead of predicting them",
        "predict, do not run",
    ),
    "11.5": Rule(
        "asks for the loss and every gradient by hand, with NumPy only",
        LIBRARIES,
        "which differentiates for you",
        "NumPy only",
    ),
    "11.7": Rule(
        "asks you to derive softplus's backward yourself and write it with NumPy",
        (*DIFFERENTIATORS, "minigrad.nn.functional", "torch.nn.functional"),
        "which computes it for you",
        "derive it yourself",
    ),
    "12.1": _derive("asks for a JVP rule you derive"),
    "12.2": Rule(
        "asks you to build the Jacobian column by column with JVPs",
        JACOBIANS,
        "which does it for you",
        "no library Jacobian",
    ),
    "12.3": Rule(
        "asks you to derive Hv by hand and write it with NumPy only",
        LIBRARIES,
        "which computes it for you",
        "NumPy only",
    ),
    "12.4": Rule(
        "asks you to derive the transpose of a JVP by hand and write it with NumPy only",
        (*LIBRARIES, "linear_jvp"),
        "which computes the VJP or J for you",
        "NumPy only",
    ),
    "12.5": Rule(
        "asks you to fix perturbation confusion with tagged dual numbers, by hand",
        LIBRARIES,
        "which differentiates for you",
        "tagged duals by hand",
    ),
    "13.2": Rule(
        "asks you to write checkpointing yourself, as a Function",
        ("minigrad.utils.checkpoint", "torch.utils.checkpoint"),
        "which does it for you",
        "no library checkpoint",
    ),
    "13.3": Rule(
        "asks you to predict the recursive schedule's peak before it is measured",
        ("tracemalloc", "minigrad.autograd.graph", "minigrad.core.function.saved_tensors_hooks"),
        "which measures it instead of predicting it",
        "predict, do not measure",
    ),
    "15.1": Rule(
        "asks you to derive the input's gradient of a convolution and write it with NumPy only",
        LIBRARIES,
        "which computes it for you",
        "NumPy only",
    ),
    "15.2": Rule(
        "asks you to derive BatchNorm's backward and write it with NumPy only",
        LIBRARIES,
        "which computes it for you",
        "NumPy only",
    ),
    "15.3": Rule(
        "asks for each layer's output size by the formula",
        LIBRARIES,
        "which runs layers instead of using the formula",
        "by the formula",
    ),
    "15.4": Rule(
        "asks for the receptive field by the formula",
        LIBRARIES,
        "which runs layers instead of using the formula",
        "by the formula",
    ),
    "16.1": Rule(
        "asks you to derive attention's backward and write it with NumPy only",
        LIBRARIES,
        "which computes it for you",
        "NumPy only",
    ),
    "16.2": Rule(
        "asks you to derive the gradients of the LSTM's cell update and write them with NumPy "
        "only",
        LIBRARIES,
        "which computes them for you",
        "NumPy only",
    ),
    "16.3": Rule(
        "asks for what attention saves and what the mask allows, by the formula",
        LIBRARIES,
        "which runs attention instead of using the formula",
        "by the formula",
    ),
}

# Every exercise: what reaches into the Python that grades the answer, and what it does.
TAMPERING = {
    "sys.setrecursionlimit": "changes how deep calls may go, for the grader too",
    "sys.settrace": "watches every line the grader runs",
    "sys.setprofile": "watches every call the grader makes",
    "threading.settrace": "watches every line the grader runs",
    "threading.setprofile": "watches every call the grader makes",
    "sys._getframe": "reads the grader's frames",
    "sys._current_frames": "reads the grader's frames",
    "inspect.currentframe": "reads the grader's frames",
    "inspect.stack": "reads the grader's frames",
    "inspect.trace": "reads the grader's frames",
    "inspect.getouterframes": "reads the grader's frames",
    "gc.get_objects": "reaches the objects the grader holds",
    "gc.get_referrers": "reaches the objects the grader holds",
    "gc.get_referents": "reaches the objects the grader holds",
    "sys.addaudithook": "watches every piece of code the grader compiles and runs",
    "linecache": "reads the source of the code the grader runs",
    "ctypes": "writes into memory directly",
    "_ctypes": "writes into memory directly",
    "os.kill": "signals or stops the grading process",
    "os.killpg": "signals or stops the grading process",
    "os._exit": "signals or stops the grading process",
    "os.abort": "signals or stops the grading process",
    "signal": "signals or stops the grading process",
    "sys.modules.update": "changes which module an import finds",
    "sys.modules.pop": "changes which module an import finds",
    "sys.modules.setdefault": "changes which module an import finds",
    "sys.modules.clear": "changes which module an import finds",
    "sys.modules.popitem": "changes which module an import finds",
}
# Attributes that lead from any object to the frames of the code running it.
FRAME_ATTRIBUTES = ("f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame")
# Every exercise: code the grader cannot read, because it is given as text (a fixed module
# name given to importlib.import_module is read as an import).
IPYTHON = "get_ipython"  # IPython's magics and shell commands become its methods' calls
AS_TEXT_BUILTINS = ("exec", "eval", "compile", "__import__", IPYTHON)
AS_TEXT_MODULES = ("runpy", "marshal", "importlib.__import__", "importlib.util")


def changes_outside_exercises(
    source: str, earlier_sources: list[str], given: str = ""
) -> list[str]:
    """What a code cell that is no exercise writes into: the dotted names of the imported
    modules, sys.modules or builtins it changes itself (`numpy.allclose`), in order. `given`
    is the cell as the lesson has it, if it is one of the lesson's: its own lines are not
    held against the learner, nor what they change (lesson 10 swaps a listener in, say)."""
    cell = _parse(source)
    if cell is None:
        return []
    names = _Names([tree for tree in map(_parse, earlier_sources) if tree is not None], cell)
    released = _parse(given)
    learners = _learners_part(cell.body, released.body if released is not None else [])
    reader = _Reader(_Scope(names.aliases, names.own, names.defined))
    for statement in learners:
        reader.visit(statement)
    lessons = set(changes_outside_exercises(given, earlier_sources)) if given else set()
    return list(dict.fromkeys(
        use.name for use in reader.uses if use.how == "changes" and use.name not in lessons
    ))


def broken_rules(
    exercise: str, source: str, earlier_sources: list[str], given: str = ""
) -> list[str]:
    """The message of each rule that the answer to `exercise` ("12.2") breaks: `source` is
    its exercise cell, `earlier_sources` the code cells above it, in order, and `given` the
    cell as released (its stub), whose own lines are not held against the learner."""
    answer = _parse(source)
    if answer is None:
        return []  # the cell does not run at all, so its check fails without a rule
    names = _Names([tree for tree in map(_parse, earlier_sources) if tree is not None], answer)
    released = _parse(given)
    learners = _learners_part(answer.body, released.body if released is not None else [])
    uses, self_calls = names.read(learners, answer)
    return _messages(exercise, uses, self_calls)


# --------------------------------------------------------------------------- reading an answer


@dataclass(frozen=True)
class _Use:
    """A dotted name an answer uses: `how` is "calls", "uses", "imports", "changes" or
    "names" (as text); `through` the earlier cell's name it was reached by, if any."""

    name: str
    how: str
    through: str = ""
    builtin: bool = False  # a name no cell defines: Python's builtin of that name


@functools.lru_cache(maxsize=256)  # a notebook's cells are read again for every exercise
def _parse(source: str) -> ast.Module | None:
    """The cell as Python, its IPython magics turned into get_ipython() calls; None when it
    does not parse."""
    try:
        return ast.parse(source)
    except SyntaxError:
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return ast.parse(TransformerManager().transform_cell(source))
    except (ImportError, SyntaxError, ValueError):
        return None


def _learners_part(body: list[ast.stmt], given: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of `body` that the released cell `given` does not have as they are;
    inside a def or class it has too (same name, same signature), only the changed
    statements of its body."""
    unchanged = Counter(ast.dump(statement) for statement in given)
    blocks = {
        statement.name: statement
        for statement in given
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    kept: list[ast.stmt] = []
    for statement in body:
        dumped = ast.dump(statement)
        if unchanged[dumped]:
            unchanged[dumped] -= 1
            continue
        twin = blocks.get(getattr(statement, "name", None))
        if twin is not None and _header(twin) == _header(statement):
            kept += _learners_part(statement.body, twin.body)
        else:
            kept.append(statement)
    return kept


def _header(block: ast.stmt) -> str:
    """A def's or class's kind, decorators and signature, without its body."""
    parts = [type(block).__name__] + [ast.dump(d) for d in block.decorator_list]
    if isinstance(block, ast.ClassDef):
        parts += [ast.dump(node) for node in (*block.bases, *block.keywords)]
    else:
        parts += [ast.dump(block.args), ast.dump(block.returns) if block.returns else ""]
    return "\n".join(parts)


class _Names:
    """What each name of an answer stands for: the imports and dotted assignments of the
    cells above and of the cell itself (aliases), the names the cell binds itself (its
    own), and what earlier cells define at their top level."""

    def __init__(self, earlier: list[ast.Module], answer: ast.Module) -> None:
        self.aliases: dict[str, str] = {"__builtins__": "builtins"}  # as if imported
        self.defined: dict[str, list[ast.stmt]] = {}
        for tree in earlier:
            self._add_aliases(tree)
            for statement in tree.body:
                for name in _top_level_names(statement):
                    if name not in self.aliases:
                        self.defined.setdefault(name, []).append(statement)
        self.earlier_aliases = dict(self.aliases)
        renamed = self._add_aliases(answer)
        self.own = _bound_names(answer) - renamed

    def _add_aliases(self, tree: ast.Module) -> set[str]:
        """Record the aliases `tree` binds; return the names it binds by assignment."""
        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        renamed = set()
        for node in nodes:  # `F = functional`, `jac = F.jacobian`: another name, same thing
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                dotted = _Scope(self.aliases, set()).dotted(node.value, imported_only=True)
                if dotted is not None:
                    self.aliases[node.targets[0].id] = dotted
                    renamed.add(node.targets[0].id)
        return renamed

    def read(
        self, learners: list[ast.stmt], answer: ast.Module
    ) -> tuple[list[_Use], list[tuple[str, str]]]:
        """The names the learner's statements use, and the functions that call themselves
        as (name, through), following names into what earlier cells define."""
        reader = _Reader(_Scope(self.aliases, self.own, self.defined))
        for statement in learners:
            reader.visit(statement)
        uses = list(reader.uses)
        self_calls = [(name, "") for name in _self_calling(answer)]
        followed: set[str] = set()
        queue = [(_root(use.name), _root(use.name)) for use in reader.uses]
        while queue:
            root, through = queue.pop()
            if root in followed or root not in self.defined or root in self.own:
                continue
            followed.add(root)
            for statement in self.defined[root]:
                local = _bound_names(statement) - set(_top_level_names(statement))
                inner = _Reader(_Scope(self.earlier_aliases, local, self.defined), through)
                inner.visit(statement)
                uses += inner.uses
                self_calls += [(name, through) for name in _self_calling(statement)]
                queue += [(_root(use.name), through) for use in inner.uses]
        return uses, self_calls


def _root(name: str) -> str:
    return name.split(".")[0]


class _Scope:
    """Resolves an expression to the dotted name it stands for, or None: a name the cell
    binds itself stands for nothing the rules know."""

    def __init__(self, aliases: dict[str, str], own: set[str], defined: dict | None = None) -> None:
        self.aliases, self.own, self.defined = aliases, own, defined or {}

    def dotted(self, node: ast.expr, imported_only: bool = False) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.own:
                return None
            if node.id in self.aliases:
                return self.aliases[node.id]
            return None if imported_only else node.id
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value, imported_only)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call) and _is(node.func, "getattr") and len(node.args) >= 2:
            base, attribute = self.dotted(node.args[0], imported_only), _text(node.args[1])
            return None if base is None or attribute is None else f"{base}.{attribute}"
        if isinstance(node, ast.Subscript) and _text(node.slice) is not None:
            key, holder = _text(node.slice), node.value
            if isinstance(holder, ast.Call) and _is(holder.func, "globals", "locals", "vars"):
                if not holder.args:  # globals()["lesson11"] is the name lesson11
                    return self.dotted(ast.Name(key, ast.Load()), imported_only)
                base = self.dotted(holder.args[0], imported_only)  # vars(module)["name"]
                return None if base is None else f"{base}.{key}"
            if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
                base = self.dotted(holder.value, imported_only)
                return None if base is None else f"{base}.{key}"
        return None

    def imported(self, node: ast.expr) -> bool:
        """True when `node` (np.allclose, sys.modules) belongs to what an import bound: a
        module, or a class or function of one."""
        return self.dotted(node, imported_only=True) is not None

    def builtin(self, name: str) -> bool:
        """True when no cell binds `name`'s first part: Python's builtin of that name."""
        root = _root(name)
        return root not in self.own and root not in self.aliases and root not in self.defined


class _Reader(ast.NodeVisitor):
    """Collects the dotted names the code it visits uses (see _Use)."""

    def __init__(self, scope: _Scope, through: str = "") -> None:
        self.scope, self.through = scope, through
        self.uses: list[_Use] = []

    def _use(self, name: str, how: str) -> None:
        builtin = how != "imports" and self.scope.builtin(name)
        self.uses.append(_Use(_canonical(name), how, self.through, builtin))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._use(alias.name, "imports")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            module = node.module or ""
            self._use(module if alias.name == "*" else f"{module}.{alias.name}", "imports")

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.strip().startswith(COURSE):
            self._use(node.value.strip(), "names")

    def visit_Call(self, node: ast.Call) -> None:
        if self.scope.dotted(node) is not None:  # getattr(module, "name")
            self._dotted(node)
            return
        function = self.scope.dotted(node.func)
        if function == "importlib.import_module" and node.args and _text(node.args[0]):
            self._use(_text(node.args[0]), "imports")  # a fixed module name: an import
            return
        if _is(node.func, "setattr", "delattr") and node.args:
            target = self.scope.dotted(node.args[0])
            if target is not None and self.scope.imported(node.args[0]):
                attribute = _text(node.args[1]) if len(node.args) > 1 else None
                self._use(f"{target}.{attribute or '?'}", "changes")
        if _calls_ipython(node):  # %run ... is get_ipython().run_line_magic("run", "...")
            method, magic = node.func.attr, _text(node.args[0]) if node.args else None
            shown = f"%{magic}" if magic and "magic" in method else f"{IPYTHON}().{method}"
            self._use(shown, "calls")
        elif function is not None:
            self._use(function, "calls")
            self._visit_inside(node.func)
        else:
            self.visit(node.func)
        for argument in (*node.args, *node.keywords):
            self.visit(argument)

    def visit_Name(self, node: ast.Name) -> None:
        self._dotted(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRIBUTES:
            self._use(f".{node.attr}", "uses")
        self._dotted(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and self._namespace(node.value):
            holder = node.value
            if isinstance(holder, ast.Call):  # vars(np)
                holder = ast.Attribute(holder.args[0], "__dict__", ast.Load())
            self._use(self.scope.dotted(holder) or "a module's names", "changes")
            self.visit(node.slice)
            return
        self._dotted(node)

    def _namespace(self, holder: ast.expr) -> bool:
        """True for sys.modules, and for a module's own names: np.__dict__, vars(np)."""
        if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
            return self.scope.imported(holder.value)
        if isinstance(holder, ast.Call) and _is(holder.func, "vars") and holder.args:
            return self.scope.imported(holder.args[0])
        return self.scope.imported(holder) and self.scope.dotted(holder) == "sys.modules"

    def _dotted(self, node: ast.expr) -> None:
        name = self.scope.dotted(node)
        if name is None:
            self.generic_visit(node)
        elif isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            if isinstance(node, ast.Attribute) and self.scope.imported(node):
                self._use(name, "changes")  # np.allclose = ..., lesson00.check_0_1 = ...
        else:
            self._use(name, "uses")
            self._visit_inside(node)

    def _visit_inside(self, node: ast.expr) -> None:
        """The parts of a dotted expression that are not its names: a subscript's key, a
        getattr's other arguments."""
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(node, ast.Call):
                for argument in node.args[1:]:
                    self.visit(argument)
                if not node.args:
                    return
                node = node.args[0]
            else:
                if isinstance(node, ast.Subscript):
                    self.visit(node.slice)
                node = node.value


def _canonical(name: str) -> str:
    """minigrad.autodiff is minigrad.autograd: one spelling, to compare with the tables."""
    for alias, canonical in (("minigrad.autodiff", "minigrad.autograd"),):
        if name == alias or name.startswith(alias + "."):
            return canonical + name[len(alias) :]
    return name


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is(node: ast.expr, *names: str) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _calls_ipython(node: ast.Call) -> bool:
    """get_ipython().run_cell(...), .run_line_magic(...), .system(...): what magics become."""
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and _is(func.value.func, IPYTHON)
    )


def _top_level_names(statement: ast.stmt) -> list[str]:
    """The names a top-level statement defines for later cells."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [
            node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)
        ]
    return []


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name `tree` binds: assigned, defined, a parameter, an exception's name."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _self_calling(tree: ast.AST) -> list[str]:
    """The functions in `tree` that call themselves directly, by name (`f = lambda: f()`
    and `self.method()` inside that method included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name, body = node.name, node
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Lambda)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name, body = node.targets[0].id, node.value
        else:
            continue
        for inner in ast.walk(body):
            if isinstance(inner, ast.Call) and (
                _is(inner.func, name)
                or isinstance(inner.func, ast.Attribute)
                and inner.func.attr == name
                and _is(inner.func.value, "self", "cls")
            ):
                found.append(name)
                break
    return found


# --------------------------------------------------------------------------- the messages


def _messages(exercise: str, uses: list[_Use], self_calls: list[tuple[str, str]]) -> list[str]:
    """One message per rule and name, the exercise's own rule first."""
    rule = RULES.get(exercise)
    messages: dict[tuple[str, str], str] = {}
    if rule is not None:
        for use in uses:
            if use.how not in ("changes", "names") and _under(use.name, _ruled(use, rule)):
                messages.setdefault(
                    (rule.short, use.name),
                    f"Exercise {exercise} {rule.asks}; your answer {_what(use)}, {rule.instead} "
                    f"(rule: {rule.short}).",
                )
        for function, through in self_calls if rule.recursion else ():
            where = f" (in {through}, defined in a cell above)" if through else ""
            messages.setdefault(
                (rule.short, function),
                f"Exercise {exercise} {rule.asks}; your function {function}{where} calls itself. "
                f"Keep the nodes still to visit in a list instead (rule: {rule.short}).",
            )
    ruled = {name for _, name in messages}
    for use in uses:
        if use.name in ruled:
            continue
        if use.how == "changes":
            messages.setdefault(
                ("tampering", use.name),
                f"Exercise {exercise}: your answer {_what(use)}, which the grader's code uses "
                f"too. An answer may not change the Python that grades it "
                f"(rule: no tampering with the grader).",
            )
        elif _under(use.name, (COURSE,)) and not _under(use.name, ALLOWED_COURSE_NAMES):
            messages.setdefault(
                ("course", use.name),
                f"Exercise {exercise} is graded on your own code, and your answer {_what(use)}: "
                f"the course's own checks and solutions, not yours. Write the answer yourself "
                f"(rule: answers may not import minigrad.course).",
            )
        elif _tampering(use) is not None:
            messages.setdefault(
                ("tampering", use.name),
                f"Exercise {exercise}: your answer {_what(use)}, which {_tampering(use)}. An "
                f"answer may not change the Python that grades it "
                f"(rule: no tampering with the grader).",
            )
        elif _as_text(use):
            messages.setdefault(
                ("as text", use.name),
                f"Exercise {exercise}: your answer {_what(use)}, which runs code (or a command) "
                f"given as text, so the grader cannot read it. Write the code itself in the "
                f"cell, and put magics and timings in a cell of their own "
                f"(rule: code the grader can read).",
            )
    return list(messages.values())


def _ruled(use: _Use, rule: Rule) -> tuple[str, ...]:
    """The names of `rule` that speak for `use`: a course name is the course rule's (its
    message says more), unless the exercise's rule names it itself."""
    if _under(use.name, (COURSE,)):
        return tuple(name for name in rule.names if _under(name, (COURSE,)))
    return rule.names


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    """True when `name` is one of `prefixes` or inside one of them (a module's function)."""
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def _what(use: _Use) -> str:
    """What the answer does, as "calls minigrad.autograd.functional.jacobian (in helper,
    defined in a cell above)"."""
    if use.how == "names":
        shown = f"names {use.name!r} as text"
    elif use.name.startswith("."):
        shown = f"{use.how} the attribute {use.name[1:]}"
    else:
        shown = f"{use.how} {use.name}"
    return shown + (f" (in {use.through}, defined in a cell above)" if use.through else "")


def _tampering(use: _Use) -> str | None:
    """What the use does to the grader, or None when it does nothing to it."""
    if use.name.startswith("."):
        return "reads the grader's frames"
    for name, what in TAMPERING.items():
        if _under(use.name, (name,)):
            return what
    return None


def _as_text(use: _Use) -> bool:
    """True when the use runs code, or imports a module, given as text."""
    if use.name.startswith(("%", f"{IPYTHON}().")):
        return True
    if use.name in AS_TEXT_BUILTINS:
        return use.builtin
    if use.name.startswith("builtins.") and use.name[len("builtins.") :] in AS_TEXT_BUILTINS:
        return True
    if use.name == "importlib.import_module":
        return use.how != "imports"  # imported to be called with a fixed name, maybe
    return _under(use.name, AS_TEXT_MODULES)


# --------------------------------------------------------------------------- in nbgrader

EXERCISE_ID = re.compile(r"exercise_(\d+)_(\d+)")
CHECK_ID = re.compile(r"check_(\d+)_(\d+)")
TAMPERING_RULE = "(rule: no tampering with the grader)"
ENAME = "RuleBroken"


class EnforceRules(NbGraderPreprocessor):
    """Autograde step, after the notebook ran and before SaveAutoGrades: each rule that an
    exercise's answer breaks becomes a RuleBroken error on that exercise's check cell, so
    the check scores 0 and the feedback names the rule."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        released = _released_sources(resources)
        lesson_cells = _released_code_cells(resources)
        earlier: list[str] = []
        broken: dict[str, list[str]] = {}
        changed: list[tuple[str, str]] = []  # (a plain cell's first line, what it changes)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            roles = cell.metadata.get("nbgrader", {})
            number = EXERCISE_ID.fullmatch(roles.get("grade_id", ""))
            if number is not None and roles.get("solution"):
                exercise = f"{int(number[1])}.{int(number[2])}"
                given = released.get(roles["grade_id"], "")
                messages = broken_rules(exercise, cell.source, earlier, given)
                if messages:
                    broken[f"check_{number[1]}_{number[2]}"] = messages
            elif not roles and lesson_cells is not None and cell.source not in lesson_cells:
                first = next((line for line in cell.source.splitlines() if line.strip()), "")
                given = lesson_cells.get(cell.get("id"), "")
                changed += [(first.strip()[:80], name)
                            for name in changes_outside_exercises(cell.source, earlier, given)]
            earlier.append(cell.source)
        if changed:
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
                number = CHECK_ID.fullmatch(grade_id)
                if cell.cell_type == "code" and number is not None:
                    exercise = f"{int(number[1])}.{int(number[2])}"
                    broken.setdefault(grade_id, []).extend(
                        _changed_outside(exercise, line, name) for line, name in changed)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code" and grade_id in broken:
                messages = broken.pop(grade_id)
                errors = [_rule_broken(message) for message in messages]
                if any(_reads_the_grader(message) for message in messages):
                    # What a check printed in a kernel whose code the answer read is not its
                    # own (a hidden test's code put in an error message, say): not shown.
                    cell.outputs = errors
                else:
                    # First: nbgrader scores a check cell by its first error or result.
                    cell.outputs[0:0] = errors
        for grade_id in broken:
            self.log.warning("No check cell %s to put a broken rule on", grade_id)
        return nb, resources


def _reads_the_grader(message: str) -> bool:
    """True for the message of a tampering rule whose code reads the grader's code or state
    (frames, tracing, audit hooks, linecache), through which a hidden test's code can reach
    the answer's own error messages."""
    reading = ("reads the grader's frames", "watches every", "reaches the objects",
               "reads the source of the code")
    return TAMPERING_RULE in message and any(words in message for words in reading)


def _changed_outside(exercise: str, line: str, name: str) -> str:
    return (f"Exercise {exercise}: a cell of yours that is no exercise ({line!r}) changes "
            f"{name}, which the grader's code uses too, for this exercise's check and hidden "
            f"tests as for every other. No cell may change the Python that grades the notebook "
            f"{TAMPERING_RULE}.")


def _rule_broken(message: str) -> NotebookNode:
    return NotebookNode(
        output_type="error", ename=ENAME, evalue=message, traceback=[f"{ENAME}: {message}"]
    )


def _released_code_cells(resources: dict) -> dict[str | None, str] | None:
    """The code cells of the notebook as released (the lesson's own cells), from
    COURSE/release/: cell id -> source, each source also under itself (so that `in` finds a
    cell kept as it is); None when the release is not there, and then the cells outside the
    exercises are not read."""
    info = resources.get("nbgrader", {})
    path = resources.get("metadata", {}).get("path")
    if not path or "notebook" not in info or "assignment" not in info:
        return None
    autograded = Path(path).resolve()  # COURSE/autograded/STUDENT/ASSIGNMENT
    if len(autograded.parents) < 3:
        return None
    release = (autograded.parents[2] / "release" / info["assignment"]
               / f"{info['notebook']}.ipynb")
    try:
        notebook = nbformat.read(release, as_version=4)
    except (OSError, ValueError):
        return None
    cells: dict[str | None, str] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cells[cell.source] = cell.source
            if cell.get("id"):
                cells[cell.id] = cell.source
    return cells


def _released_sources(resources: dict) -> dict[str, str]:
    """grade id -> each cell's source as released (an exercise's stub), from nbgrader's
    gradebook; {} without one, and then every line of an answer is read as the learner's."""
    info = resources.get("nbgrader", {})
    if not all(key in info for key in ("db_url", "notebook", "assignment")):
        return {}
    with Gradebook(info["db_url"]) as gradebook:
        try:
            notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
        except MissingEntry:
            return {}
        return {cell.name: cell.source for cell in notebook.source_cells}

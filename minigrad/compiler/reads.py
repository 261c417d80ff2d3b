"""What the step and the code it calls read: guards on Python state, as Dynamo guards a frame.

A replay runs no Python, so every value the traced run's Python read must still be what it
was, or the replay is of another step. After a traced run, called.py knows the functions
that ran; this module turns what they read into guards, checked before each replay:

- the globals and enclosing variables they load (ValueGuard, guards.py);
- every access path they follow from those, from the object a method runs on, from a
  module they import or from an argument, at any depth (PathGuard: `mod.SCALE`,
  `self.scale`, `cfg["a"]["b"]["c"]["d"]`, `weights[0]`, a method `opt.step` and its class);
- the contents of the objects they reach (ContentGuard: each item of a dict or a list, each
  attribute of a plain object or a Module, its submodules and parameters; a small NumPy
  array's or a set's contents; a partial's keywords; a layer's class, TypeGuard; a cache a
  function keeps, CacheGuard).

Plain values are compared by value, anything else by identity. compose() folds the guards
that compare identities only into one generated function (AllAtOnce), as Dynamo compiles
its guards: checking them before each replay costs a few microseconds.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from typing import Any

import numpy as np

from minigrad.compiler import side_effects
from minigrad.compiler.called import Called, CallWatcher
from minigrad.compiler.guards import ModeGuard, OptimizerGuard, ValueGuard, _guarded, _Same
from minigrad.compiler.trace import CannotReplayError

_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.generic)


def _cells_of(called: Called) -> dict[str, Any]:
    """name -> read it now, for each enclosing variable the called code reads: from the
    function's cells when the function was found, else the value it had when traced."""
    cells = dict(zip(called.code.co_freevars, getattr(called.function, "__closure__", None) or ()))
    found = {}
    for name in called.code.co_freevars:
        if name in cells and not side_effects._is_empty(cells[name]):
            found[name] = functools.partial(_cell_contents, cells[name])
        elif name in called.names:
            found[name] = functools.partial(_constant, called.names[name])
    return found


def guards_of(watcher: CallWatcher, step: Any, arguments: dict | None = None) -> list[Any]:
    """Guards on what the step's code and the code it called read: the globals the called
    code reads, the contents of every object reached, and each access path followed (see
    the module's docstring). `arguments`: the step's parameters by name, as this call
    passed them (an object passed in, a config, is guarded like a global)."""
    found: list[Any] = []
    roots: list[tuple[Any, str]] = []
    for name, is_global, read in side_effects.name_readers(step):
        kind = "the global" if is_global else "the enclosing variable"
        roots.append((read(), f"{kind} {name}"))
    for name, value in (arguments or {}).items():
        if _keyed_by_identity(value):
            roots.append((value, f"argument {name}"))
    receiver = getattr(inspect.unwrap(step), "__self__", None)
    if receiver is not None and not isinstance(receiver, types.ModuleType):
        roots.append((receiver, "the object the step is a method of"))
    for called in watcher.called.values():
        global_names, _ = side_effects._names_read(called.code)
        for name in global_names:
            if name not in called.globals:
                continue
            value = called.globals[name]
            if not _guarded(value):
                continue
            label = f"the global {name} read by {called.where}"
            found.append(ValueGuard(functools.partial(called.globals.__getitem__, name),
                                    label, value))
            roots.append((value, label))
        for name, read in _cells_of(called).items():
            # The enclosing variables it reads, live (a setter may rebind one), and their
            # contents (a config dict a loss helper closes over).
            value = read()
            label = f"{name} of the function enclosing {called.where}"
            if _guarded(value):
                found.append(ValueGuard(read, label, value))
                roots.append((value, label))
        if called.function is not None:
            found += _definition_guards(called.function, called.where)
            for index, default in enumerate(called.function.__defaults__ or ()):
                roots.append((default, f"default {index} of {called.where}"))
            if called.function.__kwdefaults__:
                roots.append((called.function.__kwdefaults__,
                              f"keyword defaults of {called.where}"))
        if called.receiver is not None:
            roots.append((called.receiver, f"self of {called.where}"))
            if called.function is not None:  # the method the object's class has now
                name = called.code.co_name
                found.append(PathGuard(functools.partial(_constant, called.receiver),
                                       (("method", name),), f"{name} of {called.where}"))
    seen: set[int] = set()
    for value, label in roots:
        found += _content_guards(value, label, seen)
    found += _path_guards(watcher, step, arguments or {})
    return [guard for guard in found if getattr(guard, "token", True) is not None]


def _keyed_by_identity(value: Any) -> bool:
    """An argument guards.key_of keys by identity (a config object, a NumPy array, a set,
    a Module): the variant holds that object, whose contents it must guard itself."""
    from minigrad.core.variable import Variable

    if value is None or isinstance(value, (*_PLAIN, Variable, type, types.ModuleType)):
        return False
    return type(value) not in (tuple, list, dict)


def _cell_contents(cell: Any) -> Any:
    return cell.cell_contents


def _path_guards(watcher: CallWatcher, step: Any, arguments: dict) -> list[PathGuard]:
    """A PathGuard for each access path the step's code and the code it called read
    (side_effects.access_paths: `mod.SCALE`, `self.scale`, `cfg["a"]["b"]["c"]["d"]`), at
    any depth, from where each root was found."""
    # (code, root name -> read it now, receiver, globals)
    readers: list[tuple[Any, dict, Any, dict]] = []
    function = side_effects.function_of(step)
    if function is not None:
        roots = {name: read for name, _, read in side_effects.name_readers(step)}
        receiver = getattr(inspect.unwrap(step), "__self__", None)
        for name, value in arguments.items():
            if _keyed_by_identity(value):  # the very object the variant is keyed by
                roots[name] = functools.partial(_constant, value)
        readers.append((function.__code__, roots, receiver, function.__globals__))
    for called in watcher.called.values():
        roots = {}
        for name in side_effects._names_read(called.code)[0]:
            if name in called.globals:
                roots[name] = functools.partial(called.globals.__getitem__, name)
        roots.update(_cells_of(called))
        readers.append((called.code, roots, called.receiver, called.globals))
    found: list[PathGuard] = []
    seen: set[tuple] = set()
    for code, roots, receiver, namespace in readers:
        first = code.co_varnames[0] if receiver is not None and code.co_argcount else None
        for kind, name, steps in side_effects.access_paths(code, first):
            if not steps:
                continue  # the name itself: ValueGuards and ContentGuards watch those
            if kind == "self":
                read = functools.partial(_constant, receiver)
            elif kind == "globals()":
                read = functools.partial(_constant, namespace)
            elif kind == "module":
                read = functools.partial(sys.modules.__getitem__, name)
            elif name in roots:  # a global, an enclosing variable, an argument
                read = roots[name]
            else:
                continue
            try:
                root = read()
            except (KeyError, ValueError, NameError):
                continue
            followed = _followable(root, steps)
            _refuse_numpy_work(root, followed, steps, name, code)
            steps = followed
            key = (id(root), steps)
            if not steps or key in seen:
                continue
            seen.add(key)
            label = f"{name}{_written(steps)}"
            found.append(PathGuard(read, steps, f"{label} (read in {code.co_name})"))
    return found


_LARGEST_GUARDED = 4096  # elements of a NumPy array guarded by contents before each replay


def _refuse_numpy_work(root: Any, followed: tuple, steps: tuple, name: str, code: Any) -> None:
    """A NumPy array from outside that Python works on (`float(a.mean())`, `a.sum()`):
    guarded by contents up to _LARGEST_GUARDED elements; a larger one keeps the step
    eager, since a replay would keep what Python computed from it when traced."""
    if len(followed) == len(steps):
        return
    array = side_effects.follow(root, followed)
    if type(array) is not np.ndarray or steps[len(followed)][0] == "item":
        return
    if array.size > _LARGEST_GUARDED:
        raise CannotReplayError(
            f"{code.co_name} works in NumPy on {name}{_written(followed)}, an array of "
            f"{array.size} elements from outside the step (.{steps[len(followed)][1]}), "
            f"which a replay would not do again; pass it in as a Variable, or compute with "
            f"minigrad operations"
        )


def _definition_guards(function: Any, where: str) -> list[PathGuard]:
    """The code a called function runs and its default values: the same code object,
    defaults equal (a new `__defaults__` or `__code__` traces again)."""
    read = functools.partial(_constant, function)
    return [
        PathGuard(read, (("attr", "__code__"),), f"the code of {where}"),
        PathGuard(read, (("attr", "__defaults__"),), f"the defaults of {where}"),
    ]


def _constant(value: Any) -> Any:
    return value


def _followable(value: Any, steps: tuple) -> tuple:
    """The first steps of a path that are plain lookups: an attribute a property or
    another computed descriptor returns (a Variable's .T, .grad, .shape) ends the path
    before it, as does a Variable or an array (their values are the trace's business)."""
    from minigrad.core.variable import Variable

    kept: list[tuple] = []
    for kind, name in steps:
        if isinstance(value, Variable) or (isinstance(value, np.ndarray) and kind != "item"):
            break  # weights[0] of a NumPy array is followed; a Variable's or array's attributes not
        if kind != "item" and name != "__dict__":
            found = inspect.getattr_static(value, name, None)
            computed = hasattr(type(found), "__get__") and (
                isinstance(found, property) or hasattr(type(found), "__set__")
            )
            # A property of your own class is followed (read again before each replay);
            # minigrad's and libraries' computed attributes (a Variable's .T) are not.
            owner = value if isinstance(value, type) else type(value)
            yours = not (getattr(owner, "__module__", "") or "").startswith(
                ("minigrad", "numpy", "builtins"))
            if computed and not isinstance(found, types.MemberDescriptorType) and not (
                yours and isinstance(found, property)
            ):
                break
        try:
            value = value[name] if kind == "item" else getattr(value, name)
        except Exception:  # noqa: BLE001 (a path that fails now is not followed)
            break
        kept.append((kind, name))
    return tuple(kept)


def _written(steps: tuple) -> str:
    text = ""
    for kind, name in steps:
        text += f"[{name!r}]" if kind == "item" else f".{name}"
    return text


class TypeGuard:
    """An object's class: the same one (a layer whose __class__ is swapped runs other code)."""

    __slots__ = ("value", "kind", "label")

    def __init__(self, value: Any, label: str) -> None:
        self.value, self.kind, self.label = value, type(value), label

    def failure(self) -> str | None:
        if type(self.value) is not self.kind:
            return f"{self.label} is a {type(self.value).__name__} now, not a {self.kind.__name__}"
        return None


class CacheGuard:
    """A function under functools.lru_cache the step calls: a call that hits the cache
    runs none of its code, so what that code reads is not seen. Its results stay as
    traced until the cache is cleared, which the guard sees (fewer entries)."""

    __slots__ = ("function", "label", "size", "cleared")

    def __init__(self, function: Any, label: str) -> None:
        self.function, self.label = function, label
        self.size = function.cache_info().currsize
        self.cleared = False

    def failure(self) -> str | None:
        # Once cleared, for good: the next call fills the cache again, with what may be
        # another value, and the replay must not come back.
        if self.cleared or self.function.cache_info().currsize < self.size:
            self.cleared = True
            return f"the cache of {self.label} was cleared"
        return None


class PathGuard:
    """One access path the traced code read (`mod.SCALE`, `self.scale`, `weights[0]`,
    `cfg["a"]["b"]["c"]["d"]`, a method `a.f`), followed again before each replay: a plain
    value must be equal, a small NumPy array or a set of plain values equal in content, a
    method the same function on the same object, anything else the same object."""

    __slots__ = ("read", "steps", "label", "raw", "token", "live", "returned")

    def __init__(self, read: Any, steps: tuple, label: str) -> None:
        self.read, self.steps, self.label = read, steps, label
        self.raw = side_effects.follow(read(), steps)
        self.token = _path_token(self.raw)
        self.live = False
        # Read by the step's return alone, and read again by the replay as it returns
        # (compiled.py): any plain value will do.
        self.returned = False

    def _same_method(self) -> bool:
        """A quick check for a method path (`opt.step`): the same object, of the same
        class, which has the same function under that name and none of its own."""
        try:
            owner = side_effects.follow(self.read(), self.steps[:-1])
        except Exception:  # noqa: BLE001 (the slow path says what is gone)
            return False
        name = self.steps[-1][1]
        function = self.raw.__func__
        return (
            owner is self.raw.__self__
            and getattr(type(owner), name, None) is function
            and name not in getattr(owner, "__dict__", ())
        )

    def float_sources(self) -> list[tuple]:
        if type(self.raw) is not float:
            return []
        return [(self.raw, self.value, self.label, self.read_live, self.place())]

    def place(self) -> tuple:
        """Where the path's value is held: (id of the dict or object, key or name)."""
        holder = side_effects.follow(self.read(), self.steps[:-1])
        kind, name = self.steps[-1]
        if kind == "item":
            return (id(holder), name)
        entries = getattr(holder, "__dict__", None)
        if isinstance(entries, dict) and name in entries:
            return (id(entries), name)  # as a ContentGuard on the object names it
        return (id(holder), name)

    def read_live(self) -> None:
        self.live = True

    def value(self) -> Any:
        return side_effects.follow(self.read(), self.steps)

    def failure(self) -> str | None:
        if self.token[0] == "method" and self._same_method():
            return None
        try:
            value = self.value()
        except Exception:  # noqa: BLE001 (whatever lookup fails, the path is gone)
            return f"{self.label} is gone"
        if value is self.raw and self.token[0] not in ("array", "set"):
            return None  # the same object, not one whose contents change in place
        if self.live:
            return None if type(value) is float else f"{self.label} is no longer a float"
        if self.returned and isinstance(value, _PLAIN):
            return None
        if _path_token(value) != self.token:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else f"a {type(value).__name__}"
            return f"{self.label} changed: now {shown}"
        return None


def _contents_token(value: Any) -> tuple | None:
    if type(value) is np.ndarray and value.size <= 4096:
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if type(value) in (set, frozenset) and len(value) <= 64 and all(
        isinstance(item, _PLAIN) for item in value
    ):
        return ("set", frozenset(repr(item) for item in value))
    return None


def _path_token(value: Any) -> tuple | None:
    """How a PathGuard compares the value at the end of a path (see PathGuard)."""
    contents = _contents_token(value)
    if contents is not None:
        return contents
    if isinstance(value, _PLAIN):
        return ("value", type(value), repr(value) if isinstance(value, float) else value)
    if type(value) is tuple and all(isinstance(item, _PLAIN) for item in value):
        return ("value", tuple, repr(value))
    function = getattr(value, "__func__", None)
    owner = getattr(value, "__self__", None)
    if function is not None:  # a bound method: the same function, on the same object
        return ("method", _Same(function), _Same(owner))
    if isinstance(value, types.BuiltinMethodType) and not isinstance(owner, types.ModuleType):
        return ("builtin method", _Same(owner), value.__name__)
    return ("same", _Same(value))


def float_sources(guards: list) -> dict[int, tuple]:
    """id(float) -> (read it now, its name, stop guarding its value, the float, every
    source of it) for each float guards hold by value, at one place (a config entry seen
    as a dict item and as a path is one place): a replay may read those live. A float
    object found at two places (one literal 1.0 in two dicts) is left out: which place a
    call read cannot be told."""
    found: dict[int, list] = {}
    places: dict[int, set] = {}
    for guard in guards:
        for value, read, label, read_live, place in getattr(guard, "float_sources", list)():
            found.setdefault(id(value), []).append((read, label, read_live, value))
            places.setdefault(id(value), set()).add(place)
    return {
        key: (sources[0][0], sources[0][1], _all(sources), sources[0][3], sources)
        for key, sources in found.items()
        if len(places[key]) == 1
    }


def _all(sources: list) -> Any:
    def read_live() -> None:
        for _, _, each, _ in sources:
            each()

    return read_live


def _content_guards(value: Any, label: str, seen: set[int], depth: int = 3) -> list[Any]:
    """ContentGuards for `value` and, for a Module, every submodule; the dicts, lists and
    plain objects inside any of them too, `depth` levels down (cfg["opt"]["lr"],
    self.options["scale"], weights[1])."""
    from minigrad.nn.module import Module

    found: list[Any] = []
    if id(value) in seen or depth == 0:
        return found
    seen.add(id(value))
    if isinstance(value, Module):
        for name, module in value.named_modules():
            if id(module) in seen and module is not value:
                continue
            seen.add(id(module))
            where = f"{label}.{name}" if name else label
            settings = ContentGuard(module.__dict__, where, skip=("training",))
            settings.module = module  # its train()/eval() mode is guarded too (compiled.py)
            found.append(settings)
            found.append(TypeGuard(module, where))  # model[1].__class__ = nn.Tanh
            found.append(ContentGuard(module._modules, f"{where}'s submodules"))
            found.append(ContentGuard(module._parameters, f"{where}'s parameters"))
            seen.update((id(module.__dict__), id(module._modules), id(module._parameters)))
            for key, item in module.__dict__.items():
                if _is_container(item) or _is_module(item):
                    found += _content_guards(item, f"{where}.{key}", seen, depth - 1)
    elif _contents_token(value) is not None:  # a set, a small array: their contents
        found.append(PathGuard(functools.partial(_constant, value), (), label))
    elif type(value).__name__ == "_lru_cache_wrapper":  # functools.lru_cache / cache
        found.append(CacheGuard(value, label))
    elif type(value) is tuple:  # itself unchangeable; what it holds may change
        for index, item in enumerate(value):
            if _is_container(item) or _is_module(item) or type(item) is tuple:
                found += _content_guards(item, f"{label}[{index}]", seen, depth - 1)
    elif isinstance(value, functools.partial):
        found.append(ContentGuard(value.keywords, f"{label}.keywords"))
        for index, item in enumerate(value.args):
            if _is_container(item):
                found += _content_guards(item, f"{label}.args[{index}]", seen, depth - 1)
    elif _is_container(value):
        found.append(ContentGuard(value, label))
        entries = value.__dict__ if _is_plain_object(value) else value
        items = entries.items() if isinstance(entries, dict) else enumerate(entries)
        for key, item in list(items):
            if _is_container(item) or _is_module(item):  # a model kept in a dict or a box
                found += _content_guards(item, f"{label}[{key!r}]", seen, depth - 1)
    return found


def _is_module(value: Any) -> bool:
    from minigrad.nn.module import Module

    return isinstance(value, Module)


def _is_container(value: Any) -> bool:
    """A dict, a list or a plain object whose items a step might read (a config)."""
    return type(value) in (dict, list) or _is_plain_object(value)


def _is_plain_object(value: Any) -> bool:
    """An instance of a user's class whose attributes a step might read (a config)."""
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return False
    attributes = getattr(value, "__dict__", None)
    module = type(value).__module__ or ""
    return type(attributes) is dict and not module.startswith(("minigrad", "numpy", "builtins"))


class ContentGuard:
    """The entries of one dict (a config, a Module's __dict__, its submodules), the items of
    one list, or the attributes of a plain object: each plain value (a number, a str, a
    tuple of them) must be equal, any other object the same one, and none added or
    removed. A guard holds the container itself, so an entry set later is seen."""

    __slots__ = ("entries", "label", "expected", "skip", "floats", "raw", "watched", "size",
                 "module")

    def __init__(self, container: Any, label: str, skip: tuple = ()) -> None:
        entries = container.__dict__ if _is_plain_object(container) else container
        self.entries = entries
        self.label = label
        self.skip = skip
        items = entries.items() if isinstance(entries, dict) else enumerate(entries)
        self.expected = {key: _token(item) for key, item in items if key not in skip}
        self.floats = {key: entries[key] for key in self.expected if type(entries[key]) is float}
        # Checked before every replay: most entries are still the very same object, which
        # one `is` tells; only the others are compared by token.
        self.raw = [(key, entries[key]) for key in self.expected]
        self.watched = [key for key, token in self.expected.items() if token[0] in ("array", "set")]
        self.size = len(entries)
        self.module = None  # the Module whose __dict__ this is, if any

    def float_sources(self) -> list[tuple]:
        """(the float, how to read it now, its name, how to stop guarding its value) for
        each float entry, which a replay may read live."""
        return [
            (value, functools.partial(self.entries.__getitem__, key), f"{self.label}[{key!r}]",
             functools.partial(self.read_live, key), (id(self.entries), key))
            for key, value in self.floats.items()
        ]

    def read_live(self, key: Any) -> None:
        """The replay reads this entry at each call: only that it is a float is guarded."""
        self.expected[key] = ("a float",)

    def count(self, key: Any) -> None:
        """A counter the replay adds to (writes.py): only that it is a number is guarded."""
        self.expected[key] = ("a number",)

    def failure(self) -> str | None:
        entries, expected = self.entries, self.expected
        if type(entries) is list:
            if len(entries) != len(expected):
                return f"{self.label} has {len(entries)} items now, not {len(expected)}"
            for key, raw in self.raw:
                if entries[key] is not raw:
                    return self._changed(key)
        else:
            if len(entries) != self.size and (
                len(entries) - sum(key in entries for key in self.skip) != len(expected)
            ):
                return f"an entry was added to or removed from {self.label}"
            for key, raw in self.raw:
                if entries.get(key, _MISSING) is not raw:
                    return self._changed(key)
        for key in self.watched:  # the same array or set, its contents changed in place?
            failure = self._changed(key)
            if failure is not None:
                return failure
        return None

    def _changed(self, key: Any) -> str | None:
        """The entry at `key` is not the object it was (or may hold other contents): what
        changed, or None when it still compares equal."""
        entries, token = self.entries, self.expected[key]
        if type(entries) is not list and key not in entries:
            return f"{self.label} lost {key!r}"
        item = entries[key]
        if token[0] == "a float":
            return None if type(item) is float else f"{self.label}[{key!r}] is no longer a float"
        if token[0] == "a number":
            if type(item) in (int, float):
                return None
            return f"{self.label}[{key!r}] is no longer a number"
        if token[0] == "same":
            if item is not token[1]:
                return f"{self.label}[{key!r}] names another object now (a {type(item).__name__})"
            return None
        if _token(item) != token:
            if token[0] in ("array", "set"):
                return f"{self.label}[{key!r}] changed its contents"
            return f"{self.label}[{key!r}] changed: {token[1]!r} -> {item!r}"
        return None


_MISSING = object()


def _token(value: Any) -> tuple:
    """How a ContentGuard compares an entry: plain values by type and value, tuples of
    plain values likewise, a small NumPy array or set of plain values by content,
    anything else by identity (the object is held, so its id is not reused)."""
    if type(value) is np.ndarray and value.size <= 4096:
        return ("array", value.dtype.str, value.shape, value.tobytes(), _Same(value))
    if type(value) in (set, frozenset) and len(value) <= 64 and all(
        isinstance(item, _PLAIN) for item in value
    ):
        return ("set", frozenset(repr(item) for item in value), _Same(value))
    if isinstance(value, _PLAIN):
        return ("value", value if not isinstance(value, float) else repr(value), type(value))
    if type(value) is tuple and all(isinstance(item, _PLAIN) for item in value):
        return ("value", repr(value), tuple)
    return ("same", value)


class AllAtOnce:
    """Many guards checked by one generated function of `is` tests (as Dynamo compiles its
    guards into one function): the entries of each ContentGuard are still the very same
    objects, each outside Variable still has its array, flags and .grad as traced. When
    that holds, every one of them holds; when not, each is asked in turn, for its words."""

    __slots__ = ("guards", "check")

    def __init__(self, guards: list) -> None:
        self.guards = guards
        values: dict[str, Any] = {"_MISSING": _MISSING}
        tests: list[str] = []

        def bind(value: Any) -> str:
            name = f"v{len(values)}"
            values[name] = value
            return name

        for guard in guards:
            if isinstance(guard, ContentGuard):
                entries = bind(guard.entries)
                tests.append(f"len({entries}) == {guard.size}")
                for key, raw in guard.raw:
                    if type(guard.entries) is list:
                        tests.append(f"{entries}[{key}] is {bind(raw)}")
                    else:
                        tests.append(f"{entries}.get({bind(key)}, _MISSING) is {bind(raw)}")
                    if key in guard.watched:  # an empty set (a Module's): still empty
                        tests.append(f"not {entries}[{bind(key)}]")
            elif isinstance(guard, ValueGuard):
                tests.append(f"{_reading(guard.read, bind)} is {bind(guard.raw)}")
            elif isinstance(guard, TypeGuard):
                tests.append(f"type({bind(guard.value)}) is {bind(guard.kind)}")
            elif isinstance(guard, ModeGuard):
                tests.append(f"{bind(guard.module)}.training is {guard.training!r}")
            elif isinstance(guard, OptimizerGuard):
                groups = bind(guard.group_list)
                tests.append(f"{bind(guard.optimizer)}.param_groups is {groups}")
                tests.append(f"len({groups}) == {len(guard.groups)}")
                for index, (group, params) in enumerate(zip(guard.groups, guard.params)):
                    tests.append(f"{groups}[{index}] is {bind(group)}")
                    listed = f"{bind(group)}['params']"
                    tests.append(f"len({listed}) == {len(params)}")
                    tests += [f"{listed}[{at}] is {bind(param)}" for at, param in enumerate(params)]
            elif isinstance(guard, PathGuard):  # a method looked up on a root: opt.step
                owner = guard.raw.__self__
                name = guard.steps[0][1]
                kind = bind(type(owner))
                tests.append(f"{_reading(guard.read, bind)} is {bind(owner)}")
                tests.append(f"type({bind(owner)}) is {kind}")
                tests.append(f"getattr({kind}, {name!r}, None) is {bind(guard.raw.__func__)}")
                if isinstance(getattr(owner, "__dict__", None), dict):
                    tests.append(f"{name!r} not in {bind(owner.__dict__)}")
            else:  # a StateGuard
                variable = bind(guard.variable)
                tests.append(f"{variable}._data is {bind(guard.data)}")
                tests.append(f"{variable}._requires_grad is {guard.requires_grad!r}")
                tests.append(f"({variable}._grad is not None) is {guard.has_grad!r}")
                tests.append(f"not {variable}._retains_grad")
                tests.append(f"({variable}._accumulator_edge is None or not "
                             f"{variable}._accumulator_edge[0]._pre_hooks)")
        defaults = ", ".join(f"{name}={name}" for name in values)
        source = f"def check({defaults}):\n    return ({' and '.join(tests) or 'True'})\n"
        exec(_compiled(source), values)  # noqa: S102 (code minigrad wrote, of `is` tests)
        self.check = values["check"]

    def failure(self) -> str | None:
        try:
            if self.check():
                return None
        except Exception:  # noqa: BLE001 (an emptied cell, a key gone: each guard says)
            pass
        for guard in self.guards:
            failure = guard.failure()
            if failure is not None:
                return failure
        return None


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> types.CodeType:
    """The guard function's code: the same model traced again writes the same source
    (the objects differ, bound as defaults), so Python compiles it once."""
    return compile(source, "<minigrad.compile guards>", "exec")


def _reading(read: Any, bind: Any) -> str | None:
    """Code that reads what `read` reads, for a generated guard: a dict's item (a global),
    a cell's contents, or a constant; None for any other reader."""
    if isinstance(read, functools.partial) and len(read.args) == 1 and not read.keywords:
        owner = getattr(read.func, "__self__", None)
        if type(owner) is dict and read.func.__name__ == "__getitem__":
            return f"{bind(owner)}.get({bind(read.args[0])}, _MISSING)"
        if read.func is _cell_contents:
            return f"{bind(read.args[0])}.cell_contents"
        if read.func is _constant:
            return bind(read.args[0])
    defaults = getattr(read, "__defaults__", None)
    if defaults and type(defaults[0]).__name__ == "cell" and read.__code__.co_names == (
        "cell_contents",
    ):
        return f"{bind(defaults[0])}.cell_contents"  # side_effects.name_readers' lambda
    return None


def _foldable(guard: Any) -> bool:
    """A guard AllAtOnce can check with `is` tests alone."""
    from minigrad.compiler.guards import ModeGuard, OptimizerGuard, StateGuard

    if type(guard) in (StateGuard, TypeGuard, ModeGuard, OptimizerGuard):
        return True
    if isinstance(guard, ContentGuard):
        return all(
            token[0] not in ("a float", "a number") for token in guard.expected.values()
        ) and all(_empty_set(guard.entries[key]) for key in guard.watched)
    if isinstance(guard, ValueGuard):
        plain = not guard.live and not guard.counted and guard.contents is None
        return plain and _reading(guard.read, lambda value: "v") is not None
    if isinstance(guard, PathGuard):
        return (guard.token[0] == "method" and len(guard.steps) == 1 and not guard.live
                and not guard.returned
                and _reading(guard.read, lambda value: "v") is not None)
    return False


def _empty_set(value: Any) -> bool:
    return type(value) in (set, frozenset) and not value


def compose(guards: list) -> list:
    """The guards, with the ContentGuards that compare identities only (no array or set
    contents, no float read live) and the StateGuards folded into one AllAtOnce first."""

    folded, kept = [], []
    for guard in guards:
        (folded if _foldable(guard) else kept).append(guard)
    return ([AllAtOnce(folded)] if folded else []) + kept

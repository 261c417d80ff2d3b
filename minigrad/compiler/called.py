"""What a traced step runs beyond its own code: every Python function it calls, and the
objects their code reads.

The step's own bytecode is read before the first replay (side_effects.py, guards.py), but a
step mostly calls code: a Module's forward, a loss helper, a data augmentation. While the
step is traced (never while it replays), `sys.settrace` reports every Python function
that starts; those written by the user (not minigrad's, not the standard library's or an
installed package's) are collected with the globals and enclosing values they see and the
object a method runs on. After the traced run:

- their code is read as the step's is, for side effects (an attribute set on `self`, a
  global counter, a list appended to, a random number or a clock): the step stays eager and
  says where;
- the globals they read become guards (a module-level `TEMPERATURE` changed between calls
  traces again), and so do the contents of the objects the step and they reach: each
  attribute of a Module or another object and each item of a dict (`cfg["scale"] = 10.0`,
  `model.act = nn.Tanh()`), plain values by value and others by identity.

Tracing pays for this: every Python call of the two traced runs passes through the hook.
"""

from __future__ import annotations

import builtins
import functools
import os
import sys
import sysconfig
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minigrad.compiler import side_effects
from minigrad.compiler.guards import ValueGuard, _guarded

_MINIGRAD = os.path.dirname(os.path.dirname(os.path.abspath(side_effects.__file__)))
_CORE = (os.path.join(_MINIGRAD, "core") + os.sep, os.path.join(_MINIGRAD, "autodiff") + os.sep)
# A custom Function's methods, which the autodiff core calls; their ctx is the call's own.
_RUN_BY_THE_CORE = frozenset(("forward", "backward", "setup_context", "jvp", "vjp"))
_LIBRARIES = tuple(
    os.path.abspath(path) + os.sep
    for name in ("stdlib", "platstdlib", "purelib", "platlib")
    if (path := sysconfig.get_paths().get(name))
)
_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.generic)
# The methods dataclasses and namedtuples write with exec().
_GENERATED = frozenset("__init__ __new__ __repr__ __eq__ __hash__ __setattr__ __delattr__ "
                       "__lt__ __le__ __gt__ __ge__ _make _replace _asdict".split())


@dataclass
class Called:
    """One user function that ran during a traced call: its code, the names its code can
    read (builtins, globals, enclosing values), its globals dict, and the object it ran on
    (a method's self), if any."""

    code: types.CodeType
    names: dict[str, Any]
    globals: dict[str, Any]
    receiver: Any = None
    where: str = ""


@dataclass
class CallWatcher:
    """A context manager that collects, while a step is traced, the user functions it
    calls (see the module's docstring)."""

    step_code: Any
    called: dict[tuple, Called] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def __enter__(self) -> CallWatcher:
        # sys.settrace rather than sys.setprofile: it reports only the start of each Python
        # function (not every C call and return), and returning None asks for no more.
        self._previous = sys.gettrace()
        sys.settrace(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.settrace(self._previous)

    def _hook(self, frame: types.FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if code in _LIBRARY_CODE or code is self.step_code:
            return  # most calls: minigrad's own, NumPy's, the standard library's
        filename = code.co_filename
        if filename.startswith((_MINIGRAD, *_LIBRARIES, "<frozen")):
            _LIBRARY_CODE.add(code)
            return
        caller = frame.f_back
        called_by = caller.f_code.co_filename if caller is not None else ""
        if code.co_name in _RUN_BY_THE_CORE and called_by.startswith(_CORE):
            return  # a Function's forward or backward: the replay runs it as it is, or its rule
        receiver = None
        if code.co_argcount and code.co_varnames[0] == "self":
            receiver = frame.f_locals.get("self")
        key = (code, id(receiver))
        if key in self.called:
            return
        where = f"{code.co_name} ({_short(filename)}, line {frame.f_lineno})"
        if filename == "<string>":
            # Code given to exec(): nowhere to read it. Dataclasses and namedtuples make
            # their methods that way too; those only build the object they belong to.
            if code.co_name not in _GENERATED and not called_by.startswith(
                (_MINIGRAD, *_LIBRARIES)
            ):
                self.unreadable.append(where)
            return
        names = dict(vars(builtins))
        names.update(frame.f_globals)
        local = frame.f_locals
        names.update((name, local[name]) for name in code.co_freevars if name in local)
        self.called[key] = Called(code, names, frame.f_globals, receiver, where)


# The code objects found to be minigrad's or a library's, so that the next call of the same
# function costs one set lookup (tracing runs through the hook for every Python call).
_LIBRARY_CODE: set[types.CodeType] = set()


def _short(filename: str) -> str:
    """A file's name without its folder; a Jupyter cell's temporary file as what it is."""
    if "ipykernel_" in filename or filename.startswith("<ipython-input"):
        return "a notebook cell"
    return os.path.basename(filename) if filename.startswith(os.sep) else filename


def side_effects_of(watcher: CallWatcher) -> list[str]:
    """The side effects in the code the step called, as side_effects.find says them."""
    found = []
    for called in watcher.called.values():
        for effect in side_effects.find_in(called.code, called.names):
            found.append(f"{effect} (in {called.where}, which the step calls)")
    for where in watcher.unreadable:
        found.append(f"the step runs code given to exec() ({where}), which minigrad cannot "
                     f"read for side effects")
    return found


def guards_of(watcher: CallWatcher, step: Any) -> list[Any]:
    """Guards on what the step's code and the code it called read: the globals the called
    code reads, and the contents of every object reached (see the module's docstring)."""
    found: list[Any] = []
    roots: list[tuple[Any, str]] = []
    for name, is_global, read in side_effects.name_readers(step):
        kind = "the global" if is_global else "the enclosing variable"
        roots.append((read(), f"{kind} {name}"))
    for called in watcher.called.values():
        global_names, _ = side_effects._names_read(called.code)
        for name in global_names:
            if name not in called.globals:
                continue
            value = called.globals[name]
            if not _guarded(value) or isinstance(value, (type, types.FunctionType)):
                continue
            label = f"the global {name} read by {called.where}"
            found.append(ValueGuard(functools.partial(called.globals.__getitem__, name),
                                    label, value))
            roots.append((value, label))
        for name in called.code.co_freevars:
            # The enclosing variables it reads: their contents are guarded (a config dict
            # a loss helper closes over); the cells themselves are the helper's own.
            if name in called.names and _guarded(called.names[name]):
                roots.append((called.names[name], f"{name} of the function enclosing "
                                                  f"{called.where}"))
        if called.receiver is not None:
            roots.append((called.receiver, f"self of {called.where}"))
    seen: set[int] = set()
    for value, label in roots:
        found += _content_guards(value, label, seen)
    return found


def float_sources(guards: list) -> dict[int, tuple]:
    """id(float) -> (read it now, its name, stop guarding its value) for each float a
    guard holds by value (a global, a config entry): a replay may read those live. A float
    object two of them hold is left out (which one a call read cannot be told)."""
    found: dict[int, tuple] = {}
    twice: set[int] = set()
    for guard in guards:
        for value, read, label, read_live in getattr(guard, "float_sources", list)():
            if id(value) in found and found[id(value)][1] != label:
                twice.add(id(value))
            found[id(value)] = (read, label, read_live, value)
    return {key: source for key, source in found.items() if key not in twice}


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
            found.append(ContentGuard(module.__dict__, where, skip=("training",)))
            found.append(ContentGuard(module._modules, f"{where}'s submodules"))
            found.append(ContentGuard(module._parameters, f"{where}'s parameters"))
            seen.update((id(module.__dict__), id(module._modules), id(module._parameters)))
            for key, item in module.__dict__.items():
                if _is_container(item):
                    found += _content_guards(item, f"{where}.{key}", seen, depth - 1)
    elif _is_container(value):
        found.append(ContentGuard(value, label))
        entries = value.__dict__ if _is_plain_object(value) else value
        items = entries.items() if isinstance(entries, dict) else enumerate(entries)
        for key, item in list(items):
            if _is_container(item):
                found += _content_guards(item, f"{label}[{key!r}]", seen, depth - 1)
    return found


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

    __slots__ = ("entries", "label", "expected", "skip", "floats")

    def __init__(self, container: Any, label: str, skip: tuple = ()) -> None:
        entries = container.__dict__ if _is_plain_object(container) else container
        self.entries = entries
        self.label = label
        self.skip = skip
        items = entries.items() if isinstance(entries, dict) else enumerate(entries)
        self.expected = {key: _token(item) for key, item in items if key not in skip}
        self.floats = {key: entries[key] for key in self.expected if type(entries[key]) is float}

    def float_sources(self) -> list[tuple]:
        """(the float, how to read it now, its name, how to stop guarding its value) for
        each float entry, which a replay may read live."""
        return [
            (value, functools.partial(self.entries.__getitem__, key), f"{self.label}[{key!r}]",
             functools.partial(self.read_live, key))
            for key, value in self.floats.items()
        ]

    def read_live(self, key: Any) -> None:
        """The replay reads this entry at each call: only that it is a float is guarded."""
        self.expected[key] = ("a float",)

    def failure(self) -> str | None:
        entries, expected = self.entries, self.expected
        if type(entries) is list:
            if len(entries) != len(expected):
                return f"{self.label} has {len(entries)} items now, not {len(expected)}"
        elif len(entries) - sum(key in entries for key in self.skip) != len(expected):
            return f"an entry was added to or removed from {self.label}"
        for key, token in expected.items():
            if type(entries) is not list and key not in entries:
                return f"{self.label} lost {key!r}"
            item = entries[key]
            if token[0] == "a float":
                if type(item) is not float:
                    return f"{self.label}[{key!r}] is no longer a float"
                continue
            if token[0] == "same":
                if item is not token[1]:
                    return (f"{self.label}[{key!r}] names another object now (a "
                            f"{type(item).__name__})")
            elif _token(item) != token:
                return f"{self.label}[{key!r}] changed: {token[1]!r} -> {item!r}"
        return None


def _token(value: Any) -> tuple:
    """How a ContentGuard compares an entry: plain values by type and value, tuples of
    plain values likewise, anything else by identity (the object is held, so its id is
    not reused)."""
    if isinstance(value, _PLAIN):
        return ("value", value if not isinstance(value, float) else repr(value), type(value))
    if type(value) is tuple and all(isinstance(item, _PLAIN) for item in value):
        return ("value", repr(value), tuple)
    return ("same", value)

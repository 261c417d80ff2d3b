"""What a traced step runs beyond its own code: every Python function it calls.

The step's own bytecode is read before the first replay (side_effects.py), but a step
mostly calls code: a Module's forward, a loss helper, a data augmentation. While the step
is traced (never while it replays), `sys.settrace` reports every Python function that
starts; those written by the user (not minigrad's, not the standard library's or an
installed package's) are collected with the globals and enclosing values they see, the
object a method runs on and how many times each ran. After the traced run their code is
read as the step's is, for side effects (an attribute set on `self`, a global counter, a
list appended to, a random number or a clock): the step stays eager and says where, but
for the writes a replay repeats (writes.py). What they read is guarded by reads.py.

Tracing pays for this: every Python call of a watched run passes through the hook.
"""

from __future__ import annotations

import builtins
import collections
import functools
import os
import sys
import sysconfig
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from minigrad.compiler import side_effects, writes

_MINIGRAD = os.path.dirname(os.path.dirname(os.path.abspath(side_effects.__file__)))
_CORE = (os.path.join(_MINIGRAD, "core") + os.sep, os.path.join(_MINIGRAD, "autodiff") + os.sep)
# A custom Function's methods the replay runs again (its forward), called by the core.
# Its backward is read like any other code: the replay runs its operations, not its Python.
_RUN_BY_THE_CORE = frozenset(("forward", "setup_context"))
_LIBRARIES = tuple(
    os.path.abspath(path) + os.sep
    for name in ("stdlib", "platstdlib", "purelib", "platlib")
    if (path := sysconfig.get_paths().get(name))
)
_BUILTINS = vars(builtins)
# The methods dataclasses and namedtuples write with exec().
_GENERATED = frozenset("__init__ __new__ __repr__ __eq__ __hash__ __setattr__ __delattr__ "
                       "__lt__ __le__ __gt__ __ge__ _make _replace _asdict".split())


@dataclass
class Called:
    """One user function that ran during a traced call: its code, the names its code can
    read (builtins, globals, enclosing values), its globals dict, and the object it ran on
    (a method's self), if any."""

    code: types.CodeType
    names: Mapping[str, Any]  # builtins, globals and enclosing values, as a ChainMap
    globals: dict[str, Any]
    receiver: Any = None
    where: str = ""
    function: Any = None  # the function object, when the caller's namespace holds it
    calls: int = 1  # how many times the traced run called it (on this receiver)


@dataclass
class CallWatcher:
    """A context manager that collects, while a step is traced, the user functions it
    calls (see the module's docstring)."""

    step_code: Any
    called: dict[tuple, Called] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    paused: bool = False

    def __enter__(self) -> CallWatcher:
        tool = _monitoring_tool()
        if tool is not None:
            # Python 3.12+: sys.monitoring reports each function's start (PY_START) and
            # nothing else; code found to be a library's is switched off for good.
            self._tool = tool
            self._thread = threading.get_ident()
            monitoring = sys.monitoring
            monitoring.register_callback(tool, monitoring.events.PY_START, self._started)
            monitoring.set_events(tool, monitoring.events.PY_START)
            return self
        # Before 3.12, sys.settrace rather than sys.setprofile: it reports only the start
        # of each Python function (not every C call and return), and returning None asks
        # for no more. It slows every line that runs while it is on, though.
        self._tool = None
        self._previous = sys.gettrace()
        sys.settrace(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tool is not None:
            sys.monitoring.set_events(self._tool, 0)
            sys.monitoring.register_callback(self._tool, sys.monitoring.events.PY_START, None)
        else:
            sys.settrace(self._previous)

    def pause(self) -> None:
        """Stop reporting while minigrad runs a recorded operation (trace.py)."""
        if self._tool is None:
            sys.settrace(None)
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        if self._tool is None:
            sys.settrace(self._hook)

    def _started(self, code: types.CodeType, offset: int) -> Any:
        """sys.monitoring's PY_START callback: the frame that starts is the caller's.
        It hears every thread; only the traced step's counts (as with sys.settrace)."""
        if not self.paused and threading.get_ident() == self._thread:
            self._hook(sys._getframe(1), "call", None)
        return sys.monitoring.DISABLE if code in _LIBRARY_CODE else None

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
        receiver = _receiver(code, frame)
        key = (code, id(receiver))
        if key in self.called:
            self.called[key].calls += 1
            return
        where = f"{code.co_name} ({_short(filename)}, line {frame.f_lineno})"
        if filename == "<string>":
            # Code given to exec(): nowhere to read it. Dataclasses and namedtuples make
            # their methods that way too; those only build the object they belong to.
            if code.co_name not in _GENERATED:
                self.unreadable.append(where)
            return
        # A view, not a copy: copying a module's globals for each function it calls cost
        # more than the rest of the watching together.
        local = frame.f_locals
        enclosing = {name: local[name] for name in code.co_freevars if name in local}
        names = collections.ChainMap(enclosing, frame.f_globals, _BUILTINS)
        function = _function_with(code, caller, receiver)
        self.called[key] = Called(code, names, frame.f_globals, receiver, where, function)


_TOOL: list = []  # the sys.monitoring tool id minigrad.compile holds, once it has one


def _monitoring_tool() -> int | None:
    """A sys.monitoring tool id for the watcher (Python 3.12+), taken once and kept (the
    library code it switched off stays off); None before 3.12 or when all are in use."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None or os.environ.get("MINIGRAD_COMPILE_SETTRACE"):
        return None
    if not _TOOL:
        for tool in (4, 3, 5, 2):  # not the debugger's (0) nor coverage's (1) first
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "minigrad.compile")
                _TOOL.append(tool)
                break
        else:
            return None
    return _TOOL[0]


# The code objects found to be minigrad's or a library's, so that the next call of the same
# function costs one set lookup (tracing runs through the hook for every Python call).
_LIBRARY_CODE: set[types.CodeType] = set()


def _receiver(code: types.CodeType, frame: types.FrameType) -> Any:
    """The object a method runs on (its first argument, whatever its name: self, cls, s),
    when looking the function's name up on it gives this very code; else None."""
    if not code.co_argcount or not code.co_name.isidentifier():  # no name: a lambda
        return None
    first = frame.f_locals.get(code.co_varnames[0])
    if first is None:
        return None
    # Looked up on the class first: a miss on the instance may run a costly __getattr__
    # (a Variable's suggests names), and methods live on the class.
    found = _lookup(type(first), code.co_name)
    if found is None:
        found = _lookup(first, code.co_name)
    found = _lookup(found, "__func__") or found
    return first if _lookup(found, "__code__") is code else None


def _lookup(value: Any, name: str) -> Any:
    """getattr(value, name, None), for objects whose __getattr__ raises anything at all."""
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 (a user's __getattr__ may raise KeyError, ...)
        return None


def _function_with(code: types.CodeType, caller: Any, receiver: Any) -> Any:
    """The function object whose code `code` is, looked for where the call found it: the
    caller's locals and globals, or the receiver's class (for its defaults and code)."""
    if receiver is not None:
        found = _lookup(receiver, code.co_name)
        found = _lookup(found, "__func__") or found
        if _lookup(found, "__code__") is code:
            return found
    if caller is None:
        return None
    for namespace in (caller.f_locals, caller.f_globals):
        for value in namespace.values():
            # A function, a partial's function, or one kept in a list, tuple or dict.
            items = value.values() if type(value) is dict else value
            candidates = list(items) if type(value) in (list, tuple, dict) else [value]
            for candidate in candidates:
                # Functions and partials only: an attribute looked up on anything else may
                # run a costly __getattr__ (a Variable's suggests names).
                function = candidate.func if type(candidate) is functools.partial else candidate
                if type(function) in _FUNCTIONS and function.__code__ is code:
                    return function
    return None


_FUNCTIONS = (types.FunctionType, types.MethodType)


def _short(filename: str) -> str:
    """A file's name without its folder; a Jupyter cell's temporary file as what it is."""
    if "ipykernel_" in filename or filename.startswith("<ipython-input"):
        return "a notebook cell"
    return os.path.basename(filename) if filename.startswith(os.sep) else filename


def writes_of(watcher: CallWatcher) -> list[tuple]:
    """(write, the Called it is in) for each write a replay could repeat in the code the
    step called (writes.py: a counter on self), once the function object is known."""
    found = []
    for called in watcher.called.values():
        if called.function is None:
            continue
        receiver = called.code.co_varnames[0] if called.receiver is not None else None
        for write in writes.writes_in(called.function, receiver, appends=False):
            found.append((write, called))
    return found


def side_effects_of(watcher: CallWatcher, replayed: frozenset = frozenset()) -> list[str]:
    """The side effects in the code the step called, as side_effects.find says them, but
    the writes `replayed` ((code, line) of each) that the replay repeats."""
    found = []
    for called in watcher.called.values():
        lines = frozenset(line for code, line in replayed if code is called.code)
        for effect in side_effects.find_in(called.code, called.names, lines):
            found.append(f"{effect} (in {called.where}, which the step calls)")
    for where in watcher.unreadable:
        found.append(f"the step runs code given to exec() ({where}), which minigrad cannot "
                     f"read for side effects")
    return found





























































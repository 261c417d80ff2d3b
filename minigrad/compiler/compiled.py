"""minigrad.compile: trace a step once through the ordinary Functions, replay it after.

    step = minigrad.compile(step)          # or @minigrad.compile above `def step`
    for batch in batches:
        loss = step(batch)                 # calls 1 and 2 run eagerly and are traced;
                                           # then replays, while the guards hold

The first two calls run eagerly with a Recorder listening (trace.py). If both runs did
the same thing (signature.py), the second trace becomes a replay (replay.py). Each later
call checks the guards (guards.py) and replays; a failed guard traces again, and a step a
replay cannot reproduce stays eager. `explain()` says which happened and why.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minigrad import factories
from minigrad.compiler import (
    called,
    guards,
    int_tests,
    reads,
    replay,
    returned_items,
    side_effects,
    writes,
)
from minigrad.compiler.signature import first_difference, signature
from minigrad.compiler.signature import seed_argument as signature_seed
from minigrad.compiler.trace import (
    Accumulate,
    CannotReplayError,
    CopyInto,
    Opaque,
    Recorder,
    SetGrad,
    describe_place,
    optimizer_settings,
    settings_of,
)
from minigrad.core import engine
from minigrad.core.grad_mode import QUIET, state


class CompileFallbackWarning(RuntimeWarning):
    """A compiled step stopped replaying for good and runs eagerly (issued once per step)."""


class CompiledFunction:
    """A step that is traced on its first calls and replayed after; see minigrad.compile."""

    def __init__(self, fn: Callable, explain: bool = False, max_variants: int = 8) -> None:
        # A functools.partial or a callable object has no __name__: name it by its type.
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.verbose = explain
        self.max_variants = max_variants
        self.variants: dict[tuple, _Variant] = {}
        self.notes: list[str] = []
        self.trace_seconds = 0.0
        self.replays = 0
        self._last_key: tuple | None = None
        self._side_effects: list[str] | None = None  # read from the bytecode on first use
        self._returned_only: frozenset | None = None  # read from the source on first use
        self._passed_on: frozenset | None = None  # likewise
        self.step_writes: list = []  # writes.Write in the step's own code, found with those
        self._warned = False
        # Python float arguments are read live by the replays until one turns out to be
        # used in plain Python (a derived constant, a branch): then each value is a variant.
        self.floats_by_value = False
        # Set when no call can ever replay (a side effect in the code, tracing that keeps
        # failing): every call then goes straight to the function, at eager speed.
        self.eager_for_good = False
        self.traces = 0  # traced calls of all variants together
        self.new_keys_in_a_row = 0  # calls in a row that each traced a new variant
        # The int parameters the step uses only in `if` tests (int_tests.py), found once.
        self.int_tests: dict | None = None
        # Names of floats (a config entry, a global) found used in plain Python: their
        # values stay constants of the trace, guarded by value.
        self.strict_floats: set[str] = set()

    def side_effects(self) -> list[str]:
        """The Python side effects in the step's own code (side_effects.py), found once;
        but the writes a replay can repeat (writes.py), when the step's code reads them
        nowhere else (the code it calls is checked while it is traced)."""
        if self._side_effects is None:
            code = side_effects.code_of(self.fn)
            found = writes.writes_in(self.fn, writes.receiver_name(self.fn)) if code else []
            self.step_writes = [w for w in found if not writes.read_elsewhere(w, [code])]
            lines = frozenset(write.line for write in self.step_writes)
            self._side_effects = side_effects.find(self.fn, lines)
        return self._side_effects

    def returned_only(self) -> frozenset:
        """Where the step's own code calls .item() only to return the value (file, line,
        function), as trace.user_frame() names places; found once."""
        if self._returned_only is None:
            self._returned_only = self._places(returned_items.returned_only_lines)
        return self._returned_only

    def passed_on(self) -> frozenset:
        """Where the step's own code passes an .item() straight to a call; found once."""
        if self._passed_on is None:
            self._passed_on = self._places(returned_items.passed_on_lines)
        return self._passed_on

    def _places(self, lines_of: Callable) -> frozenset:
        """(file, line, function) of the step's own code for each line lines_of finds."""
        code = getattr(inspect.unwrap(self.fn), "__code__", None)
        if code is None:
            return frozenset()
        return frozenset((code.co_filename, line, code.co_name) for line in lines_of(self.fn))

    def fall_back(self, reason: str) -> None:
        """Note that a variant runs eagerly for good; warn the first time it happens."""
        self.note(f"eager: {reason}")
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"minigrad.compile({self.__name__}) runs eagerly from now on: {reason}. "
                f"See {self.__name__}.explain().",
                CompileFallbackWarning,
                stacklevel=_user_stacklevel(),
            )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.eager_for_good:
            return self.fn(*args, **kwargs)
        if state.listener is not QUIET:
            # Called inside a step another minigrad.compile is tracing: run the Python, so
            # that the outer trace records what it does (a replay here would hide it).
            return self.fn(*args, **kwargs)
        if state.anomaly_enabled:
            self.note(f"eager: {guards.anomaly_mode_failure()}")
            return self.fn(*args, **kwargs)
        if (args or kwargs) and _has_iterator(args, kwargs):
            self.note("eager: an argument is an iterator, which the step may advance and a "
                      "replay would not; pass the items it takes instead")
            return self.fn(*args, **kwargs)
        if self.int_tests is None and (args or kwargs) and _has_int(args, kwargs):
            self.int_tests = int_tests.tests_of(self.fn)  # read once, when an int comes
        key = guards.key_of(args, kwargs, self.floats_by_value, self.int_tests)
        variant = self.variants.get(key)
        if variant is None:
            if len(self.variants) >= self.max_variants:
                change = guards.describe_key_change(self._last_key, key) if self._last_key else ""
                self.fall_back(
                    f"{self.max_variants} variants traced already, no more (the last new key: "
                    f"{change}); an int, str or other object argument is part of the key, "
                    f"by value, unless the step uses an int only in `if` tests; a number that "
                    f"changes on every call replays when it is passed as a float and only "
                    f"passed into operations"
                )
                if self.replays == 0:  # none of them ever replayed: stop keying calls
                    self.eager_for_good = True
                return self.fn(*args, **kwargs)
            if self._last_key is not None:
                change = guards.describe_key_change(self._last_key, key)
                self.note(f"guard failed: {change}; tracing a new variant")
                self.new_keys_in_a_row += 1
                if self.new_keys_in_a_row >= _NEW_KEYS_IN_A_ROW and self.replays == 0:
                    # Every call so far came with another key (a call counter passed as an
                    # int): each would be traced and none replayed. Stop paying for it.
                    self.eager_for_good = True
                    self.fall_back(
                        f"each of the first {self.new_keys_in_a_row + 1} calls had a new key "
                        f"(the last change: {change}), so none could replay; an int, str or "
                        f"other object argument is part of the key, by value, unless the step "
                        f"uses an int only in `if` tests or passes it straight to "
                        f"torch.manual_seed(k); pass a number that changes on every call as a "
                        f"float that only goes into operations, or keep it out of the step"
                    )
                    return self.fn(*args, **kwargs)
            variant = self.variants[key] = _Variant(self)
        else:
            self.new_keys_in_a_row = 0
        self._last_key = key
        return variant(args, kwargs)

    def note(self, text: str) -> None:
        """Keep what happened for explain(); print it too with explain=True."""
        if not self.notes or self.notes[-1] != text:
            self.notes.append(text)
            if self.verbose:
                print(f"minigrad.compile({self.__name__}): {text}")

    def tape(self) -> str:
        """What the replay of the latest variant does, one line per traced event."""
        for variant in reversed(list(self.variants.values())):
            if variant.replay is not None:
                return "\n".join(variant.replay.listing)
        return "(no replay yet: a step is traced on its first calls, or it stays eager)"

    def explain(self) -> str:
        """Why each variant replays or stays eager, and what made it trace again."""
        summary = (
            f"minigrad.compile({self.__name__}): {len(self.variants)} variant(s), "
            f"{self.replays} replay(s), tracing took {self.trace_seconds * 1e3:.1f} ms"
        )
        lines = [summary]
        for number, variant in enumerate(self.variants.values(), 1):
            lines.append(f"  variant {number}: {variant.status()}")
        lines.extend(f"  - {text}" for text in self.notes)
        return "\n".join(lines)


def _target_words(write: Any) -> str:
    kind, *rest = write.target
    if kind == "name":
        return rest[0]
    root, key = rest
    return f"{root}.{key}" if kind == "attr" else f"{root}[{key!r}]"


def _relax(python_guards: list, write: Any, holder: tuple) -> None:
    """The guards on what a repeated write changes: its type only, not its value (a
    counter) or contents (a list appended to), which the replay keeps up to date."""
    owner, key, how = holder
    if write.kind == "append":
        target = owner[key] if how == "item" else getattr(owner, key)
        python_guards[:] = [
            guard for guard in python_guards if getattr(guard, "entries", None) is not target
        ]
        return
    entries = owner if how == "item" else getattr(owner, "__dict__", None)
    for guard in python_guards:
        if isinstance(guard, reads.ContentGuard) and guard.entries is entries:
            if key in guard.expected:
                guard.count(key)
        elif isinstance(guard, guards.ValueGuard):
            read = guard.read
            cell = getattr(read, "args", (None,))[0] if hasattr(read, "args") else None
            if cell is None and getattr(read, "__defaults__", None):
                cell = read.__defaults__[0]  # side_effects.name_readers' lambda cell=cell
            if (how == "item" and getattr(read, "args", None) == (key,)
                    and getattr(read.func, "__self__", None) is owner) or cell is owner:
                guard.counted = True


def _by_name(fn: Any, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by parameter name ({} when they cannot be bound)."""
    try:
        return dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return {}


def _has_iterator(args: tuple, kwargs: dict) -> bool:
    return any(hasattr(type(value), "__next__") for value in (*args, *kwargs.values()))


def _has_int(args: tuple, kwargs: dict) -> bool:
    return any(type(value) is int for value in (*args, *kwargs.values()))


def _user_stacklevel() -> int:
    """The stacklevel for warnings.warn that names the caller of the compiled step."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("minigrad.compiler"):
        level += 1
        frame = frame.f_back
    return level


# Checks of new float values (traced runs) after which a float that is new on most calls
# makes the variant eager.
_VERIFICATIONS = 3
# Calls in a row, from the first, each with a key never seen (an int counter passed in),
# after which a step that has not replayed yet runs eagerly for good.
_NEW_KEYS_IN_A_ROW = 4
# How many eager runs may pass before two in a row agree (warm-up steps differ).
_TRACES_TO_AGREE = 3
# Traced calls of all variants together after which a function that replays less often
# than it traces runs eagerly for good (each variant traces at least twice).
_TRACE_BUDGET = 24


class _Variant:
    """One key's story: traced twice, then replayed while its state guards hold."""

    def __init__(self, owner: CompiledFunction) -> None:
        self.owner = owner
        # (trace, signature, float values) of the traced runs no other has agreed with yet:
        # the next is compared with each (a batch whose mask holds as many True values as
        # one two calls ago still pairs with it)
        self.pending: list[tuple] = []
        self.replay: replay.Replay | None = None
        self.guards: list[Any] = []  # guards.StateGuard, ValueGuard, OptimizerGuard
        self.eager_reason: str | None = None
        self.traces = 0  # every traced run of this variant
        self.optimizers: dict[int, Any] = {}  # id -> an object whose step() a trace called
        self.tries = 0  # traced runs since the last replay was built (or since the start)
        self.signature: list | None = None  # of the trace the replay was built from
        self.built = False  # whether a replay was ever built (a hook's code then passes)
        self.verified: set[tuple] = set()  # float argument values a trace showed it fits
        self.calls = 0
        self.verifications = 0
        # (read it now, name) of each float a guard holds that the replay reads live (a
        # config entry, a global), and the values of them checked by a traced run
        self.live: list[tuple] = []
        self.live_verified: set[tuple] = set()
        # Replays built earlier whose guards failed (eval() mode, a .grad present, a hook):
        # kept, so that the step switches back when those guards hold again.
        self.others: list[_Alternative] = []
        # Why calls run eagerly, untraced, until the guards of one of the others hold again
        # (a trace found something no replay can do, such as a hook, after replays existed).
        self.blocked: str | None = None

    def status(self) -> str:
        if self.eager_reason is not None:
            return f"eager: {self.eager_reason}"
        if self.replay is not None:
            return f"replaying {len(self.replay.steps)} steps"
        return "tracing"

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        owner = self.owner
        if self.eager_reason is not None:
            return owner.fn(*args, **kwargs)
        self.calls += 1
        if self.replay is None and self.others and not self._switch() and self.blocked:
            return owner.fn(*args, **kwargs)
        if self.replay is not None:
            failure = self._failed_guard()
            if failure is not None and self._switch():
                failure = None
            if failure is None and self.live:
                values = self._live_values()
                if values not in self.live_verified:
                    return self._verify_live(args, kwargs, values)
            if failure is None and self.replay.float_paths:
                values = self.replay.float_values(args, kwargs)
                if values not in self.verified:
                    return self._verify(args, kwargs, values)
            if failure is None:
                try:
                    return self._replay_any(args, kwargs)
                except replay.AssumptionFailedError as failed:
                    failure = str(failed)
            owner.note(f"guard failed: {failure}; tracing again")
            self._stash()
            if self.traces >= 2 * owner.max_variants:
                self.eager_reason = (
                    f"traced too often (guards keep failing; the last: {failure}); a number "
                    f"that changes between calls replays when it is passed in as a float "
                    f"argument"
                )
                owner.fall_back(self.eager_reason)
                return owner.fn(*args, **kwargs)
        return self._trace(args, kwargs)

    def _failed_guard(self, guards: list | None = None) -> str | None:
        for guard in self.guards if guards is None else guards:
            failure = guard.failure()
            if failure is not None:
                return failure
        return None

    def _replay_any(self, args: tuple, kwargs: dict) -> Any:
        """Run the current replay; when what it assumed of this call's values does not hold
        (a mask with another count), each other replay whose guards hold, in turn. Raises
        the first AssumptionFailedError when none fits."""
        try:
            return self._run_replay(args, kwargs)
        except replay.AssumptionFailedError as failed:
            first = failed
            if str(failed).startswith(_NOT_KEPT):
                self.replay = None  # wrong for every call from now on
        for other in list(self.others):
            if self._failed_guard(other.guards) is not None:
                continue
            self.others.remove(other)
            self._stash()
            self._install(other)
            try:
                return self._run_replay(args, kwargs)
            except replay.AssumptionFailedError as failed:
                if str(failed).startswith(_NOT_KEPT):
                    self.replay = None
        raise first

    def _returned_paths(self, python_guards: list) -> dict:
        """id(value) -> read it again, for each plain value the step's return reads from an
        access path (`"lr": opt.param_groups[0]["lr"]`): a replay returns it read again,
        at the same moment, the end of the step."""
        written = returned_items.returned_paths(self.owner.fn)
        if not written:
            return {}
        found = {}
        for guard in python_guards:
            text = guard.label.split(" (read in")[0] if isinstance(guard, reads.PathGuard) else ""
            if text in written and isinstance(guard.raw, reads._PLAIN):
                found[id(guard.raw)] = guard.value
                if written[text]:  # read by the return alone: any value, read again
                    guard.returned = True
        return found

    def _writes(self, trace: Any) -> list[tuple]:
        """(write, where it runs) for each write the replay will repeat (writes.py): the
        step's and those in the code it called, read nowhere else in any of that code.
        A write of the step's read elsewhere keeps it eager, as other side effects do; so
        does any write when the step makes a call run as a whole whose Python is not
        watched (a scheduler's lr_lambda might read the count mid-step)."""
        step_code = side_effects.code_of(self.owner.fn)
        codes = [step_code, *(each.code for each in self.watcher.called.values())]
        found = [(write, None) for write in self.owner.step_writes]
        found += called.writes_of(self.watcher)
        unwatched = any(
            type(event) is Opaque and event.gradients is None
            and event.call.func is not factories._reseed
            for event in trace.events
        )
        kept = []
        for write, where in found:
            if not unwatched and not writes.read_elsewhere(write, codes):
                kept.append((write, where))
            elif where is None:
                raise CannotReplayError(
                    f"line {write.line} of {write.code.co_name} writes to "
                    f"{_target_words(write)}, which code the step runs reads too: a Python "
                    f"side effect a replay would not repeat; move it out of the step"
                )
        return kept

    def _repeat_writes(self, repeated: list, python_guards: list) -> None:
        """Bind each write to what it writes to, have the replay repeat it after its
        array work, and guard only the type of what it changes."""
        fn = self.owner.fn
        function = side_effects.function_of(fn)
        for write, where in repeated:
            if where is None:
                namespace = function.__globals__
                cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
                receiver, calls = getattr(inspect.unwrap(fn), "__self__", None), 1
            else:
                namespace = where.globals
                function_of = where.function
                cells = dict(zip(where.code.co_freevars, function_of.__closure__ or ()))
                receiver, calls = where.receiver, where.calls
            try:
                holder = writes.holder_of(write, namespace, cells, receiver)
            except (KeyError, ValueError, AttributeError):
                raise CannotReplayError(
                    f"line {write.line} of {write.code.co_name} writes to "
                    f"{_target_words(write)}, which could not be found again"
                ) from None
            if not writes.yours(holder[0]):
                raise CannotReplayError(
                    f"line {write.line} of {write.code.co_name} writes to "
                    f"{_target_words(write)} of a {type(holder[0]).__name__}, whose own code "
                    f"may read it: a Python side effect a replay would not repeat"
                )
            now = holder[0][holder[1]] if holder[2] == "item" else getattr(*holder[:2])
            plain = type(now) in (int, float) if write.kind == "add" else isinstance(now, list)
            if not plain:  # a Variable counter: an in-place operation, recorded as such
                raise CannotReplayError(
                    f"line {write.line} of {write.code.co_name} writes to "
                    f"{_target_words(write)}, a {type(now).__name__}: a Python side effect a "
                    f"replay would not repeat"
                )
            run = writes.repeat(write, holder, calls, self.replay.items_at)
            if run is None:
                raise CannotReplayError(
                    f"line {write.line} of {write.code.co_name} appends a value the trace "
                    f"did not read with .item()"
                )
            self.replay.after.append(run)
            _relax(python_guards, write, holder)
        if repeated:
            self.owner.note(
                "the replay repeats these Python writes after its array work: "
                + ", ".join(f"line {w.line} of {w.code.co_name} ({_target_words(w)})"
                            for w, _ in repeated)
            )

    def _arguments(self, args: tuple, kwargs: dict) -> Any:
        """replay.argument_arrays, with `seeds`: (path, value, places) of each int argument
        the step's code passes to manual_seed (int_tests.seeds_of), as signature() and the
        replay read them."""
        arguments = replay.argument_arrays(args, kwargs)
        arguments.seeds = []
        tests = self.owner.int_tests
        if not tests:
            return arguments
        code = side_effects.code_of(self.owner.fn)
        for name, lines in int_tests.seeds_of(self.owner.fn).items():
            if name not in tests:
                continue  # used some other way too: keyed by value
            path = ("kwargs", name) if name in kwargs else None
            for key, listed in tests.items():  # its position: the key with the same tests
                if path is None and key.isdigit() and listed is tests[name]:
                    path = ("args", int(key)) if int(key) < len(args) else None
            value = None if path is None else replay.argument_at(args, kwargs, path)
            if type(value) is int:
                places = frozenset((code.co_filename, line, code.co_name) for line in lines)
                arguments.seeds.append((path, value, places))
        return arguments

    def _unseeded(self, trace: Any, arguments: Any) -> bool:
        """Whether an int argument keyed as a seed (int_tests.py) did not reach minigrad's
        manual_seed in this run (another library's, or another generator's): then it is
        keyed by its value from now on, and the variants traced so far are dropped."""
        reached = {
            signature_seed(event, arguments)
            for event in trace.events if type(event) is Opaque
        }
        missed = [path for path, _, _ in arguments.seeds if path not in reached]
        if not missed:
            return False
        owner = self.owner
        tests = owner.int_tests
        for path in missed:
            listed = tests.get(str(path[1]))
            for key in [key for key, value in tests.items() if value is listed or key == path[1]]:
                del tests[key]
        places = ", ".join(replay.place_name(path) for path in missed)
        owner.note(f"the int argument {places}, passed to a manual_seed(), did not seed "
                   f"minigrad's generator in this run (another generator's?): each of its "
                   f"values is a variant of its own from now on")
        owner.variants.clear()
        owner._last_key = None
        return True

    def _install(self, other: _Alternative) -> None:
        self.replay, self.guards = other.replay, other.guards
        self.signature, self.verified = other.signature, other.verified
        self.live, self.live_verified = other.live, other.live_verified

    def _read_live(self, live: dict) -> list[tuple]:
        """Stop guarding the values of the floats the replay reads live (elementwise calls
        only, nowhere else): (read it now, name) of each."""
        found = []
        for key in self.replay.live_used - self.replay.fixed_used:
            _, label, read_live, _, sources = live[key]
            read_live()  # every guard that holds it
            found.append(([read for read, *_ in sources], label))
        return found

    def _live_values(self) -> tuple:
        return tuple(repr(read()) for readers, _ in self.live for read in readers)

    def _live_now(self) -> dict[int, str]:
        """id -> name of the floats read live, as they are now (for signature())."""
        now: dict[int, str] = {}
        for readers, label in self.live:
            for read in readers:
                now.setdefault(id(read()), label)
        return now

    def _verify_live(self, args: tuple, kwargs: dict, values: tuple) -> Any:
        """A float the replay reads live (a config entry, a global) has a new value: run the
        step eagerly, traced and watched, once. The same trace (the float only passed
        into elementwise operations, no other Python path): replay this value from now
        on. Else that float is a constant of every later trace, as other numbers are."""
        owner = self.owner
        start = time.perf_counter()
        trace, returned = self._record(args, kwargs)
        owner.trace_seconds += time.perf_counter() - start
        arguments = self._arguments(args, kwargs)
        called_now = {code for code, _ in self.watcher.called}
        same_code = called_now <= self.replay.called_code and not self.watcher.unreadable
        current = signature(trace, arguments, self._live_now())
        names = ", ".join(label for _, label in self.live)
        if same_code and not trace.problems and current == self.signature:
            self.live_verified.add(values)
            if len(self.live_verified) == 2:
                owner.note(f"{names}: a new value, checked by a traced eager run; it only "
                           f"passes into operations, so replays read it live (each new "
                           f"value is checked once)")
            return returned
        owner.note(f"guard failed: {names} changed and is used in plain Python (a value "
                   f"computed from it, or a branch on it); tracing again, with its value a "
                   f"constant of the trace")
        owner.strict_floats.update(label for _, label in self.live)
        self.replay = None  # its guards no longer check those values: never use it again
        return returned

    def _stash(self) -> None:
        """Keep the current replay among the others (the oldest goes past _ALTERNATIVES)."""
        if self.replay is not None:
            self.others.insert(0, _Alternative(self.replay, self.guards, self.signature,
                                               self.verified, self.live, self.live_verified))
            del self.others[_ALTERNATIVES:]
        self.replay, self.guards = None, []

    def _switch(self) -> bool:
        """Make current another replay whose guards all hold now (the one used last first)."""
        for index, other in enumerate(self.others):
            if self._failed_guard(other.guards) is None:
                del self.others[index]
                self._stash()
                if self.blocked is not None:
                    self.owner.note("the replay's guards hold again: replaying")
                    self.blocked = None
                self._install(other)
                return True
        return False

    def _run_replay(self, args: tuple, kwargs: dict) -> Any:
        previous = state.grad_enabled
        state.grad_enabled = False  # the replay records nothing
        try:
            result = self.replay.run(args, kwargs)
        finally:
            state.grad_enabled = previous
        self.owner.replays += 1
        return result

    def _record(self, args: tuple, kwargs: dict, watch: bool = True) -> tuple:
        """Run the step eagerly with a Recorder: (the trace, what the step returned). With
        `watch`, the Python functions it calls are collected on the way, in self.watcher
        (called.py)."""
        recorder = Recorder()
        state.listener = recorder
        engine._step_observers.append(recorder.node_ran)
        watcher = called.CallWatcher(side_effects.code_of(self.owner.fn))
        if watch:
            self.watcher = watcher
            recorder.watcher = watcher
        try:
            if watch:
                with watcher:
                    returned = self.owner.fn(*args, **kwargs)
            else:
                returned = self.owner.fn(*args, **kwargs)
        finally:
            state.listener = QUIET
            engine._step_observers.remove(recorder.node_ran)
        return recorder.trace, returned

    def _verify(self, args: tuple, kwargs: dict, values: tuple) -> Any:
        """New values of float arguments: run the step eagerly with a Recorder once. When
        the trace is the replay's, the floats only pass into operations as they are (a
        replay reads them live): replay these values from now on. When it is not (a
        constant computed from one, a branch on one), key every float by value."""
        owner = self.owner
        start = time.perf_counter()
        # Watched: a branch on the new value may call code the traced run never called (a
        # helper that logs), which the replay's analysis has not read.
        trace, returned = self._record(args, kwargs)
        owner.trace_seconds += time.perf_counter() - start
        self.verifications += 1
        arguments = self._arguments(args, kwargs)
        called_now = {code for code, _ in self.watcher.called}
        same_code = called_now <= self.replay.called_code and not self.watcher.unreadable
        current = signature(trace, arguments, self._live_now())
        if same_code and not trace.problems and current == self.signature:
            self.verified.add(values)
            if self.verifications == 1:  # later values are checked the same way, unnoted
                owner.note(
                    f"new float argument value(s) {', '.join(values)} checked by a traced "
                    f"eager run: they only pass into operations, so replays read them live "
                    f"(each new value is checked once)"
                )
            # A float that takes a new value on most calls (an lr passed in, changed every
            # step) costs a traced run each time: stop after a few rather than after many.
            if self.verifications >= _VERIFICATIONS and 2 * self.verifications > self.calls:
                self.eager_reason = (
                    "a float argument changes on most calls, and each new value is checked "
                    "by a traced eager run; pass it in a Variable (a 0-d array) instead"
                )
                owner.fall_back(self.eager_reason)
            return returned
        owner.note(
            "guard failed: a float argument is used in plain Python (a value computed from "
            "it, or a branch on it), not only passed to operations; each float value is its "
            "own variant from now on"
        )
        owner.floats_by_value = True
        owner.variants.clear()
        owner._last_key = None
        return returned

    def _trace(self, args: tuple, kwargs: dict) -> Any:
        """Run the step eagerly with a Recorder; on the second run, build the replay."""
        effects = self.owner.side_effects()
        if effects:  # in the step's own code, read before any tracing: no call can replay
            self.owner.eager_for_good = True
            self.eager_reason = effects[0]
            self.owner.fall_back(self.eager_reason)
            return self.owner.fn(*args, **kwargs)
        start = time.perf_counter()
        # The settings (lr, ...) of the optimizers earlier traces stepped, as the call finds
        # them: Python code in the step that changes them before step() is not replayed.
        settings_before = {key: optimizer_settings(owner) for key, owner in self.optimizers.items()}
        modes_before = guards.module_modes(self.owner.fn)  # train() / eval(), as it starts
        # The Python functions the step calls are watched (called.py) in the run a replay
        # would be built from, the second of two that agree: the replay's guards then hold
        # only while Python would take that run's path. The first of the two is only
        # compared, which halves what watching costs.
        # After a failed guard too: the first call after a change may take its own path
        # (a cache filled on first use, a buffer made lazily), which only a second run shows.
        watched = bool(self.pending)
        trace, returned = self._record(args, kwargs, watch=watched)
        self.traces += 1
        self.tries += 1
        self.owner.traces += 1
        arguments = self._arguments(args, kwargs)
        try:
            repeated = self._writes(trace) if watched else []
            replayed = frozenset((write.code, write.line) for write, _ in repeated)
            effects = called.side_effects_of(self.watcher, replayed) if watched else []
            if effects:  # in the code the step calls: no call that runs it can replay
                # (unless it ran only this time, a hook added for a while: then an earlier
                # replay resumes when its guards hold)
                self.owner.eager_for_good = not self.built
                raise CannotReplayError(effects[0])
            if trace.problems:
                raise CannotReplayError(trace.problems[0])
            for key, variable in trace.owners.items():
                if key in arguments and _changed_by(trace, variable):
                    raise CannotReplayError(
                        "the step sets .grad or changes the data of one of its arguments; "
                        "pass parameters through a closure or a module instead"
                    )
            _check_settings_kept(trace)
            _check_settings_untouched(trace, settings_before)
            for event in trace.events:
                if type(event) is Opaque and event.settings is not None:
                    self.optimizers.setdefault(id(event.call.args[0]), event.call.args[0])
            if arguments.seeds and self._unseeded(trace, arguments):
                self.owner.trace_seconds += time.perf_counter() - start
                return returned
            current = signature(trace, arguments)
            match = next(
                (run for run in reversed(self.pending) if _agree(run[0], run[1], trace, current)),
                None,
            )
            if self.pending and match is None:
                # A first step often differs (no .grad to zero yet, optimizer state to
                # make): compare the next ones, up to a few times; a few more when only
                # library branches on values differ (a mask's count), which may come back.
                difference = first_difference(self.pending[-1][1], current, trace.events)
                limit = 2 * _TRACES_TO_AGREE if "(assume)" in difference else _TRACES_TO_AGREE
                if self.tries >= limit:
                    raise CannotReplayError(difference)
            values = replay.float_values(replay.float_paths(arguments), args, kwargs)
            if match is None:
                self.pending.append((trace, current, values))
                del self.pending[:-_PENDING]
            else:
                self._stash()
                python_guards = guards.value_guards(self.owner.fn)
                python_guards += reads.guards_of(self.watcher, self.owner.fn,
                                                  _by_name(self.owner.fn, args, kwargs))
                live = {
                    key: source
                    for key, source in reads.float_sources(python_guards).items()
                    if source[1] not in self.owner.strict_floats
                }
                appended = frozenset(
                    (w.code.co_filename, w.item_line, w.code.co_name)
                    for w, _ in repeated if w.kind == "append"
                )
                self.replay = replay.build(trace, arguments, returned, match[0],
                                           lambda: self.owner.returned_only() | appended, live,
                                           appended, self.owner.passed_on,
                                           self._returned_paths(python_guards))
                for event in trace.events:
                    seed = signature_seed(event, arguments) if type(event) is Opaque else None
                    if seed is not None:
                        replay.seed_from_argument(self.replay, event.call, seed)
                self._repeat_writes(repeated, python_guards)
                self.replay.called_code = frozenset(code for code, _ in self.watcher.called)
                self.live = self._read_live(live)
                live_now = self._live_now()
                self.signature = signature(trace, arguments, live_now) if live_now else current
                self.verified = {values, match[2]}
                self.live_verified = {self._live_values()}
                self.guards = [
                    guards.StateGuard(variable, trace.had_grad[id(variable._data)])
                    for variable in self.replay.outside
                ]
                self.guards += python_guards
                self.guards += [guards.OptimizerGuard(owner) for owner in self.optimizers.values()]
                self.guards += [guards.ItemGuard(*read) for read in self.replay.state_items]
                self.guards += guards.mode_guards(modes_before, trace.events)
                reached = [  # models reached through containers, arguments, self
                    (guard.module, guard.module.training, guard.label)
                    for guard in python_guards if getattr(guard, "module", None) is not None
                ]
                self.guards += guards.mode_guards(reached, trace.events)
                self.guards = reads.compose(self.guards)
                self.pending = []
                self.tries = 0
                self.built = True
                self.owner.note(f"traced: replaying {len(self.replay.steps)} steps")
        except CannotReplayError as reason:
            self.pending = []
            if self.others:
                # Something that came after replays began (a hook): run eagerly while it
                # lasts, and replay again once an earlier replay's guards hold.
                self.blocked = str(reason)
                self.owner.note(f"eager while this lasts: {reason}; the earlier replay "
                                f"resumes when its guards hold again")
            else:
                self.eager_reason = str(reason)
                self.owner.fall_back(self.eager_reason)
        owner = self.owner
        if owner.traces >= _TRACE_BUDGET and owner.replays < owner.traces:
            # Tracing costs about two eager runs: stop paying it when replays do not follow.
            owner.eager_for_good = True
            owner.fall_back(
                f"{owner.traces} traced calls and only {owner.replays} replays; every call "
                f"runs eagerly from now on"
            )
        owner.trace_seconds += time.perf_counter() - start
        return returned


# Replays a variant keeps besides the one in use, for guards that flip back and forth
# (train() and eval(), a .grad present or not, a hook added then removed).
_ALTERNATIVES = 4
# Traced runs kept to be compared with the next (see _Variant.pending).
_PENDING = 3
# A failure that makes a replay wrong for good (AssumptionFailedError from Replay.run).
_NOT_KEPT = "the caller kept a .grad's array"


@dataclass
class _Alternative:
    """A replay a variant built earlier, with what it was built with."""

    replay: Any
    guards: list
    signature: list | None
    verified: set
    live: list
    live_verified: set


def _agree(first: Any, first_signature: list, second: Any, second_signature: list) -> bool:
    """Whether two traced runs did the same thing. A Variable with no .grad when one run
    began (the first call, before any backward) has none for zero_grad() to clear: its
    `.grad = None` in the other run is left out of the comparison, so that the second and
    third calls need not be traced both."""
    if first_signature == second_signature:
        return True
    differing = set()
    for key, had in first.had_grad.items():
        if key in second.had_grad and second.had_grad[key] != had:
            differing.add(id(first.owners[key]))
            differing.add(id(second.owners[key]))
    if not differing:
        return False

    def kept(token: tuple) -> bool:
        return not (token[0] == "set .grad" and token[2] is None and token[1] in differing)

    return [t for t in first_signature if kept(t)] == [t for t in second_signature if kept(t)]


def _check_settings_kept(trace: Any) -> None:
    """An optimizer's settings changed by plain Python code after its step() would not
    change in a replay, which runs no Python code. A scheduler's step() is replayed (it is
    called again, like the optimizer's), so a change with one after it is fine."""
    events = trace.events
    for index, event in enumerate(events):
        if type(event) is not Opaque or settings_of(event.call) == event.settings:
            continue
        if any(_is_scheduler_step(later) for later in events[index + 1 :]):
            continue  # changed by a call the replay makes too (scheduler.step())
        raise CannotReplayError(
            f"the step changes the settings of {type(event.call.args[0]).__name__} "
            f"(param_groups) in plain Python after its step() (at "
            f"{describe_place(event.where)}), which a replay would not redo; change them "
            f"outside the compiled step, or with an lr scheduler"
        )


def _is_scheduler_step(event: Any) -> bool:
    """An Opaque event that is a scheduler's step() (it changes an optimizer's settings)."""
    if type(event) is not Opaque or not event.call.args:
        return False
    return hasattr(event.call.args[0], "optimizer")


def _check_settings_untouched(trace: Any, before: dict) -> None:
    """An optimizer's settings changed by plain Python code in the step before its step()
    (a warm-up computed from a counter, `group["lr"] *= 0.9` in a helper) would keep their
    traced value in a replay: stay eager. A change made by a call the replay makes too (a
    scheduler's step() earlier in the step) is fine."""
    replayed_call_before = False
    for event in trace.events:
        if type(event) is not Opaque:
            continue
        owner = event.call.args[0] if event.call.args else None
        expected = before.get(id(owner))
        if expected is not None and event.settings != expected and not replayed_call_before:
            raise CannotReplayError(
                f"the step changes the settings of {type(owner).__name__} (param_groups: "
                f"{_first_change(expected, event.settings)}) in plain Python before its step() "
                f"(at {describe_place(event.where)}), which a replay would not redo; change "
                f"them outside the compiled step, or with an lr scheduler"
            )
        if hasattr(owner, "optimizer"):  # a scheduler's step() changes settings; replayed
            replayed_call_before = True


def _first_change(before: Any, after: Any) -> str:
    for group, (old, new) in enumerate(zip(before, after)):
        for (name, old_value), (_, new_value) in zip(old, new):
            if old_value != new_value:
                return f"group {group} {name!r} {old_value} -> {new_value}"
    return "the groups"


def _changed_by(trace: Any, variable: Any) -> bool:
    for event in trace.events:
        if type(event) in (Accumulate, CopyInto, SetGrad) and event.variable is variable:
            return True
    return False


def compile(  # noqa: A001 (PyTorch's name, torch.compile)
    fn: Callable | None = None, *, explain: bool = False, max_variants: int = 8
) -> Any:
    """Trace `fn` (a training step: forward, backward, update) and replay it without
    per-operation dispatch. Use as `minigrad.compile(fn)` or as a decorator, with or
    without arguments.

    Python numbers the step reads from globals or enclosing functions become constants of
    the trace (guarded: a new value traces again); pass a changing number as a float
    argument, which replays read live, or keep it in an optimizer, whose settings the
    replayed update() reads at each call. Buffers are reused: a `.grad` or intermediate
    array read after a later call holds that call's values, as with CUDA graphs.
    explain=True prints each trace, guard failure and fallback."""
    if isinstance(max_variants, bool) or not isinstance(max_variants, int):
        raise TypeError(
            f"minigrad.compile: max_variants must be an int >= 1; got "
            f"{type(max_variants).__name__} {max_variants!r}."
        )
    if max_variants < 1:
        raise ValueError(
            f"minigrad.compile: max_variants must be an int >= 1 (how many traces to keep "
            f"before running eagerly); got {max_variants!r}. To run eagerly, call the "
            f"function without compiling it."
        )
    if fn is None:
        return functools.partial(compile, explain=explain, max_variants=max_variants)
    if not callable(fn):
        raise TypeError(f"minigrad.compile needs a function to compile; got {type(fn).__name__}.")
    return CompiledFunction(fn, explain=explain, max_variants=max_variants)

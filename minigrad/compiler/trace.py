"""Recorder: what one eager run of a step did, written down as events on arrays.

minigrad.compile runs the step eagerly, through the ordinary Functions and the ordinary
engine, with a Recorder listening (a Listener: minigrad/core/grad_mode.py). Each event
names the arrays it read and wrote; arrays are told apart by identity, and the Recorder
keeps every one alive so that no identity is reused while it records.

- Call: one `Function.apply` made by the step or by the engine (a backward formula),
  with its arguments (arrays as Ref, everything else a constant), its output arrays and
  the arrays its ctx kept for backward (a mask a backward will read).
- Accumulate: the engine added a gradient into a leaf's `.grad`.
- SetGrad: the step assigned `.grad` (None, or a Variable).
- CopyInto: an in-place update wrote an array into a Variable's own data (`p -= ...`).
- Opaque: an optimizer's or scheduler's step(), replayed as one call: the optimizer's
  update() on the same arrays, or the call itself again.
- Item: `.item()` read a number out of an array.
- Assume: library code branched on an array's values (class labels); checked before each
  replay.
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minigrad.core.function import output_nr_at as saved_output_nr
from minigrad.core.grad_mode import Listener, unheard
from minigrad.core.variable import Variable
from minigrad.optim.optimizer import Optimizer


def _rules() -> dict:
    from minigrad.compiler.rules import RULES  # (rules.py imports this module's names)

    return RULES


class CannotReplayError(Exception):
    """The step does something a replay could not reproduce; it stays eager."""


def user_frame() -> tuple | None:
    """(file, line, function) of the innermost caller outside minigrad: the user's line
    that led to what is being recorded (`out = model(x)`, `loss.backward()`)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        inside = _MINIGRAD_CODE.get(code)
        if inside is None:  # asked once per code object: tracing calls this for every op
            inside = frame.f_globals.get("__name__", "").startswith("minigrad.")
            _MINIGRAD_CODE[code] = inside
        if not inside:
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


_MINIGRAD_CODE: dict = {}  # code object -> whether it is minigrad's own


def describe_place(place: tuple | None) -> str:
    """A user_frame() in words: "line 12 of step: `loss = model(x).sum()`"."""
    if place is None:
        return "inside minigrad"
    filename, line, function = place
    source = linecache.getline(filename, line).strip()
    code = f": `{source}`" if source else ""
    return f"line {line} of {function}{code}"


@dataclass(frozen=True)
class Ref:
    """An array argument of a Call, by identity; `raw` when it was passed as a NumPy array
    (an index, a constant the Python code built), not inside a Variable."""

    array: np.ndarray
    raw: bool = False


@dataclass
class Call:
    function: type
    args: tuple
    kwargs: dict
    outputs: list  # one array (or None) per output of the apply
    extras: list  # (place, array): ("saved", i) or ("attr", name) of the node
    needs_input_grad: tuple  # what the node's forward saw (it may save accordingly)
    where: tuple | None = None  # user_frame() of the call (the backward() line for a formula)


@dataclass
class Accumulate:
    variable: Variable
    gradient: np.ndarray  # what the engine added
    result: np.ndarray  # the leaf's new .grad data


@dataclass
class SetGrad:
    variable: Variable
    array: np.ndarray | None


@dataclass
class CopyInto:
    variable: Variable
    source: np.ndarray
    where: tuple | None = None


@dataclass
class Opaque:
    call: Any
    settings: Any = None  # an optimizer's param_groups settings (lr, ...) when called
    # For a minigrad optimizer's own step(): (position, group, parameter, its .grad array)
    # of each parameter it updated, so that a replay can call its update() directly.
    gradients: list | None = None
    where: tuple | None = None
    # The call's arguments after the object (a scheduler's metric) as Call keeps them: a
    # Variable among them is passed again over the replay's array for it.
    arguments: tuple = ()
    keywords: dict = field(default_factory=dict)


def gradients_of(call: Any) -> list | None:
    """What an optimizer's step() `call` will update: (position, group, parameter, .grad
    array) for each parameter with a gradient; None unless it is Optimizer.step itself."""
    owner = call.args[0] if call.args else None
    if not isinstance(owner, Optimizer) or call.func is not Optimizer.step.__wrapped__:
        return None
    if call.args[1:] or call.keywords:
        return None
    return [
        (index, group, param, param._grad._data) for index, group, param in owner._with_gradients()
    ]


def settings_of(call: Any) -> Any:
    """The settings of the optimizer whose step() `call` is: each group's values but its
    parameters (a scheduler changes "lr" there); None for anything else."""
    return optimizer_settings(call.args[0] if call.args else None)


def optimizer_settings(owner: Any) -> Any:
    """An optimizer's settings: each param group's values but its parameters; None for an
    object without param_groups."""
    groups = getattr(owner, "param_groups", None)
    if not isinstance(groups, list):
        return None
    return [
        sorted((key, repr(value)) for key, value in group.items() if key != "params")
        for group in groups
    ]


@dataclass
class Assume:
    """Library code branched on an array's values; the replay checks `holds` first."""

    array: np.ndarray
    holds: Any
    what: str


@dataclass
class Item:
    array: np.ndarray
    value: Any
    where: tuple | None = None
    variable: Any = None  # the Variable .item() was called on


@dataclass
class Trace:
    """Everything one eager run did, in order, and what it started from."""

    events: list = field(default_factory=list)
    constants: set = field(default_factory=set)  # ids of arrays the engine made (seeds)
    owners: dict = field(default_factory=dict)  # id(array) -> the Variable it came in
    had_grad: dict = field(default_factory=dict)  # id(array) -> its .grad was set, then
    # id(array) -> the leaf whose .grad it was when the step began and gradients were added
    # onto it (accumulation over calls; a GAN's G step landing on D's .grad): a replay
    # reads the leaf's .grad of the moment instead
    grads_of: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    alive: list = field(default_factory=list)  # every array seen, so no id is reused
    ran: set = field(default_factory=set)  # the graph nodes backward ran (ids; kept alive)


_PLAIN = frozenset((int, float, bool, str, type(None)))  # kept as they are


def _from_user_code() -> bool:
    """True when the code that read a value (.data, .numpy(), .tolist()) is not minigrad
    itself (a step, a lesson, a test): the first frame above those accessors decides, at
    whatever depth they call the hook from."""
    frame = sys._getframe(2)  # the accessor that called Recorder.escape
    while frame is not None and frame.f_globals.get("__name__") in _ACCESSORS:
        frame = frame.f_back
    return frame is not None and not frame.f_globals.get("__name__", "").startswith("minigrad.")


_ACCESSORS = ("minigrad.core.variable",)  # where .data and .numpy() live


class Recorder(Listener):
    """Listens to the hooks of Listener (minigrad/core/grad_mode.py) while one step runs eagerly."""

    watching = True

    def __init__(self) -> None:
        self.trace = Trace()
        # The CallWatcher while the called code is watched (compiled.py): paused inside
        # each recorded operation, where only minigrad's code runs.
        self.watcher: Any = None
        # ids of the arrays this run made (call outputs, .grad results): a .grad made in
        # the step may take more gradients (micro-batches), one found at its start may not
        self.made: set[int] = set()
        self.nodes_made: set[int] = set()  # ids of the graph nodes this run made

    def node_ran(self, node: Any, grads: list) -> None:
        """The engine is about to run `node` (an engine step observer while recording)."""
        self.trace.ran.add(id(node))
        self._keep(node)

    # -------------------------------------------------------------- what the hooks call

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        """Run the call as usual, with nothing inside it recorded, then record it."""
        watcher = self.watcher
        if watcher is not None:
            # Inside an operation runs minigrad's code only (a custom Function's forward,
            # which a replay runs again, too): no need to report each of its calls.
            watcher.pause()
        try:
            result = unheard(lambda: cls._apply_eagerly(args, kwargs))
            self._record_call(cls, args, kwargs, result)
        finally:
            if watcher is not None:
                watcher.resume()
        return result

    def opaque(self, call: Any) -> Any:
        watcher = self.watcher
        if watcher is not None:
            watcher.pause()  # as in apply: the replay calls it again, as a whole
        try:
            gradients = gradients_of(call)  # as step() will find them
            for _, _, _, array in gradients or ():
                self._keep(array)
            arguments = tuple(self._spec(value) for value in call.args[1:])
            keywords = {name: self._spec(value) for name, value in call.keywords.items()}
            result = unheard(call)
            event = Opaque(call, settings_of(call), gradients, user_frame(), arguments, keywords)
            self.trace.events.append(event)
        finally:
            if watcher is not None:
                watcher.resume()
        return result

    def accumulate(self, variable: Variable, previous: Any, gradient: Variable) -> None:
        from_before = previous is not None and id(previous._data) not in self.made
        if from_before:
            # The engine added onto it with a recorded Add: the replay reads this leaf's
            # .grad as it finds it at each call (gradient accumulation over calls).
            self._keep(previous._data)
            self.trace.grads_of.setdefault(id(previous._data), variable)
        self._watch(variable, from_before)
        result = variable._grad._data
        self._keep(gradient._data, result)
        self.made.add(id(result))
        self.trace.events.append(Accumulate(variable, gradient._data, result))

    def set_grad(self, variable: Variable, value: Any) -> None:
        self._watch(variable)
        array = None if value is None else value._data
        if array is not None:
            self._keep(array)
            # Set inside the step (zero_grad(set_to_none=False)): gradients may add onto it.
            self.made.add(id(array))
        self.trace.events.append(SetGrad(variable, array))

    def copy_into(self, variable: Variable, source: np.ndarray) -> None:
        self._watch(variable)
        self._keep(source)
        self.trace.events.append(CopyInto(variable, source, user_frame()))

    def constants(self, variables: list) -> None:
        for variable in variables:
            self._keep(variable._data)
            self.trace.constants.add(id(variable._data))

    def item(self, variable: Variable, value: Any) -> None:
        self._keep(variable._data)
        self.trace.events.append(Item(variable._data, value, user_frame(), variable))

    def gradient_hooks(self, node: Any) -> None:
        """A hook registered in this run on a Variable this run made (`h.register_hook(...)`
        in forward) is followed: its operations are recorded like a backward formula's,
        and its Python is read as any code the step calls. A hook on a leaf or on a
        Variable from before the step, or retain_grad(), is not."""
        if node._retained:
            self.unsupported(
                "retain_grad(): a replay makes no Variable to keep that gradient on; get it "
                "with torch.autograd.grad(loss, [y], retain_graph=True) before "
                "loss.backward(), which replays"
            )
        elif id(node) not in self.nodes_made or type(node).__name__ != "BackwardNode":
            self.unsupported(
                "a gradient hook on a leaf Variable (a parameter, or one made with "
                "requires_grad=True) or on a Variable from before the step: a replay would "
                "not call it; register it on a Variable the step computes (h = layer(x); "
                "h.register_hook(...)), which replays, or take it out"
            )

    def raw_read(self, op: str) -> None:
        """A backward formula (or other code outside a recorded call) read array values."""
        self.unsupported(
            f"{op} reads array values outside a recorded operation, which a replay would "
            f"not redo: NumPy work on a Variable's values in your code, or a minigrad "
            f"operation that minigrad.compile cannot replay yet (the step runs eagerly)"
        )

    def escape(self, variable: Variable, how: str) -> None:
        if _from_user_code():
            self.unsupported(
                f"the step reads {how} of a Variable: NumPy work on it would not be replayed "
                f"(return the value, or use .item() on what the step returns; for an update "
                f"such as p.data.sub_(lr * p.grad), write `with torch.no_grad(): "
                f"p.sub_(lr * p.grad)`, which replays)"
            )

    def assume(self, array: np.ndarray, holds: Any, what: str) -> None:
        self._keep(array)
        self.trace.events.append(Assume(array, holds, what))

    def unsupported(self, reason: str) -> None:
        reason = f"{reason} (at {describe_place(user_frame())})"
        if reason not in self.trace.problems:
            self.trace.problems.append(reason)

    # -------------------------------------------------------------- recording a call

    def _record_call(self, cls: type, args: tuple, kwargs: dict, result: Any) -> None:
        spec = self._spec
        spec_args = tuple([spec(value) for value in args])
        spec_kwargs = {name: spec(value) for name, value in kwargs.items()} if kwargs else {}
        results = result if isinstance(result, tuple) else (result,)
        outputs, extras, needs = [], [], ()
        for value in results:
            if isinstance(value, Variable):
                data = value._data
                if type(data) is not np.ndarray:
                    self.unsupported(
                        f"{cls.__name__} made a {type(data).__name__} value (minigrad.compile "
                        f"replays NumPy arrays only)"
                    )
                    outputs.append(None)
                    continue
                self._keep(data)
                self.made.add(id(data))
                outputs.append(data)
                node = value.grad_fn
                if node is not None:
                    self.nodes_made.add(id(node))
                    self._keep(node)
                if node is not None and getattr(node, "_function", None) is cls and not needs:
                    extras, needs = self._kept_by(node, args, kwargs), node.needs_input_grad
            else:
                outputs.append(None)
        where = user_frame()
        self.trace.events.append(Call(cls, spec_args, spec_kwargs, outputs, extras, needs, where))

    def _kept_by(self, node: Any, args: tuple = (), kwargs: dict | None = None) -> list:
        """Arrays a node kept for its backward besides Variables: saved masks, ctx arrays,
        and the Python floats a custom Function's forward computed (not its arguments)."""
        passed = {id(value) for value in (*args, *(kwargs or {}).values())}
        extras = []
        for index, value in enumerate(node._saved or ()):
            # (A node's own output kept as a bare array is no extra: the replay remakes it.)
            if type(value) is np.ndarray and saved_output_nr(node, index) is None:
                self._keep(value)
                extras.append((("saved", index), value))
        own = not node._function.__module__.startswith("minigrad.")
        for name, value in getattr(node, "__dict__", {}).items():
            # A Python float your Function keeps (ctx.scale = float(x.abs().max())): its
            # backward passes that very object on; a replay's forward sets it again.
            computed = own and type(value) is float and id(value) not in passed
            if type(value) is np.ndarray or computed:
                self._keep(value)
                extras.append((("attr", name), value))
            elif type(value) in (tuple, list) and node._function not in _rules():
                # Arrays kept in a tuple (Clamp's shares), which its backward reads; a
                # Function with a replay rule (Index's index) makes its own.
                for index, item in enumerate(value):
                    if type(item) is np.ndarray:
                        self._keep(item)
                        extras.append((("attr", (name, index)), item))
        return extras

    def _spec(self, value: Any) -> Any:
        """An argument as the trace keeps it: arrays as Ref, containers walked."""
        if type(value) in _PLAIN:
            return value
        if isinstance(value, Variable):
            data = value._data
            if type(data) is not np.ndarray:
                self.unsupported(
                    f"a {'text' if isinstance(data, str) else type(data).__name__} Variable "
                    f"(minigrad.compile replays NumPy arrays only)"
                )
                return value
            if value.grad_fn is None:
                self._watch(value)
            self._keep(data)
            return Ref(data)
        if type(value) is np.ndarray:
            self._keep(value)
            return Ref(value, raw=True)
        if isinstance(value, (list, tuple)):
            return type(value)(self._spec(item) for item in value)
        return value

    def _watch(self, variable: Variable, had_grad: bool | None = None) -> None:
        """Remember the Variable an array first came in, and whether it had a .grad then
        (the replay's guards check both)."""
        data = variable._data
        if type(data) is np.ndarray and id(data) not in self.trace.owners:
            self._keep(data)
            self.trace.owners[id(data)] = variable
            has = variable._grad is not None if had_grad is None else had_grad
            self.trace.had_grad[id(data)] = has

    def _keep(self, *arrays: Any) -> None:
        self.trace.alive.extend(arrays)

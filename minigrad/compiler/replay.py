"""Replay: a trace turned into a flat list of prebound array calls.

Every array of the trace gets a replay array, once:

- an argument of the step: a buffer the arguments are copied into at each call;
- an array the step found outside (a parameter's data, a captured input): that same
  array, read live, since an optimizer changes it in place;
- a constant the engine made (the seed gradient 1): a copy;
- an output of a recorded call: a buffer the replayed call writes into (a view, for the
  calls that make views).

Then each event becomes one step: a NumPy call with `out=` for the built-in Functions that
have a rule (minigrad/compiler/rules.py), or the Function's own forward for the others,
a copy for an in-place update, a `.grad` set to the buffer that holds it (always the same
Variable over that buffer), an optimizer's update() on the arrays. No `apply`, no node, no
engine: the steps run in the order the eager run did them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.compiler.rules import RULES
from minigrad.compiler.signature import made_holder, memory_owner, view_of_argument
from minigrad.compiler.trace import (
    Accumulate,
    Assume,
    Call,
    CannotReplayError,
    CopyInto,
    Item,
    Opaque,
    Ref,
    SetGrad,
    Trace,
    describe_place,
)
from minigrad.core import function
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import enable_grad
from minigrad.core.variable import Variable


class Replay:
    """The steps of one trace, and how to feed them arguments and read the result."""

    def __init__(self) -> None:
        self.steps: list[Callable[[], None]] = []
        self.outside: list[Variable] = []  # Variables whose arrays the steps read live
        self.listing: list[str] = []  # one line per event, for CompiledFunction.tape()
        self.inputs: list[tuple[Any, np.ndarray]] = []  # (argument path, buffer)
        # (leaf, buffer): a .grad from before the step that gradients add onto, copied in
        self.grads_in: list[tuple[Variable, np.ndarray]] = []
        # (where the values are, holds, what): library code's branches on values (Assume)
        self.assumptions: list[tuple[Any, Callable[[Any], bool], str]] = []
        # (argument path, 0-d buffer): a float argument an elementwise NumPy call reads
        # from a buffer of the dtype NumPy would have cast it to, filled at each call
        self.floats: list[tuple[Any, np.ndarray]] = []
        # (read it now, 0-d buffer): a float a guard holds (a global, a config entry) that
        # elementwise NumPy calls read, filled at each call like the float arguments
        self.sources: list[tuple[Callable[[], Any], np.ndarray]] = []
        self.live_used: set[int] = set()  # ids of those floats read live
        self.fixed_used: set[int] = set()  # ids of those floats some step keeps as traced
        self.float_paths: list[Any] = []  # every float argument's path, in order
        self.result: Callable[[], Any] = lambda: None
        self.handed_out: list[HandedOut] = []  # the .grad Variables the steps set
        # The code of the user functions the traced run called (called.py): a checking run
        # that calls others took another Python path
        self.called_code: frozenset = frozenset()
        # where (file, line, function) -> the buffer of each .item() the trace read
        self.items_at: dict[tuple, np.ndarray] = {}
        # (Variable, its array, the number) of each .item() of a constant the step read
        # in its middle (_state_items): guarded, the number a constant of the replay
        self.state_items: list[tuple] = []
        # Run first, with the call's arguments (a seed read from one, compiled.py)
        self.before: list[Callable[[tuple, dict], None]] = []
        # Python writes the replay repeats after its array work (writes.py)
        self.after: list[Callable[[], None]] = []
        # How many references each handed-out buffer had when the last replay returned.
        self.buffer_references: list[int] = []

    def float_values(self, args: tuple, kwargs: dict) -> tuple:
        """The float arguments of a call, as the variant's verified values are kept."""
        return float_values(self.float_paths, args, kwargs)

    def run(self, args: tuple, kwargs: dict) -> Any:
        for read in self.before:
            read(args, kwargs)
        for path, buffer in self.inputs:
            np.copyto(buffer, argument_at(args, kwargs, path)._data)
        # Checked on the copies just made (nothing outside the replay changed yet).
        for where, holds, what in self.assumptions:
            values = where(args, kwargs)
            if not holds(values):
                raise AssumptionFailedError(f"{what} no longer holds")
        for path, buffer in self.floats:
            buffer[()] = argument_at(args, kwargs, path)
        for read, buffer in self.sources:
            buffer[()] = read()
        for leaf, buffer in self.grads_in:
            grad = leaf._grad
            if grad is None or grad._data.shape != buffer.shape or grad.dtype != buffer.dtype:
                raise AssumptionFailedError(
                    f"the .grad of a {leaf.shape} Variable that gradients add onto is gone or "
                    f"has another shape or dtype"
                )
            np.copyto(buffer, grad._data)
        for grad, references in zip(self.handed_out, self.buffer_references):
            grad.grad._data_view = None  # p.grad.data's cached view: held by p.grad, not kept
            if sys.getrefcount(grad.buffer) > references:
                # The caller kept the array itself (p.grad.numpy(), .data): a new trace gets
                # new buffers, and theirs stays as it is.
                raise AssumptionFailedError("the caller kept a .grad's array (p.grad.numpy() "
                                            "or .data), which this replay would overwrite")
            grad.release_if_kept()
        for step in self.steps:
            step()
        for write in self.after:
            write()
        result = self.result()
        for grad in self.handed_out:
            grad.grad._data_view = None
        self.buffer_references = [sys.getrefcount(grad.buffer) for grad in self.handed_out]
        return result


class AssumptionFailedError(Exception):
    """An Assume of the trace does not hold for this call: trace it again."""


class Arguments(dict):
    """id(array) -> where it is among the arguments: ("args", i) or ("kwargs", name), then
    the index or key inside a tuple, list or dict argument; `arrays`, where -> the array
    itself (to find NumPy views of an argument); `floats`, id(float) -> where, for each
    Python float argument."""

    arrays: dict
    floats: dict


def argument_arrays(args: tuple, kwargs: dict) -> Arguments:
    """The step's argument arrays (see Arguments)."""
    found = Arguments()
    found.arrays = {}
    found.floats = {}
    places = [(("args", index), value) for index, value in enumerate(args)]
    places += [(("kwargs", name), value) for name, value in kwargs.items()]
    while places:
        path, value = places.pop(0)
        if isinstance(value, Variable) and type(value._data) is np.ndarray:
            found.setdefault(id(value._data), path)
            found.arrays[path] = value._data
        elif type(value) is float:
            found.floats.setdefault(id(value), path)
        elif type(value) in (tuple, list):
            places += [((*path, index), item) for index, item in enumerate(value)]
        elif type(value) is dict:
            places += [((*path, key), item) for key, item in value.items()]
    return found


def _refuse_ambiguous(place: Any, reader: str) -> None:
    if place == ("ambiguous", None):
        raise CannotReplayError(
            f"{reader} reads a NumPy view of arguments that overlap in memory (tokens[:-1] "
            f"and tokens[1:] of one array), and which of them it reads cannot be told; pass "
            f"copies (.clone()) instead of overlapping views"
        )


def float_paths(arguments: Arguments) -> list:
    """Where the float arguments are, each place once, in order."""
    return list(dict.fromkeys(arguments.floats.values()))


def float_values(paths: list, args: tuple, kwargs: dict) -> tuple:
    """The float arguments at `paths`, by repr (nan equals itself there)."""
    return tuple(repr(argument_at(args, kwargs, path)) for path in paths)


def place_name(path: tuple) -> str:
    """An argument's place as code would write it: args[1], kwargs['lr'], args[0][2]."""
    text = f"{path[0]}[{path[1]!r}]"
    for step in path[2:]:
        text += f"[{step!r}]"
    return text


def seed_from_argument(replay: Replay, call: Any, path: tuple) -> None:
    """Make the replay's `manual_seed(k)` step (`call`, functools.partial(_reseed, k))
    seed with the value of the int argument at `path` of each call."""
    seed = [call.args[0]]

    def read(args: tuple, kwargs: dict) -> None:
        seed[0] = argument_at(args, kwargs, path)

    def reseed() -> None:
        call.func(seed[0])

    at = next(index for index, step in enumerate(replay.steps) if step is call)
    replay.steps[at] = reseed
    replay.before.append(read)
    replay.listing.append(f"(the seed of step {at}: the argument {place_name(path)})")


def argument_at(args: tuple, kwargs: dict, path: tuple) -> Any:
    """The argument at `path` (see Arguments)."""
    value = args[path[1]] if path[0] == "args" else kwargs[path[1]]
    for step in path[2:]:
        value = value[step]
    return value


class HandedOut:
    """A `.grad` the replay sets: one Variable over the buffer the steps write into, handed
    out again on every call. When the user kept the one handed out last (`g = p.grad`, a
    list of gradients), the next call would overwrite it under them: theirs then keeps its
    numbers in a copy of its own, and the replay hands out a new Variable. Telling costs one
    sys.getrefcount per handed-out gradient per call; the copy, one array copy when kept."""

    __slots__ = ("leaf", "buffer", "grad")

    def __init__(self, leaf: Variable, buffer: np.ndarray) -> None:
        self.leaf, self.buffer = leaf, buffer
        self.grad = Variable._make(buffer)

    def release_if_kept(self) -> None:
        grad = self.grad
        # Held only by this object, the name `grad`, getrefcount's argument, and the leaf
        # while its .grad is still this one; any other reference is the user's.
        expected = 3 + (self.leaf._grad is grad)
        if sys.getrefcount(grad) > expected:
            grad._data = grad._data.copy(order="K")  # its strides too, as eager made it
            self.grad = Variable._make(self.buffer)

    def set(self) -> None:
        self.leaf._grad = self.grad


class _Builder:
    def __init__(
        self, trace: Trace, arguments: dict[int, Any], returned: Any, earlier: Trace
    ) -> None:
        self.trace = trace
        self.earlier = {id(array) for array in earlier.alive}  # the first traced run's
        # ... and what those arrays are views of (kept alive by them, so no id is reused)
        self.earlier_bases = self.earlier | {
            id(array.base) for array in earlier.alive if getattr(array, "base", None) is not None
        }
        self.arguments = arguments
        self.where: dict[int, np.ndarray] = {}  # id(trace array) -> replay array
        self.readers = _readers(trace, returned)
        # (its output in the trace, a maker of the same step writing elsewhere) for the
        # last step when it is an elementwise NumPy call
        self.last_elementwise: tuple | None = None
        self.outside: list[Variable] = []  # whose arrays the replay reads live
        self.replay = Replay()
        # Arrays library code branched on and said so (Assume): views of an argument among
        # them are read live, their values checked before each replay.
        self.assumed = [event.array for event in trace.events if type(event) is Assume]
        # id -> array for each array a recorded call made (its outputs, what its ctx kept)
        self.made = made_arrays(trace)
        # Set once an event changed what outlives the replay (an optimizer's step, an
        # in-place update, a .grad): a check after it could not leave the world untouched.
        self.changed_outside: str | None = None
        # id(float) -> (read it now, name, ...): floats guards hold, which calls may read live
        self.live: dict[int, tuple] = {}
        # id(number) -> Item event: .item() values an opaque call takes (_passed_to_opaque)
        self.passed: dict[int, Any] = {}
        # id(value) -> read it again: plain values the return reads from a path (compiled.py)
        self.returned_paths: dict[int, Callable[[], Any]] = {}

    def array(self, array: np.ndarray, reader: str) -> np.ndarray:
        """The replay array standing for `array` of the trace, made on first use."""
        found = self.where.get(id(array))
        if found is not None:
            return found
        key = id(array)
        if key in self.arguments:
            found = np.array(array, copy=True)
            self.replay.inputs.append((self.arguments[key], found))
        elif key in self.trace.grads_of:
            found = np.array(array, copy=True)
            self.replay.grads_in.append((self.trace.grads_of[key], found))
        elif key in self.trace.constants:
            found = np.array(array, copy=True)
        elif key in self.trace.owners:
            owner = self.trace.owners[key]
            if owner.grad_fn is not None:
                raise CannotReplayError(
                    f"{reader} reads a Variable computed before the step (it has a grad_fn); "
                    f"compute it inside the step, or .detach() it"
                )
            found = array  # a parameter or captured input: read live
            self.outside.append(owner)
        else:
            raise CannotReplayError(
                f"{reader} reads an array computed outside minigrad's operations (NumPy work "
                f"on .data?), which a replay would not recompute"
            )
        self.where[key] = found
        return found

    def value(self, spec: Any, reader: str) -> Any:
        if isinstance(spec, Ref):
            key = id(spec.array)
            if spec.raw and key not in self.where and key not in self.arguments:
                # A NumPy array the Python code built: the same object (or a view of the
                # same object) in both traced runs is read live; a new one each run is a
                # constant, unless it is a view of an argument (F.cross_entropy's
                # labels.reshape(-1)): its values change with each call, and Python may
                # branch on them.
                place = view_of_argument(spec.array, self.arguments)
                _refuse_ambiguous(place, reader)
                if place is not None and self._assumed(spec.array):
                    found = self._live_view(spec.array, place, reader)
                    self.where[key] = found
                    return found
                if place is not None:
                    raise CannotReplayError(
                        f"{reader} reads a NumPy view of argument {place[1]} made outside "
                        f"minigrad's operations (F.cross_entropy's class labels do this); "
                        f"its values change with each call and Python may branch on them. "
                        f"To compile, pass one-hot targets and write the loss with "
                        f"operations: -(logits.log_softmax(1) * onehot).sum(1).mean()"
                    )
                found = self._made_view(spec.array, reader)
                if found is not None:  # labels.reshape(-1) of labels the step computed
                    self.where[key] = found
                    return found
                base = spec.array.base
                if key in self.earlier or (base is not None and id(base) in self.earlier_bases):
                    # The same array, or a new view of the same array (a captured array's .T,
                    # the labels F.cross_entropy views in a captured Variable): read live.
                    found = spec.array
                else:
                    found = np.array(spec.array, copy=True)
                self.where[key] = found
                return found
            return self.array(spec.array, reader)
        if isinstance(spec, (list, tuple)):
            return type(spec)(self.value(item, reader) for item in spec)
        if type(spec) is float and id(spec) in self.where:
            return self.where[id(spec)]  # a float a custom Function kept: its 0-d buffer
        return spec

    def _made_view(self, array: np.ndarray, reader: str) -> np.ndarray | None:
        """When `array` is a NumPy view of an array a recorded call made (library code's
        labels.reshape(-1) of labels the step computed): the same view of the replay's
        buffer for it, at the same byte offset. None when it is no such view."""
        if array.base is None:
            return None
        made = made_holder(array, self._built_by_owner())
        if made is None:
            return None
        buffer = self.where.get(id(made))
        contiguous = buffer is not None and (buffer.flags.c_contiguous or buffer.flags.f_contiguous)
        if not contiguous or buffer.strides != made.strides or array.dtype != made.dtype:
            raise CannotReplayError(
                f"{reader} reads a NumPy view of a value the step computed, laid out unlike "
                f"the replay's buffer for it; compute it with operations instead"
            )
        offset = array.__array_interface__["data"][0] - made.__array_interface__["data"][0]
        return np.ndarray(array.shape, array.dtype, buffer=buffer.ravel(order="K"),
                          offset=offset, strides=array.strides)

    def _built_by_owner(self) -> dict[int, list]:
        """The made arrays the replay has buffers for so far, by the owner of their memory."""
        by_owner: dict[int, list] = {}
        for key, made in self.made.items():
            if key in self.where:
                by_owner.setdefault(id(memory_owner(made)), []).append(made)
        return by_owner

    def _assumed(self, array: np.ndarray) -> bool:
        return any(array is other or np.shares_memory(array, other) for other in self.assumed)

    def _live_view(self, array: np.ndarray, place: tuple, reader: str) -> np.ndarray:
        """The replay's view of an argument's buffer that `array` (a reshape of the whole
        argument) stands for."""
        source = self.arguments.arrays[place]
        buffer = self.array(source, reader)
        contiguous = array.flags.c_contiguous and source.flags.c_contiguous
        if array.size == source.size and contiguous:
            return buffer.reshape(array.shape)
        # A part of it (tokens[:, :4] of a batch of windows): the same part of the buffer,
        # at the same byte offset, when the buffer is laid out as the argument was.
        offset = array.__array_interface__["data"][0] - source.__array_interface__["data"][0]
        if (buffer.strides != source.strides or array.dtype != source.dtype or offset < 0
                or not buffer.flags.c_contiguous):
            raise CannotReplayError(
                f"{reader} reads a part of argument {place[1]} (a NumPy slice made outside "
                f"minigrad's operations) laid out unlike the replay's copy of it; pass a "
                f"contiguous batch (.contiguous())"
            )
        return np.ndarray(array.shape, array.dtype, buffer=buffer, offset=offset,
                          strides=array.strides)

    def assume(self, event: Assume) -> None:
        """Check the values library code branched on before each replay."""
        place = view_of_argument(event.array, self.arguments) or self.arguments.get(id(event.array))
        _refuse_ambiguous(place, event.what.split(":")[0])
        computed = (id(event.array) in self.made and id(event.array) in self.where) or (
            event.array.base is not None
            and made_holder(event.array, self._built_by_owner()) is not None
        )
        if place is None and computed:
            self._check_made(event)
            return
        if place is None:  # an outside array, read live: check that very array
            array = event.array
            self.replay.assumptions.append((lambda args, kwargs: array, event.holds, event.what))
            return
        # The replay's copy of the argument, or the same part of it, checked once run()
        # has copied this call's values in.
        if self.arguments.get(id(event.array)) == place:
            view = self.array(event.array, event.what)
        else:
            view = self._live_view(event.array, place, event.what)
        self.replay.assumptions.append((lambda args, kwargs: view, event.holds, event.what))

    def _check_made(self, event: Assume) -> None:
        """Values computed in the step that library code branched on (labels the step
        made): checked where the replay has computed them, before anything it did could
        be seen outside (then a failed check traces again, eagerly, from the same state)."""
        what = event.what
        if self.changed_outside is not None:
            raise CannotReplayError(
                f"library code branched on values the step computed ({what}) after "
                f"{self.changed_outside}; a replay could not check them before changing "
                f"state: compute them before that"
            )
        view = self.value(Ref(event.array, raw=True), what.split(":")[0])
        holds = event.holds

        def check() -> None:
            if not holds(view):
                raise AssumptionFailedError(f"{what} no longer holds")

        self.replay.steps.append(check)
        self.replay.listing.append(f"check: {what}")

    def wrapped(self, spec: Any, value: Any) -> Any:
        """`value` (replay arrays for `spec`) with each array that came in a Variable
        wrapped in one again, for a Function's own forward."""
        if isinstance(spec, Ref):
            return value if spec.raw else Variable._make(value)
        if isinstance(spec, (list, tuple)):
            return type(spec)(self.wrapped(part, item) for part, item in zip(spec, value))
        return value

    # ------------------------------------------------------------------- events

    def _only_reader(self, array: np.ndarray) -> bool:
        """Whether exactly one event reads this array of the trace (and nothing returns it)."""
        return self.readers.get(id(array), 0) == 1

    def _float_place(self, spec: Any) -> Any:
        return self.arguments.floats.get(id(spec)) if type(spec) is float else None

    def _check_kept_floats(self, event: Call, rule: Any, inputs: list) -> None:
        """A float kept on a custom Function's ctx is read from a 0-d float64 buffer its
        forward fills: only an elementwise NumPy call on float64 arrays reads it as the
        eager call read the float (NumPy casts a 0-d array unlike a Python float)."""
        kept = [value for spec, value in zip(event.args, inputs)
                if type(spec) is float and type(value) is np.ndarray]
        in_keywords = any(type(spec) is float and id(spec) in self.where
                          for spec in event.kwargs.values())
        if not kept and not in_keywords:
            return
        arrays = [value for value in inputs if type(value) is np.ndarray and value.ndim]
        if (getattr(rule, "ufunc", None) is None or event.kwargs
                or any(array.dtype != np.float64 for array in arrays)):
            raise CannotReplayError(
                f"{event.function.__name__} reads a Python float that a custom Function "
                f"kept on its ctx, and only an elementwise operation on float64 arrays can "
                f"read it anew at each replay; keep it as a 0-d Variable "
                f"(ctx.save_for_backward) instead"
            )

    def live_floats(self, event: Call, rule: Any, inputs: list) -> None:
        """Float arguments among a call's inputs: an elementwise NumPy call reads each from
        a 0-d buffer that run() fills; any other call keeps the traced value, which the
        replay then checks before each call (another value traces again)."""
        self._live_sources(event, rule, inputs)
        places = [self._float_place(spec) for spec in event.args]
        places += [self._float_place(spec) for spec in event.kwargs.values()]
        if not any(places):
            return
        if getattr(rule, "ufunc", None) is None or event.kwargs:
            for place, spec in zip(places, [*event.args, *event.kwargs.values()]):
                if place is not None:
                    self.fixed_float(place, spec, event.function.__name__)
            return
        arrays = [value for value in inputs if type(value) is np.ndarray]
        for index, place in enumerate(places):
            if place is not None:
                # The dtype NumPy casts a Python float to beside these arrays (NEP 50).
                buffer = np.array(inputs[index], dtype=np.result_type(*arrays, inputs[index]))
                self.replay.floats.append((place, buffer))
                inputs[index] = buffer

    def _live_sources(self, event: Call, rule: Any, inputs: list) -> None:
        """Floats a guard holds (compiled.py: a global, a config entry), passed into the
        call as they are: an elementwise NumPy call reads each from a 0-d buffer run()
        fills; any other use keeps the traced value (and the guard on its value)."""
        elementwise = getattr(rule, "ufunc", None) is not None and not event.kwargs
        arrays = [value for value in inputs if type(value) is np.ndarray]
        for index, spec in enumerate(event.args):
            if type(spec) is not float or id(spec) not in self.live:
                continue
            if not elementwise or self._float_place(spec) is not None:
                self.replay.fixed_used.add(id(spec))
                continue
            buffer = np.array(spec, dtype=np.result_type(*arrays, spec))  # as NumPy casts it
            self.replay.sources.append((self.live[id(spec)][0], buffer))
            self.replay.live_used.add(id(spec))
            inputs[index] = buffer
        for spec in event.kwargs.values():
            if type(spec) is float and id(spec) in self.live:
                self.replay.fixed_used.add(id(spec))

    def fixed_float(self, place: Any, value: float, reader: str) -> None:
        traced = repr(value)

        def current(args: tuple, kwargs: dict) -> str:
            return repr(argument_at(args, kwargs, place))

        name = place_name(place)
        what = f"float argument {name} = {traced}, which {reader} reads as a constant,"
        self.replay.assumptions.append((current, traced.__eq__, what))

    def call(self, event: Call) -> None:
        self.last_elementwise = None
        name = event.function.__name__
        inputs = [self.value(spec, name) for spec in event.args]
        kwargs = {key: self.value(spec, name) for key, spec in event.kwargs.items()}
        trace_extras = [array for _, array in event.extras]
        rule = RULES.get(event.function)
        self._check_kept_floats(event, rule, inputs)
        self.live_floats(event, rule, inputs)
        built = rule(inputs, kwargs, event.outputs, trace_extras) if rule else None
        how = "NumPy into a buffer"
        if built is None and getattr(event.function, "_output_is_view", False):
            built = _view(event, inputs, kwargs)
            how = "a view, made once"
        if built is None:
            how = "its forward, again"
            wrapped = [self.wrapped(spec, inputs_of) for spec, inputs_of in zip(event.args, inputs)]
            wrapped_kwargs = {key: self.wrapped(event.kwargs[key], kwargs[key]) for key in kwargs}
            built = _forward_again(event, wrapped, wrapped_kwargs)
        run, outputs, extras = built
        shapes = ", ".join(str(array.shape) for array in outputs if array is not None)
        self.replay.listing.append(f"{name:<13} -> {shapes:<10} {how}")
        if run is not None:
            self.replay.steps.append(run)
            if getattr(run, "writing_into", None) is not None:
                self.last_elementwise = (event.outputs[0], run.writing_into)
        for trace_array, replay_array in zip(event.outputs, outputs):
            if trace_array is not None:
                self.where[id(trace_array)] = replay_array
        for trace_array, replay_array in zip(trace_extras, extras):
            self.where[id(trace_array)] = replay_array

    def accumulate(self, event: Accumulate) -> None:
        self.replay.listing.append(f".grad of a {event.result.shape} leaf")
        source = self.array(event.gradient, "the gradient of a leaf")
        variable = event.variable
        summed = self.where.get(id(event.result))
        if summed is not None:
            # A second micro-batch: the engine's recorded add made the new .grad already.
            grad = self._hand_out(variable, summed)
            run = grad.set

        elif (
            self._only_reader(event.gradient)
            and source.dtype == event.result.dtype
            and source.strides == event.result.strides  # a kept .grad sums as eager's
        ):
            # Nothing else reads this gradient: the leaf can have its buffer, uncopied.
            self.where[id(event.result)] = source
            grad = self._hand_out(variable, source)
            run = grad.set

        else:
            buffer = np.array(event.result, copy=True)
            self.where[id(event.result)] = buffer
            grad = self._hand_out(variable, buffer)

            def run() -> None:
                # The leaf's own copy in its dtype (kinds._accumulate_numbers' astype).
                np.copyto(buffer, source, casting="unsafe")
                grad.set()

        self.replay.steps.append(run)

    def _hand_out(self, leaf: Variable, buffer: np.ndarray) -> HandedOut:
        grad = HandedOut(leaf, buffer)
        self.replay.handed_out.append(grad)
        return grad

    def set_grad(self, event: SetGrad) -> None:
        variable = event.variable
        value = "None" if event.array is None else "a buffer"
        self.replay.listing.append(f".grad = {value} on a {variable.shape} Variable")
        if event.array is None:

            def run() -> None:
                variable._grad = None

        else:
            array = self.where.get(id(event.array))
            if array is None:  # a gradient made outside the operations (zeros_like)
                array = np.array(event.array, copy=True)
                self.where[id(event.array)] = array
            run = self._hand_out(variable, array).set

        self.replay.steps.append(run)

    def copy_into(self, event: CopyInto) -> None:
        variable = event.variable
        self.replay.listing.append(f"in-place update of a {variable.shape} Variable")
        source = self.array(event.source, "an in-place update")
        target = self.array(variable._data, "an in-place update")
        counter = variable._shared_version_counter()
        last = self.last_elementwise
        if (
            last is not None
            and last[0] is event.source
            and self._only_reader(event.source)
            and source.shape == target.shape
            and source.dtype == target.dtype
        ):
            # `p -= lr * g`: the subtraction can write into p itself (same values).
            self.replay.steps[-1] = last[1](target)

            def run() -> None:
                counter.value += 1  # as _assign_inplace: saved values see the change

        else:

            def run() -> None:
                np.copyto(target, source)
                counter.value += 1  # as _assign_inplace: saved values see the change

        self.replay.steps.append(run)

    def opaque(self, event: Opaque) -> None:
        prebound = self._prebound_update(event)
        if prebound is not None:
            owner = event.call.args[0]
            count = len(event.gradients)
            self.replay.listing.append(
                f"{type(owner).__name__}.update() on {count} parameter arrays, prebound"
            )
            self.replay.steps.append(prebound)
            return
        call = event.call
        for value in (*event.arguments, *event.keywords.values()):
            if type(value) is float and id(value) in self.live:
                self.replay.fixed_used.add(id(value))  # the call is made with it again
        numbers = {
            index: self.array(self.passed[id(value)].array, ".item()")
            for index, value in enumerate(event.arguments)
            if id(value) in self.passed
        }
        if numbers:  # scheduler.step(loss.item()): this call's number, read from its buffer
            arguments = list(event.arguments)

            def run() -> None:
                for index, array in numbers.items():
                    arguments[index] = array.item()
                call.func(call.args[0], *arguments, **call.keywords)

            self.replay.listing.append(f"{call.func.__qualname__}(), called with this "
                                       f"call's number")
            self.replay.steps.append(run)
            return
        if _holds_refs(event.arguments) or _holds_refs(tuple(event.keywords.values())):
            # A Variable passed in (ReduceLROnPlateau.step(loss)): the same call on a
            # Variable over the replay's array, which holds this call's value.
            name = call.func.__qualname__
            arguments = [self.wrapped(spec, self.value(spec, name)) for spec in event.arguments]
            keywords = {key: self.wrapped(spec, self.value(spec, name))
                        for key, spec in event.keywords.items()}
            call = functools.partial(call.func, call.args[0], *arguments, **keywords)
        self.replay.listing.append(f"{event.call.func.__qualname__}(), called as it is")
        self.replay.steps.append(call)

    def _prebound_update(self, event: Opaque) -> Callable[[], None] | None:
        """An optimizer's step() as its update() on the arrays the replay fills: no search
        for gradients, no Variables. Settings (lr, ...) and state are read at each call, so
        a scheduler's lr and a loaded state_dict take effect. None when some gradient is
        not one of the replay's arrays (then step() is called as it is)."""
        if event.gradients is None:
            return None
        owner = event.call.args[0]
        entries = []
        for index, group, param, gradient in event.gradients:
            replay_gradient = self.where.get(id(gradient))
            if replay_gradient is None:
                return None
            data = self.array(param._data, f"{type(owner).__name__}.step()")
            entries.append((index, group, data, replay_gradient, param._shared_version_counter()))

        def run() -> None:
            state = owner.state
            for index, group, data, gradient, counter in entries:
                if index not in state:
                    state[index] = {}
                owner.update(data, gradient, state[index], group)
                counter.value += 1  # as Optimizer.step

        return run


def made_arrays(trace: Trace) -> dict[int, np.ndarray]:
    """id -> array for each array a recorded call of `trace` made (outputs, ctx extras)."""
    made = {}
    for event in trace.events:
        if type(event) is Call:
            for array in event.outputs:
                if array is not None:
                    made[id(array)] = array
            for _, array in event.extras:
                if type(array) is np.ndarray:
                    made[id(array)] = array
    return made


def _over_outside_memory(array: np.ndarray, builder: _Builder) -> bool:
    """Whether `array` lies in the memory of an array the replay reads live (a parameter's)
    rather than in a buffer of its own."""
    owner = memory_owner(array)
    return any(memory_owner(variable._data) is owner for variable in builder.outside)


_CONSUMED = object()  # stands for an .item() value a repeated write takes


def _occurrences(structure: Any, value: Any) -> int:
    """How many times `value` itself is in a returned tuple, list or dict (nested)."""
    if structure is value:
        return 1
    if type(structure) in (tuple, list):
        return sum(_occurrences(item, value) for item in structure)
    if type(structure) is dict:
        return sum(_occurrences(item, value) for item in structure.values())
    return 0


def _state_items(trace: Trace, arguments: dict[int, Any], items: list) -> list:
    """The .item() calls in the middle of the step on a Variable the step neither made nor
    writes to, nor got as an argument (a global constant: PyTorch's regression example
    reads `b_target.item()`): its number is the same on every call while the Variable's
    data is. The replay keeps the traced number, and a guard checks that it still is."""
    if not items:
        return []
    made: set[int] = set()  # arrays the step computes or writes to
    for event in trace.events:
        if type(event) is Call:
            made.update(id(array) for array in event.outputs if array is not None)
        elif type(event) is Accumulate:
            made.add(id(event.result))
        elif type(event) is CopyInto:
            made.add(id(event.variable._data))
    return [
        event for event in items
        if event.variable is not None and not event.variable._requires_grad  # not trained
        and event.variable._data is event.array and id(event.array) not in made
        and id(event.array) not in arguments and type(event.value) in (int, float, bool)
    ]


def _passed_to_opaque(trace: Trace, items: list, lines: frozenset) -> dict[int, Any]:
    """id(value) -> the Item event, for each .item() in the middle of the step written as
    a call's argument (`lines`: (file, line, function)) whose value, that very object, a
    later opaque call (a scheduler's step()) took, and no recorded operation did."""
    candidates = {id(event.value): event for event in items if event.where in lines}
    if not candidates:
        return {}
    found = {}
    for event in trace.events:
        if type(event) is Call:
            for value in (*event.args, *event.kwargs.values()):
                candidates.pop(id(value), None)  # also a constant of an operation
        elif type(event) is Opaque:
            for value in (*event.arguments, *event.keywords.values()):
                if id(value) in candidates:
                    found[id(value)] = candidates[id(value)]
    return found


def _holds_refs(values: tuple) -> bool:
    for value in values:
        if isinstance(value, Ref):
            return True
        if isinstance(value, (list, tuple)) and _holds_refs(tuple(value)):
            return True
    return False


def _readers(trace: Trace, returned: Any) -> dict[int, int]:
    """id(array) -> how many events read it (a returned Variable counts as a reader too)."""
    counts: dict[int, int] = {}

    def read(value: Any) -> None:
        if isinstance(value, Ref):
            counts[id(value.array)] = counts.get(id(value.array), 0) + 1
        elif isinstance(value, (list, tuple)):
            for item in value:
                read(item)

    for event in trace.events:
        if type(event) is Call:
            read(event.args)
            read(tuple(event.kwargs.values()))
        elif type(event) is Accumulate:
            read(Ref(event.gradient))
        elif type(event) in (CopyInto,):
            read(Ref(event.source))
        elif type(event) in (SetGrad, Item) and event.array is not None:
            read(Ref(event.array))
    read(_returned_arrays(returned))
    return counts


def _returned_arrays(value: Any) -> Any:
    if isinstance(value, Variable):
        return Ref(value._data)
    if isinstance(value, (list, tuple)):
        return tuple(_returned_arrays(item) for item in value)
    return None


def build(
    trace: Trace,
    arguments: dict[int, Any],
    returned: Any,
    earlier: Trace,
    returned_only: Callable[[], frozenset] = frozenset,
    live: dict[int, tuple] | None = None,
    consumed: frozenset = frozenset(),
    passed_on: Callable[[], frozenset] = frozenset,
    returned_paths: dict | None = None,
) -> Replay:
    """The replay of `trace`, whose step was called with arguments at `arguments` and
    returned `returned`; `earlier` is the run it was compared with; `returned_only()`, the
    places (file, line, function) of the step's .item() calls whose value it only returns
    (returned_items.py), asked for when needed. Raises CannotReplayError when some array
    cannot be replayed."""
    kinds = [type(event) for event in trace.events]
    last_other = max((i for i, kind in enumerate(kinds) if kind is not Item), default=-1)
    middle = [event for event in trace.events[: last_other + 1] if type(event) is Item]
    allowed = returned_only() if middle else frozenset()
    passed = _passed_to_opaque(trace, middle, passed_on() if middle else frozenset())
    state_items = _state_items(trace, arguments, middle)
    for event in middle:
        if event.where not in allowed and id(event.value) not in passed and (
            event not in state_items
        ):
            # Python may branch on the number (a replay would keep the traced path), even
            # when the step also returns it.
            raise CannotReplayError(
                f".item() reads a value in the middle of the step (at "
                f"{describe_place(event.where)}) and the step's code uses it for more than "
                f"returning it (Python could branch on it); return it as it is, or read it "
                f"last, after the update"
            )
    builder = _Builder(trace, arguments, returned, earlier)
    builder.live = live or {}
    builder.passed = passed
    builder.returned_paths = returned_paths or {}
    items = []
    constant_items = {id(event) for event in state_items}
    for event in trace.events:
        if id(event) in constant_items:
            continue  # its number is a constant of the replay, guarded (ItemGuard)
        try:
            _add_event(builder, event, items)
        except CannotReplayError as reason:
            place = getattr(event, "where", None)
            if place is None:
                raise
            raise CannotReplayError(f"{reason} (at {describe_place(place)})") from None
    # The .item() values a repeated write uses (writes.py: history.append) need not be
    # returned.
    items = [(value, array) if where not in consumed and id(value) not in passed
             else (_CONSUMED, array)
             for value, array, where in items]
    builder.replay.state_items = [(event.variable, event.array, event.value)
                                  for event in state_items]
    builder.replay.result = _result_reader(returned, items, builder)
    builder.replay.outside = builder.outside
    builder.replay.float_paths = float_paths(arguments)
    return builder.replay


def _add_event(builder: _Builder, event: Any, items: list) -> None:
    """Turn one traced event into the replay's step(s)."""
    kind = type(event)
    if kind in (Accumulate, CopyInto, Opaque) and builder.changed_outside is None:
        builder.changed_outside = {
            Accumulate: "backward()", CopyInto: "an in-place update", Opaque: "a step() call"
        }[kind]
    if type(event) is Call:
        builder.call(event)
    elif type(event) is Accumulate:
        builder.accumulate(event)
    elif type(event) is SetGrad:
        builder.set_grad(event)
    elif type(event) is CopyInto:
        builder.copy_into(event)
    elif type(event) is Opaque:
        builder.opaque(event)
    elif type(event) is Item:
        array = builder.array(event.array, ".item()")
        items.append((event.value, array, event.where))
        builder.replay.items_at[event.where] = array
    elif type(event) is Assume:
        builder.assume(event)


def _result_reader(returned: Any, items: list, builder: _Builder) -> Callable[[], Any]:
    """How the replay builds what the step returns: numbers from .item(), Variables as
    fresh copies of their buffers, None, and tuples, lists and dicts of these (nested)."""
    used = []

    def reader(value: Any) -> Callable[[], Any]:
        if value is None:
            return lambda: None
        for index, (item_value, array) in enumerate(items):
            if value is item_value:
                used.append(index)
                return array.item
        if isinstance(value, Variable):
            array = builder.array(value._data, "the returned value")
            if value._requires_grad:
                if not any(type(event) is Accumulate for event in builder.trace.events):
                    raise CannotReplayError(
                        "the step returns a Variable that requires grad and never calls "
                        "backward(); call backward() inside the step (a replay builds no "
                        "graph to call it on afterwards)"
                    )
                if value.grad_fn is not None and id(value.grad_fn) not in builder.trace.ran:
                    raise CannotReplayError(
                        "the step returns a Variable whose graph backward() has not been "
                        "through (as DCGAN's fake = netG(noise), handed on to the "
                        "generator's step); a replay builds no graph for a later backward(). "
                        "Return it .detach()ed, or compute it in the step that calls "
                        "backward() on it"
                    )
                return functools.partial(_spent_loss, array, _spent_node(array))
            if _over_outside_memory(array, builder):
                # A view of a parameter (model.bias.detach()): eager hands out one over the
                # parameter's own memory, which later updates change; so does the replay.
                return functools.partial(Variable._make, array)
            return lambda: Variable._make(array.copy(order="K"))  # eager's strides too
        if type(value) in (tuple, list):
            parts = [reader(item) for item in value]
            kind = type(value)
            return lambda: kind(part() for part in parts)
        if type(value) is dict:
            readers = {key: reader(item) for key, item in value.items()}
            return lambda: {key: read() for key, read in readers.items()}
        again = builder.returned_paths.get(id(value))
        if again is not None and _occurrences(returned, value) == 1:
            return again  # opt.param_groups[0]["lr"], read by the return itself
        raise CannotReplayError(
            f"the step returns a {type(value).__name__}; a replay can return None, numbers "
            f"from .item(), Variables, and tuples, lists and dicts of these"
        )

    read = reader(returned)
    used += [index for index, (value, _) in enumerate(items) if value is _CONSUMED]
    if len(set(used)) != len(items):
        raise CannotReplayError(
            ".item() reads a value in the middle of the step (Python code could branch on "
            "it); return the value instead"
        )
    return read


class SpentGraph(Function):
    """What a replayed `return loss` hands back: the loss with a graph that backward has
    already been through, as after the eager step. `.item()` works; a second backward()
    raises the backward-twice error, since the saved values are gone."""

    @staticmethod
    def forward(ctx: FunctionCtx, anchor: Variable, value: np.ndarray) -> np.ndarray:
        ctx.save_for_backward(anchor)
        return value.copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        (anchor,) = ctx.saved_tensors  # freed below: this raises BackwardTwiceError
        return grad_output, None


def _spent_node(array: np.ndarray) -> Any:
    """One SpentGraph node, its saved values freed: every replayed loss can point at it."""
    with enable_grad():
        loss = SpentGraph.apply(Variable(np.zeros(()), True), array)
    function.free(loss.grad_fn)
    return loss.grad_fn


def _spent_loss(array: np.ndarray, node: Any) -> Variable:
    """The returned loss: a copy of its buffer, the output of a spent node."""
    loss = Variable._make(array.copy())
    loss._grad_fn = node
    loss._requires_grad = True
    return loss


def _view(event: Call, inputs: list, kwargs: dict) -> Any:
    """A view Function on fixed buffers: make the view once; nothing runs at replay."""
    raw, _ = _call_forward(event, inputs, kwargs, with_ctx=False)
    base = inputs[0]
    if type(raw) is np.ndarray and type(base) is np.ndarray and np.shares_memory(raw, base):
        return None, [raw], []
    return None


def _forward_again(event: Call, wrapped: list, wrapped_kwargs: dict) -> Any:
    """The general step: run the Function's forward on Variables over the buffers and copy
    what it returns (and what its ctx kept) into the step's own buffers."""
    outputs = [None if array is None else np.array(array, copy=True) for array in event.outputs]
    extras = [np.array(array, copy=True) for _, array in event.extras]
    places = [place for place, _ in event.extras]
    local = Call(event.function, tuple(wrapped), wrapped_kwargs, [], [], event.needs_input_grad)

    def run() -> None:
        raw, ctx = _call_forward(local, local.args, local.kwargs, with_ctx=bool(places))
        results = raw if isinstance(raw, tuple) else (raw,)
        for buffer, value in zip(outputs, results):
            if buffer is not None:
                np.copyto(buffer, value._data if isinstance(value, Variable) else value)
        for buffer, (kind, key) in zip(extras, places):
            if kind == "saved":
                np.copyto(buffer, ctx.to_save[key])
            elif type(key) is tuple:  # an array kept in a tuple attribute of ctx
                np.copyto(buffer, ctx.__dict__[key[0]][key[1]])
            else:
                np.copyto(buffer, ctx.__dict__[key])

    return run, outputs, extras


def _call_forward(event: Call, args: Any, kwargs: dict, with_ctx: bool) -> tuple:
    cls = event.function
    ctx = FunctionCtx(event.needs_input_grad or (False,) * len(args))
    if cls._uses_setup_context:
        raw = cls._forward(*args, **kwargs)
        if with_ctx:
            outputs = raw if isinstance(raw, tuple) else (raw,)
            wrapped = tuple(_as_variable(np.asarray(value)) for value in outputs)
            cls.setup_context(ctx, tuple(args), wrapped if isinstance(raw, tuple) else wrapped[0])
    else:
        raw = cls._forward(ctx, *args, **kwargs)
    return raw, ctx


def _as_variable(value: Any) -> Any:
    if type(value) is np.ndarray:
        return Variable._make(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_as_variable(item) for item in value)
    return value

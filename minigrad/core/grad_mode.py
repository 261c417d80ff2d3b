"""Grad modes: whether operations record a graph for backward.

The switch is thread-local: `no_grad()` in one thread never changes what another thread
records. Each mode works as a context manager and as a decorator, with or without
parentheses (`@no_grad` and `@no_grad()`).
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

# ------------------------------------------------------------------------- state
#
# The core's per-thread state, in one object: `state`.
#
# Each thread has its own copy, so `no_grad()` in one thread never changes what another
# thread records. A new thread starts with every switch at its class value below.

class Listener:
    """What a listener is told; each hook does nothing unless a listener overrides it."""

    # True for a tool that must hear every operation as a Function call (the compiler
    # replays them, forward_ad pushes tangents through them): library code then takes
    # the path made of Functions rather than a shortcut on raw arrays.
    watching = False

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        """A `Function.apply` call: run it (a listener also notes what it did)."""
        return cls._apply_eagerly(args, kwargs)

    def opaque(self, call: functools.partial) -> Any:
        """A method call to run as a whole (an optimizer's step()), not op by op."""
        return call.func(*call.args, **call.keywords)  # the method, with the caller's arguments

    def accumulate(self, variable: Any, previous: Any, gradient: Any) -> None:
        """The engine added `gradient` into a leaf's .grad (which was `previous`)."""

    def set_grad(self, variable: Any, value: Any) -> None:
        """`variable.grad = value` is about to happen."""

    def copy_into(self, variable: Any, source: Any) -> None:
        """An in-place update is about to write the array `source` into `variable`."""

    def constants(self, variables: list) -> None:
        """Variables the engine made from nothing (seed gradients, zeros)."""

    def item(self, variable: Any, value: Any) -> None:
        """`.item()` read `value` out of `variable`."""

    def escape(self, variable: Any, how: str) -> None:
        """`.data`, `.numpy()`, ... handed a Variable's raw array out."""

    def raw_read(self, op: str) -> None:
        """`numeric()` read array values outside a Function's forward."""

    def unsupported(self, reason: str) -> None:
        """Something a listener cannot follow happened (hooks, grad(), ...)."""

    def gradient_hooks(self, node: Any) -> None:
        """backward() is about to run `node`'s gradient hooks or keep its retained grad."""

    def assume(self, array: Any, holds: Callable[[Any], bool], what: str) -> None:
        """Library code chose a branch from `array`'s values (cross_entropy's class labels):
        `holds(values)` is True while the same branch would be taken; `what` says so."""


# The listener of a thread nobody listens to: every hook does nothing.
QUIET = Listener()




class ThreadState(threading.local):
    """What the core reads at every operation, per thread."""

    # grad_mode.py: record a graph for backward? (no_grad turns it off)
    grad_enabled: bool = True
    # detect_anomaly (below): keep each node's forward stack and check each gradient for NaN?
    anomaly_enabled: bool = False
    # Listener (above): who else hears each operation (minigrad.compile, forward_ad); QUIET if none
    listener: Listener = QUIET
    # engine.GradAssignments: the `x.grad = g` made by the backward formulas now running
    grad_assignments: Any = None
    # function.saved_tensors_hooks: the (pack_hook, unpack_hook) pairs of the open ones,
    # innermost last; a tuple, so that threads never share one
    saved_tensors_hooks: tuple = ()
    # function.py: a backward runs on NumPy arrays (Function.backward_on_arrays): saved
    # values are read as their arrays
    saved_as_arrays: bool = False
    # minigrad.func (func/levels.py): how many transforms (grad, vmap, ...) are running
    func_depth: int = 0
    # inference_mode (below): Variables made now are inference Variables (x.is_inference())
    inference_enabled: bool = False


state = ThreadState()


def unheard(call: Callable[[], Any]) -> Any:
    """Run `call` with no listener (what runs inside one reported call is not reported
    again), then give the listener back."""
    listener = state.listener
    state.listener = QUIET
    try:
        return call()
    finally:
        state.listener = listener


def traced_as_one_call(method: Callable) -> Callable:
    """Wrap a method (an optimizer's step) so that a listener hears it as one opaque call,
    replayed by calling it again, instead of the operations inside it."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return state.listener.opaque(functools.partial(method, self, *args, **kwargs))

    return run




def is_grad_enabled() -> bool:
    """True when operations on Variables that require grad are recorded for backward."""
    return state.grad_enabled


class _GradModeContext:
    """Base of no_grad and enable_grad: sets the mode on enter, restores it on exit."""

    mode = True

    def __new__(cls, func: Callable | None = None):
        # `@no_grad` without parentheses calls the class with the function itself.
        if func is None:
            return super().__new__(cls)
        if not callable(func):
            raise TypeError(
                f"{cls.__name__}() takes no arguments; got {type(func).__name__}. "
                f"Use it as `with {cls.__name__}():`, `@{cls.__name__}()` or `@{cls.__name__}`."
            )
        return cls()(func)

    def __enter__(self) -> None:
        self._previous = state.grad_enabled
        state.grad_enabled = self.mode

    def __exit__(self, *exc_info: Any) -> None:
        state.grad_enabled = self._previous

    def __call__(self, func: Callable) -> Callable:
        return in_mode(func, type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class no_grad(_GradModeContext):  # noqa: N801 (PyTorch's name)
    """Turn recording off: results of operations do not require grad.

    Factories keep their `requires_grad=` argument, and `Parameter` always requires grad.
    """

    mode = False


class enable_grad(_GradModeContext):  # noqa: N801 (PyTorch's name)
    """Turn recording back on, for example inside a function decorated with no_grad."""

    mode = True


class set_grad_enabled(_GradModeContext):  # noqa: N801 (PyTorch's name)
    """Set recording on or off: as a plain call, a context manager or a decorator.

    As in PyTorch, the plain call `set_grad_enabled(False)` takes effect at once.
    """

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled expects True or False; got {mode!r} ({type(mode).__name__})."
            )
        self.mode = mode
        self._previous = state.grad_enabled
        state.grad_enabled = mode

    def __enter__(self) -> None:
        # The switch already happened in __init__; _previous is what to restore.
        state.grad_enabled = self.mode

    def __call__(self, func: Callable) -> Callable:
        # Used as a decorator: undo the switch made in __init__, apply it per call.
        state.grad_enabled = self._previous
        mode = self.mode
        return in_mode(func, lambda: set_grad_enabled(mode))

    def __repr__(self) -> str:
        return f"set_grad_enabled(mode={self.mode})"

def in_mode(func: Callable, mode: Callable[[], Any]) -> Callable:
    """`func` run inside a fresh `mode()` context per call (the same decorated function may
    run in many threads). A generator function gets the mode around each of its steps,
    not only around the call that makes the generator, as PyTorch's decorators do."""
    if not inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def run_in_mode(*args: Any, **kwargs: Any) -> Any:
            with mode():
                return func(*args, **kwargs)

        return run_in_mode

    @functools.wraps(func)
    def run_generator_in_mode(*args: Any, **kwargs: Any) -> Generator:
        generator = func(*args, **kwargs)
        sent, thrown = None, None
        while True:
            try:
                with mode():
                    if thrown is None:
                        value = generator.send(sent)
                    else:
                        value = generator.throw(thrown)
            except StopIteration as finished:
                return finished.value
            sent, thrown = None, None
            try:
                sent = yield value
            except GeneratorExit:
                with mode():
                    generator.close()
                raise
            except BaseException as error:  # thrown in by the caller: pass it on
                thrown = error

    return run_generator_in_mode


# ------------------------------------------------------------------------- anomaly
#
# detect_anomaly(): find the operation whose backward produced NaN.
#
# While it is on, every recorded node keeps the stack of the forward call that made it,
# and the engine checks each gradient a backward returns. The first NaN raises an error
# that names the node and shows where its forward ran.

# The folder of the minigrad package: a stack frame in a file under it is minigrad's own.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class detect_anomaly:  # noqa: N801 (PyTorch's name)
    """Context manager (and decorator, with or without parentheses) that turns it on."""

    def __new__(cls, check_nan: Any = True):
        # `@detect_anomaly` without parentheses calls the class with the function itself.
        if callable(check_nan):
            return cls()(check_nan)
        return super().__new__(cls)

    def __init__(self, check_nan: bool = True) -> None:
        if callable(check_nan):
            return  # __new__ already returned the decorated function
        if not isinstance(check_nan, bool):
            raise TypeError(
                f"detect_anomaly(check_nan=...) expects True or False; got {check_nan!r}."
            )
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._previous = state.anomaly_enabled
        state.anomaly_enabled = self.check_nan

    def __exit__(self, *exc_info: Any) -> None:
        state.anomaly_enabled = self._previous

    def __call__(self, func: Callable) -> Callable:
        check_nan = self.check_nan
        return in_mode(func, lambda: detect_anomaly(check_nan))


def _in_package(frame: str) -> bool:
    """Whether a formatted stack frame ('  File "path", line n, in f') is minigrad's code."""
    path = frame.split('"')[1] if frame.count('"') >= 2 else ""
    return os.path.abspath(path).startswith(_PACKAGE)


def check_gradients(node: Any, grads: tuple) -> None:
    """Raise if a numeric gradient that `node`'s backward returned holds NaN."""
    for index, grad in enumerate(grads):
        if grad is None or grad.is_text or not np.isnan(grad._data).any():
            continue
        where = ""
        if node._forward_trace:
            # The learner's own lines: drop the frames inside the minigrad package (by its
            # path, so a learner's checkout that is itself called minigrad still shows).
            frames = [f for f in node._forward_trace if not _in_package(f)]
            where = "\nThe forward call that made this node:\n" + "".join(frames[-4:])
        raise RuntimeError(
            f"Function '{node.name()}' returned nan values in its {index}th output "
            f"(the gradient for input {index}).{where}"
        )


# ------------------------------------------------------------------------- inference
#
# inference_mode: PyTorch's no_grad for pure inference, whose results are marked.
#
# Inside it nothing is recorded, and every Variable made is an *inference* Variable
# (x.is_inference()). Outside it, an inference Variable may not be saved for backward by a
# recorded operation, nor changed in place: nothing recorded its history, so no gradient
# through it could be right. `.clone()` (outside inference_mode) gives a normal Variable.

# How many inference_mode() blocks are open, in all threads: Variable._make reads this plain
# number first, as reading the thread's own flag (state.inference_enabled) costs far more.
inference_entered = 0
_inference_lock = threading.Lock()


class inference_mode(_GradModeContext):  # noqa: N801 (PyTorch's name)
    """`with inference_mode():` no recording, and Variables made inside are inference
    Variables. `inference_mode(False)` turns both off (recording on, even inside no_grad,
    as PyTorch's does)."""

    def __new__(cls, mode: Any = True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: Any = True) -> None:
        if callable(mode):
            return
        if not isinstance(mode, bool):
            raise TypeError(
                f"inference_mode expects True or False; got {mode!r} ({type(mode).__name__})."
            )
        self.mode = not mode  # the grad mode inside: inference means no recording
        self.inference = mode

    def __enter__(self) -> None:
        global inference_entered
        super().__enter__()
        self._previous_inference = state.inference_enabled
        state.inference_enabled = self.inference
        with _inference_lock:
            inference_entered += 1

    def __exit__(self, *exc_info: Any) -> None:
        global inference_entered
        with _inference_lock:
            inference_entered -= 1
        state.inference_enabled = self._previous_inference
        super().__exit__(*exc_info)

    def __call__(self, func: Callable) -> Callable:
        inference = self.inference
        return in_mode(func, lambda: inference_mode(inference))

    def __repr__(self) -> str:
        return f"inference_mode(mode={self.inference})"


def is_inference_mode_enabled() -> bool:
    """True inside `inference_mode()`: Variables made now are inference Variables."""
    return state.inference_enabled


__all__ = ["enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]

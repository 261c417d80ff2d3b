"""A seeded fuzz of the public surface: over 10,000 calls with arguments of every kind.
None may end in an internal error, a message under 20 characters, or a hang; and where
PyTorch has the same API and refuses an argument with a TypeError, minigrad raises a
TypeError too.

What is called is found by introspection, so a new API is fuzzed as soon as it exists:
the op table (minigrad.ops.table.OPS and OPERATORS: top-level functions and Variable
methods), minigrad's other public callables and Variable methods, nn.functional, every
nn.Module subclass (constructor, forward, the Module methods), the optimizers and
schedulers, autograd.functional, forward_ad, custom Functions, utils.checkpoint,
utils.data, save and load (of damaged files too), viz and the text Functions.

The rules (issue 22, item 4):

- Internal: an exception minigrad did not mean to raise. Always internal:
  AssertionError, RecursionError, ZeroDivisionError, UnboundLocalError, NameError,
  MemoryError and the errors of file formats (zipfile.BadZipFile, json.JSONDecodeError,
  EOFError, UnicodeError, struct.error). Any other exception is internal unless a
  `raise` statement in minigrad's own source raised it: the traceback's last frame is in
  the minigrad package and its line is a `raise`. So a TypeError, ValueError, IndexError
  or KeyError from inside NumPy or the standard library, or from an operation on a
  minigrad line (`a * None`), is internal; an IndexError minigrad raises on purpose
  (PyTorch's type for an index out of range) is not. Not minigrad's doing, so not
  counted: Python's TypeError for a call that does not fit the signature ("takes 2
  positional arguments but 3 were given": it names the function, as PyTorch's does), an
  OSError about a path, and what the fuzz's own callbacks raise.
- Every message, of every exception, has at least 20 characters.
- No call runs longer than TIMEOUT seconds (and sizes stay small: a few thousand
  elements at most).
- PyTorch, where installed: the same call runs on torch (Variables become tensors of the
  same values, dtype and requires_grad; a call with a text or CUDA Variable, or an object
  only minigrad has, is not compared). Where torch raises TypeError (a wrong argument
  kind), minigrad must raise TypeError too, or succeed: accepting more kinds than PyTorch
  (NumPy arrays, Python numbers) is allowed.

The surface is split into groups, one test each, so `pytest -n 2` runs them side by side.
The op table and nn.functional have their own tests (their argument checks live in
minigrad/ops/tooling/arguments.py). A failing test lists its findings grouped by API, with a
repro for each.
"""

from __future__ import annotations

import functools
import inspect
import io
import linecache
import math
import os
import re
import signal
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pytest

import minigrad as mg
from minigrad import Variable
from minigrad.ops import table

# Fixed, so every run makes the same calls; set MINIGRAD_FUZZ_SEED to explore others.
SEED = int(os.environ.get("MINIGRAD_FUZZ_SEED", "22"))
TIMEOUT = 5.0  # seconds for one call
SHORTEST_MESSAGE = 20
PACKAGE = os.path.dirname(os.path.abspath(mg.__file__)) + os.sep
# minigrad's own code: the package, and the kernels it runs CUDA Variables on.
OWN_CODE = (PACKAGE, os.path.join(os.path.dirname(os.path.dirname(PACKAGE)), "kernels") + os.sep)
THIS_FILE = os.path.abspath(__file__)

# Always internal, wherever they come from.
ALWAYS_INTERNAL = (
    AssertionError,
    RecursionError,
    ZeroDivisionError,
    UnboundLocalError,
    NameError,
    MemoryError,
    EOFError,
    UnicodeError,
)
# Errors of file formats, by name (their modules need not be imported to be recognised).
FORMAT_ERRORS = {"BadZipFile", "LargeZipFile", "JSONDecodeError", "error"}
# Python's own TypeError for a call that does not fit the callee's signature.
SIGNATURE_MISMATCH = re.compile(
    r"positional argument|keyword argument|got multiple values for argument|"
    r"takes no arguments|required keyword-only"
)
# A line that passes the caller's arguments on: `return method(self, *args, **kwargs)`.
FORWARDING = re.compile(r"\*\w+")
# What a line calls or indexes: `function(`, `self.dataset[`.
CALLED_OR_INDEXED = re.compile(r"([A-Za-z_][\w.]*)\s*([(\[])")


class CallTimedOut(BaseException):
    """A call ran past TIMEOUT (a BaseException, so no `except Exception` swallows it)."""


# --------------------------------------------------------------------------- arguments


class Arg(NamedTuple):
    """One argument: the code that makes it (the repro shows it) and a maker of fresh
    copies (a call may change its arguments in place)."""

    code: str
    make: Callable[[], Any]


def _arg(code: str, make: Callable[[], Any]) -> Arg:
    return Arg(code, make)


def _cuda_available() -> bool:
    """Whether a CUDA Variable can be made (a GPU or Numba's simulator)."""
    try:
        mg.ones(1).to("cuda")
    except Exception:  # noqa: BLE001 (no device of any kind: CUDA Variables are left out)
        return False
    return True


def _identity(*values: Any) -> Any:
    return values[0] if values else None


def _double(value: Any) -> Any:
    return value * 2


def _square_sum(value: Any) -> Any:
    return (value * value).sum()


def _returns_none(*values: Any) -> None:
    return None


def _returns_text(*values: Any) -> str:
    return "not a Variable"


NUMERIC_VARIABLES = [
    _arg("mg.randn(3)", lambda: mg.randn(3)),
    _arg("mg.randn(2, 3)", lambda: mg.randn(2, 3)),
    _arg("mg.randn(2, 3, 4)", lambda: mg.randn(2, 3, 4)),
    _arg("mg.randn(4, 4)", lambda: mg.randn(4, 4)),
    _arg("mg.tensor(2.0)", lambda: mg.tensor(2.0)),
    _arg("mg.zeros(0)", lambda: mg.zeros(0)),
    _arg("mg.randn(2, 3, dtype=mg.float32)", lambda: mg.randn(2, 3, dtype=mg.float32)),
    _arg("mg.arange(6)", lambda: mg.arange(6)),
    _arg("mg.tensor([True, False, True])", lambda: mg.tensor([True, False, True])),
    _arg("mg.randn(3, requires_grad=True)", lambda: mg.randn(3, requires_grad=True)),
    _arg("mg.randn(2, 3, requires_grad=True) * 2", lambda: mg.randn(2, 3, requires_grad=True) * 2),
    _arg("mg.nn.Parameter(mg.randn(2, 3))", lambda: mg.nn.Parameter(mg.randn(2, 3))),
]
TEXT_VARIABLES = [
    _arg("Variable('hello world')", lambda: Variable("hello world")),
    _arg("Variable('a b', requires_grad=True)", lambda: Variable("a b", requires_grad=True)),
]
CUDA_VARIABLES = (
    [_arg("mg.randn(2, 3).to('cuda')", lambda: mg.randn(2, 3).to("cuda"))]
    if _cuda_available()
    else []
)
OTHER_VALUES = [
    _arg("None", lambda: None),
    _arg("0", lambda: 0),
    _arg("1", lambda: 1),
    _arg("-1", lambda: -1),
    _arg("2", lambda: 2),
    _arg("5", lambda: 5),
    _arg("0.5", lambda: 0.5),
    _arg("-2.5", lambda: -2.5),
    _arg("float('nan')", lambda: math.nan),
    _arg("float('inf')", lambda: math.inf),
    _arg("True", lambda: True),
    _arg("False", lambda: False),
    _arg("1j", lambda: 1j),
    _arg("''", lambda: ""),
    _arg("'abc'", lambda: "abc"),
    _arg("'mean'", lambda: "mean"),
    _arg("'cpu'", lambda: "cpu"),
    _arg("[]", lambda: []),
    _arg("[1, 2, 3]", lambda: [1, 2, 3]),
    _arg("[[1, 2], [3]]", lambda: [[1, 2], [3]]),
    _arg("[1.0, 'a']", lambda: [1.0, "a"]),
    _arg("(1, 2)", lambda: (1, 2)),
    _arg("(0,)", lambda: (0,)),
    _arg("{}", lambda: {}),
    _arg("{'a': 1}", lambda: {"a": 1}),
    _arg("np.ones(3)", lambda: np.ones(3)),
    _arg("np.arange(6).reshape(2, 3)", lambda: np.arange(6).reshape(2, 3)),
    _arg("np.array(['a', 'b'])", lambda: np.array(["a", "b"])),
    _arg("np.array(1.5)", lambda: np.array(1.5)),
    _arg("mg.float32", lambda: mg.float32),
    _arg("mg.int64", lambda: mg.int64),
    _arg("mg.device('cpu')", lambda: mg.device("cpu")),
    _arg("slice(0, 2)", lambda: slice(0, 2)),
    _arg("...", lambda: ...),
    _arg("_double", lambda: _double),
    _arg("object()", lambda: object()),
    _arg("mg.nn.Linear(3, 2)", lambda: mg.nn.Linear(3, 2)),
]
ANY_VALUE = NUMERIC_VARIABLES + TEXT_VARIABLES + CUDA_VARIABLES + OTHER_VALUES

SMALL_INTS = [_arg(str(n), lambda n=n: n) for n in (0, 1, 2, -1, 3)]
SHAPES = [_arg(repr(s), lambda s=s: s) for s in ((2, 3), (3,), (-1,), (1, 2, 3), ())]
FLOATS = [_arg(repr(f), lambda f=f: f) for f in (0.5, 0.1, 1.0, 1e-3)]
BOOLS = [_arg("True", lambda: True), _arg("False", lambda: False)]
REDUCTIONS = [_arg(repr(r), lambda r=r: r) for r in ("mean", "sum", "none")]
DTYPES = [_arg(f"mg.{d}", lambda d=d: getattr(mg, d)) for d in ("float32", "float64", "int64")]
FUNCTIONS = [
    _arg("_double", lambda: _double),
    _arg("_square_sum", lambda: _square_sum),
    _arg("_identity", lambda: _identity),
    _arg("_returns_none", lambda: _returns_none),
    _arg("_returns_text", lambda: _returns_text),
]

# Plausible values by parameter name: a call gets past the first checks often enough to
# reach the deeper ones.
BY_NAME: dict[str, list[Arg]] = {}
for _names, _values in (
    (
        "dim dim0 dim1 dim2 axis k n diagonal offset start_dim end_dim num_classes steps "
        "chunks sections repeats padding_idx num_embeddings embedding_dim in_features "
        "out_features step_size T_max segments num_samples high low start end source "
        "destination index_dim batch_size",
        SMALL_INTS,
    ),
    ("dims shape sizes size normalized_shape perm pad unflattened_size split_size", SHAPES),
    (
        "p eps lr alpha beta value scalar min max negative_slope momentum weight_decay gamma "
        "threshold exponent lambd factor rtol atol dampening rho lr_decay eta_min",
        FLOATS,
    ),
    (
        "keepdim inplace training requires_grad bias replacement descending largest sorted "
        "unbiased retain_graph create_graph allow_unused nesterov amsgrad maximize strict "
        "shuffle drop_last elementwise_affine",
        BOOLS,
    ),
    ("reduction", REDUCTIONS),
    ("dtype", DTYPES),
    ("device", [_arg("'cpu'", lambda: "cpu")]),
    ("func fn function fn_or_name closure hook lr_lambda collate_fn", FUNCTIONS),
):
    for _name in _names.split():
        BY_NAME[_name] = _values


def _pick(rng: np.random.Generator, values: list[Arg]) -> Arg:
    return values[int(rng.integers(len(values)))]


def _plausible(parameter: inspect.Parameter) -> list[Arg]:
    """Values of the kind the parameter's name or annotation asks for."""
    if parameter.name in BY_NAME:
        return BY_NAME[parameter.name]
    annotation = str(parameter.annotation)
    if "Variable" in annotation or "Tensor" in annotation:
        return NUMERIC_VARIABLES
    for word, values in (("int", SMALL_INTS), ("float", FLOATS), ("bool", BOOLS)):
        if word in annotation:
            return values
    if "Callable" in annotation:
        return FUNCTIONS
    return NUMERIC_VARIABLES


def _argument(rng: np.random.Generator, parameter: inspect.Parameter) -> Arg:
    """Mostly a plausible value; a third of the time anything at all."""
    if rng.random() < 0.35:
        return _pick(rng, ANY_VALUE)
    return _pick(rng, _plausible(parameter))


def _signature(function: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def random_arguments(
    rng: np.random.Generator, function: Callable, skip_first: bool = False
) -> tuple[list[Arg], dict[str, Arg]]:
    """Positional and keyword arguments for `function`, drawn from its signature: the
    required ones, sometimes the optional ones, sometimes one too many."""
    signature = _signature(function)
    if signature is None:
        count = int(rng.integers(0, 3))
        return [_pick(rng, ANY_VALUE) for _ in range(count)], {}
    parameters = list(signature.parameters.values())
    if skip_first and parameters:
        parameters = parameters[1:]
    positional, keywords = [], {}
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL:
            positional.extend(_argument(rng, parameter) for _ in range(int(rng.integers(0, 4))))
        elif parameter.kind is parameter.VAR_KEYWORD:
            if rng.random() < 0.05:
                keywords["unknown_keyword"] = _pick(rng, ANY_VALUE)
        elif parameter.default is parameter.empty:
            if parameter.kind is parameter.KEYWORD_ONLY:
                keywords[parameter.name] = _argument(rng, parameter)
            else:
                positional.append(_argument(rng, parameter))
        elif rng.random() < 0.25:
            keywords[parameter.name] = _argument(rng, parameter)
    if rng.random() < 0.05:
        positional.append(_pick(rng, ANY_VALUE))  # one too many
    return positional, keywords


# --------------------------------------------------------------------------- a call


class Call(NamedTuple):
    """One call to make: the API's name, the code that shows it, the call itself, the same
    call on torch (None: not compared), and the objects the call was given."""

    api: str
    run: Callable[[], Any]
    repro: str
    torch_run: Callable[[], Any] | None = None
    given: tuple = ()
    expected: tuple = ()  # when set, the only exception types allowed


class Finding(NamedTuple):
    api: str
    repro: str
    problem: str

    @property
    def category(self) -> str:
        """hang, short message, PyTorch's type, or internal (every other finding)."""
        for start, category in (("hang", "hang"), ("PyTorch raises", "PyTorch's type")):
            if self.problem.startswith(start):
                return category
        return "short message" if "short message" in self.problem else "internal"


def _arguments_code(positional: list[Arg], keywords: dict[str, Arg]) -> str:
    parts = [arg.code for arg in positional]
    parts += [f"{name}={arg.code}" for name, arg in keywords.items()]
    return ", ".join(parts)


def generic_call(
    api: str,
    function: Callable,
    positional: list[Arg],
    keywords: dict[str, Arg],
    torch_function: Callable | None = None,
    receiver: Arg | None = None,
    shown_as: str | None = None,
) -> Call:
    """A Call of function(*positional, **keywords), or receiver.method(...) when the
    function is a method (its first argument is then the receiver). The repro shows the
    callee as `shown_as` when given (the code that built a module, say)."""
    everything = ([receiver] if receiver is not None else []) + positional
    values = [arg.make() for arg in everything]
    named = {name: arg.make() for name, arg in keywords.items()}
    arguments = _arguments_code(positional, keywords)
    if receiver is not None:
        repro = f"({receiver.code}).{api.rsplit('.', 1)[-1]}({arguments})"
    elif shown_as is not None:
        repro = f"{shown_as}({arguments})"
    else:
        repro = f"{api}({arguments})"
    torch_run = None
    if torch_function is not None:
        try:
            torch_values = [to_torch(value) for value in values]
            torch_named = {name: to_torch(value) for name, value in named.items()}
        except NotInTorchError:
            pass
        else:
            torch_run = functools.partial(torch_function, *torch_values, **torch_named)
    given = (*values, *named.values())
    return Call(api, functools.partial(function, *values, **named), repro, torch_run, given)


# --------------------------------------------------------------------------- PyTorch


class NotInTorchError(Exception):
    """The value has no PyTorch counterpart (text, CUDA, a minigrad object)."""


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


TORCH = _torch()


def to_torch(value: Any) -> Any:
    """The PyTorch counterpart of a minigrad argument, or NotInTorchError."""
    if isinstance(value, Variable):
        if value.is_text or value.device.type != "cpu":
            raise NotInTorchError()
        tensor = TORCH.from_numpy(np.array(value.data, copy=True))
        if isinstance(value, mg.nn.Parameter):
            return TORCH.nn.Parameter(tensor, requires_grad=value.requires_grad)
        if value.requires_grad:
            tensor.requires_grad_(True)
            if not value.is_leaf:
                tensor = tensor * 1
        return tensor
    if isinstance(value, mg.device):
        return TORCH.device(value.type)
    if isinstance(value, type) and issubclass(value, np.generic):
        return {np.float32: TORCH.float32, np.float64: TORCH.float64, np.int64: TORCH.int64}[
            value
        ]
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(item) for item in value)
    if isinstance(value, dict):
        return {key: to_torch(item) for key, item in value.items()}
    if isinstance(value, (mg.nn.Module, mg.optim.Optimizer)):
        raise NotInTorchError()
    return value


def torch_path(path: str) -> Callable | None:
    """torch's object at a dotted path ("nn.functional.relu"), or None."""
    if TORCH is None:
        return None
    found: Any = TORCH
    for part in path.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


# --------------------------------------------------------------------------- judging


def _last_frame(error: BaseException) -> Any:
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    return trace


def _looked_up(frame: Any, dotted: str) -> Any:
    """The value of `name` or `name.attribute...` in the frame (None if there is none)."""
    first, *rest = dotted.split(".")
    value = frame.f_locals.get(first)
    for attribute in rest:
        value = getattr(value, attribute, None)
    return value


def _from_given_object(frame: Any, line: str, given: tuple) -> bool:
    """Whether the line calls or indexes one of the objects the call was given (a callback,
    a NumPy dtype, a dict used as a dataset): what fails in there is that object's own."""
    given_ids = {id(value) for value in given}
    for value in given:
        if isinstance(value, (list, tuple)):
            given_ids.update(id(item) for item in value)
        elif isinstance(value, dict):
            given_ids.update(id(item) for item in value.values())
    for dotted, bracket in CALLED_OR_INDEXED.findall(line):
        value = _looked_up(frame, dotted)
        if value is None or id(value) not in given_ids:
            continue
        called = bracket == "(" and callable(value)
        indexed = bracket == "[" and hasattr(value, "__getitem__")
        if called or indexed:
            return True
    return False


def verdict(error: BaseException, given: tuple = ()) -> str | None:
    """None for a clear error; else what is wrong with it (see the module's docstring)."""
    kind = type(error).__name__
    message = str(error)
    trace = _last_frame(error)
    filename = os.path.abspath(trace.tb_frame.f_code.co_filename) if trace else ""
    line_number = trace.tb_lineno if trace else 0
    line = linecache.getline(filename, line_number).strip()
    where = os.path.relpath(filename, os.path.dirname(PACKAGE)) + f":{line_number}"
    if isinstance(error, CallTimedOut):
        return f"hang: ran past {TIMEOUT} s"
    if filename == THIS_FILE and not isinstance(error, ALWAYS_INTERNAL):
        problem = None  # the fuzz's own callback, or a call that does not fit the signature
    elif isinstance(error, ALWAYS_INTERNAL) or kind in FORMAT_ERRORS:
        problem = f"internal {kind} at {where}: {message[:150]}"
    elif isinstance(error, OSError) and error.filename is not None:
        problem = None  # about a path, as PyTorch's
    elif not filename.startswith(OWN_CODE):
        problem = f"{kind} raised inside {where}: {message[:150]}"
    elif line.startswith("raise"):
        problem = None
    elif isinstance(error, TypeError) and FORWARDING.search(line) and (
        SIGNATURE_MISMATCH.search(message)
    ):
        problem = None  # a wrapper passed the caller's arguments on: a signature misfit
    elif _from_given_object(trace.tb_frame, line, given):
        return None  # that object's own error, and its own message
    else:
        problem = f"{kind} not raised on purpose, at {where} ({line}): {message[:150]}"
    if problem is None and len(message) < SHORTEST_MESSAGE:
        problem = f"{kind} with a short message {message!r} at {where}"
    return problem


# The kinds minigrad never takes for a number, a shape, a dtype, a device or a Variable.
# (Not a device: minigrad.device(minigrad.device("cpu")) is fine where PyTorch wants a str.)
# (It takes more than PyTorch otherwise: an int for a size, a list or an array for a
# Variable; PyTorch's TypeError about those is no wrong kind for minigrad.)
NEVER_ACCEPTED = {"str", "NoneType", "dict", "complex", "object", "function", "slice",
                  "ellipsis", "type", "dtype", "Linear", "Tensor"}  # fmt: skip
# How PyTorch's TypeErrors name the kind received: "must be int, not str", "but got str",
# "(!str!, int)" among an overload's invalid types, "'str' object cannot be ...".
RECEIVED = re.compile(
    r"must be ([\w. ]+?), not ([\w.]+)|but got ([\w.]+)|!([\w.]+)!|'(\w+)' object"
)


def wrong_kind(torch_error: BaseException | None) -> bool:
    """Whether PyTorch refused an argument of a kind minigrad never takes either: then
    minigrad's error must be a TypeError too. Also a float where PyTorch needs an int (a
    dim, a count). A Tensor where PyTorch needs something else (a dtype, a number) counts,
    except where it needs a Tensor or a number."""
    if not isinstance(torch_error, TypeError):
        return False
    for expected, received, got, marked, named in RECEIVED.findall(str(torch_error)):
        kind = (received or got or marked or named).removeprefix("torch.")
        if kind == "Tensor" and ("Tensor" in expected or "Number" in expected or not expected):
            continue
        if kind in NEVER_ACCEPTED or (kind == "float" and expected == "int"):
            return True
    return False


def _given_to(run: Callable) -> tuple:
    """The arguments a functools.partial holds: what a hand-made call was given."""
    if not isinstance(run, functools.partial):
        return ()
    return (*run.args, *run.keywords.values())


def _alarm(signal_number: int, frame: Any) -> None:
    raise CallTimedOut()


def _outcome(run: Callable[[], Any]) -> BaseException | None:
    """The exception the call raised (None if it returned), within TIMEOUT."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        result = run()
        if isinstance(result, Iterator):  # a generator fails only when it runs
            for _ in zip(range(100), result):
                pass
    except CallTimedOut as error:
        return error
    except Exception as error:  # noqa: BLE001 (the point: every exception is judged)
        return error
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return None


class GlobalState:
    """What a call may switch for good (grad mode, the text engine, a dual level left
    open); put back after each call, so one call cannot change the next."""

    def __init__(self) -> None:
        from minigrad import devices
        from minigrad.core import engine, grad_mode
        from minigrad.core.grad_mode import state
        from minigrad.text import feedback_engine

        self.grad_mode, self.text_engine, self.state = grad_mode, feedback_engine, state
        self.engine, self.devices = engine, devices
        self.default_device = dict(devices._default)
        self.enabled = grad_mode.is_grad_enabled()
        self.default_engine = feedback_engine._default
        self.listener = state.listener
        self.observers = list(engine._step_observers)
        self.hooks = state.saved_tensors_hooks

    def restore(self) -> None:
        self.grad_mode.set_grad_enabled(self.enabled)
        self.text_engine._default = self.default_engine
        self.state.listener = self.listener
        self.engine._step_observers[:] = self.observers
        self.state.saved_tensors_hooks = self.hooks
        self.devices._default.update(self.default_device)


class Tally:
    """The calls made and what was found, by API."""

    def __init__(self) -> None:
        self.calls = 0
        self.apis: set[str] = set()
        self.raised = 0
        self.compared = 0
        self.findings: list[Finding] = []

    def run(self, call: Call, state: GlobalState) -> None:
        self.calls += 1
        self.apis.add(call.api)
        error = _outcome(call.run)
        state.restore()
        if error is not None:
            self.raised += 1
            problem = verdict(error, call.given or _given_to(call.run))
            if problem is None and call.expected and not isinstance(error, call.expected):
                expected = " or ".join(kind.__name__ for kind in call.expected)
                problem = f"{type(error).__name__} where only {expected} may come out: {error}"
            if problem is not None:
                self.findings.append(Finding(call.api, call.repro, problem))
        if call.torch_run is None:
            return
        torch_error = _outcome(call.torch_run)
        state.restore()
        self.compared += 1
        if error is not None and not isinstance(error, TypeError) and wrong_kind(torch_error):
            self.findings.append(
                Finding(
                    call.api,
                    call.repro,
                    f"PyTorch raises TypeError ({str(torch_error)[:120]}); minigrad raises "
                    f"{type(error).__name__}: {str(error)[:120]}",
                )
            )

    def report(self, group: str, seconds: float) -> str:
        by_api: dict[str, list[Finding]] = {}
        for finding in self.findings:
            by_api.setdefault(finding.api, []).append(finding)
        counts = Counter(finding.category for finding in self.findings)
        lines = [
            f"fuzz group {group!r}: {self.calls} calls over {len(self.apis)} APIs in "
            f"{seconds:.1f} s; {self.raised} raised, {self.compared} compared with PyTorch; "
            f"{len(self.findings)} findings in {len(by_api)} APIs {dict(counts)}"
        ]
        for api in sorted(by_api):
            findings = by_api[api]
            lines.append(f"  {api}: {len(findings)}")
            seen: set[str] = set()
            for finding in findings:
                if finding.problem[:60] in seen:
                    continue  # the same failure with other arguments
                seen.add(finding.problem[:60])
                lines.append(f"    {finding.repro}\n      -> {finding.problem}")
                if len(seen) == 3:
                    break
        return "\n".join(lines)


def run_group(group: str, calls: Iterator[Call]) -> Tally:
    """Make every call, judging each; the report is printed (pytest -s shows it)."""
    tally = Tally()
    state = GlobalState()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls:
            tally.run(call, state)
    print(tally.report(group, time.perf_counter() - start))
    return tally


# --------------------------------------------------------------------------- the surface


def _public(owner: Any) -> list[str]:
    return sorted(name for name in dir(owner) if not name.startswith("_"))


def _minigrads(value: Any) -> bool:
    """Whether value is minigrad's own (not NumPy's float32 or typing's Any)."""
    return getattr(value, "__module__", "").startswith("minigrad")


def op_table_functions() -> dict[str, Callable]:
    """minigrad.<name> for every op-table function, under its first name."""
    return {
        f"minigrad.{op.name}": op.function for op in table.OPS.values() if op.function is not None
    }


def functional_functions() -> dict[str, Callable]:
    """The public functions nn.functional defines."""
    functional = mg.nn.functional
    return {
        f"nn.functional.{name}": getattr(functional, name)
        for name in _public(functional)
        if inspect.isfunction(getattr(functional, name))
        and getattr(functional, name).__module__ == functional.__name__
    }


def op_table_method_names() -> list[str]:
    """Variable's methods from the op table: each op, its aliases and in-place variants,
    and the operators (x + y, x[i], x.T)."""
    names = set()
    for op in table.OPS.values():
        if op.method is None:
            continue
        for spelling in (op.name, *op.aliases):
            names.add(spelling)
            if op.inplace:
                names.add(spelling + "_")
    for name in table.OPERATORS:
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            names.add(name)
    return sorted(names)


OTHER_DUNDERS = ("__repr__", "__str__", "__format__", "__bool__", "__len__", "__iter__",
                 "__float__", "__int__", "__index__", "__getattr__")  # fmt: skip
SETTABLE = ("grad", "data", "requires_grad", "name", "role")


def other_method_names() -> list[str]:
    """Variable's public methods that the op table does not attach, and its own dunders."""
    from_table = set(op_table_method_names())
    names = [
        name
        for name in _public(Variable)
        if name not in from_table and callable(inspect.getattr_static(Variable, name))
    ]
    dunders = [name for name in OTHER_DUNDERS if hasattr(Variable, name)]
    return names + [name for name in dunders if name not in from_table]


# Not run on torch: torch.compile loads its compiler (seconds) on the first call.
NOT_COMPARED = ("compile",)
# Exported for isinstance checks, made only by the engine (on its hot path, unchecked), as
# PyTorch's autograd graph nodes cannot be made by hand either.
NOT_CONSTRUCTED = ("BackwardNode",)


def other_top_level() -> dict[str, Callable]:
    """minigrad's public callables outside the op table (factories, grad, save, ...)."""
    from_table = set(table.functions())
    found = {}
    for name in sorted(mg.__all__):
        value = getattr(mg, name)
        if name in from_table or isinstance(value, types.ModuleType) or not callable(value):
            continue
        if not _minigrads(value) or (isinstance(value, type) and issubclass(value, Exception)):
            continue
        if name in NOT_CONSTRUCTED:
            continue
        found[f"minigrad.{name}"] = value
    return found


def module_classes() -> dict[str, type]:
    """Every nn.Module subclass nn exports (Module itself has no forward)."""
    return {
        name: getattr(mg.nn, name)
        for name in _public(mg.nn)
        if isinstance(getattr(mg.nn, name), type)
        and issubclass(getattr(mg.nn, name), mg.nn.Module)
        and getattr(mg.nn, name) is not mg.nn.Module
    }


def optimizer_classes() -> dict[str, type]:
    return {
        name: getattr(mg.optim, name)
        for name in _public(mg.optim)
        if isinstance(getattr(mg.optim, name), type)
        and issubclass(getattr(mg.optim, name), mg.optim.Optimizer)
        and getattr(mg.optim, name) is not mg.optim.Optimizer
    }


def scheduler_classes() -> dict[str, type]:
    schedulers = mg.optim.lr_scheduler
    return {
        name: getattr(schedulers, name)
        for name in _public(schedulers)
        if isinstance(getattr(schedulers, name), type)
        and _minigrads(getattr(schedulers, name))
        and name not in ("LRScheduler", "Optimizer")
        and hasattr(getattr(schedulers, name), "step")
    }


# --------------------------------------------------------------------------- plausible objects

MODULES = [
    _arg("mg.nn.Linear(3, 2)", lambda: mg.nn.Linear(3, 2)),
    _arg("mg.nn.ReLU()", lambda: mg.nn.ReLU()),
    _arg("mg.nn.Tanh()", lambda: mg.nn.Tanh()),
]
PARAMS = [
    _arg("[mg.randn(3, requires_grad=True)]", lambda: [mg.randn(3, requires_grad=True)]),
    _arg("mg.nn.Linear(3, 2).parameters()", lambda: mg.nn.Linear(3, 2).parameters()),
    _arg("[{'params': [mg.randn(2, requires_grad=True)], 'lr': 0.1}]",
         lambda: [{"params": [mg.randn(2, requires_grad=True)], "lr": 0.1}]),
]  # fmt: skip
GRAPHS = [
    _arg("(mg.randn(3, requires_grad=True) * 2).sum()",
         lambda: (mg.randn(3, requires_grad=True) * 2).sum()),
    _arg("mg.randn(2, 3, requires_grad=True).exp()",
         lambda: mg.randn(2, 3, requires_grad=True).exp()),
]  # fmt: skip
DATASETS = [
    _arg("TensorDataset(mg.randn(4, 2), mg.randn(4))",
         lambda: mg.utils.data.TensorDataset(mg.randn(4, 2), mg.randn(4))),
    _arg("[(1.0, 2), (3.0, 4)]", lambda: [(1.0, 2), (3.0, 4)]),
    _arg("[{'x': mg.randn(2)}, {'x': mg.randn(2)}]",
         lambda: [{"x": mg.randn(2)}, {"x": mg.randn(2)}]),
]  # fmt: skip
for _name, _values in (
    ("module modules", MODULES),
    ("params parameters", PARAMS),
    ("outputs output tensors_ variables", GRAPHS),
    ("dataset", DATASETS),
    ("optimizer", [_arg("SGD([mg.randn(2, requires_grad=True)], lr=0.1)",
                        lambda: mg.optim.SGD([mg.randn(2, requires_grad=True)], lr=0.1))]),
    ("lengths indices", [_arg("[2, 2]", lambda: [2, 2]), _arg("[0.5, 0.5]", lambda: [0.5, 0.5])]),
    ("inputs", NUMERIC_VARIABLES + [_arg("(mg.randn(2), mg.randn(2))",
                                         lambda: (mg.randn(2), mg.randn(2)))]),
):  # fmt: skip
    for _name_part in _name.split():
        BY_NAME[_name_part] = _values


def _plausible_only(rng: np.random.Generator, function: Callable, skip_first: bool) -> tuple:
    """Arguments with no wild value: to build an object whose methods are fuzzed next."""
    signature = _signature(function)
    positional, keywords = [], {}
    if signature is None:
        return positional, keywords
    parameters = list(signature.parameters.values())[1 if skip_first else 0 :]
    for parameter in parameters:
        if parameter.default is parameter.empty and parameter.kind in (
            parameter.POSITIONAL_ONLY,
            parameter.POSITIONAL_OR_KEYWORD,
        ):
            positional.append(_pick(rng, _plausible(parameter)))
        elif parameter.default is parameter.empty and parameter.kind is parameter.KEYWORD_ONLY:
            keywords[parameter.name] = _pick(rng, _plausible(parameter))
    return positional, keywords


def _built(rng: np.random.Generator, cls: type, tries: int = 8) -> tuple[Any, str] | None:
    """An instance of cls from plausible arguments, and its code; None when none works."""
    for _ in range(tries):
        positional, keywords = _plausible_only(rng, cls.__init__, skip_first=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                instance = cls(
                    *[arg.make() for arg in positional],
                    **{name: arg.make() for name, arg in keywords.items()},
                )
        except Exception:  # noqa: BLE001 (try other plausible arguments)
            continue
        return instance, f"{cls.__name__}({_arguments_code(positional, keywords)})"
    return None


# --------------------------------------------------------------------------- the groups


def _function_calls(rng: np.random.Generator, targets: dict[str, Callable], count: int,
                    torch_prefix: str | None) -> Iterator[Call]:  # fmt: skip
    """count calls, each to a target drawn at random, with arguments from its signature;
    compared with torch.<torch_prefix><name> where torch has it (torch.<api> when the
    prefix is None)."""
    names = sorted(targets)
    for _ in range(count):
        api = names[int(rng.integers(len(names)))]
        function = targets[api]
        positional, keywords = random_arguments(rng, function)
        name = api.rsplit(".", 1)[-1]
        path = api if torch_prefix is None else torch_prefix + name
        torch_function = None if name in NOT_COMPARED else torch_path(path)
        yield generic_call(api, function, positional, keywords, torch_function)


def _receiver(rng: np.random.Generator) -> Arg:
    """The Variable a method is called on: mostly numeric, sometimes text or on CUDA."""
    roll = rng.random()
    if roll < 0.12:
        return _pick(rng, TEXT_VARIABLES)
    if roll < 0.14 and CUDA_VARIABLES:
        return _pick(rng, CUDA_VARIABLES)
    return _pick(rng, NUMERIC_VARIABLES)


def _method_calls(rng: np.random.Generator, names: list[str], count: int) -> Iterator[Call]:
    """count calls of Variable methods drawn from names, on random receivers."""
    for _ in range(count):
        name = names[int(rng.integers(len(names)))]
        receiver = _receiver(rng)
        attribute = inspect.getattr_static(Variable, name)
        api = f"Variable.{name}"
        if isinstance(attribute, property):  # x.T, x.mT: read it
            yield generic_call(api, attribute.fget, [], {}, _torch_property(name), receiver)
            continue
        positional, keywords = random_arguments(rng, getattr(Variable, name), skip_first=True)
        torch_method = torch_path(f"Tensor.{name}")
        yield generic_call(api, getattr(Variable, name), positional, keywords, torch_method,
                           receiver)  # fmt: skip


def _torch_property(name: str) -> Callable | None:
    if TORCH is None or not hasattr(TORCH.Tensor, name):
        return None
    return lambda tensor: getattr(tensor, name)


def _setter_calls(rng: np.random.Generator, count: int) -> Iterator[Call]:
    """x.grad = value, x.data = value, ...: the settable attributes of a Variable."""
    for _ in range(count):
        name = SETTABLE[int(rng.integers(len(SETTABLE)))]
        receiver = _receiver(rng)
        value = _pick(rng, ANY_VALUE)
        target, new = receiver.make(), value.make()
        torch_run = None
        if TORCH is not None and name in ("grad", "data", "requires_grad"):
            try:
                torch_target, torch_new = to_torch(target), to_torch(new)
            except NotInTorchError:
                pass
            else:
                torch_run = functools.partial(setattr, torch_target, name, torch_new)
        run = functools.partial(setattr, target, name, new)
        repro = f"x = {receiver.code}; x.{name} = {value.code}"
        yield Call(f"Variable.{name} =", run, repro, torch_run)


def op_table_function_calls(rng: np.random.Generator) -> Iterator[Call]:
    yield from _function_calls(rng, op_table_functions(), 1800, "")
    yield from _function_calls(rng, functional_functions(), 600, "nn.functional.")


def op_table_method_calls(rng: np.random.Generator) -> Iterator[Call]:
    yield from _method_calls(rng, op_table_method_names(), 2400)


def other_function_calls(rng: np.random.Generator) -> Iterator[Call]:
    yield from _function_calls(rng, other_top_level(), 700, "")


def other_method_calls(rng: np.random.Generator) -> Iterator[Call]:
    yield from _method_calls(rng, other_method_names(), 500)
    yield from _setter_calls(rng, 250)


def module_calls(rng: np.random.Generator) -> Iterator[Call]:
    """Constructors with random arguments; forward and the Module methods on instances
    built from plausible ones; nn.init and nn.utils."""
    helpers = {f"nn.utils.{name}": getattr(mg.nn.utils, name) for name in mg.nn.utils.__all__
               if callable(getattr(mg.nn.utils, name))}  # fmt: skip
    helpers["nn.utils.rnn.pad_sequence"] = mg.nn.utils.rnn.pad_sequence
    helpers.update({f"nn.init.{name}": getattr(mg.nn.init, name) for name in _public(mg.nn.init)
                    if inspect.isfunction(getattr(mg.nn.init, name))
                    and _minigrads(getattr(mg.nn.init, name))})  # fmt: skip
    yield from _function_calls(rng, helpers, 250, None)
    classes = module_classes()
    names = sorted(classes)
    methods = [name for name in _public(mg.nn.Module) if callable(getattr(mg.nn.Module, name))]
    for _ in range(330):
        name = names[int(rng.integers(len(names)))]
        cls = classes[name]
        positional, keywords = random_arguments(rng, cls.__init__, skip_first=True)
        yield generic_call(f"nn.{name}", cls, positional, keywords, torch_path(f"nn.{name}"))
        built = _built(rng, cls)
        if built is None:
            continue
        module, code = built
        positional, keywords = random_arguments(rng, cls.forward, skip_first=True)
        yield generic_call(f"nn.{name}.forward", module, positional, keywords, shown_as=code)
        method = methods[int(rng.integers(len(methods)))]
        positional, keywords = random_arguments(rng, getattr(cls, method), skip_first=True)
        yield generic_call(f"nn.Module.{method}", getattr(module, method), positional, keywords,
                           shown_as=f"{code}.{method}")  # fmt: skip


def _with_gradient(optimizer: Any, gradient: Any) -> Any:
    """Give the optimizer's first parameter a gradient, then step."""
    optimizer.param_groups[0]["params"][0].grad = gradient
    return optimizer.step()


def _scheduled(scheduler: Any, metric: Any) -> Any:
    """Two epochs of a scheduler, each with `metric` (ReduceLROnPlateau's loss, or the
    epoch PyTorch deprecated) unless it is None."""
    for _ in range(2):
        if metric is None:
            scheduler.step()
        else:
            scheduler.step(metric)


def optim_calls(rng: np.random.Generator) -> Iterator[Call]:
    """Optimizers and schedulers: constructors, then step, zero_grad, state dicts."""
    optimizers, schedulers = optimizer_classes(), scheduler_classes()
    optimizer_names, scheduler_names = sorted(optimizers), sorted(schedulers)
    methods = ("zero_grad", "add_param_group", "load_state_dict", "state_dict", "step")
    for _ in range(220):
        name = optimizer_names[int(rng.integers(len(optimizer_names)))]
        cls = optimizers[name]
        positional, keywords = random_arguments(rng, cls.__init__, skip_first=True)
        yield generic_call(f"optim.{name}", cls, positional, keywords, torch_path(f"optim.{name}"))
        built = _built(rng, cls)
        if built is None:
            continue
        optimizer, code = built
        gradient = _pick(rng, ANY_VALUE)
        run = functools.partial(_with_gradient, optimizer, gradient.make())
        yield Call(f"optim.{name}.step", run, f"{code}: params[0].grad = {gradient.code}; step()")
        method = methods[int(rng.integers(len(methods)))]
        positional, keywords = random_arguments(rng, getattr(cls, method), skip_first=True)
        yield generic_call(f"optim.Optimizer.{method}", getattr(optimizer, method), positional,
                           keywords, shown_as=f"{code}.{method}")  # fmt: skip
    for _ in range(200):
        name = scheduler_names[int(rng.integers(len(scheduler_names)))]
        cls = schedulers[name]
        positional, keywords = random_arguments(rng, cls.__init__, skip_first=True)
        yield generic_call(f"optim.lr_scheduler.{name}", cls, positional, keywords)
        built = _built(rng, cls)
        if built is None:
            continue
        scheduler, code = built
        metric = _pick(rng, ANY_VALUE + [_arg("None", lambda: None)] * 10)
        run = functools.partial(_scheduled, scheduler, metric.make())
        yield Call(f"optim.lr_scheduler.{name}.step", run, f"{code}.step({metric.code}) twice")
        if rng.random() < 0.3:
            state = _pick(rng, ANY_VALUE)
            run = functools.partial(scheduler.load_state_dict, state.make())
            repro = f"{code}.load_state_dict({state.code})"
            yield Call(f"optim.lr_scheduler.{name}.load_state_dict", run, repro)


def _custom_function_run(forward_result: Any, backward_result: Any, inputs: list) -> Any:
    """A Function whose forward and backward return the given values, applied to inputs and
    run backward."""

    class Fuzzed(mg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            return forward_result

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            return backward_result

    output = Fuzzed.apply(*inputs)
    first = output[0] if isinstance(output, tuple) and output else output
    if isinstance(first, Variable) and first.requires_grad:
        first.sum().backward()
    return output


def _dual_run(primal: Any, tangent: Any, unpack: Any) -> Any:
    with mg.autograd.forward_ad.dual_level():
        dual = mg.autograd.forward_ad.make_dual(primal, tangent)
        mg.autograd.forward_ad.unpack_dual(dual * 2 if unpack is None else unpack)
    return dual


def _hooked_run(pack: Any, unpack: Any) -> Any:
    x = mg.randn(3, requires_grad=True)
    with mg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
    y.backward()
    return x.grad


def autograd_calls(rng: np.random.Generator) -> Iterator[Call]:
    """autograd.functional, forward_ad, grad and backward, gradcheck, custom Functions,
    saved_tensors_hooks, utils.checkpoint."""
    functional = {f"autograd.functional.{name}": getattr(mg.autograd.functional, name)
                  for name in mg.autograd.functional.__all__}  # fmt: skip
    yield from _function_calls(rng, functional, 250, "autograd.functional.")
    engine = {
        "autograd.grad": mg.autograd.grad,
        "autograd.backward": mg.autograd.backward,
        "autograd.gradcheck": mg.autograd.gradcheck,
        "autograd.gradgradcheck": mg.autograd.gradgradcheck,
        "utils.checkpoint.checkpoint": mg.utils.checkpoint.checkpoint,
        "utils.checkpoint.checkpoint_sequential": mg.utils.checkpoint.checkpoint_sequential,
    }
    graph = mg.autograd.graph
    engine.update({f"autograd.graph.{name}": getattr(graph, name) for name in graph.__all__
                   if inspect.isfunction(getattr(graph, name))})  # fmt: skip
    yield from _function_calls(rng, engine, 200, "autograd.")
    for _ in range(120):
        forward_result, backward_result = _pick(rng, ANY_VALUE), _pick(rng, ANY_VALUE)
        inputs = [_pick(rng, ANY_VALUE) for _ in range(int(rng.integers(0, 3)))]
        values = [arg.make() for arg in inputs]
        run = functools.partial(
            _custom_function_run, forward_result.make(), backward_result.make(), values
        )
        repro = (
            f"Function with forward -> {forward_result.code}, backward -> "
            f"{backward_result.code}, applied to ({_arguments_code(inputs, {})})"
        )
        yield Call("autograd.Function.apply", run, repro)
    for _ in range(80):
        primal, tangent = _pick(rng, NUMERIC_VARIABLES + ANY_VALUE), _pick(rng, ANY_VALUE)
        unpack = _pick(rng, [_arg("None", lambda: None)] * 3 + ANY_VALUE)
        run = functools.partial(_dual_run, primal.make(), tangent.make(), unpack.make())
        repro = (
            f"with dual_level(): make_dual({primal.code}, {tangent.code}); "
            f"unpack_dual({unpack.code})"
        )
        yield Call("autograd.forward_ad.make_dual", run, repro)
    for _ in range(50):
        pack, unpack = _pick(rng, FUNCTIONS + ANY_VALUE), _pick(rng, FUNCTIONS + ANY_VALUE)
        run = functools.partial(_hooked_run, pack.make(), unpack.make())
        repro = f"saved_tensors_hooks({pack.code}, {unpack.code}) around (x * x).sum()"
        yield Call("autograd.graph.saved_tensors_hooks", run, repro)


def _loaded(loader_class: Any, dataset: Any, keywords: dict) -> list:
    """Every batch of one epoch (the datasets are a few samples long)."""
    return list(loader_class(dataset, **keywords))


def data_calls(rng: np.random.Generator) -> Iterator[Call]:
    """utils.data: datasets, the DataLoader (built and iterated), collate, random_split."""
    data = mg.utils.data
    functions = {
        "utils.data.TensorDataset": data.TensorDataset,
        "utils.data.default_collate": data.default_collate,
        "utils.data.random_split": data.random_split,
        "utils.data.Subset": data.Subset,
    }
    yield from _function_calls(rng, functions, 250, "utils.data.")
    loader_signature = inspect.signature(data.DataLoader.__init__)
    optional = [p for p in loader_signature.parameters.values() if p.default is not p.empty]
    for _ in range(300):
        dataset = _pick(rng, DATASETS if rng.random() < 0.7 else ANY_VALUE)
        keywords = {p.name: _argument(rng, p) for p in optional if rng.random() < 0.3}
        values = {name: arg.make() for name, arg in keywords.items()}
        dataset_value = dataset.make()
        torch_run = None
        if TORCH is not None:
            try:
                torch_values = {name: to_torch(value) for name, value in values.items()}
                torch_values["num_workers"] = 0  # no worker processes in a test
                torch_dataset = to_torch(dataset_value)
            except NotInTorchError:
                pass
            else:
                torch_run = functools.partial(_loaded, TORCH.utils.data.DataLoader,
                                              torch_dataset, torch_values)  # fmt: skip
        run = functools.partial(_loaded, data.DataLoader, dataset_value, values)
        repro = f"list(DataLoader({dataset.code}, {_arguments_code([], keywords)}))"
        yield Call("utils.data.DataLoader", run, repro, torch_run)


def _damaged(rng: np.random.Generator, good: bytes) -> tuple[bytes, str]:
    """A damaged copy of a saved file, and how it was damaged."""
    roll = rng.random()
    if roll < 0.3:
        cut = int(rng.integers(0, len(good)))
        return good[:cut], f"the first {cut} bytes"
    if roll < 0.7:
        changed = bytearray(good)
        positions = rng.integers(0, len(good), size=int(rng.integers(1, 4)))
        for position in positions:
            changed[position] = int(rng.integers(256))
        return bytes(changed), f"bytes {positions.tolist()} changed"
    if roll < 0.8:
        return b"", "empty"
    if roll < 0.9:
        return good + bytes(rng.integers(0, 256, 40).astype(np.uint8)), "40 bytes appended"
    return bytes(rng.integers(0, 256, 300).astype(np.uint8)), "300 random bytes"


# What load raises for a file it cannot read (a ValueError before issue 22).
LOAD_ERROR = getattr(mg.serialization, "LoadError", ValueError)


def _load_bytes(data: bytes) -> Any:
    return mg.load(io.BytesIO(data))


def _saved_and_loaded(value: Any, map_location: Any) -> Any:
    buffer = io.BytesIO()
    mg.save(value, buffer)
    buffer.seek(0)
    return mg.load(buffer, map_location=map_location)


def serialization_calls(rng: np.random.Generator) -> Iterator[Call]:
    """load of damaged files (only LoadError may come out), save and load of anything."""
    buffer = io.BytesIO()
    model = mg.nn.Linear(3, 2)
    mg.save({"model": model.state_dict(), "step": 3, "note": Variable("text"),
             "lr": [0.1, (1, None)], "array": np.ones(2)}, buffer)  # fmt: skip
    good = buffer.getvalue()
    for _ in range(350):
        damaged, how = _damaged(rng, good)
        run = functools.partial(_load_bytes, damaged)
        repro = f"minigrad.load(a saved file: {how})"
        yield Call("minigrad.load (damaged file)", run, repro, expected=(LOAD_ERROR,))
    for _ in range(200):
        value = _pick(rng, ANY_VALUE + DATASETS)
        nested = rng.random() < 0.3
        made = {"a": [value.make(), (value.make(),)]} if nested else value.make()
        code = f"{{'a': [{value.code}, ({value.code},)]}}" if nested else value.code
        location = _pick(rng, [_arg("None", lambda: None)] * 6 + ANY_VALUE[-30:])
        run = functools.partial(_saved_and_loaded, made, location.make())
        yield Call("minigrad.save/load", run, f"save({code}); load(map_location={location.code})")


def _strip(frames: Any, title: Any, columns: Any) -> Any:
    return mg.viz.strip(frames, title=title, columns=columns)


def viz_calls(rng: np.random.Generator) -> Iterator[Call]:
    """draw, backward_steps and strip with arguments of every kind; the Drawing's methods."""
    frames = mg.viz.backward_steps((mg.randn(2, requires_grad=True) * 3).sum())
    functions = {"viz.draw": mg.viz.draw, "viz.backward_steps": mg.viz.backward_steps}
    yield from _function_calls(rng, functions, 200, "")
    strips = [_arg("backward_steps(...)", lambda: frames), _arg("[draw(...)]", lambda: frames[:1])]
    for _ in range(60):
        given = _pick(rng, strips + ANY_VALUE)
        title = _pick(rng, [_arg("'steps'", lambda: "steps")] * 3 + ANY_VALUE)
        columns = _pick(rng, SMALL_INTS + ANY_VALUE)
        run = functools.partial(_strip, given.make(), title.make(), columns.make())
        repro = f"viz.strip({given.code}, title={title.code}, columns={columns.code})"
        yield Call("viz.strip", run, repro)
    drawing = mg.viz.draw((mg.randn(2, requires_grad=True) * 3).sum())
    for _ in range(20):
        path = _pick(rng, [_arg("'graph.svg'", lambda: "graph.svg")] * 2 + ANY_VALUE)
        run = functools.partial(drawing.save, path.make())
        yield Call("viz.Drawing.save", run, f"draw(...).save({path.code})")


TEXT_PARAMETERS = _arg(
    "[Variable('a b', requires_grad=True)]", lambda: [Variable("a b", requires_grad=True)]
)


def _rule_used(rule_class: type, arguments: list, text: Any) -> Any:
    """Build a rule and judge a text with it."""
    return rule_class(*arguments)(text)


def _tgd_step(arguments: list, keywords: dict) -> Any:
    optimizer = mg.text.TGD(*arguments, **keywords)
    optimizer.step()
    optimizer.zero_grad()
    return optimizer


def text_calls(rng: np.random.Generator) -> Iterator[Call]:
    """The text Functions, rules, engines and TGD."""
    text = mg.text
    functions = {
        "text.format": text.format,
        "text.join": text.join,
        "text.split": text.split,
        "text.set_default_engine": text.set_default_engine,
        "text.OpenAICompatibleEngine": text.OpenAICompatibleEngine,
    }
    for name in ("Concat", "Slice", "Format", "Join", "Split", "Evaluate"):
        functions[f"text.{name}.apply"] = getattr(text, name).apply
    yield from _function_calls(rng, functions, 200, "")
    engine = text.RuleBasedEngine()
    engine_methods = {
        "text.RuleBasedEngine.feedback": engine.feedback,
        "text.RuleBasedEngine.rewrite": engine.rewrite,
    }
    yield from _function_calls(rng, engine_methods, 80, "")
    rules = ("ExactMatch", "MustInclude", "MustExclude", "WordCount", "Regex", "Checklist")
    words = [_arg("['a']", lambda: ["a"]), _arg("'a'", lambda: "a")]
    for _ in range(150):
        name = rules[int(rng.integers(len(rules)))]
        arguments = [_pick(rng, words + ANY_VALUE) for _ in range(int(rng.integers(0, 3)))]
        judged = _pick(rng, TEXT_VARIABLES * 4 + ANY_VALUE)
        values = [arg.make() for arg in arguments]
        run = functools.partial(_rule_used, getattr(text, name), values, judged.make())
        repro = f"text.{name}({_arguments_code(arguments, {})})({judged.code})"
        yield Call(f"text.{name}", run, repro)
    for _ in range(70):
        positional, keywords = random_arguments(rng, text.TGD.__init__, skip_first=True)
        if rng.random() < 0.6:  # a good parameter list, so the other arguments are reached
            positional[0] = TEXT_PARAMETERS
        values = [arg.make() for arg in positional]
        named = {name: arg.make() for name, arg in keywords.items()}
        run = functools.partial(_tgd_step, values, named)
        yield Call("text.TGD", run, f"TGD({_arguments_code(positional, keywords)}).step()")


GROUPS: dict[str, Callable[[np.random.Generator], Iterator[Call]]] = {
    "op table functions and nn.functional": op_table_function_calls,
    "op table Variable methods": op_table_method_calls,
    "other top-level functions": other_function_calls,
    "other Variable methods": other_method_calls,
    "nn modules": module_calls,
    "optim": optim_calls,
    "autograd": autograd_calls,
    "utils.data": data_calls,
    "serialization": serialization_calls,
    "viz": viz_calls,
    "text": text_calls,
}
OP_TABLE_GROUPS = ("op table functions and nn.functional", "op table Variable methods")


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls that write files (save, Drawing.save) write them in a scratch folder."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("group", list(GROUPS))
def test_fuzz_finds_no_internal_error(group: str) -> None:
    rng = np.random.default_rng([SEED, list(GROUPS).index(group)])
    mg.manual_seed(SEED)
    tally = run_group(group, GROUPS[group](rng))
    assert tally.calls >= 200
    assert not tally.findings, tally.report(group, 0.0)

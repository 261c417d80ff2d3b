"""A fuzz that runs the same random call on minigrad and on PyTorch and says where they part.

The calls: minigrad's public functions and Variable methods that PyTorch also has (the op
table, minigrad.ops.table.OPS with its aliases and in-place variants, and the names of
docs/pytorch_names.txt), with random arguments: tensors of shapes 0-d to 3-d (empty ones
too) of dtype bool, int64, float32 or float64; dims in and out of range, negative, None;
keepdim; Python scalars; and, now and then, an argument of the wrong type. PyTorch gets
the same arrays (torch.from_numpy of a copy) and the same other arguments.

Each call lands in one category (CATEGORIES):

- both raise: fine when the exception classes agree (compared by their built-in base:
  torch's LinAlgError is a RuntimeError), else a class divergence;
- torch raises, minigrad returns: a silent divergence ("accepts");
- minigrad raises, torch returns: missing behaviour;
- both return: shape, dtype kind (bool, int, float) and values must agree; the exact float
  dtype too where an input tensor was a float (minigrad's default float is float64 where
  torch's is float32, a documented departure, so a float made from ints only compares its
  kind);
- minigrad raises an internal error (AssertionError, KeyError, an error from inside NumPy
  or from a line of minigrad that is not a `raise`): a leak, whatever torch did.

tests/test_fuzz_torch_divergence.py runs it with a fixed seed; benchmarks/fuzz_torch.py
with a new seed each run. Both need PyTorch; this module imports without it.
"""

from __future__ import annotations

import inspect
import linecache
import math
import os
import re
import signal
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import minigrad as mg
from minigrad import Variable
from minigrad.ops import table

PACKAGE = os.path.dirname(os.path.abspath(mg.__file__)) + os.sep
NAMES_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                          "pytorch_names.txt")
TIMEOUT = 5.0  # seconds for one call

CATEGORIES = (
    "agree: both return",
    "agree: both raise",
    "allowed departure",
    "class divergence",
    "silent divergence: accepts",
    "silent divergence: value",
    "silent divergence: shape",
    "silent divergence: dtype",
    "silent divergence: type",
    "missing behaviour",
    "leak",
)
# The categories a clean run has none of.
FINDINGS = CATEGORIES[3:]

# Documented departures: names not compared, each with its reason. The default-dtype rule
# (a float made from no float input compares its kind only) is in `_compare`.
DEPARTURES: dict[str, str] = {
    "data": "site/engine.md, 'Where the code departs': x.data is the NumPy array, not a Tensor.",
    "numpy": "returns the NumPy array itself; compared through every other call.",
    "tolist": "a list of Python numbers; covered by the values of every other call.",
    "element_size": "follows the dtype; minigrad's default float is float64 (8 bytes).",
    "half": "float16 is not a minigrad dtype worth comparing bit for bit here.",
}
# Not fuzzed at all: they reach devices, files, global state or the autograd graph, or are
# not functions of their arguments.
NOT_CALLS = {
    "backward", "cuda", "cpu", "to", "compile", "load", "save", "manual_seed", "seed",
    "Generator", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "device",
    "finfo", "iinfo", "register_hook", "retain_grad", "requires_grad_", "detach_",
    "share_memory_", "pin_memory", "data_ptr", "get_default_dtype", "set_default_dtype",
    "is_grad_enabled", "from_numpy", "as_tensor", "tensor", "empty", "empty_like",
    "storage", "untyped_storage", "apply_", "map_", "new_empty", "record_stream",
}
# Factories whose number arguments are Scalars in torch: a 0-d Tensor there is read as its
# number, so a float one gives each library's default float.
SCALAR_PARAMETERS = {"full", "linspace", "logspace", "arange"}
# Binary searches: where their sorted sequence sits (position, keyword).
SORTED_ARGUMENT = {"bucketize": (1, "boundaries"), "searchsorted": (0, "sorted_sequence")}
# Functions whose value at a pole is rounding noise that depends on the float width.
POLE_NOISE = {"polygamma", "digamma", "lgamma"}
# Random results: only the shape and dtype are compared.
RANDOM = {
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
    "normal", "normal_", "uniform_", "bernoulli", "bernoulli_", "multinomial", "dropout",
    "exponential_", "random_", "geometric_", "cauchy_", "log_normal_",
    "new",  # x.new(sizes) leaves its numbers uninitialised in torch
}

SIGNATURE_MISMATCH = re.compile(
    r"positional argument|keyword argument|got multiple values for argument|"
    r"takes no arguments|required keyword-only"
)
# torch refusing a Python number where it wants a Tensor: minigrad may accept more kinds
# (tests/test_fuzz_public_surface.py: NumPy arrays and Python numbers are allowed).
NUMBER_FOR_TENSOR = re.compile(
    r"must be Tensor, not (int|float|bool|tuple|list)\b|"
    r"expected Tensor as element \d+ in argument \d+, but got (int|float|bool)\b"
)


class Accident(NamedTuple):
    """A refusal that is an accident of torch's implementation, not its API: matched by
    torch's exception class and message, and by what minigrad did instead (the class it
    raised, or None where it returned)."""

    torch_class: type
    message: re.Pattern
    ours: type | None
    reason: str


ACCIDENTS = (
    Accident(
        AttributeError, re.compile(r"^'\w+' object has no attribute '\w+'$"), TypeError,
        "torch's Python function reads an attribute of a non-Tensor input; minigrad's "
        "TypeError names the argument and what it needs",
    ),
    Accident(
        RuntimeError, re.compile(r"^unflatten: sizes must be non-empty$"), TypeError,
        "Tensor.unflatten tests `not sizes` before their kind (sizes=0 or None); "
        "minigrad's TypeError says a tuple of ints is wanted",
    ),
    Accident(
        TypeError,
        re.compile(r"^squeeze\(\) received an invalid combination of arguments - got "
                   r"\((Tensor, )?(dim=)?NoneType"),
        None,
        "torch documents squeeze(input, dim=None); its binding refuses the None spelled out",
    ),
    Accident(
        RuntimeError,
        re.compile(r"same dtype, but got:? (float|double|Float|Double)(,| !=| and) "
                   r"(float|double|Float|Double)(, and (Float|Double))?$|"
                   r"same dtype, but found (Float|Double) and (Float|Double)$|"
                   r"^expected scalar type (Float|Double) but found (Float|Double)$"),
        None,
        "a documented departure (site/pytorch.md, 'Differences to know'): float32 and float64 meet "
        "in products (float32 data into float64 weights), where torch refuses the mix",
    ),
    Accident(
        RuntimeError, re.compile(r"^Expected scalar\.isIntegral\( false\) to be true"), TypeError,
        "x.new(sizes) with a bool Tensor among the sizes: torch's internal check (its message "
        "asks to be improved) refuses it after parsing; minigrad's TypeError says sizes are ints",
    ),
    Accident(
        TypeError,
        re.compile(r"^where\(\) received an invalid combination of arguments - got "
                   r"\((bool|int|float), "),
        None,
        "a number for where's condition: numbers are accepted where torch wants a Tensor "
        "(a documented departure, tests/test_fuzz_public_surface.py)",
    ),
    Accident(
        TypeError,
        re.compile(r"received an invalid combination of arguments - got \([^)]*\b(list|tuple)\b"),
        None,
        "a list or tuple where torch's overloads want a Tensor: minigrad takes it as "
        "minigrad.tensor(...) does (a documented departure, tests/test_fuzz_public_surface.py)",
    ),
    Accident(
        TypeError,
        re.compile(r"^(where|scatter|masked_fill_?)\(\) received an invalid combination of "
                   r"arguments - got "
                   r"\(([^)]*\b(x|other|src)=(int|float|bool)\b|(Tensor, )?(bool|int|float)\b)"),
        None,
        "a number where torch's overload wants a Tensor (where(c, x=1.5, other=y), "
        "scatter(..., src=1), x.masked_fill(True, 0.0)): numbers are accepted for Tensors "
        "(a documented departure, tests/test_fuzz_public_surface.py)",
    ),
)


def accident(ours: Outcome, theirs: Outcome) -> str | None:
    """The reason when torch's error is one of ACCIDENTS and minigrad did the matching thing."""
    for known in ACCIDENTS:
        if not isinstance(theirs.error, known.torch_class):
            continue
        if not known.message.search(str(theirs.error)):
            continue
        if known.ours is None and ours.error is None:
            return known.reason
        if known.ours is not None and isinstance(ours.error, known.ours):
            return known.reason
    return None


ALWAYS_INTERNAL = (
    AssertionError, RecursionError, ZeroDivisionError, UnboundLocalError, NameError,
    KeyError, AttributeError, MemoryError,
)


class CallTimedOut(BaseException):
    """A call ran past TIMEOUT (a BaseException, so no `except Exception` swallows it)."""


# --------------------------------------------------------------------------- the names


def torch_names(path: str = NAMES_FILE) -> tuple[set[str], set[str]]:
    """The torch.* functions and Tensor methods docs/pytorch_names.txt lists."""
    functions, methods = set(), set()
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            name = line.strip()
            if not name or name.startswith("#"):
                continue
            if name.startswith("Tensor."):
                methods.add(name[len("Tensor."):])
            elif name.startswith("torch.") and name.count(".") == 1:
                functions.add(name[len("torch."):])
    return functions, methods


class Target(NamedTuple):
    """One callable to fuzz: `minigrad.name(...)` or `x.name(...)`."""

    name: str
    is_method: bool
    function: Callable  # minigrad's function, or the unbound Variable method


def targets(torch: Any) -> list[Target]:
    """Every op-table name (aliases and in-place variants too) and every name of the list
    that both minigrad and torch have, as a function and as a method."""
    functions, methods = torch_names()
    for op in table.OPS.values():
        for spelling in (op.name, *op.aliases):
            functions.add(spelling)
            methods.add(spelling)
            if op.inplace:
                methods.add(spelling + "_")
    found = []
    for name in sorted(functions - NOT_CALLS - set(DEPARTURES)):
        ours = getattr(mg, name, None)
        if callable(ours) and not isinstance(ours, type) and callable(getattr(torch, name, None)):
            found.append(Target(name, False, ours))
    for name in sorted(methods - NOT_CALLS - set(DEPARTURES)):
        ours = inspect.getattr_static(Variable, name, None)
        theirs = getattr(torch.Tensor, name, None)
        if callable(ours) and not isinstance(ours, property) and callable(theirs):
            found.append(Target(name, True, getattr(Variable, name)))
    return found


# --------------------------------------------------------------------------- arguments

DTYPES = (np.bool_, np.int64, np.float32, np.float64)


class Arg(NamedTuple):
    """One argument: the code a repro shows, and the value (arrays stand for tensors)."""

    code: str
    value: Any


class TensorSpec(NamedTuple):
    """A tensor argument: the array both libraries get a copy of."""

    array: np.ndarray


def random_array(rng: np.random.Generator, dtype: Any = None, shape: tuple | None = None
                 ) -> np.ndarray:
    """An array of 0 to 3 dims, each 0 to 3 long (empty one time in twelve or so)."""
    if shape is None:
        shape = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 4))))
        if shape and rng.random() < 0.08:
            shape = shape[:-1] + (0,)
    dtype = dtype if dtype is not None else DTYPES[int(rng.integers(len(DTYPES)))]
    if dtype is np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype is np.int64:
        # A wide range: few ties, so sort and argmax pick the same indices.
        return np.asarray(rng.integers(-40, 40, shape), dtype=np.int64)
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _tensor_arg(rng: np.random.Generator, dtype: Any = None, shape: tuple | None = None) -> Arg:
    array = random_array(rng, dtype, shape)
    code = f"tensor({array.tolist()!r}, dtype={array.dtype.name})"
    return Arg(code, TensorSpec(array))


def _value(code: str) -> Arg:
    return Arg(code, eval(code, {"math": math, "np": np}))  # noqa: S307 (our own literals)


WRONG = ["None", "'abc'", "[1, 2]", "1.5", "(0, 1)", "True", "object"]
SCALARS = ["0", "1", "-1", "2", "0.5", "-2.5", "True", "float('nan')"]
DIMS = ["0", "1", "-1", "2", "-2", "3", "-4", "None", "(0, 1)", "(-1,)", "()"]
SIZES = ["0", "1", "2", "3", "-1", "6"]


def _index_arg(rng: np.random.Generator, receiver: np.ndarray | None) -> Arg:
    """An int64 index tensor, mostly in range for the receiver."""
    shape = receiver.shape if receiver is not None and rng.random() < 0.6 else None
    array = random_array(rng, np.int64, shape)
    array = np.abs(array) % 3
    return Arg(f"tensor({array.tolist()!r})", TensorSpec(array))


def argument(rng: np.random.Generator, name: str, receiver: np.ndarray | None) -> Arg:
    """A value for the parameter `name`: mostly one of the kind it wants."""
    if rng.random() < 0.07:
        code = WRONG[int(rng.integers(len(WRONG)))]
        return Arg(code, object()) if code == "object" else _value(code)
    pick = rng.random()
    if name in {"dim", "dim0", "dim1", "start_dim", "end_dim", "axis", "dims"}:
        return _value(DIMS[int(rng.integers(len(DIMS)))])
    if name in {"keepdim", "descending", "largest", "sorted", "as_tuple", "stable",
                "unbiased", "non_blocking", "copy", "inplace"}:
        return _value("True" if pick < 0.5 else "False")
    if name in {"k", "chunks", "start", "length", "diagonal", "split_size_or_sections",
                "shifts", "decimals", "n", "sections"}:
        return _value(SIZES[int(rng.integers(len(SIZES)))])
    if name in {"shape", "size", "sizes", "repeats"}:
        return _value(SIZES[int(rng.integers(len(SIZES)))])
    if name == "dtype":
        return _value(["None", "mg.float32", "mg.float64", "mg.int64", "mg.bool"][
            int(rng.integers(5))].replace("mg.", "np.").replace("np.bool", "np.bool_"))
    if name == "p":
        return _value(["1", "2", "'fro'", "float('inf')", "0.5", "-1"][int(rng.integers(6))])
    if name == "rounding_mode":
        return _value(["None", "'trunc'", "'floor'", "'nope'"][int(rng.integers(4))])
    if name == "correction":
        return _value(["None", "0", "1", "2"][int(rng.integers(4))])
    if name in {"index"}:
        return _index_arg(rng, receiver)
    if name in {"mask", "condition"}:
        shape = receiver.shape if receiver is not None and pick < 0.7 else None
        return _tensor_arg(rng, np.bool_, shape)
    if name in {"min", "max", "value", "alpha", "beta", "exponent", "fill_value", "scalar",
                "end", "step", "other"} and pick < 0.5:
        return _value(SCALARS[int(rng.integers(len(SCALARS)))])
    if pick < 0.8:
        # A tensor, often shaped like the receiver so that broadcasting works.
        shape = receiver.shape if receiver is not None and rng.random() < 0.5 else None
        return _tensor_arg(rng, shape=shape)
    return _value(SCALARS[int(rng.integers(len(SCALARS)))])


def random_call(rng: np.random.Generator, target: Target) -> tuple[Arg | None, list[Arg],
                                                                    dict[str, Arg]]:
    """A receiver (for a method), positional and keyword arguments, from the signature."""
    try:
        parameters = list(inspect.signature(target.function).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    receiver = _tensor_arg(rng) if target.is_method else None
    if target.is_method and parameters:
        parameters = parameters[1:]
    receiver_array = receiver.value.array if receiver is not None else None
    positional: list[Arg] = []
    keywords: dict[str, Arg] = {}
    for parameter in parameters:
        if parameter.name in {"out", "device", "requires_grad", "generator", "layout",
                              "pin_memory", "memory_format"}:
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            count = int(rng.integers(0, 4))
            positional.extend(argument(rng, parameter.name, receiver_array)
                              for _ in range(count))
        elif parameter.kind is parameter.VAR_KEYWORD:
            continue
        elif parameter.default is parameter.empty:
            made = argument(rng, parameter.name, receiver_array)
            if receiver_array is None and not positional and isinstance(made.value, TensorSpec):
                receiver_array = made.value.array
            if parameter.kind is parameter.KEYWORD_ONLY:
                keywords[parameter.name] = made
            else:
                positional.append(made)
        elif rng.random() < 0.35:
            keywords[parameter.name] = argument(rng, parameter.name, receiver_array)
    return receiver, positional, keywords


# --------------------------------------------------------------------------- one call


class Outcome(NamedTuple):
    """What one library did: returned `value`, or raised `error`."""

    value: Any = None
    error: BaseException | None = None


class Result(NamedTuple):
    category: str
    api: str  # "minigrad.sum" or "Variable.sum"
    repro: str
    minigrad: str  # what minigrad did, in words
    torch: str
    detail: str = ""


def _to_minigrad(value: Any) -> Any:
    if isinstance(value, TensorSpec):
        return mg.tensor(np.array(value.array, copy=True))
    if isinstance(value, tuple):
        return tuple(_to_minigrad(item) for item in value)
    return value


def _to_torch(torch: Any, value: Any) -> Any:
    if isinstance(value, TensorSpec):
        return torch.from_numpy(np.array(value.array, copy=True))
    if isinstance(value, type) and issubclass(value, np.generic):
        return {np.float32: torch.float32, np.float64: torch.float64, np.int64: torch.int64,
                np.bool_: torch.bool}[value]
    if isinstance(value, tuple):
        return tuple(_to_torch(torch, item) for item in value)
    return value


def _on_alarm(signum: int, frame: Any) -> None:
    raise CallTimedOut()


def _run(function: Callable, args: list, kwargs: dict) -> Outcome:
    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Outcome(value=function(*args, **kwargs))
    except Exception as error:  # noqa: BLE001 (the outcome we classify)
        return Outcome(error=error)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def builtin_base(error: BaseException) -> type:
    """The first built-in class of the exception's type (torch's LinAlgError: RuntimeError)."""
    for klass in type(error).__mro__:
        if klass.__module__ == "builtins":
            return klass
    return Exception


def is_leak(error: BaseException) -> bool:
    """Whether minigrad raised by accident: an always-internal class, or an error whose
    last frame is not a `raise` statement in minigrad's own source."""
    if isinstance(error, ALWAYS_INTERNAL):
        return True
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return False
    filename = os.path.abspath(trace.tb_frame.f_code.co_filename)
    if not filename.startswith(PACKAGE):
        # Python's own complaint about the call's signature names the function: fine.
        return not (isinstance(error, TypeError) and SIGNATURE_MISMATCH.search(str(error)))
    line = linecache.getline(filename, trace.tb_lineno).strip()
    return not line.startswith("raise")


def _describe(outcome: Outcome) -> str:
    if outcome.error is not None:
        message = str(outcome.error).splitlines()[0] if str(outcome.error) else ""
        return f"{type(outcome.error).__name__}: {message[:110]}"
    return _short(outcome.value)


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape} {value.dtype}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_short(item) for item in value) + ")"
    return f"{type(value).__name__} {value!r}"[:80]


def _normalise(torch: Any, value: Any) -> Any:
    """Arrays for tensors, tuples for sequences, plain Python values for the rest."""
    if isinstance(value, Variable):
        return np.asarray(value.data)
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().cpu().resolve_conj().resolve_neg().numpy()
    if torch is not None and isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, (list, tuple)):
        return tuple(_normalise(torch, item) for item in value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return value.item()
    return value


def _kind(dtype: np.dtype) -> str:
    return {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}.get(dtype.kind,
                                                                                  dtype.kind)


def _compare(ours: Any, theirs: Any, exact_float: bool, random: bool) -> tuple[str, str] | None:
    """None when equal; else (the kind of difference, a detail)."""
    if isinstance(theirs, np.ndarray):
        if not isinstance(ours, np.ndarray):
            return "type", f"minigrad gives {type(ours).__name__}, torch a tensor"
        if ours.shape != theirs.shape:
            return "shape", f"{ours.shape} vs torch {theirs.shape}"
        if _kind(ours.dtype) != _kind(theirs.dtype):
            return "dtype", f"{ours.dtype} vs torch {theirs.dtype}"
        if exact_float and _kind(ours.dtype) == "float" and ours.dtype != theirs.dtype:
            return "dtype", f"{ours.dtype} vs torch {theirs.dtype} (from float inputs)"
        if random:
            return None
        if _kind(theirs.dtype) in {"float", "complex"}:
            loose = np.float32 in (ours.dtype, theirs.dtype)
            tolerance = 1e-4 if loose else 1e-8
            same = np.allclose(ours.astype(np.complex128), theirs.astype(np.complex128),
                               rtol=tolerance, atol=tolerance, equal_nan=True)
        else:
            same = np.array_equal(ours, theirs)
        if not same:
            return "value", f"{ours.ravel()[:6].tolist()} vs torch {theirs.ravel()[:6].tolist()}"
        return None
    if isinstance(theirs, tuple):
        if not isinstance(ours, tuple):
            return "type", f"minigrad gives {type(ours).__name__}, torch a sequence"
        if len(ours) != len(theirs):
            return "shape", f"{len(ours)} items vs torch {len(theirs)}"
        for mine, other in zip(ours, theirs):
            found = _compare(mine, other, exact_float, random)
            if found is not None:
                return found
        return None
    if isinstance(ours, np.ndarray):
        return "type", f"minigrad gives a tensor, torch {type(theirs).__name__}"
    if type(ours) is not type(theirs):
        return "type", f"{type(ours).__name__} vs torch {type(theirs).__name__}"
    if isinstance(theirs, float) and math.isnan(theirs) and math.isnan(ours):
        return None
    if not random and ours != theirs:
        return "value", f"{ours!r} vs torch {theirs!r}"
    return None


def run_one(torch: Any, rng: np.random.Generator, target: Target) -> Result:
    """Make one random call of `target` on both libraries and classify it."""
    receiver, positional, keywords = random_call(rng, target)
    arguments = ", ".join([a.code for a in positional]
                          + [f"{k}={a.code}" for k, a in keywords.items()])
    if target.is_method:
        api = f"Variable.{target.name}"
        repro = f"({receiver.code}).{target.name}({arguments})"
    else:
        api = f"minigrad.{target.name}"
        repro = f"{target.name}({arguments})"
    given = ([receiver] if receiver is not None else []) + positional
    our_args = [_to_minigrad(a.value) for a in given]
    our_kwargs = {k: _to_minigrad(a.value) for k, a in keywords.items()}
    their_args = [_to_torch(torch, a.value) for a in given]
    their_kwargs = {k: _to_torch(torch, a.value) for k, a in keywords.items()}
    if target.is_method:
        ours = _run(getattr(Variable, target.name), our_args, our_kwargs)
        theirs = _run(getattr(torch.Tensor, target.name), their_args, their_kwargs)
    else:
        ours = _run(getattr(mg, target.name), our_args, our_kwargs)
        theirs = _run(getattr(torch, target.name), their_args, their_kwargs)
    said_ours, said_theirs = _describe(ours), _describe(theirs)

    def result(category: str, detail: str = "") -> Result:
        return Result(category, api, repro, said_ours, said_theirs, detail)

    if ours.error is not None and is_leak(ours.error):
        return result("leak")
    if theirs.error is not None and "INTERNAL ASSERT" in str(theirs.error):
        return result("allowed departure", "torch's own internal assertion, not its API")
    reason = accident(ours, theirs) if theirs.error is not None else None
    if reason is not None:
        return result("allowed departure", reason)
    if ours.error is not None and theirs.error is not None:
        # A subclass of torch's class is caught by the same `except` (NotImplementedError
        # is a RuntimeError).
        if isinstance(ours.error, builtin_base(theirs.error)):
            return result("agree: both raise")
        if isinstance(theirs.error, TypeError) and NUMBER_FOR_TENSOR.search(str(theirs.error)):
            # minigrad takes the number (a documented departure) and then refuses something
            # else of the call (a negative tolerance, a shape) with that error's own class.
            return result("allowed departure",
                          "a Python number where torch wants a Tensor, then another error")
        return result("class divergence")
    if theirs.error is not None:
        if isinstance(theirs.error, TypeError) and NUMBER_FOR_TENSOR.search(str(theirs.error)):
            return result("allowed departure",
                          "a Python number, list or tuple where torch wants a Tensor")
        return result("silent divergence: accepts")
    if ours.error is not None:
        return result("missing behaviour")
    float_inputs = [a.value.array.dtype for a in given + list(keywords.values())
                    if isinstance(a.value, TensorSpec) and a.value.array.dtype.kind == "f"]
    mine = _normalise(None, ours.value)
    other = _normalise(torch, theirs.value)
    found = _compare(mine, other, bool(float_inputs), target.name in RANDOM)
    if found is None:
        return result("agree: both return")
    kind, detail = found
    if kind == "dtype" and _scalar_bound_floats(target.name, given, keywords, mine, other):
        # torch binds a 0-d Tensor to a Scalar parameter when a Python number sits beside
        # it (clamp(mask, min=tensor(0.1), max=0.5), sub(n, 0.5, alpha=tensor(2.0))): the
        # float then comes from numbers only, in each library's default float.
        return result("allowed departure",
                      f"{detail} (0-d floats read as numbers: the default-float departure)")
    if kind == "dtype" and not float_inputs:
        # minigrad's default float is float64 (DESIGN, site/pytorch.md): a float made from ints or
        # bools compares its kind only, and that agreed.
        return result("allowed departure", detail)
    if kind == "value" and target.name in SORTED_ARGUMENT and not _is_sorted(
            given, keywords, SORTED_ARGUMENT[target.name]):
        # Both search an unsorted sequence in halves: the answer is undefined (PyTorch's
        # docs ask for a sorted sequence), so each binary search's accident is its own.
        return result("allowed departure", "a search in an unsorted sequence is undefined")
    if kind == "value" and not float_inputs and target.name in POLE_NOISE:
        # At a pole (polygamma(1, -4)) both give rounding noise of the default float,
        # ~1e31 in float64 and ~1e13 in float32: not a value either library computes.
        return result("allowed departure", "a pole's rounding noise in another default float")
    return result(f"silent divergence: {kind}", detail)


def _scalar_bound_floats(
    name: str, given: list, keywords: dict, mine: Any, other: Any
) -> bool:
    """Whether every float Tensor argument is 0-d and after the first (where torch may read
    it as a Scalar), a Python bool, int or float is given too (or the function takes Scalars
    only, SCALAR_PARAMETERS), and the results are float64
    (minigrad's default float) against float32 (torch's)."""
    if getattr(mine, "dtype", None) != np.float64 or getattr(other, "dtype", None) != np.float32:
        return False
    arguments = given + list(keywords.values())
    floats = [(i, a.value.array) for i, a in enumerate(arguments)
              if isinstance(a.value, TensorSpec) and a.value.array.dtype.kind == "f"]
    numbers = [a.value for a in arguments if type(a.value) in (bool, int, float)]
    scalars_only = name in SCALAR_PARAMETERS
    return (bool(floats) and (bool(numbers) or scalars_only)
            and all(i > 0 and array.ndim == 0 for i, array in floats))


def _is_sorted(given: list, keywords: dict, where: tuple[int, str]) -> bool:
    """Whether the sorted-sequence argument is sorted along its last dimension (a
    sequence that is not a tensor counts as sorted: the call is compared as usual)."""
    position, keyword = where
    argument = keywords.get(keyword)
    if argument is None and position < len(given):
        argument = given[position]
    if argument is None or not isinstance(argument.value, TensorSpec):
        return True
    array = argument.value.array
    return array.ndim == 0 or bool(np.all(np.diff(array.astype(np.float64), axis=-1) >= 0))


def fuzz(torch: Any, seed: int, calls: int) -> list[Result]:
    """`calls` random calls, spread evenly over the targets, from the seed."""
    rng = np.random.default_rng(seed)
    mg.manual_seed(seed)
    found = targets(torch)
    results = []
    for _ in range(calls):
        target = found[int(rng.integers(len(found)))]
        results.append(run_one(torch, rng, target))
    return results


def counts(results: list[Result]) -> Counter:
    return Counter(result.category for result in results)


def group_findings(results: list[Result]) -> list[tuple[tuple[str, str, str], list[Result]]]:
    """The findings grouped by (category, API, what minigrad raised or the difference's
    kind), most frequent first."""
    groups: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    for result in results:
        if result.category not in FINDINGS:
            continue
        cause = result.minigrad.split(":")[0] if result.category == "leak" else ""
        if result.category == "class divergence":
            cause = f"{result.minigrad.split(':')[0]} vs {result.torch.split(':')[0]}"
        groups[(result.category, result.api, cause)].append(result)
    return sorted(groups.items(), key=lambda item: -len(item[1]))


def report(results: list[Result], examples: int = 1) -> str:
    """A table of counts per category, then each group of findings with examples."""
    tally = counts(results)
    lines = ["| category | calls |", "|---|---:|"]
    lines += [f"| {category} | {tally.get(category, 0)} |" for category in CATEGORIES]
    lines.append(f"| total | {len(results)} |")
    groups = group_findings(results)
    if groups:
        lines += ["", f"{len(groups)} distinct findings (category, API, cause), most frequent "
                  "first:"]
    for (category, api, cause), members in groups:
        lines.append(f"- [{category}] {api} {cause} x{len(members)}")
        for member in members[:examples]:
            lines.append(f"    {member.repro[:300]}")
            lines.append(f"      minigrad: {member.minigrad}")
            lines.append(f"      torch:    {member.torch}")
            if member.detail:
                lines.append(f"      differs:  {member.detail}")
    return "\n".join(lines)

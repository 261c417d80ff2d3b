"""Checks for lesson 10 (compile: trace once, replay many).

Each check builds fresh inputs of its own. Exercise 10.1 hands the learner's replay a tape
of NumPy functions that report every call (which step, and whether it wrote into `out`),
so a replay that allocates, reorders or reads stale inputs is named as such. Exercise
10.2 compares the learner's guard with pairs of calls that differ in one known way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.course import check
from minigrad.variable import Variable

# --------------------------------------------------------------------------- Exercise 10.1


class _Spy:
    """A NumPy function standing for one step of a tape: it runs the function and logs
    (its step number, the out= array or None) in the shared log."""

    def __init__(self, function: np.ufunc, number: int, log: list) -> None:
        self.function = function
        self.number = number
        self.log = log
        self.nin = function.nin
        self.__name__ = function.__name__

    def __call__(self, *args: Any, out: Any = None) -> Any:
        if out is None and len(args) > self.nin:  # out passed by position
            *args, out = args
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        self.log.append((self.number, out))
        self.arguments = args  # what it read, for the check on copied inputs
        if out is None:
            return self.function(*args)
        return self.function(*args, out=out)

    def __repr__(self) -> str:
        return f"np.{self.__name__}"


# (label, [(function, input slots, output slot)], shapes of the input slots)
_TAPES: list[tuple[str, list[tuple[np.ufunc, tuple[int, ...], int]], list[tuple]]] = [
    (
        "the gradient of sum((tanh(w*x + b) - t)**2) with respect to w, by hand",
        [
            (np.multiply, (1, 0), 4),  # w * x
            (np.add, (4, 2), 5),  # z = w * x + b
            (np.tanh, (5,), 6),  # y
            (np.subtract, (6, 3), 7),  # r = y - t
            (np.multiply, (6, 6), 8),  # y**2
            (np.add, (7, 7), 9),  # 2r
            (np.multiply, (9, 8), 10),  # 2r * y**2
            (np.subtract, (9, 10), 11),  # dL/dz = 2r (1 - y**2)
            (np.multiply, (11, 0), 12),  # dL/dw
        ],
        [(5,), (5,), (5,), (5,)],
    ),
    (
        "exp(tanh(X @ W)**2) for X of shape (4, 3) and W of shape (3, 2)",
        [
            (np.matmul, (0, 1), 2),
            (np.tanh, (2,), 3),
            (np.multiply, (3, 3), 4),
            (np.exp, (4,), 5),
        ],
        [(4, 3), (3, 2)],
    ),
]


def _evaluate(tape: list, inputs: list[np.ndarray]) -> np.ndarray:
    """The tape run plainly, without buffers: what a replay must return."""
    values = dict(enumerate(inputs))
    for function, slots, output in tape:
        values[output] = function(*[values[slot] for slot in slots])
    return values[tape[-1][2]]


def check_10_1(build_replay: Callable[[list, list], Callable[..., np.ndarray]]) -> None:
    """build_replay(tape, example_inputs) returns replay(*inputs), which runs the tape's
    steps in order into buffers allocated once and returns the last step's buffer."""
    exercise = "10.1"
    if not callable(build_replay):
        check.fail(
            exercise, f"build_replay should be a function; got {check.with_article(build_replay)}."
        )
    rng = np.random.default_rng(1010)
    for label, plain_tape, shapes in _TAPES:
        log: list = []
        tape = [
            (_Spy(function, number, log), slots, output)
            for number, (function, slots, output) in enumerate(plain_tape)
        ]
        examples = [rng.standard_normal(shape) for shape in shapes]
        kept = [array.copy() for array in examples]
        what = f"build_replay(tape, example_inputs) for {label}"
        replay = check.call(exercise, what, build_replay, tape, examples)
        if not callable(replay):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(replay)}; return the function replay "
                f"(define it inside build_replay and `return replay`, without calling it).",
            )
        calls = [[rng.standard_normal(shape) for shape in shapes] for _ in range(3)]
        results = []
        for number, inputs in enumerate(calls, start=1):
            del log[:]
            call_what = f"replay(*inputs), call {number}, for {label}"
            passed = [a.copy() for a in inputs]
            result = check.call(exercise, call_what, replay, *passed)
            _check_log(exercise, call_what, log, plain_tape)
            for spy, _, _ in tape:
                if any(arg is array for arg in getattr(spy, "arguments", ()) for array in passed):
                    check.fail(
                        exercise,
                        f"during {call_what} a step read an array replay was called with, "
                        f"not an input buffer: copy each input into a buffer allocated once "
                        f"in build_replay (np.copyto(buffer, value)), as a CUDA graph's "
                        f"static inputs. The steps are bound to the buffers, never to the "
                        f"caller's arrays.",
                    )
            if not isinstance(result, np.ndarray):
                check.fail(
                    exercise,
                    f"{call_what} returned {check.with_article(result)}; return the buffer "
                    f"of the last step (a NumPy array).",
                )
            expected = _evaluate(plain_tape, inputs)
            stale = [_evaluate(plain_tape, old) for old in [examples, kept, *calls[: number - 1]]]
            if result.shape == expected.shape and not np.allclose(result, expected):
                if any(np.allclose(result, old) for old in stale):
                    check.fail(
                        exercise,
                        f"{call_what} returned the result for earlier inputs: copy each new "
                        f"input into its buffer (np.copyto(buffer, value)) before running the "
                        f"steps. Rebinding a name or a dict entry does not change the arrays "
                        f"the steps were bound to.",
                    )
            check.expect_close(exercise, f"the result of {call_what}", result, expected)
            for array, original in zip(examples, kept):
                if not np.array_equal(array, original):
                    check.fail(
                        exercise,
                        "replay changed the example inputs the caller passed to build_replay: "
                        "allocate the input buffers as copies (np.array(value, copy=True)) "
                        "instead of using the caller's arrays as buffers.",
                    )
            results.append(result)
        if not all(result is results[0] for result in results):
            check.fail(
                exercise,
                f"replay returned a new array on each call for {label}: return the last "
                f"step's buffer itself, the same array every call (the static-buffer "
                f"contract of a replay), not a copy.",
            )
    check.passed(exercise)


def _check_log(exercise: str, what: str, log: list, tape: list) -> None:
    """Every step ran once, in the tape's order, writing into a buffer."""
    for number, out in log:
        if out is None:
            name = tape[number][0].__name__
            check.fail(
                exercise,
                f"during {what}, step {number} (np.{name}) was called without out=, so it made "
                f"a new array: call it as function(*arguments, out=buffer) with the buffer "
                f"allocated once in build_replay.",
            )
    order = [number for number, _ in log]
    if sorted(order) != list(range(len(tape))):
        check.fail(
            exercise,
            f"during {what} the steps that ran were {order}; each of the {len(tape)} steps "
            f"should run exactly once per call (steps 0 to {len(tape) - 1}).",
        )
    if order != list(range(len(tape))):
        check.fail(
            exercise,
            f"during {what} the steps ran in the order {order}: run them in the order they "
            f"were recorded, since a step reads what earlier steps wrote.",
        )


# --------------------------------------------------------------------------- Exercise 10.2

KINDS = ("count", "kind", "shape", "dtype", "requires_grad", "value")


def _variable(rng: np.random.Generator, shape: tuple, dtype: Any = np.float64, grad=False):
    return Variable(rng.standard_normal(shape).astype(dtype), requires_grad=grad)


def _signature_cases(rng: np.random.Generator) -> list[tuple[str, list, list, Any, dict]]:
    """(what the pair is, args_a, args_b, the answer, {wrong answer: hint})."""
    v = lambda *shape, **kw: _variable(rng, shape, **kw)  # noqa: E731 - a short local helper
    return [
        (
            "two batches of the same shape with different numbers, and the same lr",
            [v(8, 3), v(8, 1), 0.1],
            [v(8, 3), v(8, 1), 0.1],
            None,
            {
                (0, "value"): "a Variable's numbers are not part of the signature: a replay "
                "copies each call's data into its input buffer. Compare only shape, dtype "
                "and requires_grad of Variables.",
            },
        ),
        (
            "a batch of 8 rows, then a batch of 5 rows",
            [v(8, 3), v(8, 1), 0.1],
            [v(8, 3), v(5, 1), 0.1],
            (1, "shape"),
            {
                None: "the shapes differ, and a buffer allocated for (8, 1) cannot hold "
                "(5, 1): compare .shape.",
            },
        ),
        (
            "a float64 batch, then a float32 batch",
            [v(4, 2), 0.5],
            [v(4, 2, dtype=np.float32), 0.5],
            (0, "dtype"),
            {
                None: "the dtypes differ (float64 vs float32): a float64 buffer would "
                "silently compute in the wrong precision. Compare .dtype.",
            },
        ),
        (
            "an input that requires grad, then one that does not",
            [v(3), v(3, grad=True)],
            [v(3), v(3)],
            (1, "requires_grad"),
            {
                None: "requires_grad differs: the trace computed a gradient for that input, "
                "the new call must not. Compare .requires_grad.",
            },
        ),
        (
            "a learning rate of 0.1, then 0.05",
            [v(6), v(6), 0.1],
            [v(6), v(6), 0.05],
            (2, "value"),
            {
                None: "a Python number is baked into the trace as a constant, so a new value "
                "needs a new trace: compare numbers by value.",
            },
        ),
        (
            "the number 1, then the number 1.0",
            [v(2), 1],
            [v(2), 1.0],
            (1, "kind"),
            {
                None: "1 == 1.0 in Python, yet an int and a float are different kinds (an "
                "int times an integer array stays integer): compare type(a).__name__ before "
                "comparing values.",
                (1, "value"): "the values 1 and 1.0 are equal; what differs is the kind (int "
                "vs float), and the kind is compared first.",
            },
        ),
        (
            "a Variable, then a plain number in its place",
            [v(2, 2), 0.1],
            [0.5, 0.1],
            (0, "kind"),
            {},
        ),
        (
            "two arguments, then the same two and one more",
            [v(4), 0.1],
            [v(4), 0.1, True],
            (2, "count"),
            {
                None: "the calls have 2 and 3 arguments: zip() stops at the shorter list, so "
                "compare the lengths after the loop.",
                (0, "count"): "the position of a 'count' difference is where the shorter "
                "list ends, min(len(args_a), len(args_b)), here 2.",
            },
        ),
        (
            "a dtype change in argument 0 and a shape change in argument 2",
            [v(3, 3), 0.1, v(4)],
            [v(3, 3, dtype=np.float32), 0.1, v(7)],
            (0, "dtype"),
            {
                (2, "shape"): "that is the last difference: return the first one, as soon "
                "as you find it.",
            },
        ),
        (
            "a Variable whose shape and dtype both change",
            [v(4, 4)],
            [v(2, 4, dtype=np.float32)],
            (0, "shape"),
            {
                (0, "dtype"): "both shape and dtype differ: check shape first, then dtype, "
                "then requires_grad.",
            },
        ),
    ]


def _not_a_variable_hint(error: BaseException) -> str | None:
    if isinstance(error, AttributeError) and any(
        f"'{name}' object has no attribute" in str(error) for name in ("float", "int", "bool")
    ):
        return (
            "A plain number has no .shape or .dtype: compare the kinds first ('Variable', or "
            "type(a).__name__ for a number) and return (position, 'kind') when they differ."
        )
    return None


def check_10_2(same_signature: Callable[[list, list], Any]) -> None:
    """same_signature(args_a, args_b): None, or (position, what) for the first difference."""
    exercise = "10.2"
    if not callable(same_signature):
        check.fail(
            exercise,
            f"same_signature should be a function; got {check.with_article(same_signature)}.",
        )
    rng = np.random.default_rng(2020)
    for label, args_a, args_b, expected, mistakes in _signature_cases(rng):
        what = f"same_signature(args_a, args_b) for {label}"
        got = check.call(
            exercise, what, same_signature, list(args_a), list(args_b), hints=[_not_a_variable_hint]
        )
        if isinstance(got, list):
            got = tuple(got)
        if got is not None and not (isinstance(got, tuple) and len(got) == 2 and got[1] in KINDS):
            check.fail(
                exercise,
                f"{what} returned {got!r}; return None, or a pair (position, what) with what "
                f"one of {', '.join(repr(kind) for kind in KINDS)}.",
            )
        if got == expected:
            continue
        expected_text = "None" if expected is None else repr(expected)
        if got in mistakes:
            check.fail(exercise, f"{what} is {got!r}, expected {expected_text}: {mistakes[got]}")
        check.fail(exercise, f"{what} is {got!r}, expected {expected_text}.")
    check.passed(exercise)

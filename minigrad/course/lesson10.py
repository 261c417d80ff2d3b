"""Checks for lesson 10 (compile: trace once, replay many).

Each check builds fresh inputs of its own. Exercise 10.1 hands the learner's replay a tape
of NumPy functions that report every call (which step, and whether it wrote into `out`),
so a replay that allocates, reorders or reads stale inputs is named as such. Exercise
10.2 compares the learner's predictions (which changed calls need a new trace) with what
a replay can and cannot serve, each with its reason. Exercise 10.3 runs the learner's
guard condition on pairs of calls that differ in one known way each, edge cases included
(0-d Variables, 1 against 1.0 and True, equal numbers in different objects).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.course import check, raised

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
    (
        "an SGD update w - lr * g with a 0-d learning rate lr (slot 2, shape ())",
        [
            (np.multiply, (2, 1), 3),  # lr * g
            (np.subtract, (0, 3), 4),  # w - lr * g
        ],
        [(3,), (3,), ()],
    ),
    (
        "tanh(a + b) * a, its steps writing slots 4, 2, 3 (not numbered in step order)",
        [
            # The slots run 0 to 4 without a gap, so the largest slot, 4, is also
            # len(buffers) - 1: neither is the last step's output slot, 3.
            (np.add, (0, 1), 4),  # the largest slot, written by the first step
            (np.tanh, (4,), 2),
            (np.multiply, (2, 0), 3),  # the last step's output: what replay returns
        ],
        [(4,), (4,)],
    ),
]

_SLOTS_ARE_NAMES_HINT = (
    "The slots name the values; they are not positions in a list: a tape may number its "
    "output slots in any order (this one writes 4, then 2, then 3). Keep the buffers in a "
    "dict keyed by slot."
)

_SLICED_0D_HINT = (
    "If you copied an input with `buffer[:] = value`: a 0-d buffer (the learning rate of "
    "this tape, shape ()) has no axis to slice. np.copyto(buffer, value) or "
    "buffer[...] = value work for every shape."
)


def _evaluate(tape: list, inputs: list[np.ndarray], slot: int | None = None) -> np.ndarray:
    """The tape run plainly, without buffers: the value of `slot` at the end, by default
    the last step's output slot (what a replay must return)."""
    values = dict(enumerate(inputs))
    for function, slots, output in tape:
        values[output] = function(*[values[slot] for slot in slots])
    return values[tape[-1][2] if slot is None else slot]


def _other_slots(tape: list, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """A hint for each output slot other than the last step's, mapped to its value: what a
    replay returns when it takes the largest slot number (max(buffers)), the number of
    buffers less one (len(buffers) - 1, the same slot when the slots have no gap) or a
    list position for the last step's slot."""
    outputs = [output for _, _, output in tape]
    largest, last = max(outputs), outputs[-1]
    count_less_one = len(inputs) + len(tape) - 1
    mistakes = {}
    for output in outputs[:-1]:
        if output == largest == count_less_one:
            which = "the largest slot number (and len(buffers) - 1, the slots having no gap)"
        elif output == largest:
            which = "the largest slot number"
        elif output == count_less_one:
            which = "len(buffers) - 1, the number of buffers less one"
        else:
            which = f"which step {outputs.index(output)} writes"
        hint = (
            f"that is the value of slot {output}, {which}, not the last step's, slot {last}: "
            f"return the buffer of the last step's output slot, tape[-1][2], whatever its "
            f"number."
        )
        mistakes[hint] = _evaluate(tape, inputs, output)
    return mistakes


def _numbered_in_order(tape: list, inputs: int) -> bool:
    """Whether the output slots run inputs, inputs + 1, ... in the order of the steps."""
    return [output for _, _, output in tape] == list(range(inputs, inputs + len(tape)))


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
        examples = [np.asarray(rng.standard_normal(shape)) for shape in shapes]
        has_0d = any(shape == () for shape in shapes)
        kept = [array.copy() for array in examples]
        what = f"build_replay(tape, example_inputs) for {label}"
        in_order = _numbered_in_order(plain_tape, len(shapes))
        by_position = [] if in_order else [(IndexError, _SLOTS_ARE_NAMES_HINT)]
        replay = check.call(exercise, what, build_replay, tape, examples, hints=by_position)
        if not callable(replay):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(replay)}; return the function replay "
                f"(define it inside build_replay and `return replay`, without calling it).",
            )
        calls = [[np.asarray(rng.standard_normal(shape)) for shape in shapes] for _ in range(3)]
        results = []
        for number, inputs in enumerate(calls, start=1):
            del log[:]
            call_what = f"replay(*inputs), call {number}, for {label}"
            passed = [a.copy() for a in inputs]
            hints = [(IndexError, _SLICED_0D_HINT)] if has_0d else by_position
            result = check.call(exercise, call_what, replay, *passed, hints=hints)
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
            mistakes = _other_slots(plain_tape, inputs)
            check.expect_close(exercise, f"the result of {call_what}", result, expected, mistakes)
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

# Each changed call of Exercise 10.2: (what changes, must trace again?, why). The step was
# traced and replays for step(x, onehot, 1.0): x and onehot float64 Variables of 32 rows
# that do not require grad, 1.0 a Python float that scales the loss.
CALLS_10_2: dict[str, tuple[str, bool, str]] = {
    "a": (
        "the next batch: same shapes and dtypes, other numbers",
        False,
        "the replay copies each call's numbers into its input buffers (np.copyto), and "
        "whatever the step does with them goes through operations the replay repeats. If "
        "new numbers needed a new trace, a training loop would never replay.",
    ),
    "b": (
        "the last batch of the epoch, 16 rows instead of 32",
        True,
        "the buffers were allocated for 32 rows: 16 rows do not fit them (np.copyto cannot "
        "stretch (16, 64) to (32, 64)), and every intermediate array of the step would "
        "have another shape too.",
    ),
    "c": (
        "the same batch as float32",
        True,
        "the dtypes fix every buffer and what NumPy computes: np.copyto would quietly turn "
        "the float32 numbers into the float64 buffer, and the replay would compute in "
        "float64 where an eager run of some other step (a float32 model, say) computes in "
        "float32. The replay is only known to be right for the dtypes it was traced with.",
    ),
    "d": (
        "x with requires_grad=True, to get the gradient for the input",
        True,
        "the trace ran no backward into x: eager minigrad would now give x a .grad, and the "
        "replay's fixed list of calls never computes it.",
    ),
    "e": (
        "scale 0.5 instead of 1.0",
        True,
        "a Python number gets no buffer: the trace recorded the NumPy calls Python made "
        "with 1.0 in them, as a constant. Another value needs another trace (for a float, "
        "minigrad.compile makes that trace once per new value, to check that Python "
        "computed nothing from it; then it reads the float live).",
    ),
    "f": (
        "scale 1 (an int) instead of 1.0",
        True,
        "1 == 1.0, but the step's Python code now gets an int, and code can act on the type "
        "(range(scale), np.array(scale) makes an integer array, isinstance). A number is "
        "keyed by its type as well as by its value.",
    ),
    "g": (
        "scale sum([0.25] * 4): 1.0 again, computed at run time (another float object)",
        False,
        "the value and the type are those of the trace; which object holds the number "
        "cannot change what the step computes, so compare numbers with ==, not with `is`.",
    ),
    "h": (
        "the same call, made inside `with minigrad.no_grad():`",
        True,
        "under no_grad eager minigrad records no graph, so the step's backward() raises; "
        "the replay, which needs no graph, would update the weights anyway. Grad mode is "
        "part of what a replay assumed.",
    ),
}


def check_10_2(must_trace: Any) -> None:
    """must_trace maps each letter of CALLS_10_2 to True (trace again) or False (replay);
    None (the cell's placeholder) means the exercise is not written yet."""
    exercise = "10.2"
    if must_trace is None:  # the cell assigns None before the learner's answer
        check.not_written(exercise)
    example = "{'a': False, 'b': True, ...}"
    if not isinstance(must_trace, dict):
        check.fail(
            exercise,
            f"must_trace should be a dict such as {example}; got {check.with_article(must_trace)}.",
        )
    missing = [letter for letter in CALLS_10_2 if letter not in must_trace]
    if missing:
        check.fail(
            exercise,
            f"must_trace has no prediction for {', '.join(repr(m) for m in missing)}; give one "
            f"for each of the calls a to h.",
        )
    extra = [repr(key) for key in must_trace if key not in CALLS_10_2]
    if extra:
        check.fail(
            exercise,
            f"must_trace has entries for {', '.join(extra)}, which are not among the calls a to h.",
        )
    for letter in CALLS_10_2:
        value = must_trace[letter]
        if not isinstance(value, (bool, np.bool_)):
            check.fail(
                exercise,
                f"must_trace[{letter!r}] should be True (trace again) or False (the replay "
                f"serves it); got {check.with_article(value)} ({value!r}).",
            )
    wrong = [
        f"- {letter} ({what}): {'must trace again' if expected else 'the replay serves it'}, "
        f"because {why}"
        for letter, (what, expected, why) in CALLS_10_2.items()
        if bool(must_trace[letter]) != expected
    ]
    if not wrong:
        check.passed(exercise)
        return
    if all(must_trace[letter] for letter in CALLS_10_2):
        lead = (
            "every call is predicted to need a new trace, yet some changes leave a replay "
            "exactly right. "
        )
    elif not any(must_trace[letter] for letter in CALLS_10_2):
        lead = (
            "no call is predicted to need a new trace, yet some changes would make a replay wrong. "
        )
    else:
        lead = ""
    verb = "is" if len(wrong) == 1 else "are"
    check.fail(
        exercise,
        f"{lead}{len(wrong)} of the 8 predictions {verb} off:\n" + "\n".join(wrong),
    )


# --------------------------------------------------------------------------- Exercise 10.3


def _number_has_no_attribute(error: BaseException) -> bool:
    """An AttributeError raised by reading an attribute (.shape, .dtype, ...) of a number."""
    obj = getattr(error, "obj", None)
    return type(obj) in (bool, int, float) and getattr(error, "name", None) is not None


_GUARD_HINTS: list[check.HintRule] = [
    (
        AttributeError,
        _number_has_no_attribute,
        "A plain number has no .shape, .dtype or .requires_grad: find out first whether "
        "each argument is a Variable or a number, and when the two calls differ in that, "
        "the replay cannot serve the call.",
    ),
    (
        RuntimeError,
        lambda error: raised.raised_in(error, Variable.__bool__),
        "`==` or `!=` with a Variable compares numbers element by element and gives a "
        "Variable, which has no single truth value. A Variable's numbers are copied into "
        "the replay's buffers on every call, so do not compare them: compare what the "
        "buffers and the trace were made for.",
    ),
    (
        TypeError,
        lambda error: raised.raised_in(error, Variable.__len__),
        "A 0-d Variable (a single number, shape ()) has no len(): compare .shape, which "
        "works for any number of dimensions.",
    ),
]


def _guard_cases(rng: np.random.Generator) -> list[tuple[str, list, list, bool, str]]:
    """(what the two calls are, traced_args, new_args, the answer, why, for a wrong answer)."""

    def v(*shape: int, dtype: Any = np.float64, grad: bool = False) -> Variable:
        return Variable(np.asarray(rng.standard_normal(shape)).astype(dtype), requires_grad=grad)

    x, y, scale = v(8, 3), v(8, 1), 0.1
    numbers_only = (
        "the two calls differ only in the numbers inside their Variables: did you compare "
        "the Variables themselves (`a is b`, `a == b`) or their .data? The replay copies "
        "each call's numbers into its input buffers, so new numbers never need a new trace "
        "(or a training loop would never replay)."
    )
    count = (
        "the calls have {} and {} arguments: zip() stops at the shorter list, so compare "
        "the lengths as well."
    )
    return [
        (
            "the very same arguments again",
            [x, y, scale],
            [x, y, scale],
            False,
            "nothing changed at all, so the replay serves the call.",
        ),
        (
            "the next batch: new Variables of the same shapes and dtypes with other numbers, "
            "and the same number 0.1",
            [x, y, scale],
            [v(8, 3), v(8, 1), scale],
            False,
            numbers_only,
        ),
        (
            "two 0-d Variables (shape ()) holding other numbers",
            [v(), 2],
            [v(), 2],
            False,
            numbers_only,
        ),
        (
            "a batch of 8 rows, then one of 5 rows",
            [x, y, scale],
            [v(5, 3), v(5, 1), scale],
            True,
            "the shapes differ, and buffers allocated for 8 rows cannot hold 5 (nor would "
            "the step's other arrays have the traced shapes): compare .shape.",
        ),
        (
            "a 0-d Variable (shape ()), then one of shape (1,)",
            [v(), v(4)],
            [v(1), v(4)],
            True,
            "() and (1,) hold one number each but are different shapes: a replay built for () "
            "makes ()-shaped results where eager makes (1,)-shaped ones. Compare .shape "
            "itself, not the number of entries.",
        ),
        (
            "a float64 Variable, then a float32 one of the same shape",
            [v(4, 2), 0.5],
            [v(4, 2, dtype=np.float32), 0.5],
            True,
            "the dtypes differ (float64, then float32): the buffers and every NumPy call "
            "were made for float64, and np.copyto would quietly convert the numbers. "
            "Compare .dtype.",
        ),
        (
            "an input that does not require grad, then one that does",
            [v(3), v(3)],
            [v(3), v(3, grad=True)],
            True,
            "requires_grad differs: the trace computed no gradient for that input, and an "
            "eager run would now give it a .grad. Compare .requires_grad.",
        ),
        (
            "the number 0.1, then 0.05",
            [v(6), 0.1],
            [v(6), 0.05],
            True,
            "a Python number gets no buffer: the trace recorded the NumPy calls made with "
            "0.1 in them as a constant, so another value needs another trace. Compare "
            "numbers by value.",
        ),
        (
            "the number 0.1, then 0.1 again, computed at run time (an equal value in "
            "another float object)",
            [v(6), 0.1],
            [v(6), float("0.1")],
            False,
            "the numbers are equal (==) but are two objects, and `is` asks about the objects. "
            "What the step computes depends on the value and the type, so compare with ==.",
        ),
        (
            "the number 1, then 1.0",
            [v(2), 1],
            [v(2), 1.0],
            True,
            "1 == 1.0 in Python, but the step would get a float where it was traced with an "
            "int, and Python code can act on the type (range(n), np.array(n) makes an integer "
            "array): compare type(a) is type(b) as well as the values.",
        ),
        (
            "True, then 1",
            [v(2), True],
            [v(2), 1],
            True,
            "True == 1 in Python, and isinstance(True, int) is True too (bool is a subclass "
            "of int); they are still two types: compare type(a) is type(b).",
        ),
        (
            "1, then True",
            [v(2), 1],
            [v(2), True],
            True,
            "1 == True in Python, and isinstance(True, int) is True too (bool is a subclass "
            "of int), so isinstance(new, type(traced)) lets True through; they are still two "
            "types: compare type(a) is type(b).",
        ),
        (
            "a Variable, then a plain number in its place",
            [v(2, 2), 0.1],
            [0.5, 0.1],
            True,
            "a Variable was replaced by a number: the replay has a buffer there, the step "
            "would now get a number. When one argument is a Variable and the other is not, "
            "the replay cannot serve the call.",
        ),
        (
            "a plain number, then a Variable in its place",
            [0.5, 0.1],
            [v(2, 2), 0.1],
            True,
            "a number was replaced by a Variable: the trace has no buffer there and baked the "
            "number in as a constant. When one argument is a Variable and the other is not, "
            "the replay cannot serve the call.",
        ),
        (
            "two arguments, then the same two and a third",
            [x, scale],
            [x, scale, True],
            True,
            count.format(2, 3),
        ),
        (
            "three arguments, then only the first two",
            [x, y, scale],
            [x, y],
            True,
            count.format(3, 2),
        ),
    ]


def check_10_3(needs_new_trace: Callable[[list, list], Any]) -> None:
    """needs_new_trace(traced_args, new_args) -> True when a replay traced with traced_args
    cannot serve a call with new_args (each argument a Variable or a bool, int or float)."""
    exercise = "10.3"
    if not callable(needs_new_trace):
        check.fail(
            exercise,
            f"needs_new_trace should be a function; got {check.with_article(needs_new_trace)}.",
        )
    rng = np.random.default_rng(3030)
    for label, traced, new, expected, why in _guard_cases(rng):
        what = f"needs_new_trace(traced_args, new_args) for {label}"
        got = check.call(
            exercise, what, needs_new_trace, list(traced), list(new), hints=_GUARD_HINTS
        )
        if got is None:
            check.fail(
                exercise,
                f"{what} returned None; return True (trace again) or False (the replay "
                f"serves the call). A function that ends without `return` gives None.",
            )
        if not isinstance(got, (bool, np.bool_)):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(got)}; return a plain True or False.",
            )
        if bool(got) != expected:
            check.fail(exercise, f"{what} returned {bool(got)}, expected {expected}: {why}")
    check.passed(exercise)

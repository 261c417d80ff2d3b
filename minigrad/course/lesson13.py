"""Checks for lesson 13 (memory: recompute or keep), and the references the lesson uses.

Exercise 13.1 calls the learner's `distinct_bytes(arrays, parameters)` on hidden lists of
saved arrays, one idea per list (a buffer saved twice, a view, a slice, two equal arrays,
the weights), and names the mistake a wrong total most likely comes from. Exercise 13.2
runs the learner's `Checkpoint` Function on hidden blocks and compares every gradient with
a plain backward through the same blocks, while a saved_tensors_hooks pack hook counts
what forward kept, and names a backward that ignores grad_output. Exercise 13.3 runs the
learner's `bisect` (Chen et al.'s recursive checkpoints) on hidden chains, measures the
peak of saved buffers with a meter and counts the block calls, then compares the learner's
`predicted_peak(n)` with the measured peaks (`check_schedule` and `check_predictions` are
shared with its hidden tests).

`owner`, `distinct_bytes` and `bisect` are the references the lesson's cells use after
Exercises 13.1 and 13.3, so the lesson runs on whatever the learner's answer is.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad.core.errors import BackwardTwiceError, GradientCountError, NoGradFnError
from minigrad.core.function import saved_tensors_hooks
from minigrad.core.variable import Parameter, Variable
from minigrad.course import check
from minigrad.utils.checkpoint import checkpoint

# --------------------------------------------------------------------------- references


def owner(array: np.ndarray) -> np.ndarray:
    """The array that owns the memory `array` looks at: `array` itself, or the end of its
    chain of `.base` references (a view, `a.T` or `a[1:]`, has the array it was made from
    as its `.base`)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def distinct_bytes(
    arrays: Sequence[np.ndarray], parameters: Sequence[np.ndarray] = ()
) -> tuple[int, int]:
    """(activation bytes, parameter bytes) that `arrays` keep alive, each buffer once.

    Every array is traced to its owner (`owner`); an owner reached from several arrays
    (the same array saved by two nodes, a view and the array it views) is counted once,
    with the owner's `.nbytes`: a view keeps its whole buffer alive. An owner that is one
    of `parameters` (or their owners) goes into the second number: weights exist whether
    or not anything is saved. Parameters that no array reaches are not counted.
    """
    parameter_ids = {id(owner(p)) for p in parameters}
    buffers = {id(found): found for found in map(owner, arrays)}
    activations = sum(b.nbytes for key, b in buffers.items() if key not in parameter_ids)
    weights = sum(b.nbytes for key, b in buffers.items() if key in parameter_ids)
    return int(activations), int(weights)


# --------------------------------------------------------------------------- Exercise 13.1

SHARED_TWICE = (
    "one buffer was counted once per array that refers to it. A Tanh keeps its output and "
    "the next Linear keeps the same array as its input: it is one buffer, so count each "
    "buffer once (remember which ones you have seen, by identity)."
)
BY_VALUE = (
    "two arrays that hold equal numbers are still two buffers, each with its own memory. "
    "Tell buffers apart by identity (`is`, or `id()`), not by comparing their values."
)
FORGOT_BASE = (
    "a view was counted as a buffer of its own. `m.T` (or `m[1:]`, `m.reshape(...)`) is a "
    "view: it has no memory of its own and its `.base` is the array that owns the buffer. "
    "Follow `.base` to the owner and count the owner."
)
VIEW_BYTES = (
    "that is the view's own `.nbytes`, but a view keeps its owner's whole buffer alive: "
    "follow `.base` to the owner and count the owner's `.nbytes`."
)
ASSUMED_8_BYTES = (
    "that is 8 bytes per number, but these are float32 numbers (4 bytes each): use "
    "`.nbytes`, which knows the dtype."
)
WEIGHTS_AS_ACTIVATIONS = (
    "the weight was counted as an activation. A Linear saves `weight.T`, a view whose "
    "owner (its `.base`) is the weight itself: follow `.base` before you compare with the "
    "parameters, and put a buffer that belongs to a parameter in the second number."
)
EVERY_PARAMETER = (
    "that counts every parameter, but only the saved ones are asked for: here nothing "
    "saved the bias (an addition saves nothing), so it is not counted."
)
SWAPPED = "the two numbers are swapped: return (activation bytes, parameter bytes)."
PARAMETER_BY_VALUE = (
    "an activation that holds the same numbers as a parameter was counted as the parameter. "
    "It is a buffer of its own: recognise a parameter's buffer by identity (`is`, or `id()` "
    "of the owner), not by comparing values."
)


def _ids(arrays: Sequence[np.ndarray], key: Callable[[np.ndarray], int] = id) -> set:
    return {key(a) for a in arrays}


def _model_every_reference(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Each array's own .nbytes, however many times a buffer appears."""
    weights = _ids(parameters, lambda p: id(owner(p)))
    act = sum(a.nbytes for a in arrays if id(owner(a)) not in weights)
    return act, sum(a.nbytes for a in arrays if id(owner(a)) in weights)


def _model_no_base(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Distinct array objects (no .base), each with its own .nbytes."""
    distinct = {id(a): a for a in arrays}
    weights = _ids(parameters)
    act = sum(a.nbytes for key, a in distinct.items() if key not in weights)
    return act, sum(a.nbytes for key, a in distinct.items() if key in weights)


def _model_view_bytes(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Owners told apart correctly, but each counted with the first view's .nbytes."""
    first: dict[int, np.ndarray] = {}
    for a in arrays:
        first.setdefault(id(owner(a)), a)
    weights = _ids(parameters, lambda p: id(owner(p)))
    act = sum(a.nbytes for key, a in first.items() if key not in weights)
    return act, sum(a.nbytes for key, a in first.items() if key in weights)


def _model_by_value(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Buffers with equal contents merged into one."""
    kept: list[np.ndarray] = []
    for a in map(owner, arrays):
        if not any(k.shape == a.shape and np.array_equal(k, a) for k in kept):
            kept.append(a)
    return distinct_bytes(kept, parameters)


def _model_parameter_by_value(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Distinct owners, but an owner that equals a parameter in values counted as one."""
    buffers = {id(b): b for b in map(owner, arrays)}

    def like_a_parameter(buffer: np.ndarray) -> bool:
        return any(p.shape == buffer.shape and np.array_equal(p, buffer) for p in parameters)

    act = sum(b.nbytes for b in buffers.values() if not like_a_parameter(b))
    return act, sum(b.nbytes for b in buffers.values() if like_a_parameter(b))


def _model_8_bytes(arrays: Sequence, parameters: Sequence) -> tuple[int, int]:
    """Distinct owners counted with 8 bytes per number, whatever the dtype."""
    buffers = {id(b): b for b in map(owner, arrays)}
    weights = _ids(parameters, lambda p: id(owner(p)))
    act = sum(8 * b.size for key, b in buffers.items() if key not in weights)
    return act, sum(8 * b.size for key, b in buffers.items() if key in weights)


def _mistakes_13_1(arrays: Sequence, parameters: Sequence) -> dict[str, tuple[int, int]]:
    """hint -> the answer that mistake gives on these arrays (the first listed wins)."""
    act, par = distinct_bytes(arrays, parameters)
    return {
        WEIGHTS_AS_ACTIVATIONS: (act + par, 0),
        EVERY_PARAMETER: (act, sum(owner(p).nbytes for p in parameters)),
        SWAPPED: (par, act),
        VIEW_BYTES: _model_view_bytes(arrays, parameters),
        FORGOT_BASE: _model_no_base(arrays, parameters),
        SHARED_TWICE: _model_every_reference(arrays, parameters),
        BY_VALUE: _model_by_value(arrays, parameters),
        PARAMETER_BY_VALUE: _model_parameter_by_value(arrays, parameters),
        ASSUMED_8_BYTES: _model_8_bytes(arrays, parameters),
    }


def _saved_by_small_mlp() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """What a 3-block MLP (Linear then Tanh, batch 5, width 3, float32) saves for backward,
    and its parameters. Each block computes `(h @ weight.T + bias).tanh()`, as nn.Linear and
    nn.Tanh do, with Parameters made here (nn.Linear would draw from minigrad's generator,
    which the lesson seeds)."""
    rng = np.random.default_rng(131)
    parameters = [
        Parameter(rng.standard_normal(shape).astype(np.float32))
        for _ in range(3)
        for shape in ((3, 3), (3,))
    ]
    saved: list[np.ndarray] = []

    def pack(variable: Variable) -> Variable:
        saved.append(variable.data)
        return variable

    h = Variable(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    with saved_tensors_hooks(pack, lambda variable: variable):
        for weight, bias in zip(parameters[::2], parameters[1::2]):
            h = (h @ weight.T + bias).tanh()
        (h * h).sum()
    return saved, [p.data for p in parameters]


def _cases_13_1() -> list[tuple[str, list[np.ndarray], list[np.ndarray]]]:
    """(the call and what it is, arrays, parameters): each case isolates one idea."""
    h = np.arange(32, dtype=np.float64).reshape(4, 8)
    zeros_a, zeros_b = np.zeros((3, 4)), np.zeros((3, 4))
    m = np.arange(20, dtype=np.float64).reshape(5, 4)
    big = np.ones((6, 4), dtype=np.float32)
    x = np.linspace(-1.0, 1.0, 8).reshape(2, 4)
    weight, bias = np.full((3, 4), 0.5), np.zeros(3)
    copy = weight.copy()  # a tie: an activation with exactly the weight's numbers
    saved, parameters = _saved_by_small_mlp()
    return [
        ("distinct_bytes([], [])", [], []),
        ("distinct_bytes([h, h], []), one array saved twice,", [h, h], []),
        (
            "distinct_bytes([a, b], []), two different arrays that both hold zeros,",
            [zeros_a, zeros_b],
            [],
        ),
        ("distinct_bytes([m, m.T], []), an array and its transpose,", [m, m.T], []),
        (
            "distinct_bytes([big[:1]], []), the first row of a (6, 4) float32 array,",
            [big[:1]],
            [],
        ),
        (
            "distinct_bytes([x, weight.T], [weight, bias]), what a Linear saves,",
            [x, weight.T],
            [weight, bias],
        ),
        (
            "distinct_bytes([y, weight.T], [weight]), where y holds the same numbers as the "
            "weight but is an array of its own,",
            [copy, weight.T],
            [weight],
        ),
        (
            "distinct_bytes(saved, parameters), what a 3-block Linear/Tanh MLP saves,",
            saved,
            parameters,
        ),
    ]


def _two_numbers(exercise: str, what: str, value: Any) -> tuple[float, float]:
    """The answer as two numbers, or a CheckError saying what it is instead."""
    if isinstance(value, np.ndarray) and value.shape == (2,):
        value = tuple(value.tolist())
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        shown = (
            f"{len(value)} values"
            if isinstance(value, (tuple, list))
            else (check.with_article(value))
        )
        check.fail(
            exercise,
            f"{what} returned {shown}; return two numbers, `(activation bytes, parameter "
            f"bytes)`, e.g. `return activations, weights`.",
        )
    for item in value:
        if isinstance(item, bool) or not isinstance(item, numbers.Real):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(item)} among its two values; both "
                f"should be numbers of bytes (ints).",
            )
    return float(value[0]), float(value[1])


def check_13_1(distinct_bytes_answer: Any) -> None:
    """distinct_bytes(arrays, parameters) -> (activation bytes, parameter bytes), each buffer
    once, views traced to their owner, saved parameters apart."""
    exercise = "13.1"
    if not callable(distinct_bytes_answer):
        check.fail(
            exercise,
            "distinct_bytes should be a function; got "
            f"{check.with_article(distinct_bytes_answer)}.",
        )
    hints = [
        (
            ValueError,
            "With no arrays the answer is (0, 0): start each sum at 0 (max() of nothing raises).",
        ),
        (
            AttributeError,
            lambda error: isinstance(getattr(error, "obj", None), memoryview),
            "The arguments are NumPy arrays already (each a saved Variable's `.data`); an "
            "array's own `.data` is its raw memory, a memoryview. Use the arrays as they are.",
        ),
    ]
    for what, arrays, parameters in _cases_13_1():
        got = check.call(
            exercise, what, distinct_bytes_answer, list(arrays), list(parameters), hints=hints
        )
        got = _two_numbers(exercise, what, got)
        expected = distinct_bytes(arrays, parameters)
        if got == expected:
            continue
        shown = f"({got[0]:g}, {got[1]:g})"
        for hint, wrong in _mistakes_13_1(arrays, parameters).items():
            if wrong != expected and got == wrong:
                check.fail(exercise, f"{what} is {shown}, expected {expected}: {hint}")
        check.fail(
            exercise,
            f"{what} is {shown}, expected {expected} (activation bytes, parameter bytes). "
            f"Count each owning buffer once with its `.nbytes`, and put the ones that "
            f"belong to a parameter in the second number.",
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 13.2

RECOMPUTED_WITHOUT_GRAPH = (
    "Backward runs with recording off (lesson 03), so what you backpropagate from has no "
    "graph unless it was computed with recording on: recompute the block, and anything you "
    "backpropagate from, inside `with minigrad.enable_grad():` (a `.sum()` taken after the "
    "with-block has no graph). And seed the inner backward with the gradient that arrives, "
    "`output.backward(grad_output)`, not with `.sum()`."
)
NO_NONE_FOR_BLOCK = (
    "forward(ctx, block, *inputs) has the block as its first argument, and it is not a "
    "Variable: return None for it first, then one gradient per input, "
    "`return (None, *grads)`."
)
CALLED_ITS_OWN_BACKWARD = (
    "backward called .backward() on the output forward returned, and that output's grad_fn "
    "is this very node, so backward calls itself forever. Recompute a fresh output from "
    "detached copies of the saved inputs and backpropagate through that one."
)
NOT_DETACHED = (
    "you should backpropagate through the recomputed block from *detached* copies of the "
    "saved inputs (`x.detach().requires_grad_()`). Without detach, the inner backward runs "
    "on past the block into the graph before it, and the gradient you return is added a "
    "second time."
)

IGNORES_GRAD_OUTPUT = (
    "your backward ignores grad_output: it backpropagates from the recomputed output as if "
    "the loss were output.sum() (a seed of ones), so each block gets the gradient of its own "
    "sum, not of the loss. Seed the inner backward with the gradient that arrives, "
    "`output.backward(grad_output)`."
)

_HINTS_13_2: list[check.HintRule] = [
    (
        RuntimeError,
        lambda error: "implicitly created only for scalar" in str(error),
        "The recomputed output is not a scalar, so its backward needs a seed: the gradient "
        "that arrives, `output.backward(grad_output)` (a .sum() first would ignore "
        "grad_output and give each block the gradient of its own sum).",
    ),
    (NoGradFnError, RECOMPUTED_WITHOUT_GRAPH),
    (GradientCountError, lambda error: error.got == error.expected - 1, NO_NONE_FOR_BLOCK),
    (
        GradientCountError,
        "backward returns one value per argument of forward: None for the block, then one "
        "gradient per input.",
    ),
    (RecursionError, CALLED_ITS_OWN_BACKWARD),
    (BackwardTwiceError, "This often means " + NOT_DETACHED),
]


class _Block:
    """tanh(h @ w + b) with its own Parameters: a hidden block the learner never sees."""

    def __init__(self, rng: np.random.Generator, width: int) -> None:
        self.w = Parameter(rng.standard_normal((width, width)) / np.sqrt(width))
        self.b = Parameter(rng.standard_normal(width) * 0.1)
        self.calls: list[str | None] = []

    def __call__(self, h: Variable) -> Variable:
        # What each call got: the name of its input's grad_fn, None for a leaf.
        self.calls.append(None if h.grad_fn is None else h.grad_fn.name())
        return (h @ self.w + self.b).tanh()

    def parameters(self) -> list[Parameter]:
        return [self.w, self.b]


def _counting_hooks() -> tuple[list, saved_tensors_hooks]:
    """A pack hook that records each saved value's shape, and an unpack that gives it back."""
    packed: list = []

    def pack(variable: Variable) -> Variable:
        packed.append(variable.shape)
        return variable

    return packed, saved_tensors_hooks(pack, lambda variable: variable)


def _plain_run(blocks: list[_Block], x_data: np.ndarray) -> tuple[np.ndarray, list, np.ndarray]:
    """The output, parameter gradients and input gradient of a plain forward and backward."""
    x = Variable(x_data.copy(), requires_grad=True)
    h = x
    for block in blocks:
        h = block(h)
    (h * h).sum().backward()
    grads = [p.grad.data.copy() for block in blocks for p in block.parameters()]
    for block in blocks:
        block.calls.clear()
        for p in block.parameters():
            p.grad = None
    return h.data.copy(), grads, x.grad.data.copy()


def _ignoring_grad_output_run(blocks: list[_Block], x_data: np.ndarray) -> tuple[list, np.ndarray]:
    """The parameter gradients and x.grad a chain of checkpoints gives when each backward
    ignores grad_output: block i's parameters get the gradient of block_i(h_i).sum(), and
    x.grad is that of block_0(x).sum()."""
    grads: list[np.ndarray] = []
    h = Variable(x_data.copy())
    x_grad = np.zeros_like(x_data)
    for index, block in enumerate(blocks):
        leaf = Variable(h.data.copy(), requires_grad=True)
        output = block(leaf)
        output.sum().backward()
        grads.extend(p.grad.data.copy() for p in block.parameters())
        if index == 0:
            x_grad = leaf.grad.data.copy()
        h = Variable(output.data.copy())
    for block in blocks:
        block.calls.clear()
        for p in block.parameters():
            p.grad = None
    return grads, x_grad


INPUT_GRADIENT_NONE = (
    "the last block's parameters got their gradient, the blocks before it none: the "
    "gradient stops at your Checkpoint, whose backward returned None for its input. "
    "Recompute from copies that require grad (`x.detach().requires_grad_()`) and return "
    "their `.grad` after the inner backward."
)
INPUT_GRADIENT_WRONG = (
    "the last block's parameters got the right gradient, the blocks before it a wrong "
    "one, so the gradient your backward returns for the input is wrong. Return the `.grad` "
    "that the inner backward gave the detached copies of the inputs, one per input."
)


def _check_gradient_reaches_the_input(exercise: str, grads: list, expected: list) -> None:
    """Fail with a hint when the last block's parameters are right and earlier ones not:
    the gradient Checkpoint.backward returns for its input is missing or wrong."""

    def right(grad: Any, wanted: np.ndarray) -> bool:
        return isinstance(grad, Variable) and np.allclose(grad.data, wanted, rtol=1e-12, atol=0)

    *earlier, last_w, last_b = zip(grads, expected)
    if not (right(*last_w) and right(*last_b)):
        return
    if any(grad is None for grad, _ in earlier):
        check.fail(exercise, INPUT_GRADIENT_NONE)
    doubled = any(
        isinstance(grad, Variable) and np.allclose(grad.data, 2 * wanted, rtol=1e-12, atol=0)
        for grad, wanted in earlier
    )
    if not doubled and not all(right(grad, wanted) for grad, wanted in earlier):
        check.fail(exercise, INPUT_GRADIENT_WRONG)


def check_13_2(checkpoint_class: Any) -> None:
    """Checkpoint.apply(block, *inputs): forward keeps only the inputs, backward recomputes."""
    exercise = "13.2"
    cls = check.function_class(exercise, checkpoint_class, "Checkpoint")
    rng = np.random.default_rng(13)
    blocks = [_Block(rng, 5) for _ in range(4)]
    x_data = rng.standard_normal((3, 5))
    out_expected, grads_expected, x_grad_expected = _plain_run(blocks, x_data)
    grads_ignoring, x_grad_ignoring = _ignoring_grad_output_run(blocks, x_data)

    x = Variable(x_data.copy(), requires_grad=True)
    h = x
    for index, block in enumerate(blocks):
        what = f"Checkpoint.apply(block, h) for block {index}"
        packed, hooks = _counting_hooks()
        with hooks:
            h = check.call(exercise, what, cls.apply, block, h, hints=_HINTS_13_2)
        if not isinstance(h, Variable):
            check.fail(exercise, f"{what} returned {check.with_article(h)}, not a Variable.")
        if len(packed) > 1:
            check.fail(
                exercise,
                f"{what} saved {len(packed)} values for backward (shapes {packed}); a "
                f"checkpoint keeps only the block's input, 1 value here. Save the inputs with "
                f"ctx.save_for_backward(*inputs) and nothing else: no output, no intermediate "
                f"result, and no `enable_grad()` in forward (it makes every operation inside "
                f"the block save its own values).",
            )
        if not packed:
            check.fail(
                exercise,
                f"{what} saved nothing with ctx.save_for_backward. Keep the inputs there, not "
                f"as attributes of ctx: saved values are version-checked, and saved-value "
                f"hooks (section 1) can only see what goes through save_for_backward.",
            )
        if h.grad_fn is None:
            check.fail(
                exercise,
                f"{what} returned a Variable without a grad_fn: return the block's output "
                f"from forward and let apply record the node (do not detach it yourself).",
            )
    check.expect_close(
        exercise,
        "the output of the last checkpointed block",
        h,
        out_expected,
        rtol=1e-12,
        atol=0,
    )

    loss = (h * h).sum()
    with warnings.catch_warnings():
        # Reading .grad of a non-leaf warns; the calls the blocks saw say more (below).
        warnings.simplefilter("ignore")
        check.call(exercise, "backward through your Checkpoint", loss.backward, hints=_HINTS_13_2)
    for index, block in enumerate(blocks[1:], start=1):
        # A block's first call is forward, its second the recomputation in backward.
        if len(block.calls) > 1 and block.calls[1] is not None:
            check.fail(
                exercise,
                f"in backward, block {index} was recomputed from its saved input itself, "
                f"which still has a grad_fn ({block.calls[1]}, the previous block's node): "
                f"{NOT_DETACHED}",
            )
    grads = [p.grad for block in blocks for p in block.parameters()]
    _check_gradient_reaches_the_input(exercise, grads, grads_expected)
    if any(grad is None for grad in grads):
        check.fail(
            exercise,
            "some parameters inside the blocks got no gradient: backward must call "
            "`output.backward(grad_output)` on the recomputed output, so the parameters used "
            "inside the block receive their .grad.",
        )
    for index, (grad, expected, ignoring) in enumerate(zip(grads, grads_expected, grads_ignoring)):
        name = f"the gradient of parameter {index % 2} ({'w' if index % 2 == 0 else 'b'}) " + (
            f"in block {index // 2}"
        )
        check.expect_close(
            exercise,
            name,
            grad,
            expected,
            {
                "it is twice the right one: " + NOT_DETACHED: 2 * expected,
                IGNORES_GRAD_OUTPUT: ignoring,
            },
            rtol=1e-12,
            atol=0,
        )
    check.expect_close(
        exercise,
        "x.grad, the gradient of the input of the first block",
        x.grad,
        x_grad_expected,
        {
            "it is twice the right one: " + NOT_DETACHED: 2 * x_grad_expected,
            IGNORES_GRAD_OUTPUT: x_grad_ignoring,
        },
        rtol=1e-12,
        atol=0,
    )

    # Three inputs, one of which needs no gradient; a zero and two equal entries.
    a = Variable(np.array([0.0, -1.2, 2.0]), requires_grad=True)
    s = Variable(np.array([1.5, 1.5, -0.7]), requires_grad=True)
    c = Variable(np.array([2.0, -1.0, 0.5]))

    def two_inputs(a: Variable, s: Variable, c: Variable) -> Variable:
        return (a * s).sin() * c

    what = "Checkpoint.apply(block, a, s, c) with three inputs"
    out = check.call(exercise, what, cls.apply, two_inputs, a, s, c, hints=_HINTS_13_2)
    backward = out.sum().backward if isinstance(out, Variable) else None
    if backward is None:
        check.fail(exercise, f"{what} returned {check.with_article(out)}, not a Variable.")
    check.call(exercise, f"backward through {what}", backward, hints=_HINTS_13_2)
    inner = np.cos(a.data * s.data) * c.data
    check.expect_close(exercise, f"a.grad after {what}", a.grad, inner * s.data)
    check.expect_close(exercise, f"s.grad after {what}", s.grad, inner * a.data)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 13.3


def bisect(blocks: Sequence[Callable], h: Variable) -> Variable:
    """The blocks run one after another on `h`, under Chen et al.'s recursive schedule.

    A chain of one block runs as it is; a longer chain is cut into halves (the first
    len // 2 blocks, then the rest), and each half runs under `checkpoint`, as `bisect` of
    its own blocks. A checkpoint keeps only its input, and while backward recomputes a half
    its quarters are checkpoints again, so for n = 2**m blocks the saved values alive at
    once are the inputs on one path down the recursion: O(log n) of them. Each block runs
    once in forward and once more per level, 1 + log2(n) times in all.
    """
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    first, second = list(blocks[:middle]), list(blocks[middle:])
    h = checkpoint(lambda value: bisect(first, value), h)
    return checkpoint(lambda value: bisect(second, value), h)


def bisect_peak(n: int) -> int:
    """The most saved activation buffers alive at once in one step of `bisect` on n = 2**m
    blocks that each keep one new array (their output), as a BufferMeter counts them, with
    the input x counted: log2(n) + 2.

    While backward recomputes the last block, x and the second half's input at each of the
    log2(n) levels are held (the detached copy a recomputation starts from shares its
    buffer with the saved input: no new memory), and the last block's recomputed output.
    """
    return int(round(np.log2(n))) + 2


class _PeakMeter:
    """The bytes of distinct buffers held by saved values: alive now, and the peak.

    pack() wraps each saved value in a box and counts the boxes per owning buffer; a
    buffer's bytes are added with its first box and taken off when its last box is thrown
    away. Parameters are not counted.
    """

    def __init__(self, parameters: Sequence[Variable]) -> None:
        self.weights = {id(owner(p.data)) for p in parameters}
        self.holders: dict[int, int] = {}
        self.live = 0
        self.peak = 0

    def hooks(self) -> saved_tensors_hooks:
        return saved_tensors_hooks(self.pack, lambda box: box.variable)

    def pack(self, variable: Variable) -> _Box:
        buffer = owner(variable.data)
        counted = id(buffer) not in self.weights
        if id(buffer) not in self.holders:
            self.holders[id(buffer)] = 0
            if counted:
                self.live += buffer.nbytes
                self.peak = max(self.peak, self.live)
        self.holders[id(buffer)] += 1
        return _Box(variable, self, id(buffer), buffer.nbytes if counted else 0)

    def release(self, key: int, nbytes: int) -> None:
        self.holders[key] -= 1
        if self.holders[key] == 0:
            del self.holders[key]
            self.live -= nbytes


class _Box:
    def __init__(self, variable: Variable, meter: _PeakMeter, key: int, nbytes: int) -> None:
        self.variable, self.meter, self.key, self.nbytes = variable, meter, key, nbytes

    def __del__(self) -> None:
        self.meter.release(self.key, self.nbytes)


def _log2(n: int) -> int:
    return int(round(np.log2(n)))


NO_CHECKPOINT = (
    "every block ran once, so nothing was recomputed: no checkpoint was placed (a recursion "
    "of plain calls is plain forward, which keeps every block's output). Run each half "
    "under `checkpoint(...)`."
)
ONE_AROUND_EACH = (
    "each block ran twice and every block's output was held at the peak: a checkpoint "
    "around each block (or a single one around the whole chain, with plain blocks inside) "
    "keeps as much as plain forward here "
    "(section 4). Checkpoint the two halves, and inside each half its two halves again."
)
HALVES_ONLY = (
    "that is a checkpoint around each half, with plain blocks inside: when backward "
    "recomputes a half, its n/2 blocks all hold their outputs. Place checkpoints inside "
    "the halves too: each half runs as `bisect` of its own blocks."
)
FLAT_SEGMENTS = (
    "each block ran twice, one recomputation in all: that is a flat schedule, segments "
    "checkpointed once (such as segments of sqrt(n) blocks), which holds a whole segment "
    "while it is recomputed. Make it recursive: checkpoint the two halves, and inside each "
    "half its two halves again, down to single blocks."
)
TOO_MANY_RECOMPUTES = (
    "the peak is right, but blocks ran more often than one forward plus one recomputation "
    "per level (1 + log2 n times each): there is a level of checkpoints too many, such as a "
    "checkpoint around the whole chain whose function checkpoints the halves again, "
    "`checkpoint(lambda v: bisect(blocks, v), h)`. Place one checkpoint per half at each "
    "halving, log2 n levels in all."
)

NOT_NESTED = (
    "the meter saw no saved value at all in forward, which is what minigrad's "
    "`checkpoint(..., use_reentrant=False)` gives: use_reentrant=False checkpoints do not "
    "nest here. Each one's pack hook is the innermost, so values saved inside an inner "
    "checkpoint go to the inner one and an outer one packs nothing: only the innermost "
    "checkpoints recompute, a flat schedule, and the meter sees none of it. Use the default "
    "(reentrant) `checkpoint(function, h)`: it saves its input with save_for_backward, and "
    "its recomputation in backward runs the inner checkpoints again."
)
LATE_BINDING = (
    "the function you checkpointed ran other blocks when backward recomputed it. A lambda "
    "made in a loop sees the loop variable's value when it runs, the last one, not the one "
    "it was made with: bind it, `lambda v, half=half: bisect(half, v)`, or name the halves "
    "(`first`, `second`) as separate variables."
)

PREDICTED_ONE_SHORT = (
    "one short. You counted the inputs held on the way down (x, and one per level), but "
    "while backward recomputes the last block, that block's fresh output is alive too: the "
    "segment being recomputed holds its own values next to the saved inputs."
)
PREDICTED_LEVELS_ONLY = (
    "two short: one saved input per level (log2 n), but x, the first half's input at the "
    "top, is held too, and so is the output of the block being recomputed."
)
PREDICTED_COPIES_TWICE = (
    "the inputs were counted twice. A recomputation starts from a detached copy of the saved "
    "input, `x.detach()`, which shares its buffer: it is no new memory. Count each buffer "
    "once, as in Exercise 13.1."
)
PREDICTED_LOSS_OUTPUT = (
    "one too many: the last output, which the loss keeps, is freed as soon as backward has "
    "gone through the loss, before any checkpoint is recomputed."
)
PREDICTED_PLAIN = "that is plain forward's peak, n + 1: the recursive schedule keeps far less."
PREDICTED_SQRT = (
    "that is the peak of segments of sqrt(n) blocks, 2 sqrt(n); the recursive schedule "
    "keeps only the inputs on one path down the recursion."
)


def _mistakes_13_3(n: int) -> dict[str, float]:
    """hint -> the prediction that mistake gives for n blocks (the first listed wins)."""
    levels = _log2(n)
    return {
        PREDICTED_ONE_SHORT: levels + 1,
        PREDICTED_LEVELS_ONLY: levels,
        PREDICTED_COPIES_TWICE: 2 * levels + 2,
        PREDICTED_LOSS_OUTPUT: levels + 3,
        PREDICTED_PLAIN: n + 1,
        PREDICTED_SQRT: 2 * np.sqrt(n),
    }


def _schedule_run(
    exercise: str, schedule: Callable, n: int, width: int, batch: int, seed: int
) -> dict[str, Any]:
    """One step of `schedule(blocks, x)` on n hidden blocks, against a plain step: the output
    and gradients of both, the peak of saved activation buffers in units of one block
    output, and how many times the blocks ran."""
    rng = np.random.default_rng(seed)
    blocks = [_Block(rng, width) for _ in range(n)]
    x_data = rng.standard_normal((batch, width))
    out_expected, grads_expected, x_grad_expected = _plain_run(blocks, x_data)
    parameters = [p for block in blocks for p in block.parameters()]
    meter = _PeakMeter(parameters)
    x = Variable(x_data.copy(), requires_grad=True)
    what = f"bisect(blocks, x) on {n} blocks"
    with meter.hooks():
        out = check.call(exercise, what, schedule, list(blocks), x)
        packed_in_forward = sum(meter.holders.values())
        if not isinstance(out, Variable):
            check.fail(exercise, f"{what} returned {check.with_article(out)}, not a Variable.")
        check.expect_close(exercise, f"the output of {what}", out, out_expected, rtol=1e-12, atol=0)
        loss = (out * out).sum()
        del out
        check.call(exercise, f"backward after {what}", loss.backward)
    # A function that runs other blocks when recomputed: some block never runs again, and
    # others run more often than once per level.
    ran_others = max(len(block.calls) for block in blocks) > 1 + _log2(n)
    for index, p in enumerate(parameters):
        if p.grad is None and len(blocks[index // 2].calls) == 1 and ran_others:
            check.fail(
                exercise,
                f"{what}: block {index // 2} never ran during backward (it ran once, in "
                f"forward), so its parameters got no gradient, while other blocks ran more "
                f"than 1 + log2(n) times: {LATE_BINDING}",
            )
        check.expect_close(
            exercise,
            f"the gradient of parameter {index % 2} in block {index // 2} after {what}",
            p.grad,
            grads_expected[index],
            rtol=1e-12,
            atol=0,
        )
    check.expect_close(
        exercise, f"x.grad after {what}", x.grad, x_grad_expected, rtol=1e-12, atol=0
    )
    return {
        "what": what,
        "peak": meter.peak / x_data.nbytes,
        "calls": sum(len(block.calls) for block in blocks),
        "packed_in_forward": packed_in_forward,
    }


def check_schedule(exercise: str, schedule: Any, n: int, width: int, batch: int, seed: int) -> int:
    """Run `schedule` as bisect on n blocks; fail with the mistake its peak or its number of
    block calls points to. Returns the measured peak in units of one block output."""
    run = _schedule_run(exercise, schedule, n, width, batch, seed)
    levels = _log2(n)
    peak, calls, what = run["peak"], run["calls"], run["what"]
    expected_peak = bisect_peak(n)
    if not np.isclose(peak, expected_peak):
        said = (
            f"{what}: at its peak, saved values held {peak:g} block outputs (x counted), "
            f"the recursive schedule holds {expected_peak}; the blocks ran {calls} times"
        )
        if run["packed_in_forward"] == 0:
            check.fail(exercise, f"{said}: {NOT_NESTED}")
        if calls == n:
            check.fail(exercise, f"{said}: {NO_CHECKPOINT}")
        if calls == 2 * n and np.isclose(peak, n // 2 + 2):
            check.fail(exercise, f"{said}: {HALVES_ONLY}")
        if calls == 2 * n and np.isclose(peak, n + 1):
            check.fail(exercise, f"{said}: {ONE_AROUND_EACH}")
        if calls == 2 * n:
            check.fail(exercise, f"{said}: {FLAT_SEGMENTS}")
        check.fail(
            exercise,
            f"{said}. Cut the chain in two halves (the first len(blocks) // 2 blocks, then "
            f"the rest), run each under `checkpoint` as `bisect` of its own blocks, and run "
            f"a single block as it is.",
        )
    if calls > n * (1 + levels):
        check.fail(
            exercise,
            f"{what}: the blocks ran {calls} times, at most {n * (1 + levels)} expected: "
            f"{TOO_MANY_RECOMPUTES}",
        )
    return int(round(peak))


def check_predictions(exercise: str, predicted_peak: Any, measured: dict[int, int]) -> None:
    """Compare predicted_peak(n) with the peaks measured, naming the likely mistake."""
    for n, peak in measured.items():
        what = f"predicted_peak({n})"
        got = check.call(exercise, what, predicted_peak, n)
        if isinstance(got, bool) or not isinstance(got, numbers.Real):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(got)}; return a number of block "
                f"outputs, e.g. `return 3 * n`.",
            )
        check.expect_close(
            exercise,
            f"{what} (measured: {peak} block outputs)",
            got,
            peak,
            {hint: wrong for hint, wrong in _mistakes_13_3(n).items() if wrong != peak},
            rtol=0,
            atol=1e-9,
        )


def check_13_3(bisect_answer: Any, predicted_peak_answer: Any) -> None:
    """bisect(blocks, h): Chen et al.'s recursive checkpoints, O(log n) saved memory at
    1 + log2(n) forwards; predicted_peak(n): its peak, in block outputs, predicted."""
    exercise = "13.3"
    for name, value in (("bisect", bisect_answer), ("predicted_peak", predicted_peak_answer)):
        if not callable(value):
            check.fail(exercise, f"{name} should be a function; got {check.with_article(value)}.")
    # 8 blocks first: there each misplacement gives a peak or a count of its own.
    measured = {}
    for n, seed in ((8, 331), (2, 332), (4, 333), (16, 334), (32, 335), (64, 336)):
        measured[n] = check_schedule(exercise, bisect_answer, n, width=4, batch=3, seed=seed)
    # 64 first: there every mistake gives a prediction of its own (at n = 2, 2 log2 n + 2
    # and log2 n + 3 are both 4).
    check_predictions(exercise, predicted_peak_answer, dict(sorted(measured.items())[::-1]))
    check.passed(exercise)

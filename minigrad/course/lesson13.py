"""Checks for lesson 13 (memory: recompute or keep).

Exercise 13.1 runs the learner's `Checkpoint` Function on hidden blocks and compares every
gradient with a plain backward through the same blocks, while a saved_tensors_hooks pack
hook counts what forward kept. Exercise 13.2 calls the learner's float16 pack and unpack
hooks directly, then uses them in a small graph.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff.saved import saved_tensors_hooks
from minigrad.course import check
from minigrad.variable import Parameter, Variable

# --------------------------------------------------------------------------- Exercise 13.1

RECOMPUTED_WITHOUT_GRAPH = (
    "Backward runs with recording off (lesson 03), so the recomputed output has no graph to "
    "backpropagate through: recompute the block inside `with minigrad.enable_grad():`."
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

_HINTS_13_1 = [
    (RuntimeError, "does not require grad and does not have a grad_fn", RECOMPUTED_WITHOUT_GRAPH),
    (RuntimeError, "incorrect number of gradients", NO_NONE_FOR_BLOCK),
    (RecursionError, "recursion", CALLED_ITS_OWN_BACKWARD),
    (RuntimeError, "backward through the graph a second time", "This often means " + NOT_DETACHED),
]


class _Block:
    """tanh(h @ w + b) with its own Parameters: a hidden block the learner never sees."""

    def __init__(self, rng: np.random.Generator, width: int) -> None:
        self.w = Parameter(rng.standard_normal((width, width)) / np.sqrt(width))
        self.b = Parameter(rng.standard_normal(width) * 0.1)

    def __call__(self, h: Variable) -> Variable:
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
        for p in block.parameters():
            p.grad = None
    return h.data.copy(), grads, x.grad.data.copy()


def check_13_1(checkpoint_class: Any) -> None:
    """Checkpoint.apply(block, *inputs): forward keeps only the inputs, backward recomputes."""
    exercise = "13.1"
    cls = check.function_class(exercise, checkpoint_class, "Checkpoint")
    rng = np.random.default_rng(13)
    blocks = [_Block(rng, 5) for _ in range(4)]
    x_data = rng.standard_normal((3, 5))
    out_expected, grads_expected, x_grad_expected = _plain_run(blocks, x_data)

    x = Variable(x_data.copy(), requires_grad=True)
    h = x
    for index, block in enumerate(blocks):
        what = f"Checkpoint.apply(block, h) for block {index}"
        packed, hooks = _counting_hooks()
        with hooks:
            h = check.call(exercise, what, cls.apply, block, h, hints=_HINTS_13_1)
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
                f"hooks (section 5) can only see what goes through save_for_backward.",
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
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check.call(exercise, "backward through your Checkpoint", loss.backward, hints=_HINTS_13_1)
    if any("not a leaf" in str(w.message) for w in caught):
        check.fail(
            exercise,
            f"your backward read .grad of a saved input that is not a leaf, which is None: "
            f"{NOT_DETACHED}",
        )
    grads = [p.grad for block in blocks for p in block.parameters()]
    if any(grad is None for grad in grads):
        check.fail(
            exercise,
            "some parameters inside the blocks got no gradient: backward must call "
            "`output.backward(grad_output)` on the recomputed output, so the parameters used "
            "inside the block receive their .grad.",
        )
    for index, (grad, expected) in enumerate(zip(grads, grads_expected)):
        name = f"the gradient of parameter {index % 2} ({'w' if index % 2 == 0 else 'b'}) " + (
            f"in block {index // 2}"
        )
        check.expect_close(
            exercise,
            name,
            grad,
            expected,
            {"it is twice the right one: " + NOT_DETACHED: 2 * expected},
            rtol=1e-12,
            atol=0,
        )
    check.expect_close(
        exercise,
        "x.grad, the gradient of the input of the first block",
        x.grad,
        x_grad_expected,
        {"it is twice the right one: " + NOT_DETACHED: 2 * x_grad_expected},
        rtol=1e-12,
        atol=0,
    )

    # Two inputs, one of which needs no gradient.
    a = Variable(np.array([0.3, -1.2, 2.0]), requires_grad=True)
    s = Variable(np.array([1.5, 0.5, -0.7]), requires_grad=True)
    c = Variable(np.array([2.0, -1.0, 0.5]))

    def two_inputs(a: Variable, s: Variable, c: Variable) -> Variable:
        return (a * s).sin() * c

    what = "Checkpoint.apply(block, a, s, c) with three inputs"
    out = check.call(exercise, what, cls.apply, two_inputs, a, s, c, hints=_HINTS_13_1)
    backward = out.sum().backward if isinstance(out, Variable) else None
    if backward is None:
        check.fail(exercise, f"{what} returned {check.with_article(out)}, not a Variable.")
    check.call(exercise, f"backward through {what}", backward, hints=_HINTS_13_1)
    inner = np.cos(a.data * s.data) * c.data
    check.expect_close(exercise, f"a.grad after {what}", a.grad, inner * s.data)
    check.expect_close(exercise, f"s.grad after {what}", s.grad, inner * a.data)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 13.2


def _half_arrays(packed: Any) -> list[np.ndarray]:
    """The float16 arrays inside what a pack hook returned (itself, or in a tuple/list/dict)."""
    items = list(packed.values()) if isinstance(packed, dict) else packed
    if not isinstance(items, (tuple, list)):
        items = [items]
    return [item for item in items if isinstance(item, np.ndarray) and item.dtype == np.float16]


def check_13_2(
    pack_half: Callable[[Variable], Any],
    unpack_half: Callable[[Any], Variable],
    half_sizes: list,
) -> None:
    """pack_half keeps a float16 copy (adding its bytes to half_sizes); unpack_half gives back
    a Variable with the original dtype."""
    exercise = "13.2"
    for name, function in (("pack_half", pack_half), ("unpack_half", unpack_half)):
        if not callable(function):
            check.fail(
                exercise, f"{name} should be a function; got {check.with_article(function)}."
            )
    if not isinstance(half_sizes, list):
        check.fail(exercise, f"half_sizes should be a list; got {check.with_article(half_sizes)}.")

    samples = [
        np.array([[0.1, -2.5, 3.14159], [100.0, 1e-3, -0.333]]),
        np.array([1.0, 0.2, -7.75, 0.01], dtype=np.float32),
    ]
    for values in samples:
        variable = Variable(values.copy())
        dtype = values.dtype
        what = f"pack_half(a {dtype} Variable of shape {values.shape})"
        before = sum(half_sizes)
        packed = check.call(exercise, what, pack_half, variable)
        if packed is None:
            check.fail(exercise, f"{what} returned None: return what unpack_half will need.")
        if isinstance(packed, Variable) or not _half_arrays(packed):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(packed)} and no float16 array: keep a "
                f"compressed copy, `variable.data.astype(np.float16)`, and return it (with "
                f"the original dtype beside it).",
            )
        added = sum(half_sizes) - before
        if added == values.nbytes:
            check.fail(
                exercise,
                f"{what} added {added} bytes to half_sizes, the size of the original "
                f"{dtype} array: add the float16 copy's .nbytes ({values.size * 2}) instead.",
            )
        if added != values.size * 2:
            check.fail(
                exercise,
                f"{what} added {added} bytes to half_sizes; expected {values.size * 2}, the "
                f".nbytes of the float16 copy (2 bytes per number): "
                f"`half_sizes.append(half.nbytes)`.",
            )
        unpack_what = f"unpack_half(pack_half(v)) for a {dtype} v"
        unpacked = check.call(exercise, unpack_what, unpack_half, packed)
        if isinstance(unpacked, np.ndarray):
            check.fail(
                exercise,
                f"{unpack_what} returned a NumPy array; an unpack hook must return a Variable: "
                f"wrap it, `minigrad.Variable(array)`.",
            )
        if not isinstance(unpacked, Variable):
            check.fail(
                exercise,
                f"{unpack_what} returned {check.with_article(unpacked)}; an unpack hook must "
                f"return a Variable built from what pack_half kept.",
            )
        if unpacked.dtype != dtype:
            hint = (
                "convert the float16 copy back, `.astype(dtype)`"
                if unpacked.dtype == np.float16
                else "do not assume float64: remember the dtype in pack_half "
                "(return it beside the array) and convert back to it"
            )
            check.fail(
                exercise,
                f"{unpack_what} has dtype {unpacked.dtype}, but v had {dtype}: {hint}. "
                f"Backward must get values of the dtype forward saved.",
            )
        rounded = values.astype(np.float16).astype(dtype)
        check.expect_close(
            exercise,
            unpack_what,
            unpacked,
            rounded,
            {"these are the exact values: store the float16 copy, not the original.": values},
            rtol=0,
            atol=0,
        )

    # In a graph: the gradient is computed from the float16-rounded saved values.
    x = Variable(np.array([0.3, -1.1, 0.7, 2.2]), requires_grad=True)
    w = Variable(np.array([1.3, 0.4, -0.9, 0.25]))
    with saved_tensors_hooks(pack_half, unpack_half):
        y = ((x * w).tanh()).sum()
    check.call(exercise, "backward through (x * w).tanh() with your hooks", y.backward)
    out16 = np.tanh(x.data * w.data).astype(np.float16).astype(np.float64)
    w16 = w.data.astype(np.float16).astype(np.float64)
    check.expect_close(
        exercise,
        "x.grad through (x * w).tanh() with your hooks",
        x.grad,
        (1 - out16**2) * w16,
        rtol=1e-12,
    )
    check.passed(exercise)

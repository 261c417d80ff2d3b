"""Tests of lesson 13's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson13
from minigrad.utils.checkpoint import checkpoint

# --------------------------------------------------------------------------- references


def test_owner_follows_views_to_the_buffer() -> None:
    m = np.zeros((4, 3))
    assert lesson13.owner(m) is m
    assert lesson13.owner(m.T) is m
    assert lesson13.owner(m.T[1:]) is m
    assert lesson13.owner(m.reshape(12)) is m


def test_distinct_bytes_counts_each_buffer_once_and_weights_apart() -> None:
    h, x = np.zeros((4, 8)), np.ones((2, 4))
    weight, bias = np.ones((3, 4)), np.zeros(3)
    assert lesson13.distinct_bytes([]) == (0, 0)
    assert lesson13.distinct_bytes([h, h, h.T, h[:1]]) == (h.nbytes, 0)
    assert lesson13.distinct_bytes([x, weight.T, h], [weight, bias]) == (
        x.nbytes + h.nbytes,
        weight.nbytes,
    )


def test_distinct_bytes_agrees_with_what_a_linear_tanh_mlp_keeps() -> None:
    # Per block: the Linear's input and weight.T, the Tanh's output (the next input).
    arrays, parameters = lesson13._saved_by_small_mlp()
    assert len(arrays) == 3 * 3 + 2  # and (h * h) saves h twice
    block_output = 5 * 3 * 4  # float32
    assert lesson13.distinct_bytes(arrays, parameters) == (4 * block_output, 3 * 3 * 3 * 4)


# --------------------------------------------------------------------------- Exercise 13.1


def distinct_bytes(arrays, parameters):
    def owner(array):
        while isinstance(array.base, np.ndarray):
            array = array.base
        return array

    weights = {id(owner(p)) for p in parameters}
    seen, activations, kept_weights = set(), 0, 0
    for array in arrays:
        buffer = owner(array)
        if id(buffer) in seen:
            continue
        seen.add(id(buffer))
        if id(buffer) in weights:
            kept_weights += buffer.nbytes
        else:
            activations += buffer.nbytes
    return activations, kept_weights


def test_13_1_reference_passes(capsys) -> None:
    lesson13.check_13_1(distinct_bytes)
    assert "Exercise 13.1: correct." in capsys.readouterr().out


def test_13_1_the_lessons_reference_passes(capsys) -> None:
    lesson13.check_13_1(lesson13.distinct_bytes)
    assert "correct" in capsys.readouterr().out


def test_13_1_shares_memory_with_identity_list_passes(capsys) -> None:
    # Written differently: a list of owners compared with `is`, np.shares_memory for the
    # weights; floats and a list returned.
    def by_sharing(arrays, parameters):
        owners = []
        for array in arrays:
            while array.base is not None:
                array = array.base
            if not any(array is known for known in owners):
                owners.append(array)
        weight = [o for o in owners if any(np.shares_memory(o, p) for p in parameters)]
        rest = [o for o in owners if not any(o is w for w in weight)]
        return [float(sum(o.nbytes for o in rest)), float(sum(o.nbytes for o in weight))]

    lesson13.check_13_1(by_sharing)
    assert "correct" in capsys.readouterr().out


def _every_reference(arrays, parameters):
    return sum(a.nbytes for a in arrays), 0


def _weights_apart_but_every_reference(arrays, parameters):
    weights = {id(lesson13.owner(p)) for p in parameters}
    act = sum(a.nbytes for a in arrays if id(lesson13.owner(a)) not in weights)
    return act, sum(a.nbytes for a in arrays if id(lesson13.owner(a)) in weights)


def _distinct_objects_no_base(arrays, parameters):
    distinct = {id(a): a for a in arrays}
    return sum(a.nbytes for a in distinct.values()), 0


def _by_value(arrays, parameters):
    kept = []
    for a in arrays:
        if not any(k.shape == a.shape and np.array_equal(k, a) for k in kept):
            kept.append(a)
    return lesson13.distinct_bytes(kept, parameters)


def _view_bytes(arrays, parameters):
    first = {}
    for a in arrays:
        first.setdefault(id(lesson13.owner(a)), a)
    weights = {id(lesson13.owner(p)) for p in parameters}
    return (
        sum(a.nbytes for k, a in first.items() if k not in weights),
        sum(a.nbytes for k, a in first.items() if k in weights),
    )


def _eight_bytes(arrays, parameters):
    owners = {id(b): b for b in map(lesson13.owner, arrays)}
    weights = {id(lesson13.owner(p)) for p in parameters}
    return (
        sum(8 * b.size for k, b in owners.items() if k not in weights),
        sum(8 * b.size for k, b in owners.items() if k in weights),
    )


def _weights_by_identity(arrays, parameters):
    # Follows .base for sharing, but compares the arrays themselves with the parameters.
    weights = {id(p) for p in parameters}
    owners = {}
    for a in arrays:
        owners.setdefault(id(lesson13.owner(a)), (a, lesson13.owner(a)))
    act = sum(o.nbytes for a, o in owners.values() if id(a) not in weights)
    return act, sum(o.nbytes for a, o in owners.values() if id(a) in weights)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            _every_reference,
            r"distinct_bytes\(\[h, h\], \[\]\), one array saved twice, is \(512, 0\), expected "
            r"\(256, 0\): one buffer was counted once per array",
        ),
        (_weights_apart_but_every_reference, "one buffer was counted once per array"),
        (_distinct_objects_no_base, r"\[m, m.T\], \[\]\).* is \(320, 0\).*a view was counted"),
        (_by_value, r"both hold zeros, is \(96, 0\).*equal numbers are still two buffers"),
        (_view_bytes, r"\[big\[:1\]\], \[\]\).* is \(16, 0\).*the view's own `.nbytes`"),
        (_eight_bytes, r"is \(192, 0\), expected \(96, 0\): that is 8 bytes per number"),
        (_weights_by_identity, r"is \(160, 0\).*the weight was counted as an activation"),
        (
            lambda arrays, parameters: (sum(lesson13.distinct_bytes(arrays, parameters)), 0),
            r"what a Linear saves, is \(160, 0\), expected \(64, 96\): the weight was counted",
        ),
        (
            lambda arrays, parameters: (
                lesson13.distinct_bytes(arrays, parameters)[0],
                sum(p.nbytes for p in parameters),
            ),
            r"is \(64, 120\), expected \(64, 96\): that counts every parameter",
        ),
        (
            lambda arrays, parameters: lesson13.distinct_bytes(arrays, parameters)[::-1],
            r"saved twice, is \(0, 256\).*swapped",
        ),
        (
            lambda arrays, parameters: sum(a.nbytes for a in arrays),
            r"distinct_bytes\(\[\], \[\]\) returned an int; return two",
        ),
        (lambda arrays, parameters: (0, 0, 0), "returned 3 values; return two numbers"),
        (lambda arrays, parameters: ("0", 0), "returned a str among its two values"),
        (lambda arrays, parameters: (max(a.nbytes for a in arrays), 0), "start each sum at 0"),
        (
            lambda arrays, parameters: (sum(a.data.base.nbytes for a in arrays), 0),
            r"The arguments are NumPy arrays already",
        ),
        (
            lambda arrays, parameters: (sum(a.nbytes for a in arrays) + 1, 0),
            r"distinct_bytes\(\[\], \[\]\) is \(1, 0\), expected \(0, 0\) \(activation bytes, "
            r"parameter bytes\)\. Count each",
        ),
        ("not a function", "should be a function; got a str"),
    ],
)
def test_13_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_1(answer)


def test_13_1_hidden_data_has_edge_cases() -> None:
    cases = {what: (arrays, parameters) for what, arrays, parameters in lesson13._cases_13_1()}
    assert any(not arrays for arrays, _ in cases.values())  # nothing saved: (0, 0)
    # two buffers with equal numbers: a tie that identity, not value, tells apart
    equal = [a for a, _ in cases.values() if len(a) == 2 and np.array_equal(a[0], a[1])]
    assert any(x is not y for x, y in equal)


def test_13_1_parameter_recognised_by_its_values_is_named() -> None:
    # An activation with exactly a parameter's numbers is still a buffer of its own.
    def parameter_by_value(arrays, parameters):
        owners = {}
        for array in arrays:
            while isinstance(array.base, np.ndarray):
                array = array.base
            owners[id(array)] = array

        def is_parameter(buffer):
            return any(p.shape == buffer.shape and np.array_equal(p, buffer) for p in parameters)

        weights = sum(b.nbytes for b in owners.values() if is_parameter(b))
        return sum(b.nbytes for b in owners.values()) - weights, weights

    with pytest.raises(CheckError, match=r"is \(0, 192\), expected \(96, 96\): an activation "):
        lesson13.check_13_1(parameter_by_value)


def test_13_1_data_pointer_answer_passes(capsys) -> None:
    # Written differently again: owners told apart by the address of their memory.
    def by_address(arrays, parameters):
        def root(array):
            return array.base if isinstance(array.base, np.ndarray) else array

        sizes = {root(a).__array_interface__["data"][0]: root(a).nbytes for a in arrays}
        addresses = {root(p).__array_interface__["data"][0] for p in parameters}
        weights = sum(n for address, n in sizes.items() if address in addresses)
        return sum(sizes.values()) - weights, weights

    lesson13.check_13_1(by_address)
    assert "correct" in capsys.readouterr().out


def test_13_1_hidden_data_has_an_activation_equal_to_a_parameter() -> None:
    ties = [
        (arrays, parameters)
        for _, arrays, parameters in lesson13._cases_13_1()
        if any(
            a is not p and a.shape == p.shape and np.array_equal(a, p)
            for a in arrays
            for p in parameters
        )
    ]
    assert ties


def test_13_1_unwritten_exercise_says_so() -> None:
    def stub(arrays, parameters):
        raise NotImplementedError("Exercise 13.1: write distinct_bytes")

    with pytest.raises(CheckError, match="not written yet"):
        lesson13.check_13_1(stub)


# --------------------------------------------------------------------------- Exercise 13.2


class Checkpoint(minigrad.Function):
    @staticmethod
    def forward(ctx, block, *inputs):
        ctx.block = block
        ctx.save_for_backward(*inputs)
        return block(*inputs)

    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return (None, *[x.grad for x in inputs])


class SavesTheOutputToo(minigrad.Function):
    @staticmethod
    def forward(ctx, block, *inputs):
        ctx.block = block
        output = block(*inputs)
        ctx.save_for_backward(*inputs, output)
        return output

    backward = Checkpoint.backward


class RecordsInForward(minigrad.Function):
    @staticmethod
    def forward(ctx, block, *inputs):
        ctx.block = block
        ctx.save_for_backward(*inputs)
        with minigrad.enable_grad():
            return block(*inputs)

    backward = Checkpoint.backward


class KeepsInputsAsAttribute(minigrad.Function):
    @staticmethod
    def forward(ctx, block, *inputs):
        ctx.block, ctx.inputs = block, inputs
        return block(*inputs)

    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.inputs]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return (None, *[x.grad for x in inputs])


class RecomputesWithoutGraph(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        output = ctx.block(*inputs)  # backward runs under no_grad: no graph
        output.backward(grad_output)
        return (None, *[x.grad for x in inputs])


class ForgetsToDetach(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = ctx.saved_tensors
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return (None, *[x.grad for x in inputs])


class NoNoneForTheBlock(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return tuple(x.grad for x in inputs)


class ReturnsGradOutput(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        return (None, *[grad_output for _ in ctx.saved_tensors])


def test_13_2_reference_passes(capsys) -> None:
    lesson13.check_13_2(Checkpoint)
    assert "Exercise 13.2: correct." in capsys.readouterr().out


def test_13_2_explicit_no_grad_in_forward_passes(capsys) -> None:
    class WithNoGrad(Checkpoint):
        @staticmethod
        def forward(ctx, block, *inputs):
            ctx.block = block
            ctx.save_for_backward(*inputs)
            with minigrad.no_grad():
                return block(*inputs)

    lesson13.check_13_2(WithNoGrad)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (SavesTheOutputToo, r"saved 2 values for backward .* keeps only the block's input"),
        (RecordsInForward, r"saved 4 values .* no `enable_grad\(\)` in forward"),
        (KeepsInputsAsAttribute, "saved nothing with ctx.save_for_backward"),
        (RecomputesWithoutGraph, r"recompute the block, and anything you backpropagate from, "
         r"inside `with minigrad.enable_grad\(\):`"),
        (ForgetsToDetach, r"block 1 was recomputed from its saved input itself.*\*detached\*"),
        (NoNoneForTheBlock, r"return None for it first.*\(None, \*grads\)"),
        (ReturnsGradOutput, "got no gradient: backward must call"),
        (Checkpoint.apply, r"pass the class itself"),
        (lambda block, x: block(x), "should be a class"),
    ],
)
def test_13_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_2(answer)


def test_13_2_forgotten_detach_without_the_warning_gets_the_detach_hint() -> None:
    # retain_grad() silences the non-leaf warning; the inner backward then runs through the
    # graph before the block, which the outer backward reaches again later.
    class RetainsInsteadOfDetaching(Checkpoint):
        @staticmethod
        def backward(ctx, grad_output):
            inputs = ctx.saved_tensors
            for x in inputs:
                x.retain_grad()
            with minigrad.enable_grad():
                output = ctx.block(*inputs)
            output.backward(grad_output)
            return (None, *[x.grad for x in inputs])

    with pytest.raises(CheckError, match=r"second time.*\*detached\* copies"):
        lesson13.check_13_2(RetainsInsteadOfDetaching)


class DetachesWithoutRequiresGrad(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach() for x in ctx.saved_tensors]  # the copies need no gradient
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return (None, *[x.grad for x in inputs])  # None


class RecomputesButReturnsGradOutput(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(grad_output)
        return (None, *[grad_output for _ in inputs])


def test_13_2_input_gradient_none_is_named() -> None:
    with pytest.raises(CheckError, match=r"gradient stops at your Checkpoint.*requires_grad_"):
        lesson13.check_13_2(DetachesWithoutRequiresGrad)


def test_13_2_wrong_input_gradient_is_named_without_array_dumps() -> None:
    with pytest.raises(
        CheckError, match="the gradient your backward returns for the input"
    ) as caught:
        lesson13.check_13_2(RecomputesButReturnsGradOutput)
    assert "[[" not in str(caught.value)


def test_13_2_seeded_by_a_weighted_sum_passes(capsys) -> None:
    # Written differently: fresh leaves, no_grad in forward, (output * grad).sum().backward().
    class WeightedSum(minigrad.Function):
        @staticmethod
        def forward(ctx, block, *inputs):
            ctx.save_for_backward(*inputs)
            ctx.run = block
            with minigrad.no_grad():
                return block(*inputs)

        @staticmethod
        def backward(ctx, grad_output):
            leaves = [
                minigrad.Variable(v.data, requires_grad=v.requires_grad) for v in ctx.saved_tensors
            ]
            with minigrad.enable_grad():
                (ctx.run(*leaves) * grad_output).sum().backward()
            return (None, *[leaf.grad if leaf.requires_grad else None for leaf in leaves])

    lesson13.check_13_2(WeightedSum)
    assert "correct" in capsys.readouterr().out


def test_13_2_unwritten_exercise_says_so() -> None:
    class Stub(minigrad.Function):
        @staticmethod
        def forward(ctx, block, *inputs):
            raise NotImplementedError("Exercise 13.2: write Checkpoint")

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError("Exercise 13.2: write Checkpoint")

    with pytest.raises(CheckError, match="not written yet"):
        lesson13.check_13_2(Stub)


class IgnoresGradOutput(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward(minigrad.ones_like(output))  # a seed of ones, not grad_output
        return (None, *[x.grad for x in inputs])


class ReducesBeforeBackward(Checkpoint):
    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.backward()  # not a scalar: needs a seed
        return (None, *[x.grad for x in inputs])


def test_13_2_backward_ignoring_grad_output_is_named() -> None:
    with pytest.raises(CheckError, match=r"your backward ignores grad_output") as caught:
        lesson13.check_13_2(IgnoresGradOutput)
    assert "output.backward(grad_output)" in str(caught.value)


def test_13_2_backward_without_a_seed_is_told_to_pass_grad_output() -> None:
    with pytest.raises(CheckError, match=r"its backward needs a seed.*backward\(grad_output\)"):
        lesson13.check_13_2(ReducesBeforeBackward)


# --------------------------------------------------------------------------- Exercise 13.3


def bisect(blocks, h):
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    first, second = blocks[:middle], blocks[middle:]
    h = checkpoint(lambda v: bisect(first, v), h)
    return checkpoint(lambda v: bisect(second, v), h)


def predicted_peak(n):
    return int(np.log2(n)) + 2


def _run(blocks, h):
    for block in blocks:
        h = block(h)
    return h


def halves_only(blocks, h):
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    h = checkpoint(lambda v: _run(blocks[:middle], v), h)
    return checkpoint(lambda v: _run(blocks[middle:], v), h)


def no_checkpoint(blocks, h):
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    return no_checkpoint(blocks[middle:], no_checkpoint(blocks[:middle], h))


def around_each_block(blocks, h):
    for block in blocks:
        h = checkpoint(block, h)
    return h


def around_the_whole_too(blocks, h):
    return checkpoint(lambda v: bisect(blocks, v), h)


def sqrt_segments(blocks, h):
    k = max(1, round(len(blocks) ** 0.5))
    for start in range(0, len(blocks), k):
        h = checkpoint(lambda v, s=start: _run(blocks[s : s + k], v), h)
    return h


def test_13_3_reference_passes(capsys) -> None:
    lesson13.check_13_3(bisect, predicted_peak)
    assert "Exercise 13.3: correct." in capsys.readouterr().out


def test_13_3_the_courses_reference_passes(capsys) -> None:
    lesson13.check_13_3(lesson13.bisect, lesson13.bisect_peak)
    assert "correct" in capsys.readouterr().out


def test_13_3_written_differently_passes(capsys) -> None:
    # Written differently: index bounds instead of slices, use_reentrant=True spelled out,
    # and a float prediction through math.log2.
    import math

    from minigrad.utils.checkpoint import checkpoint as ckpt

    def by_index(blocks, h, lo=0, hi=None):
        hi = len(blocks) if hi is None else hi
        if hi - lo == 1:
            return blocks[lo](h)
        mid = lo + (hi - lo) // 2
        h = ckpt(lambda v: by_index(blocks, v, lo, mid), h, use_reentrant=True)
        return ckpt(lambda v: by_index(blocks, v, mid, hi), h, use_reentrant=True)

    lesson13.check_13_3(by_index, lambda n: math.log2(n) + 2.0)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (halves_only, r"on 8 blocks: .* held 6 .* holds 5.*a checkpoint around each half"),
        (no_checkpoint, r"ran 8 times: every block ran once.*no checkpoint was placed"),
        (around_each_block, r"held 9 .*a checkpoint around each block"),
        (around_the_whole_too, r"ran 40 times, at most 32 .*a level of checkpoints too many"),
        (sqrt_segments, r"a flat schedule"),
        (lambda blocks, h: blocks, r"returned a list, not a Variable"),
        (3, r"bisect should be a function"),
    ],
)
def test_13_3_placement_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_3(answer, predicted_peak)


@pytest.mark.parametrize(
    ("prediction", "hint"),
    [
        (lambda n: int(np.log2(n)) + 1, r"predicted_peak\(64\) .* is 7, expected 8: one short"),
        (lambda n: int(np.log2(n)), r"is 6, expected 8: two short"),
        (lambda n: 2 * int(np.log2(n)) + 2, r"is 14, expected 8: the inputs were counted twice"),
        (lambda n: int(np.log2(n)) + 3, r"is 9, expected 8: one too many: the last output"),
        (lambda n: n + 1, r"plain forward's peak"),
        (lambda n: 2 * n**0.5, r"segments of sqrt\(n\) blocks"),
        (lambda n: 8, r"predicted_peak\(32\) \(measured: 7 block outputs\) is 8, expected 7"),
        (lambda n: "log n", r"returned a str; return a number"),
        (lambda n: True, r"returned a bool"),
    ],
)
def test_13_3_prediction_mistakes(prediction, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_3(bisect, prediction)


def test_13_3_bisect_peak_is_what_the_meter_measures() -> None:
    for n in (1, 2, 4, 8, 16):
        assert lesson13.check_schedule("13.3", lesson13.bisect, n, 3, 2, seed=n) == (
            lesson13.bisect_peak(n)
        )


def test_13_3_unwritten_exercise_says_so() -> None:
    def stub(*args):
        raise NotImplementedError("Exercise 13.3: place the checkpoints")

    with pytest.raises(CheckError, match="not written yet"):
        lesson13.check_13_3(stub, stub)


class SumsOutsideEnableGrad(Checkpoint):
    """Recomputes inside enable_grad(), but reduces and backpropagates after the with-block."""

    @staticmethod
    def backward(ctx, grad_output):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with minigrad.enable_grad():
            output = ctx.block(*inputs)
        output.sum().backward()  # .sum() runs with recording off: no graph
        return (None, *[x.grad for x in inputs])


def test_13_2_backward_outside_enable_grad_is_told_where_and_with_which_seed() -> None:
    with pytest.raises(CheckError) as caught:
        lesson13.check_13_2(SumsOutsideEnableGrad)
    message = str(caught.value)
    assert "recompute the block, and anything you backpropagate from, inside" in message
    assert "a `.sum()` taken after the with-block has no graph" in message
    assert "`output.backward(grad_output)`, not with `.sum()`" in message


def non_reentrant(blocks, h):
    """The right placement, with use_reentrant=False checkpoints (which do not nest here)."""
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    first, second = blocks[:middle], blocks[middle:]
    h = checkpoint(lambda v: non_reentrant(first, v), h, use_reentrant=False)
    return checkpoint(lambda v: non_reentrant(second, v), h, use_reentrant=False)


def late_binding(blocks, h):
    """The halves in a loop, each lambda reading the loop variable when it runs."""
    if len(blocks) == 1:
        return blocks[0](h)
    middle = len(blocks) // 2
    for half in (blocks[:middle], blocks[middle:]):
        h = checkpoint(lambda v: late_binding(half, v), h)  # noqa: B023 - the mistake itself
    return h


def whole_chain_with_halves_inside(blocks, h):
    """A checkpoint around each chain, its halves run (plainly) as chains of their own: the
    levels are the whole chain down to pairs, log2 n of them, as many as bisect's."""
    if len(blocks) == 1:
        return blocks[0](h)

    def halves(v):
        middle = len(blocks) // 2
        return whole_chain_with_halves_inside(
            blocks[middle:], whole_chain_with_halves_inside(blocks[:middle], v)
        )

    return checkpoint(halves, h)


def test_13_3_non_reentrant_checkpoints_are_named() -> None:
    with pytest.raises(CheckError) as caught:
        lesson13.check_13_3(non_reentrant, predicted_peak)
    message = str(caught.value)
    assert "use_reentrant=False checkpoints do not nest here" in message
    assert "Use the default (reentrant) `checkpoint(function, h)`" in message
    assert "flat schedule, segments checkpointed once" not in message


def test_13_3_late_binding_lambda_is_named() -> None:
    with pytest.raises(CheckError) as caught:
        lesson13.check_13_3(late_binding, predicted_peak)
    message = str(caught.value)
    assert "block 0 never ran during backward" in message
    assert "the function you checkpointed ran other blocks" in message
    assert "`lambda v, half=half: bisect(half, v)`" in message
    assert "did you forget to `return` it" not in message


def test_13_3_a_checkpoint_around_the_whole_chain_with_halves_inside_passes(capsys) -> None:
    lesson13.check_13_3(whole_chain_with_halves_inside, predicted_peak)
    assert "correct" in capsys.readouterr().out


def test_13_3_messages_do_not_call_a_whole_chain_checkpoint_a_mistake_in_itself() -> None:
    # A checkpoint around the whole chain is fine with checkpointed halves inside; the
    # messages name it only with what makes it wrong.
    assert "a single one around the whole chain, with plain blocks inside" in (
        lesson13.ONE_AROUND_EACH
    )
    assert "whose function checkpoints the halves again" in lesson13.TOO_MANY_RECOMPUTES
    with pytest.raises(CheckError, match="with plain blocks inside"):
        lesson13.check_13_3(lambda blocks, h: checkpoint(lambda v: _run(blocks, v), h),
                            predicted_peak)

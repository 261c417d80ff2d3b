"""Tests of lesson 13's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson13

# --------------------------------------------------------------------------- Exercise 13.1


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


def test_13_1_reference_passes(capsys) -> None:
    lesson13.check_13_1(Checkpoint)
    assert "Exercise 13.1: correct." in capsys.readouterr().out


def test_13_1_explicit_no_grad_in_forward_passes(capsys) -> None:
    class WithNoGrad(Checkpoint):
        @staticmethod
        def forward(ctx, block, *inputs):
            ctx.block = block
            ctx.save_for_backward(*inputs)
            with minigrad.no_grad():
                return block(*inputs)

    lesson13.check_13_1(WithNoGrad)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (SavesTheOutputToo, r"saved 2 values for backward .* keeps only the block's input"),
        (RecordsInForward, r"saved 4 values .* no `enable_grad\(\)` in forward"),
        (KeepsInputsAsAttribute, "saved nothing with ctx.save_for_backward"),
        (RecomputesWithoutGraph, r"recompute the block inside `with minigrad.enable_grad\(\):`"),
        (ForgetsToDetach, r"not a leaf, which is None: you should backpropagate .*\*detached\*"),
        (NoNoneForTheBlock, r"return None for it first.*\(None, \*grads\)"),
        (ReturnsGradOutput, "got no gradient: backward must call"),
        (Checkpoint.apply, r"pass the class itself"),
        (lambda block, x: block(x), "should be a class"),
    ],
)
def test_13_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_1(answer)


def test_13_1_forgotten_detach_without_the_warning_gets_the_detach_hint() -> None:
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
        lesson13.check_13_1(RetainsInsteadOfDetaching)


# --------------------------------------------------------------------------- Exercise 13.2


def _hooks(pack_array, unpack_value, count=lambda half, variable: half.nbytes):
    sizes: list[int] = []

    def pack_half(variable):
        half = variable.data.astype(np.float16)
        sizes.append(count(half, variable))
        return pack_array(half, variable)

    def unpack_half(packed):
        return unpack_value(packed)

    return pack_half, unpack_half, sizes


REFERENCE = (
    lambda half, variable: (half, variable.dtype),
    lambda packed: minigrad.Variable(packed[0].astype(packed[1])),
)


def test_13_2_reference_passes(capsys) -> None:
    lesson13.check_13_2(*_hooks(*REFERENCE))
    assert "Exercise 13.2: correct." in capsys.readouterr().out


def test_13_2_dict_form_passes(capsys) -> None:
    lesson13.check_13_2(
        *_hooks(
            lambda half, variable: {"half": half, "dtype": variable.dtype},
            lambda packed: minigrad.Variable(packed["half"].astype(packed["dtype"])),
        )
    )
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            _hooks(REFERENCE[0], lambda packed: packed[0].astype(packed[1])),
            "returned a NumPy array",
        ),
        (_hooks(REFERENCE[0], lambda packed: packed), "must return a Variable"),
        (_hooks(REFERENCE[0], lambda packed: minigrad.Variable(packed[0])), r"\.astype\(dtype\)"),
        (
            _hooks(REFERENCE[0], lambda packed: minigrad.Variable(packed[0].astype(np.float64))),
            "do not assume float64",
        ),
        (_hooks(lambda half, variable: variable, REFERENCE[1]), "no float16 array"),
        (
            _hooks(*REFERENCE, count=lambda half, variable: variable.data.nbytes),
            "the size of the original",
        ),
        (_hooks(*REFERENCE, count=lambda half, variable: 0), "expected"),
    ],
)
def test_13_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson13.check_13_2(*answer)


def test_13_2_unwritten_exercise_says_so() -> None:
    def pack_half(variable):
        raise NotImplementedError("Exercise 13.2: write pack_half and unpack_half")

    with pytest.raises(CheckError, match="not written yet"):
        lesson13.check_13_2(pack_half, REFERENCE[1], [])


def test_13_1_unwritten_exercise_says_so() -> None:
    class Stub(minigrad.Function):
        @staticmethod
        def forward(ctx, block, *inputs):
            raise NotImplementedError("Exercise 13.1: write Checkpoint")

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError("Exercise 13.1: write Checkpoint")

    with pytest.raises(CheckError, match="not written yet"):
        lesson13.check_13_1(Stub)

"""checkpoint: trade memory for time. Forward keeps only the inputs; backward recomputes.

    y = checkpoint(block, x)       # block(x), but nothing inside block is saved

Forward runs `function(*args)` with recording off, so none of its intermediate values
are kept for backward: only the inputs are. Backward runs `function` again, this time
recording, on copies of the inputs, and backpropagates through that fresh graph: the
parameters used inside get their `.grad` there, the inputs' gradients are returned. The
gradients are the same as without checkpoint (the same operations run on the same
values); the price is one more forward of `function` during backward.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from minigrad import factories
from minigrad.autodiff.engine import backward
from minigrad.autodiff.function import Function, FunctionCtx
from minigrad.autodiff.grad_mode import enable_grad, is_grad_enabled
from minigrad.autodiff.once import once_differentiable
from minigrad.variable import Variable


class CheckpointFunction(Function):
    """outputs = function(*inputs), with only the inputs saved; backward recomputes."""

    @staticmethod
    def forward(ctx: FunctionCtx, function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        ctx.function = function
        # Random operations inside (dropout) must draw the same numbers when recomputed.
        ctx.rng_state = factories._generator.bit_generator.state if preserve_rng_state else None
        ctx.save_for_backward(*args)
        outputs = function(*args)
        if not isinstance(outputs, (Variable, tuple)):
            raise TypeError(
                f"checkpoint: the function must return a Variable or a tuple of them; it "
                f"returned {type(outputs).__name__}."
            )
        return outputs

    @staticmethod
    @once_differentiable  # the recomputation's own backward is not recorded
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> tuple:
        inputs = ctx.saved_tensors
        # Fresh leaves over the same data: the recomputed graph ends at them.
        leaves = [_leaf_like(value) for value in inputs]
        current = factories._generator.bit_generator.state
        if ctx.rng_state is not None:
            factories._generator.bit_generator.state = ctx.rng_state
        try:
            with enable_grad():
                outputs = ctx.function(*leaves)
        finally:
            factories._generator.bit_generator.state = current
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [
            (output, grad)
            for output, grad in zip(outputs, grad_outputs)
            if isinstance(output, Variable) and output.requires_grad and grad is not None
        ]
        if pairs:
            backward([output for output, _ in pairs], [grad for _, grad in pairs])
        grads = [
            leaf.grad if isinstance(leaf, Variable) and leaf.requires_grad else None
            for leaf in leaves
        ]
        return (None, None, *grads)


def _leaf_like(value: Any) -> Any:
    if not isinstance(value, Variable):
        return value
    leaf = value.detach()
    leaf.requires_grad = value.requires_grad
    return leaf


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args)` without keeping its intermediate values; backward recomputes them.

    minigrad has one implementation, PyTorch's reentrant variant: the recompute runs inside
    the backward pass, once (no double backward through it); `grad()` reaches the Variables
    passed in `args`, and parameters used inside `function` get their `.grad` from
    `backward()`. When no input requires grad the output has no history: a warning says so,
    and with `use_reentrant=False` the function simply runs unchanged, so the parameters
    still get gradients (as PyTorch's non-reentrant variant gives them). Keyword arguments
    are passed on to `function`."""
    if not callable(function):
        raise TypeError(f"checkpoint needs a function first; got {type(function).__name__}.")
    if kwargs:  # passed on to function, as PyTorch does
        function = functools.partial(function, **kwargs)
    needs_grad = any(isinstance(arg, Variable) and arg.requires_grad for arg in args)
    if is_grad_enabled() and not needs_grad and use_reentrant is False:
        # PyTorch's non-reentrant variant still gives the parameters inside a gradient:
        # run the function as it is (correct gradients, no memory saved).
        return function(*args)
    if is_grad_enabled() and not needs_grad:
        # As PyTorch warns: the output then has no history, so the parameters used
        # inside would silently get no gradient.
        warnings.warn(
            "checkpoint: none of the inputs requires grad, so the output has no history and "
            "the parameters inside get no gradient. Pass an input that requires grad, or "
            "call the function directly.",
            UserWarning,
            stacklevel=2,
        )
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,  # noqa: A002 (PyTorch's name for it)
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
) -> Any:
    """Run `functions` (an nn.Sequential, or a list of modules or functions) one after
    another on `input`, in `segments` pieces: every piece but the last under checkpoint()
    (its intermediate values recomputed in backward), the last one as it is."""
    if hasattr(functions, "children"):
        functions = list(functions.children())
    else:
        functions = list(functions)
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be an int >= 1; got {segments!r}.")
    if not functions:
        raise ValueError("checkpoint_sequential needs at least one function to run.")
    size = len(functions) // segments
    value = input
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        piece = functools.partial(_run_in_order, functions[start:end])
        value = checkpoint(
            piece, value, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state
        )
    return _run_in_order(functions[end:], value)


def _run_in_order(functions: list, value: Any) -> Any:
    for function in functions:
        value = function(value)
    return value

"""checkpoint: trade memory for time. Forward keeps only the inputs; backward recomputes.

    y = checkpoint(block, x, use_reentrant=False)   # block(x), nothing inside is kept

Two ways, as PyTorch has them:

- Non-reentrant (`use_reentrant=False`, the one PyTorch recommends): forward records
  `function(*args)` as usual, but under saved-tensor hooks whose pack hook keeps a number
  in place of each value an op saves for backward, so the intermediate values are freed
  as soon as forward is done with them. The first time backward needs one, the unpack
  hook runs `function` again (same inputs, same random numbers), this time keeping what
  it saves, and hands out the values by their numbers. Parameters inside get gradients
  even when no input requires grad, and `grad()` works as without checkpoint.
- Reentrant (`use_reentrant=True` or None): forward runs `function` with recording off,
  inside one CheckpointFunction; its backward runs `function` again, recording, on copies
  of the inputs, and backpropagates through that fresh graph.

Either way the gradients are those without checkpoint (the same operations run on the
same values); the price is one more forward of `function` during backward.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from minigrad import factories
from minigrad.core.checks import check_callable, check_flag, check_iterable
from minigrad.core.engine import backward
from minigrad.core.function import Function, FunctionCtx, once_differentiable, saved_tensors_hooks
from minigrad.core.grad_mode import enable_grad, is_grad_enabled
from minigrad.core.variable import Variable


class CheckpointFunction(Function):
    """outputs = function(*inputs), with only the inputs saved; backward recomputes."""

    @staticmethod
    def forward(ctx: FunctionCtx, function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        ctx.function = function
        # Random operations inside (dropout) must draw the same numbers when recomputed.
        ctx.rng_state = factories._generator.bit_generator.state if preserve_rng_state else None
        # save_for_backward takes Variables only: other arguments (flags, sizes) stay on ctx.
        ctx.arguments = [None if isinstance(value, Variable) else value for value in args]
        ctx.save_for_backward(*(value if isinstance(value, Variable) else None for value in args))
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
        saved = ctx.saved_tensors
        inputs = [kept if value is None else value for value, kept in zip(saved, ctx.arguments)]
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


class Recomputation:
    """The values one non-reentrant checkpoint saves for backward: numbers in forward,
    made again, all at once, the first time backward asks for one."""

    def __init__(self, function: Callable, args: tuple, preserve_rng_state: bool) -> None:
        self.function, self.args = function, args
        self.rng_state = factories._generator.bit_generator.state if preserve_rng_state else None
        self.packed = 0
        self.values: list | None = None

    def hooks(self) -> saved_tensors_hooks:
        return saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, variable: Variable) -> int:
        """Forward: keep the value's number, not the value."""
        self.packed += 1
        return self.packed - 1

    def unpack(self, number: int) -> Variable:
        if self.values is None:
            self.values = self.recompute()
        return self.values[number]

    def recompute(self) -> list:
        """Run function again as forward ran it, keeping each value it saves, in order."""
        values: list = []

        def keep(variable: Variable) -> Variable:
            values.append(variable)
            return variable

        current = factories._generator.bit_generator.state
        if self.rng_state is not None:
            factories._generator.bit_generator.state = self.rng_state
        try:
            with enable_grad(), saved_tensors_hooks(keep, _same):
                self.function(*self.args)
        finally:
            factories._generator.bit_generator.state = current
        if len(values) != self.packed:
            raise RuntimeError(
                f"checkpoint: recomputing the function saved {len(values)} values for "
                f"backward, but forward saved {self.packed}; the function must run the "
                f"same operations each time (no branching on global state that changed)."
            )
        return values


def _same(variable: Variable) -> Variable:
    return variable


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args)` without keeping its intermediate values; backward recomputes them.

    `use_reentrant=False` (PyTorch's recommended variant): saved-tensor hooks, see above.
    `use_reentrant=True` or None: the recompute runs inside the backward pass, once (no
    double backward through it); `grad()` reaches the Variables passed in `args`, and
    parameters used inside `function` get their `.grad` from `backward()`; when no input
    requires grad the output has no history, and a warning says so. Keyword arguments are
    passed on to `function`."""
    if not callable(function):
        raise TypeError(f"checkpoint needs a function first; got {type(function).__name__}.")
    if use_reentrant is not None:
        check_flag(use_reentrant, "use_reentrant", "checkpoint")
    check_flag(preserve_rng_state, "preserve_rng_state", "checkpoint")
    if kwargs:  # passed on to function, as PyTorch does
        function = functools.partial(function, **kwargs)
    if use_reentrant is False:
        if not is_grad_enabled():
            return function(*args)  # nothing is saved for backward anyway
        recomputation = Recomputation(function, args, preserve_rng_state)
        with recomputation.hooks():
            return function(*args)
    needs_grad = any(isinstance(arg, Variable) and arg.requires_grad for arg in args)
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
        functions = check_iterable(
            functions, "functions", "checkpoint_sequential", "modules or functions"
        )
    for index, function in enumerate(functions):
        check_callable(function, f"functions[{index}]", "checkpoint_sequential",
                       "a module or a function of one Variable")  # fmt: skip
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

"""Module hooks: functions called around a Module's forward, and on the gradients of its
inputs and outputs during backward, as PyTorch's `register_forward_hook` and friends.

A module keeps its hooks in `module._hooks`, a dict made at its first registration:
kind → list of HookEntry, in the order they run. Module.__call__ checks that dict (and
the global hooks here) and goes straight to forward when both are empty, so a model
without hooks pays one test per call.

Around one call, with hooks:

    pre-hooks(module, args) → may replace args
    [backward hooks: the inputs that require grad pass through BackwardHookFunction]
    output = forward(*args, **kwargs)
    hooks(module, args, output) → may replace output
    [backward hooks: the output Variables pass through BackwardHookFunction]

During backward, the Function on the outputs sees grad_output (the gradients of the
outputs) and runs the backward pre-hooks; the Function on the inputs sees grad_input (the
gradients of the positional inputs) and runs the full backward hooks with both.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from minigrad.core.checks import check_callable, check_flag
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import state
from minigrad.core.variable import RemovableHandle, Variable

FORWARD_PRE = "forward_pre"
FORWARD = "forward"
BACKWARD_PRE = "backward_pre"
BACKWARD = "backward"

# Hooks every Module runs (register_module_forward_hook and friends): kind → entries.
# Mutated in place only, so that module.py's reference to it stays the live one.
GLOBAL_HOOKS: dict[str, list[HookEntry]] = {}


class HookEntry:
    """One registered hook and how to call it."""

    __slots__ = ("hook", "with_kwargs", "always_call")

    def __init__(self, hook: Callable, with_kwargs: bool = False, always_call: bool = False):
        self.hook = hook
        self.with_kwargs = with_kwargs
        self.always_call = always_call


def add_hook(
    table: dict[str, list[HookEntry]],
    kind: str,
    entry: HookEntry,
    prepend: bool,
    where: str,
) -> RemovableHandle:
    """Put `entry` first (prepend) or last among the hooks of `kind`; the handle removes it,
    and drops the list once empty, so that an emptied table means no hooks again."""
    check_callable(entry.hook, "hook", where, "a function")
    prepend = check_flag(prepend, "prepend", where)
    entries = table.setdefault(kind, [])
    if prepend:
        entries.insert(0, entry)
    else:
        entries.append(entry)
    return RemovableHandle(entries, entry, table, kind)


def _entries(module: Any, kind: str) -> list[HookEntry]:
    """The global hooks of `kind`, then the module's own (PyTorch's order)."""
    own = (module._hooks or {}).get(kind, ())
    return [*GLOBAL_HOOKS.get(kind, ()), *own]


# --------------------------------------------------------------------------- forward


def call_with_hooks(module: Any, forward: Callable, args: tuple, kwargs: dict) -> Any:
    """module(*args, **kwargs) with its hooks: pre-hooks, forward, forward hooks, and the
    backward hooks set up on the inputs and the output."""
    # A replay of minigrad.compile would not call Python hooks: such a step stays eager.
    state.listener.unsupported(
        f"a hook on {type(module).__name__} (a Module's forward or backward hook: a replay "
        f"would not call it)"
    )
    result = None
    called = set()  # the always_call hooks already run
    try:
        args, kwargs = _run_pre_hooks(module, args, kwargs)
        backward_hooks = _entries(module, BACKWARD)
        backward_pre_hooks = _entries(module, BACKWARD_PRE)
        call = None
        if backward_hooks or backward_pre_hooks:
            call = BackwardHookCall(module, backward_hooks, backward_pre_hooks)
            args = call.wrap_inputs(args)
        result = forward(*args, **kwargs)
        for entry in _entries(module, FORWARD):
            if entry.always_call:
                called.add(id(entry))
            replaced = _run_forward_hook(entry, module, args, kwargs, result)
            if replaced is not None:
                result = replaced
        if call is not None:
            result = call.wrap_outputs(result)
        return result
    except Exception:
        # As PyTorch: hooks registered with always_call=True run even when forward (or an
        # earlier hook) raised; their own errors are only warned about, and the first error
        # goes on.
        for entry in _entries(module, FORWARD):
            if entry.always_call and id(entry) not in called:
                try:
                    _run_forward_hook(entry, module, args, kwargs, result)
                except Exception as error:  # noqa: BLE001 (the first error wins)
                    warnings.warn(
                        f"module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {error}",
                        stacklevel=2,
                    )
        raise


def _run_pre_hooks(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The forward pre-hooks, in order; each may replace args (and, with_kwargs, kwargs)."""
    for entry in _entries(module, FORWARD_PRE):
        if entry.with_kwargs:
            returned = entry.hook(module, args, kwargs)
            if returned is None:
                continue
            if not (isinstance(returned, tuple) and len(returned) == 2):
                raise RuntimeError(
                    f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                    f"but got {returned!r}. (A hook registered with with_kwargs=True replaces "
                    f"both.)"
                )
            args, kwargs = returned
            if not isinstance(kwargs, Mapping):
                raise TypeError(
                    f"a forward pre-hook registered with with_kwargs=True returned (args, "
                    f"kwargs) with a {type(kwargs).__name__} as kwargs; return a dict there "
                    f"(the kwargs it was given, changed or not)."
                )
        else:
            returned = entry.hook(module, args)
            if returned is None:
                continue
            # A single value is the one positional argument, as PyTorch takes it.
            args = returned if isinstance(returned, tuple) else (returned,)
    return args, kwargs


def _run_forward_hook(
    entry: HookEntry, module: Any, args: tuple, kwargs: dict, result: Any
) -> Any:
    if entry.with_kwargs:
        return entry.hook(module, args, kwargs, result)
    return entry.hook(module, args, result)


# --------------------------------------------------------------------------- backward


class BackwardHookFunction(Function):
    """Identity on the Variables it is given; its backward hands their gradients to
    `callback`, which returns the gradients to pass on (changed by hooks, or not). With
    materialize=False a Variable that got no gradient shows as None, else as zeros.

    The node is named BackwardHookFunctionBackward, as PyTorch's."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, callback: Callable, materialize: bool, *variables: Variable
    ) -> tuple:
        ctx.set_materialize_grads(materialize)
        ctx.callback = callback
        return variables

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> tuple:
        return (None, None, *ctx.callback(grads))


def _positions_of_variables(values: tuple) -> list[int]:
    """Where the Variables are in a tuple of arguments or outputs, when one of them requires
    grad (and grad mode is on); else none: there is no backward to follow."""
    positions = [index for index, value in enumerate(values) if isinstance(value, Variable)]
    if not state.grad_enabled or not any(values[i].requires_grad for i in positions):
        return []
    return positions


class BackwardHookCall:
    """The backward hooks of one call of a module: they see the gradients of that call's
    positional inputs (grad_input) and of its outputs (grad_output), each a tuple with one
    entry per input or output: None where it is not a Variable; for an input that got no
    gradient zeros, for such an output None (PyTorch's choices)."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.input_count = 0
        self.input_positions: list[int] | None = None  # None: no input is followed
        self.output_count = 0
        self.output_positions: list[int] = []
        self.grad_outputs: tuple | None = None  # set when the outputs' gradients arrive

    def wrap_inputs(self, args: tuple) -> tuple:
        """args with each Variable that requires grad replaced by its pass-through."""
        self.input_count = len(args)
        positions = _positions_of_variables(args)
        if not positions:
            return args
        self.input_positions = positions
        # As PyTorch, an input that got no gradient shows as zeros in grad_input.
        variables = (args[i] for i in positions)
        passed = BackwardHookFunction.apply(self._on_input_grads, True, *variables)
        return _placed(args, positions, passed)

    def wrap_outputs(self, result: Any) -> Any:
        """The output, with its Variables (one, or those of a tuple) passed through."""
        single = isinstance(result, Variable)
        if not single and not isinstance(result, tuple):
            warnings.warn(
                f"For backward hooks to be called, module output should be a Variable or a "
                f"tuple of Variables but received {type(result).__name__}.",
                stacklevel=3,
            )
            return result
        outputs = (result,) if single else result
        self.output_count = len(outputs)
        positions = _positions_of_variables(outputs)
        if not positions:
            return result
        self.output_positions = positions
        # An output that got no gradient shows as None in grad_output, as in PyTorch.
        variables = (outputs[i] for i in positions)
        passed = BackwardHookFunction.apply(self._on_output_grads, False, *variables)
        outputs = _placed(outputs, positions, passed)
        return outputs[0] if single else outputs

    def _on_output_grads(self, grads: tuple) -> tuple:
        """The outputs' gradients: backward pre-hooks may replace them; with no input to
        follow, the backward hooks run now, with grad_input all None."""
        grad_outputs = _spread(grads, self.output_positions, self.output_count)
        for entry in self.pre_hooks:
            returned = entry.hook(self.module, grad_outputs)
            if returned is None:
                continue
            returned = _as_tuple(returned)
            if len(returned) != len(grad_outputs):
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(returned)}, but expected {len(grad_outputs)}: return one gradient "
                    f"(or None) per output of {type(self.module).__name__}."
                )
            grad_outputs = returned
        if self.input_positions is None:
            grad_inputs = (None,) * self.input_count
            if self.hooks:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients: grad_input is all None.",
                    stacklevel=2,
                )
            for entry in self.hooks:
                returned = entry.hook(self.module, grad_inputs, grad_outputs)
                if returned is not None and not all(g is None for g in _as_tuple(returned)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
        else:
            self.grad_outputs = grad_outputs
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _on_input_grads(self, grads: tuple) -> tuple:
        """The inputs' gradients: the backward hooks see them with grad_output, and may
        return new ones."""
        if self.grad_outputs is None:  # the outputs got no gradient: the hooks never run
            return grads
        grad_inputs = _spread(grads, self.input_positions, self.input_count)
        for entry in self.hooks:
            returned = entry.hook(self.module, grad_inputs, self.grad_outputs)
            if returned is None:
                continue
            returned = _as_tuple(returned)
            if len(returned) != len(grad_inputs):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got "
                    f"{len(returned)}, but expected {len(grad_inputs)}: return one gradient "
                    f"(or None) per positional input of {type(self.module).__name__}."
                )
            grad_inputs = returned
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_positions)


def _placed(values: tuple, positions: list[int], replacements: tuple) -> tuple:
    """values with values[positions[k]] replaced by replacements[k]."""
    placed = list(values)
    for position, replacement in zip(positions, replacements):
        placed[position] = replacement
    return tuple(placed)


def _spread(grads: tuple, positions: list[int], count: int) -> tuple:
    """A tuple of `count` entries: grads at `positions`, None elsewhere."""
    spread: list[Any] = [None] * count
    for position, grad in zip(positions, grads):
        spread[position] = grad
    return tuple(spread)


def _as_tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


# --------------------------------------------------------------------------- global hooks


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, args) before every Module's forward; it may return new args."""
    where = "register_module_forward_pre_hook"
    return add_hook(GLOBAL_HOOKS, FORWARD_PRE, HookEntry(hook), False, where)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """hook(module, args, output) after every Module's forward; it may return a new output."""
    where = "register_module_forward_hook"
    with_kwargs = check_flag(with_kwargs, "with_kwargs", where)
    always_call = check_flag(always_call, "always_call", where)
    return add_hook(GLOBAL_HOOKS, FORWARD, HookEntry(hook, with_kwargs, always_call), False, where)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_output) when the gradients of any Module's outputs are computed."""
    where = "register_module_full_backward_pre_hook"
    return add_hook(GLOBAL_HOOKS, BACKWARD_PRE, HookEntry(hook), False, where)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_input, grad_output) when the gradients of any Module's inputs are
    computed."""
    where = "register_module_full_backward_hook"
    return add_hook(GLOBAL_HOOKS, BACKWARD, HookEntry(hook), False, where)

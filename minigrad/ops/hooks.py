"""`x.register_post_accumulate_grad_hook(hook)`: call hook(x) once backward has added this
backward's gradient into the leaf's `.grad`.

PyTorch's tutorial on fusing the optimizer step into the backward pass uses it: each
parameter is updated (and its .grad freed) as soon as its gradient is complete, instead of
keeping every gradient until `optimizer.step()`. The hooks live on the leaf's
AccumulateGrad node, which the engine (core/engine.py) calls after accumulating.
"""

from __future__ import annotations

from collections.abc import Callable

from minigrad.core.grad_mode import state
from minigrad.core.variable import RemovableHandle, Variable
from minigrad.ops.table import register


class PostAccumulateGradHooks:
    """The hooks of one leaf, in the order registered; called as hooks(leaf)."""

    def __init__(self) -> None:
        self.hooks: list[Callable[[Variable], None]] = []

    def __bool__(self) -> bool:
        return bool(self.hooks)  # the engine calls only a leaf that still has some

    def __call__(self, leaf: Variable) -> None:
        # A replay of a compiled step would not call Python hooks: say so, as for register_hook.
        state.listener.unsupported(
            "post accumulate grad hooks (a replay would not call them); take them out of the "
            "compiled step"
        )
        for hook in list(self.hooks):
            returned = hook(leaf)
            if returned is not None:
                raise RuntimeError(
                    f"Tensor post accumulate grad hooks should return None; "
                    f"{getattr(hook, '__name__', 'a hook')} returned {type(returned).__name__}. "
                    f"Work through the argument (param.grad, an optimizer step) instead."
                )


@register("register_post_accumulate_grad_hook", function=False)
def register_post_accumulate_grad_hook(
    x: Variable, hook: Callable[[Variable], None]
) -> RemovableHandle:
    """Call `hook(x)` after each backward has accumulated x's gradient into `x.grad`
    (leaves only); returns a handle whose `.remove()` takes the hook away."""
    if not x.requires_grad:
        raise RuntimeError(
            "cannot register a hook on a Variable that doesn't require gradient; set "
            "requires_grad=True on the leaf first."
        )
    if x.grad_fn is not None:
        raise RuntimeError(
            "post accumulate grad hooks cannot be registered on non-leaf Variables: only a "
            "leaf's .grad is accumulated. Register it on the leaf (a parameter), or use "
            "register_hook(hook) to see a non-leaf's gradient."
        )
    if not callable(hook):
        raise TypeError(
            f"register_post_accumulate_grad_hook expects a function hook(param) -> None; got "
            f"{type(hook).__name__}."
        )
    node = x._accumulator()
    if node._post_hooks is None:
        node._post_hooks = PostAccumulateGradHooks()
    node._post_hooks.hooks.append(hook)
    return RemovableHandle(node._post_hooks.hooks, hook)

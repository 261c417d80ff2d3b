"""PyTorch's torch.func: function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
vmap) and a Module as a function of its state (functional_call, stack_module_state).

    from minigrad.func import grad, vmap, functional_call
    per_sample_grads = vmap(grad(loss_of_one_example), in_dims=(None, 0, 0))

Reverse mode: reverse.py; forward mode: forward.py; whole Jacobians: jacobians.py;
mapping over a batch: vmap.py (a loop, one call per element); how transforms nest:
levels.py; nested arguments and results: pytree.py.
"""

from typing import Any

from minigrad.core.errors import missing_name
from minigrad.func.forward import jvp, linearize
from minigrad.func.functional_call import functional_call, stack_module_state
from minigrad.func.jacobians import hessian, jacfwd, jacrev
from minigrad.func.reverse import grad, grad_and_value, vjp
from minigrad.func.vmap import vmap


def __getattr__(name: str) -> Any:
    # A torch.func name minigrad lacks (functionalize, ...): say so, with the nearest one.
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise missing_name("torch.func", name, __all__)


__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "stack_module_state",
    "vjp",
    "vmap",
]

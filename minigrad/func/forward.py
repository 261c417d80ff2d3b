"""The forward-mode transforms of torch.func: jvp and linearize.

    jvp(f, (x,), (v,)) -> (f(x), J v)      the derivative of f at x in the direction v

jvp runs f once on dual numbers (minigrad/autodiff/forward_ad.py): each Variable carries a
tangent beside its value, pushed through every operation. Two cases take another road to
the same numbers, the "double-vjp trick": g(u) = uᵀ J is linear in u, so J v = ∂/∂u <g(u), v>,
two reverse passes.

- A jvp inside another (jacfwd(jacfwd(f)), a Hessian forward-over-forward): minigrad has
  one dual level, and the outer one is open. It carries its tangents through both passes.
- A jvp whose result something will differentiate (jacrev(jacfwd(f)), grad of a jvp, an
  input that requires grad): forward mode gives the right tangents, but for an operation
  without a JVP rule of its own (softmax, log_softmax, ...) one that is cut from the
  primal's graph, so its derivative would be silently wrong. When only the run shows it
  (f uses a Variable of the caller's that requires grad), f runs a second time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minigrad.autodiff import forward_ad
from minigrad.core.checks import check_callable
from minigrad.core.engine import grad as engine_grad
from minigrad.core.grad_mode import QUIET, enable_grad, state
from minigrad.core.variable import Variable
from minigrad.factories import zeros_like
from minigrad.func.arguments import check_tensors, split_aux
from minigrad.func.levels import (
    depth,
    differentiable,
    graph_needed,
    level,
    made_leaf,
    plain_unless,
)
from minigrad.func.pytree import TreeSpec, tree_flatten, tree_leaves, tree_map, tree_unflatten

_WHERE = "jvp(f, primals, tangents)"


def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """(func(*primals), J·tangents): tangents nested like primals (a tuple), each of its
    primal's shape; the result's tangents are nested like func's output. With has_aux,
    func returns (output, aux) and this returns (output, jvp_out, aux). `strict` is
    accepted for PyTorch's sake and changes nothing."""
    check_callable(func, "func", "jvp", "a function of the primals")
    primal_leaves, tangent_leaves, spec = checked_primals(primals, tangents)
    with enable_grad(), level():
        result = None
        if _dual_numbers_will_do(primal_leaves, tangent_leaves):
            result = _by_dual_numbers(func, primal_leaves, tangent_leaves, spec, has_aux)
            if graph_needed(_leaves_of(result)):  # func reached a Variable of the caller's
                result = None
        if result is None:
            result = _by_two_vjps(func, primal_leaves, tangent_leaves, spec, has_aux)
        outputs, out_tangents, output, aux = result
        keep = graph_needed(_leaves_of(result))
        keep_aux = graph_needed(tree_leaves(aux))
    out_spec = tree_flatten(output)[1]
    primal_out = plain_unless(keep, tree_unflatten(outputs, out_spec))
    tangent_out = plain_unless(keep, tree_unflatten(out_tangents, out_spec))
    if has_aux:
        return primal_out, tangent_out, plain_unless(keep_aux, aux)
    return primal_out, tangent_out


def _dual_numbers_will_do(primals: list, tangents: list) -> bool:
    """Whether forward mode (dual numbers) computes this jvp: no dual level is open yet, and
    nothing will differentiate the result (no enclosing transform, no input that requires
    grad). minigrad's forward mode gives the right tangents, but for an operation without a
    JVP rule of its own (softmax, ...) a tangent that is not differentiable with respect to
    the primal; two reverse passes give one that is."""
    if state.listener is not QUIET or depth() > 1:
        return False
    return not any(leaf.requires_grad for leaf in (*primals, *tangents))


def _leaves_of(result: tuple) -> list:
    """The outputs and their tangents (aux is neither differentiated nor a tangent)."""
    outputs, out_tangents, _, _ = result
    return [*outputs, *out_tangents]


def checked_primals(primals: Any, tangents: Any) -> tuple[list, list, TreeSpec]:
    """(primal leaves, tangent leaves, the primals' spec), after PyTorch's checks."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_WHERE}: Expected primals to be a tuple. E.g. it should be valid to call "
            f"f(*primals). Got {type(primals)}; for one input write (x,)."
        )
    primal_leaves, spec = tree_flatten(primals)
    tangent_leaves, tangent_spec = tree_flatten(tangents)
    if tangent_spec != spec:
        raise RuntimeError(
            f"{_WHERE}: Expected primals and tangents to have the same python structure. For "
            f"example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec!r} and tangents with structure {tangent_spec!r}"
        )
    if not primal_leaves:
        raise RuntimeError(
            f"{_WHERE}: Expected primals to contain at least one Tensor: give the point to "
            f"differentiate at, e.g. (x,)."
        )
    for kind, leaves in (("primal", primal_leaves), ("tangent", tangent_leaves)):
        for leaf in leaves:
            if not isinstance(leaf, Variable) or leaf.is_text:
                raise RuntimeError(
                    f"{_WHERE}: Expected {kind}s to only contain Tensors, got {type(leaf)}. "
                    f"Wrap numbers with minigrad.tensor(...)."
                )
            if not leaf.is_floating_point():
                raise ValueError(
                    f"Expected {kind} to be floating point or complex, but got: {leaf.dtype}. "
                    f"Convert it first, e.g. with .double()."
                )
    for primal, tangent in zip(primal_leaves, tangent_leaves):
        if tuple(primal.shape) != tuple(tangent.shape):
            raise RuntimeError(
                f"Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size "
                f"{list(primal.shape)} while the given forward gradient is of size "
                f"{list(tangent.shape)}. Give each tangent its primal's shape."
            )
    return primal_leaves, tangent_leaves, spec


def _outputs_of(output: Any, has_aux: bool) -> tuple[Any, Any, list]:
    output, aux = split_aux(output, has_aux, _WHERE)
    outputs = check_tensors(output, f"{_WHERE}: expected f(*primals) to return only tensors")
    if has_aux:
        check_tensors(aux, "Expected tensors")
    return output, aux, outputs


def _by_dual_numbers(
    func: Callable, primals: list, tangents: list, spec: TreeSpec, has_aux: bool
) -> tuple:
    """One forward pass on dual numbers: (outputs, their tangents, output, aux)."""
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(primals, tangents)]
        output, aux, outputs = _outputs_of(func(*tree_unflatten(duals, spec)), has_aux)
        unpacked = [forward_ad.unpack_dual(out) for out in outputs]
    values = [u.primal for u in unpacked]
    out_tangents = [
        zeros_like(out) if u.tangent is None else u.tangent for u, out in zip(unpacked, outputs)
    ]
    return values, out_tangents, output, aux


def _by_two_vjps(
    func: Callable, primals: list, tangents: list, spec: TreeSpec, has_aux: bool
) -> tuple:
    """J v by reverse mode twice: g(u) = uᵀJ for a placeholder u, then ∂<g(u), v>/∂u."""
    inner = [differentiable(p) for p in primals]
    output, aux, outputs = _outputs_of(func(*tree_unflatten(inner, spec)), has_aux)
    moving = [k for k, out in enumerate(outputs) if out.requires_grad]
    out_tangents: list = [None] * len(outputs)
    if moving:
        placeholders = [made_leaf(zeros_like(outputs[k]).requires_grad_()) for k in moving]
        pulled = engine_grad([outputs[k] for k in moving], inner, placeholders,
                             create_graph=True, allow_unused=True)  # fmt: skip
        terms = [(g * t).sum() for g, t in zip(pulled, tangents) if g is not None]
        total = _sum_of(terms)
        if total is not None and total.requires_grad:
            pushed = engine_grad(total, placeholders, create_graph=True, allow_unused=True)
            for k, value in zip(moving, pushed):
                out_tangents[k] = value
    out_tangents = [zeros_like(out) if t is None else t for t, out in zip(out_tangents, outputs)]
    return list(outputs), out_tangents, output, aux


def _sum_of(terms: list) -> Variable | None:
    """t₀ + t₁ + ... (None for no terms; Python's sum would start from the number 0)."""
    total = None
    for term in terms:
        total = term if total is None else total + term
    return total


def linearize(func: Callable, *primals: Any) -> tuple:
    """(func(*primals), jvp_fn) with jvp_fn(*tangents) = J·tangents at primals.

    PyTorch traces func once and replays the linear part; minigrad's jvp_fn runs jvp
    again on each call (the same numbers, func's cost each time)."""
    check_callable(func, "func", "linearize", "a function of the primals")
    output, _ = jvp(func, primals, tree_map(_zeros_of, primals))

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def _zeros_of(leaf: Any) -> Any:
    return zeros_like(leaf) if isinstance(leaf, Variable) else leaf


__all__ = ["checked_primals", "jvp", "linearize"]

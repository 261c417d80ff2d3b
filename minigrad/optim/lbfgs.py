"""L-BFGS: a quasi-Newton method that steps along -H·g, H an estimate of the inverse Hessian
built from the last `history_size` pairs (s = change of the parameters, y = change of the
gradient), as PyTorch's torch.optim.LBFGS does it (after minFunc).

All parameters are treated as one flat vector. One `step(closure)` runs up to `max_iter`
iterations, each calling the closure (zero the gradients, compute the loss, backward,
return the loss) once, or a few times with the strong-Wolfe line search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from minigrad.core.checks import check_callable, check_flag
from minigrad.core.grad_mode import enable_grad
from minigrad.core.variable import Variable
from minigrad.optim.optimizer import Optimizer, check_hyperparameter


class LBFGS(Optimizer):
    """Each iteration: d = -H·g by the two-loop recursion over the stored (s, y) pairs
    (H = γ·I at the start, γ = sᵀy / yᵀy of the newest pair), then x ← x + t·d, with
    t = lr (t = lr·min(1, 1/‖g‖₁) at the very first iteration) or t from a line search
    satisfying the strong Wolfe conditions. It stops when max|g| <= tolerance_grad, when
    a step or the change of the loss is under tolerance_change, or at max_iter / max_eval.
    Only one parameter group (PyTorch's restriction)."""

    # The state (flat directions, the history) is kept for all parameters together, under
    # position 0; its arrays have the flat length, not a parameter's shape.
    state_per_parameter = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        if max_eval is None and isinstance(max_iter, int):
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
            "maximize": maximize,
        }
        # The parameters are checked first, then the settings (PyTorch checks only lr).
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError(
                f"LBFGS doesn't support per-parameter options (parameter groups): it treats "
                f"all parameters as one vector; got {len(self.param_groups)} groups. Pass "
                f"the parameters in one list."
            )
        group = self.param_groups[0]
        for name in ("max_iter", "max_eval", "history_size"):
            _count(name, group[name])
        for name in ("tolerance_grad", "tolerance_change"):
            check_hyperparameter(name, group[name])
        check_flag(group["maximize"], "maximize", "LBFGS")
        self._params = group["params"]

    def _flat_grad(self) -> np.ndarray:
        """The gradients of all parameters as one vector (zeros for a parameter without
        one); negated with maximize, so that the method always descends."""
        pieces = []
        for param in self._params:
            if param.grad is None:
                pieces.append(np.zeros(param._data.size, dtype=param._data.dtype))
            else:
                pieces.append(param.grad._data.ravel())
        flat = np.concatenate(pieces)
        if self.param_groups[0]["maximize"]:
            flat = -flat
        return flat

    def _add_to_params(self, step_size: float, direction: np.ndarray) -> None:
        """x ← x + step_size·direction, in place, each parameter its slice."""
        offset = 0
        for param in self._params:
            size = param._data.size
            param._data += step_size * direction[offset : offset + size].reshape(param.shape)
            # As an in-place operation does: values saved for a backward see the change.
            param._shared_version_counter().value += 1
            offset += size

    def _copy_params(self) -> list[np.ndarray]:
        return [param._data.copy() for param in self._params]

    def _set_params(self, values: list[np.ndarray]) -> None:
        for param, value in zip(self._params, values):
            param._data[...] = value
            param._shared_version_counter().value += 1

    def _loss(self, closure: Callable[[], Any]) -> float:
        """The closure's loss as a float (negated with maximize)."""
        with enable_grad():
            loss = _as_float(closure())
        return -loss if self.param_groups[0]["maximize"] else loss

    def _evaluate_along(
        self, closure: Callable[[], Any], start: list[np.ndarray], t: float, d: np.ndarray
    ) -> tuple[float, np.ndarray]:
        """Loss and flat gradient at start + t·d; the parameters are put back to start."""
        self._add_to_params(t, d)
        loss = self._loss(closure)
        flat_grad = self._flat_grad()
        self._set_params(start)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to max_iter iterations; returns the closure's first loss (before them)."""
        check_callable(
            closure, "closure", "LBFGS.step",
            "a function that zeroes the gradients, computes the loss, calls backward() and "
            "returns the loss (LBFGS re-evaluates it several times per step)",
        )  # fmt: skip
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError(
                f"LBFGS: only 'strong_wolfe' is supported as line_search_fn (or None, a "
                f"fixed step of lr); got {line_search_fn!r}."
            )
        state = self.state.setdefault(0, {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            first_loss = closure()
        loss = -_as_float(first_loss) if group["maximize"] else _as_float(first_loss)
        evaluations = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return first_loss  # already at a stationary point

        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_steps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                # Keep the pair only with positive curvature, so that H stays positive.
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_steps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_steps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                d = _two_loop(flat_grad, old_dirs, old_steps, ro, h_diag, state, history_size)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            # The first step is scaled down: no curvature is known yet.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            slope = flat_grad.dot(d)
            if slope > -tolerance_change:
                break  # not a descent direction (any more)

            evaluations_now = 0
            if line_search_fn is not None:
                start = self._copy_params()

                def along(x: list[np.ndarray], step: float, direction: np.ndarray) -> tuple:
                    return self._evaluate_along(closure, x, step, direction)

                loss, flat_grad, t, evaluations_now = _strong_wolfe(
                    along, start, t, d, loss, flat_grad, slope, max_ls=max_eval - evaluations
                )
                self._add_to_params(t, d)
                converged = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                converged = False
                if iteration != max_iter:
                    # The last iteration's loss is not needed: the next step evaluates it.
                    loss = self._loss(closure)
                    flat_grad = self._flat_grad()
                    converged = np.abs(flat_grad).max() <= tolerance_grad
                    evaluations_now = 1
            evaluations += evaluations_now
            state["func_evals"] += evaluations_now

            if iteration == max_iter or evaluations >= max_eval or converged:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_steps, ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return first_loss


def _two_loop(
    flat_grad: np.ndarray,
    old_dirs: list[np.ndarray],
    old_steps: list[np.ndarray],
    ro: list[Any],
    h_diag: Any,
    state: dict[str, Any],
    history_size: int,
) -> np.ndarray:
    """d = -H·g by the L-BFGS two-loop recursion: newest pair to oldest, scale by h_diag,
    then oldest to newest."""
    if "al" not in state:
        state["al"] = [None] * history_size
    al = state["al"]
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_steps[i].dot(q) * ro[i]
        q += -al[i] * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r += (al[i] - be_i) * old_steps[i]
    return r


def _cubic_interpolate(
    x1: float,
    f1: float,
    g1: float,
    x2: float,
    f2: float,
    g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clipped to `bounds` (the interval between x1 and x2 by default); the middle of the
    bounds when the cubic has no minimum."""
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        minimum = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        minimum = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(minimum, low), high)


def _strong_wolfe(
    evaluate: Callable[..., tuple[float, np.ndarray]],
    x: list[np.ndarray],
    t: float,
    d: np.ndarray,
    f: float,
    g: np.ndarray,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, np.ndarray, float, int]:
    """A step t along d with f(x + t·d) <= f + c1·t·gtd (enough decrease) and
    |g(x + t·d)·d| <= -c2·gtd (the slope flattened): bracket such a t, then zoom in by
    cubic interpolation. Returns (loss, flat gradient, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = evaluate(x, t, d)
    evaluations = 1
    gtd_new = g_new.dot(d)

    # Bracketing: grow t until an interval surely holds a point that satisfies both.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # Extrapolate: the cubic's minimizer, at least 1% past t and at most 10·t.
        lowest, highest = t + 0.01 * (t - t_prev), t * 10
        previous = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lowest, highest)
        )
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket around a point that satisfies both conditions.
    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # A t too close to an end of the bracket makes little progress: move it inside,
        # the second time in a row (or when it is outside).
        margin = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < margin:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - margin
                else:
                    t = min(bracket) + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # The old low end becomes the high end: the minimum lies between t and it.
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evaluations


def _as_float(loss: Any) -> float:
    """The closure's loss as a number; the error class PyTorch's float(loss) raises."""
    if isinstance(loss, Variable):
        return float(loss)  # a Variable of several elements explains itself
    try:
        return float(loss)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"LBFGS.step: the closure must return the loss, a one-element Variable (or a "
            f"number); it returned {type(loss).__name__}. End the closure with "
            f"`return loss`."
        ) from None


def _count(name: str, value: Any) -> int:
    """An int >= 1 (a number of iterations, evaluations or stored pairs)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"LBFGS: {name} must be an int >= 1; got {type(value).__name__} {value!r}.")
    if value < 1:
        raise ValueError(f"LBFGS: {name} must be an int >= 1; got {value!r}.")
    return value

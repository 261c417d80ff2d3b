"""Checks for lesson 11 (build an engine in one sitting), and the course's reference engine.

The learner writes a `Value` class (11.1), derives the backward functions of `sub`, `div`
and `sigmoid` (11.2), writes the backward walk (11.3), predicts what a second backward on
the same graph does (11.4), backpropagates by hand through a two-layer MLP (11.5),
trains it with those gradients (11.6), and writes a softplus whose forward and backward stay
finite at ±800 (11.7).

Only check 11.1 looks at the learner's `Value`. Every later check builds its graphs with
the reference `Value` below and compares with what minigrad computes for the same graph,
so a slip in one exercise never fails another; the lesson's cells after an exercise use
the references here too (`Value`, `add`, `mul`, `tanh`, `backward`, `mlp_by_hand`,
`train_by_hand`), on fresh copies of their arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import minigrad.nn.functional as F
from minigrad.core.variable import Variable
from minigrad.course import check

CHAIN_LENGTH = 10_000  # ten times Python's default recursion limit (1000)

RECURSION_HINT = (
    "Your code hit Python's recursion limit (about 1000 nested calls) on a chain of "
    f"{CHAIN_LENGTH:,} nodes, so it calls itself once per node. Count the consumers with a "
    "loop and an explicit stack (a list), then run the nodes from a ready list, as in "
    "lesson 02's ordered_backward: no function that calls itself."
)


# --------------------------------------------------------------------------- the reference engine


class Value:
    """A number or array in the graph, the Values it came from, and the way back to them.

    `data` is a float array; `grad` holds ∂L/∂(this value), zeros of `data`'s shape until
    backward adds into it; `parents` are the Values this one was computed from; and
    `backward_fns[k]` maps `grad_output` (v, this value's gradient) to the k-th parent's
    share vᵀJ_k. A class without `__eq__` is hashed by identity, so Values can be dict keys.
    """

    def __init__(
        self,
        data: Any,
        parents: Sequence[Value] = (),
        backward_fns: Sequence[Callable[[np.ndarray], np.ndarray]] = (),
    ) -> None:
        if len(parents) != len(backward_fns):
            raise ValueError(f"{len(parents)} parents but {len(backward_fns)} backward functions")
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self.parents = tuple(parents)
        self.backward_fns = tuple(backward_fns)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


def add(a: Value, b: Value) -> Value:
    """a + b elementwise; each parent's share is grad_output itself."""
    return Value(a.data + b.data, (a, b), (lambda grad_output: grad_output,) * 2)


def mul(a: Value, b: Value) -> Value:
    """a * b elementwise; ∂(ab)/∂a = b, so a's share is grad_output * b (and b's, * a)."""
    return Value(
        a.data * b.data,
        (a, b),
        (lambda grad_output: grad_output * b.data, lambda grad_output: grad_output * a.data),
    )


def tanh(a: Value) -> Value:
    """tanh(a) elementwise; with t = tanh(a), the share is grad_output * (1 - t²)."""
    t = np.tanh(a.data)
    return Value(t, (a,), (lambda grad_output: grad_output * (1 - t**2),))


def sub(a: Value, b: Value) -> Value:
    """a - b elementwise (the solution of Exercise 11.2)."""
    return Value(
        a.data - b.data, (a, b), (lambda grad_output: grad_output, lambda grad_output: -grad_output)
    )


def div(a: Value, b: Value) -> Value:
    """a / b elementwise: ∂/∂a = 1/b and ∂/∂b = -a/b² (the solution of Exercise 11.2)."""
    return Value(
        a.data / b.data,
        (a, b),
        (
            lambda grad_output: grad_output / b.data,
            lambda grad_output: -grad_output * a.data / b.data**2,
        ),
    )


def sigmoid(a: Value) -> Value:
    """σ(a) = 1/(1 + e^-a) elementwise: σ' = σ(1 - σ) (the solution of Exercise 11.2)."""
    s = 1 / (1 + np.exp(-a.data))
    return Value(s, (a,), (lambda grad_output: grad_output * s * (1 - s),))


def backward(output: Value) -> None:
    """Add d(output)/d(v) into v.grad for every Value v that output depends on.

    Kahn's algorithm from the output back: count each Value's consumers, seed
    output.grad with ones (it is *set*, not added), then run a Value once every consumer
    has sent its share. Shares are added into `.grad` of every Value, intermediates too,
    and nothing is reset, so a second call on the same graph passes the intermediates'
    old gradients on again (see Exercise 11.4). Loops only: no recursion.
    """
    consumers: dict[Value, int] = {}
    seen, stack = {output}, [output]
    while stack:
        node = stack.pop()
        for parent in node.parents:
            consumers[parent] = consumers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    output.grad = np.ones_like(output.data)
    ready = [output]
    while ready:
        node = ready.pop()
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
            consumers[parent] -= 1
            if consumers[parent] == 0:
                ready.append(parent)


def _callable(exercise: str, value: Any, name: str) -> None:
    if not callable(value):
        check.fail(exercise, f"{name} should be a function; got {check.with_article(value)}.")


# --------------------------------------------------------------------------- Exercise 11.1


def check_11_1(value_class: type) -> None:
    """Value(data, parents=(), backward_fns=()) stores float data, zero grad and its links."""
    exercise = "11.1"
    if not isinstance(value_class, type):
        check.fail(
            exercise,
            f"pass the class itself, `Value`, not {check.with_article(value_class)}.",
        )

    def make(what: str, *args: Any) -> Any:
        return check.call(exercise, what, value_class, *args)

    for data in (2.5, [1.0, -2.0, 3.0], np.arange(6.0).reshape(2, 3), 3, [1, 2]):
        what = f"Value({data!r})" if not isinstance(data, np.ndarray) else "Value(a 2x3 array)"
        node = make(what, data)
        expected = np.asarray(data, dtype=np.float64)
        for field in ("data", "grad", "parents", "backward_fns"):
            if not hasattr(node, field):
                check.fail(exercise, f"{what} has no attribute `{field}`: set self.{field}.")
        if not isinstance(node.data, np.ndarray):
            check.fail(
                exercise,
                f"{what}.data is {check.with_article(node.data)}: store a NumPy array, "
                f"np.asarray(data, dtype=float), so that scalars and vectors behave alike.",
            )
        if not np.issubdtype(node.data.dtype, np.floating):
            check.fail(
                exercise,
                f"{what}.data has dtype {node.data.dtype}: convert to float "
                f"(np.asarray(data, dtype=float)). With integer data the grad would be an "
                f"integer array too, and adding a gradient of 0.5 into it fails.",
            )
        check.expect_close(exercise, f"{what}.data", node.data, expected)
        grad_dtype = np.asarray(node.grad).dtype if node.grad is not None else None
        if grad_dtype is not None and not np.issubdtype(grad_dtype, np.floating):
            check.fail(
                exercise,
                f"{what}.grad has dtype {grad_dtype}: make it from the float data, "
                f"np.zeros_like(self.data), or adding a gradient of 0.5 into it fails.",
            )
        if node.grad is None or np.ndim(node.grad) != node.data.ndim:
            check.fail(
                exercise,
                f"{what}.grad is {check.with_article(node.grad)} of shape "
                f"{np.shape(node.grad)}: it must be zeros of the data's shape, "
                f"np.zeros_like(self.data), so that a gradient can be added into it.",
            )
        if isinstance(node.grad, np.ndarray) and np.shares_memory(node.grad, node.data):
            check.fail(
                exercise,
                f"{what}.grad shares its memory with .data (grad = self.data, or a view of "
                f"it): adding a gradient into .grad would change the value itself. Make a new "
                f"array, np.zeros_like(self.data).",
            )
        check.expect_close(
            exercise,
            f"{what}.grad",
            node.grad,
            np.zeros_like(expected),
            {"grad must start at zero; it looks like a copy of the data.": expected},
            shape_hint="grad must have the data's shape: np.zeros_like(self.data).",
        )
        if tuple(node.parents) != () or tuple(node.backward_fns) != ():
            check.fail(exercise, f"a leaf ({what}) should have no parents and no backward_fns.")

    a, b = make("Value(1.0)", 1.0), make("Value(2.0)", 2.0)

    def share_a(grad_output: Any) -> Any:
        return grad_output * 2.0

    def share_b(grad_output: Any) -> Any:
        return grad_output * 1.0

    what = "Value(2.0, (a, b), (share_a, share_b))"
    node = make(what, 2.0, (a, b), (share_a, share_b))
    parents, functions = tuple(node.parents), tuple(node.backward_fns)
    if len(parents) != 2 or parents[0] is not a or parents[1] is not b:
        check.fail(
            exercise,
            f"{what}.parents should be (a, b): the parent Value objects themselves, in order "
            f"(not copies, not their data).",
        )
    if len(functions) != 2 or functions[0] is not share_a or functions[1] is not share_b:
        check.fail(
            exercise,
            f"{what}.backward_fns should be (share_a, share_b): the functions themselves, in "
            f"the parents' order (store them, do not call them).",
        )
    try:
        value_class(2.0, (a, b), (share_a,))
    except ValueError:
        pass
    except Exception as error:  # noqa: BLE001 - any other error is reported
        wrong_type = (
            Exception,
            "When len(parents) != len(backward_fns), raise a ValueError (the type the check "
            "expects), before __init__ uses either sequence.",
        )
        check.explain_error(exercise, "Value(2.0, (a, b), (share_a,))", error, [wrong_type])
    else:
        check.fail(
            exercise,
            "Value(2.0, (a, b), (share_a,)) has two parents but one backward function, and "
            "it was accepted: raise a ValueError when len(parents) != len(backward_fns), or "
            "backward's zip() would silently skip a parent.",
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.2


# (operation, label, inputs, whether one Value is both parents, minigrad version). Hidden
# data: a grad_output with a zero entry, one Value used as both parents (sub(a, a) has a
# total gradient of exactly zero), a sigmoid at 0 and far out in both tails.
def _minus(a: Variable, b: Variable) -> Variable:
    return a - b


def _divide(a: Variable, b: Variable) -> Variable:
    return a / b


def _sigmoid(a: Variable) -> Variable:
    return a.sigmoid()


_OPS_112: list[tuple[str, str, list[Any], bool, Callable]] = [
    ("sub", "sub(a, b)", [[0.5, -1.5, 2.0, 0.75], [3.0, 0.25, -1.0, 0.75]], False, _minus),
    ("sub", "sub(a, a)", [[0.5, -1.5, 2.0, 3.0]], True, _minus),
    ("div", "div(a, b)", [[0.5, -1.5, 2.0, 3.0], [4.0, -0.5, 1.25, 3.0]], False, _divide),
    ("div", "div(a, b) on scalars", [3.0, -2.0], False, _divide),
    ("div", "div(a, a)", [[0.5, -1.5, 2.0, 3.0]], True, _divide),
    ("sigmoid", "sigmoid(a)", [[-3.0, 0.0, 0.5, 4.0]], False, _sigmoid),
    ("sigmoid", "sigmoid(a) on a scalar", [0.8], False, _sigmoid),
    # Far out in both tails: a derivative that computes exp(-a) again overflows at -800.
    ("sigmoid", "sigmoid(a) at a = -800, -40, 40, 800", [[-800.0, -40.0, 40.0, 800.0]], False,
     _sigmoid),
]


def _recomputed_exp(a: np.ndarray, share: np.ndarray) -> str:
    """The hint for a sigmoid share that is inf or nan, naming the exponential that
    overflows where it is: exp(a) far out on the right (a = +800), exp(-a) on the left."""
    told = []
    if share.shape == a.shape:
        bad = ~np.isfinite(share)
        if np.any(bad & (a > 0)):
            far = np.max(a[bad & (a > 0)])
            told.append(f"at a = +{far:g}, exp(a) = exp({far:g}) is inf, and "
                        f"e^a / (1 + e^a)² is inf/inf = nan")
        if np.any(bad & (a < 0)):
            far = np.min(a[bad & (a < 0)])
            told.append(f"at a = {far:g}, exp(-a) = exp({-far:g}) is inf, and "
                        f"e^-a / (1 + e^-a)² is inf/inf = nan")
    where = "; ".join(told) if told else "exp(800) is inf, and inf/inf is nan"
    return (
        f"computing an exponential again overflows far out in the tails: {where}. Write σ' "
        f"with the output s that the forward saved, grad_output * s * (1 - s), which stays "
        f"between 0 and 1/4."
    )


_FORGOT_V = (
    "that is the local derivative alone: multiply it by grad_output, the v in vᵀJ (here "
    "v is not all ones)."
)


def _shares_by_minigrad(function: Callable, inputs: list[np.ndarray], v: np.ndarray) -> tuple:
    """Each parent's share vᵀJ_k and the forward value, by minigrad. Each input is its own
    Variable, so an operation whose parents are one Value gets one share per edge."""
    variables = [Variable(x.copy(), requires_grad=True) for x in inputs]
    output = function(*variables)
    output.backward(Variable(v))
    return [np.asarray(x.grad.data) for x in variables], np.asarray(output.data)


def _mistakes_112(name: str, k: int, a: np.ndarray, b: np.ndarray, v: np.ndarray) -> dict:
    """The value each likely slip gives for parent k's share, with its hint."""
    ones = np.ones_like(v)
    if name == "sub" and k == 0:
        return {
            "that is -grad_output: a's share of a - b is +grad_output (∂(a - b)/∂a = +1); "
            "the minus belongs to b's share.": -v,
            _FORGOT_V: ones,
        }
    if name == "sub":
        return {
            "a sign error: a - b goes down when b goes up, so ∂(a - b)/∂b = -1 and b's "
            "share is -grad_output.": v,
            _FORGOT_V: -ones,
            "a sign error, and the local derivative alone: b's share is -grad_output.": ones,
        }
    if name == "div" and k == 0:
        return {
            "that is mul's rule, grad_output * b: for a / b = a * (1/b), ∂/∂a = 1/b, so a's "
            "share is grad_output / b.data.": v * b,
            "a sign error: ∂(a/b)/∂a = +1/b.": -v / b,
            _FORGOT_V: 1 / b,
        }
    if name == "div":
        return {
            "a sign error: a/b = a·b⁻¹ and d(b⁻¹)/db = -b⁻², so ∂(a/b)/∂b = -a/b² and b's "
            "share is -grad_output * a / b**2.": v * a / b**2,
            "that has b, not b²: ∂(a/b)/∂b = -a/b², the derivative of b⁻¹ is -b⁻².": -v * a / b,
            "that has lost the a: ∂(a/b)/∂b = -a/b², not -1/b².": -v / b**2,
            _FORGOT_V: -a / b**2,
        }
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-a))
    return {
        "that is tanh's rule, 1 - s², not the sigmoid's: differentiate σ(x) = 1/(1 + e^-x) "
        "and write the result with σ itself, σ' = σ(1 - σ).": v * (1 - s**2),
        "that is grad_output * σ(x): σ' = σ(1 - σ), and the (1 - σ) is missing.": v * s,
        "that is grad_output * (1 - σ(x)): σ' = σ(1 - σ), and the σ factor is missing.": (
            v * (1 - s)
        ),
        "that uses the input x where the output belongs: σ'(x) = s(1 - s) with s = σ(x), "
        "not x(1 - x).": v * a * (1 - a),
        _FORGOT_V: s * (1 - s),
    }


def _is_value_like(value: Any) -> bool:
    return all(hasattr(value, field) for field in ("data", "parents", "backward_fns"))


def check_11_2(sub: Callable, div: Callable, sigmoid: Callable) -> None:
    """sub, div and sigmoid return a Value whose backward_fns give each parent's vᵀJ.

    The inputs are the course's reference Values, so this check does not depend on the
    learner's Exercise 11.1."""
    exercise = "11.2"
    ops = {"sub": sub, "div": div, "sigmoid": sigmoid}
    for name, op in ops.items():
        _callable(exercise, op, name)
    rng = np.random.default_rng(1112)
    for name, label, raw_inputs, same, reference in _OPS_112:
        inputs = [np.asarray(x, dtype=np.float64) for x in raw_inputs]
        if same:
            inputs = [inputs[0], inputs[0].copy()]
        parents = [Value(x.copy()) for x in inputs]
        call_args = [parents[0], parents[0]] if same else parents
        # The forward np.exp(-a) overflows to inf at a = -800 (σ is then exactly 0): right,
        # so its warning is not the learner's to see.
        with np.errstate(over="ignore"):
            out = check.call(exercise, label, ops[name], *call_args)
        if not _is_value_like(out):
            check.fail(
                exercise,
                f"{label} returned {check.with_article(out)}: return a new Value, built as "
                f"Value(result, parents, backward_fns).",
            )
        # A grad_output that is not all ones and has a zero where there are several entries.
        v = np.round(rng.uniform(0.5, 2.0, size=inputs[0].shape), 2)
        if v.ndim:
            v[1] = 0.0
        shares, forward = _shares_by_minigrad(reference, inputs, v)
        check.expect_close(exercise, f"{label}.data", out.data, forward)
        got_parents = tuple(out.parents)
        if len(got_parents) != len(call_args) or any(
            p is not q for p, q in zip(got_parents, call_args)
        ):
            check.fail(
                exercise,
                f"{label}.parents should be the input Values themselves, in order "
                f"({len(call_args)} of them; a Value used twice appears twice), not their "
                f"data or copies.",
            )
        functions = tuple(out.backward_fns)
        if len(functions) != len(got_parents):
            check.fail(
                exercise,
                f"{label} has {len(got_parents)} parent(s) but {len(functions)} backward "
                f"function(s): give one function per parent, in the parents' order.",
            )
        a = inputs[0]
        b = inputs[-1]
        for k, function in enumerate(functions):
            who = "a" if k == 0 else "b"
            what = f"{label}: backward_fns[{k}](grad_output), the share of {who},"
            given = v.copy()
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                share = check.call(exercise, what, function, given)
            if not np.all(np.isfinite(check.as_array(exercise, what, share))):
                share = check.as_array(exercise, what, share)
                hint = _recomputed_exp(a, share) if name == "sigmoid" else "divide only by b.data."
                check.fail(exercise, f"{what} contains inf or nan: {hint}")
            if not np.array_equal(given, v):
                check.fail(
                    exercise,
                    f"{what} changed grad_output in place (e.g. `grad_output *= ...`): that "
                    f"array is the node's own .grad, and other parents may receive it too. "
                    f"Return a new array: `return grad_output * ...`.",
                )
            mistakes = _mistakes_112(name, k, a, b, v)
            check.expect_close(exercise, what, share, shares[k], mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.3


class _Ops:
    """The reference operations, so that check 11.3 tests the walk alone."""

    leaf = staticmethod(lambda data: Value(np.asarray(data, dtype=np.float64)))
    add = staticmethod(add)
    mul = staticmethod(mul)
    tanh = staticmethod(tanh)


class _MinigradOps:
    """The same operations on minigrad Variables."""

    @staticmethod
    def leaf(data: Any) -> Variable:
        return Variable(np.asarray(data, dtype=np.float64), requires_grad=True)

    @staticmethod
    def add(a: Variable, b: Variable) -> Variable:
        return a + b

    @staticmethod
    def mul(a: Variable, b: Variable) -> Variable:
        return a * b

    @staticmethod
    def tanh(a: Variable) -> Variable:
        return a.tanh()


def _graph_a_plus_a(ops: Any) -> tuple[Any, dict]:
    x = ops.leaf([1.5, -0.5])
    a = ops.mul(x, x)
    return ops.add(a, a), {"a": a, "x": x}


def _graph_x_times_x(ops: Any) -> tuple[Any, dict]:
    x = ops.leaf(-1.25)
    return ops.mul(x, x), {"x": x}


def _graph_leaf(ops: Any) -> tuple[Any, dict]:
    x = ops.leaf([2.0, -1.0])
    return x, {"x": x}


def _graph_zero_gradient(ops: Any) -> tuple[Any, dict]:
    # u feeds x, which feeds y twice: through tanh(x) * 0, where the gradient is exactly
    # zero, and through x * k. The tanh node must still run (and count) with its zero
    # gradient, or x never becomes ready and u never gets its share.
    u = ops.leaf([0.3, -1.1])
    x = ops.mul(u, ops.leaf([2.0, 2.0]))
    z = ops.leaf([0.0, 0.0])
    k = ops.leaf([1.5, -0.5])
    return ops.add(ops.mul(ops.tanh(x), z), ops.mul(x, k)), {"u": u, "x": x, "z": z}


def _graph_diamond(ops: Any) -> tuple[Any, dict]:
    # a feeds p and q, which meet again in y, and a also feeds y directly: a short path
    # reaches a before the long one through q has finished.
    x = ops.leaf([0.4, -0.9, 1.3])
    w = ops.leaf([1.5, 0.5, -0.7])
    c = ops.leaf([3.0, 3.0, 3.0])
    a = ops.mul(x, w)
    p = ops.mul(c, a)
    q = ops.tanh(ops.tanh(a))
    y = ops.add(ops.mul(p, q), a)
    return y, {"a": a, "x": x, "w": w}


def _graph_used_twice_twice(ops: Any) -> tuple[Any, dict]:
    # a has two consumers, and each uses it twice: four edges. A walk that counts
    # consumers (2) instead of edges lets a run as soon as the first consumer has sent
    # its two shares; a + a sits one node deeper than a * a, so that happens whether the
    # ready list is a stack or a queue.
    x = ops.leaf([0.6, -1.2])
    w = ops.leaf([-0.5, 0.8])
    a = ops.mul(x, w)
    return ops.mul(ops.mul(a, a), ops.tanh(ops.add(a, a))), {"a": a, "x": x, "w": w}


def _graph_chain(ops: Any) -> tuple[Any, dict]:
    # y = (((x + x) * k + x) * k + x) ...: every node waits for the one after it, and x
    # has thousands of consumers.
    x = ops.leaf(0.8)
    k = ops.leaf(1.00001)
    y = x
    for step in range(CHAIN_LENGTH):
        y = ops.mul(y, k) if step % 2 else ops.add(y, x)
    return ops.tanh(ops.mul(y, ops.leaf(1e-4))), {"x": x, "k": k}


_GRAPHS_113: list[tuple[str, Callable[[Any], tuple[Any, dict]]]] = [
    ("a + a with a = x * x", _graph_a_plus_a),
    ("x * x", _graph_x_times_x),
    ("y = x, a leaf that is the output itself", _graph_leaf),
    ("a diamond: a = x*w feeds p = 3a, q = tanh(tanh(a)) and y = p*q + a", _graph_diamond),
    ("y = tanh(x) * 0 + x * k with x = 2u (tanh(x) gets a zero gradient)", _graph_zero_gradient),
    (
        "y = (a * a) * tanh(a + a) with a = x * w (two consumers, each using a twice)",
        _graph_used_twice_twice,
    ),
    (f"a chain of about {CHAIN_LENGTH:,} operations", _graph_chain),
]


def _minigrad_grads(build: Callable, names: list[str]) -> dict[str, np.ndarray]:
    output, named = build(_MinigradOps)
    for name in names:
        if named[name].grad_fn is not None:
            named[name].retain_grad()
    output.backward(Variable(np.ones_like(np.asarray(output.data))))
    return {name: np.asarray(named[name].grad.data) for name in names}


def check_11_3(backward: Callable) -> None:
    """backward(output) fills .grad of every node, each node run once, without recursion.

    The graphs are built with the course's reference Value and operations, so this check
    tests the walk alone."""
    exercise = "11.3"
    if isinstance(backward, type):
        check.fail(
            exercise,
            "pass your backward function, not a class: lesson11.check_11_3(backward). The "
            "check builds its graphs with the course's Value itself.",
        )
    _callable(exercise, backward, "backward")
    for label, build in _GRAPHS_113:
        output, named = build(_Ops)
        names = list(named)
        expected = _minigrad_grads(build, names)
        check.call(exercise, f"backward(y) for {label}", backward, output, hints=[_recursion_hint])
        nonzero = [n for n in names if np.any(expected[n] != 0)]
        if nonzero and all(np.all(np.asarray(named[n].grad) == 0) for n in nonzero):
            leaf = "" if output.parents else " (also when the output is a leaf, with no parents)"
            check.fail(
                exercise,
                f"for {label}, every gradient is still 0: start the walk by setting "
                f"output.grad = np.ones_like(output.data), the seed ∂y/∂y = 1{leaf}.",
            )
        for name in names:
            _compare_walk(exercise, f"for {label}, {name}.grad", named[name].grad, expected[name])
    _check_accumulation(exercise, backward)
    check.passed(exercise)


def _recursion_hint(error: BaseException) -> str | None:
    return RECURSION_HINT if isinstance(error, RecursionError) else None


def _compare_walk(exercise: str, what: str, got: Any, expected: np.ndarray) -> None:
    """A leaf's or node's gradient after the learner's walk, with the walk's typical slips."""
    got_array = check.as_array(exercise, what, got)
    check.expect_shape(exercise, what, got_array, expected.shape)
    if np.allclose(got_array, expected, rtol=1e-6, atol=1e-8):
        return
    slips = {
        "half the right value: a share replaced the gradient instead of adding to it. A "
        "node used twice (a + a, x * x) receives two shares: write parent.grad = "
        "parent.grad + share (or +=), never parent.grad = share.": expected / 2,
        "twice the right value: a node ran more than once and passed its gradient on each "
        "time. Count each node's consumers first, and put a node on the ready list only "
        "when its count drops to 0.": expected * 2,
        "0: this node never received its shares, because a node before it never ran. A "
        "node whose gradient is zero still runs (or at least lowers its parents' counts); "
        "skip it and its parents never become ready.": np.zeros_like(expected),
    }
    for hint, wrong in slips.items():
        if np.allclose(got_array, wrong, rtol=1e-6, atol=1e-8):
            check.fail(
                exercise,
                f"{what} is {check._short(got_array)}, expected {check._short(expected)}: "
                f"that is {hint}",
            )
    check.fail(
        exercise,
        f"{what} is {check._short(got_array)}, expected {check._short(expected)}: a node "
        f"probably ran before all its consumers had sent their shares, so it passed on an "
        f"incomplete gradient. Count the edges that point at each node, decrease a parent's "
        f"count each time a consumer has sent its share, and make the parent ready only "
        f"when its count reaches 0.",
    )


def _check_accumulation(exercise: str, backward: Callable) -> None:
    """Two graphs that share the leaf x: like minigrad, x.grad holds the sum of both."""
    x = _Ops.leaf(0.7)
    first = mul(x, _Ops.leaf(3.0))
    second = tanh(x)
    check.call(exercise, "backward(3 * x)", backward, first)
    check.call(exercise, "then backward(tanh(x))", backward, second)
    expected = 3.0 + (1 - np.tanh(0.7) ** 2)
    mistakes = {
        "that is the gradient of the second graph alone: backward reset x.grad. Like "
        "minigrad, add into .grad and leave the resetting to the caller.": 1 - np.tanh(0.7) ** 2
    }
    check.expect_close(
        exercise,
        "x.grad after backward(3 * x) and then backward(tanh(x))",
        x.grad,
        expected,
        mistakes,
    )


# --------------------------------------------------------------------------- Exercise 11.4


def twice_backward_graph() -> tuple[Value, Value, Value]:
    """The graph of Exercise 11.4 with the reference Value: x = 3, a = x * x, y = a + a.
    Returns (x, a, y)."""
    x = Value(3.0)
    a = mul(x, x)
    return x, a, add(a, a)


def _twice_backward_answers() -> tuple[float, float, dict, dict]:
    """a.grad and x.grad after two calls of the reference backward, and the values the
    likely mispredictions give."""
    x, a, y = twice_backward_graph()
    backward(y)
    once_a, once_x = float(a.grad), float(x.grad)
    backward(y)
    a_grad, x_grad = float(a.grad), float(x.grad)
    # With the seed added (y.grad = 2), a would receive 2 + 2 on top of its old 2, and
    # send all 6 on to x through both edges of x * x.
    a_seed_added = once_a + 2 * once_a
    a_mistakes = {
        "that is a.grad after ONE backward. Nothing resets a.grad between the calls, and "
        "the second pass adds a's two shares (1 + 1) into it again.": once_a,
        "that would be right if the seed were added; backward SETS output.grad = ones, so "
        "y.grad is 1 again in the second pass, not 2.": a_seed_added,
        # The second pass counted once: a appears twice in a + a and gets a share per edge.
        "that is 2 + 1: the second pass adds a's share once, but y = a + a sends y.grad = 1 "
        "through each of its two edges, as in the first pass.": once_a + 1.0,
    }
    x_mistakes = {
        "that is what minigrad and PyTorch give with retain_graph=True: their intermediates "
        f"keep no .grad, so only the leaf accumulates ({once_x:g} + {once_x:g}). Here a keeps "
        f"its gradient, so in the second pass a holds {a_grad:g} and sends all of it on to "
        f"x.": 2 * once_x,
        "that is x.grad after ONE backward: backward adds into .grad, and nothing resets "
        "x.grad between the calls.": once_x,
        "that would be right if the seed were added as well (y.grad = 2); backward SETS "
        "output.grad = ones.": once_x + 2 * float(x.data) * a_seed_added,
    }
    return a_grad, x_grad, a_mistakes, x_mistakes


def check_11_4(predicted_a_grad: Any, predicted_x_grad: Any) -> None:
    """The two numbers predicted for a.grad and x.grad after backward(y) twice."""
    exercise = "11.4"
    if predicted_a_grad is None or predicted_x_grad is None:
        check.not_written(exercise)
    a_grad, x_grad, a_mistakes, x_mistakes = _twice_backward_answers()
    one_number = "write one number (x is a scalar here), not a list or an array."
    check.expect_close(
        exercise, "predicted_a_grad", predicted_a_grad, a_grad, a_mistakes, shape_hint=one_number
    )
    check.expect_close(
        exercise, "predicted_x_grad", predicted_x_grad, x_grad, x_mistakes, shape_hint=one_number
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.5

MLP_KEYS = ("loss", "logits", "W2", "b2", "h", "z1", "W1", "b1", "x")


def mlp_reference(
    x: np.ndarray,
    labels: np.ndarray,
    W1: np.ndarray,
    b1: np.ndarray,
    W2: np.ndarray,
    b2: np.ndarray,
) -> dict[str, Any]:
    """Loss and every gradient of the MLP, computed by minigrad with retain_grad()."""
    xv = Variable(x, requires_grad=True)
    params = {k: Variable(v, requires_grad=True) for k, v in (("W1", W1), ("b1", b1))}
    params.update({k: Variable(v, requires_grad=True) for k, v in (("W2", W2), ("b2", b2))})
    z1 = xv @ params["W1"].T + params["b1"]
    h = z1.relu()
    logits = h @ params["W2"].T + params["b2"]
    for node in (z1, h, logits):
        node.retain_grad()
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grads = {"loss": loss.item(), "logits": logits.grad.data, "h": h.grad.data}
    grads.update({"z1": z1.grad.data, "x": xv.grad.data})
    grads.update({k: v.grad.data for k, v in params.items()})
    return {k: np.asarray(v) for k, v in grads.items()}


def _mlp_case(
    seed: int, n: int = 5, d: int = 3, hidden: int = 4, classes: int = 3, scale: float = 1.0
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.normal(size=(n, d)),
        "labels": rng.integers(0, classes, size=n),
        "W1": rng.normal(size=(hidden, d)),
        "b1": rng.normal(size=hidden) * 0.5,
        "W2": rng.normal(size=(classes, hidden)) * scale,
        "b2": rng.normal(size=classes) * 0.5,
    }


def _mlp_case_ties() -> dict[str, np.ndarray]:
    """A batch whose second row is all zeros and a b1 with zeros in it: z1 = b1 on that
    row, exactly 0 in two places, where relu's derivative is taken as 0."""
    case = _mlp_case(404, n=4)
    case["x"][1] = 0.0
    case["b1"][[0, 2]] = 0.0
    return case


def _mlp_mistakes(key: str, expected: np.ndarray, n: int) -> dict[str, Any]:
    batch = (
        "that is the batch size times the right value: the loss is the MEAN over the "
        f"batch, so ∂loss/∂logits = (softmax - one_hot) / N, with N = {n} here."
    )
    twice = (
        "that is the right value divided by the batch size once more: 1/N is already in "
        "∂loss/∂logits, so sum over the batch after that, do not average again."
    )
    mistakes = {batch: expected * n, twice: expected / n}
    if key == "loss":
        mistakes = {
            f"that is the sum over the batch: the loss is the mean, divide by N = {n}.": (
                expected * n
            )
        }
    return mistakes


def _check_mask_at_ties(
    exercise: str, what: str, got: np.ndarray, expected: dict, z1: np.ndarray
) -> None:
    """A CheckError for ∂loss/∂z1 masked with (z1 >= 0): it differs from the right answer
    only where z1 is exactly 0. The message names those entries instead of printing the
    matrices."""
    wrong = expected["h"] * (z1 >= 0)
    rtol, atol = 1e-6, 1e-9
    if (
        not np.any(z1 == 0)
        or got.shape != wrong.shape
        or np.allclose(got, expected["z1"], rtol=rtol, atol=atol)
        or not np.allclose(got, wrong, rtol=rtol, atol=atol)
    ):
        return
    close = np.isclose(got, expected["z1"], rtol=rtol, atol=atol)
    differ = [list(map(int, index)) for index in np.argwhere(~close)]
    where = " and ".join(str(index) for index in differ[:2])
    if len(differ) > 2:
        where += f" and {len(differ) - 2} more"
    entries = "entry" if len(differ) == 1 else "entries"
    check.fail(
        exercise,
        f"{what} is wrong at {entries} {where}, where z1 is exactly 0: that is a (z1 >= 0) "
        f"mask, but relu'(0) is taken as 0 (as in minigrad and PyTorch), so mask with (z1 > 0).",
    )


def check_11_5(mlp_forward_backward: Callable) -> None:
    """mlp_forward_backward returns the loss and the gradient of every intermediate."""
    exercise = "11.5"
    _callable(exercise, mlp_forward_backward, "mlp_forward_backward")
    cases = [
        ("on a batch of 5", _mlp_case(2024)),
        ("on a batch of 8 with other sizes", _mlp_case(7, n=8, d=2, hidden=6, classes=4)),
        ("on a batch of 6 whose logits are in the thousands", _mlp_case(11, n=6, scale=900.0)),
        ("on a batch of 4 where some of z1 is exactly 0", _mlp_case_ties()),
    ]
    for label, inputs in cases:
        n = inputs["x"].shape[0]
        given = {k: v.copy() for k, v in inputs.items()}
        expected = mlp_reference(**{k: v.copy() for k, v in inputs.items()})
        what = f"mlp_forward_backward(...) {label}"
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = check.call(exercise, what, mlp_forward_backward, *given.values())
        if not isinstance(result, dict):
            check.fail(
                exercise,
                f"{what} returned {check.with_article(result)}: return a dict with the keys "
                f"{', '.join(repr(k) for k in MLP_KEYS)}.",
            )
        missing = [k for k in MLP_KEYS if k not in result]
        if missing:
            check.fail(
                exercise,
                f"{what}: the dict has no {', '.join(repr(k) for k in missing)}; return every "
                f"key of {', '.join(repr(k) for k in MLP_KEYS)}.",
            )
        if any(not np.array_equal(given[k], inputs[k]) for k in inputs):
            check.fail(exercise, f"{what} changed its inputs in place; compute new arrays.")
        for key in MLP_KEYS:
            what_key = f"result['{key}'] {label}"
            got = check.as_array(exercise, what_key, result[key])
            if np.any(~np.isfinite(got)):
                check.fail(
                    exercise,
                    f"{what_key} contains inf or nan: np.exp of logits in the thousands "
                    f"overflows. Subtract each row's maximum before exponentiating, "
                    f"log Σ exp(z) = m + log Σ exp(z - m) with m = z.max(axis=1, "
                    f"keepdims=True); the softmax is unchanged.",
                )
            if key in ("b1", "b2") and got.shape == (n,) and expected[key].shape != (n,):
                check.fail(
                    exercise,
                    f"{what_key} has shape {got.shape}, expected {expected[key].shape}: "
                    f"that is a sum over the wrong axis. Axis 0 is the batch: .sum(axis=0).",
                )
            if key in ("b1", "b2") and got.shape == (n, expected[key].shape[0]):
                check.fail(
                    exercise,
                    f"{what_key} has shape {got.shape}, expected {expected[key].shape}: "
                    f"the bias was broadcast to every one of the {n} rows in the forward "
                    f"pass, so its gradient is the sum of the rows' gradients: "
                    f".sum(axis=0).",
                )
            mistakes = _mlp_mistakes(key, expected[key], n)
            if key == "z1":
                mistakes["that is ∂loss/∂h without the ReLU's mask: multiply by (z1 > 0)."] = (
                    expected["h"]
                )
                z1 = inputs["x"] @ inputs["W1"].T + inputs["b1"]
                where = f"result['z1'] on a batch of {n}"
                _check_mask_at_ties(exercise, where, got, expected, z1)
            check.expect_close(
                exercise, what_key, got, expected[key], mistakes, rtol=1e-6, atol=1e-9
            )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.6

PARAMETER_NAMES = ("W1", "b1", "W2", "b2")


def _train_with_minigrad(params: dict, x: np.ndarray, labels: np.ndarray, lr: float, steps: int):
    """Gradient descent on the MLP with minigrad's backward: (final params, losses)."""
    variables = {
        k: Variable(np.array(v, dtype=np.float64), requires_grad=True) for k, v in params.items()
    }
    losses = []
    for _ in range(steps):
        hidden = (Variable(x) @ variables["W1"].T + variables["b1"]).relu()
        loss = F.cross_entropy(hidden @ variables["W2"].T + variables["b2"], labels)
        for p in variables.values():
            p.grad = None
        loss.backward()
        losses.append(loss.item())
        for p in variables.values():
            p.data = p.data - lr * p.grad.data
    return {k: v.data for k, v in variables.items()}, losses


class NotAParameterError(TypeError):
    """grad_fn was called with keyword arguments that are not the MLP's parameters."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"grad_fn was given {', '.join(map(repr, names))}, not parameters")
        self.names = names


def _minigrad_gradients(x: np.ndarray, labels: np.ndarray, /, **params: np.ndarray) -> dict:
    """The gradient function the check hands to train_by_hand: minigrad's, as NumPy. It
    names keys that are not parameters (a loop that updated every key of grads added
    them to params) by raising NotAParameterError."""
    extra = [name for name in params if name not in PARAMETER_NAMES]
    if extra:
        raise NotAParameterError(extra)
    return mlp_reference(x, labels, **params)


def check_11_6(train_by_hand: Callable) -> None:
    """train_by_hand(grad_fn, params, x, labels, lr, steps) runs gradient descent on copies.

    grad_fn is minigrad's gradient of the MLP, so this check does not depend on the
    learner's Exercise 11.5. Two runs: 8 steps, and a single step (the boundary)."""
    exercise = "11.6"
    _callable(exercise, train_by_hand, "train_by_hand")
    case = _mlp_case(55, n=12, d=2, hidden=5, classes=3)
    x, labels = case["x"], case["labels"]
    params = {k: case[k] for k in PARAMETER_NAMES}
    for lr, steps in ((0.3, 8), (0.5, 1)):
        _check_training_run(exercise, train_by_hand, params, x, labels, lr, steps)
    check.passed(exercise)


def _updated_a_non_parameter(error: BaseException) -> bool:
    return bool(error.args) and error.args[0] in MLP_KEYS and error.args[0] not in PARAMETER_NAMES


def _check_training_run(
    exercise: str,
    train_by_hand: Callable,
    params: dict,
    x: np.ndarray,
    labels: np.ndarray,
    lr: float,
    steps: int,
) -> None:
    expected_params, expected_losses = _train_with_minigrad(params, x, labels, lr, steps)
    ascent_params, ascent_losses = _train_with_minigrad(params, x, labels, -lr, steps)
    given = {k: v.copy() for k, v in params.items()}
    what = f"train_by_hand(grad_fn, params, x, labels, lr={lr}, steps={steps})"
    hints = [
        (
            KeyError,
            _updated_a_non_parameter,
            "The loop updated a key that is not a parameter: grad_fn's dict also holds "
            "'loss', the intermediates and 'x'. Update only the names in params.",
        ),
        (
            NotAParameterError,
            "The loop added keys of grads to params: grad_fn's dict also holds 'loss', the "
            "intermediates and 'x'. Update only the four names in params.",
        ),
    ]
    result = check.call(
        exercise, what, train_by_hand, _minigrad_gradients, given, x, labels, lr, steps, hints=hints
    )
    if any(not np.array_equal(given[k], params[k]) for k in params):
        check.fail(
            exercise,
            f"{what} changed the arrays of the params dict it was given (`params[name] -= "
            f"...` writes into the caller's arrays): copy them first, "
            f"{{name: value.copy() for name, value in params.items()}}, so that a second run "
            f"can start from the same weights.",
        )
    if not isinstance(result, tuple) or len(result) != 2:
        check.fail(
            exercise,
            f"{what} returned {check.with_article(result)}: return a pair (params, losses), "
            f"the trained parameters and the list of the losses, one per step.",
        )
    trained, losses = result
    losses_array = check.as_array(exercise, f"the list of losses from {what}", losses)
    if losses_array.shape != (steps,):
        got = losses_array.shape[0] if losses_array.ndim == 1 else losses_array.shape
        check.fail(
            exercise,
            f"{what} returned {got} loss value(s), expected {steps}: record grads['loss'] "
            f"once per step, before that step's update.",
        )
    mistakes = {
        "the loss goes up: step against the gradient, params[name] - lr * grads[name].": (
            ascent_losses
        ),
    }
    if steps > 1:
        mistakes[
            "the loss never changes, so the weights never moved: `value = value - lr * g` in "
            "a loop over params.items() only rebinds the loop variable. Store the result, "
            "params[name] = params[name] - lr * grads[name]."
        ] = [expected_losses[0]] * steps
    one_late = _train_with_minigrad(params, x, labels, lr, steps + 1)[1][1:]
    mistakes[
        "every loss is one step late: record grads['loss'], the loss before this step's "
        "update, not a loss computed after it."
    ] = one_late
    check.expect_close(
        exercise, f"the list of losses from {what}", losses_array, expected_losses, mistakes
    )
    if not isinstance(trained, dict) or any(k not in trained for k in PARAMETER_NAMES):
        check.fail(
            exercise,
            f"the trained params should be a dict with the keys "
            f"{', '.join(repr(k) for k in PARAMETER_NAMES)}; got {check.with_article(trained)}.",
        )
    for name in PARAMETER_NAMES:
        check.expect_close(
            exercise,
            f"the trained {name} after {steps} step(s)",
            trained[name],
            expected_params[name],
            {
                "the weights moved uphill: subtract lr * gradient.": ascent_params[name],
                "the weights never moved: `value = value - lr * g` in a loop over "
                "params.items() only rebinds the loop variable. Store the result, "
                "params[name] = params[name] - lr * grads[name].": params[name],
            },
        )


# --------------------------------------------------------------------------- after Exercise 11.6


def mlp_by_hand(
    x: np.ndarray,
    labels: np.ndarray,
    W1: np.ndarray,
    b1: np.ndarray,
    W2: np.ndarray,
    b2: np.ndarray,
) -> dict[str, Any]:
    """The loss of the MLP and its gradient for every array, by hand with NumPy: the
    reference solution of Exercise 11.5, for the lesson's cells after it.

    With z1 = x W1ᵀ + b1, h = relu(z1), ℓ = h W2ᵀ + b2 and L the mean cross-entropy over
    the N rows: ∂L/∂ℓ = (softmax(ℓ) - onehot(labels)) / N, ∂L/∂W2 = (∂L/∂ℓ)ᵀ h,
    ∂L/∂b2 = Σ_rows ∂L/∂ℓ, ∂L/∂h = (∂L/∂ℓ) W2, ∂L/∂z1 = ∂L/∂h · [z1 > 0], and the same
    again for the first layer. Shapes: each gradient has the shape of its array."""
    n = x.shape[0]
    z1 = x @ W1.T + b1
    h = np.maximum(z1, 0)
    logits = h @ W2.T + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(n), labels].mean()
    d_logits = np.exp(log_probs)  # the softmax
    d_logits[np.arange(n), labels] -= 1
    d_logits /= n
    d_h = d_logits @ W2
    d_z1 = d_h * (z1 > 0)
    grads = {"loss": float(loss), "logits": d_logits, "W2": d_logits.T @ h}
    grads.update({"b2": d_logits.sum(axis=0), "h": d_h, "z1": d_z1, "W1": d_z1.T @ x})
    grads.update({"b1": d_z1.sum(axis=0), "x": d_z1 @ W1})
    return grads


def train_by_hand(
    grad_fn: Callable[..., dict],
    params: dict,
    x: np.ndarray,
    labels: np.ndarray,
    lr: float,
    steps: int,
) -> tuple[dict, list]:
    """`steps` steps of gradient descent with grad_fn's gradients, on copies of params:
    (trained params, losses). The reference solution of Exercise 11.6."""
    params = {name: np.array(value, dtype=float) for name, value in params.items()}
    losses = []
    for _ in range(steps):
        grads = grad_fn(x, labels, **params)
        losses.append(float(grads["loss"]))
        for name in params:
            params[name] = params[name] - lr * grads[name]
    return params, losses


# --------------------------------------------------------------------------- Exercise 11.7


def softplus(a: Value) -> Value:
    """softplus(a) = log(1 + e^a) elementwise, finite for every float a (the solution of
    Exercise 11.7).

    Forward: the log-sum-exp of the row [0, a], shifted by m = max(a, 0), is
    m + log(e^-m + e^(a-m)) = max(a, 0) + log1p(e^-|a|). Backward: d softplus/da =
    e^a / (1 + e^a) = σ(a) = e^(a - softplus(a)), an exponent that is never positive."""
    out = np.maximum(a.data, 0) + np.log1p(np.exp(-np.abs(a.data)))
    return Value(out, (a,), (lambda grad_output: grad_output * np.exp(a.data - out),))


def _softplus_closed_form(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softplus(a) and σ(a) by NumPy's logaddexp: log(e^0 + e^a), and e^-log(1 + e^-a)."""
    return np.logaddexp(0.0, a), np.exp(-np.logaddexp(0.0, -a))


SOFTPLUS_TAILS = np.array([-800.0, -30.0, -1.0, 0.0, 0.5, 30.0, 800.0])

_SOFTPLUS_FORWARD_OVERFLOW = (
    "np.log(1 + np.exp(a)) overflows: np.exp(800) is inf, so the log is inf too. Shift as "
    "the log-sum-exp of section 7 does: softplus(a) is the log-sum-exp of the row [0, a], "
    "so with m = max(a, 0), softplus(a) = m + log(e^-m + e^(a - m)), where no exponent is "
    "positive."
)
_SOFTPLUS_SHIFT_BY_A = (
    "it is inf at a = -800 only: shift by |a|, not by a. With m = max(a, 0), the exponent "
    "left is a - m = -|a|; exp(-a) overflows at a = -800 (exp(800) is inf), so write "
    "max(a, 0) + log1p(exp(-|a|))."
)
_SOFTPLUS_BACKWARD_OVERFLOW = (
    "the result happens to be right here (1/inf is 0, or the inf sits in a branch a where "
    "throws away), but the exercise asks for a backward in which no exponential can "
    "overflow: the same inf in inf/inf or inf - inf would be nan. Write "
    "the share with the output, grad_output * exp(a - out), where a - out is never "
    "positive (or with a sigmoid that only ever takes exp(-|a|))."
)
_SOFTPLUS_CANCELS = (
    "1 - exp(-out) cancels where softplus is tiny: out is about 1e-13 at a = -30, exp(-out) "
    "rounds to a float next to 1, and the difference keeps only a few correct digits (at "
    "a = -40 it is 0 instead of 4.2e-18). Write σ(a) = exp(a - out), or a stable sigmoid, "
    "with no 1 - (something close to 1) in it."
)
_SOFTPLUS_BACKWARD_NAN = (
    "the share contains inf or nan at a = ±800 although softplus itself is finite there. "
    "e^a / (1 + e^a) is inf/inf = nan at a = 800 (and an exp of -a overflows at a = -800). "
    "Rewrite the derivative so that no exponent can be large and positive: with the output "
    "out = softplus(a), e^a / (1 + e^a) = e^(a - out), and a - out is never positive."
)


def _softplus_mistakes(a: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """The share each likely slip gives (at inputs where the slip stays finite)."""
    _, sigma = _softplus_closed_form(a)
    _, sigma_of_minus = _softplus_closed_form(-a)
    return {
        "that is σ(-a) = 1/(1 + e^a): differentiate log(1 + e^a) with the chain rule, "
        "(1/(1 + e^a)) · e^a, and keep the e^a: the derivative is e^a/(1 + e^a) = σ(a).": (
            v * sigma_of_minus
        ),
        "that is the local derivative alone: multiply it by grad_output, the v in vᵀJ "
        "(here v is not all ones).": sigma,
        "that is grad_output * e^a, the derivative of the inner e^a alone: the chain rule "
        "multiplies it by the log's derivative, 1/(1 + e^a).": v * np.exp(np.minimum(a, 700.0)),
        "that is σ(a)(1 - σ(a)), the derivative of σ: softplus' is σ(a) itself.": (
            v * sigma * (1 - sigma)
        ),
    }


def check_11_7(softplus: Callable) -> None:
    """softplus(a) returns a Value with a finite forward and a finite, right backward at
    every float a, including ±800.

    The inputs are the course's reference Values; the expected values come from NumPy's
    logaddexp (softplus(a) = log(e^0 + e^a), σ(a) = e^-softplus(-a))."""
    exercise = "11.7"
    _callable(exercise, softplus, "softplus")
    for label, a, v in [
        ("softplus(a) at a = 1.5", np.array(1.5), np.array(2.0)),
        (
            "softplus(a) at a = -800, -30, -1, 0, 0.5, 30, 800",
            SOFTPLUS_TAILS.copy(),
            # The 0 at a = 0, so that a = -30 holds the share to relative accuracy.
            np.array([1.5, 0.5, 2.0, 0.0, 3.0, 1.0, 0.75]),
        ),
    ]:
        node = Value(a.copy())
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            out = check.call(exercise, label, softplus, node)
        if not _is_value_like(out):
            check.fail(
                exercise,
                f"{label} returned {check.with_article(out)}: return a new Value, "
                f"Value(out, (a,), backward_fns).",
            )
        if len(tuple(out.parents)) != 1 or tuple(out.parents)[0] is not node:
            check.fail(exercise, f"{label}.parents should be (a,): the input Value itself.")
        if len(tuple(out.backward_fns)) != 1:
            check.fail(exercise, f"{label} should have one backward function, for its one parent.")
        expected_out, sigma = _softplus_closed_form(a)
        forward = check.as_array(exercise, f"{label}.data", out.data)
        if forward.shape == a.shape and not np.all(np.isfinite(forward)):
            left_only = not np.any(~np.isfinite(forward) & (a >= 0))
            hint = _SOFTPLUS_SHIFT_BY_A if left_only else _SOFTPLUS_FORWARD_OVERFLOW
            check.fail(exercise, f"{label}.data contains inf or nan: {hint}")
        check.expect_close(
            exercise,
            f"{label}.data",
            forward,
            expected_out,
            {
                "that is the shifted sum without its shift: with m = max(a, 0), "
                "softplus(a) = m + log(e^-m + e^(a - m)); the m in front is missing.": (
                    expected_out - np.maximum(a, 0)
                ),
            },
        )
        given = v.copy()
        what = f"{label}: backward_fns[0](grad_output)"
        overflows_at = _softplus_share_overflows(softplus, a)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            share = check.call(exercise, what, tuple(out.backward_fns)[0], given)
        if not np.array_equal(given, v):
            check.fail(
                exercise,
                f"{what} changed grad_output in place: return a new array, "
                f"`return grad_output * ...`.",
            )
        share_array = check.as_array(exercise, what, share)
        if share_array.shape == a.shape and not np.all(np.isfinite(share_array)):
            check.fail(exercise, f"{what}: {_SOFTPLUS_BACKWARD_NAN}")
        check.expect_close(exercise, what, share_array, v * sigma, _softplus_mistakes(a, v))
        if overflows_at:
            places = " and at ".join(
                f"a = {x:g} ({'exp(-a)' if x < 0 else 'exp(a)'} = exp({abs(x):g}) is inf)"
                for x in overflows_at
            )
            check.fail(exercise, f"{what}: an exponential overflows at {places}: "
                                 f"{_SOFTPLUS_BACKWARD_OVERFLOW}")
        check_softplus_share_relative(exercise, what, a, v, share_array)
    check.passed(exercise)


def _share_overflows(softplus: Callable, a: np.ndarray) -> bool:
    """Whether the learner's backward (the share, not the forward) makes an exponential
    overflow on a, run with overflow raised as an error. Any other error is left to the
    check's own call, which reports it."""
    try:
        with np.errstate(all="ignore"):
            function = tuple(softplus(Value(a.copy())).backward_fns)[0]
        with np.errstate(over="raise", invalid="ignore", divide="ignore", under="ignore"):
            function(np.ones_like(a))
    except FloatingPointError:
        return True
    except Exception:  # noqa: BLE001 - reported by the check's own call
        return False
    return False


def _softplus_share_overflows(softplus: Callable, a: np.ndarray) -> list[float]:
    """The entries of `a` at which the learner's share makes an exponential overflow (one
    entry at a time, to name them); all of `a` when only the whole array shows it."""
    if not _share_overflows(softplus, a):
        return []
    places = [float(x) for x in np.ravel(a) if _share_overflows(softplus, np.array(x))]
    return places or [float(x) for x in np.ravel(a)]


def check_softplus_share_relative(
    exercise: str, what: str, a: np.ndarray, v: np.ndarray, share: np.ndarray
) -> None:
    """The share against v·σ(a) to a relative error of 1e-6 at every entry, where σ(a) is
    tiny too (far in the negative tail), naming a 1 - exp(-out) that cancels there."""
    expected = v * _softplus_closed_form(a)[1]
    error = np.abs(share - expected)
    wrong = error > 1e-6 * np.abs(expected)
    if not np.any(wrong):
        return
    worst = np.argmax(np.where(wrong, error / np.maximum(np.abs(expected), 1e-300), 0.0))
    at, got, want = np.ravel(a)[worst], np.ravel(share)[worst], np.ravel(expected)[worst]
    with np.errstate(all="ignore"):
        cancels = v * (1 - np.exp(-_softplus_closed_form(a)[0]))
    named = np.allclose(share, cancels, rtol=1e-9, atol=0.0)
    hint = _SOFTPLUS_CANCELS if named else (
        "the share loses its relative accuracy where σ(a) is tiny: a difference of two "
        "numbers close to 1 (such as 1 - exp(-out)) cancels there. Write σ(a) = "
        "exp(a - out), or a stable sigmoid, with no 1 - (something close to 1) in it."
    )
    check.fail(
        exercise,
        f"{what} is right to 1e-8 but not relative to its size where it is tiny: at "
        f"a = {at:g} it is {got:.4g}, expected {want:.4g} (a relative error of "
        f"{abs(got - want) / abs(want):.1e}). {hint}",
    )

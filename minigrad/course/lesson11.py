"""Checks for lesson 11 (build an engine in one sitting).

The learner writes a `Value` class, three operations, a backward walk and, by hand, the
backward pass of a two-layer MLP. Every check runs that code on fresh graphs and inputs of
its own and compares the gradients with the ones minigrad computes for the same graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad.nn.functional as F
from minigrad.course import check
from minigrad.variable import Variable

CHAIN_LENGTH = 10_000  # ten times Python's default recursion limit (1000)

RECURSION_HINT = (
    "Your code hit Python's recursion limit (about 1000 nested calls) on a chain of "
    f"{CHAIN_LENGTH:,} nodes, so it calls itself once per node. Count the consumers with a "
    "loop and an explicit stack (a list), then run the nodes from a ready list, as in "
    "lesson 02's ordered_backward: no function that calls itself."
)


def _callable(exercise: str, value: Any, name: str) -> None:
    if not callable(value):
        check.fail(exercise, f"{name} should be a function; got {check.with_article(value)}.")


def _value_class(exercise: str, value_class: Any, needs_11_1: bool = False) -> None:
    if not isinstance(value_class, type):
        check.fail(
            exercise,
            f"pass the class itself, `Value`, not {check.with_article(value_class)}.",
        )
    if not needs_11_1:
        return
    try:
        value_class(1.0)
    except NotImplementedError as error:
        if check.is_stub(error):
            check.fail(
                exercise,
                "this exercise builds its graphs with your Value, and Value(1.0) still raises "
                "NotImplementedError: write Exercise 11.1 first.",
            )
        raise


# --------------------------------------------------------------------------- Exercise 11.1


def check_11_1(value_class: type) -> None:
    """Value(data, parents=(), backward_fns=()) stores float data, zero grad and its links."""
    exercise = "11.1"
    _value_class(exercise, value_class)

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
        check.explain_error(exercise, "Value(2.0, (a, b), (share_a,))", error)
    else:
        check.fail(
            exercise,
            "Value(2.0, (a, b), (share_a,)) has two parents but one backward function, and "
            "it was accepted: raise a ValueError when len(parents) != len(backward_fns), or "
            "backward's zip() would silently skip a parent.",
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.2

# (label, inputs, minigrad version) for the three operations.
_OPS_CASES: list[tuple[str, str, list[Any], Any]] = [
    ("add", "add(a, b)", [[0.5, -1.5, 2.0], [3.0, 0.25, -1.0]], lambda a, b: a + b),
    ("add", "add(a, a)", [[0.5, -1.5, 2.0]], lambda a: a + a),
    ("mul", "mul(a, b)", [[0.5, -1.5, 2.0], [3.0, 0.25, -1.0]], lambda a, b: a * b),
    ("mul", "mul(a, b) on scalars", [1.5, -4.0], lambda a, b: a * b),
    ("mul", "mul(a, a)", [[0.5, -1.5, 2.0]], lambda a: a * a),
    ("tanh", "tanh(a)", [[0.3, -1.2, 0.8]], lambda a: a.tanh()),
    ("tanh", "tanh(a) on a scalar", [0.6], lambda a: a.tanh()),
]


def _minigrad_shares(function: Any, inputs: list[Any], grad_output: np.ndarray) -> list:
    """vᵀJ for each input of `function`, by minigrad: backward with gradient=grad_output."""
    variables = [Variable(np.asarray(x, dtype=np.float64), requires_grad=True) for x in inputs]
    output = function(*variables)
    output.backward(Variable(grad_output))
    return [np.asarray(v.grad.data) for v in variables], np.asarray(output.data)


def _op_mistakes(name: str, inputs: list[np.ndarray], v: np.ndarray, k: int) -> dict:
    """Hints for known slips in the k-th backward function of an operation."""
    if name == "add":
        return {
            "that is ones, the derivative alone: return grad_output itself, the v in "
            "vᵀJ (here v is not all ones).": np.ones_like(v),
            "that is grad_output times 2: the share of one parent is grad_output itself. "
            "When a parent is used twice, the walk adds both shares; the operation does not.": (
                2 * v
            ),
        }
    if name == "mul":
        a = inputs[0]
        b = inputs[1] if len(inputs) > 1 else inputs[0]
        mine, other = (a, b) if k == 0 else (b, a)
        return {
            "that is the derivative alone: multiply it by grad_output, the v in vᵀJ "
            "(here v is not all ones).": other,
            "that is grad_output times this parent's own data: d(a*b)/da is b, so a's "
            "share is grad_output * b.data, and b's is grad_output * a.data.": v * mine,
        }
    t = np.tanh(inputs[0])
    return {
        "that is the derivative alone: multiply it by grad_output, the v in vᵀJ "
        "(here v is not all ones).": 1 - t**2,
        "that uses 1 - tanh(x): the derivative of tanh is 1 - tanh(x)**2, squared.": v * (1 - t),
        "that uses the input: the derivative is 1 - t**2 with t = tanh(x), the output, not "
        "1 - x**2.": v * (1 - inputs[0] ** 2),
        "that is grad_output * tanh(x): the derivative of tanh is 1 - tanh(x)**2.": v * t,
    }


def check_11_2(value_class: type, add: Callable, mul: Callable, tanh: Callable) -> None:
    """add, mul and tanh return a Value whose backward_fns give each parent's vᵀJ."""
    exercise = "11.2"
    _value_class(exercise, value_class, needs_11_1=True)
    ops = {"add": add, "mul": mul, "tanh": tanh}
    for name, op in ops.items():
        _callable(exercise, op, name)
    rng = np.random.default_rng(1111)
    for name, label, raw_inputs, reference in _OPS_CASES:
        inputs = [np.asarray(x, dtype=np.float64) for x in raw_inputs]
        parents = [value_class(x.copy()) for x in inputs]
        call_args = list(parents)
        if label.endswith("(a, a)"):
            call_args = [parents[0], parents[0]]
        out = check.call(exercise, label, ops[name], *call_args)
        if not isinstance(out, value_class):
            check.fail(
                exercise,
                f"{label} returned {check.with_article(out)}: return a new Value, built as "
                f"Value(result, parents, backward_fns).",
            )
        v = np.round(rng.uniform(0.5, 2.0, size=inputs[0].shape), 2)
        shares, forward = _minigrad_shares(reference, inputs, v)
        check.expect_close(exercise, f"{label}.data", out.data, forward)
        expected_parents = tuple(call_args)
        got_parents = tuple(out.parents)
        if len(got_parents) != len(expected_parents) or any(
            p is not q for p, q in zip(got_parents, expected_parents)
        ):
            check.fail(
                exercise,
                f"{label}.parents should be the input Values themselves, in order "
                f"({len(expected_parents)} of them; a Value used twice appears twice), "
                f"not their data or copies.",
            )
        functions = tuple(out.backward_fns)
        if len(functions) != len(got_parents):
            check.fail(
                exercise,
                f"{label} has {len(got_parents)} parent(s) but {len(functions)} backward "
                f"function(s): give one function per parent.",
            )
        for k, function in enumerate(functions):
            who = "a" if k == 0 else "b"
            what = f"{label}: backward_fns[{k}](grad_output), the share of {who},"
            given = v.copy()
            share = check.call(exercise, what, function, given)
            if not np.array_equal(given, v):
                check.fail(
                    exercise,
                    f"{what} changed grad_output in place (e.g. `grad_output *= ...`): that "
                    f"array is the node's own .grad, and other parents may receive it too. "
                    f"Return a new array: `return grad_output * ...`.",
                )
            expected = shares[0] if len(raw_inputs) == 1 else shares[k]
            if len(raw_inputs) == 1 and len(functions) == 2:
                expected = shares[0] / 2  # minigrad's a.grad sums both edges' shares
            mistakes = _op_mistakes(name, inputs, v, k)
            check.expect_close(exercise, what, share, expected, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.3


class _Ops:
    """The three operations, built with the learner's Value and the check's own closures,
    so that check 11.3 tests the walk alone."""

    def __init__(self, value_class: type) -> None:
        self.value = value_class

    def leaf(self, data: Any) -> Any:
        return self.value(np.asarray(data, dtype=np.float64))

    def add(self, a: Any, b: Any) -> Any:
        return self.value(a.data + b.data, (a, b), (lambda g: g, lambda g: g))

    def mul(self, a: Any, b: Any) -> Any:
        return self.value(a.data * b.data, (a, b), (lambda g: g * b.data, lambda g: g * a.data))

    def tanh(self, a: Any) -> Any:
        t = np.tanh(a.data)
        return self.value(t, (a,), (lambda g: g * (1 - t**2),))


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
    ("a diamond: a = x*w feeds p = 3a, q = tanh(tanh(a)) and y = p*q + a", _graph_diamond),
    (f"a chain of about {CHAIN_LENGTH:,} operations", _graph_chain),
]


def _minigrad_grads(build: Callable, names: list[str]) -> dict[str, np.ndarray]:
    output, named = build(_MinigradOps)
    for name in names:
        if named[name].grad_fn is not None:
            named[name].retain_grad()
    output.backward(Variable(np.ones_like(np.asarray(output.data))))
    return {name: np.asarray(named[name].grad.data) for name in names}


def check_11_3(value_class: type, backward: Callable) -> None:
    """backward(output) fills .grad of every node, each node run once, without recursion."""
    exercise = "11.3"
    _value_class(exercise, value_class, needs_11_1=True)
    _callable(exercise, backward, "backward")
    ops = _Ops(value_class)
    for label, build in _GRAPHS_113:
        output, named = check.call(exercise, f"building {label}", build, ops)
        names = list(named)
        expected = _minigrad_grads(build, names)
        check.call(exercise, f"backward(y) for {label}", backward, output, hints=[_recursion_hint])
        if all(np.all(np.asarray(named[n].grad) == 0) for n in names):
            check.fail(
                exercise,
                f"for {label}, every gradient is still 0: start the walk by setting "
                f"output.grad = np.ones_like(output.data), the seed ∂y/∂y = 1.",
            )
        for name in names:
            _compare_walk(exercise, f"for {label}, {name}.grad", named[name].grad, expected[name])
    _check_accumulation(exercise, ops, backward)
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


def _check_accumulation(exercise: str, ops: _Ops, backward: Callable) -> None:
    """Two graphs that share the leaf x: like minigrad, x.grad holds the sum of both."""
    x = ops.leaf(0.7)
    first = ops.mul(x, ops.leaf(3.0))
    second = ops.tanh(x)
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


def check_11_4(mlp_forward_backward: Callable) -> None:
    """mlp_forward_backward returns the loss and the gradient of every intermediate."""
    exercise = "11.4"
    _callable(exercise, mlp_forward_backward, "mlp_forward_backward")
    cases = [
        ("on a batch of 5", _mlp_case(2024)),
        ("on a batch of 8 with other sizes", _mlp_case(7, n=8, d=2, hidden=6, classes=4)),
        ("on a batch of 6 whose logits are in the thousands", _mlp_case(11, n=6, scale=900.0)),
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
            check.expect_close(
                exercise, what_key, got, expected[key], mistakes, rtol=1e-6, atol=1e-9
            )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 11.5

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


def _minigrad_gradients(x: np.ndarray, labels: np.ndarray, W1, b1, W2, b2) -> dict:
    """The gradient function the check hands to train_by_hand: minigrad's, as NumPy."""
    return mlp_reference(x, labels, W1, b1, W2, b2)


def check_11_5(train_by_hand: Callable) -> None:
    """train_by_hand(grad_fn, params, x, labels, lr, steps) runs gradient descent on copies."""
    exercise = "11.5"
    _callable(exercise, train_by_hand, "train_by_hand")
    case = _mlp_case(55, n=12, d=2, hidden=5, classes=3)
    x, labels = case["x"], case["labels"]
    params = {k: case[k] for k in PARAMETER_NAMES}
    lr, steps = 0.3, 8
    expected_params, expected_losses = _train_with_minigrad(params, x, labels, lr, steps)
    ascent_params, ascent_losses = _train_with_minigrad(params, x, labels, -lr, steps)

    given = {k: v.copy() for k, v in params.items()}
    what = f"train_by_hand(grad_fn, params, x, labels, lr={lr}, steps={steps})"
    hints = [
        (
            KeyError,
            "loss",
            "The loop updated a key that is not a parameter: grad_fn's dict also holds "
            "'loss', the intermediates and 'x'. Update only the names in params.",
        )
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
            f"the trained parameters and the list of the {steps} losses.",
        )
    trained, losses = result
    losses_array = check.as_array(exercise, "the losses", losses)
    if losses_array.shape != (steps,):
        check.fail(
            exercise,
            f"the losses have shape {losses_array.shape}, expected ({steps},): record "
            f"grads['loss'] once per step, {steps} steps in all.",
        )
    mistakes = {
        "the loss goes up: step against the gradient, params[name] - lr * grads[name].": (
            ascent_losses
        ),
        "the loss never changes, so the weights never moved: `value = value - lr * g` in a "
        "loop over params.items() only rebinds the loop variable. Store the result, "
        "params[name] = params[name] - lr * grads[name].": [expected_losses[0]] * steps,
    }
    check.expect_close(exercise, "the losses", losses_array, expected_losses, mistakes)
    if not isinstance(trained, dict) or any(k not in trained for k in PARAMETER_NAMES):
        check.fail(
            exercise,
            f"the trained params should be a dict with the keys "
            f"{', '.join(repr(k) for k in PARAMETER_NAMES)}; got {check.with_article(trained)}.",
        )
    for name in PARAMETER_NAMES:
        check.expect_close(
            exercise,
            f"the trained {name}",
            trained[name],
            expected_params[name],
            {"the weights moved uphill: subtract lr * gradient.": ascent_params[name]},
        )
    check.passed(exercise)

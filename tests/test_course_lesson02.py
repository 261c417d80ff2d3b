"""Lesson 02's checks: the reference solutions pass, and the usual mistakes get their hint."""

from __future__ import annotations

from collections import deque

import pytest

import minigrad
from minigrad.course import CheckError, lesson02

# --------------------------------------------------------------------------- Exercise 2.1


def test_2_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_1(148.5, 186.0)
    assert "Exercise 2.1: correct." in capsys.readouterr().out


def test_2_1_accepts_the_engines_variables(capsys: pytest.CaptureFixture) -> None:
    x = minigrad.Variable(2.0, requires_grad=True)
    w = minigrad.Variable(1.5, requires_grad=True)
    a = w * x
    (a**2 * (3 * a + x)).backward()
    lesson02.check_2_1(x.grad, w.grad)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("grad_x", "grad_w", "hint"),
    [
        (139.5, 186.0, r"forget the direct edge x -> q"),
        (108.0, 132.0, r"only the path through p arrived at a.*Did you forget q\?"),
        (49.5, 54.0, r"only the path through q arrived at a.*Did you forget p\?"),
        (99.0, 120.0, r"local derivative of p = a\*\*2 is 2a, not 2"),
        (195.0, 139.5, r"swapped them"),
        (148.5, 139.5, r"with respect to w is x, not w"),
        (186.0, 148.5, r"grad_x and grad_w are swapped"),
        (None, 186.0, r"grad_x is None"),
        (150.0, 186.0, r"grad_x is 150, expected 148\.5\.$"),
    ],
)
def test_2_1_mistakes(grad_x: float | None, grad_w: float, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_1(grad_x, grad_w)


# --------------------------------------------------------------------------- Exercise 2.2


def order_by_counting(root):
    """The reference: count consumers, then release each node after its last consumer."""
    consumers, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            consumers[next_node] = consumers.get(next_node, 0) + 1
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            consumers[next_node] -= 1
            if consumers[next_node] == 0:
                ready.append(next_node)
    return order


def order_by_recursion(root):
    """A correct order (reversed depth-first post-order), but recursive."""
    done, post = set(), []

    def visit(node):
        done.add(node)
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in done:
                visit(next_node)
        post.append(node)

    visit(root)
    return post[::-1]


def preorder_without_seen(root):
    """Depth-first pre-order that lists a node every time it is reached."""
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return order


def breadth_first(root):
    """Each node once, in the order it is first reached: not a topological order."""
    order, seen, queue = [], {root}, deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                queue.append(next_node)
    return order


def keeps_none(root):
    """The reference, with the (None, 0) entries of constants listed as nodes."""
    order = order_by_counting(root)
    extra = [n for node in order for n, _ in node.next_functions if n is None]
    return order + extra[:1]


def without_leaves(root):
    """The reference, minus the AccumulateGrad nodes."""
    return [node for node in order_by_counting(root) if node.name() != "AccumulateGrad"]


def reversed_order(root):
    """Leaves first: the forward order, not the backward one."""
    return order_by_counting(root)[::-1]


def no_return(root):
    order_by_counting(root)


def test_2_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_2(order_by_counting)
    assert "Exercise 2.2: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (order_by_recursion, r"recursion limit.*explicit stack"),
        (preorder_without_seen, r"for a \+ a, <\w+> is listed twice.*set of the nodes"),
        (breadth_first, r"<AccumulateGrad> .* comes before <MulBackward>.*count each node's"),
        (keeps_none, r"contains None.*\(None, 0\)"),
        (without_leaves, r"missing, e\.g\. <AccumulateGrad>"),
        (reversed_order, r"first node must be the output's node"),
        (no_return, r"returned None: did you forget `return`"),
        (lambda root: {root}, r"return a list of nodes; got a set"),
    ],
)
def test_2_2_mistakes(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_2(answer)


def test_2_2_variables_instead_of_nodes() -> None:
    def values(root):
        return [minigrad.Variable(1.0) for _ in order_by_counting(root)]

    with pytest.raises(CheckError, match="contains Variables"):
        lesson02.check_2_2(values)


# --------------------------------------------------------------------------- Exercise 2.3


def fit_slope(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= lr * w.grad.data


def fit_slope_no_zero(w, xs, ys, lr, steps):
    for _ in range(steps):
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= lr * w.grad.data


def fit_slope_ascent(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w.data += lr * w.grad.data


def fit_slope_rebinds(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w = minigrad.Variable(w.data - lr * w.grad.data, requires_grad=True)


def fit_slope_one_short(w, xs, ys, lr, steps):
    for _ in range(1, steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= lr * w.grad.data


def test_2_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_3(fit_slope)
    assert "Exercise 2.3: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (fit_slope_no_zero, r"forget to zero \.grad between steps"),
        (fit_slope_ascent, r"moved uphill"),
        (fit_slope_rebinds, r"still 0: update the caller's w in place"),
        (fit_slope_one_short, r"after 5 steps: is one step missing"),
        ("fit_slope", r"pass the function itself"),
    ],
)
def test_2_3_mistakes(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_3(answer)


def test_2_3_numpy_reference_matches_the_engine() -> None:
    (xs, ys, lr, steps), _ = lesson02._datasets_23()
    w = minigrad.Variable(0.0, requires_grad=True)
    fit_slope(w, minigrad.Variable(xs), minigrad.Variable(ys), lr, steps)
    assert w.item() == pytest.approx(lesson02.fit_slope_numpy(xs, ys, lr, steps))


# --------------------------------------------------------------------------- Exercise 2.4


def derivative(f, x):
    (slope,) = minigrad.grad(f(x), x)
    return slope


def derivative_by_backward(f, x):
    f(x).backward()
    return x.grad


def derivative_zeroing_x_only(f, x):
    x.grad = None
    f(x).backward()
    slope = x.grad
    x.grad = None
    return slope


def derivative_zeroing_before(f, x):
    x.grad = None
    f(x).backward()
    return x.grad


def derivative_tuple(f, x):
    return minigrad.grad(f(x), x)


def value_instead(f, x):
    return f(x)


def test_2_4_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_4(derivative)
    assert "Exercise 2.4: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (derivative_by_backward, r"call 2 .* exactly 2 times the expected value"),
        (derivative_zeroing_x_only, r"w\.grad \(a weight inside f\) was changed"),
        (derivative_zeroing_before, r"x\.grad is set after derivative\(f, x\)"),
        (derivative_tuple, r"returned a tuple of 1.*element \[0\]"),
        (value_instead, r"that is f\(x\), the value"),
    ],
)
def test_2_4_mistakes(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_4(answer)


# --------------------------------------------------------------------------- errors in the answers


def test_2_1_product_rule_slip() -> None:
    # p̄ = p and q̄ = q instead of p̄ = q and q̄ = p: a_bar = 9·6 + 11·3 = 87.
    assert lesson02.diamond_21(2.0, 1.5, "swapped bars") == (141.5, 174.0)
    with pytest.raises(
        CheckError, match=r"grad_x is 141\.5, .*for y = p·q, ∂y/∂p = q and ∂y/∂q = p"
    ):
        lesson02.check_2_1(141.5, 174.0)
    with pytest.raises(CheckError, match=r"grad_w is 174, .*for y = p·q, ∂y/∂p = q and ∂y/∂q = p"):
        lesson02.check_2_1(148.5, 174.0)


def _stub(name: str):
    def stub(*args):
        raise NotImplementedError(f"Exercise {name}: ...")

    return stub


@pytest.mark.parametrize(
    ("check", "exercise"),
    [
        (lesson02.check_2_2, "2.2"),
        (lesson02.check_2_3, "2.3"),
        (lesson02.check_2_4, "2.4"),
    ],
)
def test_unwritten_exercises_say_so(check, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        check(_stub(exercise))


def fit_slope_zeroes_first(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad.zero_()  # None before the first backward()
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= lr * w.grad.data


def fit_slope_in_place_on_w(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w -= lr * w.grad  # refused: w is a leaf that requires grad


def fit_slope_rebinds_then_reads_grad(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w = w - lr * w.grad  # a new non-leaf: its .grad stays None next time round


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            fit_slope_zeroes_first,
            r"raised AttributeError: 'NoneType' object has no attribute 'zero_'\. "
            r"Before the first backward\(\), w\.grad is None: reset it after the update",
        ),
        (
            fit_slope_in_place_on_w,
            r"raised RuntimeError: a leaf Variable .* Do the update "
            r"under `with minigrad\.no_grad\(\):`",
        ),
        (fit_slope_rebinds_then_reads_grad, r"did you replace w with a new Variable"),
    ],
)
# The planted rebinding mistake reads .grad of a non-leaf, which warns as in PyTorch.
@pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning")
def test_2_3_errors_get_a_hint(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_3(answer)


def test_2_2_other_errors_are_reported_as_such() -> None:
    def crashes(root):
        return root.next_functions[5]

    with pytest.raises(CheckError, match=r"for a \+ a, backward_order\(root\) raised IndexError"):
        lesson02.check_2_2(crashes)


def test_2_4_errors_are_reported_as_such() -> None:
    def wrong_call(f, x):
        return minigrad.grad(f(x))

    with pytest.raises(CheckError, match=r"derivative\(f, x\) raised TypeError"):
        lesson02.check_2_4(wrong_call)

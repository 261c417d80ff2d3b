"""Lesson 02's checks: the reference solutions pass, and the usual mistakes get their hint."""

from __future__ import annotations

import json
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson02, raised

# --------------------------------------------------------------------------- Exercise 2.1


def test_2_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_1(148.5, 186.0)
    assert "Exercise 2.1: correct." in capsys.readouterr().out


def test_2_1_accepts_other_number_types(capsys: pytest.CaptureFixture) -> None:
    """Written differently: NumPy scalars and 0-d arrays, and an int-valued float."""
    lesson02.check_2_1(np.float64(148.5), np.array(186.0))
    lesson02.check_2_1(np.array(148.5), 186)
    assert capsys.readouterr().out.count("Exercise 2.1: correct.") == 2


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
        (None, 186.0, r"grad_x is None: assign the number you worked out to it\.$"),
        (148.5, None, r"grad_w is None: assign the number you worked out to it\.$"),
        (121.5, 150.0, r"local derivative of q = 3a \+ x with respect to a is 3, not 1"),
        (148.5, 150.0, r"grad_w is 150, expected 186: .*with respect to a is 3, not 1"),
        (99.0, 99.0, r"both are 99, the value of y = p·q itself"),
        (150.0, 186.0, r"grad_x is 150, expected 148\.5\.$"),
        (0.0, 0.0, r"grad_x is 0, expected 148\.5\.$"),  # the edge: zeros
        (186.0, 186.0, r"grad_x is 186, expected 148\.5\.$"),  # equal values: not a swap
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


def order_by_iterative_postorder(root):
    """Another right answer: a depth-first post-order with an explicit stack, reversed."""
    done, post, stack = {root}, [], [(root, iter(root.next_functions))]
    while stack:
        node, inputs = stack[-1]
        for next_node, _output_nr in inputs:
            if next_node is not None and next_node not in done:
                done.add(next_node)
                stack.append((next_node, iter(next_node.next_functions)))
                break
        else:
            stack.pop()
            post.append(node)
    return post[::-1]


def test_2_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_2(order_by_counting)
    lesson02.check_2_2(order_by_iterative_postorder)
    assert capsys.readouterr().out.count("Exercise 2.2: correct.") == 2


def test_2_2_hidden_graphs_hold_the_edge_cases() -> None:
    graphs = dict(lesson02._graphs_22())
    # a + a: one consumer uses the same node twice (two edges, one node)
    a_plus_a = graphs["a + a"].grad_fn
    assert a_plus_a.next_functions[0][0] is a_plus_a.next_functions[1][0]
    # the smallest graph: one operation, its leaf and a constant
    assert [
        n.name() for n in order_by_counting(graphs["x * 2.0, one operation on one leaf"].grad_fn)
    ] == [
        "MulBackward",
        "AccumulateGrad",
    ]
    # the chain is longer than the recursion limit
    chain = graphs[f"a chain of {lesson02.CHAIN_LENGTH} multiplications"]
    assert len(order_by_counting(chain.grad_fn)) > sys.getrecursionlimit()


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


def fit_slope_zero_before(w, xs, ys, lr, steps):
    """Another right answer: the gradient zeroed in place before backward (when there is
    one), the update under no_grad."""
    for _ in range(steps):
        if w.grad is not None:
            w.grad.zero_()
        loss = ((w * xs - ys) ** 2).mean()
        loss.backward()
        with minigrad.no_grad():
            w -= lr * w.grad


def fit_slope_zero_after(w, xs, ys, lr, steps):
    """The update under no_grad, then the gradient zeroed in place: a gradient w held
    before the call goes into the first step."""
    for _ in range(steps):
        loss = ((w * xs - ys) ** 2).mean()
        loss.backward()
        with minigrad.no_grad():
            w -= lr * w.grad
        w.grad.zero_()


def fit_slope_reset_after(w, xs, ys, lr, steps):
    """The lesson's loop with `w.grad = None` after the update (issue 36): the same slip."""
    for _ in range(steps):
        loss = ((w * xs - ys) ** 2).mean()
        loss.backward()
        w.data -= lr * w.grad.data
        w.grad = None


def fit_slope_zero_without_call(w, xs, ys, lr, steps):
    """The lesson's bug: `w.grad.zero_` without the call does nothing."""
    for _ in range(steps):
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= lr * w.grad.data
        w.grad.zero_  # noqa: B018 - the planted bug


def fit_slope_zeroes_before_update(w, xs, ys, lr, steps):
    """Zeroes the gradient between backward and the update: w never moves."""
    for _ in range(steps):
        ((w * xs - ys) ** 2).mean().backward()
        w.grad.zero_()
        w.data -= lr * w.grad.data


def fit_slope_ignores_lr(w, xs, ys, lr, steps):
    for _ in range(steps):
        w.grad = None
        ((w * xs - ys) ** 2).mean().backward()
        w.data -= w.grad.data


def test_2_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_3(fit_slope)
    lesson02.check_2_3(fit_slope_zero_before)
    assert capsys.readouterr().out.count("Exercise 2.3: correct.") == 2


def test_2_3_hidden_data_ends_with_a_single_step() -> None:
    """The boundary: with one step a forgotten reset changes nothing, so a loop that skips
    the first step (or takes none) is what this case catches."""
    steps = [case[3] for case in lesson02._datasets_23()]
    assert steps[-1] == 1

    def skips_first_step_when_told_one(w, xs, ys, lr, steps):
        if steps > 1:
            fit_slope(w, xs, ys, lr, steps)

    with pytest.raises(CheckError, match=r"after 1 steps? .*is still 0, so w never moved"):
        lesson02.check_2_3(skips_first_step_when_told_one)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (fit_slope_no_zero, r"forget to zero \.grad between steps"),
        (fit_slope_zero_without_call, r"forget to zero \.grad between steps"),
        (fit_slope_zeroes_before_update, r"still 0, so w never moved.*reset to zero before"),
        (fit_slope_ignores_lr, r"w after 6 steps \(lr=0\.1\) is "),
        (fit_slope_ascent, r"moved uphill"),
        (fit_slope_rebinds, r"still 0, so w never moved: update the caller's w in place"),
        (fit_slope_one_short, r"after 5 steps: is one step missing"),
        ("fit_slope", r"pass the function itself"),
        # Reset after the update, not before backward: right while w arrives without a
        # gradient, which only the check's last case does not.
        (
            fit_slope_reset_after,
            r"w after 3 steps \(lr=0\.1, w\.grad = 2 on entry\) is .*the gradient w held "
            r"before the call went into the first step.*not after the update",
        ),
        (fit_slope_zero_after, r"the gradient w held before the call went into the first step"),
    ],
)
def test_2_3_mistakes(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_3(answer)


def test_2_3_numpy_reference_matches_the_engine() -> None:
    xs, ys, lr, steps = lesson02._datasets_23()[0]
    w = minigrad.Variable(0.0, requires_grad=True)
    fit_slope(w, minigrad.Variable(xs), minigrad.Variable(ys), lr, steps)
    assert w.item() == pytest.approx(lesson02.fit_slope_numpy(xs, ys, lr, steps))


def test_2_3_numpy_reference_of_a_leftover_gradient_matches_the_engine() -> None:
    """The check's last case: w arrives with w.grad set. A right loop ignores it; resetting
    after the update, or never, uses it (the values the check names)."""
    xs, ys, lr, steps, leftover = lesson02._leftover_23()
    for answer, mistake in (
        (fit_slope, None),
        (fit_slope_reset_after, "reset after"),
        (fit_slope_no_zero, "no zero"),
    ):
        w = minigrad.Variable(0.0, requires_grad=True)
        w.grad = minigrad.Variable(leftover)
        answer(w, minigrad.Variable(xs), minigrad.Variable(ys), lr, steps)
        numpy = lesson02.fit_slope_numpy(xs, ys, lr, steps, mistake, leftover)
        assert w.item() == pytest.approx(numpy)
    right = lesson02.fit_slope_numpy(xs, ys, lr, steps)
    assert abs(lesson02.fit_slope_numpy(xs, ys, lr, steps, "reset after", leftover) - right) > 0.05


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


def derivative_keywords(f, x):
    """Another right answer: minigrad.autograd.grad with keywords and a list of inputs."""
    return minigrad.autograd.grad(outputs=f(x), inputs=[x])[0]


def test_2_4_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson02.check_2_4(derivative)
    lesson02.check_2_4(derivative_keywords)
    assert capsys.readouterr().out.count("Exercise 2.4: correct.") == 2


def test_2_4_hidden_vector_holds_a_zero() -> None:
    """An answer that divides by x (f(x)/x · 2, say) is caught at the 0 entry."""

    def by_division(f, x):
        (slope,) = minigrad.grad(f(x), x)
        return slope * x / x  # nan where x is 0

    with np.errstate(invalid="ignore"):
        with pytest.raises(CheckError, match=r"with x of shape \(3,\) is \[.*nan"):
            lesson02.check_2_4(by_division)


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
            r"Before the first backward\(\), w\.grad is None, so there is nothing to "
            r"zero: reset it with `w\.grad = None` before each backward\(\)",
        ),
        (
            fit_slope_in_place_on_w,
            r"raised RuntimeError: a leaf Variable .* Do the update "
            r"under `with minigrad\.no_grad\(\):`",
        ),
        (fit_slope_rebinds_then_reads_grad, r"did you replace it with a new Variable"),
    ],
)
# The planted rebinding mistake reads .grad of a non-leaf, which warns as in PyTorch.
@pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning")
def test_2_3_errors_get_a_hint(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson02.check_2_3(answer)


def test_2_3_an_error_that_only_mentions_none_gets_no_hint() -> None:
    """A TypeError raised while w.grad holds a gradient, and an AttributeError raised by hand
    (no .obj), are not blamed on a None gradient, whatever their words."""

    def raises_type_error(w, xs, ys, lr, steps):
        ((w * xs - ys) ** 2).mean().backward()
        raise TypeError("unsupported operand type(s) for *: 'float' and 'NoneType'")

    with pytest.raises(CheckError) as info:
        lesson02.check_2_3(raises_type_error)
    assert str(info.value).endswith("'float' and 'NoneType'.")

    def raises_attribute_error(w, xs, ys, lr, steps):
        raise AttributeError("'NoneType' object has no attribute 'data'")

    with pytest.raises(CheckError) as info:
        lesson02.check_2_3(raises_attribute_error)
    assert str(info.value).endswith("has no attribute 'data'.")


def test_leaf_in_place_error_is_recognised_by_type_and_site() -> None:
    w = minigrad.Variable(1.0, requires_grad=True)
    try:
        w.sub_(0.5)
    except RuntimeError as error:
        assert raised.is_leaf_in_place_error(error)
    assert not raised.is_leaf_in_place_error(
        RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    )


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


def test_2_1_placeholder_none_means_not_written() -> None:
    """The cell assigns grad_x = grad_w = None before the solution region, so the check of
    an unfinished exercise says so (it was a NameError)."""
    pattern = r"^Exercise 2.1 is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        lesson02.check_2_1(None, None)


def test_2_1_student_cells_unwritten_say_so() -> None:
    """As a learner: run the student version's exercise cell (it stops at the stub), then
    its check cell, in one namespace."""
    path = Path(__file__).parent.parent / "lessons" / "exercises" / "02_backward.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    exercise_cell = next(s for s in sources if s.startswith("# Exercise 2.1:"))
    check_cell = next(s for s in sources if s.startswith("# Check Exercise 2.1"))
    namespace: dict = {"lesson02": lesson02}
    with pytest.raises(NotImplementedError, match="^Exercise 2.1"):
        exec(exercise_cell, namespace)
    with pytest.raises(CheckError, match="^Exercise 2.1 is not written yet"):
        exec(check_cell, namespace)


def test_2_3_a_summed_loss_is_named() -> None:
    def fit_slope_sum(w, xs, ys, lr, steps):
        for _ in range(steps):
            w.grad = None
            ((w * xs - ys) ** 2).sum().backward()
            w.data -= lr * w.grad.data

    with pytest.raises(CheckError, match=r"a loss summed over the samples, len\(xs\) times"):
        lesson02.check_2_3(fit_slope_sum)

"""Lesson 04's checks: the reference answers pass, and realistic mistakes get their hint."""

import pytest

import minigrad
from minigrad.course import CheckError, lesson04


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    """A check must hand back grad mode as it found it, even after a wrong answer."""
    assert minigrad.is_grad_enabled()
    yield
    enabled = minigrad.is_grad_enabled()
    minigrad.set_grad_enabled(True)
    assert enabled, "the check left grad mode disabled"


def _passes(check, answer, capsys):
    check(answer)
    assert "correct" in capsys.readouterr().out


# --------------------------------------------------------------------------- Exercise 4.1


def evaluate(model_fn, xs):
    with minigrad.no_grad():
        predictions = [model_fn(x) for x in xs]
    return predictions


def test_4_1_reference_passes(capsys):
    _passes(lesson04.check_4_1, evaluate, capsys)


def test_4_1_reference_passes_when_called_from_no_grad(capsys):
    with minigrad.no_grad():
        _passes(lesson04.check_4_1, evaluate, capsys)
        assert not minigrad.is_grad_enabled()


def test_4_1_not_written():
    def evaluate_todo(model_fn, xs):
        raise NotImplementedError("Exercise 4.1: ...")

    with pytest.raises(CheckError, match=r"Exercise 4\.1 is not written yet: replace"):
        lesson04.check_4_1(evaluate_todo)


def test_4_1_recorded_a_graph():
    def recorded(model_fn, xs):
        return [model_fn(x) for x in xs]

    with pytest.raises(CheckError, match=r"grad_fn=<TanhBackward>: a graph was recorded"):
        lesson04.check_4_1(recorded)


def test_4_1_detached_afterwards():
    def detached(model_fn, xs):
        return [model_fn(x).detach() for x in xs]

    with pytest.raises(CheckError, match="detaching afterwards"):
        lesson04.check_4_1(detached)


def test_4_1_returned_data():
    def arrays(model_fn, xs):
        with minigrad.no_grad():
            return [model_fn(x).data for x in xs]

    with pytest.raises(CheckError, match=r"of type ndarray, not a Variable.*not its \.data"):
        lesson04.check_4_1(arrays)


def test_4_1_left_grad_mode_off():
    def leaks(model_fn, xs):
        minigrad.set_grad_enabled(False)
        return [model_fn(x) for x in xs]

    with pytest.raises(CheckError, match="still off after evaluate returned"):
        lesson04.check_4_1(leaks)


def test_4_1_switched_on_instead_of_restoring():
    def restores_true(model_fn, xs):
        minigrad.set_grad_enabled(False)
        predictions = [model_fn(x) for x in xs]
        minigrad.set_grad_enabled(True)
        return predictions

    with pytest.raises(CheckError, match="switched grad mode back on.*Restore the mode you found"):
        lesson04.check_4_1(restores_true)


def test_4_1_returned_inside_the_loop():
    def early_return(model_fn, xs):
        with minigrad.no_grad():
            for x in xs:
                return [model_fn(x)]

    with pytest.raises(CheckError, match=r"returned 1 prediction\(s\) for 3 inputs"):
        lesson04.check_4_1(early_return)


def test_4_1_same_input_every_time():
    def first_only(model_fn, xs):
        with minigrad.no_grad():
            return [model_fn(xs[0]) for _ in xs]

    with pytest.raises(CheckError, match=r"on xs\[0\] every time"):
        lesson04.check_4_1(first_only)


# --------------------------------------------------------------------------- Exercise 4.2


def sgd_step(params, lr):
    with minigrad.no_grad():
        for p in params:
            if p.grad is None:
                continue
            p -= lr * p.grad
            p.grad = None


def test_4_2_reference_passes(capsys):
    _passes(lesson04.check_4_2, sgd_step, capsys)


def test_4_2_zeroing_in_place_and_updating_data_also_pass(capsys):
    def zeroes(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p.sub_(lr * p.grad)
                    p.grad.zero_()

    def on_data(params, lr):
        for p in params:
            if p.grad is not None:
                p.data -= lr * p.grad.data
                p.grad = None

    _passes(lesson04.check_4_2, zeroes, capsys)
    _passes(lesson04.check_4_2, on_data, capsys)


def test_4_2_not_written():
    def sgd_step_todo(params, lr):
        raise NotImplementedError("Exercise 4.2: ...")

    with pytest.raises(CheckError, match=r"Exercise 4\.2 is not written yet: replace"):
        lesson04.check_4_2(sgd_step_todo)


def test_4_2_forgot_no_grad():
    def without_no_grad(params, lr):
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad
                p.grad = None

    with pytest.raises(CheckError, match="Did you forget no_grad"):
        lesson04.check_4_2(without_no_grad)


def test_4_2_forgot_to_reset_grad():
    def keeps_grad(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= lr * p.grad

    with pytest.raises(CheckError, match="forget to reset it"):
        lesson04.check_4_2(keeps_grad)


def test_4_2_sign_error():
    def uphill(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p += lr * p.grad
                    p.grad = None

    with pytest.raises(CheckError, match=r"went uphill.*`-=`, not `\+=`"):
        lesson04.check_4_2(uphill)


def test_4_2_replaced_the_parameters():
    def new_objects(params, lr):
        with minigrad.no_grad():
            for i, p in enumerate(params):
                if p.grad is not None:
                    params[i] = minigrad.Parameter(p - lr * p.grad)

    with pytest.raises(CheckError, match=r"params\[0\] is a new object"):
        lesson04.check_4_2(new_objects)


def test_4_2_rebound_the_loop_variable():
    def rebinds(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p = p - lr * p.grad  # rebinds the name only: the mistake under test
                    p.grad = None

    with pytest.raises(CheckError, match="did not change: did you rebind the loop variable"):
        lesson04.check_4_2(rebinds)


def test_4_2_switched_requires_grad_off():
    def flag_off(params, lr):
        for p in params:
            if p.grad is not None:
                p.requires_grad = False
                p -= lr * p.grad
                p.grad = None

    with pytest.raises(CheckError, match="no longer requires grad"):
        lesson04.check_4_2(flag_off)


def test_4_2_did_not_skip_missing_grads():
    def no_skip(params, lr):
        with minigrad.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None

    with pytest.raises(CheckError, match=r"\.grad None; skip it"):
        lesson04.check_4_2(no_skip)


def test_4_2_forgot_lr():
    def no_lr(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= p.grad
                    p.grad = None

    with pytest.raises(CheckError, match="ignores lr"):
        lesson04.check_4_2(no_lr)


def test_4_2_left_grad_mode_off():
    def plain_call(params, lr):
        minigrad.set_grad_enabled(False)
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad
                p.grad = None

    with pytest.raises(CheckError, match="still off after sgd_step returned"):
        lesson04.check_4_2(plain_call)


# --------------------------------------------------------------------------- Exercise 4.3


def mse(w, xs, ys, training):
    with minigrad.set_grad_enabled(training):
        residual = xs @ w - ys
        loss = (residual**2).mean()
    return loss


def test_4_3_reference_passes(capsys):
    _passes(lesson04.check_4_3, mse, capsys)


def test_4_3_not_written():
    def mse_todo(w, xs, ys, training):
        raise NotImplementedError("Exercise 4.3: ...")

    with pytest.raises(CheckError, match=r"Exercise 4\.3 is not written yet: replace"):
        lesson04.check_4_3(mse_todo)


def test_4_3_flag_inverted():
    def inverted(w, xs, ys, training):
        with minigrad.set_grad_enabled(not training):
            return ((xs @ w - ys) ** 2).mean()

    with pytest.raises(CheckError, match=r"swapped.*set_grad_enabled\(not training\)"):
        lesson04.check_4_3(inverted)


def test_4_3_plain_call_leaks():
    def plain_call(w, xs, ys, training):
        minigrad.set_grad_enabled(training)
        return ((xs @ w - ys) ** 2).mean()

    with pytest.raises(CheckError, match="plain statement"):
        lesson04.check_4_3(plain_call)


def test_4_3_flag_ignored():
    def always_records(w, xs, ys, training):
        return ((xs @ w - ys) ** 2).mean()

    with pytest.raises(CheckError, match="training=False the loss still has a grad_fn"):
        lesson04.check_4_3(always_records)


def test_4_3_never_records():
    def always_off(w, xs, ys, training):
        with minigrad.no_grad():
            return ((xs @ w - ys) ** 2).mean()

    with pytest.raises(CheckError, match="training=True the loss has no grad_fn"):
        lesson04.check_4_3(always_off)


def test_4_3_used_the_data():
    def on_data(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return ((xs @ minigrad.Variable(w.data) - ys) ** 2).mean()

    with pytest.raises(CheckError, match=r"from w\.data"):
        lesson04.check_4_3(on_data)


def test_4_3_sum_instead_of_mean():
    def summed(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return ((xs @ w - ys) ** 2).sum()

    with pytest.raises(CheckError, match="sum instead of the mean"):
        lesson04.check_4_3(summed)


def test_4_3_square_of_the_mean():
    def squared_mean(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return (xs @ w - ys).mean() ** 2

    with pytest.raises(CheckError, match="square first"):
        lesson04.check_4_3(squared_mean)


def test_4_3_root_mean_squared_error():
    def rmse(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return ((xs @ w - ys) ** 2).mean() ** 0.5

    with pytest.raises(CheckError, match="root mean squared error: .*drop the square root"):
        lesson04.check_4_3(rmse)


def test_4_3_if_around_no_grad():
    def branches(w, xs, ys, training):
        if not training:
            with minigrad.no_grad():
                return ((xs @ w - ys) ** 2).mean()
        return ((xs @ w - ys) ** 2).mean()

    with pytest.raises(CheckError, match="leaves the caller's mode in charge"):
        lesson04.check_4_3(branches)


def test_4_3_returned_a_number():
    def item(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return ((xs @ w - ys) ** 2).mean().item()

    with pytest.raises(CheckError, match="return the loss as a Variable"):
        lesson04.check_4_3(item)


# --------------------------------------------------------------------------- errors in the answers


def test_4_1_other_errors_are_reported_as_such():
    def wrong_name(model_fn, xs):
        with minigrad.no_grad():
            return [model_fn(x) for x in inputs]  # noqa: F821 - the planted mistake

    with pytest.raises(CheckError, match=r"evaluate\(model_fn, xs\) raised NameError: .*inputs"):
        lesson04.check_4_1(wrong_name)


def test_4_2_type_error_not_about_none_is_reported_as_it_is():
    def wrong_lr_type(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= str(lr) * p.grad
                    p.grad = None

    with pytest.raises(CheckError, match=r"sgd_step\(params, lr\) raised TypeError") as info:
        lesson04.check_4_2(wrong_lr_type)
    assert "did not use" not in str(info.value)


def test_4_2_reset_before_the_update_is_not_blamed_on_the_unused_parameter():
    def resets_first(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    grad, p.grad = p.grad, None
                    p -= lr * p.grad  # the gradient was just thrown away
                    del grad

    with pytest.raises(CheckError, match=r"params\[0\]\.grad was reset before the update used it"):
        lesson04.check_4_2(resets_first)


def test_4_3_forgot_the_mean():
    def no_mean(w, xs, ys, training):
        with minigrad.set_grad_enabled(training):
            return (xs @ w - ys) ** 2

    with pytest.raises(
        CheckError, match=r"the loss has shape \(6,\), expected \(\): .*did you forget \.mean\(\)\?"
    ) as info:
        lesson04.check_4_3(no_mean)
    assert "gradient" not in str(info.value)


# --------------------------------------------------------------------------- variants and edges


def test_4_1_another_right_answer_passes(capsys):
    """Written differently: a decorated helper and map."""

    def evaluate_with_decorator(model_fn, xs):
        @minigrad.no_grad()
        def predict_all():
            return list(map(model_fn, xs))

        return predict_all()

    _passes(lesson04.check_4_1, evaluate_with_decorator, capsys)


def test_4_1_hidden_data_ends_with_a_single_input():
    """The edge: a list of one input. An answer that drops the last input is caught there
    (and earlier), one that only works for several inputs fails on it."""

    seen = []

    def records_lengths(model_fn, xs):
        seen.append(len(xs))
        with minigrad.no_grad():
            return [model_fn(x) for x in xs]

    lesson04.check_4_1(records_lengths)
    assert seen == [3, 2, 1]


def test_4_2_the_lessons_draft_is_caught():
    """The draft of the lesson: rebinds the loop variable, so nothing changes."""

    def sgd_step_draft(params, lr):
        with minigrad.no_grad():
            for p in params:
                p = p - lr * p.grad  # noqa: PLW2901 - the planted bug
                p.grad = None

    # It also forgets to skip a parameter without a gradient: that is named first...
    with pytest.raises(CheckError, match=r"A parameter the loss did not use \(params\[2\]\)"):
        lesson04.check_4_2(sgd_step_draft)

    def draft_that_skips(params, lr):
        with minigrad.no_grad():
            for p in params:
                if p.grad is not None:
                    p = p - lr * p.grad  # noqa: PLW2901 - the planted bug
                    p.grad = None

    # ...and once that is fixed, the rebinding.
    with pytest.raises(CheckError, match="did not change: did you rebind the loop variable"):
        lesson04.check_4_2(draft_that_skips)


def test_4_2_another_right_answer_passes(capsys):
    """Written differently: another loop name, a filtered list, zero_() after an in-place mul."""

    def sgd_step_filtered(params, lr):
        with minigrad.no_grad():
            for param in [q for q in params if q.grad is not None]:
                param.sub_(param.grad * lr)
                param.grad.zero_()

    _passes(lesson04.check_4_2, sgd_step_filtered, capsys)


def test_4_2_hidden_data_has_a_scalar_with_a_zero_gradient():
    """params[3] is a 0-d Parameter whose gradient is exactly 0: the step must leave it as
    it is, and resetting its zero gradient (or not) is both fine."""
    shapes = []

    def records(params, lr):
        shapes.extend(p.shape for p in params)
        sgd_step(params, lr)
        assert params[3].grad is None

    lesson04.check_4_2(records)
    assert shapes[:4] == [(3, 2), (2,), (2,), ()]


def test_4_2_the_missing_gradient_is_found_whatever_the_loop_variable_is_called():
    def no_skip(params, lr):
        with minigrad.no_grad():
            for param in params:
                param -= lr * param.grad
                param.grad = None

    with pytest.raises(CheckError, match=r"A parameter the loss did not use \(params\[2\]\)"):
        lesson04.check_4_2(no_skip)


def test_4_3_another_right_answer_passes(capsys):
    """Written differently: a helper for the residual, pow and mean as methods."""

    def mse_helper(w, xs, ys, training):
        def residual():
            return xs @ w - ys

        with minigrad.set_grad_enabled(training):
            return residual().pow(2).mean()

    _passes(lesson04.check_4_3, mse_helper, capsys)


def test_4_3_hidden_data_ends_with_one_sample():
    """The edge N = 1: the mean of one squared residual is that square."""
    sizes = []

    def records(w, xs, ys, training):
        sizes.append(xs.shape[0])
        return mse(w, xs, ys, training)

    lesson04.check_4_3(records)
    assert sizes[-1] == 1


# --------------------------------------------------------------------------- Exercise 4.4


def saved_bytes(layers, batch, width, itemsize):
    return (2 * layers - 1) * batch * width * itemsize


def test_4_4_reference_passes(capsys):
    _passes(lesson04.check_4_4, saved_bytes, capsys)


def test_4_4_another_right_answer_passes(capsys):
    """Written differently: count the arrays node by node, in a loop, and return a float."""

    def by_nodes(layers, batch, width, itemsize):
        arrays = 0
        for layer in range(layers):
            arrays += 1  # SinBackward keeps u = h @ W
            if layer < layers - 1:
                arrays += 1  # the next MatMulBackward keeps h = sin(u)
        return float(arrays * batch * width * itemsize)

    _passes(lesson04.check_4_4, by_nodes, capsys)


def test_4_4_reference_matches_a_measurement():
    """The formula against graph_size's way of counting, on the check's own sizes."""
    import numpy as np

    rng = np.random.default_rng(0)
    dtypes = {2: np.float16, 4: np.float32, 8: np.float64}
    for layers, batch, width, itemsize in lesson04.CONFIGS_44:
        dtype = dtypes[itemsize]
        weights = [minigrad.Parameter(rng.standard_normal((width, width)).astype(dtype))]
        weights *= layers
        h = minigrad.Variable(rng.standard_normal((batch, width)).astype(dtype))
        for weight in weights:
            h = (h @ weight).sin()
        out = h.sum()
        kept, seen, stack = {}, set(), [out.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            for value in getattr(node, "saved_tensors", ()):
                if isinstance(value, minigrad.Variable) and not value.is_leaf:
                    kept[id(value._data)] = value._data.nbytes
            stack.extend(n for n, _ in node.next_functions)
        assert sum(kept.values()) == lesson04.saved_bytes_reference(layers, batch, width, itemsize)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda n, b, w, s: n * b * w * s, "one array per layer, the count for tanh"),
        (lambda n, b, w, s: 2 * n * b * w * s, "two arrays for every layer, one too many"),
        (lambda n, b, w, s: (2 * n + 1) * b * w * s, "counts the input x and the last output"),
        (
            lambda n, b, w, s: (2 * n - 1) * b * w * s + n * w * w * s,
            "counts the weights too",
        ),
        (lambda n, b, w, s: (2 * n - 1) * b * w * 8, "8 bytes per number, float64's size"),
        (lambda n, b, w, s: (2 * n - 1) * w * s, "one row per array"),
        (lambda n, b, w, s: (2 * n - 1) * b * w, "a count of numbers, not of bytes"),
        (lambda n, b, w, s: (2 * n - 1) * b * w * s * 8, "8 times the bytes, a count of bits"),
        (lambda n, b, w, s: (2 * n - 1) * b * w * s / 1024, r"the count in KiB \(bytes / 1024\)"),
        (lambda n, b, w, s: 0, r"is 0, expected 294912\.$"),  # the edge: nothing
        (lambda n, b, w, s: None, "returned None: did you forget `return`"),
        (lambda n, b, w, s: "294912", "should return a number of bytes; got a str"),
        ("saved_bytes", "pass the function itself"),
    ],
)
def test_4_4_mistakes_get_a_hint(answer, hint):
    with pytest.raises(CheckError, match=hint):
        lesson04.check_4_4(answer)


def test_4_4_hidden_data_has_one_layer_and_a_batch_of_one():
    """The edges: with one layer only sin's input is kept (so the tanh count, one array per
    layer, is right there), and a batch and width of 1."""
    configs = lesson04.CONFIGS_44
    assert any(layers == 1 for layers, *_ in configs)
    assert any(batch == 1 and width == 1 for _, batch, width, _ in configs)

    def right_for_one_layer_only(layers, batch, width, itemsize):
        return layers * batch * width * itemsize if layers == 1 else 0

    with pytest.raises(CheckError, match=r"saved_bytes\(5, 64, 128, 4\) is 0"):
        lesson04.check_4_4(right_for_one_layer_only)


def test_4_4_an_error_is_reported_as_it_is():
    def divides(layers, batch, width, itemsize):
        return (2 * layers - 1) * batch * width * itemsize // 0

    with pytest.raises(CheckError, match=r"raised ZeroDivisionError"):
        lesson04.check_4_4(divides)

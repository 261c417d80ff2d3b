"""Checks of lesson 06: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson06

FACTOR = 7.0  # a global number a wrong backward reads instead of ctx.f

# --------------------------------------------------------------------------- Exercise 6.1


def _grad_factor(gradient: Callable, forward: Callable = lambda x, f: x, save: bool = True) -> type:
    """A GradFactor whose forward returns forward(x, f) and whose backward returns
    gradient(ctx, grad_output); `save=False` leaves f off ctx."""

    class MyGradFactor(minigrad.Function):
        @staticmethod
        def forward(ctx, x, f):
            if save:
                ctx.f = f
            return forward(x, f)

        @staticmethod
        def backward(ctx, grad_output):
            return gradient(ctx, grad_output)

    return MyGradFactor


class GradFactorSetup(minigrad.Function):
    @staticmethod
    def forward(x, f):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.f = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.f, None


class GradFactorOnClass(minigrad.Function):
    """Keeps f on the class, so the last call's f wins."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x, f):
        GradFactorOnClass.factor = f
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * GradFactorOnClass.factor, None


class GradFactorGlobal(minigrad.Function):
    @staticmethod
    def forward(ctx, x, f):
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * FACTOR, None


class GradFactorUndefinedName(minigrad.Function):
    @staticmethod
    def forward(ctx, x, f):
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * f, None  # noqa: F821 - the planted mistake: f is forward's


def test_6_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_1(_grad_factor(lambda ctx, g: (g * ctx.f, None)))
    assert "Exercise 6.1: correct." in capsys.readouterr().out


def test_6_1_setup_context_style_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_1(GradFactorSetup)
    assert "correct" in capsys.readouterr().out


def test_6_1_forward_on_a_copy_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_1(_grad_factor(lambda ctx, g: (g * ctx.f, None), lambda x, f: x.clone()))
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("gradient", "forward", "save", "hint"),
    [
        (lambda ctx, g: (g * ctx.f, None), lambda x, f: x * f, True, "forward must return x"),
        (lambda ctx, g: (g / ctx.f, None), lambda x, f: x, True, "do not divide"),
        (lambda ctx, g: (g, None), lambda x, f: x, True, "must multiply it by f"),
        (lambda ctx, g: (ctx.f, None), lambda x, f: x, True, "did you forget grad_output"),
        (
            lambda ctx, g: (minigrad.ones_like(g) * ctx.f, None),
            lambda x, f: x,
            True,
            "that is f alone, without grad_output",
        ),
        (lambda ctx, g: g * ctx.f, lambda x, f: x, True, "backward returns two values"),
        (
            lambda ctx, g: (g * ctx.f, g.sum()),
            lambda x, f: x,
            True,
            "return None in its place",
        ),
        (
            lambda ctx, g: (g * ctx.f, None),
            lambda x, f: x,
            False,
            "backward reads ctx.f, which forward never set",
        ),
        (lambda ctx, g: (g * ctx.f * ctx.f, None), lambda x, f: x, True, "scale once"),
    ],
    ids=[
        "forward-scaled",
        "divides",
        "unscaled",
        "forgot-grad-output-scalar",
        "forgot-grad-output-array",
        "one-gradient",
        "gradient-for-f",
        "f-not-saved",
        "f-squared",
    ],
)
def test_6_1_mistakes_get_their_hint(
    gradient: Callable, forward: Callable, save: bool, hint: str
) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_1(_grad_factor(gradient, forward, save))


def test_6_1_saving_the_factor_with_save_for_backward_is_refused_as_in_pytorch() -> None:
    """f (a number) given to save_for_backward: PyTorch's TypeError, which says to keep it
    on ctx; the check shows it."""

    class Saved(minigrad.Function):
        @staticmethod
        def forward(ctx, x, f):
            ctx.save_for_backward(f)
            return x.data.copy()

        @staticmethod
        def backward(ctx, grad_output):
            (f,) = ctx.saved_tensors
            return np.multiply(f, grad_output.data), None

    with pytest.raises(CheckError, match=r"save_for_backward can only save variables.*ctx\."):
        lesson06.check_6_1(Saved)


def test_6_1_hidden_data_has_a_zero_factor() -> None:
    assert any(f == 0 for _, f, _ in lesson06.GRAD_FACTOR_CASES)


def test_6_1_none_for_x_when_f_is_zero_is_named() -> None:
    """Skipping the gradient for f = 0 (a guard that treats 'zero' as 'none')."""
    cls = _grad_factor(lambda ctx, g: ((g * ctx.f if ctx.f else None), None))
    with pytest.raises(CheckError, match=r"with f = 0, x.grad is None"):
        lesson06.check_6_1(cls)


def test_6_1_f_kept_on_the_class_is_caught() -> None:
    with pytest.raises(CheckError, match="the f of the later call"):
        lesson06.check_6_1(GradFactorOnClass)


def test_6_1_global_number_is_named() -> None:
    with pytest.raises(CheckError, match="reads the global variable 'FACTOR'"):
        lesson06.check_6_1(GradFactorGlobal)


def test_6_1_undefined_name_is_explained() -> None:
    with pytest.raises(CheckError, match="backward cannot see forward's arguments"):
        lesson06.check_6_1(GradFactorUndefinedName)


def test_6_1_apply_instead_of_class() -> None:
    with pytest.raises(CheckError, match="pass the class itself"):
        lesson06.check_6_1(GradFactorSetup.apply)


def test_6_1_scaling_the_later_weight_is_caught() -> None:
    """A factor applied to everything (here: forward scaled, backward unscaled) also fails
    somewhere with a hint, never a bare error."""
    cls = _grad_factor(lambda ctx, g: (g, None), lambda x, f: x * f)
    with pytest.raises(CheckError, match="Exercise 6.1"):
        lesson06.check_6_1(cls)


# --------------------------------------------------------------------------- Exercise 6.2


def _implies(gradient: Callable, forward: Callable = lambda a, b: 1 - a + a * b) -> type:
    """A RelaxedImplies whose backward returns gradient(a, b, grad_output)."""

    class RelaxedImplies(minigrad.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return forward(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return gradient(a, b, grad_output)

    return RelaxedImplies


def _reference_implies(a, b, g):
    return g * (b - 1), g * a


def _reduce(gradient, shape, keepdims=True, mean=False):
    """Reduce a broadcast gradient to `shape` by hand (sum or mean over broadcast axes)."""
    data = np.asarray(gradient.data)
    while data.ndim > len(shape):
        data = data.mean(axis=0) if mean else data.sum(axis=0)
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and data.shape[i] != 1)
    if axes:
        data = (
            data.mean(axis=axes, keepdims=keepdims)
            if mean
            else data.sum(axis=axes, keepdims=keepdims)
        )
    return minigrad.Variable(data)


def test_6_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_2(_implies(_reference_implies))
    assert "Exercise 6.2: correct." in capsys.readouterr().out


def test_6_2_reducing_by_hand_passes(capsys: pytest.CaptureFixture) -> None:
    def gradient(a, b, g):
        ga, gb = _reference_implies(a, b, g)
        return _reduce(ga, a.shape), _reduce(gb, b.shape)

    lesson06.check_6_2(_implies(gradient))
    assert "correct" in capsys.readouterr().out


def test_6_2_numpy_with_the_coefficient_table_passes(capsys: pytest.CaptureFixture) -> None:
    """Written differently: forward from row 13 of the coefficient table, the partials
    c1 + c3·b and c2 + c3·a on raw arrays, with setup_context."""
    c0, c1, c2, c3 = lesson06.GATE_COEFFICIENTS[13]

    class RelaxedImplies(minigrad.Function):
        @staticmethod
        def forward(a, b):
            return c0 + c1 * a.data + c2 * b.data + c3 * a.data * b.data

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            g = grad_output.data
            return g * (c1 + c3 * b.data), g * (c2 + c3 * a.data)

    lesson06.check_6_2(RelaxedImplies)
    assert "correct" in capsys.readouterr().out


def test_6_2_hidden_data_has_bits_and_a_tie() -> None:
    a, b = lesson06.IMPLIES_A, lesson06.IMPLIES_B
    assert {0.0, 1.0} <= set(a) and {0.0, 1.0} <= set(b)  # exact bits: a partial is 0
    assert np.any(a == b)  # equal inputs


@pytest.mark.parametrize(
    ("gradient", "forward", "hint"),
    [
        (_reference_implies, lambda a, b: 1 - b + a * b, "that is A OR NOT B"),
        (_reference_implies, lambda a, b: 1 - a, "that is NOT A"),
        (_reference_implies, lambda a, b: a + b - a * b, "that is OR"),
        (lambda a, b, g: (g * a, g * (b - 1)), None, "the partials are swapped"),
        (lambda a, b, g: (g * (1 - b), g * a), None, "the sign is flipped"),
        (lambda a, b, g: (g * b, g * a), None, "the -1 from the term -a is missing"),
        (lambda a, b, g: (b - 1, a), None, "without grad_output"),
        (lambda a, b, g: (-g, g * a), None, "the term ab depends on a too"),
        (lambda a, b, g: (g * (b - 1), g * (1 + a)), None, "the 1 does not depend on b"),
        (lambda a, b, g: (g * (b - 1), -g * a), None, r"grows with b"),
        (lambda a, b, g: (g * (b - 1), g * b), None, "leaves the other input, a"),
        (lambda a, b, g: (g * (b - 1), None), None, "b.grad is None"),
        (lambda a, b, g: g * (b - 1), None, r"backward returns \(grad_a, grad_b\)"),
    ],
    ids=[
        "a-or-not-b",
        "not-a",
        "or",
        "swapped",
        "sign-a",
        "missing-minus-one",
        "forgot-grad-output",
        "missing-ab-term",
        "constant-term",
        "sign-b",
        "b-for-a",
        "none-for-b",
        "one-gradient",
    ],
)
def test_6_2_mistakes_get_their_hint(
    gradient: Callable, forward: Callable | None, hint: str
) -> None:
    cls = _implies(gradient) if forward is None else _implies(gradient, forward)
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_2(cls)


def test_6_2_dropping_the_broadcast_axis_gets_the_shape_hint() -> None:
    def gradient(a, b, g):
        ga, gb = _reference_implies(a, b, g)
        return _reduce(ga, a.shape, keepdims=False), _reduce(gb, b.shape, keepdims=False)

    with pytest.raises(CheckError, match=r"shape \(3,\) for input 0, whose shape is \(3, 1\)"):
        lesson06.check_6_2(_implies(gradient))


def test_6_2_averaging_over_the_broadcast_axis_is_named() -> None:
    def gradient(a, b, g):
        ga, gb = _reference_implies(a, b, g)
        return _reduce(ga, a.shape, mean=True), _reduce(gb, b.shape, mean=True)

    with pytest.raises(CheckError, match="mean over the broadcast axis"):
        lesson06.check_6_2(_implies(gradient))


def test_6_2_forward_without_return_is_named() -> None:
    class NoReturn(minigrad.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output

    with pytest.raises(CheckError, match=r"forward returned None; did you forget `return`\?"):
        lesson06.check_6_2(NoReturn)


# --------------------------------------------------------------------------- Exercise 6.3


COEFFICIENTS = lesson06.GATE_COEFFICIENTS


def relaxed_gates(a, b):
    terms = minigrad.stack([minigrad.ones_like(a), a, b, a * b], dim=-1)
    return terms @ COEFFICIENTS.T


def reference_neuron(a, b, logits):
    return (relaxed_gates(a, b) * minigrad.softmax(logits, dim=-1)).sum(-1)


def test_6_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_3(reference_neuron)
    assert "Exercise 6.3: correct." in capsys.readouterr().out


def test_6_3_matmul_form_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_3(lambda a, b, z: relaxed_gates(a, b) @ minigrad.softmax(z, dim=-1))
    assert "correct" in capsys.readouterr().out


def _numpy_neuron(a, b, logits):
    weights = np.exp(logits.data) / np.exp(logits.data).sum()
    return minigrad.Variable(lesson06.relaxed_gates_numpy(a.data, b.data) @ weights)


@pytest.mark.parametrize(
    ("neuron", "hint"),
    [
        (lambda a, b, z: (relaxed_gates(a, b) * z).sum(-1), "raw logits"),
        (lambda a, b, z: (relaxed_gates(a, b) * z.exp()).sum(-1), "without dividing"),
        (lambda a, b, z: relaxed_gates(a, b).mean(-1), "plain average"),
        (lambda a, b, z: relaxed_gates(a, b) * minigrad.softmax(z, dim=-1), "over the last axis"),
        (
            lambda a, b, z: (relaxed_gates(a, b) * minigrad.softmax(z, dim=-1)).sum(0),
            "summed over the rows",
        ),
        (
            lambda a, b, z: (relaxed_gates(a, b) * minigrad.softmax(z, dim=-1)).sum(),
            "you summed everything",
        ),
        (lambda a, b, z: reference_neuron(b, a, z), "a and b are swapped"),
        (
            lambda a, b, z: relaxed_gates(a, b)[:, int(np.argmax(z.data))],
            "the hardened neuron",
        ),
        (_numpy_neuron, "outside the graph"),
        (lambda a, b, z: _numpy_neuron(a, b, z).data, "returned an ndarray, not a Variable"),
        (minigrad.Function, "not a class"),
    ],
    ids=[
        "raw-logits",
        "exp-unnormalised",
        "mean",
        "no-sum",
        "sum-batch",
        "sum-all",
        "swapped",
        "argmax",
        "numpy",
        "returns-array",
        "class",
    ],
)
def test_6_3_mistakes_get_their_hint(neuron: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_3(neuron)


def test_6_3_einsum_on_numpy_with_graph_passes(capsys: pytest.CaptureFixture) -> None:
    """Written differently: softmax by hand with minigrad ops, the mix as a matmul of the
    (batch, 4) terms with the (4, 16) coefficients and the (16,) weights."""

    def neuron(a, b, logits):
        shifted = logits - logits.max()
        weights = shifted.exp() / shifted.exp().sum()
        terms = minigrad.stack([minigrad.ones_like(a), a, b, a * b], dim=-1)
        return terms @ (minigrad.Variable(COEFFICIENTS.T) @ weights)

    lesson06.check_6_3(neuron)
    assert "correct" in capsys.readouterr().out


def test_6_3_hidden_data_has_equal_logits_and_one_example() -> None:
    assert any(equal for _, _, equal in lesson06.NEURON_CASES)
    assert any(batch == 1 for batch, _, _ in lesson06.NEURON_CASES)


def test_6_3_squeezing_the_batch_of_one_is_named() -> None:
    """.squeeze() drops the batch axis when there is a single example: only that case shows it."""

    def neuron(a, b, logits):
        return reference_neuron(a, b, logits).squeeze()

    with pytest.raises(CheckError, match=r"with a batch of one example.*do not squeeze"):
        lesson06.check_6_3(neuron)


def test_relaxed_gates_numpy_is_boolean_on_bits() -> None:
    a = np.array([0.0, 0.0, 1.0, 1.0])
    b = np.array([0.0, 1.0, 0.0, 1.0])
    table = lesson06.relaxed_gates_numpy(a, b)  # (4 input pairs, 16 gates)
    # Gate i's truth table, read as a 4-bit number (row 11 first), is i itself.
    codes = (table * np.array([[1], [2], [4], [8]])[::-1]).sum(axis=0)
    assert codes.tolist() == list(range(16))


# --------------------------------------------------------------------------- unwritten exercises


def _stub(exercise: str) -> Callable:
    def raise_stub(*args, **kwargs):
        raise NotImplementedError(f"Exercise {exercise}: the student version's placeholder")

    return raise_stub


class GradFactorStub(minigrad.Function):
    forward = staticmethod(_stub("6.1"))
    backward = staticmethod(_stub("6.1"))


class GradFactorBackwardStub(minigrad.Function):
    @staticmethod
    def forward(ctx, x, f):
        ctx.f = f
        return x

    backward = staticmethod(_stub("6.1"))


class ImpliesStub(minigrad.Function):
    forward = staticmethod(_stub("6.2"))
    backward = staticmethod(_stub("6.2"))


@pytest.mark.parametrize(
    ("check", "answer", "exercise"),
    [
        (lesson06.check_6_1, GradFactorStub, "6.1"),
        (lesson06.check_6_1, GradFactorBackwardStub, "6.1"),
        (lesson06.check_6_2, ImpliesStub, "6.2"),
        (lesson06.check_6_2, _implies(_stub("6.2")), "6.2"),
        (lesson06.check_6_3, _stub("6.3"), "6.3"),
        (lesson06.check_6_5, _stub("6.5"), "6.5"),
    ],
    ids=["6.1", "6.1-backward", "6.2", "6.2-backward", "6.3", "6.5"],
)
def test_unwritten_exercises_say_so(check: Callable, answer: object, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        check(answer)


def test_6_1_backward_returning_a_list_is_explained() -> None:
    cls = _grad_factor(lambda ctx, g: [g * ctx.f, None])
    with pytest.raises(CheckError, match=r"return a tuple \(grad_x, None\), not a list"):
        lesson06.check_6_1(cls)


@pytest.mark.parametrize(
    ("gradient", "name"),
    [
        (lambda a, b, g: (g * (b - 1), g * a * b), "b"),
        (lambda a, b, g: (g * (b - a), g * a), "a"),
        (lambda a, b, g: (g * (b - 1), g * (a - 1)), "b"),
    ],
    ids=["product-for-b", "a-minus-for-a", "a-minus-one-for-b"],
)
def test_6_2_an_unknown_slip_says_what_to_redo(gradient: Callable, name: str) -> None:
    """Found by the audit: slips the check does not know got numbers only."""
    hint = (
        rf"that is not grad_output times the partial derivative for {name}\. Take the terms "
        rf"1, -a and ab one at a time"
    )
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_2(_implies(gradient))


def test_6_2_summed_to_a_number_is_told_not_to_add_up() -> None:
    """Found by the audit: a gradient summed to one number got the broadcasting hint."""

    def gradient(a, b, g):
        return (g * (b - 1)).sum(), (g * a).sum()

    with pytest.raises(CheckError, match=r"fewer entries than the input: do not add the products"):
        lesson06.check_6_2(_implies(gradient))


def test_6_3_mean_over_the_gates_is_named() -> None:
    """Found by the audit: the mean of the weighted gates got numbers only."""

    def neuron(a, b, logits):
        return (relaxed_gates(a, b) * minigrad.softmax(logits, dim=-1)).mean(-1)

    with pytest.raises(CheckError, match=r"1/16 of the mix"):
        lesson06.check_6_3(neuron)


# --------------------------------------------------------------------------- Exercise 6.5


def _by_hand(x, w, f1, f2):
    z = w * x
    grad_z = z + f2 * z
    return z * z, grad_z * x, f1 * grad_z * w


def test_6_5_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson06.check_6_5(_by_hand)
    assert "Exercise 6.5: correct." in capsys.readouterr().out
    lesson06.check_6_5(lesson06.predicted_by_hand)


def test_6_5_numbers_written_any_way_pass() -> None:
    """A list, NumPy numbers and 0-d arrays are numbers too; the formulas may be expanded."""
    lesson06.check_6_5(
        lambda x, w, f1, f2: [np.float64(w**2 * x**2), (1 + f2) * w * x**2,
                              np.array(f1 * (1 + f2) * w**2 * x)]
    )


def test_6_5_matches_what_minigrad_runs() -> None:
    """The check's numbers are what the graph gives in minigrad, with a GradFactor."""

    class GradFactor(minigrad.Function):
        @staticmethod
        def forward(ctx, x, f):
            ctx.f = f
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.f, None

    for x_value, w_value, f1, f2 in lesson06.PREDICT_CASES + ((1.5, -2.0, 1.0, -1.0),):
        x = minigrad.Variable(x_value, requires_grad=True)
        w = minigrad.Variable(w_value, requires_grad=True)
        z = w * GradFactor.apply(x, f1)
        loss = z * GradFactor.apply(z, f2)
        loss.backward()
        ran = (loss.item(), w.grad.item(), x.grad.item())
        np.testing.assert_allclose(ran, lesson06.predicted_by_hand(x_value, w_value, f1, f2))


def _slip(grad_z: Callable, loss: Callable = lambda z, f1, f2: z * z, w_factor: bool = False,
          x_factor: bool = True) -> Callable:
    """A gradients_by_hand with one slip: z's gradient as grad_z(z, f2), the loss as
    loss(z, f1, f2), f1 on w's gradient (w_factor) or not on x's (x_factor=False)."""

    def gradients_by_hand(x, w, f1, f2):
        z = w * x
        g = grad_z(z, f2)
        return loss(z, f1, f2), g * x * (f1 if w_factor else 1), g * w * (f1 if x_factor else 1)

    return gradients_by_hand


RIGHT_Z = lambda z, f2: z + f2 * z  # noqa: E731 - short formulas read best as lambdas


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # The named slips: a factor on both paths, a factor on the wrong leaf.
        (_slip(lambda z, f2: 2 * f2 * z), r"grad_w from gradients_by_hand\(3, 0.5, 2, 10\) is "
         r"90, expected 49.5: f2 scales only the gradient that comes through"),
        (_slip(lambda z, f2: f2 * z), r"grad_w .* is 45, .*counts only the path through"),
        (_slip(lambda z, f2: 2 * z), r"grad_w .* is 9, .*the true derivative 2wx²"),
        (_slip(RIGHT_Z, w_factor=True), r"grad_w .* is 99, .*f1 sits on x's path only"),
        (_slip(RIGHT_Z, x_factor=False), r"grad_x .* is 8.25, expected 16.5: f1 is missing"),
        (_slip(RIGHT_Z, loss=lambda z, f1, f2: f2 * z * z), r"loss .* is 22.5, .*changes no value"),
        (_slip(RIGHT_Z, loss=lambda z, f1, f2: z), r"loss .* is 1.5, .*that is z, not the loss"),
        (
            lambda x, w, f1, f2: (w * w * x * x, f1 * (1 + f2) * w * w * x, (1 + f2) * w * x * x),
            r"grad_w and grad_x are swapped",
        ),
        (
            lambda x, w, f1, f2: (w * w * x * x, (1 + f2) * w * x * x, f1 * (1 + f2) * w * x),
            r"grad_x .* is 33, .*the chain rule's last step is missing",
        ),
        # Right on the lesson's numbers, wrong on the second set: the check tries both.
        (lambda x, w, f1, f2: (2.25, 49.5, 16.5), r"gradients_by_hand\(-1, 2, 3, 4\)"),
        (
            lambda x, w, f1, f2: (2.25, 49.5, 17.0),
            r"^Exercise 6.5: grad_x .* is 17, expected 16.5\.$",
        ),
    ],
    ids=["f2-both-paths", "f2-path-only", "no-factors", "f1-on-w", "f1-missing", "loss-scaled",
         "loss-is-z", "swapped", "chain-w-missing", "constants", "unknown"],
)
def test_6_5_mistakes_get_their_hint(answer: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_5(answer)


def test_6_5_second_set_has_f1_times_w_not_1() -> None:
    """Found by a learner-reviewer: the lesson's set has f1·w = 1, so "times f1·w" can go
    missing there unseen; the second set has f1·w != 1 and gives its right numbers."""
    _, (x, w, f1, f2) = lesson06.PREDICT_CASES
    assert f1 * w != 1
    assert lesson06.predicted_by_hand(x, w, f1, f2) == (4.0, 10.0, -60.0)
    # On the second set no two slips give the same number, and none gives the right one.
    slips = lesson06._prediction_slips(x, w, f1, f2)
    for name, right in zip(lesson06.PREDICT_NAMES, lesson06.predicted_by_hand(x, w, f1, f2)):
        values = [right, *slips[name].values()]
        assert len({round(value, 9) for value in values}) == len(values), name


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # grad_x = (1 + f2)·z: right on the lesson's set (f1·w = 1), -10 instead of -60 on the
        # second; it used to get "Exercise 6.5: correct.".
        (
            lambda x, w, f1, f2: ((w * x) ** 2, (1 + f2) * w * x * x, (1 + f2) * w * x),
            r"grad_x from gradients_by_hand\(-1, 2, 3, 4\) is -10, expected -60: "
            r"f1 and w are both missing",
        ),
        # f1²·(1 + f2)·z·w: 33 on the lesson's set, the same as "times w is missing" there;
        # only "f1 applied twice" fits the second set too.
        (
            lambda x, w, f1, f2: ((w * x) ** 2, (1 + f2) * w * x * x,
                                  f1 * f1 * (1 + f2) * (w * x) * w),
            r"grad_x from gradients_by_hand\(3, 0.5, 2, 10\) is 33, expected 16.5: "
            r"f1 is applied twice",
        ),
    ],
    ids=["f1-and-w-missing", "f1-twice"],
)
def test_6_5_slips_that_f1_times_w_equal_1_hid(answer: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint) as caught:
        lesson06.check_6_5(answer)
    assert "last step is missing" not in str(caught.value)


def test_6_5_a_slip_is_named_only_where_it_fits_every_set() -> None:
    """A number that equals a slip on one set only is not that slip: a plain "expected"."""

    def answer(x, w, f1, f2):
        # "times w is missing" on the lesson's set (33), something else on the second.
        return (w * x) ** 2, (1 + f2) * w * x * x, 33.0 if x == 3 else -60.0

    with pytest.raises(CheckError, match=r"^Exercise 6.5: grad_x .* is 33, expected 16.5\.$"):
        lesson06.check_6_5(answer)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ((2.25, 49.5, 16.5), r"gradients_by_hand should be a function"),
        (lambda x, w, f1, f2: (1.0, 2.0), r"returned 2 values; return three numbers"),
        (lambda x, w, f1, f2: 3.0, r"returned a float; return three numbers"),
        (lambda x, w, f1, f2: (minigrad.Variable(2.25), 1, 1), r"returned a Variable for loss"),
        (lambda x, w, f1, f2: (2.25, "49.5", 16.5), r"grad_w should be a number .* got a str"),
        (lambda x, w, f1, f2: 1 / 0, r"raised ZeroDivisionError"),
    ],
    ids=["tuple", "two", "number", "variable", "text", "error"],
)
def test_6_5_answers_that_are_not_three_numbers(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson06.check_6_5(answer)


def test_6_5_other_cases_as_the_hidden_tests_use() -> None:
    """The hidden tests' cases, where several slips give the right number by chance (f1 = f2
    = 1, f2 = -1, f1 = 0): the reference passes, a slip still fails somewhere."""
    cases = ((1.5, -2.0, 1.0, 1.0), (2.0, 1.0, 3.0, -1.0), (0.5, -3.0, 0.0, 2.0))
    lesson06.check_6_5(_by_hand, cases=cases)
    with pytest.raises(CheckError):
        lesson06.check_6_5(_slip(lambda z, f2: 2 * f2 * z), cases=cases)

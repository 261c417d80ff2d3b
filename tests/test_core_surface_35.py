"""Autograd-core names PyTorch code uses (issue 35): is_inference_mode_enabled and
Tensor.is_inference, save_for_backward's TypeError, register_post_accumulate_grad_hook,
and grad_fn.next_functions with one entry per Variable input."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad import Function, Variable


def leaf(values=(1.0, -2.0, 3.0)) -> Variable:
    return Variable(np.array(values, dtype=np.float64), requires_grad=True)


# --------------------------------------------------------------------------- inference mode


def test_is_inference_mode_enabled_follows_the_mode_and_its_nesting():
    assert minigrad.is_inference_mode_enabled() is False
    with minigrad.inference_mode():
        assert minigrad.is_inference_mode_enabled() is True
        assert minigrad.is_grad_enabled() is False
        with minigrad.inference_mode(False):
            assert minigrad.is_inference_mode_enabled() is False
            assert minigrad.is_grad_enabled() is True
        with minigrad.no_grad():
            assert minigrad.is_inference_mode_enabled() is True
        assert minigrad.is_inference_mode_enabled() is True
    with minigrad.no_grad():
        assert minigrad.is_inference_mode_enabled() is False
    assert minigrad.is_inference_mode_enabled() is False


def test_inference_mode_as_a_decorator_with_and_without_parentheses():
    @minigrad.inference_mode
    def bare():
        return minigrad.is_inference_mode_enabled(), minigrad.ones(2).is_inference()

    @minigrad.inference_mode()
    def called():
        return minigrad.is_inference_mode_enabled()

    @minigrad.inference_mode(False)
    def off():
        return minigrad.is_inference_mode_enabled()

    assert bare() == (True, True)
    assert called() is True
    with minigrad.inference_mode():
        assert off() is False
        assert minigrad.is_inference_mode_enabled() is True
    assert minigrad.is_inference_mode_enabled() is False


def test_is_inference_mode_enabled_takes_no_argument():
    with pytest.raises(TypeError, match="is_inference_mode_enabled"):
        minigrad.is_inference_mode_enabled(True)


def test_variables_made_inside_inference_mode_are_inference_variables():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x.data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    before = minigrad.ones(3)
    w = leaf()
    with minigrad.inference_mode():
        made = [
            minigrad.ones(3),
            minigrad.zeros(2, requires_grad=True),
            Variable([1.0, 2.0]),
            minigrad.tensor([1.0]),
            before * 2,
            w.exp(),
            before[0],
            Double.apply(before),
        ]
        assert before.is_inference() is False  # made before: stays a normal Variable
    for variable in made:
        assert variable.is_inference() is True, variable
        assert minigrad.is_inference(variable) is True
    assert made[5].requires_grad is False  # nothing is recorded inside
    assert minigrad.ones(3).is_inference() is False
    assert (w * 2).is_inference() is False
    assert made[0].clone().is_inference() is False  # a clone made outside: a normal one
    assert made[0].detach().is_inference() is True  # the same data


def test_values_computed_in_inference_mode_match_torch(real_torch):
    data = np.array([[0.5, -1.5], [2.0, 0.25]])
    with minigrad.inference_mode():
        ours = (Variable(data).tanh() @ Variable(data)).sum(0)
    with real_torch.inference_mode():
        theirs = (real_torch.tensor(data).tanh() @ real_torch.tensor(data)).sum(0)
    assert ours.is_inference() is theirs.is_inference() is True
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert minigrad.ones(1).is_inference() is real_torch.ones(1).is_inference() is False


def test_an_inference_variable_saved_for_backward_outside_the_mode_is_refused():
    with minigrad.inference_mode():
        frozen = minigrad.ones(3)
    w = leaf()
    refused = "Inference tensors cannot be saved for backward"
    with pytest.raises(RuntimeError, match=refused) as caught:
        w * frozen  # Mul saves both operands
    assert "clone()" in str(caught.value) and "no_grad" in str(caught.value)
    # Nothing is saved by an addition (as in PyTorch), and nothing is recorded without grad.
    total = w + frozen
    assert total.requires_grad and total.is_inference() is False
    assert (frozen * 2).is_inference() is False
    # The way out the message gives: a clone made outside inference_mode.
    (w * frozen.clone()).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones(3))


def test_an_inference_variable_saved_by_your_own_function_is_refused_too():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(k)
            return x.data * k.data

        @staticmethod
        def backward(ctx, grad):
            (k,) = ctx.saved_tensors
            return grad * k, None

    with minigrad.inference_mode():
        k = Variable([2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        Scale.apply(leaf(), k)


def test_changing_an_inference_variable_in_place_outside_the_mode_is_refused():
    with minigrad.inference_mode():
        frozen = minigrad.ones(3)
        frozen.add_(1)  # inside the mode: allowed
        frozen += 1
    np.testing.assert_array_equal(frozen.numpy(), [3.0, 3.0, 3.0])
    changes = [
        lambda: frozen.add_(1),
        lambda: frozen.zero_(),
        lambda: frozen.__setitem__(0, 5.0),
        lambda: frozen.mul_(2),
    ]
    for change in changes:
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
            change()
    with minigrad.no_grad():  # no_grad is not inference_mode: still refused
        with pytest.raises(RuntimeError, match="clone"):
            frozen += 1
    np.testing.assert_array_equal(frozen.numpy(), [3.0, 3.0, 3.0])
    normal = frozen.clone()
    normal.add_(1)
    np.testing.assert_array_equal(normal.numpy(), [4.0, 4.0, 4.0])


def test_the_inference_errors_have_torchs_classes(real_torch):
    for library in (minigrad, real_torch):
        with library.inference_mode():
            frozen = library.ones(3)
        w = library.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            w * frozen
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
            frozen.add_(1)


def test_inference_mode_is_per_thread():
    import threading

    seen = []
    with minigrad.inference_mode():
        thread = threading.Thread(
            target=lambda: seen.append(
                (minigrad.is_inference_mode_enabled(), minigrad.ones(1).is_inference())
            )
        )
        thread.start()
        thread.join()
    assert seen == [(False, False)]


# --------------------------------------------------------------------------- save_for_backward


class SavesIt(Function):
    """Saves its input and whatever it is given as a second argument."""

    @staticmethod
    def forward(ctx, x, value):
        ctx.save_for_backward(x, value)
        return x.data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


@pytest.mark.parametrize(
    ("value", "kind"),
    [(3, "int"), (2.5, "float"), (True, "bool"), ([1.0], "list"), ((1, 2), "tuple"),
     ({"a": 1}, "dict"), (object(), "object")],
)
def test_save_for_backward_refuses_what_is_not_a_variable(value, kind):
    with pytest.raises(TypeError) as caught:
        SavesIt.apply(leaf(), value)
    message = str(caught.value)
    assert f"save_for_backward can only save variables, but argument 1 is of type {kind}" in message
    assert "ctx." in message  # what to do: keep it on ctx as an attribute


def test_save_for_backward_message_is_torchs(real_torch):
    class TorchSaves(real_torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class OurSaves(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x.data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(TypeError) as theirs:
        TorchSaves.apply(real_torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError) as ours:
        OurSaves.apply(leaf())
    assert str(ours.value).startswith(str(theirs.value))


def test_save_for_backward_is_checked_only_when_the_call_is_recorded():
    # As in PyTorch: without an input that requires grad (or under no_grad) nothing is saved.
    SavesIt.apply(Variable([1.0, 2.0]), 3)
    with minigrad.no_grad():
        SavesIt.apply(leaf(), 3)


def test_save_for_backward_keeps_variables_none_arrays_and_text():
    seen = {}

    class Keeps(Function):
        @staticmethod
        def forward(ctx, x):
            # An array (x.data), a NumPy scalar and a str are minigrad's documented
            # departure: lessons save arrays, and a NumPy reduction of one gives a scalar.
            ctx.save_for_backward(x, None, x.data, "a note", x.data.sum())
            return x.data * x.data

        @staticmethod
        def backward(ctx, grad):
            seen["saved"] = ctx.saved_tensors
            return 2 * ctx.saved_tensors[0] * grad

    x = leaf()
    Keeps.apply(x).sum().backward()
    kept_x, none, array, note, total = seen["saved"]
    assert isinstance(total, np.generic)
    assert kept_x is x and none is None and note == "a note"
    np.testing.assert_array_equal(array, x.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())


def test_built_in_ops_with_a_python_number_still_differentiate(real_torch):
    data = np.array([0.5, 1.5, 2.5])
    cases = [
        lambda t: t * 3.0, lambda t: 3.0 * t, lambda t: t / 4.0, lambda t: 4.0 / t,
        lambda t: t**3, lambda t: 2.0**t, lambda t: t.pow(2.5), lambda t: t - 1.0,
    ]
    for case in cases:
        ours = Variable(data.copy(), requires_grad=True)
        theirs = real_torch.tensor(data.copy(), requires_grad=True)
        case(ours).sum().backward()
        case(theirs).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_built_in_ops_with_a_number_pass_gradcheck():
    x = Variable(np.array([0.5, 1.5, 2.5]), requires_grad=True)
    for function in (lambda t: t * 3.0 / 2.0, lambda t: 2.0**t, lambda t: 4.0 / t**2):
        assert minigrad.autograd.gradcheck(function, (x,))


def test_checkpoint_with_a_number_argument_still_works():
    from minigrad.utils.checkpoint import checkpoint

    x = leaf()

    def block(t, power):
        return (t**power).sum()

    checkpoint(block, x, 3, use_reentrant=True).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


# --------------------------------------------------------------------------- post accumulate hook


def test_post_accumulate_grad_hook_sees_the_accumulated_grad_and_the_leaf():
    x = leaf()
    x.grad = Variable(np.full(3, 10.0))
    seen = []
    handle = x.register_post_accumulate_grad_hook(
        lambda param: seen.append((param is x, param.grad.numpy().copy()))
    )
    (x * 3).sum().backward()
    assert seen[0][0] is True
    np.testing.assert_array_equal(seen[0][1], np.full(3, 13.0))  # after accumulating
    minigrad.autograd.grad((x * 3).sum(), x)  # grad() accumulates nothing: no call
    assert len(seen) == 1
    handle.remove()
    (x * 3).sum().backward()
    assert len(seen) == 1


def test_post_accumulate_grad_hook_runs_after_register_hook(real_torch):
    def order(library):
        x = library.ones(2, requires_grad=True)
        calls = []
        x.register_hook(lambda grad: calls.append(("pre", grad.tolist())) or grad * 2)
        x.register_post_accumulate_grad_hook(
            lambda param: calls.append(("post", param.grad.tolist()))
        )
        (x * 3).sum().backward()
        return calls

    assert order(minigrad) == order(real_torch) == [("pre", [3.0, 3.0]), ("post", [6.0, 6.0])]


def test_post_accumulate_grad_hook_with_backward_inputs_runs_only_for_those():
    x, y = leaf(), leaf()
    calls = []
    x.register_post_accumulate_grad_hook(lambda param: calls.append("x"))
    y.register_post_accumulate_grad_hook(lambda param: calls.append("y"))
    (x * y).sum().backward(inputs=[y])
    assert calls == ["y"]


def test_post_accumulate_grad_hook_errors_have_torchs_classes(real_torch):
    for library in (minigrad, real_torch):
        x = library.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda param: None)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            library.ones(2).register_post_accumulate_grad_hook(lambda param: None)
        x.register_post_accumulate_grad_hook(lambda param: param * 2)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (x * 3).sum().backward()


def test_post_accumulate_grad_hook_needs_a_function():
    with pytest.raises(TypeError, match="expects a function"):
        leaf().register_post_accumulate_grad_hook(3)


def test_post_accumulate_grad_hook_handle_works_as_a_context_manager():
    x = leaf()
    calls = []
    with x.register_post_accumulate_grad_hook(lambda param: calls.append(1)):
        x.sum().backward()
    x.sum().backward()
    assert calls == [1]


def _fused_training(library, weights: list[np.ndarray], inputs: np.ndarray, steps: int) -> list:
    """PyTorch's tutorial "How to save memory by fusing the optimizer step into the backward
    pass": one optimizer per parameter, stepped by a post-accumulate-grad hook."""
    params = [library.tensor(w.copy(), requires_grad=True) for w in weights]
    optimizers = {p: library.optim.Adam([p], lr=0.05) for p in params}

    def optimizer_hook(parameter) -> None:
        optimizers[parameter].step()
        optimizers[parameter].zero_grad()

    for p in params:
        p.register_post_accumulate_grad_hook(optimizer_hook)
    x = library.tensor(inputs)
    for _ in range(steps):
        hidden = (x @ params[0] + params[1]).tanh()
        loss = ((hidden @ params[2]) ** 2).mean()
        loss.backward()  # each parameter steps as soon as its gradient is complete
        assert all(p.grad is None for p in params)  # zero_grad(set_to_none) freed them
    return [p.detach().numpy().copy() for p in params]


def test_optimizer_step_fused_into_backward_matches_torch(real_torch):
    rng = np.random.default_rng(35)
    weights = [rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(5, 2))]
    inputs = rng.normal(size=(8, 4))
    ours = _fused_training(minigrad, weights, inputs, steps=5)
    theirs = _fused_training(real_torch, weights, inputs, steps=5)
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine, expected, rtol=1e-10, atol=1e-12)


def test_optimizer_step_fused_into_backward_equals_the_usual_step():
    rng = np.random.default_rng(7)
    weights = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 1))]
    inputs = rng.normal(size=(6, 3))
    fused = _fused_training(minigrad, weights, inputs, steps=3)
    params = [Variable(w.copy(), requires_grad=True) for w in weights]
    optimizer = minigrad.optim.Adam(params, lr=0.05)
    x = Variable(inputs)
    for _ in range(3):
        optimizer.zero_grad()
        loss = (((x @ params[0] + params[1]).tanh() @ params[2]) ** 2).mean()
        loss.backward()
        optimizer.step()
    for mine, usual in zip(fused, params):
        np.testing.assert_allclose(mine, usual.detach().numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- next_functions


def _shape_of_edges(edges) -> list:
    """next_functions as names: each node's name(), or None."""
    return [(None if node is None else node.name(), nr) for node, nr in edges]


def test_next_functions_lists_only_variable_inputs(real_torch):
    cases = [
        lambda lib, t: t.sum(),
        lambda lib, t: t.sum(0),
        lambda lib, t: t.sum(dim=0, keepdim=True),
        lambda lib, t: t.pow(2),
        lambda lib, t: t**2,
        lambda lib, t: t.clamp(0.0, 1.0),
        lambda lib, t: t[0],
        lambda lib, t: t.reshape(3, 1),
        lambda lib, t: t.transpose(0, 0),
        lambda lib, t: t.softmax(0),
        lambda lib, t: lib.cat([t, t]),
        lambda lib, t: t * t,
        lambda lib, t: t + lib.ones(3),
        lambda lib, t: lib.ones(3) * t,
        # A number operand of + - * / is listed, (None, 0): PyTorch wraps it into a Tensor.
        lambda lib, t: t * 2.0,
        lambda lib, t: t + 2,
        lambda lib, t: t - 1.0,
        lambda lib, t: t / 4.0,
    ]
    for case in cases:
        ours = case(minigrad, minigrad.ones(3, requires_grad=True)).grad_fn.next_functions
        theirs = case(real_torch, real_torch.ones(3, requires_grad=True)).grad_fn.next_functions
        assert len(ours) == len(theirs)
        # An input that takes no gradient is (None, 0) in both; one that does is a node.
        assert [node is None for node, _ in ours] == [node is None for node, _ in theirs]
        assert [nr for _, nr in ours] == [nr for _, nr in theirs]


def test_next_functions_of_a_function_with_number_arguments(real_torch):
    def make(base):
        class Mixed(base):
            @staticmethod
            def forward(ctx, k, x, n, y):
                return x * n * y

            @staticmethod
            def backward(ctx, grad):
                return None, grad, None, grad

        return Mixed

    ours = make(Function).apply(3, leaf(), 2, Variable([1.0, 1.0, 1.0]))
    theirs = make(real_torch.autograd.Function).apply(
        3, real_torch.ones(3, requires_grad=True), 2, real_torch.ones(3)
    )
    assert _shape_of_edges(ours.grad_fn.next_functions) == [("AccumulateGrad", 0), (None, 0)]
    assert len(theirs.grad_fn.next_functions) == 2
    assert theirs.grad_fn.next_functions[1] == (None, 0)


def test_next_functions_entries_point_at_the_graph():
    x = leaf()
    y = x.exp()
    z = (y * 2).sum(0)
    (mul_node, nr), = z.grad_fn.next_functions
    assert nr == 0 and mul_node.name() == "MulBackward"
    (exp_node, _), (constant, _) = mul_node.next_functions  # 2.0: listed, as PyTorch
    assert constant is None
    assert exp_node is y.grad_fn
    (accumulate, _), = exp_node.next_functions
    assert accumulate.name() == "AccumulateGrad" and accumulate.variable is x
    assert accumulate.next_functions == ()


def test_drawings_still_show_number_arguments_as_their_positions():
    pytest.importorskip("graphviz")
    from minigrad.autodiff import graph

    x = leaf()
    y = 2.0 * x
    edges = graph.input_edges(y.grad_fn)
    assert [index for index, _, _ in edges] == [0, 1]
    assert edges[0][1] is None and edges[1][1].variable is x
    assert graph.input_variable(y.grad_fn, 1) is x
    minigrad.viz.draw(y)

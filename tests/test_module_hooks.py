"""Module hooks: forward pre-hooks, forward hooks, full backward (pre-)hooks and the global
ones, with PyTorch's call signatures, replacement rules and tuple structures.

Each behaviour is asserted on its own; where PyTorch is installed the same module, weights
and hooks run in both libraries and the values (outputs, gradients, what the hooks saw)
must agree in float64."""

import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.core.variable import RemovableHandle, Variable
from minigrad.nn import module as module_file
from minigrad.nn import module_hooks


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def variable(*shape: int, seed: int = 0, requires_grad: bool = False) -> Variable:
    return Variable(data(*shape, seed=seed), requires_grad=requires_grad)


def shapes(grads: tuple) -> list:
    return [None if g is None else tuple(g.shape) for g in grads]


class Two(nn.Module):
    """Two positional Variables, a number and a keyword; a tuple of two outputs."""

    def forward(self, a, b, scale=1.0, flag=None):
        return a * b * scale, a + b


def twin_linears(torch, in_features: int = 3, out_features: int = 2):
    """A minigrad Linear and a PyTorch Linear with the same float64 weights."""
    mine = nn.Linear(in_features, out_features)
    theirs = torch.nn.Linear(in_features, out_features).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(mine.weight.data))
        theirs.bias.copy_(torch.tensor(mine.bias.data))
    return mine, theirs


# =========================================================================== forward pre-hooks


class TestForwardPreHooks:
    def test_sees_module_and_args_before_forward(self):
        layer = nn.Linear(3, 2)
        seen = []
        layer.register_forward_pre_hook(lambda module, args: seen.append((module, args)))
        x = variable(4, 3)
        layer(x)
        ((module, args),) = seen
        assert module is layer and isinstance(args, tuple) and args[0] is x

    def test_a_returned_tuple_replaces_the_args(self):
        two = Two()
        two.register_forward_pre_hook(lambda module, args: (args[1], args[0], 10.0))
        product, total = two(mg.tensor([2.0]), mg.tensor([3.0]))
        assert product.item() == 60.0 and total.item() == 5.0

    def test_a_single_returned_value_is_the_one_argument(self):
        layer = nn.Identity()
        layer.register_forward_pre_hook(lambda module, args: args[0] * 2)
        assert layer(mg.tensor([1.5])).item() == 3.0

    def test_none_keeps_the_args(self):
        layer = nn.Identity()
        layer.register_forward_pre_hook(lambda module, args: None)
        x = mg.tensor([1.0])
        assert layer(x) is x

    def test_with_kwargs_gets_and_replaces_kwargs(self):
        two = Two()
        seen = []

        def hook(module, args, kwargs):
            seen.append(dict(kwargs))
            return args, {**kwargs, "scale": 4.0}

        two.register_forward_pre_hook(hook, with_kwargs=True)
        product, _ = two(mg.tensor([1.0]), mg.tensor([2.0]), flag=True)
        assert seen == [{"flag": True}]
        assert product.item() == 8.0

    def test_with_kwargs_must_return_args_and_kwargs(self):
        two = Two()
        two.register_forward_pre_hook(lambda module, args, kwargs: args[0], with_kwargs=True)
        with pytest.raises(RuntimeError, match=r"tuple of \(new_args, new_kwargs\)"):
            two(mg.tensor([1.0]), mg.tensor([2.0]))

    def test_with_kwargs_returning_the_args_pair_is_a_type_error(self):
        two = Two()
        # (a, b) looks like (args, kwargs): b is no dict, as PyTorch also finds out
        two.register_forward_pre_hook(lambda module, args, kwargs: args, with_kwargs=True)
        with pytest.raises(TypeError, match="return a dict there"):
            two(mg.tensor([1.0]), mg.tensor([2.0]))

    def test_hooks_run_in_order_and_prepend_goes_first(self):
        layer = nn.Identity()
        order = []
        layer.register_forward_pre_hook(lambda m, a: order.append("first"))
        layer.register_forward_pre_hook(lambda m, a: order.append("second"))
        layer.register_forward_pre_hook(lambda m, a: order.append("prepended"), prepend=True)
        layer(mg.tensor([1.0]))
        assert order == ["prepended", "first", "second"]

    def test_matches_pytorch(self, real_torch):
        mine, theirs = twin_linears(real_torch)
        for layer in (mine, theirs):
            layer.register_forward_pre_hook(lambda module, args: (args[0] * 3,))
        x = data(4, 3)
        np.testing.assert_allclose(
            mine(Variable(x)).data, theirs(real_torch.tensor(x)).detach().numpy(), rtol=1e-12
        )


# =========================================================================== forward hooks


class TestForwardHooks:
    def test_sees_args_and_output(self):
        layer = nn.Linear(3, 2)
        seen = []
        layer.register_forward_hook(lambda module, args, output: seen.append((args, output)))
        x = variable(4, 3)
        y = layer(x)
        ((args, output),) = seen
        assert args[0] is x and output is y

    def test_a_returned_value_replaces_the_output(self):
        layer = nn.Identity()
        layer.register_forward_hook(lambda module, args, output: output + 1)
        layer.register_forward_hook(lambda module, args, output: output * 10)
        assert layer(mg.tensor([1.0])).item() == 20.0

    def test_sees_the_args_a_pre_hook_gave(self):
        layer = nn.Identity()
        seen = []
        layer.register_forward_pre_hook(lambda module, args: (args[0] * 2,))
        layer.register_forward_hook(lambda module, args, output: seen.append(args[0].item()))
        layer(mg.tensor([1.0]))
        assert seen == [2.0]

    def test_with_kwargs(self):
        two = Two()
        seen = []
        two.register_forward_hook(
            lambda module, args, kwargs, output: seen.append((len(args), kwargs)), with_kwargs=True
        )
        two(mg.tensor([1.0]), mg.tensor([2.0]), 3.0, flag="x")
        assert seen == [(3, {"flag": "x"})]

    def test_always_call_runs_when_forward_raises(self):
        class Broken(nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")

        broken = Broken()
        seen = []
        broken.register_forward_hook(lambda m, a, o: seen.append(("always", o)), always_call=True)
        broken.register_forward_hook(lambda m, a, o: seen.append(("plain", o)))
        with pytest.raises(ValueError, match="forward failed"):
            broken(mg.tensor([1.0]))
        assert seen == [("always", None)]

    def test_an_always_call_hook_that_fails_too_is_only_warned_about(self):
        class Broken(nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")

        def failing(module, args, output):
            raise KeyError("hook failed too")

        broken = Broken()
        broken.register_forward_hook(failing, always_call=True)
        with pytest.warns(UserWarning, match="always_call=True.*silenced"):
            with pytest.raises(ValueError, match="forward failed"):
                broken(mg.tensor([1.0]))

    def test_always_call_hooks_run_once_when_a_later_hook_raises(self):
        layer = nn.Identity()
        calls = []
        layer.register_forward_hook(lambda m, a, o: calls.append("always"), always_call=True)

        def failing(module, args, output):
            raise RuntimeError("later hook failed")

        layer.register_forward_hook(failing)
        with pytest.raises(RuntimeError, match="later hook failed"):
            layer(mg.tensor([1.0]))
        assert calls == ["always"]

    def test_matches_pytorch(self, real_torch):
        mine, theirs = twin_linears(real_torch)
        for layer in (mine, theirs):
            layer.register_forward_hook(lambda module, args, output: output * args[0].sum())
        x = data(4, 3)
        mine_x, their_x = Variable(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
        mine_y, their_y = mine(mine_x), theirs(their_x)
        np.testing.assert_allclose(mine_y.data, their_y.detach().numpy(), rtol=1e-12)
        mine_y.sum().backward()
        their_y.sum().backward()
        np.testing.assert_allclose(mine_x.grad.data, their_x.grad.numpy(), rtol=1e-12)


# =========================================================================== backward hooks


class TestFullBackwardHooks:
    def test_receives_grad_input_and_grad_output(self):
        layer = nn.Linear(3, 2)
        seen = []
        layer.register_full_backward_hook(lambda m, gi, go: seen.append((m, gi, go)))
        x = variable(4, 3, requires_grad=True)
        (layer(x) * 2).sum().backward()
        ((module, grad_input, grad_output),) = seen
        assert module is layer
        assert isinstance(grad_input, tuple) and isinstance(grad_output, tuple)
        np.testing.assert_allclose(grad_output[0].data, np.full((4, 2), 2.0))
        np.testing.assert_allclose(grad_input[0].data, x.grad.data)

    def test_tuple_structure_follows_the_positional_arguments_and_outputs(self):
        two = Two()
        seen = []
        two.register_full_backward_hook(lambda m, gi, go: seen.append((shapes(gi), shapes(go))))
        a = variable(3, requires_grad=True)
        product, _ = two(a, variable(3, seed=1), 2.0, flag=True)
        product.sum().backward()
        # b does not require grad, but is a Variable: it gets its gradient, as in PyTorch;
        # 2.0 is not a Variable: None. The unused output's gradient is None.
        assert seen == [([(3,), (3,), None], [(3,), None])]

    def test_an_unused_input_gets_zeros_and_an_unused_output_none(self):
        class Halves(nn.Module):
            def forward(self, a, b):
                return a * 2, a * 3

        halves = Halves()
        seen = []
        halves.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
        first, _ = halves(mg.ones(2, requires_grad=True), mg.ones(2))
        first.sum().backward()
        ((grad_input, grad_output),) = seen
        np.testing.assert_array_equal(grad_input[1].data, [0.0, 0.0])
        assert grad_output[1] is None

    def test_a_returned_grad_input_replaces_the_gradient(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
        x = variable(4, 3, requires_grad=True)
        layer(x).sum().backward()
        expected = np.ones((4, 2)) @ layer.weight.data * 10
        np.testing.assert_allclose(x.grad.data, expected, rtol=1e-12)

    def test_a_wrong_number_of_gradients_is_an_error(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        expected = "invalid number of grad_input, got 2, but expected 1"
        with pytest.raises(RuntimeError, match=expected):
            layer(variable(4, 3, requires_grad=True)).sum().backward()

    def test_no_input_requiring_grad_fires_with_none_and_warns(self):
        layer = nn.Linear(3, 2)
        seen = []
        layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, shapes(go))))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            layer(variable(4, 3)).sum().backward()
        assert seen == [((None,), [(4, 2)])]
        assert layer.weight.grad is not None

    def test_no_input_requiring_grad_cannot_return_gradients(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: (mg.ones(4, 3),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="no input requires gradient"):
                layer(variable(4, 3)).sum().backward()

    def test_not_called_under_no_grad_or_without_backward(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: pytest.fail("called"))
        with mg.no_grad():
            y = layer(variable(4, 3, requires_grad=True))
        assert not y.requires_grad
        layer(variable(4, 3, requires_grad=True))  # forward only

    def test_an_output_that_is_no_variable_or_tuple_warns(self):
        class Named(nn.Module):
            def forward(self, x):
                return {"y": x * 2}

        named = Named()
        named.register_full_backward_hook(lambda m, gi, go: pytest.fail("called"))
        with pytest.warns(UserWarning, match="should be a Variable or a tuple of Variables"):
            result = named(mg.ones(2, requires_grad=True))
        result["y"].sum().backward()

    def test_the_node_is_named_as_pytorchs(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: None)
        y = layer(variable(4, 3, requires_grad=True))
        assert y.grad_fn.name() == "BackwardHookFunctionBackward"

    def test_matches_pytorch_with_a_replacement(self, real_torch):
        mine, theirs = twin_linears(real_torch)
        records = {"mine": [], "theirs": []}

        def hook_for(name):
            def hook(module, grad_input, grad_output):
                records[name].append((grad_input[0] * 1.0, grad_output[0] * 1.0))
                return (grad_input[0] * 3,)

            return hook

        mine.register_full_backward_hook(hook_for("mine"))
        theirs.register_full_backward_hook(hook_for("theirs"))
        x = data(5, 3)
        mine_x, their_x = Variable(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
        (mine(mine_x) ** 2).sum().backward()
        (theirs(their_x) ** 2).sum().backward()
        ((mine_gi, mine_go),) = records["mine"]
        ((their_gi, their_go),) = records["theirs"]
        np.testing.assert_allclose(mine_gi.data, their_gi.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine_go.data, their_go.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine_x.grad.data, their_x.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy(), rtol=1e-12)

    def test_tuple_structure_matches_pytorch(self, real_torch):
        class TheirTwo(real_torch.nn.Module):
            def forward(self, a, b, scale=1.0, flag=None):
                return a * b * scale, a + b

        results = []
        for library, module in ((mg, Two()), (real_torch, TheirTwo())):
            seen = []
            module.register_full_backward_hook(
                lambda m, gi, go, seen=seen: seen.append((shapes(gi), shapes(go)))
            )
            a = library.tensor(data(3), requires_grad=True)
            b = library.tensor(data(3, seed=1))
            _, total = module(a, b, 2.0)
            total.sum().backward()
            results.append(seen)
        assert results[0] == results[1]


class TestFullBackwardPreHooks:
    def test_sees_grad_output_and_may_replace_it(self):
        layer = nn.Linear(3, 2)
        seen = []

        def hook(module, grad_output):
            seen.append(grad_output[0].data.copy())
            return (grad_output[0] * 0.5,)

        layer.register_full_backward_pre_hook(hook)
        x = variable(4, 3, requires_grad=True)
        layer(x).sum().backward()
        np.testing.assert_array_equal(seen[0], np.ones((4, 2)))
        np.testing.assert_allclose(layer.bias.grad.data, [2.0, 2.0])  # 4 rows · ½
        np.testing.assert_allclose(x.grad.data, 0.5 * np.ones((4, 2)) @ layer.weight.data)

    def test_runs_before_the_backward_hook(self):
        layer = nn.Linear(3, 2)
        order = []
        layer.register_full_backward_hook(lambda m, gi, go: order.append("hook"))
        layer.register_full_backward_pre_hook(lambda m, go: order.append("pre"))
        layer(variable(4, 3, requires_grad=True)).sum().backward()
        assert order == ["pre", "hook"]

    def test_a_wrong_number_of_gradients_is_an_error(self):
        layer = nn.Linear(3, 2)
        layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        expected = "invalid number of grad_output, got 2, but expected 1"
        with pytest.raises(RuntimeError, match=expected):
            layer(variable(4, 3, requires_grad=True)).sum().backward()

    def test_matches_pytorch(self, real_torch):
        mine, theirs = twin_linears(real_torch)
        for layer in (mine, theirs):
            layer.register_full_backward_pre_hook(lambda m, go: (go[0] * go[0],))
        x = data(5, 3)
        mine_x, their_x = Variable(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
        (mine(mine_x) ** 3).sum().backward()
        (theirs(their_x) ** 3).sum().backward()
        np.testing.assert_allclose(mine_x.grad.data, their_x.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.bias.grad.data, theirs.bias.grad.numpy(), rtol=1e-12)


# =========================================================================== handles


class TestHandles:
    @pytest.mark.parametrize(
        "register",
        [
            lambda m, f: m.register_forward_pre_hook(f),
            lambda m, f: m.register_forward_hook(f),
            lambda m, f: m.register_full_backward_hook(f),
            lambda m, f: m.register_full_backward_pre_hook(f),
        ],
        ids=["forward_pre", "forward", "full_backward", "full_backward_pre"],
    )
    def test_remove_and_context_manager(self, register):
        layer = nn.Linear(3, 2)
        calls = []

        def hook(*args):
            calls.append(1)

        handle = register(layer, hook)
        assert isinstance(handle, RemovableHandle)
        layer(variable(4, 3, requires_grad=True)).sum().backward()
        assert calls == [1]
        handle.remove()
        handle.remove()  # twice is harmless
        layer(variable(4, 3, requires_grad=True)).sum().backward()
        assert calls == [1]
        with register(layer, hook):
            layer(variable(4, 3, requires_grad=True)).sum().backward()
        layer(variable(4, 3, requires_grad=True)).sum().backward()
        assert calls == [1, 1]

    def test_removing_one_of_two_same_functions_keeps_the_other(self):
        layer = nn.Identity()
        calls = []

        def hook(module, args):
            calls.append(1)

        first = layer.register_forward_pre_hook(hook)
        layer.register_forward_pre_hook(hook)
        first.remove()
        layer(mg.tensor([1.0]))
        assert calls == [1]

    def test_a_model_without_hooks_goes_straight_to_forward(self, monkeypatch):
        layer = nn.Linear(3, 2)
        assert not layer._hooks

        def refuse(*args):
            raise AssertionError("the hook path was taken")

        monkeypatch.setattr(module_file, "call_with_hooks", refuse)
        layer(variable(4, 3))
        handle = layer.register_forward_hook(lambda m, a, o: None)
        with pytest.raises(AssertionError, match="hook path"):
            layer(variable(4, 3))
        handle.remove()
        assert not layer._hooks  # emptied: the straight path again
        layer(variable(4, 3))

    def test_hooks_belong_to_their_module(self):
        first, second = nn.Identity(), nn.Identity()
        first.register_forward_hook(lambda m, a, o: o * 2)
        assert second(mg.tensor([1.0])).item() == 1.0
        assert first(mg.tensor([1.0])).item() == 2.0

    def test_bad_arguments(self):
        layer = nn.Identity()
        with pytest.raises(TypeError, match="register_forward_hook: hook must be a function"):
            layer.register_forward_hook(3)
        with pytest.raises(TypeError, match="prepend must be True or False"):
            layer.register_forward_pre_hook(print, prepend="yes")
        with pytest.raises(TypeError, match="with_kwargs must be True or False"):
            layer.register_forward_hook(print, with_kwargs=1)
        with pytest.raises(TypeError):
            layer.register_forward_hook(print, True)  # prepend is keyword-only, as in PyTorch

        class Early(nn.Module):
            def __init__(self):
                self.register_forward_hook(print)

        with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
            Early()


# =========================================================================== global hooks


class TestGlobalHooks:
    def test_forward_hooks_see_every_module_and_come_first(self):
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        seen = []
        model[0].register_forward_hook(lambda m, a, o: seen.append("own"))
        handle = module_hooks.register_module_forward_hook(
            lambda m, a, o: seen.append(type(m).__name__)
        )
        try:
            model(variable(1, 3))
        finally:
            handle.remove()
        assert seen == ["Linear", "own", "ReLU", "Sequential"]
        seen.clear()
        model(variable(1, 3))
        assert seen == ["own"]
        assert not module_hooks.GLOBAL_HOOKS

    def test_forward_pre_hook_and_backward_hooks(self):
        layer = nn.Linear(3, 2)
        seen = []
        handles = [
            module_hooks.register_module_forward_pre_hook(lambda m, a: seen.append("pre")),
            module_hooks.register_module_full_backward_pre_hook(
                lambda m, go: seen.append("backward_pre")
            ),
            module_hooks.register_module_full_backward_hook(
                lambda m, gi, go: seen.append("backward")
            ),
        ]
        try:
            layer(variable(4, 3, requires_grad=True)).sum().backward()
        finally:
            for handle in handles:
                handle.remove()
        assert seen == ["pre", "backward_pre", "backward"]
        assert not module_hooks.GLOBAL_HOOKS


# =========================================================================== compile


def test_a_compiled_step_with_a_hook_runs_eagerly_and_calls_it():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    calls = []
    model[0].register_forward_hook(lambda m, a, o: calls.append(1))
    x, y = variable(8, 3), variable(8, 1, seed=1)

    def step():
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.item()

    compiled = mg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            compiled()
    assert len(calls) == 4
    assert "a hook on Linear" in compiled.explain()


def test_backward_hooks_on_cuda():
    """On "cuda" (Numba's simulator in the tests): the hooks see Variables on the device."""
    layer = nn.Linear(3, 2).cuda()
    seen = []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].device, go[0].device)))
    x = variable(4, 3).to("cuda").requires_grad_()
    layer(x).sum().backward()
    assert seen == [("cuda", "cuda")]
    assert x.grad.device == "cuda"

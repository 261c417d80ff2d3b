"""minigrad.nn: Module, Linear, Sequential, activations, losses, init and state dicts.

Everything follows PyTorch's semantics (tests/test_nn_torch_crosscheck.py compares the
numbers with torch itself when it is installed); here each behaviour is checked on its own,
against NumPy or against values worked out by hand.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad as torch  # the PyTorch-tutorial layer at the end runs under this name
from minigrad import Parameter, Variable, nn
from minigrad.nn import init


def param(*shape: int, seed: int = 0) -> Parameter:
    return Parameter(np.random.default_rng(seed).standard_normal(shape))


def data(*shape: int, seed: int = 1, requires_grad: bool = False) -> Variable:
    values = np.random.default_rng(seed).standard_normal(shape)
    return Variable(values, requires_grad=requires_grad)


class Affine(nn.Module):
    """A module with a Parameter, a declared-absent bias and a plain attribute."""

    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.scale = param(n)
        self.register_parameter("bias", None)
        self.n = n

    def forward(self, x: Variable) -> Variable:
        y = x * self.scale
        return y if self.bias is None else y + self.bias


class Net(nn.Module):
    """Two levels of nesting: Net → (first, block → (inner, act), head)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(2, 3)
        self.block = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        self.head = nn.Linear(3, 1)
        self.offset = param(1)

    def forward(self, x: Variable) -> Variable:
        return self.head(self.block(self.first(x))) + self.offset


# =========================================================================== Module


class TestRegistration:
    def test_parameters_and_modules_are_registered_in_assignment_order(self):
        net = Net()
        assert list(net._modules) == ["first", "block", "head"]
        assert list(net._parameters) == ["offset"]
        assert net.first is net._modules["first"]
        assert net.offset is net._parameters["offset"]
        assert "first" not in net.__dict__ and "offset" not in net.__dict__

    def test_named_parameters_have_dotted_names_in_order(self):
        net = Net()
        names = [name for name, _ in net.named_parameters()]
        assert names == [
            "offset",
            "first.weight",
            "first.bias",
            "block.0.weight",
            "block.0.bias",
            "head.weight",
            "head.bias",
        ]
        assert [id(p) for p in net.parameters()] == [id(p) for _, p in net.named_parameters()]
        assert net.named_parameters().__next__()[1] is net.offset
        assert dict(net.named_parameters())["block.0.weight"] is net.block[0].weight

    def test_named_parameters_without_recursion_and_with_a_prefix(self):
        net = Net()
        assert [name for name, _ in net.named_parameters(recurse=False)] == ["offset"]
        assert [name for name, _ in net.first.named_parameters(prefix="enc")] == [
            "enc.weight",
            "enc.bias",
        ]

    def test_a_shared_parameter_is_listed_once(self):
        class Tied(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = nn.Linear(2, 2)
                self.b = nn.Linear(2, 2)
                self.b.weight = self.a.weight

        tied = Tied()
        names = [name for name, _ in tied.named_parameters()]
        assert names == ["a.weight", "a.bias", "b.bias"]
        assert len(list(tied.parameters())) == 3

    def test_a_shared_module_is_listed_once(self):
        shared = nn.Linear(2, 2)
        model = nn.Sequential(shared, nn.ReLU(), shared)
        assert [name for name, _ in model.named_modules()] == ["", "0", "1"]
        assert len(list(model.parameters())) == 2

    def test_register_parameter_none_declares_an_absent_parameter(self):
        module = Affine()
        assert module.bias is None
        assert "bias" in module._parameters
        assert [name for name, _ in module.named_parameters()] == ["scale"]
        module.bias = None  # None stays allowed
        assert module.bias is None

        bias = param(3, seed=5)
        module.bias = bias
        assert module.bias is bias
        assert [name for name, _ in module.named_parameters()] == ["scale", "bias"]
        x = data(3)
        np.testing.assert_allclose(module(x).data, x.data * module.scale.data + bias.data)

    @pytest.mark.parametrize(
        "value",
        [Variable(np.zeros(3)), np.zeros(3), 0.0],
        ids=["Variable", "ndarray", "float"],
    )
    def test_a_registered_parameter_only_takes_a_parameter_or_none(self, value):
        module = Affine()
        with pytest.raises(TypeError, match=r"parameter 'bias'.*Parameter or None"):
            module.bias = value
        assert module.bias is None

    def test_register_parameter_rejects_other_types(self):
        module = Affine()
        with pytest.raises(TypeError, match=r"parameter 'w'.*Parameter or None"):
            module.register_parameter("w", Variable(np.zeros(2)))
        with pytest.raises(TypeError, match="is not a Module"):
            module.add_module("child", Variable(np.zeros(2)))

    def test_a_plain_variable_attribute_is_not_a_parameter(self):
        module = Affine()
        module.buffer = Variable(np.zeros(2), requires_grad=True)
        assert [name for name, _ in module.named_parameters()] == ["scale"]
        assert "buffer" in module.__dict__

    def test_assigning_a_parameter_before_init_is_an_attribute_error(self):
        class Early(nn.Module):
            def __init__(self) -> None:
                self.weight = param(2)
                super().__init__()

        with pytest.raises(AttributeError) as info:
            Early()
        message = str(info.value)
        assert "before Module.__init__()" in message
        assert "super().__init__()" in message
        assert "Early.__init__" in message
        assert "'weight'" in message

    def test_assigning_a_module_before_init_is_an_attribute_error(self):
        class Early(nn.Module):
            def __init__(self) -> None:
                self.fc = nn.Linear(1, 1)
                super().__init__()

        with pytest.raises(AttributeError, match=r"super\(\).__init__\(\) first in Early"):
            Early()

    def test_register_parameter_before_init_is_an_attribute_error(self):
        class Early(nn.Module):
            def __init__(self) -> None:
                self.register_parameter("bias", None)
                super().__init__()

        with pytest.raises(AttributeError, match=r"super\(\).__init__\(\) first in Early"):
            Early()

    def test_a_plain_attribute_before_init_is_fine(self):
        class Early(nn.Module):
            def __init__(self) -> None:
                self.size = 3
                super().__init__()

        assert Early().size == 3

    def test_missing_attribute_error_names_class_and_attribute(self):
        with pytest.raises(AttributeError, match=re.escape("'Net' object has no attribute 'tail'")):
            _ = Net().tail

    @pytest.mark.parametrize("name", ["", "a.b"])
    def test_bad_parameter_names(self, name):
        with pytest.raises(ValueError, match="empty or contain"):
            Affine().register_parameter(name, None)

    def test_parameter_name_must_be_a_str(self):
        with pytest.raises(TypeError, match="name should be a str; got int"):
            Affine().register_parameter(1, None)

    def test_del_removes_a_parameter_and_a_module(self):
        net = Net()
        del net.offset
        del net.head
        assert "offset" not in dict(net.named_parameters())
        assert not any(name.startswith("head") for name, _ in net.named_parameters())
        with pytest.raises(AttributeError, match="'Net' object has no attribute 'offset'"):
            _ = net.offset
        net.offset = 2.0  # a plain attribute again
        assert net.offset == 2.0
        assert "offset" not in dict(net.named_parameters())

    def test_reassigning_a_name_moves_it_between_registries(self):
        module = Affine()
        module.scale = nn.Linear(1, 1)
        assert "scale" not in module._parameters
        assert module._modules["scale"] is module.scale
        module.scale = param(3)
        assert "scale" not in module._modules
        assert [name for name, _ in module.named_parameters()] == ["scale"]


class TestTraversal:
    def test_children_are_the_direct_submodules_in_order(self):
        net = Net()
        assert list(net.children()) == [net.first, net.block, net.head]
        assert [name for name, _ in net.named_children()] == ["first", "block", "head"]

    def test_modules_and_named_modules_walk_depth_first(self):
        net = Net()
        named = list(net.named_modules())
        assert [name for name, _ in named] == ["", "first", "block", "block.0", "block.1", "head"]
        assert named[0][1] is net
        assert named[3][1] is net.block[0]
        assert list(net.modules()) == [module for _, module in named]

    def test_named_modules_with_a_prefix(self):
        block = nn.Sequential(nn.Linear(1, 1))
        assert [name for name, _ in block.named_modules(prefix="enc")] == ["enc", "enc.0"]


class TestTrainingHelpers:
    def _with_grads(self) -> Net:
        net = Net()
        net(data(4, 2)).sum().backward()
        assert all(p.grad is not None for p in net.parameters())
        return net

    def test_zero_grad_sets_gradients_to_none(self):
        net = self._with_grads()
        assert net.zero_grad() is None
        assert all(p.grad is None for p in net.parameters())

    def test_zero_grad_without_set_to_none_fills_zeros(self):
        net = self._with_grads()
        net.zero_grad(set_to_none=False)
        for p in net.parameters():
            assert p.grad.shape == p.shape
            np.testing.assert_array_equal(p.grad.data, np.zeros(p.shape))

    def test_zero_grad_leaves_missing_gradients_alone(self):
        net = Net()
        net.zero_grad(set_to_none=False)
        assert all(p.grad is None for p in net.parameters())

    def test_train_and_eval_recurse_and_return_self(self):
        net = Net()
        assert all(module.training for module in net.modules())
        assert net.eval() is net
        assert not any(module.training for module in net.modules())
        assert net.train() is net
        assert all(module.training for module in net.modules())
        assert net.train(False) is net
        assert not net.block[1].training

    def test_train_takes_a_bool(self):
        with pytest.raises(TypeError, match="True or False"):
            Net().train("no")

    def test_call_runs_forward_with_args_and_kwargs(self):
        class Record(nn.Module):
            def forward(self, a, b=0, *, c=0):
                return (a, b, c)

        assert Record()(1, 2, c=3) == (1, 2, 3)
        assert Record()(1, b=5) == (1, 5, 0)

    def test_missing_forward_names_the_module(self):
        class NoForward(nn.Module):
            pass

        with pytest.raises(NotImplementedError, match=r"Module \[NoForward\].*\"forward\""):
            NoForward()(data(2))


class TestRepr:
    def test_extra_repr_defaults_to_empty(self):
        assert nn.Module().extra_repr() == ""
        assert repr(nn.ReLU()) == "ReLU()"
        assert repr(nn.Tanh()) == "Tanh()"
        assert repr(nn.Sigmoid()) == "Sigmoid()"

    def test_linear_repr(self):
        assert repr(nn.Linear(2, 3)) == "Linear(in_features=2, out_features=3, bias=True)"
        assert repr(nn.Linear(4, 1, bias=False)) == (
            "Linear(in_features=4, out_features=1, bias=False)"
        )

    def test_loss_repr(self):
        assert repr(nn.MSELoss()) == "MSELoss()"
        assert repr(nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss(reduction='sum')"

    def test_nested_repr(self):
        class Custom(nn.Module):
            def forward(self, x):
                return x

        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), Custom())
        assert repr(model) == (
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Custom()\n"
            ")"
        )

    def test_repr_indents_deeper_levels_and_puts_extra_repr_first(self):
        class Scaled(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.body = nn.Sequential(nn.Linear(1, 2))

            def extra_repr(self) -> str:
                return "factor=2"

        assert repr(Scaled()) == (
            "Scaled(\n"
            "  factor=2\n"
            "  (body): Sequential(\n"
            "    (0): Linear(in_features=1, out_features=2, bias=True)\n"
            "  )\n"
            ")"
        )

    def test_multi_line_extra_repr_is_indented_like_pytorch(self):
        class TwoLines(nn.Module):
            def extra_repr(self) -> str:
                return "a=1\nb=2"

        assert repr(TwoLines()) == "TwoLines(\n  a=1\n  b=2\n)"


# =========================================================================== Linear


class TestLinear:
    def test_shapes_of_parameters_and_outputs(self):
        layer = nn.Linear(3, 4)
        assert layer.weight.shape == (4, 3)
        assert layer.bias.shape == (4,)
        assert isinstance(layer.weight, Parameter) and isinstance(layer.bias, Parameter)
        assert layer.in_features == 3 and layer.out_features == 4
        assert layer(data(5, 3)).shape == (5, 4)
        assert layer(data(2, 5, 3)).shape == (2, 5, 4)
        assert layer(data(3)).shape == (4,)

    def test_values_are_x_weight_transposed_plus_bias(self):
        layer = nn.Linear(3, 4)
        x = data(5, 3)
        y = layer(x)
        np.testing.assert_allclose(
            y.data, x.data @ layer.weight.data.T + layer.bias.data, rtol=1e-12
        )
        assert y.requires_grad

    def test_without_bias(self):
        layer = nn.Linear(3, 2, bias=False)
        assert layer.bias is None
        assert [name for name, _ in layer.named_parameters()] == ["weight"]
        x = data(4, 3)
        np.testing.assert_allclose(layer(x).data, x.data @ layer.weight.data.T, rtol=1e-12)

    @pytest.mark.parametrize("in_features", [1, 5, 64])
    def test_initialisation_stays_within_one_over_sqrt_fan_in(self, in_features):
        layer = nn.Linear(in_features, 50)
        bound = 1 / math.sqrt(in_features)
        assert np.all(np.abs(layer.weight.data) <= bound)
        assert np.all(np.abs(layer.bias.data) <= bound)
        assert np.unique(layer.weight.data).size > 1  # filled, not constant
        assert layer.weight.is_leaf and layer.weight.requires_grad
        assert layer.weight.grad is None

    def test_initialisation_is_repeatable_with_manual_seed(self):
        mg.manual_seed(7)
        first = nn.Linear(4, 3)
        mg.manual_seed(7)
        second = nn.Linear(4, 3)
        third = nn.Linear(4, 3)
        np.testing.assert_array_equal(first.weight.data, second.weight.data)
        np.testing.assert_array_equal(first.bias.data, second.bias.data)
        assert not np.array_equal(second.weight.data, third.weight.data)

    @pytest.mark.parametrize(
        ("x", "error", "got"),
        [
            (Variable(np.zeros((3, 5))), ValueError, "(3, 5)"),
            (Variable(np.float64(1.0)), ValueError, "()"),
            (np.zeros((3, 2)), TypeError, "ndarray"),  # not a Variable: PyTorch's TypeError
        ],
        ids=["wrong-last-dim", "scalar", "not-a-Variable"],
    )
    def test_bad_input_shape(self, x, error, got):
        with pytest.raises(error) as info:
            nn.Linear(2, 4)(x)
        message = str(info.value)
        assert "(..., 2)" in message
        assert f"got {got}" in message

    @pytest.mark.parametrize(
        ("bad", "error"), [(-1, ValueError), (2.0, TypeError), (True, TypeError), ("3", TypeError)]
    )
    def test_bad_feature_counts(self, bad, error):
        # A wrong kind is a TypeError, as PyTorch's; a negative count a ValueError.
        with pytest.raises(error, match="in_features must be an int >= 0"):
            nn.Linear(bad, 2)

    @pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
    def test_gradcheck(self, bias):
        layer = nn.Linear(3, 2, bias=bias)
        assert layer.weight.dtype == np.float64
        x = data(4, 3, requires_grad=True)
        params = tuple(layer.parameters())
        assert mg.gradcheck(lambda x, *params: layer(x), (x, *params))

    def test_backward_gradients_match_numpy(self):
        layer = nn.Linear(3, 2)
        x = data(4, 3, requires_grad=True)
        upstream = np.random.default_rng(3).standard_normal((4, 2))
        (layer(x) * Variable(upstream)).sum().backward()
        np.testing.assert_allclose(layer.weight.grad.data, upstream.T @ x.data, rtol=1e-12)
        np.testing.assert_allclose(layer.bias.grad.data, upstream.sum(0), rtol=1e-12)
        np.testing.assert_allclose(x.grad.data, upstream @ layer.weight.data, rtol=1e-12)


# =========================================================================== Sequential


class TestSequential:
    def test_applies_modules_in_order(self):
        first, second = nn.Linear(2, 3), nn.Linear(3, 1)
        model = nn.Sequential(first, nn.ReLU(), second)
        x = data(5, 2)
        expected = second(first(x).relu())
        np.testing.assert_allclose(model(x).data, expected.data, rtol=1e-12)

    def test_len_iteration_and_names(self):
        modules = [nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)]
        model = nn.Sequential(*modules)
        assert len(model) == 3
        assert list(model) == modules
        assert [name for name, _ in model.named_children()] == ["0", "1", "2"]
        assert len(nn.Sequential()) == 0

    def test_empty_sequential_is_the_identity(self):
        x = data(2)
        assert nn.Sequential()(x) is x

    def test_indexing(self):
        modules = [nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)]
        model = nn.Sequential(*modules)
        assert model[0] is modules[0]
        assert model[2] is modules[2]
        assert model[-1] is modules[2]
        assert model[-3] is modules[0]

    @pytest.mark.parametrize("index", [3, -4, 100])
    def test_out_of_range_index(self, index):
        model = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        with pytest.raises(IndexError, match=rf"index {index} is out of range.*3 modules"):
            model[index]

    @pytest.mark.parametrize(("index", "kind"), [("0", "str"), (1.0, "float"), (True, "bool")])
    def test_bad_index_type(self, index, kind):
        model = nn.Sequential(nn.ReLU(), nn.Tanh())
        with pytest.raises(TypeError, match=f"must be ints; got {kind}"):
            model[index]

    def test_non_module_argument(self):
        with pytest.raises(TypeError) as info:
            nn.Sequential(nn.ReLU(), mg.relu)
        assert "argument 1" in str(info.value)
        assert "Modules" in str(info.value)


# =========================================================================== activations


@pytest.mark.parametrize(
    ("module", "reference"),
    [
        (nn.ReLU(), lambda a: np.maximum(a, 0)),
        (nn.Tanh(), np.tanh),
        (nn.Sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    ],
    ids=["ReLU", "Tanh", "Sigmoid"],
)
def test_activations(module, reference):
    x = data(3, 4, requires_grad=True)
    np.testing.assert_allclose(module(x).data, reference(x.data), rtol=1e-12)
    assert list(module.parameters()) == []
    shifted = Variable(x.data + 0.05, requires_grad=True)  # away from ReLU's kink
    assert mg.gradcheck(module, (shifted,))


# =========================================================================== losses


class TestMSELoss:
    @pytest.mark.parametrize(
        ("reduction", "reduce"),
        [("mean", np.mean), ("sum", np.sum), ("none", lambda a: a)],
    )
    def test_values(self, reduction, reduce):
        prediction, target = data(4, 3, seed=1), data(4, 3, seed=2)
        loss = nn.MSELoss(reduction=reduction)(prediction, target)
        expected = reduce((prediction.data - target.data) ** 2)
        assert loss.shape == np.shape(expected)
        np.testing.assert_allclose(loss.data, expected, rtol=1e-12)

    def test_default_is_mean(self):
        assert nn.MSELoss().reduction == "mean"
        loss = nn.MSELoss()(Variable(np.array([1.0, 3.0])), Variable(np.array([0.0, 0.0])))
        assert loss.item() == pytest.approx(5.0)

    def test_takes_an_array_target(self):
        loss = nn.MSELoss(reduction="sum")(Variable(np.array([1.0, 2.0])), np.array([0.0, 4.0]))
        assert loss.item() == pytest.approx(5.0)

    @pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
    def test_gradcheck(self, reduction):
        prediction = data(3, 2, seed=1, requires_grad=True)
        target = data(3, 2, seed=2, requires_grad=True)
        assert mg.gradcheck(nn.MSELoss(reduction=reduction), (prediction, target))

    def test_gradient_is_two_differences_over_n(self):
        prediction, target = data(4, 3, seed=1, requires_grad=True), data(4, 3, seed=2)
        nn.MSELoss()(prediction, target).backward()
        expected = 2 * (prediction.data - target.data) / prediction.data.size
        np.testing.assert_allclose(prediction.grad.data, expected, rtol=1e-12)

    def test_shape_mismatch(self):
        with pytest.raises(ValueError) as info:
            nn.MSELoss()(data(3), data(3, 1))
        message = str(info.value)
        assert "(3,)" in message and "(3, 1)" in message and "must match" in message

    def test_prediction_must_be_a_variable(self):
        with pytest.raises(TypeError, match="argument 'x' .* must be a Variable, but got ndarray"):
            nn.MSELoss()(np.zeros(3), data(3))


def numpy_log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


class TestCrossEntropyLoss:
    labels = np.array([2, 0, 3, 3, 1])

    @pytest.mark.parametrize(
        ("reduction", "reduce"),
        [("mean", np.mean), ("sum", np.sum), ("none", lambda a: a)],
    )
    def test_values_equal_numpy_log_softmax(self, reduction, reduce):
        logits = data(5, 4)
        loss = nn.CrossEntropyLoss(reduction=reduction)(logits, Variable(self.labels))
        picked = numpy_log_softmax(logits.data)[np.arange(5), self.labels]
        np.testing.assert_allclose(loss.data, reduce(-picked), rtol=1e-12)

    def test_large_logits_stay_finite(self):
        logits = Variable(np.array([[1000.0, 0.0], [0.0, -1000.0]]))
        loss = nn.CrossEntropyLoss(reduction="none")(logits, np.array([0, 1]))
        np.testing.assert_allclose(loss.data, [0.0, 1000.0], atol=1e-12)

    @pytest.mark.parametrize(
        "labels", [np.array([2, 0, 3, 3, 1]), [2, 0, 3, 3, 1], np.array([2, 0, 3, 3, 1], "u1")]
    )
    def test_target_as_array_list_or_unsigned(self, labels):
        logits = data(5, 4)
        expected = nn.CrossEntropyLoss()(logits, Variable(self.labels)).item()
        assert nn.CrossEntropyLoss()(logits, labels).item() == pytest.approx(expected, rel=1e-12)

    def test_gradient_is_softmax_minus_onehot_over_n(self):
        logits = data(5, 4, requires_grad=True)
        nn.CrossEntropyLoss()(logits, self.labels).backward()
        softmax = np.exp(numpy_log_softmax(logits.data))
        onehot = np.eye(4)[self.labels]
        np.testing.assert_allclose(logits.grad.data, (softmax - onehot) / 5, atol=1e-12)

    def test_gradient_matches_finite_differences(self):
        logits = data(5, 4, requires_grad=True)
        loss = nn.CrossEntropyLoss()
        assert mg.gradcheck(lambda z: loss(z, self.labels), (logits,))
        eps = 1e-6
        numerical = np.zeros((5, 4))
        for i in np.ndindex(5, 4):
            up, down = logits.data.copy(), logits.data.copy()
            up[i] += eps
            down[i] -= eps
            plus = loss(Variable(up), self.labels).item()
            minus = loss(Variable(down), self.labels).item()
            numerical[i] = (plus - minus) / (2 * eps)
        softmax = np.exp(numpy_log_softmax(logits.data))
        np.testing.assert_allclose(numerical, (softmax - np.eye(4)[self.labels]) / 5, atol=1e-8)

    @pytest.mark.parametrize(
        ("target", "got"),
        [
            (np.array([0.0, 1.0, 2.0]), "shape (3,) of dtype float64"),
            (np.array([True, False, True]), "dtype bool"),
            (np.array([[0], [1], [2]]), "shape (3, 1)"),
            (np.array([0, 1]), "shape (2,)"),
            # A float target of the logits' shape is class probabilities, as in PyTorch;
            # one of another shape is neither indices nor probabilities.
            (np.eye(5)[[0, 1, 2]], "shape (3, 5)"),
        ],
        ids=["float", "bool", "column", "short", "one-hot-wrong-width"],
    )
    def test_bad_target_dtype_or_shape(self, target, got):
        with pytest.raises(ValueError) as info:
            nn.CrossEntropyLoss()(data(3, 4), target)
        message = str(info.value)
        assert "3 integer class indices" in message
        assert got in message

    @pytest.mark.parametrize("bad", [4, -1, 10])
    def test_out_of_range_class(self, bad):
        with pytest.raises(IndexError) as info:  # PyTorch's class
            nn.CrossEntropyLoss()(data(3, 4), np.array([0, bad, 1]))
        message = str(info.value)
        assert f"Target {bad} is out of bounds" in message and "4 classes (0 to 3)" in message

    @pytest.mark.parametrize("shape", [(4,), (2, 3, 4), ()])
    def test_bad_logits_ndim(self, shape):
        with pytest.raises(ValueError, match=re.escape(f"(batch, classes); got {shape}")):
            nn.CrossEntropyLoss()(Variable(np.zeros(shape)), np.array([0]))


@pytest.mark.parametrize("loss", [nn.MSELoss, nn.CrossEntropyLoss])
@pytest.mark.parametrize("reduction", ["avg", "Mean", None])
def test_bad_reduction(loss, reduction):
    with pytest.raises(ValueError, match=r"reduction must be one of mean, sum, none; got"):
        loss(reduction=reduction)


# =========================================================================== init


class TestInit:
    @pytest.mark.parametrize(
        ("shape", "fans"),
        [((4, 3), (3, 4)), ((1, 7), (7, 1)), ((8, 3, 5, 5), (75, 200)), ((2, 6, 4), (24, 8))],
    )
    def test_fan_in_and_fan_out(self, shape, fans):
        assert init._calculate_fan_in_and_fan_out(mg.empty(*shape)) == fans

    @pytest.mark.parametrize("shape", [(5,), ()])
    def test_fan_needs_two_dimensions(self, shape):
        with pytest.raises(ValueError, match=r"fewer than 2 dimensions \(got shape"):
            init._calculate_fan_in_and_fan_out(Variable(np.zeros(shape)))

    @pytest.mark.parametrize(
        ("nonlinearity", "param", "gain"),
        [
            ("linear", None, 1.0),
            ("sigmoid", None, 1.0),
            ("tanh", None, 5 / 3),
            ("relu", None, math.sqrt(2)),
            ("leaky_relu", None, math.sqrt(2 / (1 + 0.01**2))),
            ("leaky_relu", math.sqrt(5), math.sqrt(1 / 3)),
        ],
    )
    def test_calculate_gain(self, nonlinearity, param, gain):
        assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-15)

    def test_calculate_gain_rejects_unknown_names(self):
        with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
            init.calculate_gain("swish")

    def _bound_used(self, monkeypatch, **kwargs) -> tuple[float, float]:
        """Run kaiming_uniform_ with uniform_ recorded; return the (a, b) it asked for."""
        calls = []
        real = init.uniform_

        def recording(tensor, a=0.0, b=1.0):
            calls.append((a, b))
            return real(tensor, a, b)

        monkeypatch.setattr(init, "uniform_", recording)
        init.kaiming_uniform_(kwargs.pop("tensor"), **kwargs)
        (bounds,) = calls
        return bounds

    @pytest.mark.parametrize("shape", [(4, 3), (10, 50), (8, 3, 5, 5)])
    def test_kaiming_uniform_with_sqrt5_gives_one_over_sqrt_fan_in(self, monkeypatch, shape):
        weight = mg.empty(*shape)
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        low, high = self._bound_used(monkeypatch, tensor=weight, a=math.sqrt(5))
        gain = math.sqrt(2 / (1 + 5))
        assert high == pytest.approx(gain * math.sqrt(3 / fan_in), rel=1e-14)
        assert high == pytest.approx(1 / math.sqrt(fan_in), rel=1e-14)
        assert low == -high
        assert np.all(np.abs(weight.data) <= high)

    @pytest.mark.parametrize(
        ("mode", "nonlinearity", "expected"),
        [
            ("fan_in", "relu", math.sqrt(2) * math.sqrt(3 / 75)),
            ("fan_out", "relu", math.sqrt(2) * math.sqrt(3 / 200)),
            ("fan_out", "leaky_relu", math.sqrt(2) * math.sqrt(3 / 200)),  # a=0
            ("fan_in", "tanh", 5 / 3 * math.sqrt(3 / 75)),
        ],
    )
    def test_kaiming_uniform_modes_and_gains(self, monkeypatch, mode, nonlinearity, expected):
        weight = mg.empty(8, 3, 5, 5)
        low, high = self._bound_used(
            monkeypatch, tensor=weight, mode=mode, nonlinearity=nonlinearity
        )
        assert (low, high) == (pytest.approx(-expected, rel=1e-14), pytest.approx(expected))

    def test_kaiming_uniform_fills_up_to_the_bound(self):
        mg.manual_seed(0)
        weight = mg.empty(400, 500)
        init.kaiming_uniform_(weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(500)
        assert np.abs(weight.data).max() <= bound
        assert weight.data.max() > 0.999 * bound
        assert weight.data.min() < -0.999 * bound
        assert abs(weight.data.mean()) < 0.01 * bound
        assert np.std(weight.data) == pytest.approx(bound / math.sqrt(3), rel=0.01)

    def test_kaiming_uniform_fan_out_bound(self):
        weight = mg.empty(30, 600)
        init.kaiming_uniform_(weight, mode="fan_out", nonlinearity="relu")
        bound = math.sqrt(2) * math.sqrt(3 / 30)
        assert np.abs(weight.data).max() <= bound
        assert np.abs(weight.data).max() > 0.99 * bound

    def test_kaiming_uniform_rejects_a_bad_mode(self):
        with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'; got 'fan'"):
            init.kaiming_uniform_(mg.empty(2, 2), mode="fan")

    def test_uniform_and_normal_statistics(self):
        mg.manual_seed(1)
        u = init.uniform_(mg.empty(100_000), -2.0, 3.0)
        assert u.data.min() >= -2.0 and u.data.max() < 3.0
        assert u.data.mean() == pytest.approx(0.5, abs=0.03)
        n = init.normal_(mg.empty(100_000), mean=1.5, std=0.5)
        assert n.data.mean() == pytest.approx(1.5, abs=0.01)
        assert np.std(n.data) == pytest.approx(0.5, rel=0.02)

    @pytest.mark.parametrize(
        ("fill", "check"),
        [
            (lambda t: init.uniform_(t, -0.5, 0.5), lambda a: np.all(np.abs(a) <= 0.5)),
            (lambda t: init.normal_(t, 0.0, 2.0), lambda a: np.unique(a).size == a.size),
            (lambda t: init.constant_(t, 0.25), lambda a: np.all(a == 0.25)),
            (init.zeros_, lambda a: np.all(a == 0)),
            (init.ones_, lambda a: np.all(a == 1)),
            (lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), lambda a: np.all(a != 7.0)),
        ],
        ids=["uniform_", "normal_", "constant_", "zeros_", "ones_", "kaiming_uniform_"],
    )
    def test_fills_a_parameter_in_place_outside_no_grad(self, fill, check):
        weight = Parameter(np.full((3, 4), 7.0))
        array = weight._data
        version = weight._version
        assert mg.is_grad_enabled()
        result = fill(weight)
        assert result is weight
        assert weight._data is array  # the same memory, written in place
        assert check(weight.data)
        assert weight._version > version
        assert weight.is_leaf and weight.requires_grad and weight.grad_fn is None
        (weight * weight).sum().backward()  # still an ordinary leaf of later graphs
        np.testing.assert_allclose(weight.grad.data, 2 * weight.data)

    def test_fill_keeps_the_dtype(self):
        weight = Parameter(np.zeros((2, 3), dtype=np.float32))
        init.uniform_(weight, -1, 1)
        assert weight.dtype == np.float32

    @pytest.mark.parametrize(
        "fill",
        [
            lambda t: init.uniform_(t, -1, 1),
            lambda t: init.normal_(t),
            lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)),
        ],
        ids=["uniform_", "normal_", "kaiming_uniform_"],
    )
    def test_repeatable_with_manual_seed(self, fill):
        mg.manual_seed(3)
        first = fill(mg.empty(5, 4)).data.copy()
        second = fill(mg.empty(5, 4)).data.copy()
        mg.manual_seed(3)
        again = fill(mg.empty(5, 4)).data.copy()
        np.testing.assert_array_equal(first, again)
        assert not np.array_equal(first, second)

    def test_bad_arguments(self):
        with pytest.raises(ValueError, match="a <= b"):
            init.uniform_(mg.empty(2), 1.0, 0.0)
        with pytest.raises(ValueError, match="std >= 0"):
            init.normal_(mg.empty(2), 0.0, -1.0)
        with pytest.raises(TypeError, match="numeric Variable; got list"):
            init.zeros_([0.0, 0.0])  # a NumPy array (x.data) is filled in place instead
        with pytest.raises(TypeError, match="numeric Variable"):
            init.ones_(Variable("text"))


# =========================================================================== state_dict


def small_net() -> nn.Sequential:
    return nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))


class TestStateDict:
    def test_keys_values_and_round_trip(self):
        mg.manual_seed(0)
        source = small_net()
        state = source.state_dict()
        assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
        for name, value in source.named_parameters():
            np.testing.assert_array_equal(state[name].data, value.data)

        target = small_net()
        x = data(6, 2)
        assert not np.allclose(target(x).data, source(x).data)
        result = target.load_state_dict(state)
        assert result.missing_keys == [] and result.unexpected_keys == []
        np.testing.assert_array_equal(target(x).data, source(x).data)

    def test_values_are_copies(self):
        model = small_net()
        state = model.state_dict()
        saved = {name: value.data.copy() for name, value in state.items()}
        optimizer = mg.optim.SGD(model.parameters(), lr=0.5)
        model(data(4, 2)).sum().backward()
        optimizer.step()
        for name, value in model.named_parameters():
            assert state[name] is not value
            assert not state[name].requires_grad
            assert not np.shares_memory(state[name].data, value.data)
            np.testing.assert_array_equal(state[name].data, saved[name])
        assert not np.array_equal(model[0].weight.data, saved["0.weight"])

    def test_loading_keeps_the_parameter_objects(self):
        model = small_net()
        before = {name: (p, p._data) for name, p in model.named_parameters()}
        optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
        new_values = small_net().state_dict()
        model.load_state_dict(new_values)
        for name, p in model.named_parameters():
            assert p is before[name][0]
            assert p._data is before[name][1]
            np.testing.assert_array_equal(p.data, new_values[name].data)
            assert p.is_leaf and p.requires_grad

        # the optimizer built before loading still updates the loaded values
        model(data(4, 2)).sum().backward()
        expected = {name: p.data - 0.1 * p.grad.data for name, p in model.named_parameters()}
        optimizer.step()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(p.data, expected[name], rtol=1e-12)

    def test_loads_plain_arrays(self):
        model = nn.Linear(2, 1)
        model.load_state_dict({"weight": np.array([[1.0, 2.0]]), "bias": np.array([0.5])})
        np.testing.assert_array_equal(model.weight.data, [[1.0, 2.0]])
        np.testing.assert_array_equal(model.bias.data, [0.5])

    def test_loads_another_models_parameters_and_int_arrays(self):
        model, source = nn.Linear(2, 1), nn.Linear(2, 1)
        model.load_state_dict(dict(source.named_parameters()))
        np.testing.assert_array_equal(model.weight.data, source.weight.data)
        assert model.weight is not source.weight
        assert model.weight.is_leaf and model.weight.grad_fn is None
        model.load_state_dict({"weight": np.array([[1, 2]]), "bias": np.array([3])})
        assert model.weight.dtype == np.float64  # cast into the parameter's dtype
        np.testing.assert_array_equal(model.weight.data, [[1.0, 2.0]])

    def test_missing_and_unexpected_keys_strict(self):
        model = small_net()
        before = {name: p.data.copy() for name, p in model.named_parameters()}
        state = small_net().state_dict()
        del state["2.bias"]
        state["3.weight"] = Variable(np.zeros((1, 3)))
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(state)
        message = str(info.value)
        assert "Sequential" in message
        assert "missing keys ['2.bias']" in message
        assert "unexpected keys ['3.weight']" in message
        assert "strict=False" in message
        for name, p in model.named_parameters():
            np.testing.assert_array_equal(p.data, before[name])  # nothing changed

    def test_missing_and_unexpected_keys_not_strict(self):
        model = small_net()
        state = small_net().state_dict()
        old_bias = model[2].bias.data.copy()
        del state["2.bias"]
        state["extra"] = Variable(np.zeros(1))
        result = model.load_state_dict(state, strict=False)
        assert result.missing_keys == ["2.bias"]
        assert result.unexpected_keys == ["extra"]
        np.testing.assert_array_equal(model[0].weight.data, state["0.weight"].data)
        np.testing.assert_array_equal(model[2].bias.data, old_bias)

    @pytest.mark.parametrize("strict", [True, False])
    def test_shape_mismatch_names_key_and_shapes_and_changes_nothing(self, strict):
        model = small_net()
        before = {name: p.data.copy() for name, p in model.named_parameters()}
        state = small_net().state_dict()  # 0.weight is loadable, 2.weight is not
        state["2.weight"] = Variable(np.zeros((3, 1)))
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(state, strict=strict)
        message = str(info.value)
        assert "2.weight" in message
        assert "(3, 1)" in message and "(1, 3)" in message
        for name, p in model.named_parameters():
            np.testing.assert_array_equal(p.data, before[name])

    def test_not_a_dict(self):
        with pytest.raises(TypeError, match="expects a dict.*got list"):
            small_net().load_state_dict([])

    def test_absent_bias_is_not_in_the_state_dict(self):
        assert list(nn.Linear(2, 2, bias=False).state_dict()) == ["weight"]

    def test_a_tied_parameter_is_listed_under_each_name_as_pytorch_does(self):
        # nanoGPT ties the token embedding to the output layer: PyTorch's state_dict lists
        # the one tensor as both transformer.wte.weight and lm_head.weight.
        class Tied(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.wte = nn.Embedding(5, 3)
                self.lm_head = nn.Linear(3, 5, bias=False)
                self.wte.weight = self.lm_head.weight

        mg.manual_seed(0)
        model = Tied()
        state = model.state_dict()
        assert list(state) == ["wte.weight", "lm_head.weight"]
        assert state["wte.weight"] is state["lm_head.weight"]  # one copy, as one tensor
        assert [name for name, _ in model.named_parameters()] == ["wte.weight"]
        names = [name for name, _ in model.named_parameters(remove_duplicate=False)]
        assert names == ["wte.weight", "lm_head.weight"]

        target = Tied()
        assert target.load_state_dict(state) == ([], [])
        np.testing.assert_array_equal(target.lm_head.weight.data, model.lm_head.weight.data)
        assert target.wte.weight is target.lm_head.weight
        # A state dict saved before minigrad listed both names (one of them) loads too.
        older = {"wte.weight": Variable(np.ones((5, 3)))}
        assert target.load_state_dict(older) == ([], [])
        np.testing.assert_array_equal(target.lm_head.weight.data, np.ones((5, 3)))

    def test_a_shared_module_is_in_the_state_dict_under_each_name(self):
        shared = nn.Linear(2, 2)
        model = nn.Sequential(shared, nn.ReLU(), shared)
        assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
        names = [name for name, _ in model.named_modules(remove_duplicate=False)]
        assert names == ["", "0", "1", "2"]
        model.load_state_dict(model.state_dict())

    def test_a_tied_state_dict_matches_pytorch_keys_both_ways(self, real_torch):
        def build(lib):
            class Tied(lib.nn.Module):
                def __init__(self) -> None:
                    super().__init__()
                    self.wte = lib.nn.Embedding(5, 3)
                    self.lm_head = lib.nn.Linear(3, 5, bias=False)
                    self.wte.weight = self.lm_head.weight

            return Tied()

        theirs, mine = build(real_torch), build(mg)
        their_state = theirs.state_dict()
        assert list(mine.state_dict()) == list(their_state)
        mine.load_state_dict({k: v.numpy() for k, v in their_state.items()}, strict=True)
        np.testing.assert_array_equal(mine.wte.weight.data, theirs.wte.weight.detach().numpy())
        theirs.load_state_dict(
            {k: real_torch.tensor(v.numpy()) for k, v in mine.state_dict().items()}, strict=True
        )


# =========================================================================== PyTorch tutorial
# The layer below is written as a PyTorch tutorial writes it (a custom autograd Function
# with per-sample weight gradients, wrapped in a Module with PyTorch's initialisation),
# and runs unchanged with `import minigrad as torch`. (Only the tutorial's argument name
# `input` became `x`: this project's lint forbids shadowing builtins.)


class FunctionalLinear(torch.autograd.Function):
    @staticmethod
    def forward(  # type: ignore
        ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor
    ) -> torch.Tensor:
        output = (weight.unsqueeze(0) * x.unsqueeze(1)).sum(dim=-1)
        if bias is not None:
            output = output + bias.unsqueeze(0)
        ctx.save_for_backward(x, weight, bias)
        return output

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore
        ctx, grad_output: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        (x, weight, bias) = ctx.saved_tensors
        grad_input: torch.Tensor | None = None
        grad_weight: torch.Tensor | None = None
        grad_bias: torch.Tensor | None = None
        grad_weight = grad_output.unsqueeze(-1) * x.unsqueeze(-2)
        if bias is not None:
            grad_bias = grad_output.detach().clone()
        grad_input = (grad_output.unsqueeze(-1) * weight.unsqueeze(0)).sum(dim=1)
        return grad_input, grad_weight, grad_bias


class MyOwnLayer(torch.nn.Module):
    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
    ) -> None:
        super().__init__()
        assert in_features > 0
        assert out_features > 0
        self.in_features: int = in_features
        self.out_features: int = out_features
        self.weight = torch.nn.Parameter(
            torch.empty(
                (out_features, in_features),
            )
        )
        if bias:
            self.bias = torch.nn.Parameter(
                torch.empty(
                    out_features,
                )
            )
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        self.functional_linear = FunctionalLinear.apply

    def reset_parameters(self) -> None:
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(
        self,
        x: torch.Tensor,
    ) -> torch.Tensor:
        return self.functional_linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class TestPyTorchTutorialLayer:
    @pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
    def test_structure_and_initialisation(self, bias):
        layer = MyOwnLayer(5, 3, bias=bias)
        names = [name for name, _ in layer.named_parameters()]
        assert names == (["weight", "bias"] if bias else ["weight"])
        assert layer.weight.shape == (3, 5)
        assert np.all(np.abs(layer.weight.data) <= 1 / math.sqrt(5))
        if bias:
            assert layer.bias.shape == (3,)
            assert np.all(np.abs(layer.bias.data) <= 1 / math.sqrt(5))
        else:
            assert layer.bias is None
        assert repr(layer) == f"MyOwnLayer(in_features=5, out_features=3, bias={bias})"
        assert "functional_linear" not in dict(layer.named_parameters())

    def test_same_initialisation_as_nn_linear_for_the_same_seed(self):
        torch.manual_seed(11)
        mine = MyOwnLayer(4, 2)
        torch.manual_seed(11)
        reference = torch.nn.Linear(4, 2)
        np.testing.assert_array_equal(mine.weight.data, reference.weight.data)
        np.testing.assert_array_equal(mine.bias.data, reference.bias.data)

    @pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
    def test_values_and_gradients_equal_nn_linear(self, bias):
        mine = MyOwnLayer(3, 4, bias=bias)
        reference = torch.nn.Linear(3, 4, bias=bias)
        reference.load_state_dict(mine.state_dict())
        x_mine = data(6, 3, requires_grad=True)
        x_ref = Variable(x_mine.data.copy(), requires_grad=True)
        upstream = Variable(np.random.default_rng(4).standard_normal((6, 4)))

        out_mine, out_ref = mine(x_mine), reference(x_ref)
        np.testing.assert_allclose(out_mine.data, out_ref.data, rtol=1e-12)
        assert out_mine.grad_fn.name() == "FunctionalLinearBackward"
        (out_mine * upstream).sum().backward()
        (out_ref * upstream).sum().backward()

        assert mine.weight.grad.shape == (4, 3)  # per-sample (6, 4, 3) summed back
        np.testing.assert_allclose(mine.weight.grad.data, reference.weight.grad.data, rtol=1e-12)
        np.testing.assert_allclose(x_mine.grad.data, x_ref.grad.data, rtol=1e-12)
        if bias:
            assert mine.bias.grad.shape == (4,)
            np.testing.assert_allclose(mine.bias.grad.data, reference.bias.grad.data, rtol=1e-12)

    def test_trains_with_adam(self):
        torch.manual_seed(0)
        layer = MyOwnLayer(3, 2)
        rng = np.random.default_rng(0)
        x = torch.tensor(rng.standard_normal((16, 3)))
        target = torch.tensor(x.data @ np.array([[1.0, -2.0], [0.5, 0.0], [0.0, 1.5]]) + 0.3)
        optimizer = torch.optim.Adam(layer.parameters(), lr=0.05)
        loss_fn = torch.nn.MSELoss()
        losses = []
        for _ in range(20):
            optimizer.zero_grad()
            loss = loss_fn(layer(x), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
        assert losses[-1] < 0.5 * losses[0]
        assert layer.weight.is_leaf and layer.weight.requires_grad

    def test_refuses_double_backward(self):
        layer = MyOwnLayer(2, 2)
        out = layer(data(3, 2))
        (grad_w,) = torch.autograd.grad((out * out).sum(), layer.weight, create_graph=True)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            grad_w.sum().backward()

"""Containers beyond the basics, and the Module methods that containers and models use.

- ParameterList and ParameterDict: registered so parameters() and state_dict() see them,
  with PyTorch's names; Variables wrapped into Parameters.
- Sequential with names (an OrderedDict), slicing, insert/extend/pop/+/*; ModuleList.pop.
- Module: named_modules(memo, prefix), get_parameter/get_buffer/set_submodule,
  state_dict(prefix=, keep_vars=, destination=), load_state_dict(assign=), to_empty,
  bfloat16's error, train()'s error class, __dir__, replacing a child in its place.
Names and orders are compared with PyTorch where it is installed."""

from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.core.variable import Parameter, Variable


def param(*shape: int, fill: float = 1.0) -> Parameter:
    return Parameter(np.full(shape, fill))


# =========================================================================== ParameterList


class TestParameterList:
    def test_holds_parameters_under_their_positions(self):
        first, second = param(2, 3), param(4)
        params = nn.ParameterList([first, second])
        assert len(params) == 2
        assert params[0] is first and params[-1] is second
        assert list(params) == [first, second]
        assert [name for name, _ in params.named_parameters()] == ["0", "1"]
        assert list(params.state_dict()) == ["0", "1"]

    def test_a_model_sees_them(self):
        class Mixture(nn.Module):
            def __init__(self):
                super().__init__()
                self.weights = nn.ParameterList([param(3) for _ in range(3)])

            def forward(self, x):
                total = x * 0
                for weight in self.weights:
                    total = total + weight * x
                return total

        model = Mixture()
        names = [name for name, _ in model.named_parameters()]
        assert names == ["weights.0", "weights.1", "weights.2"]
        model(mg.ones(3)).sum().backward()
        assert all(p.grad is not None for p in model.parameters())
        optimizer = mg.optim.SGD(model.parameters(), lr=0.5)
        optimizer.step()
        np.testing.assert_allclose(model.weights[1].data, [0.5, 0.5, 0.5])

    def test_variables_become_parameters_other_values_are_held(self):
        params = nn.ParameterList([mg.ones(2), "note", None])
        assert isinstance(params[0], Parameter) and params[0].requires_grad
        assert params[1] == "note" and params[2] is None
        assert len(list(params.parameters())) == 1

    def test_append_extend_iadd_setitem_and_slices(self):
        params = nn.ParameterList()
        assert params.append(param(1)) is params
        assert params.extend([param(2), mg.zeros(3)]) is params
        params += [param(4)]
        assert [p.shape for p in params] == [(1,), (2,), (3,), (4,)]
        replacement = param(5)
        params[2] = replacement
        assert params[2] is replacement
        assert [name for name, _ in params.named_parameters()] == ["0", "1", "2", "3"]
        part = params[1:3]
        assert isinstance(part, nn.ParameterList) and list(part) == [params[1], params[2]]

    def test_repr(self):
        params = nn.ParameterList([param(2, 3), "x"])
        assert repr(params) == (
            "ParameterList(\n"
            "    (0): Parameter containing: [minigrad.float64 of size 2x3]\n"
            "    (1): Object of type: str\n"
            ")"
        )
        assert repr(nn.ParameterList()) == "ParameterList()"

    def test_errors(self):
        params = nn.ParameterList([param(1)])
        with pytest.raises(IndexError, match="index 3 is out of range"):
            params[3]  # noqa: B018
        with pytest.raises(IndexError, match="index 1 is out of range"):
            params[1] = param(1)
        with pytest.raises(TypeError, match="indices must be ints; got str"):
            params["a"]  # noqa: B018
        with pytest.raises(TypeError, match="should be called with an iterable, but got int"):
            params.extend(3)
        with pytest.raises(TypeError, match="iterable, but got Variable"):
            params.extend(mg.ones(3))
        with pytest.raises(TypeError, match="cannot assign a str as parameter '0'"):
            params[0] = "text"

    def test_names_match_pytorch(self, real_torch):
        mine = nn.ParameterList([param(2), mg.ones(3), "x"])
        theirs = real_torch.nn.ParameterList(
            [real_torch.nn.Parameter(real_torch.ones(2)), real_torch.ones(3), "x"]
        )
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert repr(mine).replace("minigrad.float64", "torch.float32") == repr(theirs)


# =========================================================================== ParameterDict


class TestParameterDict:
    def test_holds_parameters_under_their_keys(self):
        scale, shift = param(2), param(2, fill=0.0)
        params = nn.ParameterDict(OrderedDict([("scale", scale), ("shift", shift)]))
        assert params["scale"] is scale and params.shift is shift
        assert list(params) == ["scale", "shift"] == list(params.keys())
        assert list(params.values()) == [scale, shift]
        assert list(params.items()) == [("scale", scale), ("shift", shift)]
        assert "scale" in params and "other" not in params and len(params) == 2
        assert [name for name, _ in params.named_parameters()] == ["scale", "shift"]
        assert list(params.state_dict()) == ["scale", "shift"]

    def test_a_plain_dict_is_taken_in_sorted_order_as_pytorch(self):
        params = nn.ParameterDict({"b": param(1), "a": param(1)})
        assert list(params) == ["a", "b"]

    def test_pairs_keep_their_order(self):
        params = nn.ParameterDict([("b", param(1)), ("a", param(1))])
        assert list(params) == ["b", "a"]

    def test_dict_methods(self):
        params = nn.ParameterDict()
        params["w"] = mg.ones(2)
        assert isinstance(params["w"], Parameter)
        assert params.get("w") is params["w"] and params.get("nope", 3) == 3
        default = params.setdefault("b", mg.zeros(1))
        assert params["b"] is default
        assert params.setdefault("b", mg.ones(5)) is default
        assert list(reversed(params)) == ["b", "w"]
        copy = params.copy()
        assert copy is not params and copy["w"] is params["w"]
        popped = params.pop("w")
        assert "w" not in params and isinstance(popped, Parameter)
        params["c"] = param(3)
        key, value = params.popitem()
        assert key == "c" and value.shape == (3,)
        del params["b"]
        assert len(params) == 0 and list(params.parameters()) == []
        filled = params.fromkeys(["x", "y"], None)
        assert list(filled) == ["x", "y"] and filled["x"] is None
        params.update({"p": param(1)})
        params.clear()
        assert len(params) == 0

    def test_replacing_keeps_the_position(self):
        params = nn.ParameterDict([("a", param(1)), ("b", param(1))])
        params["a"] = param(2)
        assert list(params) == ["a", "b"]
        assert list(params.state_dict()) == ["a", "b"]
        assert params["a"].shape == (2,)

    def test_union(self):
        left = nn.ParameterDict([("a", param(1))])
        right = nn.ParameterDict([("b", param(1))])
        both = left | right
        assert list(both) == ["a", "b"] and list(left) == ["a"]
        assert list(right | left) == ["b", "a"]
        left |= right
        assert list(left) == ["a", "b"]

    def test_in_a_model(self):
        class Heads(nn.Module):
            def __init__(self):
                super().__init__()
                self.scales = nn.ParameterDict({"cat": param(2), "dog": param(2, fill=2.0)})

            def forward(self, x, kind):
                return x * self.scales[kind]

        model = Heads()
        assert list(model.state_dict()) == ["scales.cat", "scales.dog"]
        model(mg.ones(2), "dog").sum().backward()
        assert model.scales["dog"].grad is not None and model.scales["cat"].grad is None

    def test_errors(self):
        params = nn.ParameterDict([("a", param(1))])
        with pytest.raises(KeyError, match=r"no key 'zz'; its keys are \['a'\]"):
            params["zz"]  # noqa: B018
        with pytest.raises(TypeError, match="not a string \\(type is 'int'\\)"):
            params[3] = param(1)
        with pytest.raises(KeyError, match="attribute of the ParameterDict itself"):
            params["training"] = param(1)
        with pytest.raises(KeyError, match="can't be empty or contain"):
            params["x.y"] = param(1)
        with pytest.raises(TypeError, match="iterable of key/value pairs, but got int"):
            params.update(3)
        with pytest.raises(TypeError, match="element #0 should be a \\(key, value\\) pair"):
            params.update([5])
        with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
            params.update([("c", param(1), 3)])
        with pytest.raises(KeyError, match="dictionary is empty"):
            nn.ParameterDict().popitem()
        assert list(params) == ["a"]  # the failed calls left it as it was

    def test_names_match_pytorch(self, real_torch):
        mine = nn.ParameterDict({"z": mg.ones(1), "a": param(2)})
        theirs = real_torch.nn.ParameterDict({"z": real_torch.ones(1), "a": real_torch.ones(2)})
        assert list(mine) == list(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())


# =========================================================================== Sequential


def named_sequential() -> nn.Sequential:
    return nn.Sequential(
        OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU()), ("out", nn.Linear(3, 1))])
    )


class TestSequential:
    def test_an_ordered_dict_names_the_modules(self):
        model = named_sequential()
        assert [name for name, _ in model.named_children()] == ["fc", "act", "out"]
        assert model.fc is model[0] and model.out is model[-1]
        assert list(model.state_dict()) == ["fc.weight", "fc.bias", "out.weight", "out.bias"]
        assert model(mg.ones(4, 2)).shape == (4, 1)

    def test_a_plain_dict_is_refused_with_a_hint(self):
        with pytest.raises(TypeError, match="one OrderedDict of name"):
            nn.Sequential({"fc": nn.Linear(2, 2)})

    def test_slices_keep_the_names(self):
        model = named_sequential()
        head = model[:2]
        assert isinstance(head, nn.Sequential)
        assert [name for name, _ in head.named_children()] == ["fc", "act"]
        assert head.fc is model.fc
        assert [name for name, _ in model[::2].named_children()] == ["fc", "out"]

    def test_int_indexing_setitem_and_errors(self):
        model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        assert model[np.int64(1)] is model[1]
        model[1] = nn.Tanh()
        assert isinstance(model[1], nn.Tanh)
        with pytest.raises(IndexError, match="index 2 is out of range"):
            model[2]  # noqa: B018
        with pytest.raises(TypeError, match="indices must be ints; got str"):
            model["fc"]  # noqa: B018
        with pytest.raises(TypeError, match="takes Modules"):
            model[0] = 3

    def test_delete_and_pop_renumber_as_pytorch(self):
        model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        del model[1]
        assert [type(m).__name__ for m in model] == ["Linear", "Tanh", "Sigmoid"]
        assert [name for name, _ in model.named_children()] == ["0", "1", "2"]
        popped = model.pop(0)
        assert isinstance(popped, nn.Linear)
        assert [name for name, _ in model.named_children()] == ["0", "1"]
        del model[0:1]
        assert [type(m).__name__ for m in model] == ["Sigmoid"]

    def test_insert_extend_append(self):
        model = nn.Sequential(nn.ReLU())
        assert model.insert(0, nn.Linear(2, 2)) is model
        assert model.insert(-1, nn.Tanh()) is model
        assert model.extend([nn.Sigmoid()]) is model
        assert model.append(nn.Identity()) is model
        kinds = [type(m).__name__ for m in model]
        assert kinds == ["Linear", "Tanh", "ReLU", "Sigmoid", "Identity"]
        assert [name for name, _ in model.named_children()] == ["0", "1", "2", "3", "4"]
        with pytest.raises(IndexError, match="Index out of range: 9"):
            model.insert(9, nn.ReLU())
        with pytest.raises(TypeError, match="takes Modules"):
            model.insert(0, 3)

    def test_add_and_multiply(self):
        first = nn.Sequential(nn.Linear(2, 2))
        second = nn.Sequential(nn.ReLU())
        both = first + second
        assert [type(m).__name__ for m in both] == ["Linear", "ReLU"]
        assert both[0] is first[0]
        first += second
        assert len(first) == 2
        twice = second * 2
        assert len(twice) == 2 and twice[0] is twice[1] is second[0]
        assert len(3 * second) == 3
        second *= 3
        assert len(second) == 3
        with pytest.raises(ValueError, match="supports only objects of Sequential class"):
            first + nn.ReLU()  # noqa: B018
        with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
            second * 0  # noqa: B018
        with pytest.raises(TypeError, match="multiply by an int"):
            second * 1.5  # noqa: B018

    def test_names_match_pytorch(self, real_torch):
        theirs = real_torch.nn.Sequential(
            OrderedDict(
                [
                    ("fc", real_torch.nn.Linear(2, 3)),
                    ("act", real_torch.nn.ReLU()),
                    ("out", real_torch.nn.Linear(3, 1)),
                ]
            )
        )
        mine = named_sequential()
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert list(mine[1:].state_dict()) == list(theirs[1:].state_dict())
        del mine[0]
        del theirs[0]
        assert list(mine.state_dict()) == list(theirs.state_dict())
        mine.insert(0, nn.Linear(2, 3))
        theirs.insert(0, real_torch.nn.Linear(2, 3))
        assert list(mine.state_dict()) == list(theirs.state_dict())


class TestModuleList:
    def test_pop(self):
        layers = nn.ModuleList([nn.Linear(1, 1), nn.ReLU(), nn.Tanh()])
        popped = layers.pop(1)
        assert isinstance(popped, nn.ReLU)
        assert [name for name, _ in layers.named_children()] == ["0", "1"]
        assert isinstance(layers.pop(-1), nn.Tanh)
        with pytest.raises(IndexError, match="out of range"):
            layers.pop(5)


# =========================================================================== Module methods


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.norm = nn.BatchNorm1d(2)
        self.register_buffer("steps", mg.zeros(1))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Block()
        self.head = nn.Linear(2, 1)


class TestTraversalAndLookup:
    def test_named_modules_with_memo_and_prefix(self):
        model = Model()
        memo = {model.encoder.fc}
        names = [name for name, _ in model.named_modules(memo, "m")]
        assert names == ["m", "m.encoder", "m.encoder.norm", "m.head"]
        assert model.head in memo and model in memo
        assert list(model.named_modules(memo)) == []  # all seen now
        with pytest.raises(TypeError, match="Pass the prefix by keyword"):
            list(model.named_modules("m"))

    def test_memo_with_duplicates_kept_is_only_read(self):
        shared = nn.Linear(1, 1)
        model = nn.Sequential(shared, nn.ReLU(), shared)
        memo = {model[1]}
        names = [name for name, _ in model.named_modules(memo, remove_duplicate=False)]
        assert names == ["", "0", "2"]
        assert memo == {model[1]}

    def test_modules_remove_duplicate(self):
        shared = nn.Linear(1, 1)
        model = nn.Sequential(shared, shared)
        assert len(list(model.modules())) == 2
        assert len(list(model.modules(remove_duplicate=False))) == 3

    def test_named_modules_match_pytorch(self, real_torch):
        theirs = real_torch.nn.Sequential(
            real_torch.nn.Linear(1, 1), real_torch.nn.Sequential(real_torch.nn.ReLU())
        )
        mine = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
        memo_theirs, memo_mine = {theirs[0]}, {mine[0]}
        assert [n for n, _ in mine.named_modules(memo_mine, "p")] == [
            n for n, _ in theirs.named_modules(memo_theirs, "p")
        ]

    def test_get_parameter_and_buffer(self):
        model = Model()
        assert model.get_parameter("encoder.fc.weight") is model.encoder.fc.weight
        assert model.get_parameter("head.bias") is model.head.bias
        assert model.get_buffer("encoder.steps") is model.encoder.steps
        assert model.get_buffer("encoder.norm.running_mean") is model.encoder.norm.running_mean
        with pytest.raises(AttributeError, match="has no parameter `nope`"):
            model.get_parameter("head.nope")
        with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
            model.get_parameter("encoder.steps")
        with pytest.raises(AttributeError, match="`weight` is not a buffer"):
            model.get_buffer("head.weight")
        with pytest.raises(AttributeError, match="no submodule 'missing'"):
            model.get_parameter("missing.weight")

    def test_set_submodule(self):
        model = Model()
        replacement = nn.Linear(2, 2)
        model.set_submodule("encoder.fc", replacement)
        assert model.encoder.fc is replacement
        assert [n for n, _ in model.encoder.named_children()] == ["fc", "norm"]  # in place
        model.set_submodule("encoder.extra", nn.ReLU())
        assert isinstance(model.encoder.extra, nn.ReLU)
        with pytest.raises(AttributeError, match="strict=True"):
            model.set_submodule("encoder.other", nn.ReLU(), strict=True)
        with pytest.raises(AttributeError, match="is not an nn.Module"):
            model.set_submodule("encoder.steps", nn.ReLU())
        with pytest.raises(ValueError, match="is not an nn.Module, found int"):
            model.set_submodule("head", 3)
        with pytest.raises(ValueError, match="non-empty dotted name"):
            model.set_submodule("", nn.ReLU())

    def test_replacing_a_child_keeps_its_place_as_pytorch(self):
        model = Model()
        model.encoder = Block()  # transfer learning: a new part where the old one was
        assert [n for n, _ in model.named_children()] == ["encoder", "head"]
        model.head.weight = Parameter(np.zeros((1, 2)))
        assert [n for n, _ in model.head.named_parameters()] == ["weight", "bias"]

    def test_replacing_matches_pytorch(self, real_torch):
        theirs = real_torch.nn.Sequential(real_torch.nn.Linear(2, 2), real_torch.nn.ReLU())
        mine = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        theirs[0].weight = real_torch.nn.Parameter(real_torch.zeros(2, 2))
        mine[0].weight = Parameter(np.zeros((2, 2)))
        theirs.add_module("0", real_torch.nn.Linear(2, 2))
        mine.add_module("0", nn.Linear(2, 2))
        assert list(mine.state_dict()) == list(theirs.state_dict())

    def test_dir_lists_parameters_children_and_buffers(self):
        names = dir(Model().encoder)
        assert {"fc", "norm", "steps", "forward", "training"} <= set(names)
        assert not any(name[0].isdigit() for name in dir(nn.Sequential(nn.ReLU())))

    def test_bad_registration_names_are_key_errors_as_pytorch(self):
        with pytest.raises(KeyError, match="can't be empty or contain"):
            nn.Linear(1, 1).register_parameter("a.b", None)
        with pytest.raises(KeyError, match="attribute 'forward' already exists"):
            nn.Linear(1, 1).add_module("forward", nn.ReLU())


class TestStateDictOptions:
    def test_prefix_and_destination(self):
        model = Model()
        state = model.state_dict(prefix="model.")
        assert list(state)[:2] == ["model.encoder.steps", "model.encoder.fc.weight"]
        destination = {"kept": 1}
        assert model.head.state_dict(destination=destination, prefix="h.") is destination
        assert list(destination) == ["kept", "h.weight", "h.bias"]

    def test_keep_vars_gives_the_parameters_themselves(self):
        model = Model()
        state = model.state_dict(keep_vars=True)
        assert state["head.weight"] is model.head.weight
        assert state["encoder.steps"] is model.encoder.steps
        copies = model.state_dict()
        assert copies["head.weight"] is not model.head.weight

    def test_positional_arguments_warn_as_pytorch(self):
        model = nn.Linear(1, 1)
        with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
            state = model.state_dict(None, "p.")
        assert list(state) == ["p.weight", "p.bias"]

    def test_keys_match_pytorch(self, real_torch):
        theirs = real_torch.nn.Sequential(real_torch.nn.Linear(2, 2), real_torch.nn.BatchNorm1d(2))
        mine = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        assert list(mine.state_dict(prefix="x.")) == list(theirs.state_dict(prefix="x."))

    def test_errors(self):
        model = nn.Linear(1, 1)
        with pytest.raises(TypeError, match="keep_vars must be True or False"):
            model.state_dict(keep_vars="yes")
        with pytest.raises(TypeError, match="prefix must be a str"):
            model.state_dict(prefix=3)
        with pytest.raises(TypeError, match="destination must be a dict"):
            model.state_dict(destination=[])


class TestLoadStateDict:
    def test_assign_makes_the_loaded_values_the_parameters(self):
        model = nn.Linear(2, 1)
        model.bias.requires_grad = False
        loaded_weight = Parameter(np.array([[1.0, 2.0]]))
        result = model.load_state_dict(
            {"weight": loaded_weight, "bias": np.array([0.5])}, assign=True
        )
        assert result.missing_keys == [] and result.unexpected_keys == []
        assert model.weight is loaded_weight
        assert isinstance(model.bias, Parameter) and not model.bias.requires_grad
        np.testing.assert_array_equal(model.bias.data, [0.5])
        assert list(model.state_dict()) == ["weight", "bias"]

    def test_assign_sets_buffers_and_keeps_dtypes(self):
        norm = nn.BatchNorm1d(2)
        mean = Variable(np.array([1.0, 2.0], dtype=np.float32))
        norm.load_state_dict({"running_mean": mean}, strict=False, assign=True)
        assert norm.running_mean is mean and norm.running_mean.dtype == np.float32

    def test_without_assign_the_parameters_stay(self):
        model = nn.Linear(2, 1)
        weight = model.weight
        model.load_state_dict({"weight": np.ones((1, 2)), "bias": np.zeros(1)})
        assert model.weight is weight

    def test_result_repr_as_pytorch(self):
        model = nn.Linear(2, 1)
        assert repr(model.load_state_dict(model.state_dict())) == "<All keys matched successfully>"
        partial = model.load_state_dict({"weight": np.ones((1, 2))}, strict=False)
        assert partial.missing_keys == ["bias"]
        assert "missing_keys=['bias']" in repr(partial)

    def test_accepts_any_mapping(self):
        model = nn.Linear(2, 1)
        model.load_state_dict(OrderedDict(model.state_dict()))

    def test_a_failed_assign_changes_nothing(self):
        model = nn.Linear(2, 1)
        weight = model.weight
        with pytest.raises(RuntimeError, match="size mismatch for bias"):
            model.load_state_dict({"weight": np.ones((1, 2)), "bias": np.zeros(3)}, assign=True)
        assert model.weight is weight

    def test_loads_pytorch_weights_with_assign(self, real_torch):
        theirs = real_torch.nn.Linear(3, 2).double()
        mine = nn.Linear(3, 2)
        state = {name: value.detach().numpy() for name, value in theirs.state_dict().items()}
        mine.load_state_dict(state, assign=True)
        x = np.random.default_rng(0).standard_normal((4, 3))
        np.testing.assert_allclose(
            mine(Variable(x)).data, theirs(real_torch.tensor(x)).detach().numpy(), rtol=1e-12
        )


class TestOtherModuleMethods:
    def test_to_empty_gives_new_memory_of_the_same_shapes(self):
        model = Model()
        weight = model.head.weight
        old = weight.data
        assert model.to_empty(device="cpu") is model
        assert model.head.weight is weight and weight.shape == (1, 2)
        assert weight.data is not old
        model.head.to_empty(device="cpu", recurse=False)

    def test_bfloat16_says_minigrad_has_none(self):
        with pytest.raises(TypeError, match="no bfloat16.*Use .half\\(\\)"):
            nn.Linear(1, 1).bfloat16()

    def test_train_and_eval_return_self_and_train_checks_its_flag(self):
        model = Model()
        assert model.eval() is model and not model.encoder.norm.training
        assert model.train() is model and model.encoder.norm.training
        with pytest.raises(ValueError, match="expected to be boolean"):
            model.train(1)  # PyTorch's ValueError (also a TypeError, as minigrad had)

    def test_missing_pytorch_methods_say_so(self):
        with pytest.raises(AttributeError, match="minigrad does not have `nn.Module.share_memory`"):
            nn.Linear(1, 1).share_memory()
        with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
            nn.Linear(1, 1).nothing  # noqa: B018

    def test_cuda_takes_a_device_index(self):
        import inspect

        assert "device" in inspect.signature(nn.Module.cuda).parameters

    def test_get_name(self):
        assert nn.Linear(1, 1)._get_name() == "Linear"

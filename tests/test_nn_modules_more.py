"""The modules beyond Linear and Sequential: containers, Identity, Flatten, Dropout,
Embedding, LayerNorm, the activations and losses, and Module's buffers, apply, to(dtype),
requires_grad_ and get_submodule. PyTorch cross-checks skip without torch."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad import Parameter, Variable, nn

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))


# =========================================================================== containers


class TestModuleList:
    def test_registers_parameters_and_behaves_like_a_list(self):
        layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        assert len(layers) == 3
        assert [name for name, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
        assert len(list(layers.parameters())) == 6
        layers.append(nn.ReLU())
        layers.extend([nn.Tanh()])
        layers.insert(0, nn.Sigmoid())
        assert [type(m).__name__ for m in layers] == [
            "Sigmoid",
            "Linear",
            "Linear",
            "Linear",
            "ReLU",
            "Tanh",
        ]
        assert [name for name, _ in layers.named_children()] == ["0", "1", "2", "3", "4", "5"]
        assert isinstance(layers[-1], nn.Tanh)
        assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
        del layers[0]
        assert isinstance(layers[0], nn.Linear) and len(layers) == 5
        layers[0] = nn.Identity()
        assert isinstance(layers[0], nn.Identity)

    def test_used_in_a_model(self):
        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 2)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x

        net = Net()
        assert net(Variable(X)).shape == (4, 2)
        assert list(net.state_dict()) == [
            "layers.0.weight",
            "layers.0.bias",
            "layers.1.weight",
            "layers.1.bias",
        ]

    def test_errors(self):
        layers = nn.ModuleList([nn.ReLU()])
        with pytest.raises(TypeError, match="ModuleList takes Modules; the module is a function"):
            layers.append(mg.relu)
        with pytest.raises(IndexError, match="index 3 is out of range for a ModuleList of 1"):
            layers[3]
        with pytest.raises(NotImplementedError, match="ModuleList has no forward"):
            layers(Variable(X))

    def test_repr_matches_torch(self):
        torch = pytest.importorskip("torch")
        mine = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])
        theirs = torch.nn.ModuleList(
            [torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU(), torch.nn.ReLU()]
        )
        assert repr(mine) == repr(theirs)
        assert repr(nn.Sequential(mine)) == repr(torch.nn.Sequential(theirs))
        assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())


class TestModuleDict:
    def test_mapping_behaviour(self):
        heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 2)})
        assert list(heads) == ["a", "b"] and list(heads.keys()) == ["a", "b"]
        assert "a" in heads and "c" not in heads and len(heads) == 2
        assert heads["b"](Variable(X)).shape == (4, 2)
        heads["c"] = nn.ReLU()
        assert [name for name, _ in heads.items()] == ["a", "b", "c"]
        assert isinstance(heads.pop("c"), nn.ReLU)
        heads.update([("d", nn.Tanh())])
        del heads["d"]
        assert [n for n, _ in heads.named_parameters()] == [
            "a.weight",
            "a.bias",
            "b.weight",
            "b.bias",
        ]

    def test_errors(self):
        heads = nn.ModuleDict({"a": nn.ReLU()})
        with pytest.raises(KeyError, match="no module 'z'; its keys are \\['a'\\]"):
            heads["z"]
        with pytest.raises(TypeError, match="ModuleDict takes Modules"):
            heads["b"] = 3
        with pytest.raises(TypeError, match="element 0"):
            heads.update(["ab"])


def test_sequential_slices_and_append():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    head = model[1:]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is model[1]
    model.append(nn.Softmax(dim=1))
    np.testing.assert_allclose(model(Variable(X)).data.sum(1), np.ones(4))


# =========================================================================== simple layers


def test_identity_and_flatten():
    x = Variable(RNG.standard_normal((2, 3, 4, 5)))
    assert nn.Identity(54, unused=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Flatten(-2)(x).shape == (2, 3, 20)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        nn.Flatten(2, 1)(x)
    assert nn.Unflatten(1, (2, 2, 15))(nn.Flatten()(x)).shape == (2, 2, 2, 15)


def test_dropout_module_follows_train_and_eval():
    x = Variable(np.ones((50, 40)))
    layer = nn.Dropout(0.25)
    mg.manual_seed(0)
    y = layer(x)
    assert abs((y.data == 0).mean() - 0.25) < 0.03
    assert layer.eval()(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(2)


class TestEmbedding:
    def test_initialisation_and_lookup(self):
        mg.manual_seed(0)
        table = nn.Embedding(1000, 8, padding_idx=3)
        assert table.weight.shape == (1000, 8)
        np.testing.assert_array_equal(table.weight.data[3], np.zeros(8))
        assert abs(table.weight.data.mean()) < 0.05 and abs(np.std(table.weight.data) - 1) < 0.05
        out = table(mg.tensor([[3, 4], [4, 999]]))
        assert out.shape == (2, 2, 8)
        np.testing.assert_array_equal(out.data[1, 0], table.weight.data[4])

    def test_padding_row_gets_no_gradient_and_repeats_add_up(self):
        table = nn.Embedding(5, 2, padding_idx=0)
        table(np.array([0, 1, 1, 4])).sum().backward()
        np.testing.assert_array_equal(
            table.weight.grad.data, [[0, 0], [2, 2], [0, 0], [0, 0], [1, 1]]
        )

    def test_negative_padding_idx_and_repeatable_init(self):
        assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
        mg.manual_seed(3)
        first = nn.Embedding(4, 2).weight.data.copy()
        mg.manual_seed(3)
        np.testing.assert_array_equal(nn.Embedding(4, 2).weight.data, first)

    def test_from_pretrained(self):
        vectors = mg.tensor(RNG.standard_normal((4, 3)))
        frozen = nn.Embedding.from_pretrained(vectors)
        assert not frozen.weight.requires_grad
        np.testing.assert_array_equal(frozen(np.array([2])).data[0], vectors.data[2])
        assert nn.Embedding.from_pretrained(vectors, freeze=False).weight.requires_grad

    def test_errors(self):
        with pytest.raises(ValueError, match="padding_idx must be within num_embeddings"):
            nn.Embedding(3, 2, padding_idx=3)
        with pytest.raises(IndexError, match="index 3 is out of range"):
            nn.Embedding(3, 2)(np.array([3]))
        with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
            nn.Embedding(3, 2, scale_grad_by_freq=True)


class TestLayerNorm:
    def test_normalises_the_last_dims(self):
        norm = nn.LayerNorm(3)
        y = norm(Variable(X * 5 + 2))
        np.testing.assert_allclose(y.data.mean(-1), 0, atol=1e-12)
        np.testing.assert_allclose(np.var(y.data, axis=-1), 1, rtol=1e-5)
        assert [n for n, _ in norm.named_parameters()] == ["weight", "bias"]
        assert list(nn.LayerNorm(3, elementwise_affine=False).parameters()) == []
        assert [n for n, _ in nn.LayerNorm(3, bias=False).named_parameters()] == ["weight"]

    def test_values_and_gradients_equal_torch(self):
        torch = pytest.importorskip("torch")
        x = RNG.standard_normal((2, 3, 4))
        mine, theirs = (
            nn.LayerNorm((3, 4), eps=1e-3),
            torch.nn.LayerNorm((3, 4), eps=1e-3, dtype=torch.float64),
        )
        weight, bias = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
        mine.load_state_dict({"weight": weight, "bias": bias})
        theirs.load_state_dict({"weight": torch.tensor(weight), "bias": torch.tensor(bias)})
        x_mine, x_theirs = Variable(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out_mine, out_theirs = mine(x_mine), theirs(x_theirs)
        np.testing.assert_allclose(out_mine.data, out_theirs.detach().numpy(), rtol=1e-12)
        (out_mine * out_mine).sum().backward()
        (out_theirs * out_theirs).sum().backward()
        np.testing.assert_allclose(x_mine.grad.data, x_theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy(), rtol=1e-10)


# =========================================================================== activations, losses


ACTIVATIONS = [
    ("LeakyReLU", lambda nn_: nn_.LeakyReLU(0.2)),
    ("GELU", lambda nn_: nn_.GELU()),
    ("GELU-tanh", lambda nn_: nn_.GELU(approximate="tanh")),
    ("SiLU", lambda nn_: nn_.SiLU()),
    ("Softmax", lambda nn_: nn_.Softmax(dim=1)),
    ("LogSoftmax", lambda nn_: nn_.LogSoftmax(dim=-1)),
    ("ReLU", lambda nn_: nn_.ReLU()),
    ("Flatten", lambda nn_: nn_.Flatten()),
    ("Identity", lambda nn_: nn_.Identity()),
]


@pytest.mark.parametrize(("name", "make"), ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_modules_equal_torch(name, make):
    torch = pytest.importorskip("torch")
    mine, theirs = make(nn), make(torch.nn)
    assert repr(mine) == repr(theirs)
    np.testing.assert_allclose(
        mine(Variable(X)).data, theirs(torch.tensor(X)).numpy(), rtol=1e-12, atol=1e-15
    )


LABELS = np.array([2, 0, 1, 1])
TARGET = RNG.uniform(0, 1, (4, 3))
WEIGHT = np.array([0.5, 2.0, 1.0])

LOSSES = [
    ("MSELoss", lambda lib, w: lib.MSELoss(reduction="sum"), X, TARGET),
    ("L1Loss", lambda lib, w: lib.L1Loss(), X, TARGET),
    ("NLLLoss", lambda lib, w: lib.NLLLoss(weight=w(WEIGHT), ignore_index=0), X, LABELS),
    (
        "CrossEntropyLoss",
        lambda lib, w: lib.CrossEntropyLoss(weight=w(WEIGHT), label_smoothing=0.1),
        X,
        LABELS,
    ),
    ("CrossEntropyLoss-probabilities", lambda lib, w: lib.CrossEntropyLoss(), X, TARGET),
    ("BCELoss", lambda lib, w: lib.BCELoss(weight=w(WEIGHT)), 1 / (1 + np.exp(-X)), TARGET),
    (
        "BCEWithLogitsLoss",
        lambda lib, w: lib.BCEWithLogitsLoss(reduction="none", pos_weight=w(WEIGHT)),
        X,
        TARGET,
    ),
]


@pytest.mark.parametrize(("name", "make", "x", "target"), LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_modules_equal_torch(name, make, x, target):
    torch = pytest.importorskip("torch")
    mine = make(nn, mg.tensor)
    theirs = make(torch.nn, torch.tensor)
    x_mine, x_theirs = Variable(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    out_mine = mine(x_mine, mg.tensor(target))
    out_theirs = theirs(x_theirs, torch.tensor(target))
    np.testing.assert_allclose(out_mine.data, out_theirs.detach().numpy(), rtol=1e-12)
    out_mine.sum().backward()
    out_theirs.sum().backward()
    np.testing.assert_allclose(x_mine.grad.data, x_theirs.grad.numpy(), rtol=1e-11, atol=1e-14)


def test_loss_weights_are_buffers():
    loss = nn.CrossEntropyLoss(weight=[1.0, 2.0, 3.0])
    assert [name for name, _ in loss.named_buffers()] == ["weight"]
    assert isinstance(loss.weight, Variable)
    assert list(nn.BCEWithLogitsLoss(pos_weight=mg.ones(3)).state_dict()) == ["pos_weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []


# =========================================================================== Module methods


class Counter(nn.Module):
    """A layer with a persistent and a non-persistent buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(np.ones(2))
        self.register_buffer("running", mg.zeros(2))
        self.register_buffer("scratch", mg.zeros(1), persistent=False)

    def forward(self, x):
        self.running = self.running + x.detach().sum(0)
        return x * self.scale


class TestBuffers:
    def test_registered_listed_and_saved_when_persistent(self):
        model = nn.Sequential(nn.Linear(2, 2), Counter())
        assert [n for n, _ in model.named_buffers()] == ["1.running", "1.scratch"]
        assert len(list(model.buffers())) == 2
        assert list(model.state_dict()) == ["0.weight", "0.bias", "1.scale", "1.running"]
        assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "1.scale"]

    def test_assignment_updates_the_buffer_and_load_state_dict_fills_it(self):
        counter = Counter()
        counter(Variable(np.array([[1.0, 2.0], [3.0, 4.0]])))
        np.testing.assert_array_equal(counter.running.data, [4.0, 6.0])
        assert "running" in counter._buffers and "running" not in counter.__dict__
        fresh = Counter()
        fresh.load_state_dict(counter.state_dict())
        np.testing.assert_array_equal(fresh.running.data, [4.0, 6.0])
        with pytest.raises(RuntimeError, match="missing keys \\['running'\\]"):
            fresh.load_state_dict({"scale": np.ones(2)})

    def test_state_dict_order_matches_torch(self):
        torch = pytest.importorskip("torch")

        class Theirs(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.scale = torch.nn.Parameter(torch.ones(2))
                self.register_buffer("running", torch.zeros(2))
                self.register_buffer("scratch", torch.zeros(1), persistent=False)

        mine = nn.Sequential(nn.Linear(2, 2), Counter(), nn.LayerNorm(2))
        theirs = torch.nn.Sequential(torch.nn.Linear(2, 2), Theirs(), torch.nn.LayerNorm(2))
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert [n for n, _ in mine.named_buffers()] == [n for n, _ in theirs.named_buffers()]

    def test_errors(self):
        counter = Counter()
        with pytest.raises(TypeError, match="buffer 'extra': expected a Variable or None"):
            counter.register_buffer("extra", np.zeros(2))
        with pytest.raises(KeyError, match="attribute 'scale' already exists"):
            counter.register_buffer("scale", mg.zeros(2))
        with pytest.raises(TypeError, match="as buffer 'running'"):
            counter.running = [1, 2]
        counter.register_buffer("empty", None)
        assert counter.empty is None and "empty" not in counter.state_dict()


def test_to_dtype_casts_floating_parameters_and_buffers():
    model = nn.Sequential(nn.Linear(2, 2), Counter())
    model(Variable(np.ones((1, 2)))).sum().backward()
    weight = model[0].weight
    assert model.to(mg.float32) is model
    assert model[0].weight is weight  # same objects, as optimizers hold them
    assert weight.dtype == np.float32 and weight.grad.dtype == np.float32
    assert model[1].running.dtype == np.float32
    model.double()
    assert weight.dtype == np.float64
    model.to("cpu", dtype=mg.float32)
    assert weight.dtype == np.float32
    model.float().half()
    assert weight.dtype == np.float16
    with pytest.raises(TypeError, match="device and/or a dtype"):
        model.to("cpu", mg.float32, mg.float64)


def test_apply_visits_children_first_then_self():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
    visited = []
    assert model.apply(lambda m: visited.append(type(m).__name__)) is model
    assert visited == ["Linear", "ReLU", "Sequential", "Sequential"]

    def init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.constant_(module.weight, 0.5)

    model.apply(init_weights)
    np.testing.assert_array_equal(model[0].weight.data, np.full((2, 2), 0.5))


def test_requires_grad_freezes_and_unfreezes():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    assert model[0].requires_grad_(False) is model[0]
    assert [p.requires_grad for p in model.parameters()] == [False, False, True, True]
    model(Variable(X[:, :2])).sum().backward()
    assert model[0].weight.grad is None and model[1].weight.grad is not None
    model.requires_grad_()
    assert all(p.requires_grad for p in model.parameters())


def test_get_submodule():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Tanh()))
    assert model.get_submodule("1.1") is model[1][1]
    assert model.get_submodule("") is model
    with pytest.raises(AttributeError, match="no submodule '5'"):
        model.get_submodule("1.5")


def test_module_reprs_match_torch():
    torch = pytest.importorskip("torch")
    pairs = [
        (nn.Embedding(10, 3, padding_idx=0), torch.nn.Embedding(10, 3, padding_idx=0)),
        (nn.Embedding(10, 3), torch.nn.Embedding(10, 3)),
        (nn.LayerNorm(4), torch.nn.LayerNorm(4)),
        (
            nn.LayerNorm((2, 3), elementwise_affine=False),
            torch.nn.LayerNorm((2, 3), elementwise_affine=False),
        ),
        (nn.Dropout(0.1), torch.nn.Dropout(0.1)),
        (nn.LeakyReLU(0.2, inplace=True), torch.nn.LeakyReLU(0.2, inplace=True)),
        (nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
        (nn.Flatten(0, 2), torch.nn.Flatten(0, 2)),
        (nn.Unflatten(1, (2, 5)), torch.nn.Unflatten(1, (2, 5))),
        (nn.BCELoss(), torch.nn.BCELoss()),
        (nn.ModuleDict({"a": nn.ReLU()}), torch.nn.ModuleDict({"a": torch.nn.ReLU()})),
    ]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)


def test_new_layers_run_forward_and_backward_on_cuda():
    """In Numba's CUDA simulator (conftest turns it on): Parameters and buffers move, and
    dropout's mask and the exact GELU's erf follow the data onto the device."""
    mg.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(3, 4), nn.GELU(), nn.LayerNorm(4), nn.Dropout(0.5), nn.LeakyReLU(), nn.Flatten()
    )
    model[2].register_buffer("seen", mg.zeros(1))
    model.to("cuda")
    assert model[2].seen.device == "cuda"
    out = model(Variable(X).to("cuda"))
    assert out.device == "cuda"
    (out * out).sum().backward()
    assert model[0].weight.grad.device == "cuda"
    model.to("cpu")
    assert model[0].weight.device == "cpu" and model[2].seen.device == "cpu"

"""Bad inputs to the public surface outside the op table: each gets PyTorch's exception
type (where PyTorch has the API) and a message that names the function, the argument,
what it got and what it needs; what used to pass silently (a wrong tangent shape, eps=0,
a loss given to StepLR.step) now raises.

Each case is one row: an id, a call that must fail, the exception type, and fragments its
message must contain. The rows that PyTorch shares are run through torch as well, in a
separate test that is skipped where torch is not installed.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minigrad as mg
from minigrad import Variable
from minigrad.autograd import forward_ad
from minigrad.autograd import functional as autograd_functional
from minigrad.serialization import LoadError
from minigrad.text import TGD
from minigrad.utils.data import DataLoader, TensorDataset, default_collate, random_split

# --------------------------------------------------------------------------- helpers


def in_dual_level(call: Callable[[], Any]) -> Callable[[], Any]:
    """call, run inside `with forward_ad.dual_level():`."""

    def run() -> Any:
        with forward_ad.dual_level():
            return call()

    return run


def numbers(size: int = 3) -> Variable:
    return mg.tensor(np.arange(1.0, size + 1.0))


def double(x: Variable) -> Variable:
    return x * 2


def scalar_cube(x: Variable) -> Variable:
    return (x * x * x).sum()


def sgd() -> mg.optim.SGD:
    return mg.optim.SGD([mg.tensor([1.0], requires_grad=True)], lr=0.1)


class DictSamples:
    """Two samples whose dicts have different keys."""

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"x": 1.0} if index == 0 else {"y": 2.0}


def dataset() -> TensorDataset:
    return TensorDataset(mg.tensor(np.ones((4, 2))), mg.tensor(np.zeros(4)))


def strip_with_title(title: Any) -> Any:
    return mg.viz.strip([mg.viz.draw(numbers() * 2)], title=title)


# --------------------------------------------------------------------------- the table

TEXT = "some text"
CASES: list[tuple[str, Callable[[], Any], type, tuple[str, ...]]] = [
    # forward_ad with text or non-Variables
    ("make_dual text tangent",
     in_dual_level(lambda: forward_ad.make_dual(numbers(), Variable(TEXT))),
     TypeError, ("make_dual", "tangent", "text Variable")),
    ("make_dual text primal",
     in_dual_level(lambda: forward_ad.make_dual(Variable(TEXT), numbers())),
     TypeError, ("make_dual", "primal", "text Variable")),
    ("make_dual number primal", in_dual_level(lambda: forward_ad.make_dual(3.0, numbers())),
     TypeError, ("make_dual", "primal", "float")),
    ("make_dual str tangent", in_dual_level(lambda: forward_ad.make_dual(numbers(), "t")),
     TypeError, ("make_dual", "tangent", "str")),
    ("unpack_dual number", lambda: forward_ad.unpack_dual(3.0),
     TypeError, ("unpack_dual", "Variable", "float")),
    ("unpack_dual number in level", in_dual_level(lambda: forward_ad.unpack_dual(3.0)),
     TypeError, ("unpack_dual", "Variable", "float")),
    # autograd.functional with text or non-Variable inputs
    ("jacobian text", lambda: autograd_functional.jacobian(double, Variable(TEXT)),
     TypeError, ("jacobian", "inputs", "text Variable")),
    ("hessian text", lambda: autograd_functional.hessian(scalar_cube, Variable(TEXT)),
     TypeError, ("hessian", "inputs", "text Variable")),
    ("vjp text", lambda: autograd_functional.vjp(double, Variable(TEXT)),
     TypeError, ("vjp", "inputs", "text Variable")),
    ("vjp text v", lambda: autograd_functional.vjp(double, numbers(), Variable(TEXT)),
     TypeError, ("vjp", "v", "text Variable")),
    ("jvp text", lambda: autograd_functional.jvp(double, Variable(TEXT), Variable(TEXT)),
     TypeError, ("jvp", "inputs", "text Variable")),
    ("jvp text v", lambda: autograd_functional.jvp(double, numbers(), Variable(TEXT)),
     TypeError, ("jvp", "v", "text Variable")),
    ("hvp text", lambda: autograd_functional.hvp(scalar_cube, Variable(TEXT), numbers()),
     TypeError, ("hvp", "inputs", "text Variable")),
    ("vhp text v", lambda: autograd_functional.vhp(scalar_cube, numbers(), Variable(TEXT)),
     TypeError, ("vhp", "v", "text Variable")),
    ("jacobian number", lambda: autograd_functional.jacobian(double, 3.0),
     TypeError, ("jacobian", "inputs", "float")),
    ("vjp list", lambda: autograd_functional.vjp(double, [numbers()]),
     TypeError, ("vjp", "inputs", "list")),
    ("hvp v list", lambda: autograd_functional.hvp(scalar_cube, numbers(), [numbers()]),
     TypeError, ("hvp", "v", "list")),
    ("vhp number", lambda: autograd_functional.vhp(scalar_cube, 2.0, 2.0),
     TypeError, ("vhp", "inputs", "float")),
    ("jacobian func not callable", lambda: autograd_functional.jacobian(3, numbers()),
     TypeError, ("jacobian", "func", "int")),
    ("hvp one v for two inputs",
     lambda: autograd_functional.hvp(lambda a, b: (a * b).sum(), (numbers(), numbers()), numbers()),
     ValueError, ("hvp", "one Variable per input", "got 1")),
    # save: a cycle
    ("save a list that contains itself", lambda: mg.save(_cycle(), io.BytesIO()),
     ValueError, ("save", "contains itself", "obj.1")),
    ("save to a number", lambda: mg.save({"a": 1}, 3),
     TypeError, ("minigrad.save", "path", "int")),
    ("load from None", lambda: mg.load(None), TypeError, ("minigrad.load", "path", "NoneType")),
    # load_state_dict with None
    ("load_state_dict None value",
     lambda: mg.nn.Linear(2, 2).load_state_dict({"weight": None, "bias": mg.zeros(2)}),
     RuntimeError, ("'weight'", "NoneType", "numeric Variable")),
    ("load_state_dict text value",
     lambda: mg.nn.Linear(2, 2).load_state_dict({"weight": Variable(TEXT), "bias": mg.zeros(2)}),
     RuntimeError, ("'weight'", "text Variable")),
    # gradcheck tolerances
    ("gradcheck eps=0", lambda: mg.gradcheck(double, (_leaf(),), eps=0),
     RuntimeError, ("gradcheck", "eps", "> 0", "got 0")),
    ("gradcheck eps<0", lambda: mg.gradcheck(double, (_leaf(),), eps=-1e-6),
     RuntimeError, ("gradcheck", "eps", "got -1e-06")),
    ("gradcheck atol<0", lambda: mg.gradcheck(double, (_leaf(),), atol=-1),
     RuntimeError, ("gradcheck", "atol", ">= 0", "got -1")),
    ("gradcheck rtol<0", lambda: mg.gradcheck(double, (_leaf(),), rtol=-0.5),
     RuntimeError, ("gradcheck", "rtol", ">= 0")),
    ("gradcheck eps str", lambda: mg.gradcheck(double, (_leaf(),), eps="small"),
     TypeError, ("gradcheck", "eps", "'small'")),
    # compile
    ("compile max_variants=-1", lambda: mg.compile(double, max_variants=-1),
     ValueError, ("max_variants", ">= 1", "got -1")),
    ("compile max_variants str", lambda: mg.compile(double, max_variants="8"),
     TypeError, ("max_variants", "int", "str")),
    # schedulers
    ("StepLR.step(loss)", lambda: mg.optim.lr_scheduler.StepLR(sgd(), 2).step(mg.tensor(0.5)),
     TypeError, ("StepLR.step()", "no metric", "ReduceLROnPlateau", "Variable")),
    ("CosineAnnealingLR.step(float)",
     lambda: mg.optim.lr_scheduler.CosineAnnealingLR(sgd(), 3).step(0.25),
     TypeError, ("CosineAnnealingLR.step()", "ReduceLROnPlateau", "float")),
    ("StepLR gamma None", lambda: mg.optim.lr_scheduler.StepLR(sgd(), 2, gamma=None),
     TypeError, ("StepLR", "gamma", "number", "None")),
    ("ExponentialLR gamma str", lambda: mg.optim.lr_scheduler.ExponentialLR(sgd(), "0.9"),
     TypeError, ("ExponentialLR", "gamma", "'0.9'")),
    ("CosineAnnealingLR eta_min None",
     lambda: mg.optim.lr_scheduler.CosineAnnealingLR(sgd(), 3, eta_min=None),
     TypeError, ("CosineAnnealingLR", "eta_min", "None")),
    ("LambdaLR lr_lambda returns None",
     lambda: mg.optim.lr_scheduler.LambdaLR(sgd(), lambda epoch: None),
     TypeError, ("LambdaLR", "lr_lambda(0)", "NoneType", "number")),
    ("ReduceLROnPlateau patience str",
     lambda: mg.optim.lr_scheduler.ReduceLROnPlateau(sgd(), patience="3"),
     TypeError, ("ReduceLROnPlateau", "patience", "'3'")),
    ("ReduceLROnPlateau min_lr str",
     lambda: mg.optim.lr_scheduler.ReduceLROnPlateau(sgd(), min_lr="low"),
     TypeError, ("ReduceLROnPlateau", "min_lr", "'low'")),
    # optimizers
    ("SGD of a text Variable", lambda: mg.optim.SGD([Variable(TEXT, requires_grad=True)]),
     TypeError, ("SGD", "text Variable", "TGD")),
    ("SGD of a number", lambda: mg.optim.SGD([3.0]), TypeError, ("SGD", "Variables", "float")),
    ("SGD of None", lambda: mg.optim.SGD(None), TypeError, ("SGD", "params", "NoneType")),
    ("TGD of None", lambda: TGD(None), TypeError, ("TGD", "list of text Variables", "NoneType")),
    ("TGD constraints int",
     lambda: TGD([Variable(TEXT, requires_grad=True)], constraints=3),
     TypeError, ("constraints", "list of str", "3")),
    # utils.data
    ("DataLoader sampler=3", lambda: DataLoader(dataset(), sampler=3),
     TypeError, ("DataLoader", "sampler", "iterable", "int")),
    ("DataLoader batch_sampler=3", lambda: DataLoader(dataset(), batch_sampler=3),
     TypeError, ("DataLoader", "batch_sampler", "int")),
    ("DataLoader collate_fn str", lambda: DataLoader(dataset(), collate_fn="stack"),
     TypeError, ("DataLoader", "collate_fn", "function", "'stack'")),
    ("samples with different keys", lambda: list(DataLoader(DictSamples(), batch_size=2)),
     RuntimeError, ("default_collate", "same keys", "['x']", "['y']")),
    ("default_collate of an empty batch", lambda: default_collate([]),
     ValueError, ("default_collate", "empty batch", "at least one sample")),
    ("default_collate of a number", lambda: default_collate(3),
     TypeError, ("default_collate", "list of samples", "int")),
    ("random_split with a fraction", lambda: random_split(dataset(), 0.8),
     TypeError, ("random_split", "lengths", "[0.8, 0.2]", "float")),
    ("random_split of a number", lambda: random_split(3, [1, 2]),
     TypeError, ("random_split", "dataset", "int")),
    # viz
    ("strip title=3", lambda: strip_with_title(3), TypeError, ("strip()", "title", "str", "int")),
    # found by tests/test_fuzz_public_surface.py
    ("SGD maximize an array", lambda: mg.optim.SGD([_leaf()], maximize=np.ones(3)),
     TypeError, ("SGD", "maximize", "True or False", "ndarray")),
    ("step(closure) not callable", lambda: sgd().step(mg.ones(2)),
     TypeError, ("SGD.step", "closure", "function", "Variable")),
    ("Module.apply(0)", lambda: mg.nn.ReLU().apply(0), TypeError, ("ReLU.apply", "fn", "int")),
    ("Tanh of a number", lambda: mg.nn.Tanh()(1), TypeError, ("tanh", "Variable", "int")),
    ("tensor of a ragged list", lambda: mg.tensor([[1, 2], [3]]),
     ValueError, ("tensor()", "rectangular", "[[1, 2], [3]]")),
    ("full with a Variable of another shape", lambda: mg.full((3,), mg.ones(2, 3)),
     TypeError, ("full()", "fill_value", "number")),
    ("normal with a Variable mean and a size", lambda: mg.normal(mg.zeros(4, 4), 1.0, (3,)),
     TypeError, ("normal()", "size=", "Variable mean")),
    ("linspace steps a list", lambda: mg.linspace(0, 1, [1, 2]),
     TypeError, ("linspace()", "steps", "int", "list")),
    ("dtype a Variable", lambda: mg.zeros(2, dtype=mg.ones(1)), TypeError, ("dtype", "Variable")),
    ("scheduler state not a dict",
     lambda: mg.optim.lr_scheduler.StepLR(sgd(), 2).load_state_dict(3),
     TypeError, ("StepLR.load_state_dict", "dict", "int")),
    ("init.normal_ of a str", lambda: mg.nn.init.normal_("w"),
     TypeError, ("normal_", "numeric Variable", "str")),
    ("clip_grad_norm_ max_norm a str", lambda: mg.nn.utils.clip_grad_norm_([_leaf()], "big"),
     TypeError, ("clip_grad_norm_", "max_norm", "number", "str")),
    ("Linear in_features a float", lambda: mg.nn.Linear(2.0, 2),
     TypeError, ("Linear", "in_features", "float")),
    ("DataLoader num_workers a str", lambda: DataLoader(dataset(), num_workers="2"),
     TypeError, ("DataLoader", "num_workers", "str")),
    ("graph.output_nr of a number", lambda: mg.autograd.graph.output_nr(3),
     TypeError, ("output_nr()", "Variable", "int")),
    ("backward create_graph an array",
     lambda: (_leaf() * 2).sum().backward(create_graph=np.ones(2)),
     TypeError, ("backward", "create_graph", "True or False")),
    ("make_dual of a CUDA Variable",
     in_dual_level(lambda: forward_ad.make_dual(_on_cuda(), _on_cuda())),
     NotImplementedError, ("make_dual", "CPU", ".cpu()")),
]  # fmt: skip


def _on_cuda() -> Variable:
    """A CUDA Variable (Numba's simulator stands in for a GPU), or a skip."""
    try:
        return mg.ones(2).to("cuda")
    except Exception:  # noqa: BLE001 (no GPU and no simulator)
        pytest.skip("no CUDA device or simulator")


def _cycle() -> list:
    items: list = [1]
    items.append(items)
    return items


def _leaf() -> Variable:
    return mg.tensor(np.array([1.0, 2.0]), requires_grad=True)


@pytest.mark.parametrize(("call", "kind", "fragments"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])  # fmt: skip
def test_bad_input_gets_a_clear_error(
    call: Callable[[], Any], kind: type, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(kind) as caught:
        call()
    message = str(caught.value)
    assert type(caught.value) is not AssertionError
    assert len(message) >= 20, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


# --------------------------------------------------------------------------- silently wrong


class Doubling(mg.autograd.Function):
    """y = 2x, whose jvp subclasses get wrong on purpose."""

    @staticmethod
    def forward(ctx: Any, x: Variable) -> Variable:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad_output: Variable) -> Variable:
        return grad_output * 2


class TangentOfWrongShape(Doubling):
    @staticmethod
    def jvp(ctx: Any, tangent: Variable) -> Variable:
        return mg.zeros(5)


class TwoTangentsForOneOutput(Doubling):
    @staticmethod
    def jvp(ctx: Any, tangent: Variable) -> tuple:
        return tangent * 2, tangent * 2


class TangentIsANumber(Doubling):
    @staticmethod
    def jvp(ctx: Any, tangent: Variable) -> float:
        return 3.0


def _tangent_of(function: type) -> Any:
    with forward_ad.dual_level():
        output = function.apply(forward_ad.make_dual(numbers(), mg.ones(3)))
        return forward_ad.unpack_dual(output).tangent


@pytest.mark.parametrize(
    ("function", "fragments"),
    [
        (TangentOfWrongShape, ("TangentOfWrongShape.jvp", "shape (5,)", "shape (3,)")),
        (TwoTangentsForOneOutput, ("TwoTangentsForOneOutput.jvp", "expected 1 but got 2")),
        (TangentIsANumber, ("TangentIsANumber.jvp", "Variables", "float")),
    ],
)
def test_a_wrong_custom_jvp_raises(function: type, fragments: tuple[str, ...]) -> None:
    with pytest.raises(RuntimeError) as caught:
        _tangent_of(function)
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_a_right_custom_jvp_still_works() -> None:
    class Right(Doubling):
        @staticmethod
        def jvp(ctx: Any, tangent: Variable) -> Variable:
            return tangent * 2

    assert _tangent_of(Right).tolist() == [2.0, 2.0, 2.0]


def test_an_unpack_hook_that_changes_the_shape_raises() -> None:
    x = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    with mg.autograd.graph.saved_tensors_hooks(lambda value: value, lambda packed: mg.ones(1)):
        y = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"unpack hook returned a Variable of shape \(1,\)"):
        y.backward()


def test_an_unpack_hook_that_keeps_the_shape_still_works() -> None:
    x = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    with mg.autograd.graph.saved_tensors_hooks(lambda value: value * 1, lambda packed: packed):
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


# --------------------------------------------------------------------------- load


def _saved_bytes() -> bytes:
    buffer = io.BytesIO()
    mg.save({"weight": mg.tensor(np.arange(6.0)), "steps": [1, 2], "name": "m"}, buffer)
    return buffer.getvalue()


def _archive(manifest: str, arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """An .npz like save's, with the given manifest text."""
    buffer = io.BytesIO()
    np.savez(buffer, __minigrad__=np.asarray(manifest), **(arrays or {}))
    return buffer.getvalue()


def _flipped(data: bytes, position: int) -> bytes:
    changed = bytearray(data)
    changed[position] ^= 0xFF
    return bytes(changed)


def _inside_first_member(data: bytes) -> int:
    """A byte position inside the data of the archive's first member."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.infolist()[0]
    return info.header_offset + 30 + len(info.filename) + 60


GOOD = _saved_bytes()
VARIABLE = '{"kind": "variable", "key": "k", "parameter": false, "requires_grad": false}'
BAD_FILES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("truncated", GOOD[: len(GOOD) // 2]),
    ("last byte missing", GOOD[:-1]),
    ("flipped byte in an array (Bad CRC-32)", _flipped(GOOD, _inside_first_member(GOOD))),
    ("garbage", b"\x80\x04 this is not a minigrad file"),
    ("null manifest", _archive("null")),
    ("manifest is a list", _archive("[1, 2]")),
    ("manifest not JSON", _archive('{"format": 1')),
    ("wrong format", _archive('{"format": 99, "root": {"kind": "value", "value": 1}}')),
    ("no root", _archive('{"format": 1}')),
    ("root without kind", _archive('{"format": 1, "root": {}}')),
    ("unknown kind", _archive('{"format": 1, "root": {"kind": "module"}}')),
    ("items not a list", _archive('{"format": 1, "root": {"kind": "dict", "items": 3}}')),
    ("dict entry not a pair", _archive('{"format": 1, "root": {"kind": "dict", "items": [1]}}')),
    ("value of a wrong type", _archive('{"format": 1, "root": {"kind": "value", "value": {}}}')),
    ("array key missing", _archive('{"format": 1, "root": ' + VARIABLE + "}")),
    ("requires_grad a str", _archive(
        '{"format": 1, "root": {"kind": "variable", "key": "k", "parameter": false, '
        '"requires_grad": "yes"}}', {"k": np.ones(2)})),
    ("integer Variable that requires grad", _archive(
        '{"format": 1, "root": {"kind": "variable", "key": "k", "parameter": false, '
        '"requires_grad": true}}', {"k": np.ones(2, dtype=np.int64)})),
    ("text role a number", _archive(
        '{"format": 1, "root": {"kind": "text", "value": "t", "role": 3}}')),
]  # fmt: skip


@pytest.mark.parametrize("data", [case[1] for case in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_an_unreadable_file_raises_load_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(data)
    with pytest.raises(LoadError, match="cannot load") as caught:
        mg.load(path)
    assert isinstance(caught.value, RuntimeError)  # PyTorch's type for a damaged file
    with pytest.raises(LoadError):
        mg.load(io.BytesIO(data))  # a file object reads the same


def test_every_single_flipped_byte_loads_or_raises_load_error() -> None:
    """Either the damage lands where nothing is checked (and the data comes back), or load
    says the file is damaged: never a zipfile, json or NumPy error."""
    for position in range(0, len(GOOD), 7):
        try:
            mg.load(io.BytesIO(_flipped(GOOD, position)))
        except LoadError:
            pass


def test_a_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        mg.load(tmp_path / "nowhere.pt")


def test_the_good_file_still_loads() -> None:
    loaded = mg.load(io.BytesIO(GOOD))
    assert loaded["weight"].tolist() == list(np.arange(6.0))
    assert loaded["steps"] == [1, 2] and loaded["name"] == "m"


# --------------------------------------------------------------------------- PyTorch agrees


def _unpack_number_in_level(t: Any) -> None:
    with t.autograd.forward_ad.dual_level():
        t.autograd.forward_ad.unpack_dual(3.0)


def _wrong_jvp(t: Any) -> None:
    class Wrong(t.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            return grad_output * 2

        @staticmethod
        def jvp(ctx: Any, tangent: Any) -> Any:
            return t.zeros(5)

    dual = t.autograd.forward_ad
    with dual.dual_level():
        output = Wrong.apply(dual.make_dual(t.ones(3), t.ones(3)))
        dual.unpack_dual(output)


def _float_leaf(t: Any) -> Any:
    return t.ones(2, dtype=t.float64, requires_grad=True)


# (id, a call given the module `t`, minigrad or torch, the exception type both raise)
TORCH_AGREES: list[tuple[str, Callable[[Any], Any], type]] = [
    ("unpack_dual number", _unpack_number_in_level, TypeError),
    ("jacobian number", lambda t: t.autograd.functional.jacobian(double, 3.0), TypeError),
    ("vjp list", lambda t: t.autograd.functional.vjp(double, [t.ones(2)]), TypeError),
    ("hvp number", lambda t: t.autograd.functional.hvp(scalar_cube, 2.0, 2.0), TypeError),
    ("gradcheck atol<0",
     lambda t: t.autograd.gradcheck(double, (_float_leaf(t),), atol=-1), RuntimeError),
    ("gradcheck eps=0",
     lambda t: t.autograd.gradcheck(double, (_float_leaf(t),), eps=0), RuntimeError),
    ("load_state_dict None",
     lambda t: t.nn.Linear(2, 2).load_state_dict({"weight": None, "bias": t.zeros(2)}),
     RuntimeError),
    ("LambdaLR returns None",
     lambda t: t.optim.lr_scheduler.LambdaLR(t.optim.SGD([_float_leaf(t)]), lambda e: None),
     TypeError),
    ("SGD of a number", lambda t: t.optim.SGD([3.0]), TypeError),
    ("custom jvp of a wrong shape", _wrong_jvp, RuntimeError),
]  # fmt: skip


@pytest.mark.parametrize(("call", "kind"), [case[1:] for case in TORCH_AGREES],
                         ids=[case[0] for case in TORCH_AGREES])  # fmt: skip
def test_minigrad_raises_what_pytorch_raises(call: Callable[[Any], Any], kind: type) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(kind):
        call(torch)
    with pytest.raises(kind):
        call(mg)

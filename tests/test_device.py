"""Variables on "cuda" (Numba's CUDA simulator here): the same forward and backward, on the
kernels, with the data kept on the device."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import minigrad
from minigrad import Variable, nn, optim


def leaf(array: np.ndarray, device: str) -> Variable:
    variable = Variable(np.array(array)).to(device)
    variable.requires_grad = True
    return variable


def test_to_cuda_and_back() -> None:
    x = Variable([[1.0, 2.0], [3.0, 4.0]])
    on_gpu = x.to("cuda")
    assert on_gpu.device == "cuda" and x.device == "cpu"
    assert on_gpu.cuda() is on_gpu and x.cpu() is x
    assert type(on_gpu.data).__name__ == "DeviceArray"
    back = on_gpu.cpu()
    assert back.device == "cpu" and isinstance(back.data, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    np.testing.assert_array_equal(on_gpu.numpy(), x.numpy())  # numpy() copies back
    assert on_gpu.sum().item() == 10.0
    assert on_gpu.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert "device='cuda'" in repr(on_gpu)
    assert Variable("text").to("cpu").device == "cpu"


def test_data_stays_on_the_device_between_ops() -> None:
    x = Variable(np.arange(6.0).reshape(2, 3)).to("cuda")
    y = ((x * 2 + 1).exp().log() - 1).relu().sum(dim=1)
    assert y.device == "cuda"
    np.testing.assert_allclose(y.numpy(), (np.arange(6.0).reshape(2, 3) * 2).sum(axis=1))


def test_mixing_devices_names_both() -> None:
    a = Variable([1.0, 2.0]).to("cuda")
    b = Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"same device.*cuda.*cpu.*to\(.cuda.\)"):
        a + b
    with pytest.raises(RuntimeError, match=r"same device.*cuda.*cpu.*to\(.cuda.\)"):
        b @ a


def test_bad_device_names() -> None:
    x = Variable([1.0])
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        x.to("gpu")
    with pytest.raises(TypeError, match="device must be .cpu., .cuda. or minigrad.device"):
        x.to(0)
    with pytest.raises(TypeError, match="text Variables live on the cpu"):
        Variable("hi").to("cuda")


def test_gradient_flows_back_across_to() -> None:
    x = leaf([1.0, -2.0, 3.0], "cpu")
    y = (x.to("cuda") * x.to("cuda")).sum()
    y.backward()
    assert x.grad.device == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])


def _mlp_loss(x, target, w1, b1, w2, b2):
    hidden = (x @ w1 + b1).tanh()
    logits = hidden @ w2 + b2
    log_probabilities = logits.log_softmax(dim=1)
    return -(log_probabilities * target).sum(dim=1).mean()


def test_small_mlp_forward_and_backward_on_the_device_equal_the_cpu_run() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 5))
    target = np.eye(3)[rng.integers(0, 3, size=7)]
    weights = [rng.normal(size=(5, 9)), rng.normal(size=(9,)), rng.normal(size=(9, 3)), np.zeros(3)]
    results = {}
    for device in ("cpu", "cuda"):
        params = [leaf(w, device) for w in weights]
        loss = _mlp_loss(Variable(x).to(device), Variable(target).to(device), *params)
        loss.backward()
        assert all(p.grad.device == device for p in params)  # .grad of a device leaf
        results[device] = (loss.item(), [p.grad.numpy() for p in params])
    assert results["cuda"][0] == pytest.approx(results["cpu"][0], rel=1e-12)
    for on_gpu, on_cpu in zip(results["cuda"][1], results["cpu"][1]):
        np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-10, atol=1e-12)


def test_a_training_step_with_nn_and_optim_on_the_device() -> None:
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    rng = np.random.default_rng(1)
    x, labels = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    cpu_loss = nn.MSELoss()(model(Variable(x)), Variable(labels))
    # The same weights on the device, trained one SGD step on each device.
    on_gpu = [leaf(p.data, "cuda") for p in model.parameters()]
    w1, b1, w2, b2 = on_gpu
    gpu_out = (Variable(x).to("cuda") @ w1.T + b1).relu() @ w2.T + b2
    gpu_loss = ((gpu_out - Variable(labels).to("cuda")) ** 2).mean()
    assert gpu_loss.item() == pytest.approx(cpu_loss.item(), rel=1e-12)
    cpu_loss.backward()
    gpu_loss.backward()
    sgd = optim.SGD(on_gpu, lr=0.1)
    sgd.step()
    optim.SGD(list(model.parameters()), lr=0.1).step()
    for on_device, on_host in zip(on_gpu, model.parameters()):
        assert on_device.device == "cuda"
        np.testing.assert_allclose(on_device.detach().numpy(), on_host.data, rtol=1e-12)


def test_import_minigrad_does_not_import_numba_even_after_using_the_cpu() -> None:
    program = (
        "import sys, minigrad; x = minigrad.Variable([1.0], requires_grad=True); "
        "(x * 2).sum().backward(); assert 'numba' not in sys.modules; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


def test_cuda_without_gpu_or_simulator_says_what_to_get() -> None:
    program = (
        "import os; os.environ.pop('NUMBA_ENABLE_CUDASIM', None)\n"
        "import minigrad\n"
        "try:\n"
        "    minigrad.Variable([1.0]).to('cuda')\n"
        "except RuntimeError as error:\n"
        "    print(error)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # hide a real GPU, if the machine has one
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env
    )
    message = result.stdout
    assert "NUMBA_ENABLE_CUDASIM=1" in message and "GPU" in message, result.stderr


_A = np.random.default_rng(0).normal(size=(3, 4)) + 2.0
_B = np.random.default_rng(1).normal(size=(4,)) + 2.0
BUILT_IN_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow-number": lambda a, b: a**2,
    "pow-variable": lambda a, b: a**b,
    "neg": lambda a, b: -a,
    "matmul": lambda a, b: a @ b,
    "sum": lambda a, b: a.sum(),
    "sum-dim": lambda a, b: a.sum(dim=1, keepdim=True),
    "mean": lambda a, b: a.mean(dim=0),
    "max": lambda a, b: a.max(),
    "max-dim": lambda a, b: a.max(dim=1)[0],
    "exp": lambda a, b: a.exp(),
    "log": lambda a, b: a.log(),
    "tanh": lambda a, b: a.tanh(),
    "sigmoid": lambda a, b: a.sigmoid(),
    "relu": lambda a, b: (a - 2).relu(),
    "sqrt": lambda a, b: a.sqrt(),
    "abs": lambda a, b: (a - 2).abs(),
    "reshape": lambda a, b: a.reshape(4, 3),
    "view": lambda a, b: a.view(2, 6),
    "transpose": lambda a, b: a.transpose(0, 1),
    "T": lambda a, b: a.T,
    "permute": lambda a, b: a.permute(1, 0),
    "unsqueeze-squeeze": lambda a, b: a.unsqueeze(0).squeeze(0),
    "expand": lambda a, b: b.unsqueeze(0).expand(3, 4),
    "index": lambda a, b: a[1],
    "slice": lambda a, b: a[:, 1:3],
    "cat": lambda a, b: minigrad.cat([a, a], dim=0),
    "stack": lambda a, b: minigrad.stack([a, a]),
    "softmax": lambda a, b: a.softmax(dim=1),
    "log_softmax": lambda a, b: a.log_softmax(dim=1),
    "clone": lambda a, b: a.clone(),
}


def _forward_backward(op, device: str) -> tuple:
    a, b = leaf(_A, device), leaf(_B, device)
    out = op(a, b)
    out.sum().backward()
    assert out.device == device
    grads = [None if v.grad is None else v.grad.numpy() for v in (a, b)]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name", list(BUILT_IN_OPS))
def test_every_built_in_op_runs_on_the_device_like_on_the_cpu(name: str) -> None:
    value_cpu, grads_cpu = _forward_backward(BUILT_IN_OPS[name], "cpu")
    value_gpu, grads_gpu = _forward_backward(BUILT_IN_OPS[name], "cuda")
    np.testing.assert_allclose(value_gpu, value_cpu, rtol=1e-12)
    for on_gpu, on_cpu in zip(grads_gpu, grads_cpu):
        assert (on_gpu is None) == (on_cpu is None)
        if on_cpu is not None:
            np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-12, atol=1e-14)


def test_what_the_device_cannot_do_yet_says_so() -> None:
    a = leaf(_A, "cuda")
    with pytest.raises(NotImplementedError, match="not supported on cuda yet"):
        a[np.array([0, 2, 0])]


def test_a_module_moves_to_the_device_and_trains_there() -> None:
    minigrad.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 1))
    cpu_loss = nn.MSELoss()(model(Variable(x)), Variable(y))
    cpu_loss.backward()
    cpu_grads = [p.grad.numpy() for p in model.parameters()]
    params = list(model.parameters())
    optimizer = optim.SGD(params, lr=0.1)
    assert model.to("cuda") is model
    assert all(p.device == "cuda" and p.grad.device == "cuda" for p in model.parameters())
    assert list(model.parameters()) == params  # the same objects: the optimizer still works
    optimizer.zero_grad()
    gpu_loss = nn.MSELoss()(model(Variable(x).cuda()), Variable(y).cuda())
    assert gpu_loss.item() == pytest.approx(cpu_loss.item(), rel=1e-12)
    gpu_loss.backward()
    for param, expected in zip(model.parameters(), cpu_grads):
        np.testing.assert_allclose(param.grad.numpy(), expected, rtol=1e-10)
    optimizer.step()
    with pytest.raises(RuntimeError, match="same device"):
        model(Variable(x))  # a cpu input into a cuda model
    assert model.cpu() is model and all(p.device == "cpu" for p in model.parameters())

"""More of PyTorch's own material, run with `import minigrad as torch` (issue 35, a fresh
reviewer's pass): recipes, the nn.Module, Tensor, torch.nn.functional, loss and autograd
docstring examples, and the training idioms of the transfer-learning tutorial and older
code, none of them run by the other tests of PyTorch's material.

Every case is a function `case(torch)` that runs the published code with only the imports
changed (`import torch.nn as nn` becomes `nn = torch.nn`, and so on) and returns its
numbers as a dict. `test_case_runs_with_minigrad` runs it with minigrad and asserts what
the source states or what must hold (shapes, the values printed in the docstring, the loss
falling); `test_case_matches_pytorch` runs it with minigrad and with real PyTorch (skipped
where PyTorch is not installed) and compares. PyTorch runs the comparison with
`torch.set_default_dtype(torch.float64)`, minigrad's default, so the tolerance is float64's.

Random values: the `torch.randn`/`torch.rand` calls stay and their values are then replaced
by NumPy ones of the same dtype and requires_grad (`_same`); a model's parameters are
overwritten right after it is built (`_same_parameters`, PyTorch's default bounds). Files go
to a temporary directory; what the code prints is captured.

Where minigrad fails a case, the case stays as published and is marked xfail (strict), with
the failure in its reason; `xfail_match` marks a case that runs but gives other numbers.
The index_add_ and index_copy_ docstrings mix the default dtype with dtype=torch.float;
PyTorch runs those two in its own default, float32 (`torch_float64=False`).

Sources (pytorch/tutorials, recipes_source/recipes/ and beginner_source/):
- what_is_state_dict.py: the CIFAR Net, SGD with momentum, the model's and the optimizer's
  state_dict as printed (keys, sizes, the documented SGD hyperparameters).
- saving_and_loading_a_general_checkpoint.py: the checkpoint dict through torch.save/load.
- saving_multiple_models_in_one_file.py: two nets and two optimizers in one file.
- warmstarting_model_using_parameters_from_a_different_model.py: NetA's state_dict into
  NetB with strict=False; the text's "change the name of the parameter keys" as a second
  step (a renamed, an extra and a missing key).
- zeroing_out_gradients.py: the CIFAR Net trained with optimizer.zero_grad() each batch;
  the text's alternative, net.zero_grad().
- defining_a_neural_network.py: the MNIST Net with Dropout2d, its repr, its output.
- module_load_state_dict_tips.py: the "vanilla" save/load of SomeModule, then the snippet
  with torch.load(mmap=True), torch.device('meta') and load_state_dict(assign=True).
- reasoning_about_shapes.py: the meta device (shapes without data) and forward hooks that
  print every layer's output shape.
- beginner_source/saving_loading_models.py: "Save/Load state_dict" with weights_only=True,
  "Save/Load Entire Model" (torch.save(model)), the general checkpoint used to resume
  training (epochs 1-2, save, load, epochs 3-4 equal to four uninterrupted epochs), and
  map_location=torch.device('cpu').
- beginner_source/transfer_learning_tutorial.py: train_model (model.train()/eval(),
  torch.set_grad_enabled(phase == 'train'), torch.max(outputs, 1), torch.sum(preds ==
  labels.data), running_corrects.double(), copy.deepcopy(model.state_dict()) of the best
  epoch, StepLR) for "ConvNet as fixed feature extractor" (requires_grad = False, a new fc,
  SGD over model_conv.fc.parameters()) and "Finetuning the convnet" (two parameter groups).
- beginner_source/dcgan_faces_tutorial.py: weights_init through model.apply, with
  m.__class__.__name__ and nn.init.normal_/constant_ on m.weight.data.
Sources (PyTorch 2.14's docstrings, as installed, and docs/source/notes):
- torch.nn.Module: apply (init_weights), modules and named_modules (a shared Linear seen
  once), get_submodule (the A / net_b / net_c diagram, built), register_buffer with
  persistent=False, to (torch.double, torch.device("cpu"), then torch.cdouble), and
  requires_grad_ / train / eval; nn.ModuleDict and nn.ParameterDict (their MyModule).
- torch.Tensor: register_hook, requires_grad_, scatter_ (with reduce='multiply' and
  'add'), scatter_add_, index_add_ (alpha=-1), index_copy_, index_fill_, put_,
  masked_scatter_, unfold, expand, repeat, repeat_interleave.
- torch: gather, take_along_dim, where, topk, sort (dim 0, stable=True), argsort, cumsum,
  diff, tril, einsum (every docstring example), unique, bucketize, cdist, lerp, no_grad,
  enable_grad, set_grad_enabled.
- torch.nn.functional: one_hot, pad, cross_entropy (class indices and probabilities),
  nll_loss, embedding (padding_idx), cosine_similarity, binary_cross_entropy_with_logits.
- torch.nn: CrossEntropyLoss (also with label_smoothing, the argument its docs describe),
  NLLLoss (with the 2-D image example through nn.Conv2d), KLDivLoss (batchmean,
  log_target), CosineSimilarity, PairwiseDistance, Embedding (padding_idx, changing the
  pad vector, max_norm, from_pretrained), BCEWithLogitsLoss (pos_weight), Unfold and the
  conv2d = unfold + matmul + fold equivalence, Upsample (nearest, bilinear,
  align_corners).
- torch.optim.Optimizer.add_param_group (a frozen layer made trainable mid-training, as
  its docstring suggests) and the state_dict round trip of an optimizer and a scheduler.
- docs/source/notes/autograd.rst, "Setting requires_grad": freezing a model but its new
  head, the optimizer over the head only.
- docs/source/notes/amp_examples.rst, "Gradient accumulation", without GradScaler and
  autocast: the loss divided by iters_to_accumulate, a step every iters_to_accumulate
  batches.
- The `.data` idioms of older tutorials and pytorch/examples (mnist/main.py's test() and
  "Learning PyTorch with Examples" as printed for PyTorch 0.4): `output.data.max(1,
  keepdim=True)[1]`, `pred.eq(target.data.view_as(pred)).cpu().sum()`, `w.data -=
  learning_rate * w.grad.data`, `w.grad.data.zero_()`.

Changes, all of them:
- Downloads: CIFAR10 becomes `_fake_images` (3x32x32 in [-1, 1], labels by a fixed linear
  rule), MNIST 1x28x28 images; torchvision's resnet18(pretrained=True) becomes
  `TinyResNet` (conv, BatchNorm2d, ReLU, AdaptiveAvgPool2d, an `fc` of 1000 outputs, as
  resnet18 names it) on 3x8x8 images; ImageFolder becomes a TensorDataset.
- Loops shortened (said where); `shuffle=True` becomes False (the libraries' shuffles
  differ), num_workers=2/4 dropped; device = torch.device("cuda:0" if
  torch.cuda.is_available() else "cpu") kept.
- Print statements kept; what they print is captured, not shown.

Left out, and why: matplotlib and torchvision.utils.make_grid (nothing is shown); Captum,
profiler, TensorBoard, AMP, quantization, TorchScript and torch.compile recipes (other
tools); the Co-Tuning section of the transfer-learning tutorial (it needs the 1000
ImageNet classes' relationships); F.interpolate, F.kl_div, F.normalize and
F.pairwise_distance have no docstring examples of their own (nn.Upsample, nn.KLDivLoss and
nn.PairwiseDistance are run instead); docs/source/notes/extending.rst and the saved
tensor hooks, already run in tests/test_pytorch_examples.py and test_pytorch_tutorials.py.
"""

# PyTorch's code as published: `input` shadowed, `super(Net, self)`, lambdas, bare
# expressions kept from docstrings, unused loop variables and names (`optimModelA`,
# `start`), str.format, `l` as a name.
# ruff: noqa: A001, A002, B007, B018, E731, E741, F841, N801, N806, UP008, UP031, UP032

from __future__ import annotations

import contextlib
import copy
import io
import math
import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pytorch_example_harness import as_numpy as _np
from pytorch_example_harness import compare

import minigrad

CASES: dict[str, tuple] = {}


def case(
    name: str,
    check: Callable[[dict], None],
    rtol: float = 1e-7,
    atol: float = 1e-9,
    xfail: str | None = None,
    xfail_match: str | None = None,
    torch_float64: bool = True,
) -> Callable:
    """Register `fn(torch) -> dict` under `name`. `xfail`: minigrad cannot run it (both
    tests fail); `xfail_match`: it runs but its numbers differ from PyTorch's.
    `torch_float64=False`: PyTorch runs it in its own default dtype (float32), for code
    that mixes the default dtype with an explicit dtype=torch.float."""

    def register(fn: Callable) -> Callable:
        CASES[name] = (fn, check, rtol, atol, xfail, xfail_match, torch_float64)
        return fn

    return register


def _same(torch, like, values):
    """A tensor holding `values`, with the dtype and requires_grad of `like`."""
    return torch.tensor(np.asarray(values), dtype=like.dtype, requires_grad=like.requires_grad)


def _rng_same(torch, like, seed, kind="normal"):
    """`like`'s values replaced by NumPy draws (normal or uniform in [0, 1))."""
    rng = np.random.default_rng(seed)
    shape = tuple(like.shape)
    values = rng.standard_normal(shape) if kind == "normal" else rng.uniform(0, 1, shape)
    return _same(torch, like, values)


def _same_parameters(torch, model, seed):
    """Overwrite the model's parameters, in order, with NumPy values in PyTorch's default
    bounds: uniform in +-1/sqrt(fan_in), a bias in its weight's interval."""
    rng = np.random.default_rng(seed)
    bound = 1.0
    with torch.no_grad():
        for p in model.parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2:
                bound = 1.0 / math.sqrt(math.prod(shape[1:]))
            p.copy_(torch.tensor(rng.uniform(-bound, bound, shape), dtype=p.dtype))


def _parameters(model):
    return np.concatenate([_np(p).ravel() for p in model.parameters()])


def _fake_images(torch, n, shape, classes, seed):
    """n images in [-1, 1] of `shape`, with int64 labels a fixed linear rule gives."""
    rng = np.random.default_rng(seed)
    images = rng.uniform(-1, 1, (n, *shape))
    rule = np.random.default_rng(1234).standard_normal((int(np.prod(shape)), classes))
    labels = (images.reshape(n, -1) @ rule).argmax(axis=1)
    return torch.tensor(images, dtype=torch.get_default_dtype()), torch.tensor(labels)


@contextlib.contextmanager
def _in_temporary_directory():
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(here)


def _falls(losses):
    losses = np.asarray(losses, dtype=np.float64)
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses


def _cifar_net(torch):
    """The Net the recipes share (what_is_state_dict.py and the others), as written."""
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.flatten(start_dim=1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    return Net


# ======================================================================================
# recipes_source/recipes/what_is_state_dict.py
SGD_KEYS = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize")


def _check_state_dict(r):
    assert r["model keys"] == [
        "conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
        "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias",
    ]
    assert list(r["sizes conv1.weight, fc1.weight"]) == [6, 3, 5, 5, 120, 400]
    assert r["optimizer keys"] == ["state", "param_groups"]
    assert list(r["params"]) == list(range(10))
    np.testing.assert_allclose(r["lr, momentum, dampening, weight_decay"], [0.001, 0.9, 0, 0])


@case("recipes/what_is_state_dict.py", check=_check_state_dict)
def what_is_state_dict(torch):
    nn = torch.nn
    optim = torch.optim
    Net = _cifar_net(torch)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        net = Net()
        print(net)
        optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

        print("Model's state_dict:")
        for param_tensor in net.state_dict():
            print(param_tensor, "\t", net.state_dict()[param_tensor].size())

        print()

        print("Optimizer's state_dict:")
        for var_name in optimizer.state_dict():
            print(var_name, "\t", optimizer.state_dict()[var_name])

    group = optimizer.state_dict()["param_groups"][0]
    sizes = net.state_dict()
    return {
        "net repr": repr(net),
        "model keys": list(net.state_dict()),
        "sizes conv1.weight, fc1.weight": np.array(
            list(sizes["conv1.weight"].size()) + list(sizes["fc1.weight"].size())
        ),
        "optimizer keys": list(optimizer.state_dict()),
        "state is empty": optimizer.state_dict()["state"] == {},
        "params": np.array(group["params"]),
        "lr, momentum, dampening, weight_decay": np.array(
            [group["lr"], group["momentum"], group["dampening"], group["weight_decay"]]
        ),
        "nesterov, maximize": [str(group["nesterov"]), str(group["maximize"])],
        "SGD keys in the group": [str(key in group) for key in SGD_KEYS],
    }


# ======================================================================================
# recipes_source/recipes/saving_and_loading_a_general_checkpoint.py
def _check_general_checkpoint(r):
    assert r["epoch"] == 5 and r["loss"] == 0.4
    np.testing.assert_array_equal(r["model output"], r["net output"])
    assert r["outputs shape"] == [2, 10]


@case("recipes/saving_and_loading_a_general_checkpoint.py", check=_check_general_checkpoint)
def general_checkpoint(torch):
    optim = torch.optim
    Net = _cifar_net(torch)
    images, _ = _fake_images(torch, 2, (3, 32, 32), 10, seed=1)
    with _in_temporary_directory(), contextlib.redirect_stdout(io.StringIO()):
        net = Net()
        _same_parameters(torch, net, seed=2)
        print(net)

        optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

        # Additional information
        EPOCH = 5
        PATH = "model.pt"
        LOSS = 0.4

        torch.save({
                    'epoch': EPOCH,
                    'model_state_dict': net.state_dict(),
                    'optimizer_state_dict': optimizer.state_dict(),
                    'loss': LOSS,
                    }, PATH)

        model = Net()
        optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

        checkpoint = torch.load(PATH)
        model.load_state_dict(checkpoint['model_state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
        epoch = checkpoint['epoch']
        loss = checkpoint['loss']

        model.eval()
        # - or -
        model.train()

    with torch.no_grad():
        ours, theirs = model(images), net(images)
    return {"epoch": epoch, "loss": loss, "model output": _np(ours), "net output": _np(theirs),
            "outputs shape": list(ours.shape)}


# ======================================================================================
# recipes_source/recipes/saving_multiple_models_in_one_file.py
def _check_multiple_models(r):
    np.testing.assert_array_equal(r["modelA"], r["netA"])
    np.testing.assert_array_equal(r["modelB"], r["netB"])
    assert r["modes after eval, train"] == ["False", "True"]


@case("recipes/saving_multiple_models_in_one_file.py", check=_check_multiple_models)
def multiple_models(torch):
    optim = torch.optim
    Net = _cifar_net(torch)
    with _in_temporary_directory():
        netA = Net()
        netB = Net()
        _same_parameters(torch, netA, seed=3)
        _same_parameters(torch, netB, seed=4)

        optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
        optimizerB = optim.SGD(netB.parameters(), lr=0.001, momentum=0.9)

        # Specify a path to save to
        PATH = "model.pt"

        torch.save({
                    'modelA_state_dict': netA.state_dict(),
                    'modelB_state_dict': netB.state_dict(),
                    'optimizerA_state_dict': optimizerA.state_dict(),
                    'optimizerB_state_dict': optimizerB.state_dict(),
                    }, PATH)

        modelA = Net()
        modelB = Net()
        optimModelA = optim.SGD(modelA.parameters(), lr=0.001, momentum=0.9)
        optimModelB = optim.SGD(modelB.parameters(), lr=0.001, momentum=0.9)

        checkpoint = torch.load(PATH)
        modelA.load_state_dict(checkpoint['modelA_state_dict'])
        modelB.load_state_dict(checkpoint['modelB_state_dict'])
        optimizerA.load_state_dict(checkpoint['optimizerA_state_dict'])
        optimizerB.load_state_dict(checkpoint['optimizerB_state_dict'])

        modelA.eval()
        modelB.eval()
        eval_mode = modelA.training
        # - or -
        modelA.train()
        modelB.train()
    return {"modelA": _parameters(modelA), "modelB": _parameters(modelB),
            "netA": _parameters(netA), "netB": _parameters(netB),
            "modes after eval, train": [str(eval_mode), str(modelB.training)]}


# ======================================================================================
# recipes_source/recipes/warmstarting_model_using_parameters_from_a_different_model.py
def _check_warmstart(r):
    np.testing.assert_array_equal(r["netB"], r["netA"])
    assert r["missing, unexpected"] == []
    assert r["renamed: missing"] == ["fc3.bias"]
    assert r["renamed: unexpected"] == ["fc4.weight"]
    np.testing.assert_array_equal(r["renamed: fc3.weight"], r["netA fc3.weight"])


@case("recipes/warmstarting_model_using_parameters_from_a_different_model.py",
      check=_check_warmstart)
def warmstarting(torch):
    NetA = _cifar_net(torch)
    NetB = _cifar_net(torch)
    netA = NetA()
    _same_parameters(torch, netA, seed=5)
    netB = NetB()
    with _in_temporary_directory():
        # Specify a path to save to
        PATH = "model.pt"

        torch.save(netA.state_dict(), PATH)

        result = netB.load_state_dict(torch.load(PATH), strict=False)

        # "simply change the name of the parameter keys in the state_dict that you are
        # loading to match the keys in the model that you are loading into"
        state_dict = torch.load(PATH)
        state_dict["fc4.weight"] = state_dict.pop("fc3.weight")
        del state_dict["fc3.bias"]
        state_dict["fc3.weight"] = state_dict.pop("fc4.weight")
        state_dict["fc4.weight"] = torch.zeros(3)
        netC = NetB()
        renamed = netC.load_state_dict(state_dict, strict=False)
    return {
        "netA": _parameters(netA), "netB": _parameters(netB),
        "missing, unexpected": list(result.missing_keys) + list(result.unexpected_keys),
        "renamed: missing": list(renamed.missing_keys),
        "renamed: unexpected": list(renamed.unexpected_keys),
        "renamed: fc3.weight": _np(netC.fc3.weight),
        "netA fc3.weight": _np(netA.fc3.weight),
    }


# ======================================================================================
# recipes_source/recipes/zeroing_out_gradients.py (2 epochs of 3 batches of 4 instead of
# CIFAR10's 12,500; the loss is printed every 3 batches instead of 2,000)
def _check_zeroing(r):
    _falls(r["epoch losses"])
    np.testing.assert_allclose(r["net.zero_grad() grads"], 0.0)


@case("recipes/zeroing_out_gradients.py", check=_check_zeroing, rtol=1e-6, atol=1e-8)
def zeroing_out_gradients(torch):
    nn = torch.nn
    optim = torch.optim
    images, labels = _fake_images(torch, 12, (3, 32, 32), 10, seed=6)
    trainset = torch.utils.data.TensorDataset(images, labels)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=4, shuffle=False)

    Net = _cifar_net(torch)
    net = Net()
    _same_parameters(torch, net, seed=7)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    epoch_losses = []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for epoch in range(2):  # loop over the dataset multiple times

            running_loss = 0.0
            for i, data in enumerate(trainloader, 0):
                # get the inputs; data is a list of [inputs, labels]
                inputs, labels = data

                # zero the parameter gradients
                optimizer.zero_grad()

                # forward + backward + optimize
                outputs = net(inputs)
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()

                # print statistics
                running_loss += loss.item()
                if i % 3 == 2:    # print every 3 mini-batches
                    print('[%d, %5d] loss: %.3f' %
                          (epoch + 1, i + 1, running_loss / 3))
                    epoch_losses.append(running_loss / 3)
                    running_loss = 0.0

        print('Finished Training')

    # "You can also use model.zero_grad()"
    criterion(net(images[:4]), labels[:4]).backward()
    net.zero_grad()
    grads = [0.0 if p.grad is None else _np(p.grad).ravel() for p in net.parameters()]
    return {"epoch losses": np.array(epoch_losses), "parameters": _parameters(net),
            "net.zero_grad() grads": np.concatenate([np.atleast_1d(g) for g in grads]),
            "printed lines": len(printed.getvalue().splitlines())}


# ======================================================================================
# recipes_source/recipes/defining_a_neural_network.py
def _mnist_recipe_net(torch):
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
          super(Net, self).__init__()
          self.conv1 = nn.Conv2d(1, 32, 3, 1)
          self.conv2 = nn.Conv2d(32, 64, 3, 1)
          self.dropout1 = nn.Dropout2d(0.25)
          self.dropout2 = nn.Dropout2d(0.5)
          self.fc1 = nn.Linear(9216, 128)
          self.fc2 = nn.Linear(128, 10)

        # x represents our data
        def forward(self, x):
          # Pass data through conv1
          x = self.conv1(x)
          # Use the rectified-linear activation function over x
          x = F.relu(x)

          x = self.conv2(x)
          x = F.relu(x)

          # Run max pooling over x
          x = F.max_pool2d(x, 2)
          # Pass data through dropout1
          x = self.dropout1(x)
          # Flatten x with start_dim=1
          x = x.flatten(start_dim=1)
          # Pass data through fc1
          x = self.fc1(x)
          x = F.relu(x)
          x = self.dropout2(x)
          x = self.fc2(x)

          # Apply softmax to x
          output = F.log_softmax(x, dim=1)
          return output

    return Net


def _check_defining(r):
    assert r["result shape"] == [1, 10]
    np.testing.assert_allclose(r["train: sum of probabilities"], 1.0, rtol=1e-9)
    np.testing.assert_allclose(np.exp(r["eval result"]).sum(), 1.0, rtol=1e-9)


@case("recipes/defining_a_neural_network.py", check=_check_defining)
def defining_a_neural_network(torch):
    Net = _mnist_recipe_net(torch)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        my_nn = Net()
        print(my_nn)

        # Equates to one random 28x28 image
        random_data = torch.rand((1, 1, 28, 28))
        random_data = _rng_same(torch, random_data, seed=8, kind="uniform")

        my_nn = Net()
        _same_parameters(torch, my_nn, seed=9)
        result = my_nn(random_data)
        print (result)

    # Dropout2d draws differently in each library: the comparison is in eval mode.
    my_nn.eval()
    with torch.no_grad():
        evaluated = my_nn(random_data)
    return {
        "repr": repr(my_nn),
        "result shape": list(result.shape),
        "train: sum of probabilities": float(np.exp(_np(result)).sum()),
        "eval result": _np(evaluated),
    }


# ======================================================================================
# recipes_source/recipes/module_load_state_dict_tips.py: the "vanilla" snippet first,
# then the one with mmap, the meta device and assign=True.
def _some_module(torch):
    nn = torch.nn

    class SomeModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linears = nn.ModuleList([nn.Linear(1, 1) for i in range(10)])

        def forward(self, x):
            return self.linears(x)

    return SomeModule


def _check_vanilla_load(r):
    np.testing.assert_array_equal(r["loaded"], r["saved"])
    assert len(r["keys"]) == 20


@case("recipes/module_load_state_dict_tips.py (vanilla load)", check=_check_vanilla_load)
def vanilla_load(torch):
    SomeModule = _some_module(torch)
    with _in_temporary_directory():
        m = SomeModule()
        _same_parameters(torch, m, seed=71)
        saved = _parameters(m)
        torch.save(m.state_dict(), 'checkpoint.pth')

        state_dict = torch.load('checkpoint.pth')
        m = SomeModule()
        m.load_state_dict(state_dict)
    return {"loaded": _parameters(m), "saved": saved, "keys": list(state_dict)}


def _check_meta_assign(r):
    np.testing.assert_array_equal(r["meta_m after assign"], r["m"])
    assert r["meta device"] == "meta"


@case("recipes/module_load_state_dict_tips.py (mmap, meta device, assign)",
      check=_check_meta_assign,
      xfail="ValueError: unknown device 'meta'; expected 'cpu', 'cuda' or 'cuda:0' (at "
      "`with torch.device('meta'):`; minigrad has no meta device)")
def meta_assign(torch):
    SomeModule = _some_module(torch)
    with _in_temporary_directory():
        m = SomeModule()
        torch.save(m.state_dict(), 'checkpoint.pth')
        state_dict = torch.load('checkpoint.pth', mmap=True)
        with torch.device('meta'):
          meta_m = SomeModule()
        meta_device = str(meta_m.linears[0].weight.device)
        meta_m.load_state_dict(state_dict, assign=True)
    return {"meta_m after assign": _parameters(meta_m), "m": _parameters(m),
            "meta device": meta_device}


# ======================================================================================
# recipes_source/recipes/reasoning_about_shapes.py
def _check_shapes(r):
    assert r["out shape"] == [2, 5, 9, 9]
    assert r["large out shape"] == [1024, 5, 65535, 65535]
    assert r["hooked shapes"][-1] == "[1024, 10]"


@case("recipes/reasoning_about_shapes.py", check=_check_shapes,
      xfail="ValueError: rand(): unknown device 'meta'; expected 'cpu', 'cuda' or "
      "'cuda:0' (minigrad has no meta device)")
def reasoning_about_shapes(torch):
    import timeit

    t = torch.rand(2, 3, 10, 10, device="meta")
    conv = torch.nn.Conv2d(3, 5, 2, device="meta")
    start = timeit.default_timer()
    out = conv(t)
    end = timeit.default_timer()

    t_large = torch.rand(2**10, 3, 2**16, 2**16, device="meta")
    out_large = conv(t_large)

    Net = _cifar_net(torch)
    shapes = []

    def fw_hook(module, input, output):
        shapes.append(str(list(output.shape)))

    with torch.device("meta"):
        net = Net()
        inp = torch.randn((1024, 3, 32, 32))

    for name, layer in net.named_modules():
        layer.register_forward_hook(fw_hook)

    out_net = net(inp)
    return {"out shape": list(out.shape), "large out shape": list(out_large.shape),
            "hooked shapes": shapes, "net out": list(out_net.shape)}


# ======================================================================================
# beginner_source/saving_loading_models.py
class _TheModelClass:
    """The tutorial's TheModelClass (the blitz's LeNet), built for the library given."""

    @staticmethod
    def build(torch):
        nn = torch.nn
        F = torch.nn.functional

        class TheModelClass(nn.Module):
            def __init__(self):
                super(TheModelClass, self).__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.pool = nn.MaxPool2d(2, 2)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                x = x.view(-1, 16 * 5 * 5)
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                x = self.fc3(x)
                return x

        return TheModelClass


def _check_resume(r):
    np.testing.assert_allclose(r["resumed"], r["uninterrupted"], rtol=0, atol=0)
    assert r["epoch"] == 2
    np.testing.assert_array_equal(r["map_location cpu"], r["uninterrupted"])


@case("saving_loading_models.py (state_dict, general checkpoint, resume, map_location)",
      check=_check_resume)
def resume_training(torch):
    nn = torch.nn
    optim = torch.optim
    TheModelClass = _TheModelClass.build(torch)
    images, labels = _fake_images(torch, 4, (3, 32, 32), 10, seed=10)
    loss_fn = nn.CrossEntropyLoss()

    def run_epoch(model, optimizer):
        for start in range(0, 4, 2):
            optimizer.zero_grad()
            loss = loss_fn(model(images[start:start + 2]), labels[start:start + 2])
            loss.backward()
            optimizer.step()
        return loss

    # Four epochs without stopping.
    model = TheModelClass()
    _same_parameters(torch, model, seed=11)
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(4):
        run_epoch(model, optimizer)
    uninterrupted = _parameters(model)

    with _in_temporary_directory():
        model = TheModelClass()
        _same_parameters(torch, model, seed=11)
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for epoch in range(1, 3):
            loss = run_epoch(model, optimizer)
        PATH = "checkpoint.tar"
        torch.save({
                    'epoch': epoch,
                    'model_state_dict': model.state_dict(),
                    'optimizer_state_dict': optimizer.state_dict(),
                    'loss': loss,
                    }, PATH)

        model = TheModelClass()
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        checkpoint = torch.load(PATH, weights_only=True)
        model.load_state_dict(checkpoint['model_state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
        epoch = checkpoint['epoch']
        loss = checkpoint['loss']

        model.train()
        for more in range(2):
            run_epoch(model, optimizer)

        # Save on GPU, Load on CPU (all on the CPU here)
        torch.save(model.state_dict(), "model.pt")
        device = torch.device('cpu')
        model2 = TheModelClass()
        model2.load_state_dict(torch.load("model.pt", map_location=device, weights_only=True))
    return {"resumed": _parameters(model), "uninterrupted": uninterrupted, "epoch": epoch,
            "saved loss": float(loss), "map_location cpu": _parameters(model2)}


def _check_entire_model(r):
    np.testing.assert_array_equal(r["loaded output"], r["output"])


@case("saving_loading_models.py (Save/Load Entire Model)", check=_check_entire_model,
      xfail="TypeError: save can write Variables, arrays, numbers, str, None and "
      "dicts/lists/tuples of them; got TheModelClass at obj. Save model.state_dict(), not "
      "the model (minigrad's files hold no pickle)")
def entire_model(torch):
    TheModelClass = _TheModelClass.build(torch)
    # pickle finds a class by its module-level name, as the tutorial's class is defined
    TheModelClass.__qualname__ = f"TheModelClass_{torch.__name__}"
    globals()[TheModelClass.__qualname__] = TheModelClass
    images, _ = _fake_images(torch, 2, (3, 32, 32), 10, seed=12)
    model = TheModelClass()
    _same_parameters(torch, model, seed=13)
    with _in_temporary_directory():
        PATH = "entire_model.pt"
        torch.save(model, PATH)
        # Model class must be defined somewhere
        loaded = torch.load(PATH, weights_only=False)
        loaded.eval()
    with torch.no_grad():
        return {"loaded output": _np(loaded(images)), "output": _np(model(images))}


# ======================================================================================
# beginner_source/transfer_learning_tutorial.py: train_model as written, on TinyResNet
# (for resnet18(pretrained=True)) and synthetic images; 8 epochs instead of 25.
def _tiny_resnet(torch, seed):
    nn = torch.nn

    class TinyResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(4, 1000)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            return self.fc(x)

    model = TinyResNet()
    _same_parameters(torch, model, seed)
    return model


def _transfer_setup(torch):
    """dataloaders, dataset_sizes, class_names and device, as the tutorial defines them."""
    train_images, train_labels = _fake_images(torch, 16, (3, 8, 8), 4, seed=14)
    val_images, val_labels = _fake_images(torch, 8, (3, 8, 8), 4, seed=15)
    image_datasets = {
        "train": torch.utils.data.TensorDataset(train_images, train_labels),
        "val": torch.utils.data.TensorDataset(val_images, val_labels),
    }
    dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4,
                                                  shuffle=False)
                   for x in ['train', 'val']}
    dataset_sizes = {x: len(image_datasets[x]) for x in ['train', 'val']}
    class_names = ["a", "b", "c", "d"]
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    return dataloaders, dataset_sizes, class_names, device


def _train_model_fn(torch, dataloaders, dataset_sizes, device, record):
    import time

    def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
        since = time.time()

        best_model_wts = copy.deepcopy(model.state_dict())
        best_acc = 0.0

        for epoch in range(num_epochs):
            print('Epoch {}/{}'.format(epoch, num_epochs - 1))
            print('-' * 10)

            # Each epoch has a training and validation phase
            for phase in ['train', 'val']:
                if phase == 'train':
                    model.train()  # Set model to training mode
                else:
                    model.eval()   # Set model to evaluate mode

                running_loss = 0.0
                running_corrects = 0

                # Iterate over data.
                for inputs, labels in dataloaders[phase]:
                    inputs = inputs.to(device)
                    labels = labels.to(device)

                    # zero the parameter gradients
                    optimizer.zero_grad()

                    # forward
                    # compute gradients if only in train
                    with torch.set_grad_enabled(phase == 'train'):
                        outputs = model(inputs)
                        target_outputs = outputs[1] if isinstance(outputs, tuple) else outputs
                        _, preds = torch.max(target_outputs, 1)
                        loss = criterion(outputs, labels)

                        # backward + optimize only if in training phase
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()

                    # statistics
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == 'train':
                    scheduler.step()

                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]

                print('{} Loss: {:.4f} Acc: {:.4f}'.format(
                    phase, epoch_loss, epoch_acc))
                record.append((phase, epoch_loss, float(epoch_acc)))

                # deep copy the model
                if phase == 'val' and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_model_wts = copy.deepcopy(model.state_dict())

            print()

        time_elapsed = time.time() - since
        print('Training complete in {:.0f}m {:.0f}s'.format(
            time_elapsed // 60, time_elapsed % 60))
        print('Best val Acc: {:4f}'.format(best_acc))

        # load best model weights
        model.load_state_dict(best_model_wts)
        return model

    return train_model


def _transfer_results(torch, model, record, frozen_before=None):
    train_losses = [loss for phase, loss, _ in record if phase == "train"]
    val_accs = [acc for phase, _, acc in record if phase == "val"]
    result = {"train losses": np.array(train_losses), "val accuracies": np.array(val_accs),
              "parameters": _parameters(model),
              "bn running mean": _np(model.bn1.running_mean)}
    if frozen_before is not None:
        result["frozen weights kept"] = bool(np.array_equal(_np(model.conv1.weight),
                                                            frozen_before))
    return result


def _check_fixed_extractor(r):
    _falls(r["train losses"])
    assert r["frozen weights kept"] is True


@case("transfer_learning_tutorial.py (ConvNet as fixed feature extractor)",
      check=_check_fixed_extractor, rtol=1e-6, atol=1e-8)
def fixed_feature_extractor(torch):
    nn = torch.nn
    optim = torch.optim
    lr_scheduler = torch.optim.lr_scheduler
    dataloaders, dataset_sizes, class_names, device = _transfer_setup(torch)
    record = []
    train_model = _train_model_fn(torch, dataloaders, dataset_sizes, device, record)

    model_conv = _tiny_resnet(torch, seed=16)  # torchvision.models.resnet18(pretrained=True)
    for param in model_conv.parameters():
        param.requires_grad = False

    # Parameters of newly constructed modules have requires_grad=True by default
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, len(class_names))
    _same_parameters(torch, model_conv.fc, seed=17)
    frozen_before = _np(model_conv.conv1.weight)

    model_conv = model_conv.to(device)

    criterion = nn.CrossEntropyLoss()

    # Observe that only parameters of final layer are being optimized as
    # opposed to before.
    optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.01, momentum=0.9)

    # Decay LR by a factor of 0.1 every 7 epochs
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=7, gamma=0.1)

    with contextlib.redirect_stdout(io.StringIO()):
        model_conv = train_model(model_conv, criterion, optimizer_conv,
                                 exp_lr_scheduler, num_epochs=8)
    result = _transfer_results(torch, model_conv, record, frozen_before)
    result["lr after 8 epochs"] = optimizer_conv.param_groups[0]["lr"]
    return result


def _check_finetuning(r):
    _falls(r["train losses"])
    np.testing.assert_allclose(r["group lrs after 8 epochs"], [1e-3, 1e-4])


@case("transfer_learning_tutorial.py (Finetuning the convnet, two parameter groups)",
      check=_check_finetuning, rtol=1e-6, atol=1e-8)
def finetuning(torch):
    nn = torch.nn
    optim = torch.optim
    lr_scheduler = torch.optim.lr_scheduler
    dataloaders, dataset_sizes, class_names, device = _transfer_setup(torch)
    record = []
    train_model = _train_model_fn(torch, dataloaders, dataset_sizes, device, record)

    model_ft = _tiny_resnet(torch, seed=18)  # models.resnet18(pretrained=True)
    num_ftrs = model_ft.fc.in_features
    model_ft.fc = nn.Linear(num_ftrs, len(class_names))
    _same_parameters(torch, model_ft.fc, seed=19)

    model_ft = model_ft.to(device)

    criterion = nn.CrossEntropyLoss()

    params = [{"params": [p for name, p in model_ft.named_parameters() if 'fc' in name], "lr": 1e-2},  # noqa: E501
                   {"params": [p for name, p in model_ft.named_parameters() if 'fc' not in name], "lr": 1e-3}]  # noqa: E501

    # Observe that all parameters are being optimized
    optimizer_ft = optim.SGD(params, momentum=0.9)

    # Decay LR by a factor of 0.1 every 7 epochs
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)

    with contextlib.redirect_stdout(io.StringIO()):
        model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler,
                               num_epochs=8)
    result = _transfer_results(torch, model_ft, record)
    result["group lrs after 8 epochs"] = np.array(
        [group["lr"] for group in optimizer_ft.param_groups])
    return result


# ======================================================================================
# beginner_source/dcgan_faces_tutorial.py: weights_init, applied to a small model with
# the layer kinds it looks for (Conv, BatchNorm). Its draws differ between libraries,
# so only what the init fixes exactly, and the draws' shapes, are compared.
def _check_dcgan_init(r):
    assert r["batchnorm bias"] == [0.0] * 8
    assert abs(r["conv weight std"] - 0.02) < 0.005
    assert abs(r["batchnorm weight mean"] - 1.0) < 0.03


@case("dcgan_faces_tutorial.py (weights_init through model.apply)", check=_check_dcgan_init,
      rtol=0.3, atol=0.02)
def dcgan_weights_init(torch):
    nn = torch.nn

    # custom weights initialization called on ``netG`` and ``netD``
    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    torch.manual_seed(999)
    netD = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8),
                         nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 4, 1, 0, bias=False))
    netD.apply(weights_init)
    conv_weights = np.concatenate([_np(netD[0].weight).ravel(), _np(netD[3].weight).ravel()])
    return {"conv weight std": float(conv_weights.std()),
            "batchnorm weight mean": float(_np(netD[1].weight).mean()),
            "batchnorm bias": [float(v) for v in _np(netD[1].bias)]}


# ======================================================================================
# torch.nn.Module.apply docstring
def _check_apply(r):
    np.testing.assert_array_equal(r["weights"], np.ones(8))
    assert r["printed Parameter containing:"] == 2 and r["printed Sequential("] == 1


@case("nn.Module.apply docstring (init_weights under @torch.no_grad())", check=_check_apply)
def module_apply(torch):
    nn = torch.nn
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        @torch.no_grad()
        def init_weights(m):
            print(m)
            if type(m) is nn.Linear:
                m.weight.fill_(1.0)
                print(m.weight)
        net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
        returned = net.apply(init_weights)
    text = printed.getvalue()
    return {"weights": np.concatenate([_np(net[0].weight).ravel(), _np(net[1].weight).ravel()]),
            "printed Parameter containing:": text.count("Parameter containing:"),
            "printed Sequential(": text.count("Sequential("),
            "returns self": returned is net,
            "weight still a leaf": net[0].weight.is_leaf and net[0].weight.requires_grad}


# torch.nn.Module.modules and named_modules docstrings
def _check_modules(r):
    assert r["modules"] == ["0 -> Sequential", "1 -> Linear"]
    assert r["named_modules"] == ["0 -> ''", "1 -> '0'"]


@case("nn.Module.modules / named_modules docstrings (duplicates once)", check=_check_modules)
def module_modules(torch):
    nn = torch.nn
    lines, named = [], []
    l = nn.Linear(2, 2)
    net = nn.Sequential(l, l)
    for idx, m in enumerate(net.modules()):
        lines.append(f"{idx} -> {type(m).__name__}")
    for idx, m in enumerate(net.named_modules()):
        named.append(f"{idx} -> {m[0]!r}")
    every = [name for name, _ in net.named_modules(remove_duplicate=False)]
    return {"modules": lines, "named_modules": named,
            "named_modules(remove_duplicate=False)": every,
            "repr": repr(net)}


# torch.nn.Module.get_submodule docstring: its diagram, built.
def _check_get_submodule(r):
    assert r["linear"] == "Linear(in_features=100, out_features=200, bias=True)"
    assert r["missing raises"] == "AttributeError"


@case("nn.Module.get_submodule docstring (A / net_b / net_c)", check=_check_get_submodule)
def get_submodule(torch):
    nn = torch.nn
    A = nn.Module()
    A.net_b = nn.Module()
    A.net_b.net_c = nn.Module()
    A.net_b.net_c.conv = nn.Conv2d(16, 33, 3, stride=2)
    A.net_b.linear = nn.Linear(100, 200)
    try:
        A.get_submodule("net_b.net_d")
        missing = "nothing"
    except Exception as error:  # the class is compared
        missing = type(error).__name__
    return {"linear": repr(A.get_submodule("net_b.linear")),
            "conv": repr(A.get_submodule("net_b.net_c.conv")),
            "itself": A.get_submodule("") is A,
            "repr": repr(A),
            "missing raises": missing}


# torch.nn.Module.register_buffer docstring (and its persistent argument)
def _check_buffers(r):
    assert r["state_dict keys"] == ["weight", "running_mean"]
    assert r["named_buffers"] == ["running_mean", "step_cache"]
    assert r["dtypes after double()"] == ["float64", "float64"]


@case("nn.Module.register_buffer docstring (persistent=False)", check=_check_buffers)
def register_buffer(torch):
    nn = torch.nn
    num_features = 3

    class WithBuffers(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(num_features, dtype=torch.float32))
            self.register_buffer('running_mean', torch.zeros(num_features, dtype=torch.float32))
            self.register_buffer('step_cache', torch.ones(2, dtype=torch.float32),
                                 persistent=False)

    m = WithBuffers()
    state = m.state_dict()
    m.double()
    fresh = WithBuffers()
    fresh.load_state_dict(state)
    return {"state_dict keys": list(state),
            "named_buffers": [name for name, _ in m.named_buffers()],
            "dtypes after double()": [str(m.running_mean.dtype).replace("torch.", ""),
                                      str(m.step_cache.dtype).replace("torch.", "")],
            "buffers require grad": [b.requires_grad for b in m.buffers()] == [False, False],
            "step_cache": _np(fresh.step_cache)}


# torch.nn.Module.to docstring: dtype and device
def _check_module_to(r):
    assert r["dtype after to(torch.double)"] == "float64"
    assert r["device after to(cpu)"] == "cpu"


@case("nn.Module.to docstring (torch.double, torch.device('cpu'))", check=_check_module_to)
def module_to(torch):
    nn = torch.nn
    linear = nn.Linear(2, 2)
    linear.weight
    returned = linear.to(torch.double)
    dtype = str(linear.weight.dtype).replace("torch.", "")
    cpu = torch.device("cpu")
    linear.to(cpu)
    return {"dtype after to(torch.double)": dtype,
            "device after to(cpu)": str(linear.weight.device),
            "returns self": returned is linear}


def _check_module_to_cdouble(r):
    np.testing.assert_allclose(r["output"], r["expected"])


@case("nn.Module.to docstring (torch.cdouble)", check=_check_module_to_cdouble,
      xfail="AttributeError: minigrad does not have `torch.cdouble` yet "
      "(nn.Linear(2, 2, bias=None) itself works)")
def module_to_cdouble(torch):
    nn = torch.nn
    linear = nn.Linear(2, 2, bias=None).to(torch.cdouble)
    weight = np.array([[0.3741 + 0.0j, 0.2382 + 0.0j], [0.5593 + 0.0j, -0.4443 + 0.0j]])
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(weight, dtype=torch.cdouble))
    output = linear(torch.ones(3, 2, dtype=torch.cdouble))
    return {"output": _np(output), "expected": np.ones((3, 2)) @ weight.T,
            "dtype": str(linear.weight.dtype).replace("torch.", "")}


# nn.ModuleDict and nn.ParameterDict docstrings: their MyModule classes
def _check_dicts(r):
    assert r["conv+lrelu shape"] == [1, 10, 6, 6]
    assert r["pool+prelu shape"] == [1, 10, 2, 2]
    assert r["left shape"] == [5, 3]


@case("nn.ModuleDict / nn.ParameterDict docstrings", check=_check_dicts)
def module_parameter_dict(torch):
    nn = torch.nn

    class MyModule(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.choices = nn.ModuleDict(
                {"conv": nn.Conv2d(10, 10, 3), "pool": nn.MaxPool2d(3)}
            )
            self.activations = nn.ModuleDict(
                [["lrelu", nn.LeakyReLU()], ["prelu", nn.PReLU()]]
            )

        def forward(self, x, choice, act):
            x = self.choices[choice](x)
            x = self.activations[act](x)
            return x

    class MyParams(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.params = nn.ParameterDict(
                {
                    "left": nn.Parameter(torch.randn(5, 10)),
                    "right": nn.Parameter(torch.randn(5, 10)),
                }
            )

        def forward(self, x, choice):
            x = self.params[choice].mm(x)
            return x

    m = MyModule()
    _same_parameters(torch, m, seed=20)
    x = _rng_same(torch, torch.randn(1, 10, 8, 8), seed=21)
    a = m(x, "conv", "lrelu")
    b = m(x, "pool", "prelu")
    p = MyParams()
    _same_parameters(torch, p, seed=22)
    c = p(_rng_same(torch, torch.randn(10, 3), seed=23), "left")
    c.sum().backward()
    return {"conv+lrelu": _np(a), "pool+prelu": _np(b), "left": _np(c),
            "conv+lrelu shape": list(a.shape), "pool+prelu shape": list(b.shape),
            "left shape": list(c.shape), "left grad": _np(p.params["left"].grad),
            "right grad is None": p.params["right"].grad is None,
            "parameter names": [name for name, _ in list(m.named_parameters())
                                + list(p.named_parameters())]}


# ======================================================================================
# docs/source/notes/autograd.rst, "Setting requires_grad": freeze, replace the head,
# optimize the head only (resnet18 → TinyResNet); plus nn.Module.requires_grad_.
def _check_freeze(r):
    assert r["requires_grad of frozen"] == [False, False, False, False]
    assert r["conv grad is None"] is True
    _falls(r["losses"])


@case("notes/autograd.rst 'Setting requires_grad' (finetuning) + Module.requires_grad_",
      check=_check_freeze)
def setting_requires_grad(torch):
    nn = torch.nn
    optim = torch.optim
    model = _tiny_resnet(torch, seed=24)  # torchvision.models.resnet18(pretrained=True)
    # Freeze all the parameters in the network
    for param in model.parameters():
        param.requires_grad = False
    # Replace the last fully-connected layer
    # Parameters of newly constructed modules have requires_grad=True by default
    model.fc = nn.Linear(4, 100)
    _same_parameters(torch, model.fc, seed=25)
    # Optimize only the classifier
    optimizer = optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)

    images, labels = _fake_images(torch, 8, (3, 8, 8), 100, seed=26)
    losses = []
    for step in range(5):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    frozen = [p.requires_grad for name, p in model.named_parameters() if "fc" not in name]
    conv_grad_none = model.conv1.weight.grad is None
    model.requires_grad_(True)
    model.eval()
    return {"losses": np.array(losses), "requires_grad of frozen": frozen + [model.training],
            "conv grad is None": conv_grad_none,
            "all trainable after requires_grad_()": all(
                p.requires_grad for p in model.parameters()),
            "fc": _parameters(model.fc)}


# torch.Tensor.register_hook, requires_grad_ and torch.no_grad / enable_grad /
# set_grad_enabled docstrings
def _check_grad_docs(r):
    np.testing.assert_array_equal(r["v.grad"], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(r["v.grad after remove"], [3.0, 6.0, 9.0])
    assert r["requires_grad flags"] == [False, False, False, True, True, True, False,
                                        True, False]
    np.testing.assert_array_equal(r["x.grad (enable_grad)"], [2.0])


@case("Tensor.register_hook / torch.no_grad / enable_grad / set_grad_enabled docstrings",
      check=_check_grad_docs)
def grad_mode_docs(torch):
    v = torch.tensor([0., 0., 0.], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(torch.tensor([1., 2., 3.]))
    first = _np(v.grad)
    h.remove()  # removes the hook
    v.backward(torch.tensor([1., 2., 3.]))
    flags = []

    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
    flags.append(y.requires_grad)

    @torch.no_grad()
    def doubler(x):
        return x * 2
    z = doubler(x)
    flags.append(z.requires_grad)

    @torch.no_grad()
    def tripler(x):
        return x * 3
    z = tripler(x)
    flags.append(z.requires_grad)
    # factory function exception
    with torch.no_grad():
        a = torch.nn.Parameter(torch.rand(10))
    flags.append(a.requires_grad)

    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
    flags.append(y.requires_grad)
    y.backward()
    enable_grad_x = _np(x.grad)

    @torch.enable_grad()
    def doubler2(x):
        return x * 2
    with torch.no_grad():
        z = doubler2(x)
    flags.append(z.requires_grad)

    x = torch.tensor([1.], requires_grad=True)
    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    flags.append(y.requires_grad)
    _ = torch.set_grad_enabled(True)
    y = x * 2
    flags.append(y.requires_grad)
    _ = torch.set_grad_enabled(False)
    y = x * 2
    flags.append(y.requires_grad)
    _ = torch.set_grad_enabled(True)

    # requires_grad_ docstring: start recording on preprocessed weights
    saved_weights = [0.1, 0.2, 0.3, 0.25]
    loaded_weights = torch.tensor(saved_weights)
    weights = loaded_weights * 2 - 0.5  # preprocess(loaded_weights), some function
    weights.requires_grad_()
    out = weights.pow(2).sum()
    out.backward()
    return {"weights is a leaf": weights.is_leaf, "v.grad": first,
            "v.grad after remove": _np(v.grad), "requires_grad flags": flags,
            "x.grad (enable_grad)": enable_grad_x, "weights.grad": _np(weights.grad)}


# ======================================================================================
# torch.Tensor docstrings: scatter_, scatter_add_
def _check_scatter(r):
    np.testing.assert_array_equal(r["scatter_ dim 0"], [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0],
                                                       [0, 0, 3, 0, 0]])
    np.testing.assert_array_equal(r["scatter_ dim 1"], [[1, 2, 3, 0, 0], [6, 7, 0, 0, 8],
                                                       [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(r["scatter_add_ 2"], [[2, 0, 0, 1, 1], [0, 2, 0, 0, 0],
                                                       [0, 0, 2, 1, 1]])


@case("Tensor.scatter_ (src) / scatter_add_ docstrings", check=_check_scatter)
def scatter_docs(torch):
    src = torch.arange(1, 11).reshape((2, 5))
    index = torch.tensor([[0, 1, 2, 0]])
    a = torch.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src)
    index = torch.tensor([[0, 1, 2], [0, 1, 4]])
    b = torch.zeros(3, 5, dtype=src.dtype).scatter_(1, index, src)
    src = torch.ones((2, 5))
    index = torch.tensor([[0, 1, 2, 0, 0]])
    e = torch.zeros(3, 5, dtype=src.dtype).scatter_add_(0, index, src)
    index = torch.tensor([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]])
    f = torch.zeros(3, 5, dtype=src.dtype).scatter_add_(0, index, src)
    return {"scatter_ dim 0": _np(a), "scatter_ dim 1": _np(b), "scatter_add_ 1": _np(e),
            "scatter_add_ 2": _np(f), "int dtype kept": str(a.dtype).replace("torch.", "")}


def _check_scatter_reduce(r):
    np.testing.assert_allclose(r["reduce multiply"], [[2, 2, 2.46, 2], [2, 2, 2, 2.46]])
    np.testing.assert_allclose(r["reduce add"], [[2, 2, 3.23, 2], [2, 2, 2, 3.23]])


@case("Tensor.scatter_ docstring (value with reduce='multiply' / 'add')",
      check=_check_scatter_reduce)
def scatter_reduce_docs(torch):
    c = torch.full((2, 4), 2.).scatter_(1, torch.tensor([[2], [3]]),
                                        1.23, reduce='multiply')
    d = torch.full((2, 4), 2.).scatter_(1, torch.tensor([[2], [3]]),
                                        1.23, reduce='add')
    return {"reduce multiply": _np(c), "reduce add": _np(d)}


# Tensor.index_add_ / index_copy_ docstrings: `torch.ones(5, 3)` (the default dtype)
# with a source of dtype=torch.float. PyTorch runs them in its default float32.
def _check_index_add(r):
    np.testing.assert_array_equal(r["index_add_"], [[2, 3, 4], [1, 1, 1], [8, 9, 10],
                                                   [1, 1, 1], [5, 6, 7]])
    np.testing.assert_array_equal(r["index_add_ alpha=-1"], np.ones((5, 3)))


@case("Tensor.index_add_ docstring (a dtype=torch.float source)", check=_check_index_add,
      torch_float64=False,
      xfail="RuntimeError: index_add(): expected source to have the dtype of self (float64); "
      "got float32 (minigrad's default dtype is float64, the docstring's source is "
      "dtype=torch.float, which PyTorch's float32 default matches)")
def index_add_docs(torch):
    x = torch.ones(5, 3)
    t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
    index = torch.tensor([0, 4, 2])
    first = _np(x.index_add_(0, index, t))
    second = _np(x.index_add_(0, index, t, alpha=-1))
    return {"index_add_": first, "index_add_ alpha=-1": second}


def _check_index_ops(r):
    np.testing.assert_array_equal(r["index_copy_"][4], [4, 5, 6])
    np.testing.assert_array_equal(r["index_fill_"][:, 0], [-1, -1, -1])
    np.testing.assert_array_equal(r["put_"], [[4, 9, 5], [10, 7, 8]])
    np.testing.assert_array_equal(r["masked_scatter_"], [[0, 0, 0, 0, 1], [2, 3, 0, 4, 5]])


@case("Tensor.index_copy_ / index_fill_ / put_ / masked_scatter_ docstrings",
      check=_check_index_ops, torch_float64=False,
      xfail="RuntimeError: index_copy_(): self and source expected to have the same dtype, "
      "but got (self) float64 and (source) float32 (minigrad's default dtype is float64, the "
      "docstring's source is dtype=torch.float, which PyTorch's float32 default matches)")
def index_docs(torch):
    x = torch.zeros(5, 3)
    t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
    index = torch.tensor([0, 4, 2])
    copied = _np(x.index_copy_(0, index, t))
    x = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
    index = torch.tensor([0, 2])
    filled = _np(x.index_fill_(1, index, -1))
    src = torch.tensor([[4, 3, 5],
                        [6, 7, 8]])
    put = _np(src.put_(torch.tensor([1, 3]), torch.tensor([9, 10])))
    self = torch.tensor([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    mask = torch.tensor(
        [[0, 0, 0, 1, 1], [1, 1, 0, 1, 1]],
        dtype=torch.bool,
    )
    source = torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    scattered = _np(self.masked_scatter_(mask, source))
    return {"index_copy_": copied, "index_fill_": filled, "put_": put,
            "masked_scatter_": scattered}


# Tensor.unfold docstring
def _check_tensor_unfold(r):
    np.testing.assert_array_equal(r["unfold(0, 2, 1)"][:, 0], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(r["unfold(0, 2, 2)"], [[1, 2], [3, 4], [5, 6]])


@case("Tensor.unfold docstring", check=_check_tensor_unfold)
def tensor_unfold_docs(torch):
    x = torch.arange(1., 8)
    return {"unfold(0, 2, 1)": _np(x.unfold(0, 2, 1)), "unfold(0, 2, 2)": _np(x.unfold(0, 2, 2))}


# Tensor.expand / repeat docstrings
def _check_expand_repeat(r):
    np.testing.assert_array_equal(r["expand(-1, 4)"], [[1] * 4, [2] * 4, [3] * 4])
    assert list(r["repeat(4, 2, 1).size()"]) == [4, 2, 3]
    assert list(r["size"]) == [3, 1]


@case("Tensor.expand / repeat docstrings", check=_check_expand_repeat)
def expand_repeat_docs(torch):
    x = torch.tensor([[1], [2], [3]])
    size = list(x.size())
    e1 = x.expand(3, 4)
    e2 = x.expand(-1, 4)   # -1 means not changing the size of that dimension
    x = torch.tensor([1, 2, 3])
    r1 = x.repeat(4, 2)
    r2 = x.repeat(4, 2, 1).size()
    return {"size": np.array(size), "expand(3, 4)": _np(e1), "expand(-1, 4)": _np(e2),
            "repeat(4, 2)": _np(r1), "repeat(4, 2, 1).size()": np.array(list(r2))}


# torch.repeat_interleave docstring
def _check_repeat_interleave(r):
    np.testing.assert_array_equal(r["repeat_interleave tensor"], [[1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(r["repeat_interleave(repeats)"], [0, 1, 1, 2, 2, 2])


@case("torch.repeat_interleave docstring", check=_check_repeat_interleave)
def repeat_interleave_docs(torch):
    x = torch.tensor([1, 2, 3])
    i1 = x.repeat_interleave(2)
    y = torch.tensor([[1, 2], [3, 4]])
    i2 = torch.repeat_interleave(y, 2)
    i3 = torch.repeat_interleave(y, 3, dim=1)
    i4 = torch.repeat_interleave(y, torch.tensor([1, 2]), dim=0)
    i5 = torch.repeat_interleave(y, torch.tensor([1, 2]), dim=0, output_size=3)
    i6 = torch.repeat_interleave(torch.tensor([1, 2, 3]))
    return {"repeat_interleave(2)": _np(i1), "repeat_interleave flat": _np(i2),
            "repeat_interleave dim=1": _np(i3), "repeat_interleave tensor": _np(i4),
            "output_size=3": _np(i5), "repeat_interleave(repeats)": _np(i6)}


# torch.gather / torch.where docstrings
def _check_gather_where(r):
    np.testing.assert_array_equal(r["gather"], [[1, 1], [4, 3]])
    assert r["where(x > 0, x, 0.) dtype"] == "float64"
    np.testing.assert_array_equal(r["where(x > 0, 1.0, 0.0)"], r["x"] > 0)


@case("torch.gather / torch.where docstrings", check=_check_gather_where)
def gather_where_docs(torch):
    t = torch.tensor([[1, 2], [3, 4]])
    g = torch.gather(t, 1, torch.tensor([[0, 0], [1, 0]]))
    x = _rng_same(torch, torch.randn(3, 2), seed=27)
    y = torch.ones(3, 2)
    w1 = torch.where(x > 0, 1.0, 0.0)
    w2 = torch.where(x > 0, x, y)
    x2 = _rng_same(torch, torch.randn(2, 2, dtype=torch.double), seed=28)
    w3 = torch.where(x2 > 0, x2, 0.)
    w4 = torch.where(x2 > 0)
    return {"gather": _np(g), "x": _np(x), "where(x > 0, 1.0, 0.0)": _np(w1),
            "where(x > 0, x, y)": _np(w2), "where(x > 0, x, 0.)": _np(w3),
            "where(x > 0, x, 0.) dtype": str(w3.dtype).replace("torch.", ""),
            "where(condition)": np.stack([_np(i) for i in w4])}


# torch.take_along_dim docstring
def _check_take_along_dim(r):
    np.testing.assert_array_equal(r["take_along_dim argmax"], [60])
    np.testing.assert_array_equal(r["take_along_dim sorted"], [[10, 20, 30], [40, 50, 60]])


@case("torch.take_along_dim docstring", check=_check_take_along_dim)
def take_along_dim_docs(torch):
    t = torch.tensor([[10, 30, 20], [60, 40, 50]])
    max_idx = torch.argmax(t)
    a = torch.take_along_dim(t, max_idx)
    sorted_idx = torch.argsort(t, dim=1)
    b = torch.take_along_dim(t, sorted_idx, dim=1)
    return {"take_along_dim argmax": _np(a), "take_along_dim sorted": _np(b)}


# torch.topk / sort / argsort docstrings
def _check_sort_docs(r):
    np.testing.assert_array_equal(r["topk values"], [5, 4, 3])
    np.testing.assert_array_equal(r["topk indices"], [4, 3, 2])
    np.testing.assert_array_equal(r["stable indices"], list(range(0, 18, 2))
                                  + list(range(1, 18, 2)))


@case("torch.topk / sort (stable=True) / argsort docstrings", check=_check_sort_docs)
def sort_docs(torch):
    x = torch.arange(1., 6.)
    top = torch.topk(x, 3)
    x = _rng_same(torch, torch.randn(3, 4), seed=29)
    sorted, indices = torch.sort(x)
    sorted0, indices0 = torch.sort(x, 0)
    x = torch.tensor([0, 1] * 9)
    stable = x.sort(stable=True)
    a = _rng_same(torch, torch.randn(4, 4), seed=30)
    return {"topk values": _np(top.values), "topk indices": _np(top.indices),
            "sorted": _np(sorted), "indices": _np(indices), "sorted dim 0": _np(sorted0),
            "indices dim 0": _np(indices0), "stable values": _np(stable.values),
            "stable indices": _np(stable.indices), "argsort": _np(torch.argsort(a, dim=1))}


# torch.cumsum / tril docstrings
def _check_cumsum_tril(r):
    np.testing.assert_array_equal(r["cumsum"], np.cumsum(r["a"]))
    np.testing.assert_array_equal(r["tril(diagonal=-1)"], np.tril(r["b"], -1))


@case("torch.cumsum / torch.tril docstrings", check=_check_cumsum_tril)
def cumsum_tril_docs(torch):
    a = torch.randint(1, 20, (10,))
    a = _same(torch, a, np.random.default_rng(31).integers(1, 20, 10))
    cumsum = torch.cumsum(a, dim=0)
    m = _rng_same(torch, torch.randn(3, 3), seed=32)
    b = _rng_same(torch, torch.randn(4, 6), seed=33)
    return {"a": _np(a), "cumsum": _np(cumsum), "cumsum dtype": str(cumsum.dtype)[-5:],
            "tril": _np(torch.tril(m)), "b": _np(b),
            "tril(diagonal=1)": _np(torch.tril(b, diagonal=1)),
            "tril(diagonal=-1)": _np(torch.tril(b, diagonal=-1))}


# torch.diff / unique / bucketize / cdist / lerp docstrings
def _check_missing_docs(r):
    np.testing.assert_array_equal(r["diff append"], [2, -1, 2, 1])
    np.testing.assert_array_equal(r["unique inverse"], [[0, 2], [1, 2]])
    np.testing.assert_array_equal(r["unique rows"], [[1, 2, 1, 2], [1, 3, 2, 3]])
    np.testing.assert_array_equal(r["bucketize right"], [[2, 3, 5], [2, 3, 5]])
    np.testing.assert_allclose(r["cdist"], [[3.1193, 2.0959], [2.7138, 3.8322],
                                            [2.2830, 0.3791]], atol=1e-4)
    np.testing.assert_allclose(r["lerp"], [5.5, 6.0, 6.5, 7.0])


@case("torch.diff / unique / bucketize / cdist / lerp docstrings", check=_check_missing_docs)
def diff_unique_docs(torch):
    a = torch.tensor([1, 3, 2])
    d1 = torch.diff(a)
    b = torch.tensor([4, 5])
    d2 = torch.diff(a, append=b)
    c = torch.tensor([[1, 2, 3], [3, 4, 5]])
    d3 = torch.diff(c, dim=0)
    d4 = torch.diff(c, dim=1)
    output, inverse_indices = torch.unique(
        torch.tensor([[1, 3], [2, 3]], dtype=torch.long), sorted=True, return_inverse=True)
    x = torch.tensor([[1, 3, 2, 3], [1, 2, 1, 2]], dtype=torch.long)
    rows = torch.unique(x, dim=0)  # unique rows
    columns = torch.unique(x, dim=1)  # unique columns
    boundaries = torch.tensor([1, 3, 5, 7, 9])
    v = torch.tensor([[3, 6, 9], [3, 6, 9]])
    left = torch.bucketize(v, boundaries)
    right = torch.bucketize(v, boundaries, right=True)
    a = torch.tensor([[0.9041, 0.0196], [-0.3108, -2.4423], [-0.4821, 1.059]])
    b = torch.tensor([[-2.1763, -0.4713], [-0.6986, 1.3702]])
    cdist = torch.cdist(a, b, p=2)
    start = torch.arange(1., 5.)
    end = torch.empty(4).fill_(10)
    lerp = torch.lerp(start, end, 0.5)
    lerp2 = torch.lerp(start, end, torch.full_like(start, 0.5))
    return {"diff": _np(d1), "diff append": _np(d2), "diff dim 0": _np(d3),
            "diff dim 1": _np(d4), "unique": _np(output), "unique inverse": _np(inverse_indices),
            "unique rows": _np(rows), "unique columns": _np(columns),
            "bucketize": _np(left), "bucketize right": _np(right), "cdist": _np(cdist),
            "lerp": _np(lerp), "lerp tensor weight": _np(lerp2)}


# torch.einsum docstring: every example
def _check_einsum(r):
    np.testing.assert_allclose(r["trace"], np.trace(r["A44"]))
    np.testing.assert_allclose(r["diagonal"], np.diag(r["A44"]))
    np.testing.assert_allclose(r["batch matmul"], r["sublist with ellipsis"])
    assert list(r["batch permute shape"]) == [2, 3, 5, 4]


@case("torch.einsum docstring (every example)", check=_check_einsum)
def einsum_docs(torch):
    A44 = _rng_same(torch, torch.randn(4, 4), seed=33)
    trace = torch.einsum('ii', A44)
    diagonal = torch.einsum('ii->i', A44)
    x = _rng_same(torch, torch.randn(5), seed=34)
    y = _rng_same(torch, torch.randn(4), seed=35)
    outer = torch.einsum('i,j->ij', x, y)
    As = _rng_same(torch, torch.randn(3, 2, 5), seed=36)
    Bs = _rng_same(torch, torch.randn(3, 5, 4), seed=37)
    bmm = torch.einsum('bij,bjk->bik', As, Bs)
    sublist = torch.einsum(As, [..., 0, 1], Bs, [..., 1, 2], [..., 0, 2])
    A = torch.randn(2, 3, 4, 5)
    permuted = torch.einsum('...ij->...ji', A).shape
    A = _rng_same(torch, torch.randn(3, 5, 4), seed=38)
    l = _rng_same(torch, torch.randn(2, 5), seed=39)
    r = _rng_same(torch, torch.randn(2, 4), seed=40)
    bilinear = torch.einsum('bn,anm,bm->ba', l, A, r)
    return {"A44": _np(A44), "trace": _np(trace), "diagonal": _np(diagonal),
            "outer": _np(outer), "batch matmul": _np(bmm), "sublist with ellipsis": _np(sublist),
            "batch permute shape": np.array(list(permuted)), "bilinear": _np(bilinear)}


# ======================================================================================
# torch.nn.functional docstrings: one_hot, pad
def _check_one_hot(r):
    np.testing.assert_array_equal(r["one_hot"], np.eye(3, dtype=int)[[0, 1, 2, 0, 1]])
    assert list(r["one_hot 3-D shape"]) == [3, 2, 3]


@case("F.one_hot docstring", check=_check_one_hot)
def one_hot_docs(torch):
    F = torch.nn.functional
    a = F.one_hot(torch.arange(0, 5) % 3)
    b = F.one_hot(torch.arange(0, 5) % 3, num_classes=5)
    c = F.one_hot(torch.arange(0, 6).view(3,2) % 3)
    return {"one_hot": _np(a), "one_hot num_classes=5": _np(b), "one_hot 3-D": _np(c),
            "one_hot 3-D shape": np.array(list(c.shape)),
            "one_hot dtype": str(a.dtype).replace("torch.", "")}


def _check_pad(r):
    assert [list(s) for s in r["pad sizes"]] == [[3, 3, 4, 4], [3, 3, 8, 4], [3, 9, 7, 3]]
    np.testing.assert_array_equal(r["pad values"][0, 0], [-1, -1, -1, -1, -1, -1])


@case("F.pad docstring (constant)", check=_check_pad)
def pad_docs(torch):
    F = torch.nn.functional
    sizes = []
    t4d = torch.empty(3, 3, 4, 2)
    p1d = (1, 1) # pad last dim by 1 on each side
    out = F.pad(t4d, p1d, "constant", 0)  # effectively zero padding
    sizes.append(list(out.size()))
    p2d = (1, 1, 2, 2) # pad last dim by (1, 1) and 2nd to last by (2, 2)
    out = F.pad(t4d, p2d, "constant", 0)
    sizes.append(list(out.size()))
    t4d = torch.empty(3, 3, 4, 2)
    p3d = (0, 1, 2, 1, 3, 3) # pad by (0, 1), (2, 1), and (3, 3)
    out = F.pad(t4d, p3d, "constant", 0)
    sizes.append(list(out.size()))
    small = torch.arange(6.).view(1, 2, 3)
    return {"pad sizes": np.array(sizes),
            "pad values": _np(F.pad(small, (1, 2, 1, 0), "constant", -1.0))}


def _check_pad_modes(r):
    np.testing.assert_array_equal(r["reflect"][0, 0], [2, 1, 0, 1, 2, 1])


@case("F.pad's other modes ('reflect', 'replicate', as its docstring lists them)",
      check=_check_pad_modes)
def pad_modes(torch):
    F = torch.nn.functional
    small = torch.arange(6.).view(1, 2, 3)
    return {"reflect": _np(F.pad(small, (2, 1), "reflect")),
            "replicate": _np(F.pad(small, (1, 2), "replicate"))}


# CrossEntropyLoss docstring: its targets are drawn with Tensor.random_
def _check_ce_module(r):
    assert np.isfinite(r["CE indices"]) and np.isfinite(r["CE probabilities"])
    np.testing.assert_allclose(r["CE indices grad"].sum(axis=1), 0.0, atol=1e-12)


@case("nn.CrossEntropyLoss docstring (class indices, class probabilities)",
      check=_check_ce_module)
def cross_entropy_module_docs(torch):
    nn = torch.nn
    r = {}
    # Example of target with class indices
    loss = nn.CrossEntropyLoss()
    input = _rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=41)
    target = torch.empty(3, dtype=torch.long).random_(5)
    target = _same(torch, target, [1, 0, 4])
    output = loss(input, target)
    output.backward()
    r["CE indices"], r["CE indices grad"] = output.item(), _np(input.grad)
    # Example of target with class probabilities
    input = _rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=42)
    target = _rng_same(torch, torch.randn(3, 5), seed=43).softmax(dim=1)
    output = loss(input, target)
    output.backward()
    r["CE probabilities"], r["CE probabilities grad"] = output.item(), _np(input.grad)
    return r


# F.cross_entropy docstring, and CrossEntropyLoss's label_smoothing (its documented
# argument, with indices and with probabilities)
def _check_ce_functional(r):
    for key in ("F.cross_entropy indices", "F.cross_entropy probabilities",
                "label_smoothing=0.1", "label_smoothing=0.1, probabilities"):
        assert np.isfinite(r[key]), key
    assert r["label_smoothing=0.1"] > r["F.cross_entropy same, no smoothing"] - 1.0


@case("F.cross_entropy docstring + CrossEntropyLoss(label_smoothing=0.1)",
      check=_check_ce_functional)
def cross_entropy_functional_docs(torch):
    nn = torch.nn
    F = torch.nn.functional
    r = {}
    # Example of target with class indices
    input = _rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=44)
    target = torch.randint(5, (3,), dtype=torch.int64)
    target = _same(torch, target, [4, 4, 2])
    loss = F.cross_entropy(input, target)
    loss.backward()
    r["F.cross_entropy indices"], r["F.cross_entropy grad"] = loss.item(), _np(input.grad)
    # Example of target with class probabilities
    input = _rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=45)
    target = _rng_same(torch, torch.randn(3, 5), seed=46).softmax(dim=1)
    loss = F.cross_entropy(input, target)
    loss.backward()
    r["F.cross_entropy probabilities"] = loss.item()
    r["F.cross_entropy probabilities grad"] = _np(input.grad)
    smoothed = nn.CrossEntropyLoss(label_smoothing=0.1)
    r["F.cross_entropy same, no smoothing"] = F.cross_entropy(input, torch.tensor([1, 0, 4])).item()
    r["label_smoothing=0.1"] = smoothed(input, torch.tensor([1, 0, 4])).item()
    r["label_smoothing=0.1, probabilities"] = smoothed(input, target).item()
    return r


# NLLLoss / F.nll_loss docstrings (1-D)
def _check_nll(r):
    np.testing.assert_allclose(r["NLLLoss"], r["F.nll_loss"])
    np.testing.assert_allclose(r["NLLLoss grad"].sum(axis=1), 0.0, atol=1e-12)


@case("nn.NLLLoss / F.nll_loss docstrings (N x C)", check=_check_nll)
def nll_docs(torch):
    nn = torch.nn
    F = torch.nn.functional
    log_softmax = nn.LogSoftmax(dim=1)
    loss_fn = nn.NLLLoss()
    # input to NLLLoss is of size N x C = 3 x 5
    input = _rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=47)
    # each element in target must have 0 <= value < C
    target = torch.tensor([1, 0, 4])
    loss = loss_fn(log_softmax(input), target)
    loss.backward()
    output = F.nll_loss(F.log_softmax(input, dim=1), target)
    return {"NLLLoss": loss.item(), "NLLLoss grad": _np(input.grad), "F.nll_loss": output.item()}


def _check_nll_2d(r):
    assert np.isfinite(r["NLLLoss 2-D"]) and list(r["output shape"]) == [5, 4, 8, 8]


@case("nn.NLLLoss docstring (2-D loss through nn.Conv2d)", check=_check_nll_2d)
def nll_2d_docs(torch):
    nn = torch.nn
    N, C = 5, 4
    loss_fn = nn.NLLLoss()
    data = _rng_same(torch, torch.randn(N, 16, 10, 10), seed=48)
    conv = nn.Conv2d(16, C, (3, 3))
    _same_parameters(torch, conv, seed=49)
    log_softmax = nn.LogSoftmax(dim=1)
    # output of conv forward is of shape [N, C, 8, 8]
    output = log_softmax(conv(data))
    # each element in target must have 0 <= value < C
    target = torch.empty(N, 8, 8, dtype=torch.long).random_(0, C)
    target = _same(torch, target, np.random.default_rng(50).integers(0, C, (N, 8, 8)))
    # input to NLLLoss is of size N x C x height (8) x width (8)
    loss = loss_fn(output, target)
    loss.backward()
    return {"NLLLoss 2-D": loss.item(), "conv grad": _np(conv.weight.grad),
            "output shape": np.array(list(output.shape))}


# KLDivLoss docstring
def _check_kl(r):
    assert r["KLDivLoss"] >= 0 and r["KLDivLoss log_target"] >= 0


@case("nn.KLDivLoss docstring (batchmean, log_target)", check=_check_kl)
def kl_div_docs(torch):
    nn = torch.nn
    F = torch.nn.functional
    kl_loss = nn.KLDivLoss(reduction="batchmean")
    # input should be a distribution in the log space
    input = F.log_softmax(_rng_same(torch, torch.randn(3, 5, requires_grad=True), seed=51),
                          dim=1)
    # Sample a batch of distributions. Usually this would come from the dataset
    target = F.softmax(_rng_same(torch, torch.rand(3, 5), seed=52, kind="uniform"), dim=1)
    output = kl_loss(input, target)
    kl_value = output.item()
    kl_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
    log_target = F.log_softmax(_rng_same(torch, torch.rand(3, 5), seed=53, kind="uniform"),
                               dim=1)
    output = kl_loss(input, log_target)
    return {"KLDivLoss": kl_value, "KLDivLoss log_target": output.item()}


# CosineSimilarity / PairwiseDistance docstrings
def _check_distances(r):
    assert list(r["cosine shape"]) == [100]
    assert np.all(np.abs(r["cosine"]) <= 1) and np.all(r["pairwise distance"] > 0)


@case("nn.CosineSimilarity / nn.PairwiseDistance docstrings", check=_check_distances)
def distance_docs(torch):
    nn = torch.nn
    input1 = _rng_same(torch, torch.randn(100, 128), seed=54)
    input2 = _rng_same(torch, torch.randn(100, 128), seed=55)
    cos = nn.CosineSimilarity(dim=1, eps=1e-6)
    output = cos(input1, input2)
    pdist = nn.PairwiseDistance(p=2)
    distance = pdist(input1, input2)
    return {"cosine": _np(output), "cosine shape": np.array(list(output.shape)),
            "pairwise distance": _np(distance)}


# F.cosine_similarity docstring
def _check_f_cosine(r):
    assert np.all(np.abs(r["cosine"]) <= 1) and list(r["cosine"].shape) == [100]


@case("F.cosine_similarity docstring", check=_check_f_cosine)
def f_cosine_docs(torch):
    F = torch.nn.functional
    input1 = _rng_same(torch, torch.randn(100, 128), seed=56)
    input2 = _rng_same(torch, torch.randn(100, 128), seed=57)
    output = F.cosine_similarity(input1, input2)
    with contextlib.redirect_stdout(io.StringIO()):
        print(output)
    return {"cosine": _np(output)}


# BCEWithLogitsLoss / F.binary_cross_entropy_with_logits docstrings. The docstring's target
# is float32, its logits the default dtype: PyTorch returns a float32 loss for them (also
# under a float64 default), minigrad a float64 one, hence rtol 1e-6.
def _check_bce(r):
    np.testing.assert_allclose(r["BCEWithLogits pos_weight"],
                               -math.log(1 / (1 + math.exp(-1.5))), rtol=1e-6)


@case("nn.BCEWithLogitsLoss (pos_weight) / F.binary_cross_entropy_with_logits docstrings",
      check=_check_bce, rtol=1e-6)
def bce_docs(torch):
    F = torch.nn.functional
    target = torch.ones([10, 64], dtype=torch.float32)  # 64 classes, batch size = 10
    output = torch.full([10, 64], 1.5)  # A prediction (logit)
    pos_weight = torch.ones([64])  # All weights are equal to 1
    criterion = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    bce = criterion(output, target)  # -log(sigmoid(1.5))
    input = _rng_same(torch, torch.randn(3, requires_grad=True), seed=58)
    target = torch.empty(3).fill_(1.0)
    target[1] = 0.0  # `torch.empty(3).random_(2)`, drawn here as [1, 0, 1]
    loss = F.binary_cross_entropy_with_logits(input, target)
    loss.backward()
    return {"BCEWithLogits pos_weight": bce.item(), "F.bce_with_logits": loss.item(),
            "grad": _np(input.grad)}


# nn.Embedding / F.embedding docstrings (padding_idx, changing the pad vector,
# from_pretrained)
def _check_embedding(r):
    np.testing.assert_array_equal(r["padding_idx rows"][0], 0.0)
    np.testing.assert_array_equal(r["padding_idx grad row 0"], 0.0)
    np.testing.assert_array_equal(r["pad vector changed"][0], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(r["from_pretrained"], [[4.0, 5.1, 6.3]], rtol=1e-6)
    np.testing.assert_array_equal(r["F.embedding padding_idx"][0, 0], 0.0)


@case("nn.Embedding / F.embedding docstrings (padding_idx, pad vector, from_pretrained)",
      check=_check_embedding)
def embedding_docs(torch):
    nn = torch.nn
    F = torch.nn.functional
    # an Embedding module containing 10 tensors of size 3
    embedding = nn.Embedding(10, 3)
    _same_parameters(torch, embedding, seed=59)
    # a batch of 2 samples of 4 indices each
    input = torch.LongTensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    plain = embedding(input)
    # example with padding_idx
    embedding = nn.Embedding(10, 3, padding_idx=0)
    input = torch.LongTensor([[0, 2, 0, 5]])
    padded = embedding(input)
    padded.sum().backward()
    pad_grad = _np(embedding.weight.grad)[0]
    # example of changing `pad` vector
    padding_idx = 0
    embedding = nn.Embedding(3, 3, padding_idx=padding_idx)
    with torch.no_grad():
        embedding.weight[padding_idx] = torch.ones(3)
    changed = _np(embedding.weight)
    # FloatTensor containing pretrained weights
    weight = torch.FloatTensor([[1, 2.3, 3], [4, 5.1, 6.3]])
    pretrained = nn.Embedding.from_pretrained(weight)
    # Get embeddings for index 1
    input = torch.LongTensor([1])
    from_pretrained = pretrained(input)
    # F.embedding
    input = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    embedding_matrix = _rng_same(torch, torch.rand(10, 3), seed=60, kind="uniform")
    functional = F.embedding(input, embedding_matrix)
    weights = _rng_same(torch, torch.rand(10, 3), seed=61, kind="uniform")
    weights[0, :].zero_()
    embedding_matrix = weights
    input = torch.tensor([[0, 2, 0, 5]])
    functional_pad = F.embedding(input, embedding_matrix, padding_idx=0)
    return {"plain": _np(plain), "padding_idx rows": _np(padded)[0, ::2],
            "padding_idx grad row 0": pad_grad, "pad vector changed": changed[:1],
            "from_pretrained": _np(from_pretrained),
            "F.embedding": _np(functional), "F.embedding padding_idx": _np(functional_pad)}


def _check_max_norm(r):
    assert np.all(r["row norms"] <= 1.0 + 1e-6)


@case("nn.Embedding(max_norm=1.0) (its documented renormalization)", check=_check_max_norm)
def embedding_max_norm(torch):
    nn = torch.nn
    embedding = nn.Embedding(10, 3, max_norm=1.0)
    with torch.no_grad():
        embedding.weight.copy_(torch.tensor(np.random.default_rng(62).normal(0, 2, (10, 3))))
    looked_up = embedding(torch.tensor([1, 2, 2, 7]))
    return {"rows": _np(looked_up), "row norms": np.linalg.norm(_np(looked_up), axis=1),
            "weight": _np(embedding.weight)}


# nn.Unfold docstring (and conv2d = unfold + matmul + fold)
def _check_unfold(r):
    assert list(r["output size"]) == [2, 30, 4]
    assert r["conv - fold max"] < 1e-10


@case("nn.Unfold docstring (conv2d as unfold + matmul + fold)", check=_check_unfold)
def unfold_fold(torch):
    nn = torch.nn
    unfold = nn.Unfold(kernel_size=(2, 3))
    input = _rng_same(torch, torch.randn(2, 5, 3, 4), seed=63)
    output = unfold(input)
    size = output.size()
    inp = _rng_same(torch, torch.randn(1, 3, 10, 12), seed=64)
    w = _rng_same(torch, torch.randn(2, 3, 4, 5), seed=65)
    inp_unf = torch.nn.functional.unfold(inp, (4, 5))
    out_unf = inp_unf.transpose(1, 2).matmul(w.view(w.size(0), -1).t()).transpose(1, 2)
    out = torch.nn.functional.fold(out_unf, (7, 8), (1, 1))
    difference = (torch.nn.functional.conv2d(inp, w) - out).abs().max()
    return {"output": _np(output), "output size": np.array(list(size)), "fold": _np(out),
            "conv - fold max": difference.item()}


# nn.Upsample docstring
def _check_upsample(r):
    np.testing.assert_array_equal(r["nearest"][0, 0], [[1, 1, 2, 2], [1, 1, 2, 2],
                                                       [3, 3, 4, 4], [3, 3, 4, 4]])
    np.testing.assert_allclose(r["bilinear"][0, 0, 0], [1.0, 1.25, 1.75, 2.0])
    np.testing.assert_allclose(r["bilinear align_corners"][0, 0, 0], [1, 4 / 3, 5 / 3, 2],
                               rtol=1e-6)


# float32 (the docstring's dtype): PyTorch's CPU kernel fuses each multiply-add, so a value
# can differ from minigrad's in its last bit (2.4e-7 of 2.33); compared at float32's rtol.
@case("nn.Upsample docstring (nearest, bilinear, align_corners)", check=_check_upsample,
      rtol=1e-6)
def upsample_docs(torch):
    nn = torch.nn
    input = torch.arange(1, 5, dtype=torch.float32).view(1, 1, 2, 2)
    m = nn.Upsample(scale_factor=2, mode='nearest')
    nearest = m(input)
    m = nn.Upsample(scale_factor=2, mode='bilinear')  # align_corners=False
    bilinear = m(input)
    m = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
    corners = m(input)
    input_3x3 = torch.zeros(3, 3).view(1, 1, 3, 3)
    input_3x3[:, :, :2, :2].copy_(input)
    m = nn.Upsample(scale_factor=2, mode='bilinear')  # align_corners=False
    big = m(input_3x3)
    return {"nearest": _np(nearest), "bilinear": _np(bilinear),
            "bilinear align_corners": _np(corners), "3x3 bilinear": _np(big)}

# ======================================================================================
# torch.optim: Optimizer.add_param_group (unfreezing mid-training, as its docstring
# suggests), and an optimizer's and a scheduler's state_dict round trip.
def _check_add_param_group(r):
    _falls(r["losses"])
    assert r["groups"] == 2
    assert r["body changed only after add_param_group"] is True


@case("optim.Optimizer.add_param_group (unfreeze a layer while training)",
      check=_check_add_param_group, rtol=1e-6, atol=1e-9)
def add_param_group(torch):
    nn = torch.nn
    optim = torch.optim
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    _same_parameters(torch, model, seed=62)
    body, head = model[0], model[2]
    body.requires_grad_(False)
    optimizer = optim.Adam(head.parameters(), lr=0.05)
    rng = np.random.default_rng(63)
    x = torch.tensor(rng.standard_normal((16, 6)))
    y = torch.tensor(rng.integers(0, 3, 16))
    before = _np(body.weight)
    losses = []
    unchanged = True
    for step in range(8):
        if step == 4:
            body.requires_grad_(True)
            optimizer.add_param_group({"params": body.parameters(), "lr": 0.01})
            unchanged = bool(np.array_equal(_np(body.weight), before))
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    changed = not np.array_equal(_np(body.weight), before)
    return {"losses": np.array(losses), "groups": len(optimizer.param_groups),
            "body changed only after add_param_group": unchanged and changed,
            "group lrs": np.array([g["lr"] for g in optimizer.param_groups]),
            "parameters": _parameters(model)}


def _check_optimizer_round_trip(r):
    np.testing.assert_array_equal(r["resumed"], r["uninterrupted"])
    np.testing.assert_array_equal(r["lrs resumed"], r["lrs uninterrupted"])


@case("optim state_dict / load_state_dict round trip (Adam + StepLR)",
      check=_check_optimizer_round_trip)
def optimizer_round_trip(torch):
    nn = torch.nn
    optim = torch.optim
    rng = np.random.default_rng(64)
    x = torch.tensor(rng.standard_normal((10, 4)))
    y = torch.tensor(rng.standard_normal((10, 2)))

    def make():
        model = nn.Linear(4, 2)
        _same_parameters(torch, model, seed=65)
        optimizer = optim.Adam(model.parameters(), lr=0.1, betas=(0.8, 0.9), weight_decay=0.01)
        scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        return model, optimizer, scheduler

    def step(model, optimizer, scheduler, lrs):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    model, optimizer, scheduler = make()
    lrs_all = []
    for _ in range(6):
        step(model, optimizer, scheduler, lrs_all)
    uninterrupted = _parameters(model)

    model, optimizer, scheduler = make()
    lrs = []
    for _ in range(3):
        step(model, optimizer, scheduler, lrs)
    saved = {"model": copy.deepcopy(model.state_dict()),
             "optimizer": copy.deepcopy(optimizer.state_dict()),
             "scheduler": scheduler.state_dict()}
    model, optimizer, scheduler = make()
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    for _ in range(3):
        step(model, optimizer, scheduler, lrs)
    state = optimizer.state_dict()["state"][0]
    return {"resumed": _parameters(model), "uninterrupted": uninterrupted,
            "lrs resumed": np.array(lrs), "lrs uninterrupted": np.array(lrs_all),
            "adam step": float(state["step"]), "adam exp_avg": np.asarray(state["exp_avg"]),
            "scheduler last_epoch": saved["scheduler"]["last_epoch"]}


# An optimizer written as torch/optim/sgd.py and adam.py write theirs: state kept in
# self.state[p], keyed by the parameter, holding tensors (here: SGD with momentum, which
# must equal optim.SGD's).
def _check_custom_optimizer(r):
    np.testing.assert_allclose(r["custom"], r["optim.SGD"], rtol=1e-12)
    assert r["state keyed by parameter"] is True


@case("torch.optim.Optimizer subclass with self.state[p] (as torch/optim/sgd.py)",
      check=_check_custom_optimizer)
def custom_optimizer(torch):
    nn = torch.nn
    optim = torch.optim

    class MySGD(optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            defaults = dict(lr=lr, momentum=momentum)
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["momentum_buffer"] = torch.clone(p.grad).detach()
                    else:
                        state["momentum_buffer"].mul_(group["momentum"]).add_(p.grad)
                    p.add_(state["momentum_buffer"], alpha=-group["lr"])
            return loss

    rng = np.random.default_rng(69)
    x = torch.tensor(rng.standard_normal((8, 3)))
    y = torch.tensor(rng.standard_normal((8, 1)))
    results = {}
    for label, make in (("custom", lambda p: MySGD(p, lr=0.1, momentum=0.9)),
                        ("optim.SGD", lambda p: optim.SGD(p, lr=0.1, momentum=0.9))):
        model = nn.Linear(3, 1)
        _same_parameters(torch, model, seed=70)
        optimizer = make(model.parameters())
        for _ in range(5):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        results[label] = _parameters(model)
        if label == "custom":
            results["state keyed by parameter"] = model.weight in optimizer.state
    adam_model = nn.Linear(3, 1)
    adam = optim.Adam(adam_model.parameters())
    nn.functional.mse_loss(adam_model(x), y).backward()
    adam.step()
    results["exp_avg shape"] = np.array(list(adam.state[adam_model.weight]["exp_avg"].shape))
    results["exp_avg in state_dict is a tensor"] = hasattr(
        adam.state_dict()["state"][0]["exp_avg"], "detach")
    return results


# docs/source/notes/amp_examples.rst, "Gradient accumulation" (no GradScaler, no autocast)
def _check_accumulation(r):
    np.testing.assert_allclose(r["accumulated grad"], r["full-batch grad"], rtol=1e-12)
    _falls(r["losses"])


@case("notes/amp_examples.rst 'Gradient accumulation' (without GradScaler)",
      check=_check_accumulation)
def gradient_accumulation(torch):
    nn = torch.nn
    optim = torch.optim
    rng = np.random.default_rng(66)
    xs = torch.tensor(rng.standard_normal((12, 5)))
    ys = torch.tensor(rng.standard_normal((12, 1)))
    data = [(xs[i:i + 3], ys[i:i + 3]) for i in range(0, 12, 3)]
    model = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 1))
    _same_parameters(torch, model, seed=67)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    iters_to_accumulate = 2

    # the first accumulated gradient against one full batch of the same 6 rows
    full = loss_fn(model(xs[:6]), ys[:6])
    full_grad = torch.autograd.grad(full, list(model.parameters()))
    full_grad = np.concatenate([_np(g).ravel() for g in full_grad])

    losses = []
    accumulated = None
    for epoch in range(3):
        for i, (input, target) in enumerate(data):
            output = model(input)
            loss = loss_fn(output, target)
            loss = loss / iters_to_accumulate
            loss.backward()
            if (i + 1) % iters_to_accumulate == 0:
                if accumulated is None:
                    accumulated = np.concatenate([_np(p.grad).ravel()
                                                  for p in model.parameters()])
                optimizer.step()
                optimizer.zero_grad()
        with torch.no_grad():
            losses.append(loss_fn(model(xs), ys).item())
    return {"accumulated grad": accumulated, "full-batch grad": full_grad,
            "losses": np.array(losses), "parameters": _parameters(model)}


# ======================================================================================
# (dtype = torch.float: float32 code, compared to float32's precision.)
# The `.data` idioms of older code: pytorch/examples mnist/main.py's test() and the
# PyTorch 0.4 "Learning PyTorch with Examples" (two_layer_net_autograd.py).
def _check_old_data_idioms(r):
    assert 0 <= r["correct"] <= 12
    _falls(r["losses"])
    assert r["pred shape"] == [12, 1]


@case("older code's .data idioms (mnist test(), 0.4 two_layer_net_autograd)",
      check=_check_old_data_idioms, rtol=1e-5, atol=1e-6)
def old_data_idioms(torch):
    F = torch.nn.functional
    dtype = torch.float
    device = torch.device("cpu")
    N, D_in, H, D_out = 12, 10, 8, 4
    rng = np.random.default_rng(68)
    x = torch.tensor(rng.standard_normal((N, D_in)), dtype=dtype)
    target = torch.tensor(rng.integers(0, D_out, N))
    w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)
    w1 = _same(torch, w1, rng.standard_normal((D_in, H)) * 0.3)
    w2 = _same(torch, w2, rng.standard_normal((H, D_out)) * 0.3)

    learning_rate = 0.1
    losses = []
    for t in range(10):
        output = F.log_softmax(x.mm(w1).clamp(min=0).mm(w2), dim=1)
        loss = F.nll_loss(output, target)
        losses.append(loss.item())
        loss.backward()

        # Update weights using gradient descent; w1.data and w1.grad.data are tensors.
        w1.data -= learning_rate * w1.grad.data
        w2.data -= learning_rate * w2.grad.data

        # Manually zero the gradients after updating weights
        w1.grad.data.zero_()
        w2.grad.data.zero_()

    test_loss = 0
    correct = 0
    with torch.no_grad():
        output = F.log_softmax(x.mm(w1).clamp(min=0).mm(w2), dim=1)
        test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
        pred = output.data.max(1, keepdim=True)[1]  # get the index of the max log-probability
        correct += pred.eq(target.data.view_as(pred)).cpu().sum()
    return {"losses": np.array(losses), "test loss": test_loss, "correct": int(correct),
            "pred": _np(pred), "pred shape": list(pred.shape), "w1": _np(w1)}


# ======================================================================================
# The tests


def _params(xfail_key: int) -> list:
    params = []
    for name, entry in CASES.items():
        reason = entry[4] or (entry[5] if xfail_key == 5 else None)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(name, marks=marks))
    return params


def test_there_are_at_least_30_cases_and_each_checks_something() -> None:
    assert len(CASES) >= 30
    assert all(entry[1] is not None for entry in CASES.values())


@pytest.mark.parametrize("name", _params(4))
def test_case_runs_with_minigrad(name: str) -> None:
    fn, check, *_ = CASES[name]
    check(fn(minigrad))


@pytest.mark.parametrize("name", _params(5))
def test_case_matches_pytorch(name: str, real_torch: Any) -> None:
    fn, _, rtol, atol, _, _, torch_float64 = CASES[name]
    default = real_torch.get_default_dtype()
    if torch_float64:
        real_torch.set_default_dtype(real_torch.float64)
    try:
        expected = fn(real_torch)
    finally:
        real_torch.set_default_dtype(default)
    compare(fn(minigrad), expected, rtol, atol)

"""PyTorch's tutorials that need convolutions, pooling and normalization, and a
makemore-style MLP with nn.BatchNorm1d, run with `import minigrad as torch`.

The pattern is tests/test_pytorch_tutorials.py's (see tests/pytorch_example_harness.py):
every example is a function `example(torch)` that runs the code as published, with only
the imports changed (`torch.nn`, `torch.nn.functional`, `torch.optim` used as attributes,
`from torch.X import Y` as `Y = _from(torch, "X", "Y")`), and returns its values and
gradients as NumPy arrays. `test_example_runs_with_minigrad` runs it with minigrad and
checks what the tutorial promises (shapes, the loss falls); `test_example_matches_pytorch`
runs it with minigrad and with real PyTorch (skipped when PyTorch is not installed) and
compares: PyTorch's parameters are float32 and minigrad's float64, so the tolerance is a
float32 run's. `test_example_matches_pytorch_in_float64` runs PyTorch again with
`torch.set_default_dtype(torch.float64)` and compares to float64 precision (1e-6).

Random values: fixed seeds. Where the code draws with `torch.randn`/`torch.randint`, the
call stays and its values are then replaced by NumPy ones (`_same`); a model's parameters
are overwritten right after it is built (`_same_parameters`: PyTorch's default bounds,
uniform in +-1/sqrt(fan_in), fan_in = in_channels * kernel size for a convolution).
Downloads are replaced by synthetic data of the same shapes, made in the library's
default float dtype (float32 in PyTorch, float64 in minigrad), as torchvision's ToTensor
and MNIST's pickle give the default dtype in PyTorch: CIFAR10 by `_FAKE_CIFAR` (3x32x32
images normalized to [-1, 1], labels by a fixed linear rule), MNIST by `_fake_digits`
(28x28 images of a stroke whose angle is the class). Loops are shortened (said where);
`shuffle=True` of a training loader with several batches becomes `shuffle=False`, since
the two libraries' shuffles cannot give the same order. Files go to a temporary directory.

Sources:
- pytorch/tutorials beginner_source/blitz/neural_networks_tutorial.py ("Neural Networks":
  LeNet with nn.Conv2d and F.max_pool2d on a 1x32x32 input; the sections on the loss, the
  grad_fn chain, backprop, the hand-written `f.data.sub_` update and torch.optim.SGD).
  tests/test_pytorch_tutorials.py runs its fully connected part without convolutions.
- pytorch/tutorials beginner_source/blitz/cifar10_tutorial.py ("Training a Classifier"):
  the model, loss, SGD with momentum, the training loop, torch.save/load of the state dict,
  the test-set accuracy with torch.max(outputs, 1) and the accuracy per class.
- pytorch/tutorials beginner_source/nn_tutorial.py ("What is torch.nn really?") from
  "Switch to CNN" on: Mnist_CNN (nn.Conv2d, F.avg_pool2d), nn.Sequential with Lambda and
  nn.AvgPool2d, WrappedDataLoader with nn.AdaptiveAvgPool2d, "Using your GPU" (on the
  CPU); its earlier sections run in tests/test_pytorch_tutorials.py.
- A character-level MLP in the style of Andrej Karpathy's makemore part 3 ("Activations
  & Gradients, BatchNorm", nn-zero-to-hero) in torch.nn form: nn.Embedding, nn.Flatten,
  Linear -> BatchNorm1d -> Tanh stacks, the 5/3 tanh gain and the less confident last
  layer, minibatch SGD, then eval mode: the loss on held-out splits and sampling. Written
  here (not copied), on a fixed word list.

Left out, and why:
- torchvision (datasets, transforms, utils.make_grid) and matplotlib's imshow: the data
  is synthetic and already a tensor; nothing is shown.
- makemore's `torch.Generator().manual_seed(...)` and `generator=g`: the draws are NumPy
  ones here, so that both libraries see the same numbers (their generators differ).
"""

# The tutorials are PyTorch's code as published: they shadow a builtin (input), use
# `super(Net, self)` and a Mnist_CNN class name. Kept as written.
# ruff: noqa: A001, A002, N801, UP008

from __future__ import annotations

import contextlib
import io
import math
import os
import random
import tempfile

import numpy as np
import pytest
from pytorch_example_harness import Examples, compare
from pytorch_example_harness import as_numpy as _np
from pytorch_example_harness import from_library as _from
from pytorch_example_harness import same as _same

import minigrad as torch

EXAMPLES = Examples()
example = EXAMPLES.example


# --------------------------------------------------------------------------------------
# Helpers: equal starting values, synthetic data, the checks.


def _same_parameters(torch, model, seed):
    """Overwrite the model's parameters, in order, with NumPy values drawn as PyTorch's
    defaults draw them for nn.Linear and nn.Conv2d: a weight of shape (out, in, *kernel)
    uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] with fan_in = in * prod(kernel), the bias
    after it uniform in the same interval."""
    rng = np.random.default_rng(seed)
    bound = 1.0
    with torch.no_grad():
        for p in model.parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2:
                bound = 1.0 / math.sqrt(math.prod(shape[1:]))
            values = rng.uniform(-bound, bound, shape)
            p.copy_(torch.tensor(np.asarray(values), dtype=p.dtype))


def _default_dtype(torch):
    """The library's default float dtype as a NumPy dtype (float32 for PyTorch, unless
    set_default_dtype changed it; float64 for minigrad)."""
    return _np(torch.zeros(1)).dtype


@contextlib.contextmanager
def _in_temporary_directory():
    """Run code that writes files ("cifar_net.pth") in a fresh directory, removed after."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as where:
        os.chdir(where)
        try:
            yield where
        finally:
            os.chdir(here)


@contextlib.contextmanager
def _capture():
    """Collect what the block prints (and print it again after)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out
    print(out.getvalue(), end="")


def _falls(losses, by=0.0):
    """The check of a training loop: the recorded loss falls, by more than `by` of it."""
    losses = np.asarray(losses, dtype=np.float64)
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < (1 - by) * losses[0], losses


# --------------------------------------------------------------------------------------
# beginner_source/blitz/neural_networks_tutorial.py ("Neural Networks"): LeNet on a
# 1x32x32 input, as written.
def _lenet(torch):
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):

        def __init__(self):
            super(Net, self).__init__()
            # 1 input image channel, 6 output channels, 5x5 square convolution
            # kernel
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            # an affine operation: y = Wx + b
            self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, input):
            # Convolution layer C1: 1 input image channel, 6 output channels,
            # 5x5 square convolution, it uses RELU activation function, and
            # outputs a Tensor with size (N, 6, 28, 28), where N is the size of the batch
            c1 = F.relu(self.conv1(input))
            # Subsampling layer S2: 2x2 grid, purely functional,
            # this layer does not have any parameter, and outputs a (N, 16, 14, 14) Tensor
            s2 = F.max_pool2d(c1, (2, 2))
            # Convolution layer C3: 6 input channels, 16 output channels,
            # 5x5 square convolution, it uses RELU activation function, and
            # outputs a (N, 16, 10, 10) Tensor
            c3 = F.relu(self.conv2(s2))
            # Subsampling layer S4: 2x2 grid, purely functional,
            # this layer does not have any parameter, and outputs a (N, 16, 5, 5) Tensor
            s4 = F.max_pool2d(c3, 2)
            # Flatten operation: purely functional, outputs a (N, 400) Tensor
            s4 = torch.flatten(s4, 1)
            # Fully connected layer F5: (N, 400) Tensor input,
            # and outputs a (N, 120) Tensor, it uses RELU activation function
            f5 = F.relu(self.fc1(s4))
            # Fully connected layer F6: (N, 120) Tensor input,
            # and outputs a (N, 84) Tensor, it uses RELU activation function
            f6 = F.relu(self.fc2(f5))
            # Gaussian layer OUTPUT: (N, 84) Tensor input, and
            # outputs a (N, 10) Tensor
            output = self.fc3(f6)
            return output

    net = Net()
    _same_parameters(torch, net, 100)
    return net


def _check_lenet(r):
    assert r["len(params)"] == 10
    np.testing.assert_array_equal(r["params[0].size()"], [6, 1, 5, 5])
    assert r["out"].shape == (1, 10)
    assert r["conv1.bias.grad before backward is None"] is True
    assert np.all(np.isfinite(r["conv1.bias.grad after backward"]))
    assert np.any(r["conv1.bias.grad after backward"] != 0)
    assert r["loss after step"] < r["loss"]


@example("blitz/neural_networks_tutorial (LeNet)", rtol=1e-4, atol=1e-6, check=_check_lenet)
def ex_blitz_lenet(torch):
    nn = torch.nn
    rng = np.random.default_rng(101)

    net = _lenet(torch)
    print(net)

    params = list(net.parameters())
    print(len(params))
    print(params[0].size())  # conv1's .weight

    input = torch.randn(1, 1, 32, 32)
    input = _same(torch, input, rng.standard_normal((1, 1, 32, 32)))
    out = net(input)
    print(out)

    net.zero_grad()
    g = torch.randn(1, 10)
    out.backward(_same(torch, g, rng.standard_normal((1, 10))))
    results = {
        "out": _np(out),
        "conv1.weight.grad": _np(net.conv1.weight.grad),
        "conv2.bias.grad": _np(net.conv2.bias.grad),
        "fc3.weight.grad": _np(net.fc3.weight.grad),
    }

    output = net(input)
    target = torch.randn(10)  # a dummy target, for example
    target = _same(torch, target, rng.standard_normal(10))
    target = target.view(1, -1)  # make it the same shape as output
    criterion = nn.MSELoss()

    loss = criterion(output, target)
    print(loss)

    print(loss.grad_fn)  # MSELoss
    print(loss.grad_fn.next_functions[0][0])  # Linear
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

    net.zero_grad()     # zeroes the gradient buffers of all parameters

    print('conv1.bias.grad before backward')
    print(net.conv1.bias.grad)
    results["conv1.bias.grad before backward is None"] = net.conv1.bias.grad is None

    loss.backward()

    print('conv1.bias.grad after backward')
    print(net.conv1.bias.grad)
    results["conv1.bias.grad after backward"] = _np(net.conv1.bias.grad)
    results["conv1.weight.grad after backward"] = _np(net.conv1.weight.grad)

    optim = torch.optim  # import torch.optim as optim

    # create your optimizer
    optimizer = optim.SGD(net.parameters(), lr=0.01)

    # in your training loop:
    optimizer.zero_grad()   # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()    # Does the update

    results.update({
        "len(params)": len(params),
        "params[0].size()": np.array(params[0].size()),
        "loss": loss.item(),
        "loss after step": criterion(net(input), target).item(),
    })
    for name, p in net.named_parameters():
        results[f"{name} after step"] = _np(p)
    return results


# The tutorial's hand-written update, `f.data.sub_(f.grad.data * learning_rate)`.
def _check_lenet_update(r):
    assert r["loss after update"] < r["loss"]


@example(
    "blitz/neural_networks_tutorial (LeNet, f.data.sub_ update)",
    rtol=1e-4,
    atol=1e-6,
    check=_check_lenet_update,
)
def ex_blitz_lenet_data_update(torch):
    nn = torch.nn
    rng = np.random.default_rng(102)
    net = _lenet(torch)
    input = _same(torch, torch.randn(1, 1, 32, 32), rng.standard_normal((1, 1, 32, 32)))
    target = _same(torch, torch.randn(10), rng.standard_normal(10)).view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(net(input), target)
    net.zero_grad()
    loss.backward()

    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    return {"loss": loss.item(), "loss after update": criterion(net(input), target).item()}


# --------------------------------------------------------------------------------------
# beginner_source/blitz/cifar10_tutorial.py ("Training a Classifier") on a synthetic
# CIFAR10: 32 training and 16 test images (8 and 4 batches of 4) instead of 50000 and
# 10000; the statistics are printed every 4 mini-batches instead of every 2000.
# trainloader's shuffle=True is shuffle=False (one order in both libraries), and the
# loaders' num_workers=2 is num_workers=0, as the tutorial's note allows (PyTorch starts
# worker processes each time a loader is iterated; minigrad has none to start).
def _draw_cifar10():
    """{train: (images, labels)}: float64 images of 3x32x32 in [-1, 1], every class as
    often (up to one) in a random order."""
    rng = np.random.default_rng(110)
    patterns = rng.random((10, 3, 32, 32))
    drawn = {}
    for train, size in ((True, 32), (False, 16)):
        labels = rng.permutation(np.arange(size) % 10)
        # what ToTensor gives, in [0, 1]: half the class's pattern, half noise
        pixels = 0.5 * patterns[labels] + 0.5 * rng.random((size, 3, 32, 32))
        drawn[train] = ((pixels - 0.5) / 0.5, labels)  # transforms.Normalize
    return drawn


_FAKE_CIFAR = _draw_cifar10()


def _fake_cifar10(torch, train):
    """Stands in for `torchvision.datasets.CIFAR10(root='./data', train=train,
    download=True, transform=transform)`: a Dataset of (3x32x32 image normalized to
    [-1, 1] in the default float dtype, int label). Each class has its own pattern, half of
    each of its images (the other half is noise), so the label can be learned."""
    Dataset = _from(torch, "utils.data", "Dataset")
    images, labels = _FAKE_CIFAR[train]
    images = images.astype(_default_dtype(torch))

    class FakeCIFAR10(Dataset):
        def __len__(self):
            return len(labels)

        def __getitem__(self, idx):
            return torch.tensor(images[idx]), int(labels[idx])

    return FakeCIFAR10()


def _check_cifar10(r):
    _falls([r["training loss before"], r["training loss after"]])
    assert r["running loss per 4 mini-batches"].shape == (4,)
    assert r["Finished Training"] is True
    assert r["reloaded outputs equal"] is True
    assert r["predicted"].shape == (4,) and set(r["predicted"]) <= set(range(10))
    assert r["total"] == 16
    assert 0 <= r["correct"] <= 16
    counts = r["correct per class"]
    assert counts.sum() == r["correct"] and np.all(counts <= r["total per class"])
    assert r["total per class"].sum() == 16


@example("blitz/cifar10_tutorial", rtol=1e-4, atol=1e-6, check=_check_cifar10)
def ex_cifar10(torch):
    results = {}

    batch_size = 4

    trainset = _fake_cifar10(torch, train=True)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size,
                                              shuffle=False, num_workers=0)

    testset = _fake_cifar10(torch, train=False)
    testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size,
                                             shuffle=False, num_workers=0)

    classes = ('plane', 'car', 'bird', 'cat',
               'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

    # get some random training images
    dataiter = iter(trainloader)
    images, labels = next(dataiter)

    # print labels
    print(' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size)))
    results["first labels"] = [classes[labels[j]] for j in range(batch_size)]

    nn = torch.nn  # import torch.nn as nn
    F = torch.nn.functional  # import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1) # flatten all dimensions except batch
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    net = Net()
    _same_parameters(torch, net, 111)

    optim = torch.optim  # import torch.optim as optim

    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

    def training_loss():
        """The mean loss over the training set (not in the tutorial)."""
        with torch.no_grad():
            return np.mean([criterion(net(inputs), labels).item()
                            for inputs, labels in trainloader])

    results["training loss before"] = training_loss()
    running = []
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
            if i % 4 == 3:    # print every 4 mini-batches
                print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.3f}')
                running.append(running_loss / 4)
                running_loss = 0.0

    print('Finished Training')
    results["Finished Training"] = True
    results["training loss after"] = training_loss()
    results["running loss per 4 mini-batches"] = np.array(running)
    results["conv1.weight after training"] = _np(net.conv1.weight)
    results["fc3.bias after training"] = _np(net.fc3.bias)

    with _in_temporary_directory():
        PATH = './cifar_net.pth'
        torch.save(net.state_dict(), PATH)

        dataiter = iter(testloader)
        images, labels = next(dataiter)

        # print images
        print('GroundTruth: ', ' '.join(f'{classes[labels[j]]:5s}' for j in range(4)))

        trained_outputs = net(images)  # (not in the tutorial: to compare after loading)
        net = Net()
        net.load_state_dict(torch.load(PATH))

    outputs = net(images)
    results["reloaded outputs equal"] = bool(np.array_equal(_np(outputs), _np(trained_outputs)))
    results["outputs"] = _np(outputs)

    _, predicted = torch.max(outputs, 1)

    print('Predicted: ', ' '.join(f'{classes[predicted[j]]:5s}'
                                  for j in range(4)))
    results["predicted"] = _np(predicted)

    correct = 0
    total = 0
    # since we're not training, we don't need to calculate the gradients for our outputs
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            # calculate outputs by running images through the network
            outputs = net(images)
            # the class with the highest energy is what we choose as prediction
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

    print(f'Accuracy of the network on the 10000 test images: {100 * correct // total} %')
    results["correct"], results["total"] = correct, total

    # prepare to count predictions for each class
    correct_pred = {classname: 0 for classname in classes}
    total_pred = {classname: 0 for classname in classes}

    # again no gradients needed
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            outputs = net(images)
            _, predictions = torch.max(outputs, 1)
            # collect the correct predictions for each class
            for label, prediction in zip(labels, predictions):
                if label == prediction:
                    correct_pred[classes[label]] += 1
                total_pred[classes[label]] += 1

    # print accuracy for each class
    for classname, correct_count in correct_pred.items():
        accuracy = 100 * float(correct_count) / total_pred[classname]
        print(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')

    results["correct per class"] = np.array(list(correct_pred.values()))
    results["total per class"] = np.array(list(total_pred.values()))

    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

    # Assuming that we are on a CUDA machine, this should print a CUDA device:

    print(device)
    return results


# --------------------------------------------------------------------------------------
# beginner_source/nn_tutorial.py ("What is torch.nn really?") from "Switch to CNN" on.
# MNIST is replaced by `_fake_digits`: 64 training images (one batch of bs=64, so the
# shuffled training loader gives the same batch, in another order, in both libraries) and
# 100 validation images. What the CNN sections use from the sections before (loss_func,
# the datasets, loss_batch, fit, get_data, bs, epochs) is defined here as written there.
def _fake_digits(dtype):
    """MNIST-like arrays: rows of 784 pixels in [0, 1] (28x28 images, mostly 0) and int64
    labels; the image of class k is a stroke through the middle at angle 18k degrees,
    shifted, turned and lengthened a little at random. 64 training and 100 validation rows.
    """
    rng = np.random.default_rng(120)
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float64)

    def draw(size):
        labels = rng.integers(0, 10, size)
        angle = (labels * np.pi / 10 + rng.normal(0, 0.05, size))[:, None, None]
        cy, cx = (13.5 + rng.normal(0, 1.5, (2, size)))[:, :, None, None]
        half = rng.uniform(7, 11, size)[:, None, None]
        along = (yy - cy) * np.sin(angle) + (xx - cx) * np.cos(angle)
        across = (yy - cy) * np.cos(angle) - (xx - cx) * np.sin(angle)
        images = np.clip(1.5 - np.abs(across), 0, 1) * (np.abs(along) <= half)
        return images.reshape(size, 784).astype(dtype), labels.astype(np.int64)

    (x_train, y_train), (x_valid, y_valid) = draw(64), draw(100)
    return x_train, y_train, x_valid, y_valid


def _check_nn_tutorial_cnn(r):
    # Two steps (one batch, two epochs) lower the training loss; the validation loss of so
    # few steps on 64 images is compared with PyTorch's, not checked.
    for model in ("Mnist_CNN", "Sequential", "AdaptiveAvgPool2d", "GPU"):
        assert r[f"{model}: validation losses"].shape == (2,), model
        assert np.all(np.isfinite(r[f"{model}: validation losses"])), model
        _falls([r[f"{model}: training loss before"], r[f"{model}: training loss after"]])
    assert r["AdaptiveAvgPool2d: output shape"] == "(64, 10)"
    assert r["GPU: is available"] is False


@example(
    "nn_tutorial (from Switch to CNN)", rtol=1e-4, atol=1e-6, check=_check_nn_tutorial_cnn
)
def ex_nn_tutorial_cnn(torch):
    results = {}
    TensorDataset = _from(torch, "utils.data", "TensorDataset")
    DataLoader = _from(torch, "utils.data", "DataLoader")
    nn = torch.nn  # from torch import nn
    F = torch.nn.functional  # import torch.nn.functional as F
    optim = torch.optim  # from torch import optim

    # From the sections before "Switch to CNN" (the pickle's images in the default dtype).
    x_train, y_train, x_valid, y_valid = _fake_digits(_default_dtype(torch))
    x_train, y_train, x_valid, y_valid = map(
        torch.tensor, (x_train, y_train, x_valid, y_valid)
    )
    bs = 64  # batch size
    epochs = 2  # how many epochs to train for
    loss_func = F.cross_entropy
    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)

        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()

        return loss.item(), len(xb)

    # import numpy as np (imported at the top of this file)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)

            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)

            print(epoch, val_loss)

    def get_data(train_ds, valid_ds, bs):
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)

    def mean_loss(model, dl):
        """fit's validation loss, of the model as it is, on a loader (not in the tutorial)."""
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in dl])
        return np.sum(np.multiply(losses, nums)) / np.sum(nums)

    def fitted(stage, model, opt, train_dl, valid_dl):
        """fit(epochs, model, loss_func, opt, train_dl, valid_dl), with the losses it prints
        and the training loss before and after it kept under `stage`."""
        results[f"{stage}: training loss before"] = mean_loss(model, train_dl)
        with _capture() as printed:
            fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        results[f"{stage}: validation losses"] = np.array(
            [float(line.split()[1]) for line in printed.getvalue().splitlines()]
        )
        results[f"{stage}: training loss after"] = mean_loss(model, train_dl)

    # Switch to CNN
    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    lr = 0.1

    model = Mnist_CNN()
    _same_parameters(torch, model, 121)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    fitted("Mnist_CNN", model, opt, train_dl, valid_dl)
    results["Mnist_CNN: conv1.weight after fit"] = _np(model.conv1.weight)
    results["Mnist_CNN: conv3.bias after fit"] = _np(model.conv3.bias)

    # nn.Sequential
    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)

    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AvgPool2d(4),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    _same_parameters(torch, model, 122)

    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    fitted("Sequential", model, opt, train_dl, valid_dl)
    results["Sequential: last conv weight after fit"] = _np(model[5].weight)

    # Wrapping DataLoader
    def preprocess(x, y):
        return x.view(-1, 1, 28, 28), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            batches = iter(self.dl)
            for b in batches:
                yield (self.func(*b))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)

    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    _same_parameters(torch, model, 123)

    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    fitted("AdaptiveAvgPool2d", model, opt, train_dl, valid_dl)
    xb, _ = next(iter(train_dl))
    results["AdaptiveAvgPool2d: output shape"] = str(tuple(model(xb).shape))
    results["AdaptiveAvgPool2d: first conv weight after fit"] = _np(model[0].weight)

    # Using your GPU
    print(torch.cuda.is_available())
    results["GPU: is available"] = torch.cuda.is_available()

    dev = torch.device(
        "cuda") if torch.cuda.is_available() else torch.device("cpu")

    def preprocess(x, y):
        return x.view(-1, 1, 28, 28).to(dev), y.to(dev)

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)

    model.to(dev)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    fitted("GPU", model, opt, train_dl, valid_dl)
    results["GPU: first conv weight after fit"] = _np(model[0].weight)
    return results


# The images as MNIST's pickle holds them, float32, whatever the default dtype: PyTorch's
# float32 conv2d takes them; minigrad's float64 Conv2d computes in float64, promoting them
# as its nn.Linear (the tutorial's sections before the CNN), BatchNorm and GroupNorm do.
def _check_cnn_on_float32(r):
    assert r["output shape"] == "(64, 10)"
    assert np.isfinite(r["loss"])


@example(
    "nn_tutorial (Mnist_CNN on float32 images, as MNIST's pickle holds them)",
    rtol=1e-4,
    atol=1e-6,
    check=_check_cnn_on_float32,
)
def ex_nn_tutorial_cnn_float32(torch):
    nn = torch.nn
    F = torch.nn.functional
    x_train, y_train, _, _ = _fake_digits(np.float32)
    x_train, y_train = map(torch.tensor, (x_train, y_train))

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    model = Mnist_CNN()
    _same_parameters(torch, model, 124)
    out = model(x_train)
    return {"output shape": str(tuple(out.shape)), "loss": F.cross_entropy(out, y_train).item()}


# --------------------------------------------------------------------------------------
# A character-level MLP in the style of makemore part 3 (Karpathy, "Building makemore
# Part 3: Activations & Gradients, BatchNorm"), written with torch.nn: three characters of
# context, embedded, flattened, then Linear -> BatchNorm1d -> Tanh twice and a last Linear
# -> BatchNorm1d. 30 steps of batch 32 (the lecture: 200000), then eval mode: the loss on
# the held-out splits (with BatchNorm's running statistics) and a few sampled names.
_NAMES = (
    "emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily "
    "elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace "
    "chloe penelope layla riley zoey nora lily eleanor hannah lillian addison aubrey "
    "ellie stella natalie zoe leah hazel violet aurora savannah audrey brooklyn bella "
    "claire skylar lucy paisley everly anna caroline nova genesis emilia kennedy "
    "liam noah oliver elijah william james benjamin lucas henry alexander mason michael "
    "ethan daniel jacob logan jackson levi sebastian mateo jack owen theodore aiden "
    "samuel joseph john david wyatt matthew luke asher carter julian grayson leo jayden"
).split()


def _check_makemore(r):
    _falls(r["training losses"], by=0.05)
    assert r["num_batches_tracked"] == 30
    assert np.all(r["running_var 1"] > 0) and np.all(r["running_var 2"] > 0)
    assert r["val loss"] < r["val loss at init"]
    assert r["model.training after eval()"] is False
    assert len(r["samples"]) == 5
    assert all(name.endswith(".") or len(name) == 20 for name in r["samples"])


@example("makemore part 3 style MLP with BatchNorm1d", rtol=1e-4, atol=1e-5, check=_check_makemore)
def ex_makemore_batchnorm(torch):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(130)  # stands in for g = torch.Generator().manual_seed(...)
    results = {}

    words = list(_NAMES)
    chars = sorted(set(''.join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)

    block_size = 3  # context length: how many characters do we take to predict the next one?

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + '.':
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]  # crop and append
        X = torch.tensor(X)
        Y = torch.tensor(Y)
        print(X.shape, Y.shape)
        return X, Y

    random.seed(42)
    random.shuffle(words)
    n1 = int(0.8 * len(words))
    n2 = int(0.9 * len(words))
    Xtr, Ytr = build_dataset(words[:n1])      # 80%
    Xdev, Ydev = build_dataset(words[n1:n2])  # 10%
    Xte, Yte = build_dataset(words[n2:])      # 10%

    n_embd = 10  # the dimensionality of the character embedding vectors
    n_hidden = 64  # the number of neurons in the hidden layer of the MLP

    model = nn.Sequential(
        nn.Embedding(vocab_size, n_embd),
        nn.Flatten(),
        nn.Linear(n_embd * block_size, n_hidden, bias=False), nn.BatchNorm1d(n_hidden), nn.Tanh(),
        nn.Linear(n_hidden, n_hidden, bias=False), nn.BatchNorm1d(n_hidden), nn.Tanh(),
        nn.Linear(n_hidden, vocab_size, bias=False), nn.BatchNorm1d(vocab_size),
    )
    with torch.no_grad():
        # the same starting values in both libraries: the embedding standard normal, the
        # Linear weights PyTorch's defaults (BatchNorm's are ones and zeros in both)
        model[0].weight.copy_(_same(torch, model[0].weight, rng.standard_normal(
            tuple(model[0].weight.shape))))
        for layer in model:
            if isinstance(layer, nn.Linear):
                _same_parameters(torch, layer, int(rng.integers(1000)))
        # last layer: make less confident
        model[-1].weight *= 0.1
        # all other layers: apply gain
        for layer in model[:-1]:
            if isinstance(layer, nn.Linear):
                layer.weight *= 5 / 3

    parameters = list(model.parameters())
    print(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    @torch.no_grad()  # this decorator disables gradient tracking
    def split_loss(split):
        x, y = {
            'train': (Xtr, Ytr),
            'val': (Xdev, Ydev),
            'test': (Xte, Yte),
        }[split]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        print(split, loss.item())
        return loss.item()

    model.eval()
    results["val loss at init"] = split_loss('val')
    model.train()

    max_steps = 30
    batch_size = 32
    lossi = []

    for i in range(max_steps):

        # minibatch construct
        ix = torch.randint(0, Xtr.shape[0], (batch_size,))
        ix = _same(torch, ix, rng.integers(0, Xtr.shape[0], batch_size))
        Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

        # forward pass
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)  # loss function

        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()

        # update
        lr = 0.1 if i < 20 else 0.01  # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad

        # track stats
        if i % 10 == 0:  # print every once in a while
            print(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
        lossi.append(loss.log10().item())

    results["training losses"] = 10 ** np.array(lossi)
    results["last step's gradient of the embedding"] = _np(model[0].weight.grad)

    # put layers into eval mode (needed for batchnorm especially)
    model.eval()
    results["model.training after eval()"] = model.training
    results["train loss"] = split_loss('train')
    results["val loss"] = split_loss('val')
    results["test loss"] = split_loss('test')
    for k, layer in ((1, model[3]), (2, model[6]), (3, model[9])):
        results[f"running_mean {k}"] = _np(layer.running_mean)
        results[f"running_var {k}"] = _np(layer.running_var)
    results["num_batches_tracked"] = model[3].num_batches_tracked.item()
    results["bn weight 3"] = _np(model[9].weight)
    results["embedding"] = _np(model[0].weight)

    # sample from the model
    samples, first_probs = [], []
    for _ in range(5):
        out = []
        context = [0] * block_size  # initialize with all ...
        while True:
            # forward pass the neural net
            logits = model(torch.tensor([context]))
            probs = F.softmax(logits, dim=1)
            # sample from the distribution
            ix = torch.multinomial(probs, num_samples=1).item()
            # (the draw made the same in both libraries: the inverse of the
            # cumulative distribution at a NumPy uniform number)
            cdf = np.cumsum(_np(probs)[0], dtype=np.float64)
            ix = min(int(np.searchsorted(cdf / cdf[-1], rng.random())), vocab_size - 1)
            if not out:
                first_probs.append(_np(probs)[0])
            # shift the context window and track the samples
            context = context[1:] + [ix]
            out.append(ix)
            # if we sample the special '.' token, break
            if ix == 0 or len(out) == 20:
                break
        samples.append(''.join(itos[i] for i in out))
        print(samples[-1])
    results["samples"] = samples
    results["first-character probabilities"] = np.array(first_probs)
    return results


# --------------------------------------------------------------------------------------
# The tests.


(
    test_every_example_checks_something,
    test_example_runs_with_minigrad,
    test_example_matches_pytorch,
) = EXAMPLES.tests(torch)


@pytest.mark.parametrize("name", EXAMPLES.params())
def test_example_matches_pytorch_in_float64(name, real_torch):
    """The same comparison with PyTorch computing in float64 (set_default_dtype), as
    minigrad does: equal to float64 precision."""
    if "float32 images" in name:
        pytest.skip("PyTorch's float64 conv2d refuses float32 images (minigrad promotes them)")
    fn = EXAMPLES[name][0]
    default = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    try:
        expected = fn(real_torch)
    finally:
        real_torch.set_default_dtype(default)
    compare(fn(torch), expected, rtol=1e-6, atol=1e-8)

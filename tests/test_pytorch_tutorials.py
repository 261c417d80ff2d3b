"""PyTorch's beginner and intermediate tutorials, run with `import minigrad as torch`.

minigrad promises that PyTorch code runs after changing only the import lines. These
tests hold it to that promise with the tutorials PyTorch publishes (pytorch/tutorials),
in the pattern of tests/test_pytorch_examples.py: every example is a function
`example(torch)` that runs a tutorial's code as published, with only the imports changed
(`from torch.X import Y` becomes `Y = _from(torch, "X", "Y")`; `torch.nn`, `torch.optim`
and `torch.utils.data` are used as attributes), and returns its values and gradients as
NumPy arrays. `test_example_runs_with_minigrad` runs it with minigrad and checks what the
tutorial promises (the loss falls, the tensor-only versions equal the tutorials' own NumPy
warm-ups, the values the text states); `test_example_matches_pytorch` runs it with
minigrad and with real PyTorch (skipped when PyTorch is not installed) and compares.

Random values: fixed seeds. Where a tutorial draws with `torch.randn`/`torch.rand`, the
call stays and its values are then replaced by NumPy ones of the same dtype and
requires_grad (`_same`); the parameters of a model built with nn.Linear or nn.Parameter
are overwritten the same way right after it is built (`_same_parameters`). Python's
`random` (dynamic_net) is seeded. Downloads are replaced by synthetic data of the same
shapes and types: FashionMNIST by `_fake_fashion_mnist` (28x28 float images in [0, 1]
with int labels a fixed linear rule makes learnable), MNIST's pickle by NumPy arrays of
the same dtypes. Long training loops are shortened (fewer iterations, said where); the
code is otherwise as written. Files the tutorials write go to a temporary directory.
minigrad's default dtype is float64 where PyTorch's is float32, so the cross-check of a
training loop compares with a tolerance a float32 run allows.

Sources (pytorch/tutorials):
- beginner_source/examples_tensor/polynomial_tensor.py, two_layer_net_tensor.py (their
  NumPy warm-ups polynomial_numpy.py and two_layer_net_numpy.py are the references).
- beginner_source/examples_autograd/polynomial_autograd.py, two_layer_net_autograd.py
  (its polynomial_custom_function.py and two_layer_net_custom_function.py run in
  tests/test_pytorch_examples.py).
- beginner_source/examples_nn/polynomial_nn.py, polynomial_optim.py,
  polynomial_module.py, dynamic_net.py, and the two-layer-net versions of the same
  examples (two_layer_net_nn.py, two_layer_net_optim.py, two_layer_net_module.py, as
  "Learning PyTorch with Examples" printed them for PyTorch 1.x).
- beginner_source/blitz/tensor_tutorial.py, autograd_tutorial.py,
  neural_networks_tutorial.py (the parts without convolutions, see below).
- beginner_source/basics/quickstart_tutorial.py, tensorqs_tutorial.py,
  data_tutorial.py, transforms_tutorial.py, buildmodel_tutorial.py,
  autogradqs_tutorial.py, optimization_tutorial.py, saveloadrun_tutorial.py.
- beginner_source/nn_tutorial.py ("What is torch.nn really?"), up to "Switch to CNN".
- intermediate_source/forward_ad_usage.py (without torch.func / functorch).
- intermediate_source/autograd_saved_tensors_hooks_tutorial.py.

Left out, and why:
- The NumPy-only warm-ups (polynomial_numpy.py, two_layer_net_numpy.py) run no torch
  code; they serve as the references of the tensor versions instead. tf_two_layer_net.py
  is TensorFlow.
- blitz/cifar10_tutorial.py (convolutions, torchvision data): it runs on synthetic data
  in tests/test_pytorch_tutorials_conv.py. cifar10_tensorboard_tutorial.py,
  tensorboard_tutorial.py: TensorBoard. blitz/data_parallel_tutorial.py: several GPUs.
- blitz/neural_networks_tutorial.py's LeNet convolutions (nn.Conv2d, F.max_pool2d): the
  example keeps its fully connected part (fc1, fc2, fc3 on the flattened 16*5*5 input)
  and runs the sections that follow (loss, grad_fn chain, backprop, weight update, optim)
  on it, with `net.conv1.bias` read as `net.fc1.bias`. The whole LeNet runs in
  tests/test_pytorch_tutorials_conv.py.
- blitz/autograd_tutorial.py's resnet18 sections (torchvision models and weights).
- basics/data_tutorial.py: the matplotlib figures, and CustomImageDataset (pandas and
  torchvision.io.read_image on files that are not there); the FashionMNIST loading and
  the DataLoader sections run on synthetic data.
- basics/transforms_tutorial.py: torchvision's ToTensor and the Lambda wrapper; the
  one-hot lambda it wraps is run directly.
- basics/saveloadrun_tutorial.py: torchvision's vgg16 and its downloaded weights; the
  save/load code runs on the quickstart's NeuralNetwork instead.
- nn_tutorial.py from "Switch to CNN" on (nn.Conv2d, F.avg_pool2d, nn.AdaptiveAvgPool2d):
  it runs in tests/test_pytorch_tutorials_conv.py. The pyplot figure, the download
  (requests) and IPython's set_trace import (its one use is commented out in the
  tutorial).
- forward_ad_usage.py: "Using the functional Module API" (torch.func.functional_call)
  and "Functional API" (functorch / torch.func.jvp).
- autograd_saved_tensors_hooks_tutorial.py: only the torchviz figures.
"""

# The tutorials are PyTorch's code as published: they shadow builtins (input), assign
# lambdas, use bare excepts, unused loop variables and names, `assert(...)`,
# `super(Net, self)`, `class C():`, a Mnist_Logistic class name, unused expressions and
# (in the saved-tensors tutorial's last pack_hook) an undefined name. Kept as written.
# ruff: noqa: A001, A002, B007, B018, E402, E711, E712, E722, E731, F821, F841, N801, UP008, UP028, UP039

import contextlib
import importlib
import io
import math
import os
import random
import re
import tempfile

import numpy as np
from pytorch_example_harness import Examples
from pytorch_example_harness import as_numpy as _np
from pytorch_example_harness import from_library as _from
from pytorch_example_harness import same as _same

import minigrad as torch

EXAMPLES = Examples()
example = EXAMPLES.example


def _same_parameters(torch, model, seed):
    """Overwrite the model's parameters, in order, with NumPy values drawn as PyTorch's
    defaults draw them: a weight of fan-in n and the bias after it uniform in
    [-1/sqrt(n), 1/sqrt(n)], a 0-d parameter standard normal."""
    rng = np.random.default_rng(seed)
    bound = 1.0
    with torch.no_grad():
        for p in model.parameters():
            shape = tuple(p.shape)
            if len(shape) == 0:
                values = rng.standard_normal()
            else:
                if len(shape) >= 2:
                    bound = 1.0 / math.sqrt(shape[1])
                values = rng.uniform(-bound, bound, shape)
            p.copy_(torch.tensor(np.asarray(values), dtype=p.dtype))

@contextlib.contextmanager
def _in_temporary_directory():
    """Run code that writes files ("model.pth") in a fresh directory, removed after."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as where:
        os.chdir(where)
        try:
            yield where
        finally:
            os.chdir(here)


def _fake_fashion_mnist(torch, train):
    """Stands in for `datasets.FashionMNIST(root="data", train=train, download=True,
    transform=ToTensor())`: a Dataset of (1x28x28 float32 image in [0, 1], int label).
    128 training and 64 test samples (two batches and one). Each class has its own
    pattern of bright pixels (shared by training and test images), so the label can be
    learned."""
    Dataset = _from(torch, "utils.data", "Dataset")
    size = 128 if train else 64
    rng = np.random.default_rng(11 if train else 12)
    patterns = np.random.default_rng(10).random((10, 1, 28, 28)) < 0.3
    labels = rng.integers(0, 10, size)
    images = (0.3 * rng.random((size, 1, 28, 28)) + 0.7 * patterns[labels]).astype(np.float32)

    class FakeFashionMNIST(Dataset):
        def __len__(self):
            return size

        def __getitem__(self, idx):
            return torch.tensor(images[idx]), int(labels[idx])

    return FakeFashionMNIST()


def _falls(losses, by=0.1):
    """The check of a training loop: the recorded loss falls, by at least `by` of it."""
    losses = np.asarray(losses, dtype=np.float64)
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < (1 - by) * losses[0], losses


# --------------------------------------------------------------------------------------
# The NumPy warm-ups of "Learning PyTorch with Examples", as published
# (beginner_source/examples_tensor/polynomial_numpy.py and two_layer_net_numpy.py), with
# given starting values and number of iterations: the references of the tensor versions.


def _polynomial_numpy(a, b, c, d, iterations):
    x = np.linspace(-math.pi, math.pi, 2000)
    y = np.sin(x)
    learning_rate = 1e-6
    for t in range(iterations):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = np.square(y_pred - y).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    return np.array([a, b, c, d])


def _two_layer_net_numpy(x, y, w1, w2, iterations):
    w1, w2 = w1.copy(), w2.copy()
    learning_rate = 1e-6
    losses = []
    for t in range(iterations):
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        loss = np.square(y_pred - y).sum()
        losses.append(loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h_relu = grad_y_pred.dot(w2.T)
        grad_h = grad_h_relu.copy()
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
    return w1, w2, np.array(losses)


# The random values of the examples, drawn once.
_POLY_START = np.random.default_rng(0).standard_normal(4)
_NET = np.random.default_rng(1)
N, D_in, H, D_out = 64, 1000, 100, 10
_NET_X = _NET.standard_normal((N, D_in))
_NET_Y = _NET.standard_normal((N, D_out))
_NET_W1 = _NET.standard_normal((D_in, H))
_NET_W2 = _NET.standard_normal((H, D_out))
# Fewer iterations than the tutorials' 2000 (polynomials) and 500 (two-layer nets): a
# 64x1000 @ 1000x100 product takes milliseconds.
POLY_ITERATIONS = 100
NET_ITERATIONS = 10


def _check_polynomial(results):
    want = _polynomial_numpy(*_POLY_START, POLY_ITERATIONS)
    np.testing.assert_allclose(results["a, b, c, d"], want, rtol=1e-4, atol=1e-5)


def _check_two_layer_net(results):
    w1, w2, losses = _two_layer_net_numpy(
        _NET_X.astype(np.float32), _NET_Y.astype(np.float32), _NET_W1, _NET_W2, NET_ITERATIONS
    )
    np.testing.assert_allclose(results["losses"], losses, rtol=1e-4)
    np.testing.assert_allclose(results["w1"], w1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(results["w2"], w2, rtol=1e-4, atol=1e-4)
    _falls(results["losses"])


# --------------------------------------------------------------------------------------
# beginner_source/examples_tensor/polynomial_tensor.py ("PyTorch: Tensors"): gradients
# by hand. 100 iterations instead of 2000.
@example("examples_tensor/polynomial_tensor", rtol=1e-4, atol=1e-5, check=_check_polynomial)
def ex_polynomial_tensor(torch):
    dtype = torch.float
    device = torch.device("cpu")
    # device = torch.device("cuda:0") # Uncomment this to run on GPU

    # Create random input and output data
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # Randomly initialize weights
    a = torch.randn((), device=device, dtype=dtype)
    b = torch.randn((), device=device, dtype=dtype)
    c = torch.randn((), device=device, dtype=dtype)
    d = torch.randn((), device=device, dtype=dtype)
    a, b, c, d = (_same(torch, v, s) for v, s in zip((a, b, c, d), _POLY_START))

    learning_rate = 1e-6
    for t in range(POLY_ITERATIONS):
        # Forward pass: compute predicted y
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss
        loss = (y_pred - y).pow(2).sum().item()
        if t % 100 == 99:
            print(t, loss)

        # Backprop to compute gradients of a, b, c, d with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()

        # Update weights using gradient descent
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d

    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
    return {"a, b, c, d": np.array([a.item(), b.item(), c.item(), d.item()]), "loss": loss}


# --------------------------------------------------------------------------------------
# beginner_source/examples_tensor/two_layer_net_tensor.py: a ReLU network, gradients by
# hand. 10 iterations instead of 500.
@example("examples_tensor/two_layer_net_tensor", rtol=1e-4, atol=1e-4, check=_check_two_layer_net)
def ex_two_layer_net_tensor(torch):
    dtype = torch.float
    device = torch.device("cpu")
    # dtype = torch.device("cuda:0") # Uncomment this to run on GPU

    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    # Create random input and output data
    x = torch.randn(N, D_in, device=device, dtype=dtype)
    y = torch.randn(N, D_out, device=device, dtype=dtype)
    x, y = _same(torch, x, _NET_X), _same(torch, y, _NET_Y)

    # Randomly initialize weights
    w1 = torch.randn(D_in, H, device=device, dtype=dtype)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype)
    w1, w2 = _same(torch, w1, _NET_W1), _same(torch, w2, _NET_W2)

    losses = []
    learning_rate = 1e-6
    for t in range(NET_ITERATIONS):
        # Forward pass: compute predicted y
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)

        # Compute and print loss
        loss = (y_pred - y).pow(2).sum().item()
        print(t, loss)
        losses.append(loss)

        # Backprop to compute gradients of w1 and w2 with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)

        # Update weights using gradient descent
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
    return {"losses": np.array(losses), "w1": _np(w1), "w2": _np(w2)}


# --------------------------------------------------------------------------------------
# beginner_source/examples_autograd/polynomial_autograd.py ("PyTorch: Tensors and
# autograd"). 100 iterations instead of 2000.
@example(
    "examples_autograd/polynomial_autograd",
    rtol=1e-4,
    atol=1e-5,
    check=_check_polynomial,
)
def ex_polynomial_autograd(torch):
    dtype = torch.float
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_default_device(device)

    # Create Tensors to hold input and outputs.
    # By default, requires_grad=False, which indicates that we do not need to
    # compute gradients with respect to these Tensors during the backward pass.
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)

    # Create random Tensors for weights. For a third order polynomial, we need
    # 4 weights: y = a + b x + c x^2 + d x^3
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    a = torch.randn((), dtype=dtype, requires_grad=True)
    b = torch.randn((), dtype=dtype, requires_grad=True)
    c = torch.randn((), dtype=dtype, requires_grad=True)
    d = torch.randn((), dtype=dtype, requires_grad=True)
    a, b, c, d = (_same(torch, v, s) for v, s in zip((a, b, c, d), _POLY_START))

    learning_rate = 1e-6
    for t in range(POLY_ITERATIONS):
        # Forward pass: compute predicted y using operations on Tensors.
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss using operations on Tensors.
        # Now loss is a Tensor of shape (1,)
        # loss.item() gets the scalar value held in the loss.
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())

        # Use autograd to compute the backward pass. This call will compute the
        # gradient of loss with respect to all Tensors with requires_grad=True.
        # After this call a.grad, b.grad. c.grad and d.grad will be Tensors holding
        # the gradient of the loss with respect to a, b, c, d respectively.
        loss.backward()

        # Manually update weights using gradient descent. Wrap in torch.no_grad()
        # because weights have requires_grad=True, but we don't need to track this
        # in autograd.
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
    return {"a, b, c, d": np.array([a.item(), b.item(), c.item(), d.item()])}


# --------------------------------------------------------------------------------------
# beginner_source/examples_autograd/two_layer_net_autograd.py: the same network, with
# autograd computing the gradients. 10 iterations instead of 500.
@example(
    "examples_autograd/two_layer_net_autograd", rtol=1e-4, atol=1e-4, check=_check_two_layer_net
)
def ex_two_layer_net_autograd(torch):
    dtype = torch.float
    device = torch.device("cpu")
    # device = torch.device("cuda:0") # Uncomment this to run on GPU

    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    # Create random Tensors to hold input and outputs.
    # Setting requires_grad=False indicates that we do not need to compute gradients
    # with respect to these Tensors during the backward pass.
    x = torch.randn(N, D_in, device=device, dtype=dtype)
    y = torch.randn(N, D_out, device=device, dtype=dtype)
    x, y = _same(torch, x, _NET_X), _same(torch, y, _NET_Y)

    # Create random Tensors for weights.
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)
    w1, w2 = _same(torch, w1, _NET_W1), _same(torch, w2, _NET_W2)

    losses = []
    learning_rate = 1e-6
    for t in range(NET_ITERATIONS):
        # Forward pass: compute predicted y using operations on Tensors; these
        # are exactly the same operations we used to compute the forward pass using
        # Tensors, but we do not need to keep references to intermediate values since
        # we are not implementing the backward pass by hand.
        y_pred = x.mm(w1).clamp(min=0).mm(w2)

        # Compute and print loss using operations on Tensors.
        # Now loss is a Tensor of shape (1,)
        # loss.item() gets the scalar value held in the loss.
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Use autograd to compute the backward pass. This call will compute the
        # gradient of loss with respect to all Tensors with requires_grad=True.
        # After this call w1.grad and w2.grad will be Tensors holding the gradient
        # of the loss with respect to w1 and w2 respectively.
        loss.backward()

        # Manually update weights using gradient descent. Wrap in torch.no_grad()
        # because weights have requires_grad=True, but we don't need to track this
        # in autograd.
        # An alternative way is to operate on weight.data and weight.grad.data.
        # Recall that tensor.data gives a tensor that shares the storage with
        # tensor, but doesn't track history.
        # You can also use torch.optim.SGD to achieve this.
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad

            # Manually zero the gradients after updating weights
            w1.grad.zero_()
            w2.grad.zero_()
    return {"losses": np.array(losses), "w1": _np(w1), "w2": _np(w2)}


# --------------------------------------------------------------------------------------
# beginner_source/examples_autograd/polynomial_custom_function.py and
# two_layer_net_custom_function.py (LegendrePolynomial3, MyReLU, with their training loops)
# run in tests/test_pytorch_examples.py, with PyTorch's other custom-Function examples.


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/two_layer_net_nn.py ("PyTorch: nn"): nn.Sequential,
# MSELoss(reduction='sum') and a hand-written SGD step. 10 iterations instead of 500.
def _check_losses_fall(results):
    _falls(results["losses"])


@example("examples_nn/two_layer_net_nn", rtol=1e-3, atol=1e-5, check=_check_losses_fall)
def ex_two_layer_net_nn(torch):
    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    # Create random Tensors to hold inputs and outputs
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    x, y = _same(torch, x, _NET_X), _same(torch, y, _NET_Y)

    # Use the nn package to define our model as a sequence of layers. nn.Sequential
    # is a Module which contains other Modules, and applies them in sequence to
    # produce its output. Each Linear Module computes output from input using a
    # linear function, and holds internal Tensors for its weight and bias.
    model = torch.nn.Sequential(
        torch.nn.Linear(D_in, H),
        torch.nn.ReLU(),
        torch.nn.Linear(H, D_out),
    )
    _same_parameters(torch, model, 2)

    # The nn package also contains definitions of popular loss functions; in this
    # case we will use Mean Squared Error (MSE) as our loss function.
    loss_fn = torch.nn.MSELoss(reduction='sum')

    losses = []
    learning_rate = 1e-4
    for t in range(NET_ITERATIONS):
        # Forward pass: compute predicted y by passing x to the model. Module objects
        # override the __call__ operator so you can call them like functions. When
        # doing so you pass a Tensor of input data to the Module and it produces
        # a Tensor of output data.
        y_pred = model(x)

        # Compute and print loss. We pass Tensors containing the predicted and true
        # values of y, and the loss function returns a Tensor containing the
        # loss.
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Zero the gradients before running the backward pass.
        model.zero_grad()

        # Backward pass: compute gradient of the loss with respect to all the learnable
        # parameters of the model. Internally, the parameters of each Module are stored
        # in Tensors with requires_grad=True, so this call will compute gradients for
        # all learnable parameters in the model.
        loss.backward()

        # Update the weights using gradient descent. Each parameter is a Tensor, so
        # we can access its gradients like we did before.
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    return {"losses": np.array(losses), "last layer weight": _np(model[2].weight)}


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/two_layer_net_optim.py ("PyTorch: optim"): the same model
# trained with torch.optim.Adam. 10 iterations instead of 500.
@example("examples_nn/two_layer_net_optim", rtol=1e-3, atol=1e-5, check=_check_losses_fall)
def ex_two_layer_net_optim(torch):
    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    # Create random Tensors to hold inputs and outputs
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    x, y = _same(torch, x, _NET_X), _same(torch, y, _NET_Y)

    # Use the nn package to define our model and loss function.
    model = torch.nn.Sequential(
        torch.nn.Linear(D_in, H),
        torch.nn.ReLU(),
        torch.nn.Linear(H, D_out),
    )
    _same_parameters(torch, model, 3)
    loss_fn = torch.nn.MSELoss(reduction='sum')

    # Use the optim package to define an Optimizer that will update the weights of
    # the model for us. Here we will use Adam; the optim package contains many other
    # optimization algoriths. The first argument to the Adam constructor tells the
    # optimizer which Tensors it should update.
    losses = []
    learning_rate = 1e-4
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    for t in range(NET_ITERATIONS):
        # Forward pass: compute predicted y by passing x to the model.
        y_pred = model(x)

        # Compute and print loss.
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Before the backward pass, use the optimizer object to zero all of the
        # gradients for the variables it will update (which are the learnable
        # weights of the model). This is because by default, gradients are
        # accumulated in buffers( i.e, not overwritten) whenever .backward()
        # is called. Checkout docs of torch.autograd.backward for more details.
        optimizer.zero_grad()

        # Backward pass: compute gradient of the loss with respect to model
        # parameters
        loss.backward()

        # Calling the step function on an Optimizer makes an update to its
        # parameters
        optimizer.step()
    return {"losses": np.array(losses), "last layer weight": _np(model[2].weight)}


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/two_layer_net_module.py ("PyTorch: Custom nn Modules"):
# TwoLayerNet, an nn.Module subclass, trained with SGD. 10 iterations instead of 500.
@example("examples_nn/two_layer_net_module", rtol=1e-3, atol=1e-5, check=_check_losses_fall)
def ex_two_layer_net_module(torch):
    class TwoLayerNet(torch.nn.Module):
        def __init__(self, D_in, H, D_out):
            """
            In the constructor we instantiate two nn.Linear modules and assign them as
            member variables.
            """
            super(TwoLayerNet, self).__init__()
            self.linear1 = torch.nn.Linear(D_in, H)
            self.linear2 = torch.nn.Linear(H, D_out)

        def forward(self, x):
            """
            In the forward function we accept a Tensor of input data and we must return
            a Tensor of output data. We can use Modules defined in the constructor as
            well as arbitrary operators on Tensors.
            """
            h_relu = self.linear1(x).clamp(min=0)
            y_pred = self.linear2(h_relu)
            return y_pred

    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    # Create random Tensors to hold inputs and outputs
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    x, y = _same(torch, x, _NET_X), _same(torch, y, _NET_Y)

    # Construct our model by instantiating the class defined above
    model = TwoLayerNet(D_in, H, D_out)
    _same_parameters(torch, model, 4)

    # Construct our loss function and an Optimizer. The call to model.parameters()
    # in the SGD constructor will contain the learnable parameters of the two
    # nn.Linear modules which are members of the model.
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    losses = []
    for t in range(NET_ITERATIONS):
        # Forward pass: Compute predicted y by passing x to the model
        y_pred = model(x)

        # Compute and print loss
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Zero gradients, perform a backward pass, and update the weights.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"losses": np.array(losses), "linear2.weight": _np(model.linear2.weight)}


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/polynomial_nn.py ("PyTorch: nn"): the polynomial as
# nn.Linear(3, 1) + nn.Flatten(0, 1) on x.unsqueeze(-1).pow(p). 100 iterations instead
# of 2000.
@example("examples_nn/polynomial_nn", rtol=1e-4, atol=1e-6, check=_check_losses_fall)
def ex_polynomial_nn(torch):
    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # For this example, the output y is a linear function of (x, x^2, x^3), so
    # we can consider it as a linear layer neural network. Let's prepare the
    # tensor (x, x^2, x^3).
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    # In the above code, x.unsqueeze(-1) has shape (2000, 1), and p has shape
    # (3,), for this case, broadcasting semantics will apply to obtain a tensor
    # of shape (2000, 3)

    # Use the nn package to define our model as a sequence of layers. nn.Sequential
    # is a Module which contains other Modules, and applies them in sequence to
    # produce its output. The Linear Module computes output from input using a
    # linear function, and holds internal Tensors for its weight and bias.
    # The Flatten layer flatens the output of the linear layer to a 1D tensor,
    # to match the shape of `y`.
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    _same_parameters(torch, model, 5)

    # The nn package also contains definitions of popular loss functions; in this
    # case we will use Mean Squared Error (MSE) as our loss function.
    loss_fn = torch.nn.MSELoss(reduction='sum')

    losses = []
    learning_rate = 1e-6
    for t in range(POLY_ITERATIONS):

        # Forward pass: compute predicted y by passing x to the model. Module objects
        # override the __call__ operator so you can call them like functions. When
        # doing so you pass a Tensor of input data to the Module and it produces
        # a Tensor of output data.
        y_pred = model(xx)

        # Compute and print loss. We pass Tensors containing the predicted and true
        # values of y, and the loss function returns a Tensor containing the
        # loss.
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Zero the gradients before running the backward pass.
        model.zero_grad()

        # Backward pass: compute gradient of the loss with respect to all the learnable
        # parameters of the model. Internally, the parameters of each Module are stored
        # in Tensors with requires_grad=True, so this call will compute gradients for
        # all learnable parameters in the model.
        loss.backward()

        # Update the weights using gradient descent. Each parameter is a Tensor, so
        # we can access its gradients like we did before.
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad

    # You can access the first layer of `model` like accessing the first item of a list
    linear_layer = model[0]

    # For linear layer, its parameters are stored as `weight` and `bias`.
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')  # noqa: E501
    return {
        "xx.shape": np.array(xx.shape),
        "losses": np.array(losses),
        "weight": _np(linear_layer.weight),
        "bias": _np(linear_layer.bias),
    }


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/polynomial_optim.py ("PyTorch: optim"): the same model
# trained with torch.optim.RMSprop. 100 iterations instead of 2000.
@example("examples_nn/polynomial_optim", rtol=1e-4, atol=1e-6, check=_check_losses_fall)
def ex_polynomial_optim(torch):
    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # Prepare the input tensor (x, x^2, x^3).
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    # Use the nn package to define our model and loss function.
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    _same_parameters(torch, model, 6)
    loss_fn = torch.nn.MSELoss(reduction='sum')

    # Use the optim package to define an Optimizer that will update the weights of
    # the model for us. Here we will use RMSprop; the optim package contains many other
    # optimization algorithms. The first argument to the RMSprop constructor tells the
    # optimizer which Tensors it should update.
    losses = []
    learning_rate = 1e-3
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    for t in range(POLY_ITERATIONS):
        # Forward pass: compute predicted y by passing x to the model.
        y_pred = model(xx)

        # Compute and print loss.
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        losses.append(loss.item())

        # Before the backward pass, use the optimizer object to zero all of the
        # gradients for the variables it will update (which are the learnable
        # weights of the model). This is because by default, gradients are
        # accumulated in buffers( i.e, not overwritten) whenever .backward()
        # is called. Checkout docs of torch.autograd.backward for more details.
        optimizer.zero_grad()

        # Backward pass: compute gradient of the loss with respect to model
        # parameters
        loss.backward()

        # Calling the step function on an Optimizer makes an update to its
        # parameters
        optimizer.step()

    linear_layer = model[0]
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')  # noqa: E501
    return {
        "losses": np.array(losses),
        "weight": _np(linear_layer.weight),
        "bias": _np(linear_layer.bias),
    }


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/polynomial_module.py ("PyTorch: Custom nn Modules"):
# Polynomial3 with four nn.Parameters, trained with SGD. 100 iterations instead of 2000.
@example("examples_nn/polynomial_module", rtol=1e-4, atol=1e-6, check=_check_polynomial)
def ex_polynomial_module(torch):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            """
            In the constructor we instantiate four parameters and assign them as
            member parameters.
            """
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))

        def forward(self, x):
            """
            In the forward function we accept a Tensor of input data and we must return
            a Tensor of output data. We can use Modules defined in the constructor as
            well as arbitrary operators on Tensors.
            """
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            """
            Just like any class in Python, you can also define custom method on PyTorch modules
            """
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'  # noqa: E501

    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # Construct our model by instantiating the class defined above
    model = Polynomial3()
    _same_parameters(torch, model, 0)  # seed 0: the values of _POLY_START

    # Construct our loss function and an Optimizer. The call to model.parameters()
    # in the SGD constructor will contain the learnable parameters (defined
    # with torch.nn.Parameter) which are members of the model.
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for t in range(POLY_ITERATIONS):
        # Forward pass: Compute predicted y by passing x to the model
        y_pred = model(x)

        # Compute and print loss
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())

        # Zero gradients, perform a backward pass, and update the weights.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print(f'Result: {model.string()}')
    return {"a, b, c, d": np.array([p.item() for p in model.parameters()])}


# --------------------------------------------------------------------------------------
# beginner_source/examples_nn/dynamic_net.py ("PyTorch: Control Flow + Weight Sharing"):
# a polynomial of random order 3 to 5 that reuses the parameter e. Python's `random` is
# seeded, so both runs draw the same orders. 100 iterations instead of 30000.
@example("examples_nn/dynamic_net", rtol=1e-4, atol=1e-6, check=_check_losses_fall)
def ex_dynamic_net(torch):
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            """
            In the constructor we instantiate five parameters and assign them as members.
            """
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
            self.e = torch.nn.Parameter(torch.randn(()))

        def forward(self, x):
            """
            For the forward pass of the model, we randomly choose either 4, 5
            and reuse the e parameter to compute the contribution of these orders.

            Since each forward pass builds a dynamic computation graph, we can use normal
            Python control-flow operators like loops or conditional statements when
            defining the forward pass of the model.

            Here we also see that it is perfectly safe to reuse the same parameter many
            times when defining a computational graph.
            """
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

        def string(self):
            """
            Just like any class in Python, you can also define custom method on PyTorch modules
            """
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'  # noqa: E501

    random.seed(0)

    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # Construct our model by instantiating the class defined above
    model = DynamicNet()
    _same_parameters(torch, model, 7)

    # Construct our loss function and an Optimizer. Training this strange model with
    # vanilla stochastic gradient descent is tough, so we use momentum
    losses = []
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(POLY_ITERATIONS):
        # Forward pass: Compute predicted y by passing x to the model
        y_pred = model(x)

        # Compute and print loss
        loss = criterion(y_pred, y)
        if t % 2000 == 1999:
            print(t, loss.item())
        losses.append(loss.item())

        # Zero gradients, perform a backward pass, and update the weights.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print(f'Result: {model.string()}')
    return {"losses": np.array(losses), "a..e": np.array([p.item() for p in model.parameters()])}


# --------------------------------------------------------------------------------------
# Helpers for the blitz and basics tutorials.


def _dtype(d):
    """A dtype's name, for minigrad's (NumPy's) and PyTorch's alike: "float32", "int64"."""
    text = str(d)
    return text[len("torch."):] if text.startswith("torch.") else np.dtype(d).name


def _test_results(text):
    """The (accuracy %, average loss) pairs the basics tutorials' test loops print."""
    found = re.findall(r"Accuracy: ([0-9.]+)%, Avg loss: ([0-9.]+)", text)
    return np.array([[float(a), float(b)] for a, b in found])


# --------------------------------------------------------------------------------------
# beginner_source/blitz/tensor_tutorial.py ("Tensors", 60 Minute Blitz): initializing,
# attributes, operations, the NumPy bridge.
def _check_blitz_tensor(r):
    np.testing.assert_array_equal(r["x_data"], [[1, 2], [3, 4]])
    assert r["x_data dtype"] == "int64" and r["x_ones dtype"] == "int64"
    assert r["x_rand dtype"] == "float32"
    np.testing.assert_array_equal(r["tensor @ tensor.T"], np.full((4, 4), 3.0))
    np.testing.assert_array_equal(r["after add_(5)"][0], [6, 5, 6, 6])
    np.testing.assert_array_equal(r["n after t.add_(1)"], np.full(5, 2.0))
    np.testing.assert_array_equal(r["t after np.add"], np.full(5, 2.0))


@example("blitz/tensor_tutorial", check=_check_blitz_tensor)
def ex_blitz_tensor(torch):
    data = [[1, 2],[3, 4]]  # noqa: E231
    x_data = torch.tensor(data)

    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)

    x_ones = torch.ones_like(x_data) # retains the properties of x_data  # noqa: E261
    print(f"Ones Tensor: \n {x_ones} \n")

    x_rand = torch.rand_like(x_data, dtype=torch.float) # overrides the datatype of x_data  # noqa: E261,E501
    print(f"Random Tensor: \n {x_rand} \n")

    shape = (2,3,)  # noqa: E231
    rand_tensor = torch.rand(shape)
    ones_tensor = torch.ones(shape)
    zeros_tensor = torch.zeros(shape)

    print(f"Random Tensor: \n {rand_tensor} \n")
    print(f"Ones Tensor: \n {ones_tensor} \n")
    print(f"Zeros Tensor: \n {zeros_tensor}")

    tensor = torch.rand(3,4)  # noqa: E231

    print(f"Shape of tensor: {tensor.shape}")
    print(f"Datatype of tensor: {tensor.dtype}")
    print(f"Device tensor is stored on: {tensor.device}")

    # We move our tensor to the GPU if available
    if torch.cuda.is_available():
      tensor = tensor.to('cuda')  # noqa: E111
      print(f"Device tensor is stored on: {tensor.device}")  # noqa: E111

    tensor = torch.ones(4, 4)
    tensor[:,1] = 0  # noqa: E231
    print(tensor)

    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    print(t1)

    # This computes the element-wise product
    print(f"tensor.mul(tensor) \n {tensor.mul(tensor)} \n")
    # Alternative syntax:
    print(f"tensor * tensor \n {tensor * tensor}")
    results = {
        "tensor * tensor": _np(tensor * tensor),
        "tensor.mul(tensor)": _np(tensor.mul(tensor)),
    }

    print(f"tensor.matmul(tensor.T) \n {tensor.matmul(tensor.T)} \n")
    # Alternative syntax:
    print(f"tensor @ tensor.T \n {tensor @ tensor.T}")
    results["tensor @ tensor.T"] = _np(tensor @ tensor.T)
    results["tensor.matmul(tensor.T)"] = _np(tensor.matmul(tensor.T))

    print(tensor, "\n")
    tensor.add_(5)
    print(tensor)

    t = torch.ones(5)
    print(f"t: {t}")
    n = t.numpy()
    print(f"n: {n}")

    t.add_(1)
    print(f"t: {t}")
    print(f"n: {n}")
    results["n after t.add_(1)"] = n.copy()

    n = np.ones(5)
    t = torch.from_numpy(n)

    np.add(n, 1, out=n)
    print(f"t: {t}")
    print(f"n: {n}")
    results.update({
        "t after np.add": _np(t),
        "x_data": _np(x_data),
        "x_np": _np(x_np),
        "x_data dtype": _dtype(x_data.dtype),
        "x_ones dtype": _dtype(x_ones.dtype),
        "x_rand dtype": _dtype(x_rand.dtype),
        "x_ones": _np(x_ones),
        "shapes": np.array([rand_tensor.shape, ones_tensor.shape, zeros_tensor.shape]),
        "t1": _np(t1),
        "after add_(5)": _np(tensor),
    })
    return results


# --------------------------------------------------------------------------------------
# beginner_source/blitz/autograd_tutorial.py ("A Gentle Introduction to torch.autograd"):
# "Differentiation in Autograd" and "Exclusion from the DAG" (the resnet18 sections need
# torchvision).
def _check_blitz_autograd(r):
    np.testing.assert_array_equal(r["a.grad"], 9 * np.array([2.0, 3.0]) ** 2)
    np.testing.assert_array_equal(r["b.grad"], -2 * np.array([6.0, 4.0]))
    assert r["9*a**2 == a.grad"] is True and r["-2*b == b.grad"] is True
    assert r["a.requires_grad"] is False and r["b.requires_grad"] is True


@example("blitz/autograd_tutorial", check=_check_blitz_autograd)
def ex_blitz_autograd(torch):
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)

    Q = 3*a**3 - b**2

    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)

    # check if collected gradients are correct
    print(9*a**2 == a.grad)
    print(-2*b == b.grad)
    results = {
        "a.grad": _np(a.grad),
        "b.grad": _np(b.grad),
        "9*a**2 == a.grad": bool((9*a**2 == a.grad).all()),
        "-2*b == b.grad": bool((-2*b == b.grad).all()),
    }

    x = torch.rand(5, 5)
    y = torch.rand(5, 5)
    z = torch.rand((5, 5), requires_grad=True)

    a = x + y
    print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")
    results["a.requires_grad"] = a.requires_grad
    results["b.requires_grad"] = b.requires_grad
    return results


# --------------------------------------------------------------------------------------
# beginner_source/blitz/neural_networks_tutorial.py ("Neural Networks"), without its
# convolutions: Net keeps LeNet's fully connected layers F5, F6 and OUTPUT, and its input
# is what the subsampling layer S4 would give, (1, 16, 5, 5) in place of (1, 1, 32, 32).
# The sections after the definition run as written (conv1.bias read as fc1.bias).
def _check_blitz_nn(r):
    assert r["len(params)"] == 6
    np.testing.assert_array_equal(r["params[0].size()"], [120, 400])
    assert r["fc1.bias.grad before backward is None"] is True
    assert r["loss after step"] < r["loss"]


def _blitz_net(torch):
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):

        def __init__(self):
            super(Net, self).__init__()
            # an affine operation: y = Wx + b
            self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, input):
            # Flatten operation: purely functional, outputs a (N, 400) Tensor
            s4 = torch.flatten(input, 1)
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
    _same_parameters(torch, net, 20)
    return net


@example(
    "blitz/neural_networks_tutorial (without convolutions)",
    rtol=1e-4,
    atol=1e-6,
    check=_check_blitz_nn,
)
def ex_blitz_nn(torch):
    nn = torch.nn
    rng = np.random.default_rng(21)

    net = _blitz_net(torch)
    print(net)

    params = list(net.parameters())
    print(len(params))
    print(params[0].size())  # fc1's .weight

    input = torch.randn(1, 16, 5, 5)
    input = _same(torch, input, rng.standard_normal((1, 16, 5, 5)))
    out = net(input)
    print(out)

    net.zero_grad()
    g = torch.randn(1, 10)
    out.backward(_same(torch, g, rng.standard_normal((1, 10))))
    results = {"out": _np(out), "fc3.weight.grad": _np(net.fc3.weight.grad)}

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

    print('fc1.bias.grad before backward')
    print(net.fc1.bias.grad)
    results["fc1.bias.grad before backward is None"] = net.fc1.bias.grad is None

    loss.backward()

    print('fc1.bias.grad after backward')
    print(net.fc1.bias.grad)
    results["fc1.bias.grad after backward"] = _np(net.fc1.bias.grad)

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
        "fc1.weight after step": _np(net.fc1.weight),
    })
    return results


# The tutorial's hand-written update, `f.data.sub_(f.grad.data * learning_rate)`.
def _check_blitz_update(r):
    assert r["loss after update"] < r["loss"]


@example(
    "blitz/neural_networks_tutorial (f.data.sub_ update)",
    check=_check_blitz_update,
)
def ex_blitz_nn_data_update(torch):
    nn = torch.nn
    rng = np.random.default_rng(22)
    net = _blitz_net(torch)
    input = _same(torch, torch.randn(1, 16, 5, 5), rng.standard_normal((1, 16, 5, 5)))
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
# beginner_source/basics/tensorqs_tutorial.py ("Tensors", Learn the Basics).
def _check_tensorqs(r):
    np.testing.assert_array_equal(r["First row"], np.ones(4))
    np.testing.assert_array_equal(r["tensor"][0], [1, 0, 1, 1])
    for name in ("y1", "y2", "y3"):
        np.testing.assert_array_equal(r[name], np.full((4, 4), 3.0))
    for name in ("z1", "z2", "z3"):
        np.testing.assert_array_equal(r[name], r["tensor"])
    assert r["agg_item"] == 12.0 and r["type(agg_item)"] == "float"
    np.testing.assert_array_equal(r["after add_(5)"][0], [6, 5, 6, 6])
    np.testing.assert_array_equal(r["n after t.add_(1)"], np.full(5, 2.0))
    np.testing.assert_array_equal(r["t after np.add"], np.full(5, 2.0))


@example("basics/tensorqs_tutorial", check=_check_tensorqs)
def ex_tensorqs(torch):
    data = [[1, 2],[3, 4]]  # noqa: E231
    x_data = torch.tensor(data)

    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)

    x_ones = torch.ones_like(x_data) # retains the properties of x_data  # noqa: E261
    print(f"Ones Tensor: \n {x_ones} \n")

    x_rand = torch.rand_like(x_data, dtype=torch.float) # overrides the datatype of x_data  # noqa: E261,E501
    print(f"Random Tensor: \n {x_rand} \n")

    shape = (2,3,)  # noqa: E231
    rand_tensor = torch.rand(shape)
    ones_tensor = torch.ones(shape)
    zeros_tensor = torch.zeros(shape)

    print(f"Random Tensor: \n {rand_tensor} \n")
    print(f"Ones Tensor: \n {ones_tensor} \n")
    print(f"Zeros Tensor: \n {zeros_tensor}")

    tensor = torch.rand(3,4)  # noqa: E231

    print(f"Shape of tensor: {tensor.shape}")
    print(f"Datatype of tensor: {tensor.dtype}")
    print(f"Device tensor is stored on: {tensor.device}")

    # We move our tensor to the GPU if available
    if torch.cuda.is_available():
        tensor = tensor.to("cuda")

    tensor = torch.ones(4, 4)
    print(f"First row: {tensor[0]}")
    print(f"First column: {tensor[:, 0]}")
    print(f"Last column: {tensor[..., -1]}")
    results = {
        "x_data": _np(x_data),
        "x_np": _np(x_np),
        "x_ones": _np(x_ones),
        "x_rand dtype": _dtype(x_rand.dtype),
        "shape of tensor": np.array(torch.rand(3, 4).shape),
        "First row": _np(tensor[0]),
        "First column": _np(tensor[:, 0]),
        "Last column": _np(tensor[..., -1]),
    }
    tensor[:,1] = 0  # noqa: E231
    print(tensor)

    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    print(t1)

    # This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value  # noqa: E501
    # ``tensor.T`` returns the transpose of a tensor
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)

    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)


    # This computes the element-wise product. z1, z2, z3 will have the same value
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)

    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)

    agg = tensor.sum()
    agg_item = agg.item()
    print(agg_item, type(agg_item))
    results.update({
        "tensor": _np(tensor), "t1": _np(t1),
        "y1": _np(y1), "y2": _np(y2), "y3": _np(y3),
        "z1": _np(z1), "z2": _np(z2), "z3": _np(z3),
        "agg_item": agg_item, "type(agg_item)": type(agg_item).__name__,
    })

    print(f"{tensor} \n")
    tensor.add_(5)
    print(tensor)
    results["after add_(5)"] = _np(tensor)

    t = torch.ones(5)
    print(f"t: {t}")
    n = t.numpy()
    print(f"n: {n}")

    t.add_(1)
    print(f"t: {t}")
    print(f"n: {n}")
    results["n after t.add_(1)"] = n.copy()

    n = np.ones(5)
    t = torch.from_numpy(n)

    np.add(n, 1, out=n)
    print(f"t: {t}")
    print(f"n: {n}")
    results["t after np.add"] = _np(t)
    return results


# --------------------------------------------------------------------------------------
# beginner_source/basics/data_tutorial.py ("Datasets & DataLoaders"): indexing the
# dataset and a shuffled DataLoader on the synthetic FashionMNIST (the matplotlib calls
# are left out; the random picks are compared by shape and range only).
def _check_data_tutorial(r):
    np.testing.assert_array_equal(r["Feature batch shape"], [64, 1, 28, 28])
    np.testing.assert_array_equal(r["Labels batch shape"], [64])
    np.testing.assert_array_equal(r["img shape"], [28, 28])
    assert r["labels in range"] is True and r["label dtype"] == "int64"
    assert r["sample labels are ints"] is True


@example("basics/data_tutorial", check=_check_data_tutorial)
def ex_data_tutorial(torch):
    DataLoader = _from(torch, "utils.data", "DataLoader")

    training_data = _fake_fashion_mnist(torch, train=True)
    test_data = _fake_fashion_mnist(torch, train=False)

    labels_map = {
        0: "T-Shirt",
        1: "Trouser",
        2: "Pullover",
        3: "Dress",
        4: "Coat",
        5: "Sandal",
        6: "Shirt",
        7: "Sneaker",
        8: "Bag",
        9: "Ankle Boot",
    }
    cols, rows = 3, 3
    titles = []
    for i in range(1, cols * rows + 1):
        sample_idx = torch.randint(len(training_data), size=(1,)).item()
        img, label = training_data[sample_idx]
        titles.append(labels_map[label])

    train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=64, shuffle=True)

    # Display image and label.
    train_features, train_labels = next(iter(train_dataloader))
    print(f"Feature batch shape: {train_features.size()}")
    print(f"Labels batch shape: {train_labels.size()}")
    img = train_features[0].squeeze()
    label = train_labels[0]
    print(f"Label: {label}")
    return {
        "Feature batch shape": np.array(train_features.size()),
        "Labels batch shape": np.array(train_labels.size()),
        "img shape": np.array(img.shape),
        "label dtype": _dtype(train_labels.dtype),
        "labels in range": 0 <= train_labels.min().item() and train_labels.max().item() < 10,
        "sample labels are ints": len(titles) == 9,
        "batches": len(train_dataloader) + len(test_dataloader),
    }


# --------------------------------------------------------------------------------------
# beginner_source/basics/transforms_tutorial.py ("Transforms"): the one-hot target
# transform, the function torchvision's Lambda wraps (called directly here).
def _check_transforms(r):
    np.testing.assert_array_equal(r["one-hot"], np.eye(10)[[3, 0, 9]])


@example(
    "basics/transforms_tutorial (one-hot Lambda)",
    check=_check_transforms,
)
def ex_transforms(torch):
    target_transform = (lambda y: torch.zeros(
        10, dtype=torch.float).scatter_(dim=0, index=torch.tensor(y), value=1))
    hot = [target_transform(y) for y in (3, 0, 9)]
    return {"one-hot": np.stack([_np(h) for h in hot]), "dtype": _dtype(hot[0].dtype)}


# --------------------------------------------------------------------------------------
# beginner_source/basics/buildmodel_tutorial.py ("Build the Neural Network").
def _buildmodel_network(torch):
    nn = torch.nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28*28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    return NeuralNetwork


def _check_buildmodel(r):
    np.testing.assert_allclose(r["pred_probab"].sum(), 1.0, rtol=1e-6)
    assert r["y_pred"] == int(np.argmax(r["logits"]))
    np.testing.assert_array_equal(r["flat_image.size()"], [3, 784])
    np.testing.assert_array_equal(r["hidden1.size()"], [3, 20])
    assert (r["hidden1 after ReLU"] >= 0).all()
    np.testing.assert_allclose(r["seq pred_probab"].sum(axis=1), np.ones(3), rtol=1e-6)
    assert r["parameters"] == (
        "linear_relu_stack.0.weight (512, 784); linear_relu_stack.0.bias (512,); "
        "linear_relu_stack.2.weight (512, 512); linear_relu_stack.2.bias (512,); "
        "linear_relu_stack.4.weight (10, 512); linear_relu_stack.4.bias (10,)"
    )


@example("basics/buildmodel_tutorial", rtol=1e-5, atol=1e-6, check=_check_buildmodel)
def ex_buildmodel(torch):
    nn = torch.nn
    rng = np.random.default_rng(30)

    device = (
        "cuda"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )
    print(f"Using {device} device")

    NeuralNetwork = _buildmodel_network(torch)
    model = NeuralNetwork().to(device)
    _same_parameters(torch, model, 31)
    print(model)

    X = torch.rand(1, 28, 28, device=device)
    X = _same(torch, X, rng.random((1, 28, 28)))
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    print(f"Predicted class: {y_pred}")
    results = {"logits": _np(logits), "pred_probab": _np(pred_probab), "y_pred": y_pred.item()}

    input_image = torch.rand(3,28,28)  # noqa: E231
    input_image = _same(torch, input_image, rng.random((3, 28, 28)))
    print(input_image.size())

    flatten = nn.Flatten()
    flat_image = flatten(input_image)
    print(flat_image.size())

    layer1 = nn.Linear(in_features=28*28, out_features=20)
    _same_parameters(torch, layer1, 32)
    hidden1 = layer1(flat_image)
    print(hidden1.size())
    results["flat_image.size()"] = np.array(flat_image.size())
    results["hidden1.size()"] = np.array(hidden1.size())

    print(f"Before ReLU: {hidden1}\n\n")
    hidden1 = nn.ReLU()(hidden1)
    print(f"After ReLU: {hidden1}")
    results["hidden1 after ReLU"] = _np(hidden1)

    seq_modules = nn.Sequential(
        flatten,
        layer1,
        nn.ReLU(),
        nn.Linear(20, 10)
    )
    _same_parameters(torch, seq_modules, 33)
    input_image = torch.rand(3,28,28)  # noqa: E231
    input_image = _same(torch, input_image, rng.random((3, 28, 28)))
    logits = seq_modules(input_image)

    softmax = nn.Softmax(dim=1)
    pred_probab = softmax(logits)
    results["seq pred_probab"] = _np(pred_probab)

    print(f"Model structure: {model}\n\n")

    described = []
    for name, param in model.named_parameters():
        print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
        described.append(f"{name} {tuple(param.size())}")
    results["parameters"] = "; ".join(described)
    return results


# --------------------------------------------------------------------------------------
# beginner_source/basics/autogradqs_tutorial.py ("Automatic Differentiation with
# torch.autograd").
def _check_autogradqs(r):
    x = np.ones(5)
    w, b = r["w"], r["b"]
    z = x @ w + b
    sigmoid = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(r["b.grad"], sigmoid / 3, rtol=1e-6)
    np.testing.assert_allclose(r["w.grad"], np.outer(x, sigmoid / 3), rtol=1e-6)
    assert r["requires_grad"] == (True, False, False)
    first = 2 * (np.eye(4, 5) + 1)
    np.testing.assert_allclose(r["First call"], first)
    np.testing.assert_allclose(r["Second call"], 2 * first)
    np.testing.assert_allclose(r["Call after zeroing gradients"], first)


@example("basics/autogradqs_tutorial", rtol=1e-6, atol=1e-7, check=_check_autogradqs)
def ex_autogradqs(torch):
    rng = np.random.default_rng(40)

    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    w, b = _same(torch, w, rng.standard_normal((5, 3))), _same(torch, b, rng.standard_normal(3))
    z = torch.matmul(x, w)+b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

    print(f"Gradient function for z = {z.grad_fn}")
    print(f"Gradient function for loss = {loss.grad_fn}")

    loss.backward()
    print(w.grad)
    print(b.grad)
    results = {"w": _np(w), "b": _np(b), "w.grad": _np(w.grad), "b.grad": _np(b.grad)}

    z = torch.matmul(x, w)+b
    print(z.requires_grad)
    flags = [z.requires_grad]

    with torch.no_grad():
        z = torch.matmul(x, w)+b
    print(z.requires_grad)
    flags.append(z.requires_grad)

    z = torch.matmul(x, w)+b
    z_det = z.detach()
    print(z_det.requires_grad)
    flags.append(z_det.requires_grad)
    results["requires_grad"] = tuple(flags)

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp+1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"First call\n{inp.grad}")
    results["First call"] = _np(inp.grad)
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nSecond call\n{inp.grad}")
    results["Second call"] = _np(inp.grad)
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nCall after zeroing gradients\n{inp.grad}")
    results["Call after zeroing gradients"] = _np(inp.grad)
    return results


# --------------------------------------------------------------------------------------
# beginner_source/basics/quickstart_tutorial.py ("Quickstart") on the synthetic
# FashionMNIST: data loaders, the model, train and test loops, saving and loading the
# state dict (in a temporary directory), a prediction. 2 epochs instead of 5.
@contextlib.contextmanager
def _capture():
    """Collect what the block prints (and print it again after)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out
    print(out.getvalue(), end="")


def _check_training(r):
    tests = r["test (accuracy, avg loss) per epoch"]
    assert len(tests) >= 2
    assert np.all(np.diff(tests[:, 1]) < 0), tests  # the test loss falls every epoch


def _check_quickstart(r):
    _check_training(r)
    assert r["Shape of y"] == "(64,) int64"
    assert r["reloaded weights equal"] is True
    assert r["predicted"] in range(10) and r["actual"] in range(10)


@example("basics/quickstart_tutorial", rtol=1e-5, atol=1e-6, check=_check_quickstart)
def ex_quickstart(torch):
    nn = torch.nn
    DataLoader = _from(torch, "utils.data", "DataLoader")

    training_data = _fake_fashion_mnist(torch, train=True)
    test_data = _fake_fashion_mnist(torch, train=False)

    batch_size = 64

    # Create data loaders.
    train_dataloader = DataLoader(training_data, batch_size=batch_size)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)

    for X, y in test_dataloader:
        print(f"Shape of X [N, C, H, W]: {X.shape}")
        print(f"Shape of y: {y.shape} {y.dtype}")
        break
    results = {"Shape of y": f"{tuple(y.shape)} {_dtype(y.dtype)}"}

    # Get cpu, gpu or mps device for training.
    device = (
        "cuda"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )
    print(f"Using {device} device")

    # Define model
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28*28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10)
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    _same_parameters(torch, model, 50)
    print(model)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)

            # Compute prediction error
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            if batch % 100 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    with _capture() as printed:
        test(test_dataloader, model, loss_fn)  # before training, for the check
        epochs = 2  # 5 in the tutorial
        for t in range(epochs):
            print(f"Epoch {t+1}\n-------------------------------")
            train(train_dataloader, model, loss_fn, optimizer)
            test(test_dataloader, model, loss_fn)
        print("Done!")
    results["test (accuracy, avg loss) per epoch"] = _test_results(printed.getvalue())

    with _in_temporary_directory():
        torch.save(model.state_dict(), "model.pth")
        print("Saved PyTorch Model State to model.pth")

        trained = model
        model = NeuralNetwork().to(device)
        model.load_state_dict(torch.load("model.pth", weights_only=True))
    results["reloaded weights equal"] = all(
        bool((p == q).all()) for p, q in zip(trained.parameters(), model.parameters())
    )

    classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]

    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
        print(f'Predicted: "{predicted}", Actual: "{actual}"')
    results["predicted"] = classes.index(predicted)
    results["actual"] = classes.index(actual)
    results["pred"] = _np(pred)
    return results


# --------------------------------------------------------------------------------------
# beginner_source/basics/optimization_tutorial.py ("Optimizing Model Parameters") on the
# synthetic FashionMNIST. 2 epochs instead of 10.
@example("basics/optimization_tutorial", rtol=1e-5, atol=1e-6, check=_check_training)
def ex_optimization(torch):
    nn = torch.nn
    DataLoader = _from(torch, "utils.data", "DataLoader")

    training_data = _fake_fashion_mnist(torch, train=True)
    test_data = _fake_fashion_mnist(torch, train=False)

    train_dataloader = DataLoader(training_data, batch_size=64)
    test_dataloader = DataLoader(test_data, batch_size=64)

    NeuralNetwork = _buildmodel_network(torch)
    model = NeuralNetwork()
    _same_parameters(torch, model, 51)

    learning_rate = 1e-3
    batch_size = 64
    epochs = 5

    # Initialize the loss function
    loss_fn = nn.CrossEntropyLoss()

    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    def train_loop(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        # Set the model to training mode - important for batch normalization and dropout layers
        # Unnecessary in this situation but added for best practices
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            # Compute prediction and loss
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            if batch % 100 == 0:
                loss, current = loss.item(), batch * batch_size + len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test_loop(dataloader, model, loss_fn):
        # Set the model to evaluation mode - important for batch normalization and dropout layers
        # Unnecessary in this situation but added for best practices
        model.eval()
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        test_loss, correct = 0, 0

        # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode  # noqa: E501
        # also serves to reduce unnecessary gradient computations and memory usage for tensors with requires_grad=True  # noqa: E501
        with torch.no_grad():
            for X, y in dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()

        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    with _capture() as printed:
        test_loop(test_dataloader, model, loss_fn)  # before training, for the check
        epochs = 2  # 10 in the tutorial
        for t in range(epochs):
            print(f"Epoch {t+1}\n-------------------------------")
            train_loop(train_dataloader, model, loss_fn, optimizer)
            test_loop(test_dataloader, model, loss_fn)
        print("Done!")
    return {
        "test (accuracy, avg loss) per epoch": _test_results(printed.getvalue()),
        "last layer bias": _np(model.linear_relu_stack[4].bias),
    }


# --------------------------------------------------------------------------------------
# beginner_source/basics/saveloadrun_tutorial.py ("Save and Load the Model"), on the
# quickstart's NeuralNetwork in place of torchvision's vgg16, in a temporary directory.
def _check_saveloadrun(r):
    assert r["loaded equals saved"] is True and r["training after eval()"] is False


@example("basics/saveloadrun_tutorial (weights)", check=_check_saveloadrun)
def ex_saveloadrun_weights(torch):
    NeuralNetwork = _buildmodel_network(torch)
    with _in_temporary_directory():
        model = NeuralNetwork()  # models.vgg16(weights='IMAGENET1K_V1') in the tutorial
        _same_parameters(torch, model, 52)
        torch.save(model.state_dict(), 'model_weights.pth')
        saved = model

        model = NeuralNetwork() # models.vgg16(): we do not specify ``weights``, i.e. create untrained model  # noqa: E261,E501
        model.load_state_dict(torch.load('model_weights.pth', weights_only=True))
        model.eval()
    return {
        "loaded equals saved": all(
            bool((p == q).all()) for p, q in zip(saved.parameters(), model.parameters())
        ),
        "training after eval()": model.training,
        "first weights": _np(model.linear_relu_stack[0].weight[:2, :5]),
    }


def _module_level(cls, name):
    """Make a class defined in an example picklable: a module-level name for it."""
    cls.__name__ = cls.__qualname__ = name
    globals()[name] = cls
    return cls


def _check_saveloadrun_model(r):
    assert r["loaded equals saved"] is True and r["class"] == "NeuralNetwork"


@example(
    "basics/saveloadrun_tutorial (model with shapes)",
    check=_check_saveloadrun_model,
    xfail="torch.save(model) of a whole Module: minigrad saves state dicts only",
)
def ex_saveloadrun_model(torch):
    NeuralNetwork = _module_level(
        _buildmodel_network(torch), f"NeuralNetwork_{torch.__name__}"
    )
    with _in_temporary_directory():
        model = NeuralNetwork()
        _same_parameters(torch, model, 53)
        model.eval()
        saved = model

        torch.save(model, 'model.pth')

        model = torch.load('model.pth', weights_only=False)
    return {
        "loaded equals saved": all(
            bool((p == q).all()) for p, q in zip(saved.parameters(), model.parameters())
        ),
        "class": type(model).__name__.split("_")[0],
    }


# --------------------------------------------------------------------------------------
# beginner_source/nn_tutorial.py ("What is torch.nn really?") up to "Switch to CNN".
# MNIST (downloaded as a pickle of NumPy arrays) is replaced by NumPy arrays of the same
# dtypes: 64 training images, one batch, so the shuffled loaders give the same batch in
# any order, and 100 validation images; labels by a fixed linear rule.
def _fake_mnist():
    """MNIST-like arrays: float32 rows of 784 values in [0, 1], mostly 0 (each class lights
    its own pattern of pixels), int64 labels; 64 training and 100 validation rows."""
    rng = np.random.default_rng(60)
    patterns = np.random.default_rng(61).random((10, 784)) < 0.2

    def draw(size):
        labels = rng.integers(0, 10, size)
        images = patterns[labels] * rng.random((size, 784))
        return images.astype(np.float32), labels.astype(np.int64)

    (x_train, y_train), (x_valid, y_valid) = draw(64), draw(100)
    return x_train, y_train, x_valid, y_valid


def _check_nn_tutorial(r):
    # "We expect that the loss will have decreased and accuracy to have increased".
    assert r["scratch: loss after"] < r["scratch: loss before"]
    assert r["scratch: accuracy after"] > r["scratch: accuracy before"]
    # "Let's confirm that our loss and accuracy are the same as before" (F.cross_entropy).
    np.testing.assert_allclose(r["F.cross_entropy loss"], r["scratch: loss after"], rtol=1e-5)
    assert r["F.cross_entropy accuracy"] == r["scratch: accuracy after"]
    for stage in ("nn.Module", "nn.Linear", "optim", "Dataset"):
        assert r[f"{stage}: loss after"] < r[f"{stage}: loss before"], stage
    assert np.all(np.diff(r["validation losses"]) < 0)
    assert np.all(np.diff(r["fit() validation losses"]) < 0)


@example("nn_tutorial (up to Switch to CNN)", rtol=1e-5, atol=1e-6, check=_check_nn_tutorial)
def ex_nn_tutorial(torch):
    rng = np.random.default_rng(62)
    results = {}

    # ((x_train, y_train), (x_valid, y_valid), _) = pickle.load(f, encoding="latin-1")
    x_train, y_train, x_valid, y_valid = _fake_mnist()
    print(x_train.shape)

    x_train, y_train, x_valid, y_valid = map(
        torch.tensor, (x_train, y_train, x_valid, y_valid)
    )
    n, c = x_train.shape
    print(x_train, y_train)
    print(x_train.shape)
    print(y_train.min(), y_train.max())

    weights = torch.randn(784, 10) / math.sqrt(784)
    weights = _same(torch, weights, rng.standard_normal((784, 10)) / math.sqrt(784))
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 64  # batch size

    xb = x_train[0:bs]  # a mini-batch from x
    preds = model(xb)  # predictions
    preds[0], preds.shape
    print(preds[0], preds.shape)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll

    yb = y_train[0:bs]
    print(loss_func(preds, yb))

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    print(accuracy(preds, yb))
    results["scratch: loss before"] = loss_func(preds, yb).item()
    results["scratch: accuracy before"] = accuracy(preds, yb).item()

    lr = 0.5  # learning rate
    epochs = 2  # how many epochs to train for

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            #         set_trace()
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()

    print(loss_func(model(xb), yb), accuracy(model(xb), yb))
    results["scratch: loss after"] = loss_func(model(xb), yb).item()
    results["scratch: accuracy after"] = accuracy(model(xb), yb).item()

    F = torch.nn.functional  # import torch.nn.functional as F

    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias

    print(loss_func(model(xb), yb), accuracy(model(xb), yb))
    results["F.cross_entropy loss"] = loss_func(model(xb), yb).item()
    results["F.cross_entropy accuracy"] = accuracy(model(xb), yb).item()

    nn = torch.nn  # from torch import nn

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = Mnist_Logistic()
    _same_parameters(torch, model, 63)

    print(loss_func(model(xb), yb))
    results["nn.Module: loss before"] = loss_func(model(xb), yb).item()

    def fit():
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)

                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()

    fit()

    print(loss_func(model(xb), yb))
    results["nn.Module: loss after"] = loss_func(model(xb), yb).item()

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    model = Mnist_Logistic()
    _same_parameters(torch, model, 64)
    print(loss_func(model(xb), yb))
    results["nn.Linear: loss before"] = loss_func(model(xb), yb).item()

    fit()

    print(loss_func(model(xb), yb))
    results["nn.Linear: loss after"] = loss_func(model(xb), yb).item()

    optim = torch.optim  # from torch import optim

    def get_model():
        model = Mnist_Logistic()
        return model, optim.SGD(model.parameters(), lr=lr)

    model, opt = get_model()
    _same_parameters(torch, model, 65)
    print(loss_func(model(xb), yb))
    results["optim: loss before"] = loss_func(model(xb), yb).item()

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    results["optim: loss after"] = loss_func(model(xb), yb).item()

    TensorDataset = _from(torch, "utils.data", "TensorDataset")

    train_ds = TensorDataset(x_train, y_train)

    model, opt = get_model()
    _same_parameters(torch, model, 66)
    results["Dataset: loss before"] = loss_func(model(xb), yb).item()

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            xb, yb = train_ds[i * bs: i * bs + bs]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    results["Dataset: loss after"] = loss_func(model(xb), yb).item()

    DataLoader = _from(torch, "utils.data", "DataLoader")

    train_ds = TensorDataset(x_train, y_train)
    train_dl = DataLoader(train_ds, batch_size=bs)

    model, opt = get_model()
    _same_parameters(torch, model, 67)

    for epoch in range(epochs):
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    results["DataLoader: loss after"] = loss_func(model(xb), yb).item()

    train_ds = TensorDataset(x_train, y_train)
    train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True)

    valid_ds = TensorDataset(x_valid, y_valid)
    valid_dl = DataLoader(valid_ds, batch_size=bs * 2)

    model, opt = get_model()
    _same_parameters(torch, model, 68)

    validation = []
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

        model.eval()
        with torch.no_grad():
            valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)

        print(epoch, valid_loss / len(valid_dl))
        validation.append((valid_loss / len(valid_dl)).item())
    results["validation losses"] = np.array(validation)

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

    with _capture() as printed:
        train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        model, opt = get_model()
        _same_parameters(torch, model, 69)
        fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    results["fit() validation losses"] = np.array(
        [float(line.split()[1]) for line in printed.getvalue().splitlines()]
    )
    return results


# --------------------------------------------------------------------------------------
# intermediate_source/forward_ad_usage.py ("Forward-mode Automatic Differentiation"):
# "Basic Usage", "Usage with Modules" and "Custom autograd Function"; the sections on
# torch.func and functorch are left out.
def _check_forward_basic(r):
    np.testing.assert_allclose(r["jvp"], 2 * r["primal"] * r["tangent"], rtol=1e-6)
    assert r["asserts passed"] is True


@example("forward_ad_usage/basic usage", rtol=1e-6, atol=1e-7, check=_check_forward_basic)
def ex_forward_ad_basic(torch):
    fwAD = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")
    rng = np.random.default_rng(70)

    primal = torch.randn(10, 10)
    tangent = torch.randn(10, 10)
    primal = _same(torch, primal, rng.standard_normal((10, 10)))
    tangent = _same(torch, tangent, rng.standard_normal((10, 10)))

    def fn(x, y):
        return x ** 2 + y ** 2

    # All forward AD computation must be performed in the context of
    # a ``dual_level`` context. All dual tensors created in such a context
    # will have their tangents destroyed upon exit. This is to ensure that
    # if the output or intermediate results of this computation are reused
    # in a future forward AD computation, their tangents (which are associated
    # with this computation) won't be confused with tangents from the later
    # computation.
    with fwAD.dual_level():
        # To create a dual tensor we associate a tensor, which we call the
        # primal with another tensor of the same size, which we call the tangent.
        # If the layout of the tangent is different from that of the primal,
        # The values of the tangent are copied into a new tensor with the same
        # metadata as the primal. Otherwise, the tangent itself is used as-is.
        #
        # It is also important to note that the dual tensor created by
        # ``make_dual`` is a view of the primal.
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent

        # To demonstrate the case where the copy of the tangent happens,
        # we pass in a tangent with a layout different from that of the primal
        dual_input_alt = fwAD.make_dual(primal, tangent.T)
        assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

        # Tensors that do not have an associated tangent are automatically
        # considered to have a zero-filled tangent of the same shape.
        plain_tensor = torch.randn(10, 10)
        dual_output = fn(dual_input, plain_tensor)

        # Unpacking the dual returns a ``namedtuple`` with ``primal`` and ``tangent``
        # as attributes
        jvp = fwAD.unpack_dual(dual_output).tangent

    assert fwAD.unpack_dual(dual_output).tangent is None
    return {
        "primal": _np(primal),
        "tangent": _np(tangent),
        "jvp": _np(jvp),
        "asserts passed": True,
    }


def _check_forward_module(r):
    want = r["input"] @ r["weight tangent"].T + r["bias tangent"]
    np.testing.assert_allclose(r["jvp"], want, rtol=1e-6, atol=1e-12)


@example("forward_ad_usage/usage with modules", rtol=1e-5, atol=1e-6, check=_check_forward_module)
def ex_forward_ad_modules(torch):
    fwAD = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")
    rng = np.random.default_rng(71)

    nn = torch.nn  # import torch.nn as nn

    model = nn.Linear(5, 5)
    _same_parameters(torch, model, 72)
    input = torch.randn(16, 5)
    input = _same(torch, input, rng.standard_normal((16, 5)))

    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.rand_like(p) for name, p in params.items()}
    tangents = {name: _same(torch, t, rng.random(tuple(t.shape))) for name, t in tangents.items()}

    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))

        out = model(input)
        jvp = fwAD.unpack_dual(out).tangent
    return {
        "input": _np(input),
        "weight tangent": _np(tangents["weight"]),
        "bias tangent": _np(tangents["bias"]),
        "jvp": _np(jvp),
    }


def _forward_ad_fn(torch):
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            # Tensors stored in ``ctx`` can be used in the subsequent forward grad
            # computation.
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            # If the tensor stored in`` ctx`` will not also be used in the backward pass,
            # one can manually free it using ``del``
            del ctx.result
            return gO

    return Fn


def _check_forward_function(r):
    np.testing.assert_allclose(r["jvp"], r["tangent"] * np.exp(r["primal"]), rtol=1e-6)


@example(
    "forward_ad_usage/custom Function jvp", rtol=1e-6, atol=1e-7, check=_check_forward_function
)
def ex_forward_ad_function(torch):
    fwAD = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")
    rng = np.random.default_rng(73)
    Fn = _forward_ad_fn(torch)

    fn = Fn.apply

    primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
    tangent = torch.randn(10, 10)
    primal = _same(torch, primal, rng.standard_normal((10, 10)))
    tangent = _same(torch, tangent, rng.standard_normal((10, 10)))

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    return {"primal": _np(primal), "tangent": _np(tangent), "jvp": _np(jvp)}


def _check_gradcheck(r):
    assert r["gradcheck"] is True


@example(
    "forward_ad_usage/gradcheck(check_forward_ad=True)",
    check=_check_gradcheck,
)
def ex_forward_ad_gradcheck(torch):
    rng = np.random.default_rng(74)
    Fn = _forward_ad_fn(torch)
    primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
    primal = _same(torch, primal, rng.standard_normal((10, 10)))

    # It is important to use ``autograd.gradcheck`` to verify that your
    # custom autograd Function computes the gradients correctly. By default,
    # ``gradcheck`` only checks the backward-mode (reverse-mode) AD gradients. Specify
    # ``check_forward_ad=True`` to also check forward grads. If you did not
    # implement the backward formula for your function, you can also tell ``gradcheck``
    # to skip the tests that require backward-mode AD by specifying
    # ``check_backward_ad=False``, ``check_undefined_grad=False``, and
    # ``check_batched_grad=False``.
    test = torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False,
                                    check_batched_grad=False)
    return {"gradcheck": test}


# --------------------------------------------------------------------------------------
# intermediate_source/autograd_saved_tensors_hooks_tutorial.py ("Hooks for autograd
# saved tensors"). What it prints is compared (the Packing/Unpacking lines show when the
# hooks run), the tensors it prints by their values.
def _check_saved_attributes(r):
    assert r["_saved_self is a"] is True and r["_saved_other is b"] is True
    assert r["_saved_result.equal(y)"] is True and r["_saved_result is y"] is False


@example(
    "saved_tensors_hooks/saved tensors (grad_fn._saved_*)",
    check=_check_saved_attributes,
)
def ex_saved_attributes(torch):
    rng = np.random.default_rng(80)
    a = torch.randn(5, requires_grad=True)
    a = _same(torch, a, rng.standard_normal(5))
    b = torch.ones(5, requires_grad=True)
    y = a * b

    print(y.grad_fn._saved_self)
    print(y.grad_fn._saved_other)

    def f(x):
        return x * x

    x = torch.randn(5, requires_grad=True)
    y = f(f(f(x)))

    a = torch.randn(5, requires_grad=True)
    b = torch.ones(5, requires_grad=True)
    y = a * b

    print(y.grad_fn._saved_self is a)   # True
    print(y.grad_fn._saved_other is b)  # True
    results = {
        "_saved_self is a": y.grad_fn._saved_self is a,
        "_saved_other is b": y.grad_fn._saved_other is b,
    }

    a = torch.randn(5, requires_grad=True)
    y = torch.exp(a)
    print(y.grad_fn._saved_result.equal(y))  # True
    print(y.grad_fn._saved_result is y)      # False
    results["_saved_result.equal(y)"] = y.grad_fn._saved_result.equal(y)
    results["_saved_result is y"] = y.grad_fn._saved_result is y
    return results


def _check_saved_hooks(r):
    assert r["Packing lines"] == 2 and r["Unpacking lines"] == 2
    np.testing.assert_array_equal(r["a.grad"], np.full(5, 2.0))
    assert r["x.grad.equal(2 * x)"] is True


@example("saved_tensors_hooks/pack and unpack hooks", check=_check_saved_hooks)
def ex_saved_hooks(torch):
    rng = np.random.default_rng(81)

    def pack_hook(x):
        print("Packing", x)
        return x

    def unpack_hook(x):
        print("Unpacking", x)
        return x
    a = torch.ones(5, requires_grad=True)
    b = torch.ones(5, requires_grad=True) * 2

    with _capture() as printed:
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = a * b

        y.sum().backward()
    lines = printed.getvalue().splitlines()
    results = {
        "Packing lines": sum(line.startswith("Packing") for line in lines),
        "Unpacking lines": sum(line.startswith("Unpacking") for line in lines),
        "a.grad": _np(a.grad),
    }

    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
        y = torch.pow(x, 2)
    y.sum().backward()
    assert(x.grad.equal(2 * x))
    results["x.grad.equal(2 * x)"] = bool(x.grad.equal(2 * x))
    results["x.grad"] = _np(x.grad)
    return results


def _check_unconventional(r):
    assert r["int"] is True and r["tuple"] is True and r["str"] is True


@example("saved_tensors_hooks/unconventional (int, tuple, str)", check=_check_unconventional)
def ex_saved_unconventional(torch):
    rng = np.random.default_rng(82)
    results = {}

    storage = []

    def pack(x):
        storage.append(x)
        return len(storage) - 1

    def unpack(x):
        return storage[x]

    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    y.sum().backward()

    assert(x.grad.equal(2 * x))
    results["int"] = bool(x.grad.equal(2 * x))

    def pack(x):
        delta = torch.randn(*x.size())
        return x - delta, lambda x: x + delta

    def unpack(packed):
        x, f = packed
        return f(x)


    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    y.sum().backward()

    assert(torch.allclose(x.grad, 2 * x))
    results["tuple"] = bool(torch.allclose(x.grad, 2 * x))

    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    # eval() is given `torch` (the library under test) explicitly: in this file the
    # tutorial's `torch` is a parameter, not the module-level name eval would look up.
    with torch.autograd.graph.saved_tensors_hooks(lambda x: repr(x), lambda x: eval("torch." + x, {"torch": torch})):  # noqa: E501
        y = x * x
    y.sum().backward()
    assert(torch.all(x.grad - 2 * x <= 1e-4))
    results["str"] = bool(torch.all(x.grad - 2 * x <= 1e-4))
    results["x.grad (from the str)"] = _np(x.grad)
    return results


def _check_to_cpu(r):
    assert r["allclose"] is True


@example("saved_tensors_hooks/saving tensors to CPU (hooks)", check=_check_to_cpu)
def ex_saved_to_cpu_hooks(torch):
    rng = np.random.default_rng(83)
    storage = []

    def pack(x):  # the tutorial's `pack` and `unpack` from the section before
        storage.append(x)
        return len(storage) - 1

    def unpack(x):
        return storage[x]

    def pack_hook(x):
        return (x.device, x.cpu())

    def unpack_hook(packed):
        device, tensor = packed
        return tensor.to(device)

    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    y.sum().backward()

    torch.allclose(x.grad, (2 * x))
    results = {"allclose": bool(torch.allclose(x.grad, (2 * x))), "x.grad": _np(x.grad)}

    # The pack_hook/unpack_hook pair defined above, which the tutorial defines but
    # does not use.
    x.grad = None
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = x * x
    y.sum().backward()
    results["x.grad (device hooks)"] = _np(x.grad)
    return results


def _check_save_on_cpu(r):
    np.testing.assert_allclose(r["w.grad"], r["x"], rtol=1e-6)
    assert r["SaveToCpu weight grad shape"] == (100, 100)


@example(
    "saved_tensors_hooks/save_on_cpu",
    check=_check_save_on_cpu,
)
def ex_save_on_cpu(torch):
    rng = np.random.default_rng(84)
    nn = torch.nn  # import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(5))

        def forward(self, x):
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                # some computation
                return self.w * x

    x = torch.randn(5)
    x = _same(torch, x, rng.standard_normal(5))
    model = Model()
    loss = model(x).sum()
    loss.backward()
    results = {"x": _np(x), "w.grad": _np(model.w.grad)}

    class SaveToCpu(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

        def forward(self, *args, **kwargs):
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                return self.module(*args, **kwargs)

    model = nn.Sequential(
        nn.Linear(10, 100),
        SaveToCpu(nn.Linear(100, 100)),
        nn.Linear(100, 10),
    )

    x = torch.randn(10)
    loss = model(x).sum()
    loss.backward()
    results["SaveToCpu weight grad shape"] = tuple(model[1].module.weight.grad.shape)
    return results


def _check_disk_double_access(r):
    assert r["printed"] == ["tensor", "Double access failed!"]


@example(
    "saved_tensors_hooks/saving tensors to disk (double access)",
    check=_check_disk_double_access,
)
def ex_saved_to_disk_double_access(torch):
    import uuid
    tmp_dir_obj = tempfile.TemporaryDirectory()
    tmp_dir = tmp_dir_obj.name

    def pack_hook(tensor):
        name = os.path.join(tmp_dir, str(uuid.uuid4()))
        torch.save(tensor, name)
        return name

    def unpack_hook(name):
        tensor = torch.load(name)
        os.remove(name)
        return tensor

    x = torch.ones(5, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = x.pow(2)
    printed = []
    print(y.grad_fn._saved_self)
    printed.append("tensor")
    try:
        print(y.grad_fn._saved_self)
        print("Double access succeeded!")
        printed.append("Double access succeeded!")
    except:
        print("Double access failed!")
        printed.append("Double access failed!")
    tmp_dir_obj.cleanup()
    return {"printed": printed}


def _check_disk(r):
    np.testing.assert_allclose(r["x.grad"], 2 * r["x"], rtol=1e-6)
    assert r["files left"] == 0


@example("saved_tensors_hooks/saving tensors to disk (SelfDeletingTempFile)", check=_check_disk)
def ex_saved_to_disk(torch):
    import uuid
    rng = np.random.default_rng(85)
    tmp_dir_obj = tempfile.TemporaryDirectory()
    tmp_dir = tmp_dir_obj.name

    class SelfDeletingTempFile():
        def __init__(self):
            self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

        def __del__(self):
            os.remove(self.name)

    def pack_hook(tensor):
        temp_file = SelfDeletingTempFile()
        torch.save(tensor, temp_file.name)
        return temp_file

    def unpack_hook(temp_file):
        return torch.load(temp_file.name)

    # The hooks in use, as the text says "This can then be used in your model".
    x = torch.randn(5, requires_grad=True)
    x = _same(torch, x, rng.standard_normal(5))
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = x * x
    y.sum().backward()
    del y
    results = {"x": _np(x), "x.grad": _np(x.grad), "files left": len(os.listdir(tmp_dir))}
    tmp_dir_obj.cleanup()
    return results


def _check_save_to_disk_module(r):
    assert r["net wraps SaveToDisk"] is True


@example(
    "saved_tensors_hooks/SaveToDisk in nn.DataParallel",
    check=_check_save_to_disk_module,
)
def ex_save_to_disk_module(torch):
    import uuid
    nn = torch.nn  # import torch.nn as nn
    tmp_dir_obj = tempfile.TemporaryDirectory()
    tmp_dir = tmp_dir_obj.name

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(5))

        def forward(self, x):
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                # some computation
                return self.w * x

    class SelfDeletingTempFile():
        def __init__(self):
            self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

        def __del__(self):
            os.remove(self.name)

    # Only save on disk tensors that have size >= 1000
    SAVE_ON_DISK_THRESHOLD = 1000

    def pack_hook(x):
        if x.numel() < SAVE_ON_DISK_THRESHOLD:
            return x
        temp_file = SelfDeletingTempFile()
        torch.save(tensor, temp_file.name)
        return temp_file

    def unpack_hook(tensor_or_sctf):
        if isinstance(tensor_or_sctf, torch.Tensor):
            return tensor_or_sctf
        return torch.load(tensor_or_sctf.name)

    class SaveToDisk(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

        def forward(self, *args, **kwargs):
            with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
                return self.module(*args, **kwargs)

    net = nn.DataParallel(SaveToDisk(Model()))
    tmp_dir_obj.cleanup()
    return {"net wraps SaveToDisk": type(net.module).__name__ == "SaveToDisk"}


# --------------------------------------------------------------------------------------
# The tests.


(
    test_every_example_checks_something,
    test_example_runs_with_minigrad,
    test_example_matches_pytorch,
) = EXAMPLES.tests(torch)

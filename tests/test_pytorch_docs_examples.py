"""The examples in PyTorch's documentation of torch.optim, its learning-rate schedulers,
torch.autograd.functional, torch.utils.checkpoint and torch.nn.utils, run with
`import minigrad as torch`.

The pattern is that of tests/test_pytorch_examples.py and tests/test_pytorch_tutorials.py:
every example is a function `example(torch)` that runs the documented code with only the
imports changed (`from torch.X import Y` becomes `Y = _from(torch, "X", "Y")`) and returns
values as NumPy arrays. `test_example_runs_with_minigrad` runs it with minigrad and checks
what the documentation states (the learning rates its comments list, the closed forms of
the derivatives); `test_example_matches_pytorch` compares it with real PyTorch (skipped
when PyTorch is not installed).

The docs write their examples as fragments: `model`, `input`, `target`, `dataset`,
`loss_fn`, `train(...)`, `validate(...)` are not defined there. Here `_setup` defines them:
a small nn.Linear model with fixed weights, a dataset of five (input, target) pairs drawn
from NumPy with a fixed seed, MSELoss; `train(...)` runs one optimizer step over the
dataset and `validate(...)` returns the loss on it. Where a docstring draws with
`torch.rand`, the call stays and its values are replaced by NumPy ones (`_same`).
Learning-rate schedules are run for the epochs the docstrings give and compared epoch by
epoch.

Sources (pytorch/pytorch, as installed in PyTorch 2.13):
- docs/source/optim.md: "Constructing it", "Per-parameter options", "Taking an
  optimization step" (optimizer.step() and optimizer.step(closure)), "How to adjust
  learning rate" (ExponentialLR, chaining ExponentialLR and MultiStepLR), the named
  parameters examples, "How to utilize named parameters to load optimizer state dict",
  "Putting it all together: SWA" and "... EMA".
- torch/optim/sgd.py, the SGD docstring example.
- torch/optim/lr_scheduler.py, the docstring examples of LambdaLR, MultiplicativeLR,
  StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR, SequentialLR, PolynomialLR,
  CosineAnnealingLR, ChainedScheduler, ReduceLROnPlateau, CyclicLR,
  CosineAnnealingWarmRestarts and OneCycleLR.
- torch/autograd/functional.py, the docstring examples of vjp, jvp, jacobian, hessian,
  vhp and hvp.
- torch/utils/checkpoint.py: the checkpoint_sequential docstring example; checkpoint()
  has none, so it is run as its docstring describes it (a function and its inputs,
  use_reentrant given).
- torch/nn/utils/clip_grad.py and convert_parameters.py: these docstrings have no
  examples; clip_grad_norm_, clip_grad_value_, parameters_to_vector and
  vector_to_parameters are run as their docstrings describe them, the clipping in the
  training step "Gradient clipping" of docs/source/notes/amp_examples.rst shows (without
  its GradScaler).

Left out, and why:
- optim.md "Functional optimizer API" (torch.optim.functional.adamw on CUDA, bf16 state,
  autocast) and "Optimizer step hooks" (torch.profiler ranges around step()).
- torch/optim/optimizer.py's load_state_dict example: it loads "./save_seq.pt", a file the
  docs assume, into a SequentialLR built from LinearLR and CosineAnnealingLR.
- torch/optim/swa_utils.py's docstring examples repeat optim.md's SWA and EMA examples
  (kept) with a MultiplicativeLR.
- torch/utils/checkpoint.py: set_checkpoint_early_stop's example (marked failing in
  PyTorch, with undefined `fn` and `inputs`) and selective checkpointing
  (create_selective_checkpoint_contexts over torch.ops.aten operators).
- The `jacobian(..., vectorize=True)` example runs; its strategy="forward-mode" variant
  has no example.
- amp_examples.rst's GradScaler, unscale_ and autocast (CUDA mixed precision).
"""

# The docs' code as published: lambdas assigned to names, builtins shadowed (input),
# closures defined in loops (step(closure)), an unused expression (`jac.shape`).
# ruff: noqa: A001, A002, B007, B018, B023, E731

import copy
import os
import tempfile

import numpy as np
from pytorch_example_harness import Examples
from pytorch_example_harness import as_numpy as _np
from pytorch_example_harness import from_library as _from
from pytorch_example_harness import same as _same

import minigrad as torch

EXAMPLES = Examples()
example = EXAMPLES.example

def _fixed_parameters(torch, model, seed):
    """Overwrite the model's parameters with NumPy values (uniform in [-0.5, 0.5])."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=p.dtype))


def _setup(torch, seed=0):
    """What the docs' fragments take as given: model, dataset, loss_fn, and the train and
    validate placeholders (one optimizer step over the dataset; the loss on it)."""
    nn = torch.nn
    model = nn.Linear(4, 3)
    _fixed_parameters(torch, model, seed)
    rng = np.random.default_rng(seed + 100)
    dataset = [
        (
            torch.tensor(rng.standard_normal((2, 4)), dtype=torch.float64),
            torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float64),
        )
        for _ in range(5)
    ]
    model = model.double()
    loss_fn = nn.MSELoss()

    def train(optimizer):  # one epoch
        for input, target in dataset:
            optimizer.zero_grad()
            loss_fn(model(input), target).backward()
            optimizer.step()

    def validate(*args):
        with torch.no_grad():
            return sum(loss_fn(model(input), target).item() for input, target in dataset)

    return model, dataset, loss_fn, train, validate


def _parameters(model):
    return np.concatenate([_np(p).ravel() for p in model.parameters()])


def _falls(losses):
    losses = np.asarray(losses, dtype=np.float64)
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses


# --------------------------------------------------------------------------------------
# docs/source/optim.md, "Constructing it" and "Taking an optimization step" >
# "optimizer.step()": SGD with momentum over model.parameters(), Adam over a list of
# Variables, trained with the documented loop.
def _check_losses(r):
    _falls(r["losses"])


@example("optim.md/constructing, optimizer.step()", check=_check_losses)
def ex_optim_step(torch):
    optim = torch.optim  # from torch import optim
    model, dataset, loss_fn, _, validate = _setup(torch)
    var1, var2 = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(3))

    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    optimizer2 = optim.Adam([var1, var2], lr=0.0001)

    losses = [validate()]
    for epoch in range(5):
        for input, target in dataset:
            optimizer.zero_grad()
            output = model(input)
            loss = loss_fn(output, target)
            loss.backward()
            optimizer.step()
        losses.append(validate())

    optimizer2.zero_grad()
    ((var1 - 2) ** 2 + (var2 + 1) ** 2).sum().backward()
    optimizer2.step()
    return {"losses": np.array(losses), "parameters": _parameters(model),
            "var1, var2": np.concatenate([_np(var1), _np(var2)])}


# optim.md, "Taking an optimization step" > "optimizer.step(closure)", with SGD and Adam
# (the step(closure) protocol every optimizer takes).
@example("optim.md/optimizer.step(closure)", check=_check_losses)
def ex_optim_step_closure(torch):
    optim = torch.optim
    results = {}
    for name, make in (("SGD", lambda p: optim.SGD(p, lr=0.05, momentum=0.9)),
                       ("Adam", lambda p: optim.Adam(p, lr=0.01))):
        model, dataset, loss_fn, _, validate = _setup(torch)
        optimizer = make(model.parameters())
        losses = [validate()]
        for epoch in range(3):
            for input, target in dataset:
                def closure():
                    optimizer.zero_grad()
                    output = model(input)
                    loss = loss_fn(output, target)
                    loss.backward()
                    return loss
                optimizer.step(closure)
            losses.append(validate())
        results[f"{name} parameters"] = _parameters(model)
        results[f"{name} losses"] = np.array(losses)
    results["losses"] = results["SGD losses"]
    return results


# optim.md, "optimizer.step(closure)" with the optimizer the text names for it: LBFGS
# (its default settings). Each step must lower the loss of the batch it was given.
# The comparison is loose: 5 batches of 2 samples for 15 weights leave LBFGS's history
# ill-conditioned, and a change of 1e-15 in one starting weight moves PyTorch's own final
# weights (up to 90) by 2.4e-4; minigrad's NumPy rounds differently from PyTorch's fused
# multiply-adds and dot products, by an ulp (tests/test_optim_more.py compares iterates
# tightly on well-conditioned problems).
def _check_lbfgs(r):
    before, after = r["batch loss before, after"].T
    assert np.all(after < before), r["batch loss before, after"]


@example(
    "optim.md/optimizer.step(closure) with LBFGS",
    rtol=1e-3,
    atol=1e-6,
    check=_check_lbfgs,
)
def ex_optim_lbfgs(torch):
    model, dataset, loss_fn, _, _ = _setup(torch)
    optimizer = torch.optim.LBFGS(model.parameters())
    pairs = []
    for input, target in dataset:
        def closure():
            optimizer.zero_grad()
            output = model(input)
            loss = loss_fn(output, target)
            loss.backward()
            return loss
        before = optimizer.step(closure).item()
        with torch.no_grad():
            pairs.append((before, loss_fn(model(input), target).item()))
    return {"batch loss before, after": np.array(pairs), "parameters": _parameters(model)}


# optim.md, "Per-parameter options": a group with its own lr, one with the default; and
# weight decay for all but the biases (`self` is the model there, a method's fragment).
def _check_groups(r):
    np.testing.assert_allclose(r["lrs"], [1e-2, 1e-3])
    np.testing.assert_allclose(r["momenta"], [0.9, 0.9])
    np.testing.assert_allclose(r["weight decays"], [1e-2, 0])
    _falls(r["losses"])


@example("optim.md/per-parameter options", check=_check_groups)
def ex_optim_groups(torch):
    optim = torch.optim
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = nn.Linear(4, 5)
            self.classifier = nn.Linear(5, 3)

        def forward(self, x):
            return self.classifier(torch.tanh(self.base(x)))

    _, dataset, loss_fn, _, _ = _setup(torch)
    model = Model().double()
    _fixed_parameters(torch, model, 1)

    optimizer = optim.SGD([
        {'params': model.base.parameters(), 'lr': 1e-2},
        {'params': model.classifier.parameters()}
    ], lr=1e-3, momentum=0.9)

    self = model
    bias_params = [p for name, p in self.named_parameters() if 'bias' in name]
    others = [p for name, p in self.named_parameters() if 'bias' not in name]

    decay = optim.SGD([
        {'params': others},
        {'params': bias_params, 'weight_decay': 0}
    ], weight_decay=1e-2, lr=1e-2)

    def loss_now():
        with torch.no_grad():
            return sum(loss_fn(model(x), y).item() for x, y in dataset)

    losses = [loss_now()]
    for opt in (optimizer, decay):
        for input, target in dataset:
            opt.zero_grad()
            loss_fn(model(input), target).backward()
            opt.step()
        losses.append(loss_now())
    return {
        "lrs": np.array([g["lr"] for g in optimizer.param_groups]),
        "momenta": np.array([g["momentum"] for g in optimizer.param_groups]),
        "weight decays": np.array([g["weight_decay"] for g in decay.param_groups]),
        "losses": np.array(losses),
        "parameters": _parameters(model),
    }


# optim.md, "Constructing it" (named parameters example) and "Per-parameter options"
# with named_parameters(): optimizers over (name, parameter) pairs.
def _check_named(r):
    assert r["param_names"] == ["weight", "bias"]
    _falls(r["losses"])


@example(
    "optim.md/named parameters",
    check=_check_named,
)
def ex_optim_named(torch):
    optim = torch.optim
    model, dataset, loss_fn, _, validate = _setup(torch)
    var1, var2 = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(3))

    optimizer = optim.SGD(model.named_parameters(), lr=0.01, momentum=0.9)
    optimizer2 = optim.Adam([('layer0', var1), ('layer1', var2)], lr=0.0001)

    losses = [validate()]
    for input, target in dataset:
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()
    losses.append(validate())
    return {
        "param_names": list(optimizer.param_groups[0]["param_names"]),
        "names 2": list(optimizer2.param_groups[0]["param_names"]),
        "losses": np.array(losses),
    }


# optim.md, "How to utilize named parameters to load optimizer state dict": the first
# example (OneLayerModel's state loaded into both layers of TwoLayerModel by a
# load_state_dict pre-hook). PATH is a file in a temporary directory; "training.." is
# one step.
def _check_state_hook(r):
    np.testing.assert_allclose(r["fc1 momentum"], r["fc momentum"])
    np.testing.assert_allclose(r["fc2 momentum"], r["fc momentum"])


@example(
    "optim.md/load_state_dict pre-hook with param_names",
    check=_check_state_hook,
)
def ex_optim_state_dict_hook(torch):
    nn = torch.nn
    optim = torch.optim
    deepcopy = copy.deepcopy
    directory = tempfile.TemporaryDirectory()
    PATH = os.path.join(directory.name, "optimizer.pt")

    class OneLayerModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)

        def forward(self, x):
            return self.fc(x)

    model = OneLayerModel()
    optimizer = optim.SGD(model.named_parameters(), lr=0.01, momentum=0.9)
    # training..
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()
    torch.save(optimizer.state_dict(), PATH)

    class TwoLayerModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.fc2 = nn.Linear(3, 4)

        def forward(self, x):
            return (self.fc1(x) + self.fc2(x)) / 2

    model2 = TwoLayerModel()
    # adapt and load model weights..
    optimizer2 = optim.SGD(model2.named_parameters(), lr=0.01, momentum=0.9)

    def adapt_state_dict_ids(optimizer, state_dict):
        adapted_state_dict = deepcopy(optimizer.state_dict())
        # Copy setup parameters (lr, weight_decay, etc.), in case they differ in the loaded state dict.  # noqa: E501
        for k, v in state_dict['param_groups'][0].items():
            if k not in ['params', 'param_names']:
                adapted_state_dict['param_groups'][0][k] = v

        lookup_dict = {
            'fc1.weight': 'fc.weight',
            'fc1.bias': 'fc.bias',
            'fc2.weight': 'fc.weight',
            'fc2.bias': 'fc.bias'
        }
        clone_deepcopy = lambda d: {k: (v.clone() if isinstance(v, torch.Tensor) else deepcopy(v)) for k, v in d.items()}  # noqa: E501
        for param_id, param_name in zip(
                optimizer.state_dict()['param_groups'][0]['params'],
                optimizer.state_dict()['param_groups'][0]['param_names']):
            name_in_loaded = lookup_dict[param_name]
            index_in_loaded_list = state_dict['param_groups'][0]['param_names'].index(name_in_loaded)  # noqa: E501
            id_in_loaded = state_dict['param_groups'][0]['params'][index_in_loaded_list]
            # Copy the state of the corresponding parameter
            if id_in_loaded in state_dict['state']:
                adapted_state_dict['state'][param_id] = clone_deepcopy(state_dict['state'][id_in_loaded])  # noqa: E501

        return adapted_state_dict

    optimizer2.register_load_state_dict_pre_hook(adapt_state_dict_ids)
    optimizer2.load_state_dict(torch.load(PATH)) # The previous optimizer saved state_dict  # noqa: E261,E501
    directory.cleanup()

    def momentum(opt, p):
        # PyTorch keeps tensors in an optimizer's state, minigrad NumPy arrays.
        value = opt.state[p]["momentum_buffer"]
        return _np(value) if hasattr(value, "detach") else np.array(value)

    return {
        "fc momentum": momentum(optimizer, model.fc.weight),
        "fc1 momentum": momentum(optimizer2, model2.fc1.weight),
        "fc2 momentum": momentum(optimizer2, model2.fc2.weight),
    }


# torch/optim/sgd.py, the SGD docstring example.
def _check_sgd_docstring(r):
    assert r["loss after"] < r["loss before"]


@example("optim/SGD docstring", check=_check_sgd_docstring)
def ex_sgd_docstring(torch):
    model, dataset, loss_fn, _, validate = _setup(torch)
    input, target = dataset[0]
    before = loss_fn(model(input), target).item()

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.zero_grad()
    loss_fn(model(input), target).backward()
    optimizer.step()
    return {"loss before": before, "loss after": loss_fn(model(input), target).item(),
            "parameters": _parameters(model)}


# optim.md, "How to adjust learning rate": ExponentialLR(gamma=0.9) stepped once an
# epoch after the optimizer steps, 20 epochs.
def _check_exponential(r):
    np.testing.assert_allclose(r["lr per epoch"], 0.01 * 0.9 ** np.arange(1, 21), rtol=1e-12)
    _falls(r["losses"])


@example("optim.md/adjusting the learning rate (ExponentialLR)", check=_check_exponential)
def ex_optim_exponential(torch):
    optim = torch.optim
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    model, dataset, loss_fn, _, validate = _setup(torch)

    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = ExponentialLR(optimizer, gamma=0.9)

    lrs, losses = [], [validate()]
    for epoch in range(20):
        for input, target in dataset:
            optimizer.zero_grad()
            output = model(input)
            loss = loss_fn(output, target)
            loss.backward()
            optimizer.step()
        scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        losses.append(validate())
    return {"lr per epoch": np.array(lrs), "losses": np.array(losses),
            "parameters": _parameters(model)}


# optim.md, chaining schedulers: ExponentialLR then MultiStepLR(milestones=[30, 80]),
# each stepped every epoch, 20 epochs (the milestones are not reached: only
# ExponentialLR acts, as in the docs' loop).
def _check_chained(r):
    np.testing.assert_allclose(r["lr per epoch"], 0.01 * 0.9 ** np.arange(1, 21), rtol=1e-12)


@example("optim.md/chaining schedulers", check=_check_chained)
def ex_optim_chaining(torch):
    optim = torch.optim
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    MultiStepLR = _from(torch, "optim.lr_scheduler", "MultiStepLR")
    model, dataset, loss_fn, _, _ = _setup(torch)

    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler1 = ExponentialLR(optimizer, gamma=0.9)
    scheduler2 = MultiStepLR(optimizer, milestones=[30,80], gamma=0.1)  # noqa: E231

    lrs = []
    for epoch in range(20):
        for input, target in dataset:
            optimizer.zero_grad()
            output = model(input)
            loss = loss_fn(output, target)
            loss.backward()
            optimizer.step()
        scheduler1.step()
        scheduler2.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return {"lr per epoch": np.array(lrs), "parameters": _parameters(model)}


# The same chaining over 100 epochs, so that MultiStepLR's milestones act (x0.1 at 30
# and at 80 on top of ExponentialLR's 0.9 per epoch). The docs' dataset loop is one step.
def _check_chained_100(r):
    epochs = np.arange(1, 101)
    want = 0.01 * 0.9 ** epochs * np.where(epochs >= 30, 0.1, 1) * np.where(epochs >= 80, 0.1, 1)
    np.testing.assert_allclose(r["lr per epoch"], want, rtol=1e-9)


@example("optim.md/chaining schedulers (100 epochs)", check=_check_chained_100)
def ex_optim_chaining_100(torch):
    optim = torch.optim
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    MultiStepLR = _from(torch, "optim.lr_scheduler", "MultiStepLR")
    model, dataset, loss_fn, _, _ = _setup(torch)
    input, target = dataset[0]

    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler1 = ExponentialLR(optimizer, gamma=0.9)
    scheduler2 = MultiStepLR(optimizer, milestones=[30,80], gamma=0.1)  # noqa: E231

    lrs = []
    for epoch in range(100):
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()
        scheduler1.step()
        scheduler2.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return {"lr per epoch": np.array(lrs)}


# optim.md, "Putting it all together: SWA" and "... EMA" (torch.optim.swa_utils). The
# loader is _setup's dataset; 20 epochs instead of 300, SWA from epoch 10 instead of
# 160; the model has no batch norm, so update_bn changes nothing.
def _check_swa(r):
    assert r["preds"].shape == (2, 3) and r["ema preds"].shape == (2, 3)


@example(
    "optim.md/SWA and EMA (swa_utils)",
    check=_check_swa,
)
def ex_optim_swa(torch):
    SWALR = _from(torch, "optim.swa_utils", "SWALR")
    model, loader, loss_fn, _, _ = _setup(torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    test_input = loader[0][0]

    swa_model = torch.optim.swa_utils.AveragedModel(model)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=300)
    swa_start = 10
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)

    for epoch in range(20):
        for input, target in loader:
            optimizer.zero_grad()
            loss_fn(model(input), target).backward()
            optimizer.step()
        if epoch > swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()

    # Update bn statistics for the swa_model at the end
    torch.optim.swa_utils.update_bn(loader, swa_model)
    # Use swa_model to make predictions on test data
    preds = swa_model(test_input)

    model, loader, loss_fn, _, _ = _setup(torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ema_model = torch.optim.swa_utils.AveragedModel(model, \
                multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999))

    for epoch in range(20):
        for input, target in loader:
            optimizer.zero_grad()
            loss_fn(model(input), target).backward()
            optimizer.step()
            ema_model.update_parameters(model)

    # Update bn statistics for the ema_model at the end
    torch.optim.swa_utils.update_bn(loader, ema_model)
    # Use ema_model to make predictions on test data
    ema_preds = ema_model(test_input)
    return {"preds": _np(preds), "ema preds": _np(ema_preds)}


# --------------------------------------------------------------------------------------
# torch/optim/lr_scheduler.py, the docstring examples. Each runs `for epoch in range(100):
# train(...); validate(...); scheduler.step()` as written and records the learning rate
# of every group after each epoch; the check holds it to the values the docstring's
# comments state ("Assuming optimizer uses lr = 0.05 for all groups").
def _schedule(torch, lr=0.05, groups=1, momentum=0.0):
    """The optimizer the docstrings assume, and their train/validate placeholders."""
    model, dataset, loss_fn, train_step, validate = _setup(torch)
    if groups == 1:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    else:
        optimizer = torch.optim.SGD(
            [{"params": [model.weight]}, {"params": [model.bias]}], lr=lr, momentum=momentum
        )
    lrs = []

    def train(*args):  # one step: the schedule is what is compared
        input, target = dataset[0]
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()

    def record():
        lrs.append([group["lr"] for group in optimizer.param_groups])

    return optimizer, train, validate, record, lrs


def _epochs(r):
    return np.asarray(r["lr per epoch"])[:, 0]


def _check_lambda(r):
    epoch = np.arange(1, 101)
    np.testing.assert_allclose(r["lr per epoch"][:, 0], 0.05 * (epoch // 30))
    np.testing.assert_allclose(r["lr per epoch"][:, 1], 0.05 * 0.95**epoch, rtol=1e-12)
    np.testing.assert_allclose(r["single lambda"], 0.05 * (epoch // 30))


@example("lr_scheduler/LambdaLR", check=_check_lambda)
def ex_lambda_lr(torch):
    LambdaLR = _from(torch, "optim.lr_scheduler", "LambdaLR")
    optimizer, train, validate, record, lrs = _schedule(torch, groups=2)

    # Assuming optimizer has two groups.
    num_epochs = 100
    lambda1 = lambda epoch: epoch // 30
    lambda2 = lambda epoch: 0.95**epoch
    scheduler = LambdaLR(optimizer, lr_lambda=[lambda1, lambda2])
    for epoch in range(num_epochs):
        train(...)
        validate(...)
        scheduler.step()
        record()
    results = {"lr per epoch": np.array(lrs)}

    opt, train, validate, record, lrs = _schedule(torch)  # `opt`, as the docstring names it
    # Alternatively, you can use a single lambda function for all groups.
    scheduler = LambdaLR(opt, lr_lambda=lambda epoch: epoch // 30)
    for epoch in range(num_epochs):
        train(...)
        validate(...)
        scheduler.step()
        record()
    results["single lambda"] = np.array(lrs)[:, 0]
    return results


def _check_step_lr(r):
    epoch = np.arange(1, 101)
    np.testing.assert_allclose(_epochs(r), 0.05 * 0.1 ** (epoch // 30), rtol=1e-12)


@example("lr_scheduler/StepLR", check=_check_step_lr)
def ex_step_lr(torch):
    StepLR = _from(torch, "optim.lr_scheduler", "StepLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.05     if epoch < 30
    # lr = 0.005    if 30 <= epoch < 60
    # lr = 0.0005   if 60 <= epoch < 90
    # ...
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs), "get_last_lr": np.array(scheduler.get_last_lr())}


def _check_multistep(r):
    epoch = np.arange(1, 101)
    want = 0.05 * np.where(epoch >= 30, 0.1, 1) * np.where(epoch >= 80, 0.1, 1)
    np.testing.assert_allclose(_epochs(r), want, rtol=1e-12)


@example("lr_scheduler/MultiStepLR", check=_check_multistep)
def ex_multistep_lr(torch):
    MultiStepLR = _from(torch, "optim.lr_scheduler", "MultiStepLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.05     if epoch < 30
    # lr = 0.005    if 30 <= epoch < 80
    # lr = 0.0005   if epoch >= 80
    scheduler = MultiStepLR(optimizer, milestones=[30, 80], gamma=0.1)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_exponential_lr(r):
    np.testing.assert_allclose(_epochs(r), 0.05 * 0.95 ** np.arange(1, 101), rtol=1e-12)


@example("lr_scheduler/ExponentialLR", check=_check_exponential_lr)
def ex_exponential_lr(torch):
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    scheduler = ExponentialLR(optimizer, gamma=0.95)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_cosine(r):
    epoch = np.arange(1, 101)
    np.testing.assert_allclose(
        _epochs(r), 0.05 * (1 + np.cos(np.pi * epoch / 100)) / 2, rtol=1e-9, atol=1e-15
    )


@example("lr_scheduler/CosineAnnealingLR", rtol=1e-9, atol=1e-15, check=_check_cosine)
def ex_cosine_lr(torch):
    CosineAnnealingLR = _from(torch, "optim.lr_scheduler", "CosineAnnealingLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    num_epochs = 100
    scheduler = CosineAnnealingLR(optimizer, T_max=num_epochs)
    for epoch in range(num_epochs):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_plateau(r):
    lrs = _epochs(r)
    assert lrs[0] == 0.1 and np.all(np.diff(lrs) <= 0)


@example("lr_scheduler/ReduceLROnPlateau", check=_check_plateau)
def ex_reduce_on_plateau(torch):
    ReduceLROnPlateau = _from(torch, "optim.lr_scheduler", "ReduceLROnPlateau")
    model, _, _, train_step, validate = _setup(torch)
    train = lambda *args: train_step(optimizer)
    lrs = []

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = ReduceLROnPlateau(optimizer, "min")
    for epoch in range(10):
        train(...)
        val_loss = validate(...)
        # Note that step should be called after validate()
        scheduler.step(val_loss)
        lrs.append([optimizer.param_groups[0]["lr"]])
    return {"lr per epoch": np.array(lrs), "parameters": _parameters(model)}


# The docstring examples of the other schedulers.
def _check_multiplicative(r):
    np.testing.assert_allclose(_epochs(r), 0.05 * 0.95 ** np.arange(1, 101), rtol=1e-12)


@example(
    "lr_scheduler/MultiplicativeLR",
    check=_check_multiplicative,
)
def ex_multiplicative_lr(torch):
    MultiplicativeLR = _from(torch, "optim.lr_scheduler", "MultiplicativeLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    lmbda = lambda epoch: 0.95
    scheduler = MultiplicativeLR(optimizer, lr_lambda=lmbda)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_constant(r):
    epoch = np.arange(1, 101)
    np.testing.assert_allclose(_epochs(r), np.where(epoch < 40, 0.025, 0.05), rtol=1e-12)


@example(
    "lr_scheduler/ConstantLR",
    check=_check_constant,
)
def ex_constant_lr(torch):
    ConstantLR = _from(torch, "optim.lr_scheduler", "ConstantLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.025   if epoch == 0
    # lr = 0.025   if epoch == 1
    # lr = 0.025   if epoch == 2
    # lr = 0.025   if epoch == 3
    # ...
    # lr = 0.05    if epoch >= 40
    scheduler = ConstantLR(optimizer, factor=0.5, total_iters=40)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_linear(r):
    epoch = np.arange(1, 101)
    want = 0.05 * (0.05 + (1 - 0.05) * np.minimum(epoch, 40) / 40)
    np.testing.assert_allclose(_epochs(r), want, rtol=1e-9)


@example(
    "lr_scheduler/LinearLR",
    rtol=1e-9,
    check=_check_linear,
)
def ex_linear_lr(torch):
    LinearLR = _from(torch, "optim.lr_scheduler", "LinearLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.003687  if epoch == 0
    # lr = 0.004875  if epoch == 1
    # lr = 0.006062  if epoch == 2
    # lr = 0.00725   if epoch == 3
    # ...
    # lr = 0.05      if epoch >= 40
    scheduler = LinearLR(optimizer, start_factor=0.05, total_iters=40)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_sequential(r):
    epoch = np.arange(1, 101)
    want = np.where(epoch < 20, 0.005, 0.05 * 0.9 ** np.maximum(epoch - 20, 0))
    np.testing.assert_allclose(_epochs(r), want, rtol=1e-9)


@example(
    "lr_scheduler/SequentialLR",
    rtol=1e-9,
    check=_check_sequential,
)
def ex_sequential_lr(torch):
    ConstantLR = _from(torch, "optim.lr_scheduler", "ConstantLR")
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    SequentialLR = _from(torch, "optim.lr_scheduler", "SequentialLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.005     if epoch == 0
    # lr = 0.005     if epoch == 1
    # lr = 0.005     if epoch == 2
    # ...
    # lr = 0.05      if epoch == 20
    # lr = 0.045     if epoch == 21
    # lr = 0.0405    if epoch == 22
    scheduler1 = ConstantLR(optimizer, factor=0.1, total_iters=20)
    scheduler2 = ExponentialLR(optimizer, gamma=0.9)
    scheduler = SequentialLR(
        optimizer,
        schedulers=[scheduler1, scheduler2],
        milestones=[20],
    )
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_polynomial(r):
    epoch = np.arange(1, 101)
    want = 0.05 * (1 - np.minimum(epoch, 50) / 50) ** 0.9
    np.testing.assert_allclose(_epochs(r), want, rtol=1e-9, atol=1e-15)


@example(
    "lr_scheduler/PolynomialLR",
    rtol=1e-9,
    atol=1e-15,
    check=_check_polynomial,
)
def ex_polynomial_lr(torch):
    PolynomialLR = _from(torch, "optim.lr_scheduler", "PolynomialLR")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.0490   if epoch == 0
    # lr = 0.0481   if epoch == 1
    # lr = 0.0472   if epoch == 2
    # ...
    # lr = 0.0      if epoch >= 50
    scheduler = PolynomialLR(optimizer, total_iters=50, power=0.9)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_chained_scheduler(r):
    epoch = np.arange(1, 101)
    want = 0.05 * 0.9**epoch * np.where(epoch < 20, 0.1, 1)
    np.testing.assert_allclose(_epochs(r), want, rtol=1e-9)


@example(
    "lr_scheduler/ChainedScheduler",
    rtol=1e-9,
    check=_check_chained_scheduler,
)
def ex_chained_scheduler(torch):
    ConstantLR = _from(torch, "optim.lr_scheduler", "ConstantLR")
    ExponentialLR = _from(torch, "optim.lr_scheduler", "ExponentialLR")
    ChainedScheduler = _from(torch, "optim.lr_scheduler", "ChainedScheduler")
    optimizer, train, validate, record, lrs = _schedule(torch)

    # Assuming optimizer uses lr = 0.05 for all groups
    # lr = 0.05      if epoch == 0
    # lr = 0.0450    if epoch == 1
    # lr = 0.0405    if epoch == 2
    # ...
    # lr = 0.00675   if epoch == 19
    # lr = 0.06078   if epoch == 20
    # lr = 0.05470   if epoch == 21
    scheduler1 = ConstantLR(optimizer, factor=0.1, total_iters=20)
    scheduler2 = ExponentialLR(optimizer, gamma=0.9)
    scheduler = ChainedScheduler([scheduler1, scheduler2], optimizer=optimizer)
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        record()
    return {"lr per epoch": np.array(lrs)}


def _check_cyclic(r):
    lrs = _epochs(r)
    assert np.isclose(lrs.min(), 0.01) and np.isclose(lrs.max(), 0.1)


@example(
    "lr_scheduler/CyclicLR",
    rtol=1e-9,
    check=_check_cyclic,
)
def ex_cyclic_lr(torch):
    model, data_loader, loss_fn, _, _ = _setup(torch)
    lrs = []

    def train_batch(*args):
        input, target = batch
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CyclicLR(
        optimizer,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=10,
    )
    for epoch in range(10):
        for batch in data_loader:
            train_batch(...)
            scheduler.step()
            lrs.append([optimizer.param_groups[0]["lr"]])
    return {"lr per epoch": np.array(lrs)}


def _check_warm_restarts(r):
    lrs = _epochs(r)
    epoch = np.arange(1, 101) % 20
    np.testing.assert_allclose(lrs, 0.05 * (1 + np.cos(np.pi * epoch / 20)) / 2, rtol=1e-9)


@example(
    "lr_scheduler/CosineAnnealingWarmRestarts",
    rtol=1e-9,
    check=_check_warm_restarts,
)
def ex_warm_restarts(torch):
    model, dataset, loss_fn, _, validate = _setup(torch)
    lrs = []

    def train(*args):  # one step: the schedule is what is compared
        input, target = dataset[0]
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()

    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        optimizer, T_0=20
    )
    for epoch in range(100):
        train(...)
        validate(...)
        scheduler.step()
        lrs.append([optimizer.param_groups[0]["lr"]])
    return {"lr per epoch": np.array(lrs)}


def _check_one_cycle(r):
    lrs = _epochs(r)
    assert np.isclose(lrs.max(), 0.01) and lrs.min() < 1e-6


@example(
    "lr_scheduler/OneCycleLR",
    rtol=1e-9,
    check=_check_one_cycle,
)
def ex_one_cycle(torch):
    model, data_loader, loss_fn, _, _ = _setup(torch)
    lrs = []

    def train_batch(*args):
        input, target = batch
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()

    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=0.01, steps_per_epoch=len(data_loader), epochs=10
    )
    for epoch in range(10):
        for batch in data_loader:
            train_batch(...)
            optimizer.step()
            scheduler.step()
            lrs.append([optimizer.param_groups[0]["lr"]])
    return {"lr per epoch": np.array(lrs)}


# --------------------------------------------------------------------------------------
# torch/autograd/functional.py, the docstring examples. The inputs drawn with torch.rand
# are replaced by NumPy values; the checks are the closed forms of the derivatives.
def _check_vjp(r):
    x = r["inputs"]
    np.testing.assert_allclose(r["vjp"], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(r["output"], np.exp(x).sum(axis=1), rtol=1e-6)
    assert r["create_graph has a graph"] is True
    np.testing.assert_allclose(r["adder vjp"], [[2, 2], [3, 3]])


@example("autograd.functional/vjp", rtol=1e-5, atol=1e-7, check=_check_vjp)
def ex_vjp(torch):
    vjp = _from(torch, "autograd.functional", "vjp")
    rng = np.random.default_rng(200)

    def exp_reducer(x):
        return x.exp().sum(dim=1)
    inputs = torch.rand(4, 4)
    inputs = _same(torch, inputs, rng.random((4, 4)))
    v = torch.ones(4)
    output, grad = vjp(exp_reducer, inputs, v)
    graph_output, graph_grad = vjp(exp_reducer, inputs, v, create_graph=True)
    results = {
        "inputs": _np(inputs),
        "output": _np(output),
        "vjp": _np(grad),
        "create_graph has a graph": graph_grad.grad_fn is not None,
    }

    def adder(x, y):
        return 2 * x + 3 * y
    inputs = (torch.rand(2), torch.rand(2))
    v = torch.ones(2)
    _, adder_grads = vjp(adder, inputs, v)
    results["adder vjp"] = np.stack([_np(g) for g in adder_grads])
    return results


def _check_jvp(r):
    x = r["inputs"]
    np.testing.assert_allclose(r["jvp"], np.exp(x).sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(r["adder jvp"], [5, 5])


@example("autograd.functional/jvp", rtol=1e-5, atol=1e-7, check=_check_jvp)
def ex_jvp(torch):
    jvp = _from(torch, "autograd.functional", "jvp")
    rng = np.random.default_rng(201)

    def exp_reducer(x):
        return x.exp().sum(dim=1)
    inputs = torch.rand(4, 4)
    inputs = _same(torch, inputs, rng.random((4, 4)))
    v = torch.ones(4, 4)
    output, tangent = jvp(exp_reducer, inputs, v)
    jvp(exp_reducer, inputs, v, create_graph=True)
    results = {"inputs": _np(inputs), "output": _np(output), "jvp": _np(tangent)}

    def adder(x, y):
        return 2 * x + 3 * y
    inputs = (torch.rand(2), torch.rand(2))
    v = (torch.ones(2), torch.ones(2))
    _, adder_tangent = jvp(adder, inputs, v)
    results["adder jvp"] = _np(adder_tangent)
    return results


def _check_jacobian(r):
    x = r["inputs"]
    want = np.zeros((2, 2, 2))
    want[0, 0], want[1, 1] = np.exp(x[0]), np.exp(x[1])
    np.testing.assert_allclose(r["jacobian"], want, rtol=1e-6)
    np.testing.assert_allclose(r["create_graph"], want, rtol=1e-6)
    assert r["create_graph has a graph"] is True
    np.testing.assert_allclose(r["exp_adder dx"], np.diag(2 * np.exp(r["exp_adder x"])), rtol=1e-6)
    np.testing.assert_allclose(r["exp_adder dy"], 3 * np.eye(2))
    np.testing.assert_array_equal(r["jac.shape"], [4, 2, 4, 2])
    W = np.array([[2.0, -1.0], [0.0, 1.0]])
    np.testing.assert_allclose(r["linear_model jac"], np.einsum("ik,jl->ijkl", np.eye(4), W))


@example("autograd.functional/jacobian", rtol=1e-5, atol=1e-7, check=_check_jacobian)
def ex_jacobian(torch):
    jacobian = _from(torch, "autograd.functional", "jacobian")
    rng = np.random.default_rng(202)

    def exp_reducer(x):
        return x.exp().sum(dim=1)
    inputs = torch.rand(2, 2)
    inputs = _same(torch, inputs, rng.random((2, 2)))
    jac = jacobian(exp_reducer, inputs)
    graph_jac = jacobian(exp_reducer, inputs, create_graph=True)
    results = {
        "inputs": _np(inputs),
        "jacobian": _np(jac),
        "create_graph": _np(graph_jac),
        "create_graph has a graph": graph_jac.grad_fn is not None,
    }

    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y
    inputs = (torch.rand(2), torch.rand(2))
    inputs = tuple(_same(torch, t, rng.random(2)) for t in inputs)
    dx, dy = jacobian(exp_adder, inputs)
    results.update({"exp_adder x": _np(inputs[0]), "exp_adder dx": _np(dx),
                    "exp_adder dy": _np(dy)})

    def linear_model(x):
        W = torch.tensor([[2.0, -1.0], [0.0, 1.0]])
        b = torch.tensor([1.0, 0.5])
        return x @ W.T + b

    x = torch.randn(4, 2, requires_grad=True)
    jac = jacobian(linear_model, x, vectorize=True)
    jac.shape
    results["jac.shape"] = np.array(jac.shape)
    results["linear_model jac"] = _np(jac)
    return results


def _check_hessian(r):
    x = r["inputs"]
    want = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            want[i, j, i, j] = 6 * x[i, j]
    np.testing.assert_allclose(r["hessian"], want, rtol=1e-6)
    np.testing.assert_allclose(r["create_graph"], want, rtol=1e-6)
    blocks = r["pow_adder_reducer hessian"]
    np.testing.assert_allclose(blocks[0][0], 4 * np.eye(2))
    np.testing.assert_allclose(blocks[0][1], np.zeros((2, 2)))
    np.testing.assert_allclose(blocks[1][0], np.zeros((2, 2)))
    np.testing.assert_allclose(blocks[1][1], 6 * np.eye(2))


@example("autograd.functional/hessian", rtol=1e-5, atol=1e-7, check=_check_hessian)
def ex_hessian(torch):
    hessian = _from(torch, "autograd.functional", "hessian")
    rng = np.random.default_rng(203)

    def pow_reducer(x):
        return x.pow(3).sum()
    inputs = torch.rand(2, 2)
    inputs = _same(torch, inputs, rng.random((2, 2)))
    h = hessian(pow_reducer, inputs)
    graph_h = hessian(pow_reducer, inputs, create_graph=True)
    results = {"inputs": _np(inputs), "hessian": _np(h), "create_graph": _np(graph_h)}

    def pow_adder_reducer(x, y):
        return (2 * x.pow(2) + 3 * y.pow(2)).sum()
    inputs = (torch.rand(2), torch.rand(2))
    h = hessian(pow_adder_reducer, inputs)
    results["pow_adder_reducer hessian"] = np.array([[_np(b) for b in row] for row in h])
    return results


def _check_vhp_hvp(r):
    x = r["inputs"]
    for name in ("vhp", "hvp"):
        np.testing.assert_allclose(r[name], 6 * x, rtol=1e-6)  # H v with v = ones
        np.testing.assert_allclose(r[name + " output"], (x**3).sum(), rtol=1e-6)
        np.testing.assert_allclose(r[name + " adder"], [np.zeros(2), 6 * np.ones(2)])


def _vhp_hvp(torch, name, seed):
    fn = _from(torch, "autograd.functional", name)
    rng = np.random.default_rng(seed)

    def pow_reducer(x):
        return x.pow(3).sum()
    inputs = torch.rand(2, 2)
    inputs = _same(torch, inputs, rng.random((2, 2)))
    v = torch.ones(2, 2)
    output, product = fn(pow_reducer, inputs, v)
    fn(pow_reducer, inputs, v, create_graph=True)
    results = {"inputs": _np(inputs), name: _np(product), name + " output": _np(output)}

    def pow_adder_reducer(x, y):
        return (2 * x.pow(2) + 3 * y.pow(2)).sum()
    inputs = (torch.rand(2), torch.rand(2))
    v = (torch.zeros(2), torch.ones(2))
    _, products = fn(pow_adder_reducer, inputs, v)
    results[name + " adder"] = np.stack([_np(p) for p in products])
    return results


@example("autograd.functional/vhp and hvp", rtol=1e-5, atol=1e-7, check=_check_vhp_hvp)
def ex_vhp_hvp(torch):
    results = _vhp_hvp(torch, "vhp", 204)
    results.update({k: v for k, v in _vhp_hvp(torch, "hvp", 204).items() if k != "inputs"})
    return results


# --------------------------------------------------------------------------------------
# torch/utils/checkpoint.py: checkpoint_sequential's docstring example
# (`model = nn.Sequential(...)`, chunks and input_var chosen here), and checkpoint() as
# its docstring describes it. Both are compared with the same model run without
# checkpointing: the same output and the same gradients.
def _check_checkpoint(r):
    for key in ("output", "input grad", "parameter grads"):
        np.testing.assert_allclose(r["checkpointed " + key], r["plain " + key], rtol=1e-12)


def _checkpoint_model(torch):
    nn = torch.nn
    model = nn.Sequential(
        nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)
    ).double()
    _fixed_parameters(torch, model, 300)
    return model


def _run_and_grads(torch, model, run, input_values):
    input_var = torch.tensor(input_values, requires_grad=True)
    out = run(model, input_var)
    (out ** 2).sum().backward()
    grads = np.concatenate([_np(p.grad).ravel() for p in model.parameters()])
    model.zero_grad()
    return _np(out), _np(input_var.grad), grads


@example("utils.checkpoint/checkpoint_sequential", check=_check_checkpoint)
def ex_checkpoint_sequential(torch):
    checkpoint_sequential = _from(torch, "utils.checkpoint", "checkpoint_sequential")
    model = _checkpoint_model(torch)
    chunks = 2
    values = np.random.default_rng(301).standard_normal((3, 4))

    def checkpointed(model, input_var):
        input_var = checkpoint_sequential(model, chunks, input_var, use_reentrant=False)
        return input_var

    plain = _run_and_grads(torch, model, lambda m, x: m(x), values)
    ours = _run_and_grads(torch, model, checkpointed, values)
    keys = ("output", "input grad", "parameter grads")
    results = {"plain " + k: v for k, v in zip(keys, plain)}
    results.update({"checkpointed " + k: v for k, v in zip(keys, ours)})
    return results


@example("utils.checkpoint/checkpoint", check=_check_checkpoint)
def ex_checkpoint(torch):
    checkpoint = _from(torch, "utils.checkpoint", "checkpoint")
    model = _checkpoint_model(torch)
    values = np.random.default_rng(302).standard_normal((3, 4))

    def checkpointed(model, x):
        h = checkpoint(model[:3], x, use_reentrant=False)
        return checkpoint(model[3:], h, use_reentrant=True)

    plain = _run_and_grads(torch, model, lambda m, x: m(x), values)
    ours = _run_and_grads(torch, model, checkpointed, values)
    keys = ("output", "input grad", "parameter grads")
    results = {"plain " + k: v for k, v in zip(keys, plain)}
    results.update({"checkpointed " + k: v for k, v in zip(keys, ours)})
    return results


# --------------------------------------------------------------------------------------
# torch/nn/utils/clip_grad.py and convert_parameters.py, run as their docstrings describe
# them: clip_grad_norm_ returns the total norm of the gradients (as one vector) and
# scales them to max_norm; clip_grad_value_ clamps each to [-clip_value, clip_value];
# parameters_to_vector flattens the parameters into one vector, vector_to_parameters
# copies a vector back. The clipping sits in a training step, as amp_examples.rst's
# "Gradient clipping" places it (between backward and step).
def _check_clip(r):
    grads = r["grads before"]
    total = np.sqrt((grads**2).sum())
    np.testing.assert_allclose(r["total norm"], total, rtol=1e-12)
    np.testing.assert_allclose(r["grads after norm clip"], grads * 0.5 / (total + 1e-6), rtol=1e-9)
    np.testing.assert_allclose(r["inf norm"], np.abs(grads).max(), rtol=1e-12)
    np.testing.assert_allclose(r["grads after value clip"], np.clip(grads, -0.1, 0.1))
    np.testing.assert_allclose(r["vector"], r["parameters"])
    np.testing.assert_allclose(r["parameters after vector_to_parameters"], 2 * r["parameters"])
    _falls(r["losses"])


@example("nn.utils/clip_grad and parameters_to_vector", check=_check_clip)
def ex_nn_utils(torch):
    nn = torch.nn
    model, dataset, loss_fn, _, validate = _setup(torch)
    input, target = dataset[0]

    def grads():
        return np.concatenate([_np(p.grad).ravel() for p in model.parameters()])

    model.zero_grad()
    loss_fn(model(input), target).backward()
    results = {"grads before": grads()}
    total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    results["total norm"] = total_norm.item()
    results["grads after norm clip"] = grads()

    model.zero_grad()
    loss_fn(model(input), target).backward()
    results["inf norm"] = nn.utils.clip_grad_norm_(
        model.parameters(), max_norm=1e9, norm_type=float("inf")
    ).item()
    nn.utils.clip_grad_value_(model.parameters(), clip_value=0.1)
    results["grads after value clip"] = grads()

    # A training step with clipping between backward and step.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = [validate()]
    for epoch in range(3):
        for input, target in dataset:
            optimizer.zero_grad()
            loss = loss_fn(model(input), target)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
        losses.append(validate())
    results["losses"] = np.array(losses)

    vec = nn.utils.parameters_to_vector(model.parameters())
    results["vector"] = _np(vec)
    results["parameters"] = _parameters(model)
    nn.utils.vector_to_parameters(vec * 2, model.parameters())
    results["parameters after vector_to_parameters"] = _parameters(model)
    return results


# --------------------------------------------------------------------------------------
# The tests.


(
    test_every_example_checks_something,
    test_example_runs_with_minigrad,
    test_example_matches_pytorch,
) = EXAMPLES.tests(torch)

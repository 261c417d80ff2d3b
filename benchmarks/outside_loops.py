"""minigrad.compile on training loops written from outside: the idioms of pytorch/examples
(mnist, vae, dcgan, word_language_model, regression) and PyTorch's tutorials, with the
things users really do between and inside calls of a compiled training step: changing a
config dict, a module-level constant, a submodule, the learning rate, freezing layers,
reseeding, random data augmentation in Python, keeping gradient tensors, EMA weights,
hand-made BatchNorm buffers, hooks, schedulers, early stopping, ...

Each `loop_NAME(compiled)` runs eagerly or with `step = torch.compile(train_step)`; nothing
else changes between the two runs. The harness (benchmarks/real_loops.py: measure,
print_table) requires the losses, final parameters and every "extra" kept value to be equal
bit for bit, and reports whether each compiled step replays or why it falls back.

PyTorch names these loops would use that minigrad lacks (the loops use the alternative
given in brackets):
- Module.register_forward_hook / register_forward_pre_hook (the forward-hook loop wraps
  the instance's `forward` itself and removes the wrapper with a handle);
- Tensor.bernoulli_ (the denoising loop uses Tensor.normal_);
- Tensor.data returns a numpy array, not a Tensor, so `p.data.add_(...)` and
  `p.data.clamp_(...)` fail (the loops use `with torch.no_grad(): p.add_(...)`);
- nn.BatchNorm1d, F.batch_norm (hand-written BatchNorm modules, as the brief asks anyway);
- nn.RNN / nn.LSTM / nn.GRU (a hand-written tanh RNN cell);
- nn.Conv2d / nn.MaxPool2d (the "mnist" loop flattens 8x8 images into an MLP);
- optim.Adadelta, the mnist example's optimizer (Adagrad instead);
- lr_scheduler.OneCycleLR, CyclicLR, CosineAnnealingWarmRestarts (SequentialLR of LinearLR
  and CosineAnnealingLR);
- nn.init.xavier_uniform_ / kaiming_normal_ / orthogonal_ (nn.init.normal_ / uniform_);
- torch.lerp / Tensor.lerp_ (mul_().add_(alpha=) for EMA), torch.Generator,
  torch.get_rng_state / set_rng_state, torch.bernoulli;
- nn.utils.weight_norm / spectral_norm; nn.SmoothL1Loss (F.smooth_l1_loss exists);
- Tensor % int and Tensor // int (no __mod__ / __floordiv__), torch.remainder, torch.fmod,
  torch.floor_divide (labels computed through numpy);
- not a missing name but a difference: zero_grad(set_to_none=False) does not keep one .grad
  tensor refilled in place; each backward leaves a new .grad object.

    python benchmarks/outside_loops.py            # 5 repeats per loop
    python benchmarks/outside_loops.py --quick    # 3 repeats per loop
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import real_loops
from real_loops import final_params, make_classification, make_regression, timed

import minigrad as torch
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import optim
from minigrad.compiler import CompileFallbackWarning

SEED = 0
FEATURES = 20
CLASSES = 4
BATCH = 32

LoopResult = dict[str, Any]


def minibatches(x: torch.Tensor, y: torch.Tensor, size: int = BATCH) -> list[tuple]:
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(x), size)]


def mlp(inp: int = FEATURES, hidden: int = 32, out: int = CLASSES) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, out))


def params_of(*modules: nn.Module) -> list[np.ndarray]:
    found = []
    for module in modules:
        found.extend(final_params(module))
    return found


# ------------------------------------------------------------------ GANs


def loop_gan_two_steps(compiled: bool) -> LoopResult:
    """DCGAN's loop on 8-d points: d_step and g_step both compiled, sharing netD; labels
    torch.ones/torch.zeros and the noise torch.randn made inside the steps."""
    torch.manual_seed(SEED)
    nz = 4
    real_data = torch.randn(192, 8) * 0.5 + 2.0
    netG = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, 8))
    netD = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))

    def d_step(real: torch.Tensor) -> tuple[float, float]:
        netD.zero_grad()
        n = real.shape[0]
        output = netD(real)
        errD_real = criterion(output, torch.ones(n, 1))
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.randn(n, nz)
        fake = netG(noise)
        output = netD(fake.detach())
        errD_fake = criterion(output, torch.zeros(n, 1))
        errD_fake.backward()
        optimizerD.step()
        return (errD_real + errD_fake).item(), D_x

    def g_step(n: int) -> float:
        netG.zero_grad()
        noise = torch.randn(n, nz)
        output = netD(netG(noise))
        errG = criterion(output, torch.ones(n, 1))
        errG.backward()
        optimizerG.step()
        return errG.item()

    d = timed(torch.compile(d_step) if compiled else d_step)
    g = timed(torch.compile(g_step) if compiled else g_step)
    losses, dx = [], []
    for _epoch in range(5):
        for i in range(0, len(real_data), BATCH):
            errD, D_x = d(real_data[i : i + BATCH])
            losses += [errD, g(BATCH)]
            dx.append(D_x)
    return {"losses": losses, "params": params_of(netG, netD), "step": d,
            "other_steps": {"g_step": g}, "extra": {"D_x": dx}}


def loop_dcgan_fake_passed_between_steps(compiled: bool) -> LoopResult:
    """DCGAN exactly as written: the fake batch made in the D step (returned from it) is
    fed to the G step, whose backward goes through the generator graph of the other call;
    label smoothing with torch.full."""
    torch.manual_seed(SEED)
    nz = 6
    real_data = torch.tanh(torch.randn(160, 10) + 1.0)
    netG = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, 10), nn.Tanh())
    netD = nn.Sequential(nn.Linear(10, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.999))
    real_label, fake_label = 0.9, 0.0

    def d_step(real: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        optimizerD.zero_grad()
        n = real.size(0)
        label = torch.full((n, 1), real_label)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(torch.randn(n, nz))
        label = torch.full((n, 1), fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        return errD_real + errD_fake, fake

    def g_step(fake: torch.Tensor) -> torch.Tensor:
        optimizerG.zero_grad()
        errG = criterion(netD(fake), torch.full((fake.size(0), 1), real_label))
        errG.backward()
        optimizerG.step()
        return errG

    d = timed(torch.compile(d_step) if compiled else d_step)
    g = timed(torch.compile(g_step) if compiled else g_step)
    losses = []
    for _epoch in range(5):
        for i in range(0, len(real_data), BATCH):
            errD, fake = d(real_data[i : i + BATCH])
            errG = g(fake)
            losses += [errD.item(), errG.item()]
    return {"losses": losses, "params": params_of(netG, netD), "step": d,
            "other_steps": {"g_step": g}}


def loop_wgan_clamp_between_calls(compiled: bool) -> LoopResult:
    """WGAN: n_critic critic steps per generator step, RMSprop, and the critic's weights
    clamped in place (under no_grad) after every critic call, outside the step."""
    torch.manual_seed(SEED)
    nz, clip, n_critic = 4, 0.05, 3
    real_data = torch.randn(256, 6) * 0.3 - 1.0
    netG = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, 6))
    netD = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    optD = optim.RMSprop(netD.parameters(), lr=5e-3)
    optG = optim.RMSprop(netG.parameters(), lr=5e-3)

    def critic_step(real: torch.Tensor) -> torch.Tensor:
        optD.zero_grad()
        fake = netG(torch.randn(real.shape[0], nz)).detach()
        loss = -(netD(real).mean() - netD(fake).mean())
        loss.backward()
        optD.step()
        return loss

    def gen_step() -> torch.Tensor:
        optG.zero_grad()
        loss = -netD(netG(torch.randn(BATCH, nz))).mean()
        loss.backward()
        optG.step()
        return loss

    c = timed(torch.compile(critic_step) if compiled else critic_step)
    g = timed(torch.compile(gen_step) if compiled else gen_step)
    losses = []
    calls = 0
    for _epoch in range(3):
        for i in range(0, len(real_data), BATCH):
            losses.append(c(real_data[i : i + BATCH]).item())
            with torch.no_grad():
                for p in netD.parameters():
                    p.clamp_(-clip, clip)
            calls += 1
            if calls % n_critic == 0:
                losses.append(g().item())
    return {"losses": losses, "params": params_of(netG, netD), "step": c,
            "other_steps": {"gen_step": g}}


# ------------------------------------------------------------------ autoencoders


class VAE(nn.Module):
    """pytorch/examples/vae, shrunk: fc1 -> (fc21, fc22) -> reparameterize -> fc3 -> fc4."""

    def __init__(self, d: int = 24, h: int = 32, z: int = 4) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc21 = nn.Linear(h, z)
        self.fc22 = nn.Linear(h, z)
        self.fc3 = nn.Linear(z, h)
        self.fc4 = nn.Linear(h, d)

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def vae_loss(recon_x: torch.Tensor, x: torch.Tensor, mu: torch.Tensor,
             logvar: torch.Tensor) -> torch.Tensor:
    BCE = F.binary_cross_entropy(recon_x, x, reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def loop_vae_reparameterize(compiled: bool) -> LoopResult:
    """The VAE example: randn_like in reparameterize, BCE(sum) + KLD, Adam, train_loss
    accumulated with loss.item(), a compiled no_grad test step after each epoch."""
    torch.manual_seed(SEED)
    data = torch.sigmoid(torch.randn(192, 24) * 2.0)
    test_data = torch.sigmoid(torch.randn(64, 24) * 2.0)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor) -> float:
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(x)
        loss = vae_loss(recon_batch, x, mu, logvar)
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def test_step(x: torch.Tensor) -> float:
        recon, mu, logvar = model(x)
        return vae_loss(recon, x, mu, logvar).item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    test = timed(torch.compile(test_step) if compiled else test_step)
    losses, test_losses = [], []
    for _epoch in range(6):
        model.train()
        train_loss = 0.0
        for i in range(0, len(data), BATCH):
            train_loss += step(data[i : i + BATCH])
        losses.append(train_loss / len(data))
        model.eval()
        test_losses.append(test(test_data) / len(test_data))
    return {"losses": losses, "params": final_params(model), "step": step, "eval_step": test,
            "extra": {"test_losses": test_losses}}


def loop_denoising_ae_randn_like(compiled: bool) -> LoopResult:
    """Denoising autoencoder: x + 0.1 * torch.randn_like(x) inside the step, MSE to x."""
    torch.manual_seed(SEED)
    basis = torch.randn(3, 16)
    data = torch.randn(192, 3) @ basis
    model = nn.Sequential(nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 16))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor) -> torch.Tensor:
        noisy = x + 0.1 * torch.randn_like(x)
        optimizer.zero_grad()
        loss = F.mse_loss(model(noisy), x)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(8):
        for i in range(0, len(data), BATCH):
            losses.append(step(data[i : i + BATCH]).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_denoising_ae_init_normal_decaying(compiled: bool) -> LoopResult:
    """Denoising autoencoder whose noise is `torch.empty_like(x).normal_(0, std)`, the std
    a float argument that decays every epoch."""
    torch.manual_seed(SEED)
    data = torch.sigmoid(torch.randn(160, 12))
    model = nn.Sequential(nn.Linear(12, 6), nn.ReLU(), nn.Linear(6, 12), nn.Sigmoid())
    optimizer = optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
    criterion = nn.BCELoss()

    def train_step(x: torch.Tensor, noise_std: float) -> torch.Tensor:
        noise = torch.empty_like(x).normal_(0.0, noise_std)
        optimizer.zero_grad()
        loss = criterion(model((x + noise).clamp(0.0, 1.0)), x)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        std = 0.3 * 0.7**epoch
        for i in range(0, len(data), BATCH):
            losses.append(step(data[i : i + BATCH], std).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ seeds, dropout, config


def loop_dropout_manual_seed_in_step(compiled: bool) -> LoopResult:
    """Reproducible dropout: torch.manual_seed(k) called at the top of the step, k the call
    number passed in."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = nn.Sequential(nn.Linear(FEATURES, 48), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(48, CLASSES))
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor, k: int) -> torch.Tensor:
        torch.manual_seed(k)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    k = 0
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y, 100 + k).item())
            k += 1
    # the global generator after the loop: whatever the last seed left behind
    after = torch.randn(3).numpy().copy()
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"rng_after": after}}


def loop_dropout_seed_from_counter_dict(compiled: bool) -> LoopResult:
    """Dropout reseeded from a counter kept in a dict the step mutates itself
    (state["calls"] += 1)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.Dropout(0.2), nn.ReLU(),
                          nn.Linear(32, CLASSES))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    state = {"calls": 0}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        torch.manual_seed(1000 + state["calls"])
        state["calls"] += 1
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"calls": [state["calls"]]}}


def loop_config_dict_changed(compiled: bool) -> LoopResult:
    """A cfg dict captured by the step, changed between calls: loss scale, an L2 penalty
    weight, and a boolean switching an auxiliary loss on."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = mlp(hidden=40)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    cfg = {"scale": 1.0, "l2": 0.0, "entropy_bonus": False}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        logits = model(x)
        loss = cfg["scale"] * F.cross_entropy(logits, y)
        if cfg["l2"] > 0:
            loss = loss + cfg["l2"] * sum(p.pow(2).sum() for p in model.parameters())
        if cfg["entropy_bonus"]:
            p = F.softmax(logits, dim=1)
            loss = loss + 0.01 * (p * torch.log(p + 1e-9)).sum(dim=1).mean()
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        cfg["scale"] = 1.0 / (1 + epoch)
        cfg["l2"] = 1e-3 if epoch >= 2 else 0.0
        cfg["entropy_bonus"] = epoch % 2 == 1
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


TEMPERATURE = 1.0


class TemperatureNet(nn.Module):
    """Reads the module-level TEMPERATURE in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 32)
        self.fc2 = nn.Linear(32, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x))) / TEMPERATURE


def loop_global_temperature_changed(compiled: bool) -> LoopResult:
    """A module-level constant TEMPERATURE read inside Module.forward, annealed between
    calls with `global TEMPERATURE`."""
    global TEMPERATURE
    TEMPERATURE = 1.0
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = TemperatureNet()
    optimizer = optim.Adam(model.parameters(), lr=5e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        TEMPERATURE = 2.0 / (1 + epoch)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    TEMPERATURE = 1.0
    return {"losses": losses, "params": final_params(model), "step": step}


class ActNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def loop_submodule_replaced(compiled: bool) -> LoopResult:
    """model.act = nn.Tanh() after two epochs, nn.GELU() after four, ReLU again later."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = ActNet()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        if epoch == 2:
            model.act = nn.Tanh()
        elif epoch == 4:
            model.act = nn.GELU()
        elif epoch == 6:
            model.act = nn.ReLU()
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ hand-made BatchNorm


class MyBatchNorm1d(nn.Module):
    """BatchNorm1d by hand (minigrad has none): buffers running_mean, running_var and
    num_batches_tracked, updated in place in forward during training."""

    def __init__(self, features: int, momentum: float = 0.1, eps: float = 1e-5) -> None:
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))
        self.register_buffer("num_batches_tracked", torch.tensor(0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            n = x.shape[0]
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(
                    self.momentum * var * n / (n - 1))
                self.num_batches_tracked.add_(1)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def loop_handmade_batchnorm_buffers(compiled: bool) -> LoopResult:
    """Linear -> MyBatchNorm1d -> ReLU -> Linear, train()/eval() toggled for a compiled
    evaluation step each epoch; the running buffers are kept and compared."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    x_val, y_val = make_classification(samples=64)
    model = nn.Sequential(nn.Linear(FEATURES, 32), MyBatchNorm1d(32), nn.ReLU(),
                          nn.Linear(32, CLASSES))
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    @torch.no_grad()
    def eval_step(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        out = model(x)
        return F.cross_entropy(out, y).item(), (out.argmax(1) == y).float().mean().item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    evaluate = timed(torch.compile(eval_step) if compiled else eval_step)
    losses, evals = [], []
    for _epoch in range(6):
        model.train()
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
        model.eval()
        evals.append(evaluate(x_val, y_val))
    bn = model[1]
    return {"losses": losses, "params": final_params(model), "step": step,
            "eval_step": evaluate,
            "extra": {"evals": evals, "running_mean": bn.running_mean.numpy().copy(),
                      "running_var": bn.running_var.numpy().copy(),
                      "tracked": [int(bn.num_batches_tracked.item())]}}


class PyStatsNorm(nn.Module):
    """A normaliser whose running statistics are numpy arrays and a Python int, plain
    attributes updated in forward."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.running_mean = np.zeros(features)
        self.running_var = np.ones(features)
        self.num_batches = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            mean, var = x.mean(dim=0), x.var(dim=0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * mean.detach().numpy()
            self.running_var = 0.9 * self.running_var + 0.1 * var.detach().numpy()
            self.num_batches += 1
        else:
            mean = torch.from_numpy(self.running_mean)
            var = torch.from_numpy(self.running_var)
        return (x - mean) / torch.sqrt(var + 1e-5)


def loop_python_stats_norm(compiled: bool) -> LoopResult:
    """Input normalisation with running stats kept as numpy attributes, evaluated with the
    same compiled loss function (model.eval(), no backward) every few steps."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=192)
    x_all = x_all * 3.0 + 1.0
    x_val, y_val = x_all[:48], y_all[:48]
    model = nn.Sequential(PyStatsNorm(FEATURES), nn.Linear(FEATURES, 32), nn.SiLU(),
                          nn.Linear(32, 1))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def batch_loss(x: torch.Tensor, y: torch.Tensor, train: bool) -> torch.Tensor:
        loss = F.mse_loss(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss

    step = timed(torch.compile(batch_loss) if compiled else batch_loss)
    losses, vals = [], []
    calls = 0
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            model.train()
            losses.append(step(x, y, True).item())
            calls += 1
            if calls % 3 == 0:
                model.eval()
                with torch.no_grad():
                    vals.append(step(x_val, y_val, False).item())
    norm = model[0]
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"vals": vals, "running_mean": norm.running_mean.copy(),
                      "num_batches": [norm.num_batches]}}


# ------------------------------------------------------------------ augmentation in Python


def augment(x: torch.Tensor) -> torch.Tensor:
    """Random flip and scale with Python's random module."""
    if random.random() < 0.5:
        x = x.flip(1)
    return x * random.uniform(0.8, 1.2)


def loop_python_random_augmentation(compiled: bool) -> LoopResult:
    """random.random() / random.uniform() augmentation in a helper the step calls."""
    torch.manual_seed(SEED)
    random.seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = augment(x)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"random_after": [random.random()]}}


def jitter(x: torch.Tensor, p: float = 0.5) -> torch.Tensor:
    """np.random augmentation: Gaussian jitter on some batches, feature dropout on others."""
    if np.random.rand() < p:
        return x + torch.from_numpy(np.random.normal(0.0, 0.1, size=tuple(x.shape)))
    keep = (np.random.rand(x.shape[1]) > 0.1).astype(np.float64)
    return x * torch.from_numpy(keep)


def loop_numpy_random_augmentation(compiled: bool) -> LoopResult:
    """np.random jitter / feature dropout in a helper the step calls."""
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.05)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        loss = F.mse_loss(model(jitter(x)), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y))
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"np_after": np.random.rand(2)}}


def loop_mixup_numpy_beta_randperm(compiled: bool) -> LoopResult:
    """mixup: lam = np.random.beta(a, a) and index = torch.randperm(n) inside the step."""
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = mlp(hidden=48)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        lam = float(np.random.beta(0.4, 0.4))
        index = torch.randperm(x.shape[0])
        mixed = lam * x + (1 - lam) * x[index]
        optimizer.zero_grad()
        out = model(mixed)
        loss = lam * criterion(out, y) + (1 - lam) * criterion(out, y[index])
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ kept tensors, EMA


def loop_keep_grad_tensors(compiled: bool) -> LoopResult:
    """model[0].weight.grad (the tensor object) appended to a list after every call; the
    norms computed after the loop."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, grads = [], []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
            grads.append(model[0].weight.grad)
    norms = [g.norm().item() for g in grads]
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"grad_norms": norms}}


def loop_keep_grad_tensors_zeroed_in_place(compiled: bool) -> LoopResult:
    """As above but zero_grad(set_to_none=False). In PyTorch the kept .grad is one tensor
    zeroed and refilled in place (every kept entry ends equal to the last gradient); in
    minigrad, eager, each call leaves a new .grad object (25 distinct). The bias grad is
    kept too, and the identity of the kept objects is counted."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.05)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, grads, bias_grads = [], [], []
    for _epoch in range(5):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
            grads.append(model[0].weight.grad)
            bias_grads.append(model[2].bias.grad)
    norms = [g.norm().item() for g in grads] + [g.sum().item() for g in bias_grads]
    distinct = len({id(g) for g in grads})
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"grad_norms": norms, "distinct": [distinct]}}


def loop_ema_in_step(compiled: bool) -> LoopResult:
    """EMA of the weights updated under torch.no_grad inside the step (mul_().add_()),
    evaluated at the end."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = mlp(hidden=32)
    ema_model = copy.deepcopy(model)
    ema_model.requires_grad_(False)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    decay = 0.9

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for ema_p, p in zip(ema_model.parameters(), model.parameters()):
                ema_p.mul_(decay).add_(p, alpha=1 - decay)
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    with torch.no_grad():
        ema_loss = F.cross_entropy(ema_model(x_all), y_all).item()
    return {"losses": losses, "params": params_of(model, ema_model), "step": step,
            "extra": {"ema_loss": [ema_loss]}}


def loop_ema_after_step_warmup(compiled: bool) -> LoopResult:
    """EMA updated after each compiled call, outside it, with a warm-up decay
    min(0.99, (1 + n) / (10 + n)); the EMA copy is made with clone() of each parameter."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.GELU(), nn.Linear(32, 1))
    ema = [p.detach().clone() for p in model.parameters()]
    optimizer = optim.AdamW(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    n = 0
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
            d = min(0.99, (1 + n) / (10 + n))
            with torch.no_grad():
                for e, p in zip(ema, model.parameters()):
                    e.mul_(d).add_((1 - d) * p)
            n += 1
    return {"losses": losses, "params": final_params(model) + [e.numpy().copy() for e in ema],
            "step": step}


# ------------------------------------------------------------------ accumulation, modes


def loop_grad_accumulation_index_arg(compiled: bool) -> LoopResult:
    """step(x, y, i): loss / 4, optimizer.step() and zero_grad only when (i + 1) % 4 == 0."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=256)
    batches = minibatches(x_all, y_all, 16)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=2e-3)
    accum = 4

    def train_step(x: torch.Tensor, y: torch.Tensor, i: int) -> torch.Tensor:
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(3):
        for i, (x, y) in enumerate(batches):
            losses.append(step(x, y, i).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_train_eval_same_compiled_fn(compiled: bool) -> LoopResult:
    """One compiled function for training and validation: model.train()/model.eval()
    toggled between calls, the validation call made under torch.no_grad() outside it."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    x_val, y_val = make_classification(samples=64)
    model = nn.Sequential(nn.Linear(FEATURES, 48), nn.ReLU(), nn.Dropout(0.25),
                          nn.Linear(48, CLASSES))
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def run_batch(x: torch.Tensor, y: torch.Tensor, train: bool) -> torch.Tensor:
        out = model(x)
        loss = F.cross_entropy(out, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss

    step = timed(torch.compile(run_batch) if compiled else run_batch)
    losses, vals = [], []
    for _epoch in range(5):
        for j, (x, y) in enumerate(minibatches(x_all, y_all)):
            model.train()
            losses.append(step(x, y, True).item())
            if j % 2 == 1:
                model.eval()
                with torch.no_grad():
                    vals.append(step(x_val, y_val, False).item())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"vals": vals}}


def loop_mnist_style_test_fn(compiled: bool) -> LoopResult:
    """pytorch/examples/mnist shrunk to 8x8 "images" flattened: dropout, log_softmax,
    F.nll_loss, StepLR(gamma=0.7), test() summing loss (reduction='sum') and correct
    predictions with pred.eq(target.view_as(pred)).sum().item(). (Adadelta and Conv2d are
    missing: Adagrad and Linear layers.)"""
    torch.manual_seed(SEED)
    images = torch.randn(192, 1, 8, 8)
    teacher = torch.randn(64, 10)
    target = (images.reshape(192, 64) @ teacher).argmax(dim=1)
    test_images, test_target = images[:64] + 0.1 * torch.randn(64, 1, 8, 8), target[:64]

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(64, 48)
            self.dropout = nn.Dropout(0.25)
            self.fc2 = nn.Linear(48, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.flatten(x, 1)
            x = self.dropout(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net()
    optimizer = optim.Adagrad(model.parameters(), lr=0.05)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)

    def train_step(data: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), tgt)
        loss.backward()
        optimizer.step()
        return loss

    @torch.no_grad()
    def test_step(data: torch.Tensor, tgt: torch.Tensor) -> tuple[float, int]:
        output = model(data)
        test_loss = F.nll_loss(output, tgt, reduction="sum").item()
        pred = output.argmax(dim=1, keepdim=True)
        correct = pred.eq(tgt.view_as(pred)).sum().item()
        return test_loss, correct

    step = timed(torch.compile(train_step) if compiled else train_step)
    test = timed(torch.compile(test_step) if compiled else test_step)
    losses, tests = [], []
    for _epoch in range(4):
        model.train()
        for batch_idx in range(0, 192, BATCH):
            batch = slice(batch_idx, batch_idx + BATCH)
            loss = step(images[batch], target[batch])
            if (batch_idx // BATCH) % 2 == 0:
                losses.append(loss.item())
        model.eval()
        tl, correct = 0.0, 0
        for i in range(0, 64, BATCH):
            a, b = test(test_images[i : i + BATCH], test_target[i : i + BATCH])
            tl += a
            correct += b
        tests.append((tl / 64, correct))
        scheduler.step()
    return {"losses": losses, "params": final_params(model), "step": step, "eval_step": test,
            "extra": {"tests": tests}}


# ------------------------------------------------------------------ hooks


class HookHandle:
    """What register_forward_hook would return (minigrad has none): remove() undoes it."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def remove(self) -> None:
        del self.module.forward


def add_forward_hook(module: nn.Module, hook: Callable) -> HookHandle:
    original = type(module).forward

    def hooked(*args: Any) -> Any:
        out = original(module, *args)
        result = hook(module, args, out)
        return out if result is None else result

    module.forward = hooked
    return HookHandle(module)


def loop_forward_hook_added_then_removed(compiled: bool) -> LoopResult:
    """A forward "hook" recording the hidden activation's mean (float(...)) for calls
    10..19, then a second hook that rescales the output for calls 30..39; both removed
    with handle.remove()."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    activations: list[float] = []

    def record(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        activations.append(float(output.detach().abs().mean()))

    def rescale(module: nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
        return output * 0.5

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    handle = None
    calls = 0
    for _epoch in range(10):
        for x, y in minibatches(x_all, y_all):
            if calls == 10:
                handle = add_forward_hook(model[1], record)
            elif calls == 20 or calls == 40:
                handle.remove()
            elif calls == 30:
                handle = add_forward_hook(model[0], rescale)
            losses.append(step(x, y).item())
            calls += 1
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"activations": activations}}


def loop_tensor_register_hook_cfg(compiled: bool) -> LoopResult:
    """A gradient hook registered on a hidden tensor in forward (h.register_hook), scaling
    the gradient by cfg["grad_scale"], changed between calls."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    cfg = {"grad_scale": 1.0}

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(FEATURES, 32)
            self.fc2 = nn.Linear(32, CLASSES)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = F.relu(self.fc1(x))
            if self.training:
                h.register_hook(lambda g: g * cfg["grad_scale"])
            return self.fc2(h)

    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        cfg["grad_scale"] = 1.0 - 0.1 * epoch
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ schedulers, lr by hand


def loop_plateau_outside_step(compiled: bool) -> LoopResult:
    """ReduceLROnPlateau.step(val_loss) once per epoch, outside the compiled step."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=128)
    x_val, y_val = make_regression(samples=64)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, lrs = [], []
    for _epoch in range(12):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
        with torch.no_grad():
            val_loss = F.mse_loss(model(x_val), y_val).item()
        scheduler.step(val_loss)
        lrs.append(optimizer.param_groups[0]["lr"])
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"lrs": lrs}}


def loop_plateau_inside_step(compiled: bool) -> LoopResult:
    """ReduceLROnPlateau.step(loss.item()) called inside the step, every call."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=128)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.5)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step(loss.item())
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, lrs = [], []
    for _epoch in range(12):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y))
            lrs.append(optimizer.param_groups[0]["lr"])
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"lrs": lrs}}


def loop_sequential_warmup_cosine(compiled: bool) -> LoopResult:
    """SequentialLR(LinearLR warm-up, CosineAnnealingLR), scheduler.step() after every
    call (OneCycleLR is missing)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = mlp(hidden=40)
    optimizer = optim.AdamW(model.parameters(), lr=5e-3)
    lrs = optim.lr_scheduler
    warm = lrs.LinearLR(optimizer, start_factor=0.1, total_iters=8)
    cos = lrs.CosineAnnealingLR(optimizer, T_max=40)
    scheduler = lrs.SequentialLR(optimizer, schedulers=[warm, cos], milestones=[8])

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, kept = [], []
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
            scheduler.step()
            kept.append(scheduler.get_last_lr()[0])
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"lrs": kept}}


def loop_multistep_and_exponential_in_step(compiled: bool) -> LoopResult:
    """Two schedulers stepped inside the step: MultiStepLR and ExponentialLR on the same
    optimizer (chained the way PyTorch allows)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=128)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.8)
    s1 = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[10, 25], gamma=0.3)
    s2 = optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.98)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        s1.step()
        s2.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, lrs = [], []
    for _epoch in range(10):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
            lrs.append(optimizer.param_groups[0]["lr"])
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"lrs": lrs}}


def loop_lr_by_hand_param_groups(compiled: bool) -> LoopResult:
    """Step decay by hand: `for g in optimizer.param_groups: g['lr'] = ...` and the
    momentum changed too, every epoch."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.2, momentum=0.5)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        for g in optimizer.param_groups:
            g["lr"] = 0.2 * (0.5 ** (epoch // 2))
            g["momentum"] = min(0.9, 0.5 + 0.1 * epoch)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_lr_float_argument_manual_sgd(compiled: bool) -> LoopResult:
    """Manual SGD with the lr a float argument, cosine-decayed every call:
    `with torch.no_grad(): p -= lr * p.grad`, then p.grad = None."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=128)
    model = nn.Sequential(nn.Linear(FEATURES, 24), nn.Sigmoid(), nn.Linear(24, 1))

    def train_step(x: torch.Tensor, y: torch.Tensor, lr: float) -> torch.Tensor:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
                p.grad = None
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    total, t = 40, 0
    for _epoch in range(10):
        for x, y in minibatches(x_all, y_all):
            lr = 0.5 * (1 + math.cos(math.pi * t / total)) * 0.3
            losses.append(step(x, y, lr).item())
            t += 1
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_weight_decay_param_groups(compiled: bool) -> LoopResult:
    """AdamW with two param groups (no weight decay on biases and norm weights), the
    decay group's weight_decay changed by hand halfway."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.LayerNorm(32), nn.GELU(),
                          nn.Linear(32, CLASSES))
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("1.") else decay).append(p)
    optimizer = optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        if epoch == 3:
            optimizer.param_groups[0]["weight_decay"] = 0.2
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ masks, custom Functions


def loop_boolean_mask_loss(compiled: bool) -> LoopResult:
    """Partially labelled data (label -1 = unlabelled): F.cross_entropy(logits[mask],
    y[mask]) with mask = y >= 0, so the selected count changes every batch."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=192)
    unlabelled = torch.rand(192) < 0.3
    y_all = torch.where(unlabelled, torch.full((192,), -1, dtype=torch.int64), y_all)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        logits = model(x)
        mask = y >= 0
        loss = F.cross_entropy(logits[mask], y[mask])
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_masked_mean_from_features(compiled: bool) -> LoopResult:
    """Regression on the rows where a feature is positive only: a masked-mean loss written
    with where/sum, plus a count of the selected rows returned as int."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.RMSprop(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, int]:
        mask = (x[:, 0] > 0).unsqueeze(1)
        optimizer.zero_grad()
        err = torch.where(mask, (model(x) - y) ** 2, torch.zeros_like(y))
        count = int(mask.sum().item())
        loss = err.sum() / max(count, 1)
        loss.backward()
        optimizer.step()
        return loss, count

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, counts = [], []
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            loss, count = step(x, y)
            losses.append(loss.item())
            counts.append(count)
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"counts": counts}}


class ScaleByMax(torch.autograd.Function):
    """Custom Function storing a Python float computed from the data in ctx: forward
    divides by the max |x|, backward uses the same float."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.scale = float(x.abs().max()) + 1e-6
        return x / ctx.scale

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        return grad_output / ctx.scale


class ClampGrad(torch.autograd.Function):
    """Straight-through clamp with save_for_backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(-1.0, 1.0)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() < 2.0).float()


def loop_custom_function_ctx_float(compiled: bool) -> LoopResult:
    """torch.autograd.Function subclasses in the model: one stores a float from the data
    in ctx, the other save_for_backward."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    x_all = x_all * torch.linspace(0.5, 3.0, 160).unsqueeze(1)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(FEATURES, 32)
            self.fc2 = nn.Linear(32, CLASSES)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = ClampGrad.apply(self.fc1(ScaleByMax.apply(x)))
            return self.fc2(h)

    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.2)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


# ------------------------------------------------------------------ freezing, tying, stopping


def loop_freeze_first_layer_midway(compiled: bool) -> LoopResult:
    """Fine-tuning: model[0].requires_grad_(False) after 20 calls (its grads then stay
    None and Adam skips it), unfrozen again after 40."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, CLASSES))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, grad_none = [], []
    calls = 0
    for _epoch in range(12):
        for x, y in minibatches(x_all, y_all):
            if calls == 20:
                model[0].requires_grad_(False)
            elif calls == 40:
                model[0].requires_grad_(True)
            losses.append(step(x, y).item())
            grad_none.append(model[0].weight.grad is None)
            calls += 1
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"grad_none": grad_none}}


def loop_freeze_by_param_loop_and_new_optimizer(compiled: bool) -> LoopResult:
    """Transfer learning: backbone params frozen with `p.requires_grad = False` and a new
    optimizer made over the head only (the step reads the rebound `optimizer`)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=128)
    backbone = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh())
    head = nn.Linear(32, CLASSES)
    model = nn.Sequential(backbone, head)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(10):
        if epoch == 4:
            for p in backbone.parameters():
                p.requires_grad = False
            optimizer = optim.Adam(head.parameters(), lr=1e-2)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_word_lm_tied_weights(compiled: bool) -> LoopResult:
    """word_language_model-ish: embedding, a context MLP, decoder.weight = encoder.weight
    (tying), clip_grad_norm_(0.25), manual SGD update with the lr a float argument, and
    `lr /= 4.0` when the validation loss does not improve."""
    torch.manual_seed(SEED)
    vocab, emb, ctx = 30, 16, 4
    stream = torch.randint(0, vocab, (800,))
    windows = torch.stack([stream[i : i + ctx + 1] for i in range(0, 640, 4)])
    val_windows = torch.stack([stream[i : i + ctx + 1] for i in range(640, 790, 5)])

    class TinyLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(vocab, emb)
            self.hidden = nn.Linear(ctx * emb, emb)
            self.decoder = nn.Linear(emb, vocab)
            self.decoder.weight = self.encoder.weight
            self.drop = nn.Dropout(0.1)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            e = self.drop(self.encoder(tokens)).reshape(tokens.shape[0], ctx * emb)
            return self.decoder(self.drop(torch.tanh(self.hidden(e))))

    model = TinyLM()
    criterion = nn.CrossEntropyLoss()

    def train_step(batch: torch.Tensor, lr: float) -> float:
        data, targets = batch[:, :ctx], batch[:, ctx]
        model.zero_grad()
        loss = criterion(model(data), targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr)
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, vals = [], []
    lr, best_val = 2.0, None
    for _epoch in range(5):
        model.train()
        for i in range(0, len(windows), BATCH):
            losses.append(step(windows[i : i + BATCH], lr))
        model.eval()
        with torch.no_grad():
            v = criterion(model(val_windows[:, :ctx]), val_windows[:, ctx]).item()
        vals.append(v)
        if best_val is None or v < best_val:
            best_val = v
        else:
            lr /= 4.0
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"vals": vals, "lr": [lr]}}


def loop_rnn_hidden_carried(compiled: bool) -> LoopResult:
    """Truncated BPTT with a hand-written tanh RNN (nn.RNN is missing): the hidden state
    returned by the step is detached (repackage_hidden) and passed to the next call."""
    torch.manual_seed(SEED)
    vocab, hid, bptt, bsz = 12, 24, 6, 8
    stream = torch.randint(0, vocab, (bsz, 6 * bptt * 4 + 1))

    class RNNModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(vocab, hid)
            self.w_ih = nn.Linear(hid, hid)
            self.w_hh = nn.Linear(hid, hid, bias=False)
            self.decoder = nn.Linear(hid, vocab)

        def forward(self, tokens: torch.Tensor, h: torch.Tensor) -> tuple:
            emb = self.encoder(tokens)
            outputs = []
            for t in range(tokens.shape[1]):
                h = torch.tanh(self.w_ih(emb[:, t]) + self.w_hh(h))
                outputs.append(self.decoder(h))
            return torch.stack(outputs, dim=1), h

    def repackage_hidden(h: torch.Tensor) -> torch.Tensor:
        return h.detach()

    model = RNNModel()
    optimizer = optim.Adam(model.parameters(), lr=5e-3)

    def train_step(data: torch.Tensor, targets: torch.Tensor, hidden: torch.Tensor) -> tuple:
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = F.cross_entropy(output.reshape(-1, vocab), targets.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        return loss, hidden

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(2):
        hidden = torch.zeros(bsz, hid)
        for i in range(0, stream.shape[1] - 1, bptt):
            data, targets = stream[:, i : i + bptt], stream[:, i + 1 : i + 1 + bptt]
            if data.shape[1] != bptt:
                break
            loss, hidden = step(data, targets, hidden)
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"hidden": hidden.detach().numpy().copy()}}


def loop_early_stopping_best_state(compiled: bool) -> LoopResult:
    """Early stopping on a validation loss with patience 2: copy.deepcopy(state_dict())
    of the best epoch, break, load_state_dict(best) at the end."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=64)
    x_val, y_val = make_regression(samples=64)
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = optim.Adam(model.parameters(), lr=2e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, vals = [], []
    best, best_state, bad = math.inf, None, 0
    for _epoch in range(40):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
        with torch.no_grad():
            v = F.mse_loss(model(x_val), y_val).item()
        vals.append(v)
        if v < best:
            best, bad = v, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= 2:
                break
    model.load_state_dict(best_state)
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"vals": vals}}


def loop_loss_logged_inside_step(compiled: bool) -> LoopResult:
    """The step returns nothing: it appends loss.item() to a history list itself and
    counts its calls in a nonlocal int."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1, nesterov=True, momentum=0.9)
    history: list[float] = []
    calls = 0

    def train_step(x: torch.Tensor, y: torch.Tensor) -> None:
        nonlocal calls
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        calls += 1

    step = timed(torch.compile(train_step) if compiled else train_step)
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            step(x, y)
    return {"losses": history, "params": final_params(model), "step": step,
            "extra": {"calls": [calls]}}


def loop_clip_norm_kept(compiled: bool) -> LoopResult:
    """clip_grad_norm_ whose returned total norm is returned by the step and kept; then
    clip_grad_value_ as well; the max_norm read from a cfg dict changed midway."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    y_all = y_all * 10.0
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    cfg = {"max_norm": 1.0}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=cfg["max_norm"])
        nn.utils.clip_grad_value_(model.parameters(), 0.5)
        optimizer.step()
        return loss, total

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, norms = [], []
    for epoch in range(8):
        if epoch == 4:
            cfg["max_norm"] = 5.0
        for x, y in minibatches(x_all, y_all):
            loss, total = step(x, y)
            losses.append(loss.item())
            norms.append(float(total))
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"norms": norms}}


def loop_metrics_dict_returned(compiled: bool) -> LoopResult:
    """The step returns a dict of metrics: loss tensor, accuracy tensor, a Python float lr
    and the logits' max (a tensor) -- logged into a list of dicts."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> dict[str, Any]:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        acc = (logits.argmax(dim=1) == y).float().mean()
        return {"loss": loss.detach(), "acc": acc, "lr": optimizer.param_groups[0]["lr"],
                "max_logit": logits.detach().max()}

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, log = [], []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            m = step(x, y)
            losses.append(m["loss"].item())
            log.append((m["acc"].item(), m["lr"], m["max_logit"].item()))
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"log": log}}


# ------------------------------------------------------------------ more mutations


def loop_regression_example_get_batch_in_step(compiled: bool) -> LoopResult:
    """pytorch/examples/regression: polynomial features, get_batch() (torch.randn) called
    inside the step, F.smooth_l1_loss, fc.zero_grad(), manual update
    (p.data.add_(-0.1 * p.grad) becomes no_grad p.add_), stop when loss < 1e-3."""
    torch.manual_seed(SEED)
    POLY_DEGREE = 4
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5

    def make_features(x: torch.Tensor) -> torch.Tensor:
        x = x.unsqueeze(1)
        return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.mm(W_target) + b_target.item()

    def get_batch(batch_size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
        random_x = torch.randn(batch_size)
        x = make_features(random_x)
        return x, f(x)

    fc = nn.Linear(W_target.size(0), 1)

    def train_step() -> float:
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        with torch.no_grad():
            for param in fc.parameters():
                param.add_(-0.01 * param.grad)
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _batch_idx in range(80):
        loss = step()
        losses.append(loss)
        if loss < 1e-3:
            break
    return {"losses": losses, "params": final_params(fc), "step": step}


def loop_optimizer_swapped_midway(compiled: bool) -> LoopResult:
    """Adam for 3 epochs, then `optimizer = optim.SGD(...)` rebinds the name the step
    reads (the classic Adam-then-SGD switch)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(7):
        if epoch == 3:
            optimizer = optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_criterion_swapped_midway(compiled: bool) -> LoopResult:
    """criterion = nn.MSELoss(), rebound to nn.L1Loss() and then to a lambda huber loss
    between calls."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    criterion: Callable = nn.MSELoss()

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(9):
        if epoch == 3:
            criterion = nn.L1Loss()
        elif epoch == 6:
            criterion = lambda a, b: F.huber_loss(a, b, delta=0.5)  # noqa: E731
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_grad_noise_step_arg(compiled: bool) -> LoopResult:
    """Gradient noise (Neelakantan et al.): p.grad.add_(torch.randn_like(p.grad) * std)
    with std = eta / (1 + t) ** 0.55 from the call number t passed in."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor, t: int) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        std = 0.3 / (1 + t) ** 0.55
        for p in model.parameters():
            p.grad.add_(torch.randn_like(p.grad) * std)
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    t = 0
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y, t).item())
            t += 1
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_label_smoothing_cfg(compiled: bool) -> LoopResult:
    """F.cross_entropy(label_smoothing=cfg['ls']) with the smoothing annealed to 0."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.RMSprop(model.parameters(), lr=2e-3)
    cfg = {"ls": 0.2}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y, label_smoothing=cfg["ls"])
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        cfg["ls"] = max(0.0, 0.2 - 0.05 * epoch)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_distillation_temperature(compiled: bool) -> LoopResult:
    """Knowledge distillation: a frozen teacher in eval mode under no_grad inside the step,
    KL(student/T || teacher/T) * T^2 + alpha * CE, T and alpha from a cfg dict."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    teacher = mlp(hidden=64)
    teacher.eval()
    student = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))
    optimizer = optim.Adam(student.parameters(), lr=3e-3)
    cfg = {"T": 4.0, "alpha": 0.5}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        T = cfg["T"]
        kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                      reduction="batchmean") * T * T
        loss = (1 - cfg["alpha"]) * kd + cfg["alpha"] * F.cross_entropy(s_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        cfg["T"] = 4.0 - 0.5 * epoch
        cfg["alpha"] = 0.5 + 0.05 * epoch
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": params_of(student, teacher), "step": step}


def loop_fgsm_adversarial_training(compiled: bool) -> LoopResult:
    """FGSM adversarial training (the tutorial's attack inside the step): input gradient via
    x.requires_grad_(True) on a clone and torch.autograd.grad, x_adv = x + eps * sign;
    eps read from cfg and raised between epochs."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    cfg = {"eps": 0.0}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x_req = x.clone().requires_grad_(True)
        loss_clean = F.cross_entropy(model(x_req), y)
        (grad_x,) = torch.autograd.grad(loss_clean, x_req)
        x_adv = (x + cfg["eps"] * grad_x.sign()).detach()
        optimizer.zero_grad()
        loss = 0.5 * F.cross_entropy(model(x), y) + 0.5 * F.cross_entropy(model(x_adv), y)
        loss.backward()
        optimizer.step()
        return loss, loss_clean.detach()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        cfg["eps"] = 0.05 * epoch
        for x, y in minibatches(x_all, y_all):
            loss, clean = step(x, y)
            losses += [loss.item(), clean.item()]
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_skip_bad_batches(compiled: bool) -> LoopResult:
    """Data-dependent Python branch: `if loss.item() > limit: skipped += 1; return` (no
    update) -- some batches carry outliers; the limit tightens between epochs."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=192)
    bad = torch.rand(192, 1) < 0.08
    y_all = torch.where(bad, y_all * 40.0, y_all)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    stats = {"skipped": 0, "limit": 20.0}

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        if not torch.isfinite(loss) or loss.item() > stats["limit"]:
            stats["skipped"] += 1
            return float("nan")
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        stats["limit"] = 20.0 / (1 + epoch)
        for x, y in minibatches(x_all, y_all, 16):
            losses.append(step(x, y))
    return {"losses": np.nan_to_num(np.asarray(losses), nan=-1.0), "params": final_params(model),
            "step": step, "extra": {"skipped": [stats["skipped"]]}}


def loop_checkpoint_rewind(compiled: bool) -> LoopResult:
    """A checkpoint (model and optimizer state_dict, deep-copied) saved after 16 calls and
    loaded back after 32 -- a rewind after a divergence -- then training goes on."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=128)
    model = mlp(hidden=32)
    optimizer = optim.Adam(model.parameters(), lr=5e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    checkpoint = None
    calls = 0
    for _epoch in range(12):
        for x, y in minibatches(x_all, y_all):
            if calls == 16:
                checkpoint = {"model": copy.deepcopy(model.state_dict()),
                              "optimizer": copy.deepcopy(optimizer.state_dict())}
            elif calls == 32:
                model.load_state_dict(checkpoint["model"])
                optimizer.load_state_dict(checkpoint["optimizer"])
                for g in optimizer.param_groups:
                    g["lr"] = 1e-3
            losses.append(step(x, y).item())
            calls += 1
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_add_param_group_new_head(compiled: bool) -> LoopResult:
    """A second head added to the model after 20 calls (model.aux = nn.Linear(...)) and
    optimizer.add_param_group({'params': ..., 'lr': ...}); forward uses it once present."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    y_reg = x_all[:, :2].sum(dim=1, keepdim=True)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU())
            self.cls = nn.Linear(32, CLASSES)
            self.aux = None

        def forward(self, x: torch.Tensor) -> tuple:
            h = self.body(x)
            return self.cls(h), (self.aux(h) if self.aux is not None else None)

    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        logits, aux = model(x)
        loss = F.cross_entropy(logits, y)
        if aux is not None:
            loss = loss + 0.5 * F.mse_loss(aux, r)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    calls = 0
    for _epoch in range(8):
        for i in range(0, 160, BATCH):
            if calls == 20:
                model.aux = nn.Linear(32, 1)
                optimizer.add_param_group({"params": model.aux.parameters(), "lr": 0.05})
            losses.append(step(x_all[i : i + BATCH], y_all[i : i + BATCH],
                               y_reg[i : i + BATCH]).item())
            calls += 1
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_module_counter_attr(compiled: bool) -> LoopResult:
    """A Module counting its own forward calls in a Python int attribute (self.calls += 1)
    and adding input noise only once self.calls > 20 (a warm-up inside forward)."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)

    class NoisyNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.net = mlp(hidden=32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            if self.training and self.calls > 20:
                x = x + 0.2 * torch.randn_like(x)
            return self.net(x)

    model = NoisyNet()
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(8):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"calls": [model.calls]}}


def loop_multitask_weights_list(compiled: bool) -> LoopResult:
    """Two heads, loss weights in a Python list mutated in place between calls
    (weights[1] *= 0.8), per-task losses returned as a tuple of floats."""
    torch.manual_seed(SEED)
    x_all, y_cls = make_classification(samples=160)
    y_reg = torch.sin(x_all[:, :3].sum(dim=1, keepdim=True))
    body = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU())
    head_a, head_b = nn.Linear(32, CLASSES), nn.Linear(32, 1)
    params = list(body.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
    optimizer = optim.Adam(params, lr=3e-3)
    weights = [1.0, 2.0]

    def train_step(x: torch.Tensor, yc: torch.Tensor, yr: torch.Tensor) -> tuple:
        optimizer.zero_grad()
        h = body(x)
        la = F.cross_entropy(head_a(h), yc)
        lb = F.mse_loss(head_b(h), yr)
        loss = weights[0] * la + weights[1] * lb
        loss.backward()
        optimizer.step()
        return la.item(), lb.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(8):
        for i in range(0, 160, BATCH):
            losses.extend(step(x_all[i : i + BATCH], y_cls[i : i + BATCH], y_reg[i : i + BATCH]))
        weights[1] *= 0.8
    return {"losses": losses, "params": params_of(body, head_a, head_b), "step": step}


def loop_siamese_cosine_margin(compiled: bool) -> LoopResult:
    """Siamese embedding: pairs through a shared net, F.cosine_similarity, a contrastive
    hinge whose margin lives in cfg and grows between epochs."""
    torch.manual_seed(SEED)
    a_all = torch.randn(160, FEATURES)
    same = torch.rand(160) < 0.5
    b_all = torch.where(same.unsqueeze(1), a_all + 0.3 * torch.randn(160, FEATURES),
                        torch.randn(160, FEATURES))
    label = same.float()
    net = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 8))
    optimizer = optim.Adam(net.parameters(), lr=3e-3)
    cfg = {"margin": 0.2}

    def train_step(a: torch.Tensor, b: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        sim = F.cosine_similarity(net(a), net(b))
        loss = (same * (1 - sim) + (1 - same) * F.relu(sim - cfg["margin"])).mean()
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(6):
        cfg["margin"] = 0.2 + 0.1 * epoch
        for i in range(0, 160, BATCH):
            losses.append(step(a_all[i : i + BATCH], b_all[i : i + BATCH],
                               label[i : i + BATCH]).item())
    return {"losses": losses, "params": final_params(net), "step": step}


def loop_reinit_layer_midway(compiled: bool) -> LoopResult:
    """The last layer re-initialised in place between calls (nn.init.normal_ / zeros_ on
    model[2].weight / bias) after 24 calls, e.g. to reset a collapsed head."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    calls = 0
    for _epoch in range(10):
        for x, y in minibatches(x_all, y_all):
            if calls == 24:
                nn.init.normal_(model[2].weight, std=0.01)
                nn.init.zeros_(model[2].bias)
            losses.append(step(x, y).item())
            calls += 1
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_batch_size_and_seq_len_vary(compiled: bool) -> LoopResult:
    """Bucketed text batches: sequence length and batch size change from call to call
    (EmbeddingBag-style mean over tokens; nn.EmbeddingBag is not used)."""
    torch.manual_seed(SEED)
    vocab = 40
    emb = nn.Embedding(vocab, 16)
    fc = nn.Linear(16, 3)
    optimizer = optim.Adagrad(list(emb.parameters()) + list(fc.parameters()), lr=0.1)
    shapes = [(16, 5), (24, 7), (16, 5), (8, 12), (24, 7), (32, 3)]
    batches = []
    for n, t in shapes * 4:
        tokens = torch.randint(0, vocab, (n, t))
        # Tensor % int is missing (no __mod__ / torch.remainder): the labels via numpy
        batches.append((tokens, torch.from_numpy(tokens.numpy().sum(axis=1) % 3)))

    def train_step(tokens: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(fc(emb(tokens).mean(dim=1)), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = [step(tokens, y).item() for tokens, y in batches]
    return {"losses": losses, "params": params_of(emb, fc), "step": step}


def loop_dataloader_shuffle_weights_tensor(compiled: bool) -> LoopResult:
    """Class-weighted CrossEntropyLoss whose weight tensor is updated in place between
    epochs (re-balancing from the epoch's confusion), DataLoader with shuffle."""
    from minigrad.utils.data import DataLoader, TensorDataset

    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    loader = DataLoader(TensorDataset(x_all, y_all), batch_size=BATCH, shuffle=True)
    model = mlp(hidden=32)
    class_weight = torch.ones(CLASSES)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y, weight=class_weight)
        loss.backward()
        optimizer.step()
        wrong = (logits.argmax(dim=1) != y).float()
        return loss, F.one_hot(y, CLASSES).float().t() @ wrong

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses, weights = [], []
    for _epoch in range(6):
        errors = torch.zeros(CLASSES)
        for x, y in loader:
            loss, err = step(x, y)
            losses.append(loss.item())
            errors += err
        with torch.no_grad():
            class_weight.copy_(1.0 + errors / (errors.sum() + 1.0))
        weights.append(class_weight.numpy().copy())
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"weights": weights}}


def loop_no_grad_toggled_inside_with_set_grad_enabled(compiled: bool) -> LoopResult:
    """torch.set_grad_enabled(train) inside the step, train a bool argument: the same
    compiled function does training steps and evaluation passes."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    x_val, y_val = make_classification(samples=32)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.LayerNorm(32), nn.ReLU(),
                          nn.Linear(32, CLASSES))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def run(x: torch.Tensor, y: torch.Tensor, train: bool) -> float:
        with torch.set_grad_enabled(train):
            loss = F.cross_entropy(model(x), y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return loss.item()

    step = timed(torch.compile(run) if compiled else run)
    losses, vals = [], []
    for _epoch in range(6):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y, True))
        vals.append(step(x_val, y_val, False))
    return {"losses": losses, "params": final_params(model), "step": step,
            "extra": {"vals": vals}}


def loop_closure_optimizer_step(compiled: bool) -> LoopResult:
    """optimizer.step(closure) (the LBFGS calling convention) with SGD, the closure defined
    inside the step and re-evaluating the loss."""
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=128)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        def closure() -> torch.Tensor:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss

        return optimizer.step(closure)

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(10):
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_cfg_read_in_loss_helper(compiled: bool) -> LoopResult:
    """The cfg dict is read by a compute_loss() helper the step calls (not by the step
    itself): the auxiliary weight and the margin are changed between epochs."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    model = mlp(hidden=32)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    cfg = {"aux_weight": 0.0, "margin": 1.0}

    def compute_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        ce = F.cross_entropy(logits, y)
        true = (logits * F.one_hot(y, CLASSES)).sum(dim=1, keepdim=True)
        hinge = F.relu(cfg["margin"] - true + logits).mean()
        return ce + cfg["aux_weight"] * hinge

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = compute_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        cfg["aux_weight"] = 0.1 * epoch
        cfg["margin"] = 1.0 + 0.25 * epoch
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


class GatedNet(nn.Module):
    """Keeps a reference to the run's options dict and reads it in forward."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        self.options = options
        self.fc1 = nn.Linear(FEATURES, 32)
        self.fc2 = nn.Linear(32, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x))
        if self.options["residual_scale"] > 0:
            h = h + self.options["residual_scale"] * x[:, :1]
        return self.fc2(h) * self.options["logit_scale"]


def loop_options_dict_on_module(compiled: bool) -> LoopResult:
    """Module.forward reads self.options (a dict shared with the loop), changed between
    epochs: a branch on one key and a scale from another."""
    torch.manual_seed(SEED)
    x_all, y_all = make_classification(samples=160)
    options = {"residual_scale": 0.0, "logit_scale": 1.0}
    model = GatedNet(options)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        options["residual_scale"] = 0.0 if epoch < 3 else 0.1 * epoch
        options["logit_scale"] = 1.0 / (1 + 0.2 * epoch)
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    return {"losses": losses, "params": final_params(model), "step": step}


LOOP_WEIGHTS = [1.0, 0.0]


def loop_global_list_loss_weights(compiled: bool) -> LoopResult:
    """Module-level LOOP_WEIGHTS list (loss weights) mutated in place between epochs
    (LOOP_WEIGHTS[1] = ...), read directly in the step."""
    LOOP_WEIGHTS[:] = [1.0, 0.0]
    torch.manual_seed(SEED)
    x_all, y_all = make_regression(samples=160)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        out = model(x)
        loss = LOOP_WEIGHTS[0] * F.mse_loss(out, y) + LOOP_WEIGHTS[1] * F.l1_loss(out, y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(8):
        LOOP_WEIGHTS[1] = 0.1 * epoch
        for x, y in minibatches(x_all, y_all):
            losses.append(step(x, y).item())
    LOOP_WEIGHTS[:] = [1.0, 0.0]
    return {"losses": losses, "params": final_params(model), "step": step}


LOOPS: list[Callable[[bool], LoopResult]] = [
    loop_gan_two_steps,
    loop_dcgan_fake_passed_between_steps,
    loop_wgan_clamp_between_calls,
    loop_vae_reparameterize,
    loop_denoising_ae_randn_like,
    loop_denoising_ae_init_normal_decaying,
    loop_dropout_manual_seed_in_step,
    loop_dropout_seed_from_counter_dict,
    loop_config_dict_changed,
    loop_global_temperature_changed,
    loop_submodule_replaced,
    loop_handmade_batchnorm_buffers,
    loop_python_stats_norm,
    loop_python_random_augmentation,
    loop_numpy_random_augmentation,
    loop_mixup_numpy_beta_randperm,
    loop_keep_grad_tensors,
    loop_keep_grad_tensors_zeroed_in_place,
    loop_ema_in_step,
    loop_ema_after_step_warmup,
    loop_grad_accumulation_index_arg,
    loop_train_eval_same_compiled_fn,
    loop_mnist_style_test_fn,
    loop_forward_hook_added_then_removed,
    loop_tensor_register_hook_cfg,
    loop_plateau_outside_step,
    loop_plateau_inside_step,
    loop_sequential_warmup_cosine,
    loop_multistep_and_exponential_in_step,
    loop_lr_by_hand_param_groups,
    loop_lr_float_argument_manual_sgd,
    loop_weight_decay_param_groups,
    loop_boolean_mask_loss,
    loop_masked_mean_from_features,
    loop_custom_function_ctx_float,
    loop_freeze_first_layer_midway,
    loop_freeze_by_param_loop_and_new_optimizer,
    loop_word_lm_tied_weights,
    loop_rnn_hidden_carried,
    loop_early_stopping_best_state,
    loop_loss_logged_inside_step,
    loop_clip_norm_kept,
    loop_metrics_dict_returned,
    loop_regression_example_get_batch_in_step,
    loop_optimizer_swapped_midway,
    loop_criterion_swapped_midway,
    loop_grad_noise_step_arg,
    loop_label_smoothing_cfg,
    loop_distillation_temperature,
    loop_fgsm_adversarial_training,
    loop_skip_bad_batches,
    loop_checkpoint_rewind,
    loop_add_param_group_new_head,
    loop_module_counter_attr,
    loop_multitask_weights_list,
    loop_siamese_cosine_margin,
    loop_reinit_layer_midway,
    loop_batch_size_and_seq_len_vary,
    loop_dataloader_shuffle_weights_tensor,
    loop_no_grad_toggled_inside_with_set_grad_enabled,
    loop_closure_optimizer_step,
    loop_cfg_read_in_loss_helper,
    loop_options_dict_on_module,
    loop_global_list_loss_weights,
]


# ------------------------------------------------------------------ running


def run_loop(loop: Callable[[bool], LoopResult], repeats: int) -> dict[str, Any]:
    """real_loops.measure, with a crash of either run turned into a row that says so."""
    try:
        return real_loops.measure(loop, repeats)
    except Exception as error:  # noqa: BLE001 - a crashing loop is a result to report
        name = loop.__name__.removeprefix("loop_")
        try:
            loop(False)
            where = "compiled only"
        except Exception:  # noqa: BLE001
            where = "eager too"
        text = f"CRASH ({where}): {type(error).__name__}: {error}".replace("\n", " ")
        return {"loop": name, "replays": False, "replay_notes": [text[:300]],
                "explained": False, "equal": False, "difference": text[:300],
                "eager_ms": math.nan, "compiled_ms": math.nan, "trace_ms": 0.0,
                "speedup": math.nan, "eager_step_ms": math.nan, "compiled_step_ms": math.nan,
                "step_speedup": math.nan, "crashed": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats per loop, not 5")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per loop")
    parser.add_argument("--only", default=None, help="run the loops whose name contains this")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    loops = [loop for loop in LOOPS if args.only is None or args.only in loop.__name__]
    start = time.perf_counter()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        for loop in loops:
            rows.append(run_loop(loop, repeats))
    crashed = [row for row in rows if row.get("crashed")]
    measured = [row for row in rows if not row.get("crashed")]
    if measured:
        real_loops.print_table(measured)
    for row in crashed:
        print(f"| {row['loop']} | {row['difference']} |")
    wrong = [row["loop"] for row in measured if not row["equal"]]
    replaying = [row for row in measured if row["replays"]]
    fallback = [row for row in measured if not row["replays"] or row["replay_notes"]]
    speedups = [row["speedup"] for row in measured]
    fallback_speedups = [row["speedup"] for row in fallback]
    step_speedups = [row["step_speedup"] for row in measured]
    fallback_step_speedups = [row["step_speedup"] for row in fallback]
    print()
    print(f"loops: {len(rows)}; crashed: {len(crashed)} {[row['loop'] for row in crashed]}")
    print(f"silent wrong (equal False): {len(wrong)} {wrong}")
    print(f"replaying: {len(replaying)} of {len(measured)}")
    print(f"fallback (no replay, or some variant eager): {len(fallback)} "
          f"{[row['loop'] for row in fallback]}")
    if speedups:
        print(f"median speed-up: whole loops {statistics.median(speedups):.2f}x, inside the "
              f"steps {statistics.median(step_speedups):.2f}x")
    if fallback_speedups:
        print(f"median speed-up of the fallback loops: whole loops "
              f"{statistics.median(fallback_speedups):.2f}x, inside the steps "
              f"{statistics.median(fallback_step_speedups):.2f}x")
    if measured and speedups:
        # The targets are read on the time inside the steps (tracing included): data,
        # models and logging cost the same both ways.
        share = len(replaying) / len(measured)
        median_all = statistics.median(step_speedups)
        median_fallback = (statistics.median(fallback_step_speedups)
                           if fallback_step_speedups else 1.0)
        targets = [
            ("0 silent wrong results", not wrong and not crashed),
            (f">= 90% of loops replay ({share:.0%})", share >= 0.9),
            (f"median speed-up >= 2.5x ({median_all:.2f}x)", median_all >= 2.5),
            (f"fallback >= 0.95x eager ({median_fallback:.2f}x)", median_fallback >= 0.95),
        ]
        print("targets (issue 31): " + "; ".join(
            f"{what}: {'met' if met else 'NOT met'}" for what, met in targets))
    print(f"\n{repeats} repeats per loop; total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

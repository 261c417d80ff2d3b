"""minigrad.compile on training loops written the way PyTorch users write them.

Each `loop_NAME(compiled)` below is a small, complete training loop in the idiom of
PyTorch's tutorials and typical user code (`import minigrad as torch`, nn.Module or
nn.Sequential models, torch.optim optimizers, `optimizer.zero_grad()` / `loss.backward()` /
`optimizer.step()`), on synthetic data made from a fixed seed. The training step is the
unit that gets compiled: `step = torch.compile(train_step) if compiled else train_step`
(wrapped in `timed(...)`, which adds up the time spent inside the step's calls); nothing
else in the loop changes between the two runs.

What is measured, per loop:
1. equality: the loop is run eagerly and compiled from the same seed; the per-step losses
   (and evaluation results, where the loop evaluates) and the final parameters must be
   equal bit for bit (np.array_equal);
2. replay: whether the compiled step (and the compiled evaluation step) replays
   (`step.replays > 0`) and, where it does not, the reason `step.explain()` gives;
3. time: the whole loop (data, model, tracing, every step) eager against compiled, and
   the time inside the step's calls alone (tracing included), the median of several
   repeats that alternate which of the two runs first.

The table ends with the median speed-up and whether the goal "median >= 2x, every loop
replays or says why, all equal" is met.

PyTorch names this file would use that minigrad lacks: nn.BatchNorm1d, nn.SmoothL1Loss and
F.smooth_l1_loss (the loops use nn.LayerNorm and F.l1_loss instead). Note that minigrad's
default dtype is float64 (PyTorch's is float32).

    python benchmarks/real_loops.py            # 5 repeats per loop
    python benchmarks/real_loops.py --quick    # 3 repeats per loop
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad as torch
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import optim
from minigrad.compiler.compiled import CompileFallbackWarning
from minigrad.utils.data import DataLoader, TensorDataset

SEED = 0
EPOCHS = 5
BATCH_SIZE = 32
SAMPLES = 256  # 8 mini-batches of 32 per epoch
FEATURES = 20
CLASSES = 4
GOAL_SPEEDUP = 2.0

LoopResult = dict[str, Any]


# ------------------------------------------------------------------ synthetic data


def make_classification(
    samples: int = SAMPLES, features: int = FEATURES, classes: int = CLASSES
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian inputs labelled by a random linear teacher: (features, integer labels)."""
    inputs = torch.randn(samples, features)
    teacher = torch.randn(features, classes)
    labels = (inputs @ teacher).argmax(dim=1)
    return inputs, labels


def make_regression(
    samples: int = SAMPLES, features: int = FEATURES
) -> tuple[torch.Tensor, torch.Tensor]:
    """y = sin(x @ w) + noise, shape (samples, 1)."""
    inputs = torch.randn(samples, features)
    weights = torch.randn(features, 1) / math.sqrt(features)
    targets = torch.sin(inputs @ weights) + 0.1 * torch.randn(samples, 1)
    return inputs, targets


def final_params(model: nn.Module) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.parameters()]


# ------------------------------------------------------------------ the loops


def loop_mlp_crossentropy_sgd(compiled: bool) -> LoopResult:
    """nn.Sequential MLP, nn.CrossEntropyLoss, plain SGD, `return loss`, slicing batches."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, len(features), BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


class Net(nn.Module):
    """The tutorials' two-layer classifier: layers in __init__, F.relu in forward."""

    def __init__(self, features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def loop_mlp_functional_momentum(compiled: bool) -> LoopResult:
    """nn.Module subclass, F.cross_entropy, SGD with momentum, `return loss.item()`,
    a shuffling DataLoader whose last batch is smaller (250 samples, batches of 32)."""
    torch.manual_seed(SEED)
    features, labels = make_classification(samples=250)
    loader = DataLoader(TensorDataset(features, labels), batch_size=BATCH_SIZE, shuffle=True)
    model = Net(FEATURES, 64, CLASSES)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        output = model(x)
        loss = F.cross_entropy(output, y)
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        running_loss = 0.0
        for x, y in loader:
            running_loss += step(x, y)
        losses.append(running_loss / len(loader))
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_nesterov_tuple_batch(compiled: bool) -> LoopResult:
    """SGD(momentum, nesterov=True, weight_decay), Tanh MLP, the batch passed as a tuple."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    batches = [
        (features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
        for i in range(0, SAMPLES, BATCH_SIZE)
    ]
    model = nn.Sequential(nn.Linear(FEATURES, 48), nn.Tanh(), nn.Linear(48, CLASSES))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4
    )

    def train_step(batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x, y = batch
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for batch in batches:
            losses.append(step(batch).item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_regression_mse_adam_list(compiled: bool) -> LoopResult:
    """Regression with nn.MSELoss and Adam; each batch is a list [inputs, targets]."""
    torch.manual_seed(SEED)
    features, targets = make_regression()
    batches = [
        [features[i : i + BATCH_SIZE], targets[i : i + BATCH_SIZE]]
        for i in range(0, SAMPLES, BATCH_SIZE)
    ]
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    loss_fn = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(batch: list[torch.Tensor]) -> torch.Tensor:
        inputs, target = batch
        optimizer.zero_grad()
        prediction = model(inputs)
        loss = loss_fn(prediction, target)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for batch in batches:
            loss = step(batch)
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_regression_l1_adamw_dict(compiled: bool) -> LoopResult:
    """Regression with F.l1_loss and AdamW; each batch is a dict {"x": ..., "y": ...}.
    (PyTorch users might pick F.smooth_l1_loss here: minigrad has no smooth_l1_loss.)"""
    torch.manual_seed(SEED)
    features, targets = make_regression()
    batches = [
        {"x": features[i : i + BATCH_SIZE], "y": targets[i : i + BATCH_SIZE]}
        for i in range(0, SAMPLES, BATCH_SIZE)
    ]
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.SiLU(), nn.Linear(32, 1))
    optimizer = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)

    def train_step(batch: dict[str, torch.Tensor]) -> float:
        optimizer.zero_grad()
        loss = F.l1_loss(model(batch["x"]), batch["y"])
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for batch in batches:
            losses.append(step(batch))
    return {"losses": losses, "params": final_params(model), "step": step}


class BagOfEmbeddings(nn.Module):
    """Text classifier: token embeddings averaged over the sequence, then a Linear."""

    def __init__(self, vocab_size: int, embed_dim: int, classes: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fc = nn.Linear(embed_dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        embedded = self.embedding(tokens).mean(dim=1)
        return self.fc(embedded)


def loop_embedding_mean_adagrad(compiled: bool) -> LoopResult:
    """nn.Embedding + mean over the sequence + Linear, F.cross_entropy, Adagrad."""
    torch.manual_seed(SEED)
    vocab_size, seq_len = 100, 12
    tokens = torch.randint(0, vocab_size, (SAMPLES, seq_len))
    token_scores = torch.randn(vocab_size, CLASSES)
    labels = token_scores[tokens].sum(dim=1).argmax(dim=1)
    model = BagOfEmbeddings(vocab_size, 16, CLASSES)
    optimizer = optim.Adagrad(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(tokens[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_embedding_sum_sgd(compiled: bool) -> LoopResult:
    """nn.Embedding summed over the sequence, an nn.Sequential head, SGD with momentum."""
    torch.manual_seed(SEED)
    vocab_size, seq_len = 50, 8
    tokens = torch.randint(0, vocab_size, (SAMPLES, seq_len))
    token_scores = torch.randn(vocab_size, CLASSES)
    labels = token_scores[tokens].sum(dim=1).argmax(dim=1)
    embedding = nn.Embedding(vocab_size, 8)
    head = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, CLASSES))
    params = list(embedding.parameters()) + list(head.parameters())
    optimizer = optim.SGD(params, lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        logits = head(embedding(x).sum(dim=1))
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(tokens[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
    return {
        "losses": losses,
        "params": final_params(embedding) + final_params(head),
        "step": step,
    }


def loop_flatten_dropout_rmsprop(compiled: bool) -> LoopResult:
    """8x8 one-channel "images": nn.Flatten, nn.ReLU(inplace=True), nn.Dropout in training
    mode, RMSprop, `return loss.item()`."""
    torch.manual_seed(SEED)
    images = torch.randn(SAMPLES, 1, 8, 8)
    labels = (images[:, 0, :4, :].mean(dim=(1, 2)) > 0).long() + 2 * (
        images[:, 0, :, :4].mean(dim=(1, 2)) > 0
    ).long()
    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 128),
        nn.ReLU(inplace=True),
        nn.Dropout(0.2),
        nn.Linear(128, CLASSES),
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.RMSprop(model.parameters(), lr=1e-3)
    model.train()

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            losses.append(step(images[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE]))
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_leaky_relu_clip_adam(compiled: bool) -> LoopResult:
    """nn.LeakyReLU, torch.nn.utils.clip_grad_norm_ between backward and step, Adam."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = nn.Sequential(
        nn.Linear(FEATURES, 64),
        nn.LeakyReLU(0.1),
        nn.Linear(64, 64),
        nn.LeakyReLU(0.1),
        nn.Linear(64, CLASSES),
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_grad_accumulation(compiled: bool) -> LoopResult:
    """Gradient accumulation over two micro-batches of 32 inside one step: each loss is
    divided by the number of micro-batches and backpropagated, then one optimizer.step()."""
    torch.manual_seed(SEED)
    features, labels = make_classification(samples=512)
    accumulation_steps = 2
    model = Net(FEATURES, 64, CLASSES)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_step(micro_batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
        optimizer.zero_grad()
        total_loss = 0.0
        for x, y in micro_batches:
            loss = criterion(model(x), y) / accumulation_steps
            loss.backward()
            total_loss += loss.item()
        optimizer.step()
        return total_loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    big_batch = BATCH_SIZE * accumulation_steps
    for _epoch in range(EPOCHS):
        for i in range(0, len(features), big_batch):
            micro_batches = [
                (features[j : j + BATCH_SIZE], labels[j : j + BATCH_SIZE])
                for j in range(i, i + big_batch, BATCH_SIZE)
            ]
            losses.append(step(micro_batches))
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_grad_accumulation_counter(compiled: bool) -> LoopResult:
    """Gradient accumulation as most tutorials write it: the step gets the batch index
    and calls optimizer.step() / zero_grad() every `accumulation_steps` batches."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    accumulation_steps = 2
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor, batch_index: int) -> torch.Tensor:
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
        if (batch_index + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    optimizer.zero_grad()
    for _epoch in range(EPOCHS):
        for batch_index, i in enumerate(range(0, SAMPLES, BATCH_SIZE)):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE], batch_index)
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_steplr_sgd(compiled: bool) -> LoopResult:
    """SGD with momentum and optim.lr_scheduler.StepLR, stepped once per epoch outside the
    compiled step."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = Net(FEATURES, 64, CLASSES)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
        scheduler.step()
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_cosine_adamw_eval_dropout(compiled: bool) -> LoopResult:
    """AdamW with CosineAnnealingLR per epoch, a Dropout model switched between
    model.train() and model.eval(), and an evaluation step under torch.no_grad() compiled
    separately and called after each epoch."""
    torch.manual_seed(SEED)
    features, labels = make_classification(samples=SAMPLES + 128)
    train_x, train_y = features[:SAMPLES], labels[:SAMPLES]
    val_x, val_y = features[SAMPLES:], labels[SAMPLES:]
    model = nn.Sequential(
        nn.Linear(FEATURES, 64), nn.ReLU(), nn.Dropout(p=0.1), nn.Linear(64, CLASSES)
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=3e-3)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    def eval_step(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        with torch.no_grad():
            logits = model(x)
            loss = criterion(logits, y)
            accuracy = (logits.argmax(dim=1) == y).float().mean()
        return loss.item(), accuracy.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    evaluate = timed(torch.compile(eval_step) if compiled else eval_step)
    losses = []
    for _epoch in range(EPOCHS):
        model.train()
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(train_x[i : i + BATCH_SIZE], train_y[i : i + BATCH_SIZE])
            losses.append(loss.item())
        scheduler.step()
        model.eval()
        val_loss, val_accuracy = evaluate(val_x, val_y)
        losses.extend([val_loss, val_accuracy])
    return {"losses": losses, "params": final_params(model), "step": step, "eval_step": evaluate}


def loop_eval_decorator_no_grad(compiled: bool) -> LoopResult:
    """An evaluation function decorated with @torch.no_grad(), compiled separately, run on
    the whole validation set after each epoch; the training step returns loss.item()."""
    torch.manual_seed(SEED)
    features, labels = make_classification(samples=SAMPLES + 128)
    train_x, train_y = features[:SAMPLES], labels[:SAMPLES]
    val_x, val_y = features[SAMPLES:], labels[SAMPLES:]
    model = Net(FEATURES, 32, CLASSES)
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> float:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def eval_step(x: torch.Tensor, y: torch.Tensor) -> tuple[float, int]:
        logits = model(x)
        loss = F.cross_entropy(logits, y, reduction="sum")
        correct = (logits.argmax(dim=1) == y).sum()
        return loss.item(), int(correct.item())

    step = timed(torch.compile(train_step) if compiled else train_step)
    evaluate = timed(torch.compile(eval_step) if compiled else eval_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            losses.append(step(train_x[i : i + BATCH_SIZE], train_y[i : i + BATCH_SIZE]))
        val_loss, correct = evaluate(val_x, val_y)
        losses.extend([val_loss / len(val_x), correct / len(val_x)])
    return {"losses": losses, "params": final_params(model), "step": step, "eval_step": evaluate}


def loop_float_loss_weight(compiled: bool) -> LoopResult:
    """A float hyperparameter passed to the step each epoch: the weight of an L2 penalty
    on the parameters, ramped up as 0.5 * epoch / EPOCHS."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor, l2_weight: float) -> torch.Tensor:
        optimizer.zero_grad()
        penalty = sum(p.pow(2).sum() for p in model.parameters())
        loss = criterion(model(x), y) + l2_weight * penalty
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(EPOCHS):
        l2_weight = 0.5 * epoch / EPOCHS * 1e-3
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE], l2_weight)
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_float_mixing_weight(compiled: bool) -> LoopResult:
    """A float weight mixing two losses, `step(x, y, 0.5 * epoch_fraction)`: a classifier
    trained with cross-entropy plus an MSE on one-hot targets, weighted by the float."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = Net(FEATURES, 32, CLASSES)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)

    def train_step(x: torch.Tensor, y: torch.Tensor, mse_weight: float) -> float:
        optimizer.zero_grad()
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        mse = F.mse_loss(F.softmax(logits, dim=1), F.one_hot(y, CLASSES).float())
        loss = (1 - mse_weight) * ce + mse_weight * mse
        loss.backward()
        optimizer.step()
        return loss.item()

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for epoch in range(EPOCHS):
        epoch_fraction = epoch / (EPOCHS - 1)
        for i in range(0, SAMPLES, BATCH_SIZE):
            x, y = features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE]
            losses.append(step(x, y, 0.5 * epoch_fraction))
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_bce_logits_adam(compiled: bool) -> LoopResult:
    """Binary classifier: one logit, nn.BCEWithLogitsLoss on float targets of shape (N, 1),
    Adam, `return loss`."""
    torch.manual_seed(SEED)
    features = torch.randn(SAMPLES, FEATURES)
    targets = (features[:, :5].sum(dim=1, keepdim=True) > 0).float()
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-2)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], targets[i : i + BATCH_SIZE])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_layernorm_gelu_model_zero_grad(compiled: bool) -> LoopResult:
    """nn.LayerNorm + nn.GELU (stand-in for the missing nn.BatchNorm1d), AdamW,
    model.zero_grad() instead of optimizer.zero_grad(), batch size 64."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = nn.Sequential(
        nn.Linear(FEATURES, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, CLASSES)
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    batch_size = 64

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        model.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(2 * EPOCHS):
        for i in range(0, SAMPLES, batch_size):
            loss = step(features[i : i + batch_size], labels[i : i + batch_size])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_manual_sgd_update(compiled: bool) -> LoopResult:
    """The "What is torch.nn really?" style: the update by hand under torch.no_grad()
    (`p -= p.grad * lr`), then model.zero_grad(); shuffled with torch.randperm each epoch."""
    torch.manual_seed(SEED)
    features, targets = make_regression()
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Sigmoid(), nn.Linear(16, 1))
    loss_func = F.mse_loss
    lr = 0.05

    def train_step(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        loss = loss_func(model(xb), yb)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= p.grad * lr
            model.zero_grad()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        permutation = torch.randperm(SAMPLES)
        for i in range(0, SAMPLES, BATCH_SIZE):
            indices = permutation[i : i + BATCH_SIZE]
            loss = step(features[indices], targets[indices])
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_nll_logsoftmax_rmsprop_momentum(compiled: bool) -> LoopResult:
    """nn.LogSoftmax output layer with nn.NLLLoss, RMSprop with momentum and weight decay,
    a DataLoader with shuffle=True and drop_last=True."""
    torch.manual_seed(SEED)
    features, labels = make_classification(samples=300)
    loader = DataLoader(
        TensorDataset(features, labels), batch_size=BATCH_SIZE, shuffle=True, drop_last=True
    )
    model = nn.Sequential(
        nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, CLASSES), nn.LogSoftmax(dim=1)
    )
    criterion = nn.NLLLoss()
    optimizer = optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=1e-4)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for x, y in loader:
            loss = step(x, y)
            losses.append(loss.item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_detached_losses_stacked(compiled: bool) -> LoopResult:
    """No .item() per step (the advice for fast GPU loops): the loop keeps `loss.detach()`
    of every step and reads them with torch.stack(...) once per epoch."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = Net(FEATURES, 64, CLASSES)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        epoch_losses = []
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            epoch_losses.append(loss.detach())
        losses.extend(torch.stack(epoch_losses).tolist())
        losses.append(torch.stack(epoch_losses).mean().item())
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_return_loss_and_logits(compiled: bool) -> LoopResult:
    """The step returns (loss, logits); the loop computes the training accuracy from the
    logits outside the step, and keeps the logits of the epoch's first batch to the end."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        return loss, logits

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    first_batch_logits = []
    for _epoch in range(EPOCHS):
        correct = 0
        for i in range(0, SAMPLES, BATCH_SIZE):
            y = labels[i : i + BATCH_SIZE]
            loss, logits = step(features[i : i + BATCH_SIZE], y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            losses.append(loss.item())
            if i == 0:
                first_batch_logits.append(logits)
        losses.append(correct / SAMPLES)
    losses.extend(logits.sum().item() for logits in first_batch_logits)
    return {"losses": losses, "params": final_params(model), "step": step}


def loop_warmup_lambdalr_in_step(compiled: bool) -> LoopResult:
    """A linear warm-up with optim.lr_scheduler.LambdaLR stepped every batch, inside the
    step right after optimizer.step(), as per-iteration schedules are usually written."""
    torch.manual_seed(SEED)
    features, labels = make_classification()
    model = Net(FEATURES, 64, CLASSES)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=3e-3)
    warmup_steps = 16
    scheduler = optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=lambda it: min(1.0, (it + 1) / warmup_steps)
    )

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        return loss

    step = timed(torch.compile(train_step) if compiled else train_step)
    losses = []
    for _epoch in range(EPOCHS):
        for i in range(0, SAMPLES, BATCH_SIZE):
            loss = step(features[i : i + BATCH_SIZE], labels[i : i + BATCH_SIZE])
            losses.append(loss.item())
    losses.append(optimizer.param_groups[0]["lr"])
    return {"losses": losses, "params": final_params(model), "step": step}


LOOPS: list[Callable[[bool], LoopResult]] = [
    loop_mlp_crossentropy_sgd,
    loop_mlp_functional_momentum,
    loop_nesterov_tuple_batch,
    loop_regression_mse_adam_list,
    loop_regression_l1_adamw_dict,
    loop_embedding_mean_adagrad,
    loop_embedding_sum_sgd,
    loop_flatten_dropout_rmsprop,
    loop_leaky_relu_clip_adam,
    loop_grad_accumulation,
    loop_grad_accumulation_counter,
    loop_steplr_sgd,
    loop_cosine_adamw_eval_dropout,
    loop_eval_decorator_no_grad,
    loop_float_loss_weight,
    loop_float_mixing_weight,
    loop_bce_logits_adam,
    loop_layernorm_gelu_model_zero_grad,
    loop_manual_sgd_update,
    loop_nll_logsoftmax_rmsprop_momentum,
    loop_detached_losses_stacked,
    loop_return_loss_and_logits,
    loop_warmup_lambdalr_in_step,
]


# ------------------------------------------------------------------ measuring


def same_results(eager: LoopResult, compiled: LoopResult) -> bool:
    """Losses, final parameters and anything else the loop kept ("extra": counters, kept
    gradients, running statistics) equal bit for bit."""
    if not np.array_equal(np.asarray(eager["losses"]), np.asarray(compiled["losses"])):
        return False
    if not _same_extra(eager.get("extra", {}), compiled.get("extra", {})):
        return False
    if len(eager["params"]) != len(compiled["params"]):
        return False
    return all(np.array_equal(a, b) for a, b in zip(eager["params"], compiled["params"]))


def _same_extra(eager: dict, compiled: dict) -> bool:
    if eager.keys() != compiled.keys():
        return False
    for name in eager:
        a, b = np.asarray(eager[name], dtype=object), np.asarray(compiled[name], dtype=object)
        if a.shape != b.shape:
            return False
        try:
            if not np.array_equal(np.asarray(eager[name]), np.asarray(compiled[name])):
                return False
        except (ValueError, TypeError):  # ragged: compare item by item
            if repr(eager[name]) != repr(compiled[name]):
                return False
    return True


def first_difference(eager: LoopResult, compiled: LoopResult) -> str:
    """Where the compiled run first departs from the eager one, in words."""
    eager_losses, compiled_losses = np.asarray(eager["losses"]), np.asarray(compiled["losses"])
    if eager_losses.shape != compiled_losses.shape:
        return f"{len(eager_losses)} losses eager, {len(compiled_losses)} compiled"
    unequal = np.flatnonzero(eager_losses != compiled_losses)
    if unequal.size:
        index = int(unequal[0])
        return (
            f"loss {index} of {len(eager_losses)}: eager {eager_losses[index]!r}, "
            f"compiled {compiled_losses[index]!r}"
        )
    for number, (a, b) in enumerate(zip(eager["params"], compiled["params"])):
        if not np.array_equal(a, b):
            return f"parameter {number}: max |difference| {np.max(np.abs(a - b)):.3g}"
    extra_eager, extra_compiled = eager.get("extra", {}), compiled.get("extra", {})
    for name in sorted(set(extra_eager) | set(extra_compiled)):
        if not _same_extra({name: extra_eager.get(name)}, {name: extra_compiled.get(name)}):
            return (f"{name}: eager {_short_repr(extra_eager.get(name))}, compiled "
                    f"{_short_repr(extra_compiled.get(name))}")
    return "equal"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def replay_status(name: str, step: Any) -> dict[str, Any]:
    """Whether a compiled step replays and, where it (or one of its variants) runs eagerly,
    why: explain()'s first "variant N: eager: ..." line, or its last line when no variant
    says eager."""
    lines = [line.strip() for line in step.explain().splitlines()[1:]]
    variants = [line for line in lines if line.startswith("variant ")]
    eager = [line for line in variants if ": eager: " in line]
    status = {"replays": step.replays > 0, "explained": True, "note": ""}
    if eager and step.replays > 0:
        status["note"] = f"{name}: {len(eager)} of {len(variants)} variants eager, {eager[0]}"
    elif eager:
        status["note"] = f"{name}: {eager[0]}"
    elif step.replays == 0 and any(line.startswith("- eager:") for line in lines):
        status["note"] = f"{name}: {next(line for line in lines if line.startswith('- eager:'))}"
    elif step.replays == 0:
        status["explained"] = False
        status["note"] = f"{name}: no replay; {lines[-1] if lines else 'explain() is empty'}"
    return status


class Timed:
    """A step as the loop calls it (compiled or not), adding up the time spent inside its
    calls, tracing included, to the loop's in-step time. Anything else is the step's own
    (`step.replays`, `step.explain()`)."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            _IN_STEPS[0] += time.perf_counter() - start

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fn, name)


_IN_STEPS = [0.0]  # seconds spent inside the Timed steps of the loop running now


def timed(fn: Callable) -> Timed:
    """The loops' `step = timed(torch.compile(train_step) if compiled else train_step)`."""
    return Timed(fn)


def run_loop(loop: Callable[[bool], LoopResult], compiled: bool) -> tuple[float, float, LoopResult]:
    """(whole loop seconds, seconds inside its steps, what it returned)."""
    _IN_STEPS[0] = 0.0
    start = time.perf_counter()
    result = loop(compiled)
    return time.perf_counter() - start, _IN_STEPS[0], result


def measure(loop: Callable[[bool], LoopResult], repeats: int) -> dict[str, Any]:
    """Run a loop eager and compiled `repeats` times each, interleaved, alternating which
    goes first; check every pair for equality; report the compiled steps' replays."""
    eager_times: list[float] = []
    compiled_times: list[float] = []
    eager_steps: list[float] = []
    compiled_steps_times: list[float] = []
    trace_times: list[float] = []
    equal = True
    difference = "equal"
    compiled_result: LoopResult = {}
    for repeat in range(repeats):
        order = (False, True) if repeat % 2 == 0 else (True, False)
        results: dict[bool, LoopResult] = {}
        for compiled in order:
            seconds, in_steps, results[compiled] = run_loop(loop, compiled)
            (compiled_times if compiled else eager_times).append(seconds)
            (compiled_steps_times if compiled else eager_steps).append(in_steps)
        if equal and not same_results(results[False], results[True]):
            equal = False
            difference = first_difference(results[False], results[True])
        compiled_result = results[True]
        trace_times.append(sum(step.trace_seconds for _, step in compiled_steps(compiled_result)))
    statuses = [replay_status(name, step) for name, step in compiled_steps(compiled_result)]
    eager_ms = statistics.median(eager_times) * 1e3
    compiled_ms = statistics.median(compiled_times) * 1e3
    eager_step_ms = statistics.median(eager_steps) * 1e3
    compiled_step_ms = statistics.median(compiled_steps_times) * 1e3
    return {
        "loop": loop.__name__.removeprefix("loop_"),
        "replays": all(status["replays"] for status in statuses),
        "replay_notes": [status["note"] for status in statuses if status["note"]],
        "explained": all(status["explained"] for status in statuses),
        "equal": equal,
        "difference": difference,
        "eager_ms": eager_ms,
        "compiled_ms": compiled_ms,
        "trace_ms": statistics.median(trace_times) * 1e3,
        "speedup": eager_ms / compiled_ms,
        "eager_step_ms": eager_step_ms,
        "compiled_step_ms": compiled_step_ms,
        # Inside the steps only (tracing included): what compiling changes; the loop's
        # data, model and logging cost the same both ways.
        "step_speedup": eager_step_ms / compiled_step_ms if compiled_step_ms else 1.0,
    }


def compiled_steps(result: LoopResult) -> list[tuple[str, Any]]:
    """The compiled functions a loop returned: "step", "eval_step" if any, and those named
    in "other_steps" (a GAN's two steps), as (name, compiled function)."""
    found = [("step", result["step"])]
    if result.get("eval_step") is not None:
        found.append(("eval_step", result["eval_step"]))
    for name, step in result.get("other_steps", {}).items():
        found.append((name, step))
    return found


def run_all(repeats: int) -> list[dict]:
    """One row per loop: replays, equality, median eager and compiled times, speed-up."""
    rows = []
    with warnings.catch_warnings():
        # The table reports fallbacks (from explain()); the warnings would repeat them.
        warnings.simplefilter("ignore", CompileFallbackWarning)
        for loop in LOOPS:
            rows.append(measure(loop, repeats))
    return rows


def replay_cell(row: dict) -> str:
    notes = "; ".join(row["replay_notes"]).replace("|", "/")
    if row["replays"]:
        return f"yes, but {notes}" if notes else "yes"
    return f"no: {notes}"


def print_table(rows: list[dict]) -> None:
    print("| loop | replays? (or why not) | equal to eager | eager ms | compiled ms | speed-up "
          "| in steps: eager ms | compiled ms | speed-up |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        equal = "yes" if row["equal"] else f"**NO**: {row['difference']}"
        print(
            f"| {row['loop']} | {replay_cell(row)} | {equal} | {row['eager_ms']:.1f} "
            f"| {row['compiled_ms']:.1f} | {row['speedup']:.2f}x | {row['eager_step_ms']:.1f} "
            f"| {row['compiled_step_ms']:.1f} | {row['step_speedup']:.2f}x |"
        )
    median_speedup = statistics.median(row["speedup"] for row in rows)
    step_speedup = statistics.median(row["step_speedup"] for row in rows)
    print()
    print(f"median speed-up inside the steps (tracing included): {step_speedup:.2f}x")
    replaying = sum(row["replays"] for row in rows)
    all_explained = all(row["replays"] or row["explained"] for row in rows)
    all_equal = all(row["equal"] for row in rows)
    print()
    print(f"median speed-up: {median_speedup:.2f}x over {len(rows)} loops")
    print(f"replaying: {replaying} of {len(rows)}; all equal to eager: {all_equal}")
    trace_share = statistics.median(row["trace_ms"] / row["compiled_ms"] for row in rows)
    print(f"tracing (the traced calls, inside compiled ms): median {trace_share:.0%} of it")
    met = median_speedup >= GOAL_SPEEDUP and all_explained and all_equal
    print(
        f"goal (median >= {GOAL_SPEEDUP:g}x, every loop replays or says why, all equal): "
        f"{'met' if met else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats per loop, not 5")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per loop")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    start = time.perf_counter()
    rows = run_all(repeats)
    print_table(rows)
    print(f"\n{repeats} repeats per loop; total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

"""nanoGPT's model.py run on minigrad, with only its torch imports changed.

tests/nanogpt_model.py is Andrej Karpathy's nanoGPT model.py (MIT, attribution in that
file), verbatim. `load(lib)` runs its source with its three import lines (`import torch`,
`import torch.nn as nn`, `from torch.nn import functional as F`) turned into the library
given, minigrad or PyTorch; nothing else changes. minigrad now has
F.scaled_dot_product_attention, so nanoGPT takes its fast path (`self.flash` is True); its
slow path (the masked softmax by hand, with the causal mask as a buffer) runs when the
module it sees as torch.nn.functional has no such function.

On a tiny config (2 layers, 4 heads, 64 wide, context 32, Shakespeare's 65 characters),
float64, on PyTorch's weights loaded with strict=True: logits, loss and every gradient equal
PyTorch's to 1e-10, on both paths, with and without biases; a minigrad state_dict has
PyTorch's keys (the tied lm_head.weight too) and loads into PyTorch; configure_optimizers'
AdamW groups take the same step; generate samples (multinomial, top-k) and, with top_k=1,
decodes greedily as PyTorch does. Without PyTorch: generate, training mode with dropout,
and a training step under minigrad.compile equal to eager.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minigrad

SOURCE_FILE = Path(__file__).with_name("nanogpt_model.py")
SOURCE = SOURCE_FILE.read_text()
IMPORTS = ("import torch\n", "import torch.nn as nn\n", "from torch.nn import functional as F\n")
VOCAB = 65  # Shakespeare's characters
TOLERANCE = {"rtol": 1e-10, "atol": 1e-10}


class _Hiding:
    """`target` seen through a proxy: `hidden` names missing, `replaced` ones swapped."""

    def __init__(self, target: Any, hidden: tuple = (), replaced: dict | None = None) -> None:
        self._target, self._hidden, self._replaced = target, hidden, replaced or {}

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            raise AttributeError(name)
        if name in self._replaced:
            return self._replaced[name]
        return getattr(self._target, name)


def _without_sdpa(lib: Any) -> Any:
    """`lib` whose nn.functional lacks scaled_dot_product_attention (PyTorch before 2.0)."""
    functional = _Hiding(lib.nn.functional, hidden=("scaled_dot_product_attention",))
    return _Hiding(lib, replaced={"nn": _Hiding(lib.nn, replaced={"functional": functional})})


def load(lib: Any, flash: bool = True) -> types.ModuleType:
    """nanoGPT's model.py as a module, its `torch` being `lib` (minigrad or torch)."""
    source = SOURCE
    for line in IMPORTS:
        assert line in source, f"nanoGPT's model.py no longer has the line {line!r}"
        source = source.replace(line, "\n", 1)  # a blank line: tracebacks keep their numbers
    module = types.ModuleType(f"nanogpt_model_on_{lib.__name__}_{'flash' if flash else 'slow'}")
    module.__dict__.update(torch=lib if flash else _without_sdpa(lib), nn=lib.nn,
                           F=lib.nn.functional)
    sys.modules[module.__name__] = module  # @dataclass looks its module up there
    exec(compile(source, str(SOURCE_FILE), "exec"), module.__dict__)
    return module


def build(lib: Any, flash: bool = True, quiet: bool = True, **config: Any) -> Any:
    """A tiny GPT; nanoGPT prints its parameter count (and a warning on the slow path)."""
    nanogpt = load(lib, flash)
    settings = dict(n_layer=2, n_head=4, n_embd=64, block_size=32, vocab_size=VOCAB,
                    dropout=0.0, bias=True)
    settings.update(config)
    with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
        return nanogpt.GPT(nanogpt.GPTConfig(**settings))


def batch(seed: int = 0, ignored: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Token ids (3, 16) and next-token targets, a few of them -1 (ignored) if `ignored`."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, VOCAB, (3, 16))
    targets = rng.integers(0, VOCAB, (3, 16))
    if ignored:
        targets[0, :3] = -1  # nanoGPT's cross_entropy ignores index -1
    return idx, targets


def torch_and_minigrad(torch: Any, flash: bool, **config: Any) -> tuple[Any, Any]:
    """PyTorch's model in float64 and a minigrad one with its weights (strict=True)."""
    torch.manual_seed(0)
    theirs = build(torch, flash, **config).double()
    mine = build(minigrad, flash, **config)
    state = {name: value.numpy() for name, value in theirs.state_dict().items()}
    result = mine.load_state_dict(state, strict=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    return theirs, mine


def _close(mine: Any, theirs: Any, what: str) -> None:
    np.testing.assert_allclose(
        np.asarray(mine.detach().numpy()), theirs.detach().numpy(), **TOLERANCE, err_msg=what
    )


def test_minigrad_takes_nanogpts_fast_path() -> None:
    model = build(minigrad)
    assert all(block.attn.flash for block in model.transformer.h)
    slow = build(minigrad, flash=False)
    assert not any(block.attn.flash for block in slow.transformer.h)
    assert "transformer.h.0.attn.bias" in slow.state_dict()  # the causal mask, a buffer


@pytest.mark.parametrize("flash", [True, False], ids=["flash", "slow-path"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_logits_loss_and_every_gradient_equal_pytorch(real_torch, flash, bias) -> None:
    theirs, mine = torch_and_minigrad(real_torch, flash, bias=bias)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    idx, targets = batch()
    their_logits, their_loss = theirs(real_torch.tensor(idx), real_torch.tensor(targets))
    logits, loss = mine(minigrad.tensor(idx), minigrad.tensor(targets))
    _close(logits, their_logits, "logits")
    _close(loss, their_loss, "loss")
    their_loss.backward()
    loss.backward()
    their_params = dict(theirs.named_parameters())
    assert [name for name, _ in mine.named_parameters()] == list(their_params)
    for name, p in mine.named_parameters():
        _close(p.grad, their_params[name].grad, f"gradient of {name}")
    # Inference: nanoGPT runs lm_head on the last position only (x[:, [-1], :]).
    their_last, none = theirs(real_torch.tensor(idx))
    last, nothing = mine(minigrad.tensor(idx))
    assert none is None and nothing is None and last.shape == (3, 1, VOCAB)
    _close(last, their_last, "logits at the last position")


def test_a_minigrad_state_dict_has_pytorchs_keys_and_loads_into_pytorch(real_torch) -> None:
    mine = build(minigrad)
    theirs = build(real_torch).double()
    state = mine.state_dict()
    assert list(state) == list(theirs.state_dict())
    assert state["lm_head.weight"] is state["transformer.wte.weight"]  # tied: one tensor
    theirs.load_state_dict({k: real_torch.tensor(v.numpy()) for k, v in state.items()})
    idx, targets = batch(seed=1)
    _close(mine(minigrad.tensor(idx), minigrad.tensor(targets))[1],
           theirs(real_torch.tensor(idx), real_torch.tensor(targets))[1], "loss")


def test_configure_optimizers_takes_pytorchs_adamw_step(real_torch) -> None:
    theirs, mine = torch_and_minigrad(real_torch, flash=True)
    args = dict(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95), device_type="cpu")
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        their_optimizer = theirs.configure_optimizers(**args)
    with contextlib.redirect_stdout(io.StringIO()) as mine_printed:
        optimizer = mine.configure_optimizers(**args)
    assert mine_printed.getvalue() == printed.getvalue()  # group sizes, "fused AdamW: False"
    assert [len(g["params"]) for g in optimizer.param_groups] == [
        len(g["params"]) for g in their_optimizer.param_groups
    ]
    idx, targets = batch(seed=2)
    for _ in range(2):
        for model, optim, lib in ((theirs, their_optimizer, real_torch),
                                  (mine, optimizer, minigrad)):
            optim.zero_grad(set_to_none=True)
            model(lib.tensor(idx), lib.tensor(targets))[1].backward()
            optim.step()
    their_params = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        _close(p, their_params[name], f"{name} after two AdamW steps")


def test_generate_with_top_k_1_decodes_greedily_as_pytorch(real_torch) -> None:
    theirs, mine = torch_and_minigrad(real_torch, flash=True)
    theirs.eval(), mine.eval()
    start = np.array([[1, 2, 3], [4, 5, 6]])
    # 40 new tokens: past block_size (32), nanoGPT crops the context to the last 32.
    their_tokens = theirs.generate(real_torch.tensor(start), 40, top_k=1)
    tokens = mine.generate(minigrad.tensor(start), 40, top_k=1)
    np.testing.assert_array_equal(tokens.numpy(), their_tokens.numpy())


def test_generate_samples_with_temperature_and_top_k() -> None:
    model = build(minigrad)
    model.eval()
    minigrad.manual_seed(0)
    start = minigrad.tensor([[0], [7]])
    for top_k in (None, 5):
        tokens = model.generate(start, 12, temperature=0.8, top_k=top_k)
        assert tokens.shape == (2, 13) and tokens.dtype == np.int64
        assert (tokens.numpy() >= 0).all() and (tokens.numpy() < VOCAB).all()
        np.testing.assert_array_equal(tokens.numpy()[:, :1], [[0], [7]])
    # With top_k, every sampled token is among the k likeliest at its step.
    tokens = model.generate(start, 6, top_k=3).numpy()
    for step in range(1, tokens.shape[1]):
        with minigrad.no_grad():
            logits, _ = model(minigrad.tensor(tokens[:, :step]))
        likeliest = np.argsort(-logits.numpy()[:, -1], axis=-1)[:, :3]
        assert all(tokens[row, step] in likeliest[row] for row in range(2))


def test_training_with_dropout_runs_on_both_paths() -> None:
    idx, targets = batch(seed=3)
    for flash in (True, False):
        minigrad.manual_seed(0)
        model = build(minigrad, flash, dropout=0.2)
        model.train()
        first = model(minigrad.tensor(idx), minigrad.tensor(targets))[1]
        second = model(minigrad.tensor(idx), minigrad.tensor(targets))[1]
        assert first.item() != second.item()  # new dropout masks
        first.backward()
        assert all(np.isfinite(p.grad.numpy()).all() for p in model.parameters())


def _train(compiled: bool) -> tuple[list[float], list[np.ndarray], Any]:
    minigrad.manual_seed(0)
    model = build(minigrad, dropout=0.1)
    with contextlib.redirect_stdout(io.StringIO()):
        optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")

    def step(x, y):
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        return loss

    run = minigrad.compile(step) if compiled else step
    minigrad.manual_seed(1)  # the same dropout masks in both runs
    losses = []
    for seed in range(5):
        # No ignored target: with one, minigrad.compile keeps the step eager (the rows that
        # count are picked in NumPy from the labels, which a replay would not redo).
        idx, targets = batch(seed, ignored=False)
        losses.append(run(minigrad.tensor(idx), minigrad.tensor(targets)).item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def test_a_nanogpt_training_step_under_compile_replays_and_equals_eager() -> None:
    eager_losses, eager_params, _ = _train(compiled=False)
    losses, params, compiled = _train(compiled=True)
    replays = re.search(r"(\d+) replay", compiled.explain())
    assert replays and int(replays.group(1)) >= 3, compiled.explain()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(params, eager_params):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)

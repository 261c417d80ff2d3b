"""A tiny GPT training step: minigrad eager and compiled against PyTorch eager.

    .venv/bin/python benchmarks/gpt.py [--steps 20] [--repeats 3]

nanoGPT's architecture at toy size: 2 layers, 4 heads, 64 wide, context 32, a vocabulary
of 65 (Shakespeare's characters), batch 16. Token and position embeddings, pre-norm blocks
(LayerNorm → causal self-attention with F.scaled_dot_product_attention(is_causal=True) →
residual; LayerNorm → Linear(64→256) → GELU → Linear(256→64) → residual), a final
LayerNorm and an lm_head tied to the token embedding; cross entropy, `optim.AdamW`,
`optimizer.zero_grad()`, `loss.backward()`, `optimizer.step()`, `return loss`: the same
code on both libraries (`build(lib)`), float32. PyTorch on one thread
(`torch.set_num_threads(1)`), NumPy's BLAS on one thread (`make bench` sets
OPENBLAS_NUM_THREADS=1), medians of interleaved repeats in one process.

Budgets (issue "Sequences and attention"): eager <= 2.5x PyTorch eager; compiled <= 1.2x
PyTorch eager.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from steps import interleaved_medians

import minigrad

N_LAYER, N_HEAD, N_EMBD, BLOCK, VOCAB, BATCH = 2, 4, 64, 32, 65, 16
EAGER_BUDGET = 2.5
COMPILED_BUDGET = 1.2


def gpt_class(lib: Any) -> type:
    """nanoGPT's GPT written once for `lib` (minigrad or torch)."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(N_EMBD)
            self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
            self.c_proj = nn.Linear(N_EMBD, N_EMBD)
            self.ln_2 = nn.LayerNorm(N_EMBD)
            self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
            self.gelu = nn.GELU()
            self.mlp_proj = nn.Linear(4 * N_EMBD, N_EMBD)

        def attention(self, x: Any) -> Any:
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
            q, k, v = (z.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

        def forward(self, x: Any) -> Any:
            x = x + self.attention(self.ln_1(x))
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(VOCAB, N_EMBD)
            self.wpe = nn.Embedding(BLOCK, N_EMBD)
            self.h = nn.ModuleList([Block() for _ in range(N_LAYER)])
            self.ln_f = nn.LayerNorm(N_EMBD)
            self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
            self.register_buffer("pos", lib.arange(BLOCK), persistent=False)

        def forward(self, idx: Any, targets: Any) -> Any:
            t = idx.shape[1]
            x = self.wte(idx) + self.wpe(self.pos[:t])
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))

    return GPT


def build(lib: Any, dtype: Any) -> tuple[Any, Any]:
    """The model and its optimizer on `lib`."""
    model = gpt_class(lib)().to(dtype)
    return model, lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)


def step_fn(model: Any, optimizer: Any) -> Callable[[Any, Any], Any]:
    def step(idx: Any, targets: Any) -> Any:
        optimizer.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        return loss

    return step


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    text = rng.integers(0, VOCAB, BATCH * (BLOCK + 1)).reshape(BATCH, BLOCK + 1)
    return np.ascontiguousarray(text[:, :-1]), np.ascontiguousarray(text[:, 1:])


def copy_weights(source: Any, target: Any) -> None:
    """minigrad's initial weights into the torch model (state_dict keys match, tied ones
    included), so both train the same net."""
    import torch

    state = {name: torch.from_numpy(np.array(value.numpy())) for name, value in
             source.state_dict().items()}
    target.load_state_dict(state, strict=True)


def measure(steps: int, repeats: int) -> dict[str, float | None]:
    idx, targets = make_data()
    minigrad.manual_seed(0)
    model, optimizer = build(minigrad, minigrad.float32)
    x, y = minigrad.tensor(idx), minigrad.tensor(targets)
    compiled_model, compiled_optimizer = build(minigrad, minigrad.float32)
    compiled_model.load_state_dict(model.state_dict())
    runs: dict[str, tuple[Callable, Any, Any]] = {
        "minigrad eager": (step_fn(model, optimizer), x, y),
        "minigrad compiled": (minigrad.compile(step_fn(compiled_model, compiled_optimizer)), x, y),
    }
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        torch_model, torch_optimizer = build(torch, torch.float32)
        copy_weights(model, torch_model)
        runs["torch eager"] = (
            step_fn(torch_model, torch_optimizer), torch.from_numpy(idx), torch.from_numpy(targets)
        )
    return interleaved_medians(runs, steps, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"GPT step ({N_LAYER} layers, {N_HEAD} heads, {N_EMBD} wide, context {BLOCK}, batch "
        f"{BATCH}), float32, optim.AdamW; medians of {args.repeats} interleaved repeats of "
        f"{args.steps} steps\n"
    )
    m = measure(args.steps, args.repeats)
    eager, compiled, torch_ms = m["minigrad eager"], m["minigrad compiled"], m["torch eager"]
    print(
        "| minigrad eager ms | minigrad compiled ms | PyTorch eager ms | eager vs PyTorch | "
        f"compiled vs PyTorch | budgets ({EAGER_BUDGET}x, {COMPILED_BUDGET}x) |"
    )
    print("|---:|---:|---:|---:|---:|---|")
    if torch_ms is None:
        ratios, verdict, shown = ("n/a", "n/a"), "PyTorch not installed", "n/a"
    else:
        ratios = (f"{eager / torch_ms:.2f}x", f"{compiled / torch_ms:.2f}x")
        met = (eager / torch_ms <= EAGER_BUDGET, compiled / torch_ms <= COMPILED_BUDGET)
        verdict = ", ".join("met" if ok else "not met" for ok in met)
        shown = f"{torch_ms:.2f}"
    print(f"| {eager:.2f} | {compiled:.2f} | {shown} | {ratios[0]} | {ratios[1]} | {verdict} |")


if __name__ == "__main__":
    main()

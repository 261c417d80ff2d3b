"""viz.module_scopes: a forward run inside it marks each node with the module that made
it, and draw() frames each module's nodes (nested as the module names are), so the
drawing of an attention block reads module by module."""

from __future__ import annotations

import re

import pytest

import minigrad
from minigrad import nn, viz


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        q, k, v = self.qkv(x).split(8, dim=-1)
        weights = (q @ k.transpose(-2, -1) / 8**0.5).softmax(-1)
        return self.proj(weights @ v)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.attn = Attention()

    def forward(self, x):
        return x + self.attn(self.ln(x))


def _frames(source: str) -> list[str]:
    return re.findall(r"subgraph cluster_m\d+ \{ graph \[label=<([^>]*)>", source)


def test_each_module_gets_a_frame_nested_as_its_name() -> None:
    model = nn.Sequential(Block())
    with viz.module_scopes(model):
        loss = model(minigrad.randn(4, 8)).sum()
    source = viz.draw(loss, model=model, show_data=False).source
    frames = _frames(source)
    assert frames == ["0 (Block)", "0.attn (Attention)", "0.attn.proj (Linear)",
                      "0.attn.qkv (Linear)", "0.ln (LayerNorm)"]
    # The softmax is the attention's own operation: inside its frame, not in a Linear's.
    attention = source.split("label=<0.attn (Attention)>")[1]
    before_proj = attention.split("label=<0.attn.proj (Linear)>")[0]
    assert "SoftmaxBackward" in before_proj
    # A Linear's weight sits in its module's frame; the final sum is outside every frame.
    qkv = source.split("label=<0.attn.qkv (Linear)>")[1].split("}")[0]
    assert "0.attn.qkv.weight" in qkv
    assert source.index("SumBackward") < source.index("subgraph")


def test_forward_is_the_class_method_again_after_the_block() -> None:
    model = nn.Sequential(Block())
    with viz.module_scopes(model):
        model(minigrad.randn(2, 8))
    assert "forward" not in model[0].__dict__
    # A forward run outside the block leaves its nodes unframed.
    loss = model(minigrad.randn(2, 8)).sum()
    assert _frames(viz.draw(loss, model=model).source) == []


def test_module_scopes_says_what_it_needs() -> None:
    with pytest.raises(TypeError, match=r"module_scopes\(model=\.\.\.\) expects a minigrad\.nn"):
        with viz.module_scopes(object()):
            pass

    model = nn.Linear(2, 2)

    def step(x):
        with viz.module_scopes(model):
            return model(x).sum()

    compiled = minigrad.compile(step)
    with pytest.raises(RuntimeError, match="cannot run inside minigrad.compile"):
        compiled(minigrad.randn(1, 2))

"""Activations as Modules, so they can sit in a Sequential."""

from __future__ import annotations

from minigrad.nn.module import Module
from minigrad.variable import Variable


class ReLU(Module):
    """max(x, 0), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return x.relu()


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return x.tanh()


class Sigmoid(Module):
    """1 / (1 + e^(-x)), elementwise."""

    def forward(self, x: Variable) -> Variable:
        return x.sigmoid()

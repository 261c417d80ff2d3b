"""minigrad.nn: Modules, layers, activations and losses, with PyTorch's names."""

from minigrad.nn import init
from minigrad.nn.activation import ReLU, Sigmoid, Tanh
from minigrad.nn.container import Sequential
from minigrad.nn.linear import Linear
from minigrad.nn.loss import CrossEntropyLoss, MSELoss
from minigrad.nn.module import Module
from minigrad.variable import Parameter

__all__ = [
    "CrossEntropyLoss",
    "Linear",
    "MSELoss",
    "Module",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Tanh",
    "init",
]

"""minigrad.optim: optimizers that update Parameters from their gradients."""

from minigrad.optim.adam import Adam
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.sgd import SGD

__all__ = ["SGD", "Adam", "Optimizer"]

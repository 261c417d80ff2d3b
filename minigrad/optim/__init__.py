"""minigrad.optim: optimizers that update Parameters from their gradients, and
learning-rate schedulers (minigrad.optim.lr_scheduler), weight averaging
(minigrad.optim.swa_utils)."""

from typing import Any

from minigrad.core.errors import missing_name
from minigrad.optim import lr_scheduler, swa_utils
from minigrad.optim.adagrad import Adagrad
from minigrad.optim.adam import Adam
from minigrad.optim.adamw import AdamW
from minigrad.optim.lbfgs import LBFGS
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.rmsprop import RMSprop
from minigrad.optim.sgd import SGD

__all__ = [
    "LBFGS",
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "lr_scheduler",
    "swa_utils",
]


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.optim' has no attribute {name!r}")
    raise missing_name("torch.optim", name, __all__)

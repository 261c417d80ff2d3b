"""minigrad.nn: Modules, layers, activations and losses, with PyTorch's names."""

from typing import Any

from minigrad.core.errors import missing_name
from minigrad.core.variable import Parameter
from minigrad.nn import functional, init, modules, utils
from minigrad.nn.activation import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.container import ModuleDict, ModuleList, Sequential
from minigrad.nn.conv import (
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    Fold,
    Unfold,
)
from minigrad.nn.data_parallel import DataParallel
from minigrad.nn.distance import CosineSimilarity, PairwiseDistance
from minigrad.nn.dropout import Dropout, Dropout2d
from minigrad.nn.embedding import Embedding
from minigrad.nn.flatten import Flatten, Unflatten
from minigrad.nn.layer_norm import LayerNorm
from minigrad.nn.linear import Identity, Linear
from minigrad.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from minigrad.nn.module import Module
from minigrad.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm
from minigrad.nn.parameter_containers import ParameterDict, ParameterList
from minigrad.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from minigrad.nn.prelu import PReLU
from minigrad.nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from minigrad.nn.transformer import TransformerEncoder, TransformerEncoderLayer
from minigrad.nn.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "CosineSimilarity",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Dropout2d",
    "Embedding",
    "Flatten",
    "Fold",
    "GELU",
    "GRU",
    "GRUCell",
    "GroupNorm",
    "Identity",
    "KLDivLoss",
    "L1Loss",
    "LSTM",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiheadAttention",
    "NLLLoss",
    "PairwiseDistance",
    "PReLU",
    "Parameter",
    "ParameterDict",
    "ParameterList",
    "RNN",
    "RNNCell",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "Unflatten",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "functional",
    "init",
    "modules",
    "utils",
]


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.nn' has no attribute {name!r}")
    raise missing_name("torch.nn", name, __all__)

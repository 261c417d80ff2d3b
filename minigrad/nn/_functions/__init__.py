"""The Functions behind nn.functional that are not plain compositions of tensor ops.

Each one is here because a composition would be unstable (log_sigmoid, the clamped logs of
binary_cross_entropy), would not give PyTorch's gradient (an embedding's padding row gets
none; leaky_relu's backward must itself reach x), needs a NumPy routine minigrad has no op
for (pad), or makes values from a batch that a compiled step must make again (dropout's
mask, one_hot's rows), or gives two outputs from one pass whose backward is shorter by hand
than by the chain rule (attention: its output and its weights, softmax's backward without
the Jacobian), or takes one pass where a composition takes many (GELU's Φ), or runs a loop
that would otherwise cost the engine a node per operation per step (an LSTM layer's time
loop, its backward BPTT written out). Their backward formulas are Variable operations, so
second derivatives work.
"""

from minigrad.nn._functions.attention import Attention
from minigrad.nn._functions.binary_cross_entropy import BinaryCrossEntropy
from minigrad.nn._functions.dropout_mask import DropoutMask
from minigrad.nn._functions.embedding_lookup import EmbeddingLookup
from minigrad.nn._functions.leaky_relu import LeakyRelu
from minigrad.nn._functions.log_sigmoid import LogSigmoid
from minigrad.nn._functions.lstm import LSTMLayer
from minigrad.nn._functions.normal_cdf import NormalCdf
from minigrad.nn._functions.one_hot import OneHot
from minigrad.nn._functions.pad import ConstantPad

__all__ = [
    "Attention",
    "BinaryCrossEntropy",
    "ConstantPad",
    "DropoutMask",
    "EmbeddingLookup",
    "LeakyRelu",
    "LogSigmoid",
    "LSTMLayer",
    "NormalCdf",
    "OneHot",
]

"""torch.nn.utils's names: gradient clipping, parameters as one vector, and `rnn`
(pad_sequence)."""

from minigrad.nn.utils import rnn
from minigrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from minigrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]

"""Parameters as one flat vector and back (PyTorch's torch.nn.utils names)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from minigrad.core.checks import check_iterable
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.ops.shape import cat


def parameters_to_vector(parameters: Iterable[Variable]) -> Variable:
    """All parameters flattened and joined in order: shape (Σ sizes,)."""
    flat = [parameter.reshape(-1) for parameter in _numeric(parameters, "parameters_to_vector")]
    if not flat:
        raise ValueError("parameters_to_vector: got no parameters.")
    return cat(flat)


def vector_to_parameters(vector: Variable, parameters: Iterable[Variable]) -> None:
    """Copy consecutive slices of `vector` into each parameter's data, in place."""
    if not isinstance(vector, Variable):
        raise TypeError(
            f"vector_to_parameters expects a Variable as vector; got {type(vector).__name__}."
        )
    parameters = _numeric(parameters, "vector_to_parameters")
    total = sum(int(np.prod(parameter.shape)) for parameter in parameters)
    if vector.dim() != 1 or vector.shape[0] != total:
        raise ValueError(
            f"vector_to_parameters: the vector has shape {tuple(vector.shape)}; the parameters "
            f"hold {total} numbers, so it must have shape ({total},)."
        )
    start = 0
    with no_grad():
        for parameter in parameters:
            size = int(np.prod(parameter.shape))
            parameter.copy_(vector[start : start + size].reshape(parameter.shape))
            start += size


def _numeric(parameters: Iterable[Variable], caller: str) -> list[Variable]:
    if isinstance(parameters, Variable):
        raise TypeError(f"{caller} expects an iterable of Variables, e.g. model.parameters().")
    found = check_iterable(parameters, "parameters", caller, "Variables (model.parameters())")
    for parameter in found:
        if not isinstance(parameter, Variable) or isinstance(parameter.data, str):
            raise TypeError(f"{caller} expects numeric Variables; got {type(parameter).__name__}.")
    return found

"""The operations as plain functions, for PyTorch-shaped code: minigrad.tanh(x) is x.tanh()."""

from __future__ import annotations

from typing import Any

from minigrad.variable import Variable


def exp(x: Variable) -> Variable:
    return x.exp()


def log(x: Variable) -> Variable:
    return x.log()


def tanh(x: Variable) -> Variable:
    return x.tanh()


def sigmoid(x: Variable) -> Variable:
    return x.sigmoid()


def relu(x: Variable) -> Variable:
    return x.relu()


def sqrt(x: Variable) -> Variable:
    return x.sqrt()


def matmul(a: Variable, b: Any) -> Variable:
    return a @ b


def softmax(x: Variable, dim: int) -> Variable:
    return x.softmax(dim)


def log_softmax(x: Variable, dim: int) -> Variable:
    return x.log_softmax(dim)


def reshape(x: Variable, shape: Any) -> Variable:
    return x.reshape(shape)


def transpose(x: Variable, dim0: int, dim1: int) -> Variable:
    return x.transpose(dim0, dim1)


def unsqueeze(x: Variable, dim: int) -> Variable:
    return x.unsqueeze(dim)


def squeeze(x: Variable, dim: int | None = None) -> Variable:
    return x.squeeze(dim)

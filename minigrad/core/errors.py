"""The engine's errors: each a type that carries its data, with PyTorch's wording.

Each is a subclass of the exception PyTorch raises (RuntimeError), so `except
RuntimeError` keeps working; a program (or a course check) that wants to know *what* went
wrong reads the fields instead of parsing the message.
"""

from __future__ import annotations

from typing import Any


class GradientCountError(RuntimeError):
    """A Function's backward returned `got` gradients; forward had `expected` inputs."""

    def __init__(self, node_name: str, expected: int, got: int) -> None:
        self.node_name = node_name
        self.expected = expected
        self.got = got
        super().__init__(
            f"function {node_name} returned an incorrect number of gradients "
            f"(expected {expected}, got {got}): backward must return one gradient "
            f"per input of forward, None for inputs that need none."
        )


class GradientShapeError(RuntimeError):
    """The gradient at position `index` has shape `got`; its input has shape `expected`."""

    def __init__(self, node_name: str, index: int, expected: tuple, got: tuple) -> None:
        self.node_name = node_name
        self.index = index
        self.expected = expected
        self.got = got
        super().__init__(
            f"function {node_name} returned an invalid gradient at index {index}: "
            f"got shape {got} but expected shape {expected} (or a shape that "
            f"{expected} broadcasts to, which is summed back)."
        )


class GradientForNonVariableError(RuntimeError):
    """A gradient (not None) was returned at `index`, where forward's input was no Variable."""

    def __init__(self, node_name: str, index: int) -> None:
        self.node_name = node_name
        self.index = index
        super().__init__(
            f"function {node_name} returned a gradient different than None at position "
            f"{index}, but the corresponding forward input was not a Variable; return None "
            f"there."
        )


class NoGradFnError(RuntimeError):
    """Output `index` of a backward call neither requires grad nor has a grad_fn."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(
            f"element {index} of variables does not require grad and does not have a "
            f"grad_fn. Set requires_grad=True on the leaves before computing it, and make "
            f"sure it was not computed under no_grad()."
        )


BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "variables after they have already been freed). Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
    "you need to backward through the graph a second time or if you need to access saved "
    "variables after calling backward."
)


class BackwardTwiceError(RuntimeError):
    """The saved values of node `node_name` were freed by an earlier backward."""

    def __init__(self, node_name: str | None = None) -> None:
        self.node_name = node_name
        super().__init__(BACKWARD_TWICE)


class InplaceModifiedError(RuntimeError):
    """A Variable saved for backward was changed in place after it was saved."""

    def __init__(self, node_name: str, shape: Any, version: int, expected_version: int) -> None:
        self.node_name = node_name
        self.shape = shape
        self.version = version
        self.expected_version = expected_version
        super().__init__(
            f"one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: a Variable of shape {shape} used by "
            f"{node_name} is at version {version}; expected version "
            f"{expected_version} instead. Change the in-place operation (x += y) to an "
            f"out-of-place one (x = x + y), or .clone() before changing it."
        )


__all__ = [
    "BACKWARD_TWICE",
    "BackwardTwiceError",
    "GradientCountError",
    "GradientForNonVariableError",
    "GradientShapeError",
    "InplaceModifiedError",
    "NoGradFnError",
]

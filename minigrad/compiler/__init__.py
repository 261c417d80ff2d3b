"""minigrad.compile: trace a training step once, replay it as prebound array calls."""

from minigrad.compiler.compiled import CompiledFunction, compile  # noqa: A004

__all__ = ["CompiledFunction", "compile"]

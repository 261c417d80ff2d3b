"""minigrad.compile: trace a training step once, replay it as prebound array calls."""

from minigrad.compiler.compiled import (
    CompiledFunction,
    CompileFallbackWarning,
    compile,  # noqa: A004 - PyTorch's name, torch.compile
)

__all__ = ["CompileFallbackWarning", "CompiledFunction", "compile"]

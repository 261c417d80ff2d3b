"""Embedding: a table of vectors looked up by integer index (word → vector)."""

from __future__ import annotations

from typing import Any

from minigrad import factories
from minigrad.core.checks import check_flag
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module


class Embedding(Module):
    """y = weight[x]: indices x (*) → vectors (*, embedding_dim).

    weight (num_embeddings, embedding_dim) starts as N(0, 1), as in PyTorch; the row
    padding_idx starts at 0 and gets no gradient. With max_norm, each looked-up row longer
    than max_norm (in the norm_type-norm) is scaled back to that length in weight itself.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Variable | None = None,
        _freeze: bool = False,
    ) -> None:
        super().__init__()
        sizes = (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim))
        for label, value in sizes:  # the kinds first, as PyTorch checks them
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(
                    f"Embedding: {label} must be an int >= 0; got {type(value).__name__} "
                    f"{value!r}."
                )
        for label, value in sizes:
            if value < 0:
                raise ValueError(f"Embedding: {label} must be an int >= 0; got {value!r}.")
        if padding_idx is not None:
            if not isinstance(padding_idx, int) or isinstance(padding_idx, bool):
                raise TypeError(
                    f"Embedding: padding_idx must be an int (a row of the table) or None; got "
                    f"{type(padding_idx).__name__} {padding_idx!r}."
                )
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"padding_idx must be within num_embeddings ({num_embeddings}); got "
                    f"{padding_idx}."
                )
            padding_idx %= num_embeddings
        scale_grad_by_freq = check_flag(scale_grad_by_freq, "scale_grad_by_freq", "Embedding")
        sparse = check_flag(sparse, "sparse", "Embedding")
        if scale_grad_by_freq or sparse:
            raise NotImplementedError(
                "Embedding: scale_grad_by_freq and sparse are not supported by minigrad; "
                "leave them at their defaults (False, False)."
            )
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(factories.empty(num_embeddings, embedding_dim))
            self.reset_parameters()
        else:
            if not isinstance(_weight, Variable) or _weight.is_text:
                raise TypeError(
                    f"Embedding: _weight must be a numeric Variable of shape ({num_embeddings}, "
                    f"{embedding_dim}) or None; got {type(_weight).__name__}."
                )
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight must have shape ({num_embeddings}, {embedding_dim}); "
                    f"got {tuple(_weight.shape)}."
                )
            self.weight = Parameter(_weight.data.copy(), requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, x: Any) -> Variable:
        return F.embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Variable,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is a copy of `embeddings` (rows, dim); frozen by default."""
        if not isinstance(embeddings, Variable) or embeddings.ndim != 2:
            got = embeddings.shape if isinstance(embeddings, Variable) else type(embeddings)
            raise ValueError(
                f"Embeddings parameter is expected to be 2-dimensional (rows, dim); got {got}."
            )
        rows, dim = embeddings.shape
        return cls(
            rows,
            dim,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        return text

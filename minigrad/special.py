"""torch.special under its names: the special functions minigrad has, and a few made of them.

The ops themselves live in the op table (`minigrad.lgamma`, `minigrad.erfinv`, ...); this
module gives them PyTorch's `torch.special` spellings (`gammaln` for lgamma, `psi` for
digamma, `expit` for sigmoid) and composes the rest from them, so their gradients come from
the engine: erfc(x) = 1 - erf(x); ndtr(x) = (1 + erf(x/sqrt 2)) / 2, the standard normal CDF;
ndtri(p) = sqrt 2 * erfinv(2p - 1), its inverse; logit(p) = log(p / (1 - p)).
"""

from __future__ import annotations

import math
from typing import Any

import minigrad
from minigrad.core import errors
from minigrad.core.variable import Variable

# What PyTorch's torch.special calls the op table's functions.
digamma = minigrad.digamma
psi = minigrad.digamma
gammaln = minigrad.lgamma
polygamma = minigrad.polygamma
erf = minigrad.erf
erfinv = minigrad.erfinv
expit = minigrad.sigmoid
expm1 = minigrad.expm1
log1p = minigrad.log1p
xlogy = minigrad.xlogy
round = minigrad.round  # noqa: A001 (PyTorch's name: torch.special.round)
logsumexp = minigrad.logsumexp
softmax = minigrad.softmax
log_softmax = minigrad.log_softmax


def _variable(x: Any, name: str) -> Variable:
    if isinstance(x, Variable):
        return x
    raise TypeError(
        f"torch.special.{name}(): argument 'input' must be a Variable, but got "
        f"{type(x).__name__}. Make one with minigrad.tensor(...)."
    )


def _floating(x: Variable) -> Variable:
    """Integers and bools become the default float, as PyTorch's special functions do."""
    return x if x.dtype.kind == "f" else x.to(minigrad.get_default_dtype())


def erfc(x: Variable) -> Variable:
    """1 - erf(x), elementwise; same shape."""
    return 1 - minigrad.erf(_floating(_variable(x, "erfc")))


def exp2(x: Variable) -> Variable:
    """2 ** x, elementwise; same shape."""
    return 2.0 ** _floating(_variable(x, "exp2"))


def ndtr(x: Variable) -> Variable:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, elementwise."""
    x = _floating(_variable(x, "ndtr"))
    return (1 + minigrad.erf(x / math.sqrt(2.0))) / 2


def ndtri(p: Variable) -> Variable:
    """The inverse of ndtr: sqrt 2 * erfinv(2p - 1), elementwise (inf at 1, -inf at 0)."""
    p = _floating(_variable(p, "ndtri"))
    return math.sqrt(2.0) * minigrad.erfinv(2 * p - 1)


def logit(p: Variable, eps: float | None = None) -> Variable:
    """log(p / (1 - p)), elementwise; with eps, p is first clamped to [eps, 1 - eps]."""
    p = _floating(_variable(p, "logit"))
    if eps is not None:
        p = p.clamp(eps, 1 - eps)
    return minigrad.log(p / (1 - p))


def xlog1py(x: Variable, y: Variable) -> Variable:
    """x * log1p(y), with 0 where x is 0 (even where log1p(y) is infinite);
    d/dx = log1p(y), also at x = 0 (as PyTorch), except where y <= -1 there."""
    x = _floating(_variable(x, "xlog1py"))
    y = minigrad.as_tensor(y, dtype=x.dtype) if not isinstance(y, Variable) else y
    undefined = (x == 0) & (y <= -1)
    safe = minigrad.where(undefined, minigrad.zeros_like(y), y)  # no inf * 0 in the gradient
    return minigrad.where(undefined, minigrad.zeros_like(x), x * minigrad.log1p(safe))


def sinc(x: Variable) -> Variable:
    """sin(pi x) / (pi x), and 1 at x = 0, elementwise."""
    x = _floating(_variable(x, "sinc"))
    zero = x == 0
    safe = minigrad.where(zero, minigrad.ones_like(x), x) * math.pi
    return minigrad.where(zero, minigrad.ones_like(x), minigrad.sin(safe) / safe)


def entr(x: Variable) -> Variable:
    """-x log x for x > 0, 0 at 0, -inf for x < 0, elementwise (the entropy's terms)."""
    x = _floating(_variable(x, "entr"))
    positive = x > 0
    safe = minigrad.where(positive, x, minigrad.ones_like(x))
    outside = minigrad.where(x == 0, minigrad.zeros_like(x), minigrad.full_like(x, -math.inf))
    return minigrad.where(positive, -safe * minigrad.log(safe), outside)


_NAMES = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
    "log1p", "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "polygamma", "psi",
    "round", "sinc", "softmax", "xlog1py", "xlogy",
]


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks (the Bessel functions, zeta, ...): say so.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.special' has no attribute {name!r}")
    raise errors.missing_name("torch.special", name, _NAMES)

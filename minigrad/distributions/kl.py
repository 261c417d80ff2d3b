"""kl_divergence(p, q) = KL(p ‖ q) = E_p[log p(x) - log q(x)], one value per batch element,
from formulas registered per pair of types with register_kl (torch.distributions.kl).

A pair (P, Q) is served by the registered (P', Q') with P a subclass of P' and Q of Q'
that is most specific; an unregistered pair raises NotImplementedError.

The pairs here (closed forms; +inf where p puts mass where q has none):
    Normal‖Normal          ½(σp²/σq² + (μp - μq)²/σq² - 1 - log(σp²/σq²))
    Bernoulli‖Bernoulli    p log(p/q) + (1 - p) log((1 - p)/(1 - q))
    Categorical‖Categorical, OneHotCategorical‖OneHotCategorical   Σ_k p_k log(p_k/q_k)
    Uniform‖Uniform        log((bq - aq)/(bp - ap)) if [ap, bp] ⊂ [aq, bq], else inf
    MultivariateNormal‖MultivariateNormal
                           ½(tr(Σq⁻¹Σp) + (μq - μp)ᵀΣq⁻¹(μq - μp) - n) + ½ log(det Σq / det Σp)
    Independent‖Independent  the bases' KL summed over the reinterpreted dimensions
    Exponential‖Exponential  λq/λp - 1 - log(λq/λp)
    Laplace‖Laplace        log(bq/bp) + |μp - μq|/bq + (bp/bq) e^(-|μp - μq|/bp) - 1
    Gamma‖Gamma            αq log(βp/βq) + lgamma(αq) - lgamma(αp) + (αp - αq) ψ(αp)
                           + (βq - βp) αp/βp                        (ψ = digamma)
    Dirichlet‖Dirichlet    lgamma(Σαp) - lgamma(Σαq) - Σ(lgamma(αp) - lgamma(αq))
                           + Σ (αp - αq)(ψ(αp) - ψ(Σαp))
    Beta‖Beta              the Dirichlet formula for (a, b), written out
    Uniform‖Normal         log(√(2π) σ/(b - a)) + ((b - a)²/12 + ((a + b)/2 - μ)²) / (2σ²)
    Normal‖Uniform         inf (a normal has mass outside any interval)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.beta import Beta
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.exponential import Exponential
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.independent import Independent
from minigrad.distributions.laplace import Laplace
from minigrad.distributions.multivariate_normal import (
    MultivariateNormal,
    batch_mahalanobis,
    diagonal,
)
from minigrad.distributions.normal import Normal
from minigrad.distributions.one_hot_categorical import OneHotCategorical
from minigrad.distributions.triangular_solve import solve_triangular
from minigrad.distributions.uniform import Uniform
from minigrad.distributions.utils import broadcast_shapes, sum_rightmost
from minigrad.nn.functional import softplus

# (type of p, type of q) -> formula, as registered; and the answer found for each pair of
# concrete types asked about since (cleared when a formula is registered).
_KL_REGISTRY: dict[tuple[type, type], Callable] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator: the function computes kl_divergence(p, q) for p a type_p, q a type_q.

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...
    """
    for name, kind in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(kind, type) and issubclass(kind, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {kind}")

    def decorator(function: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = function
        _KL_MEMOIZE.clear()  # a new formula may be the more specific one for a pair
        return function

    return decorator


def _distance(kind: type, ancestor: type) -> int:
    """How many steps up kind's method resolution order `ancestor` is (0: itself)."""
    return kind.__mro__.index(ancestor)


def _most_specific(matches: list, type_p: type, type_q: type, p_first: bool) -> tuple:
    """The registered pair closest to (type_p, type_q): nearest in p, ties broken by q
    (p_first), or nearest in q, ties broken by p."""

    def distances(pair: tuple) -> tuple[int, int]:
        in_p, in_q = _distance(type_p, pair[0]), _distance(type_q, pair[1])
        return (in_p, in_q) if p_first else (in_q, in_p)

    return min(matches, key=distances)


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    """The most specific registered formula for (type_p, type_q), or NotImplemented.

    When "nearest in p first" and "nearest in q first" pick different formulas the pair
    is ambiguous: warn, and use the first."""
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    left = _most_specific(matches, type_p, type_q, p_first=True)
    right = _most_specific(matches, type_p, type_q, p_first=False)
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left[0].__name__}, {right[1].__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution) -> Variable:
    """KL(p ‖ q), of shape batch_shape (the two batch shapes broadcast)."""
    pair = (type(p), type(q))
    if pair not in _KL_MEMOIZE:
        _KL_MEMOIZE[pair] = _dispatch_kl(*pair)
    function = _KL_MEMOIZE[pair]
    if function is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}. Register a formula with "
            f"@register_kl({type(p).__name__}, {type(q).__name__}), or estimate it from "
            f"samples: (p.log_prob(x) - q.log_prob(x)).mean(0) with x = p.sample((n,))."
        )
    return function(p, q)


def _infinite_like(value: Variable) -> Variable:
    return minigrad.full_like(value, math.inf)


# --------------------------------------------------------------------------- same types


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Variable:
    # log(p/q) = softplus(-lq) - softplus(-lp), and the same for 1 - p with +l.
    ones = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    ones = minigrad.where(q.probs == 0, math.inf, ones)
    ones = minigrad.where(p.probs == 0, 0.0, ones)
    zeros = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    zeros = minigrad.where(q.probs == 1, math.inf, zeros)
    zeros = minigrad.where(p.probs == 1, 0.0, zeros)
    return ones + zeros


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Variable:
    terms = p.probs * (p.logits - q.logits)
    # A class q never draws costs inf, unless p never draws it either (0·log 0 = 0).
    terms = minigrad.where((q.probs == 0).expand_as(terms), math.inf, terms)
    terms = minigrad.where((p.probs == 0).expand_as(terms), 0.0, terms)
    return terms.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(
    p: OneHotCategorical, q: OneHotCategorical
) -> Variable:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Variable:
    variance_ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (variance_ratio + shift - 1 - variance_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Variable:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return minigrad.where(outside, math.inf, result)


def _batch_trace_xxt(matrices: Variable) -> Variable:
    """tr(XXᵀ) = Σ_ij X_ij² for each matrix of (..., m, n) -> (...)."""
    return matrices.pow(2).sum(-1).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(
    p: MultivariateNormal, q: MultivariateNormal
) -> Variable:
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two Multivariate Normals with different event shapes "
            f"cannot be computed: {p.event_shape} and {q.event_shape}."
        )
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det_ratio = diagonal(q_tril).log().sum(-1) - diagonal(p_tril).log().sum(-1)
    n = p.event_shape[0]
    batch = broadcast_shapes(q_tril.shape[:-2], p_tril.shape[:-2], caller="kl_divergence")
    # tr(Σq⁻¹Σp) = |Lq⁻¹Lp|² (Frobenius).
    trace = _batch_trace_xxt(
        solve_triangular(q_tril.expand(batch + (n, n)), p_tril.expand(batch + (n, n)), upper=False)
    )
    mahalanobis = batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_log_det_ratio + 0.5 * (trace + mahalanobis - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Variable:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"kl_divergence of two Independent distributions needs the same "
            f"reinterpreted_batch_ndims; got {p.reinterpreted_batch_ndims} and "
            f"{q.reinterpreted_batch_ndims}."
        )
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Variable:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Variable:
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -scale_ratio.log() + distance / q.scale + scale_ratio * (-distance / p.scale).exp() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Variable:
    log_rates = q.concentration * (p.rate / q.rate).log()
    log_normalisers = q.concentration.lgamma() - p.concentration.lgamma()
    shape_term = (p.concentration - q.concentration) * p.concentration.digamma()
    rate_term = (q.rate - p.rate) * (p.concentration / p.rate)
    return log_rates + log_normalisers + shape_term + rate_term


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Variable:
    total_p = p.concentration.sum(-1)
    total_q = q.concentration.sum(-1)
    each_lgamma = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    log_normalisers = total_p.lgamma() - total_q.lgamma() - each_lgamma
    # E_p[log x_k] = ψ(αp_k) - ψ(Σαp).
    expected_logs = p.concentration.digamma() - total_p.digamma().unsqueeze(-1)
    return log_normalisers + ((p.concentration - q.concentration) * expected_logs).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Variable:
    total_p = p.concentration1 + p.concentration0
    total_q = q.concentration1 + q.concentration0
    log_normalisers = (
        q.concentration1.lgamma() + q.concentration0.lgamma() + total_p.lgamma()
        - p.concentration1.lgamma() - p.concentration0.lgamma() - total_q.lgamma()
    )
    heads = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    tails = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    totals = (total_q - total_p) * total_p.digamma()
    return log_normalisers + heads + tails + totals


# --------------------------------------------------------------------------- mixed types


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p: Normal, q: Uniform) -> Variable:
    return _infinite_like(p.loc)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Variable:
    width = p.high - p.low
    log_ratio = (math.sqrt(math.pi * 2) * q.scale / width).log()
    spread = width.pow(2) / 12
    offset = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return log_ratio + 0.5 * (spread + offset) / q.scale.pow(2)


__all__ = ["kl_divergence", "register_kl"]

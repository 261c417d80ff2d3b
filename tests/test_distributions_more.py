"""Beta, Gamma, Exponential, Laplace, Dirichlet, Normal.icdf and their kl_divergence pairs,
against torch.distributions and against the formulas.

What runs:
- Values: log_prob, entropy, mean, mode, variance, stddev (cdf and icdf where PyTorch has
  them) in float64, against formulas written here with math.lgamma (always) and against
  real PyTorch on the same parameters to 1e-10 (the `real_torch` fixture).
- kl_divergence of (Beta, Beta), (Gamma, Gamma), (Exponential, Exponential),
  (Laplace, Laplace), (Dirichlet, Dirichlet): against PyTorch, and against each other
  where they coincide (Gamma(1, λ) is Exponential(λ); Beta(a, b) is Dirichlet((a, b))).
- Gradients: gradcheck in float64 of log_prob, entropy, kl_divergence, Normal.icdf and the
  reparameterised draws of Exponential and Laplace (x = E/λ: dx/dλ = -x/λ exactly).
- Gamma, Beta and Dirichlet have no rsample (PyTorch's implicit reparameterisation is not
  implemented): has_rsample is False and rsample raises NotImplementedError saying what to
  use instead. Their samples have the right moments (seeded, loose tolerances).
- Validation: parameters outside their constraints and values outside the support raise
  ValueError naming them; hypothesis checks KL(p, p) = 0 and KL >= 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.distributions as D
from minigrad.autograd import gradcheck

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TIGHT = {"rtol": 1e-10, "atol": 1e-10}

_rng = np.random.default_rng(35)
A = _rng.uniform(0.3, 4.0, size=(2, 3))  # concentrations, rates, scales: positive
B = _rng.uniform(0.3, 4.0, size=(2, 3))
A2 = _rng.uniform(0.3, 4.0, size=(2, 3))
B2 = _rng.uniform(0.3, 4.0, size=(2, 3))
LOC = _rng.normal(size=(2, 3))
UNIT = _rng.uniform(0.01, 0.99, size=(4, 2, 3))  # values in (0, 1), and probabilities
ALPHA = np.concatenate([A, B[:, :1]], -1)  # two Dirichlets of 4 classes
ALPHA2 = np.concatenate([A2, B2[:, :1]], -1)
SMALL_ALPHA = np.array([[0.5, 0.3, 0.9], [2.0, 0.5, 3.0]])  # one row with every α < 1
POINTS = _rng.dirichlet([1.0, 2.0, 3.0, 1.5], size=(5, 2))
POINTS3 = _rng.dirichlet([1.0, 2.0, 3.0], size=(5, 2))


def tensor(lib, values, **kwargs):
    """values as a float64 tensor of `lib` (minigrad or torch)."""
    return lib.tensor(np.asarray(values, dtype=np.float64), dtype=lib.float64, **kwargs)


def as_array(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.array(value, dtype=np.float64)


def close(got, expected, **tolerance) -> None:
    got, expected = as_array(got), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, equal_nan=True, **(tolerance or TIGHT))


def _leaf(values):
    return minigrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


lgamma = np.vectorize(math.lgamma)


@pytest.fixture
def torch64(real_torch):
    """PyTorch with float64 as its default dtype (minigrad's)."""
    before = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    yield real_torch
    real_torch.set_default_dtype(before)


# --------------------------------------------------------------------------- the cases

CASES = {
    "beta": (lambda t, d: d.Beta(tensor(t, A), tensor(t, B)), UNIT),
    "beta_numbers": (lambda t, d: d.Beta(0.5, 0.7), UNIT[0, 0, 0]),
    "beta_below_one": (
        lambda t, d: d.Beta(tensor(t, [0.5, 2.0, 0.5]), tensor(t, [0.3, 0.5, 2.0])),
        UNIT[:, 0],
    ),
    "gamma": (lambda t, d: d.Gamma(tensor(t, A), tensor(t, B)), 5 * UNIT),
    "gamma_number_rate": (lambda t, d: d.Gamma(tensor(t, A[0]), 2.0), 5 * UNIT[:, 0]),
    "exponential": (lambda t, d: d.Exponential(tensor(t, A)), 3 * UNIT),
    "exponential_number": (lambda t, d: d.Exponential(1.5), 3 * UNIT[0, 0, 0]),
    "laplace": (lambda t, d: d.Laplace(tensor(t, LOC), tensor(t, B)), 6 * UNIT - 3),
    "dirichlet": (lambda t, d: d.Dirichlet(tensor(t, ALPHA)), POINTS),
    "dirichlet_below_one": (lambda t, d: d.Dirichlet(tensor(t, SMALL_ALPHA)), POINTS3),
}
PROPERTIES = ["mean", "mode", "variance", "stddev"]
HAS_CDF = ("exponential", "exponential_number", "laplace")


@pytest.mark.parametrize("name", CASES)
def test_values_match_pytorch(name, torch64):
    build, value = CASES[name]
    mine, theirs = build(minigrad, D), build(torch64, torch64.distributions)
    assert mine.batch_shape == tuple(theirs.batch_shape)
    assert mine.event_shape == tuple(theirs.event_shape)
    assert type(mine.support).__name__ == type(theirs.support).__name__
    close(mine.log_prob(tensor(minigrad, value)), as_array(theirs.log_prob(tensor(torch64, value))))
    close(mine.entropy(), as_array(theirs.entropy()))
    for prop in PROPERTIES:
        close(getattr(mine, prop), as_array(getattr(theirs, prop)))
    if name in HAS_CDF:
        close(mine.cdf(tensor(minigrad, value)), as_array(theirs.cdf(tensor(torch64, value))))
        probabilities = UNIT[0] if mine.batch_shape else UNIT[0, 0, 0]
        expected = as_array(theirs.icdf(tensor(torch64, probabilities)))
        close(mine.icdf(tensor(minigrad, probabilities)), expected)


def test_normal_icdf_matches_pytorch(torch64):
    mine = D.Normal(tensor(minigrad, LOC), tensor(minigrad, A))
    theirs = torch64.distributions.Normal(tensor(torch64, LOC), tensor(torch64, A))
    edges = np.array([1e-300, 1e-12, 0.5, 1 - 1e-12, 0.0, 1.0])[:, None, None] * np.ones((2, 3))
    for probabilities in (UNIT, edges):
        expected = as_array(theirs.icdf(tensor(torch64, probabilities)))
        close(mine.icdf(tensor(minigrad, probabilities)), expected)


KL_CASES = {
    "beta": lambda t, d, a, b: d.Beta(tensor(t, a), tensor(t, b)),
    "gamma": lambda t, d, a, b: d.Gamma(tensor(t, a), tensor(t, b)),
    "exponential": lambda t, d, a, b: d.Exponential(tensor(t, a)),
    "laplace": lambda t, d, a, b: d.Laplace(tensor(t, a - 2), tensor(t, b)),
    "dirichlet": lambda t, d, a, b: d.Dirichlet(tensor(t, np.concatenate([a, b], -1))),
}


@pytest.mark.parametrize("name", KL_CASES)
def test_kl_divergence_matches_pytorch(name, torch64):
    make = KL_CASES[name]
    mine = D.kl_divergence(make(minigrad, D, A, B), make(minigrad, D, A2, B2))
    dist = torch64.distributions
    theirs = dist.kl_divergence(make(torch64, dist, A, B), make(torch64, dist, A2, B2))
    close(mine, as_array(theirs))


# --------------------------------------------------------------------------- formulas


def test_normal_icdf_inverts_the_cdf():
    d = D.Normal(tensor(minigrad, LOC), tensor(minigrad, A))
    close(d.cdf(d.icdf(tensor(minigrad, UNIT))), UNIT, rtol=1e-13, atol=1e-15)
    close(d.icdf(tensor(minigrad, [0.5])).expand(2, 3), LOC)
    standard = D.Normal(0.0, 1.0)
    expected = [-math.inf, 1.959963984540054, math.inf]
    close(standard.icdf(tensor(minigrad, [0.0, 0.975, 1.0])), expected)


def test_gamma_and_exponential_are_the_formulas():
    x = 5 * UNIT
    gamma = D.Gamma(tensor(minigrad, A), tensor(minigrad, B))
    expected = A * np.log(B) + (A - 1) * np.log(x) - B * x - lgamma(A)
    close(gamma.log_prob(tensor(minigrad, x)), expected)
    close(gamma.mean, A / B)
    close(gamma.variance, A / B**2)
    close(gamma.mode, np.maximum((A - 1) / B, 0))
    exponential = D.Exponential(tensor(minigrad, A))
    close(exponential.log_prob(tensor(minigrad, x)), np.log(A) - A * x)
    close(exponential.entropy(), 1 - np.log(A))
    close(exponential.cdf(tensor(minigrad, x)), 1 - np.exp(-A * x))
    close(exponential.icdf(exponential.cdf(tensor(minigrad, x))), x)
    # Gamma(1, λ) is Exponential(λ): the same density and entropy.
    as_gamma = D.Gamma(minigrad.ones(2, 3, dtype=minigrad.float64), tensor(minigrad, A))
    value = tensor(minigrad, x)
    close(as_gamma.log_prob(value), as_array(exponential.log_prob(value)))
    close(as_gamma.entropy(), as_array(exponential.entropy()))
    close(D.Gamma(1.0, 2.0).log_prob(0.0), math.log(2.0))  # a number value, and x = 0


def test_laplace_is_the_formulas():
    x = 6 * UNIT - 3
    d = D.Laplace(tensor(minigrad, LOC), tensor(minigrad, B))
    close(d.log_prob(tensor(minigrad, x)), -np.log(2 * B) - np.abs(x - LOC) / B)
    close(d.entropy(), 1 + np.log(2 * B))
    close(d.variance, 2 * B**2)
    close(d.stddev, math.sqrt(2) * B)
    below = np.where(x < LOC, 0.5 * np.exp((x - LOC) / B), 1 - 0.5 * np.exp(-(x - LOC) / B))
    close(d.cdf(tensor(minigrad, x)), below)
    close(d.icdf(d.cdf(tensor(minigrad, x))), x)


def test_beta_and_dirichlet_are_the_formulas():
    x = UNIT
    beta = D.Beta(tensor(minigrad, A), tensor(minigrad, B))
    log_beta_function = lgamma(A) + lgamma(B) - lgamma(A + B)
    expected = (A - 1) * np.log(x) + (B - 1) * np.log1p(-x) - log_beta_function
    close(beta.log_prob(tensor(minigrad, x)), expected)
    close(beta.mean, A / (A + B))
    close(beta.variance, A * B / ((A + B) ** 2 * (A + B + 1)))
    close(beta.concentration1, A)
    close(beta.concentration0, B)
    dirichlet = D.Dirichlet(tensor(minigrad, ALPHA))
    total = ALPHA.sum(-1)
    expected = ((ALPHA - 1) * np.log(POINTS)).sum(-1) + lgamma(total) - lgamma(ALPHA).sum(-1)
    close(dirichlet.log_prob(tensor(minigrad, POINTS)), expected)
    close(dirichlet.mean, ALPHA / total[:, None])
    # The mode of a Dirichlet with every α < 1 is a corner: the first one, as PyTorch.
    close(D.Dirichlet(tensor(minigrad, SMALL_ALPHA)).mode, [[1.0, 0.0, 0.0], [1 / 3, 0.0, 2 / 3]])
    corner = tensor(minigrad, [1.0, 0.0])
    close(D.Dirichlet(tensor(minigrad, [1.0, 2.0])).log_prob(corner), -math.inf)


def test_kl_pairs_agree_with_each_other():
    rate_p, rate_q = tensor(minigrad, A), tensor(minigrad, A2)
    ones = minigrad.ones(2, 3, dtype=minigrad.float64)
    close(
        D.kl_divergence(D.Gamma(ones, rate_p), D.Gamma(ones, rate_q)),
        as_array(D.kl_divergence(D.Exponential(rate_p), D.Exponential(rate_q))),
    )
    as_beta = D.kl_divergence(D.Beta(tensor(minigrad, A), tensor(minigrad, B)),
                              D.Beta(tensor(minigrad, A2), tensor(minigrad, B2)))
    as_dirichlet = D.kl_divergence(
        D.Dirichlet(tensor(minigrad, np.stack([A, B], -1))),
        D.Dirichlet(tensor(minigrad, np.stack([A2, B2], -1))),
    )
    close(as_beta, as_array(as_dirichlet))
    ratio = A2 / A
    close(D.kl_divergence(D.Exponential(rate_p), D.Exponential(rate_q)), ratio - 1 - np.log(ratio))


# --------------------------------------------------------------------------- gradients


def _reseeded(draw):
    """draw(*params) with the noise fixed, so that gradcheck sees a function."""

    def fixed(*params):
        minigrad.manual_seed(7)
        return draw(*params)

    return fixed


def test_gradcheck_log_prob_entropy_and_kl():
    a, b, a2, b2 = _leaf(A), _leaf(B), _leaf(A2), _leaf(B2)
    unit, positive = _leaf(UNIT), _leaf(5 * UNIT)
    assert gradcheck(lambda p, q, v: D.Beta(p, q).log_prob(v), (a, b, unit))
    assert gradcheck(lambda p, q: D.Beta(p, q).entropy(), (a, b))
    assert gradcheck(lambda p, q, v: D.Gamma(p, q).log_prob(v), (a, b, positive))
    assert gradcheck(lambda p, q: D.Gamma(p, q).entropy(), (a, b))
    assert gradcheck(lambda r, v: D.Exponential(r).log_prob(v), (a, positive))
    assert gradcheck(lambda m, s, v: D.Laplace(m, s).log_prob(v), (_leaf(LOC), b, unit))
    alpha, points = _leaf(ALPHA), _leaf(POINTS)
    assert gradcheck(lambda c: D.Dirichlet(c).log_prob(points.detach()), (alpha,))
    assert gradcheck(lambda c: D.Dirichlet(c).entropy(), (alpha,))
    for name in KL_CASES:
        make = KL_CASES[name]

        def kl(p, q, r, s, make=make):
            return D.kl_divergence(_built(make, p, q), _built(make, r, s))

        assert gradcheck(kl, (a, b, a2, b2)), name


def _built(make, first, second):
    """KL_CASES' distribution from Variables (make takes arrays for the two libraries)."""
    if make is KL_CASES["dirichlet"]:
        return D.Dirichlet(minigrad.cat([first, second], -1))
    if make is KL_CASES["laplace"]:
        return D.Laplace(first - 2, second)
    if make is KL_CASES["exponential"]:
        return D.Exponential(first)
    return {KL_CASES["beta"]: D.Beta, KL_CASES["gamma"]: D.Gamma}[make](first, second)


def test_gradcheck_normal_icdf():
    loc, scale = _leaf(LOC), _leaf(A)
    probabilities = _leaf(UNIT[0] * 0.98 + 0.01)
    assert gradcheck(lambda m, s, p: D.Normal(m, s).icdf(p), (loc, scale, probabilities))


def test_exponential_and_laplace_rsample_gradients():
    rate = _leaf(A)
    assert gradcheck(_reseeded(lambda r: D.Exponential(r).rsample((4,))), (rate,))
    drawn = D.Exponential(rate).rsample((1000,))
    assert drawn.requires_grad and bool((drawn >= 0).all())
    drawn.sum().backward()
    # x = E/λ, so dx/dλ = -x/λ for every draw.
    close(rate.grad, -(as_array(drawn) / A).sum(0))
    loc, scale = _leaf(LOC), _leaf(B)
    assert gradcheck(_reseeded(lambda m, s: D.Laplace(m, s).rsample((4,))), (loc, scale))
    drawn = D.Laplace(loc, scale).rsample((1000,))
    drawn.sum().backward()
    close(loc.grad, np.full((2, 3), 1000.0))
    close(scale.grad, ((as_array(drawn) - LOC) / B).sum(0))  # x = μ + b·noise


def test_implicitly_reparameterised_ones_refuse_rsample():
    concentration = _leaf(A)
    made = [
        D.Gamma(concentration, 1.0),
        D.Beta(concentration, 2.0),
        D.Dirichlet(concentration),
    ]
    for d in made:
        assert d.has_rsample is False
        name = type(d).__name__
        with pytest.raises(NotImplementedError, match=f"{name}.rsample.*sample\\(\\).*REINFORCE"):
            d.rsample((2,))
        assert not d.sample((2,)).requires_grad
    assert D.Exponential(1.0).has_rsample and D.Laplace(0.0, 1.0).has_rsample


# --------------------------------------------------------------------------- sampling


def test_samples_have_the_right_statistics():
    minigrad.manual_seed(0)
    a, b = tensor(minigrad, [0.5, 3.0]), tensor(minigrad, [2.0, 0.7])
    for d in (D.Gamma(a, b), D.Beta(a, b), D.Exponential(b), D.Laplace(a, b)):
        drawn = as_array(d.sample((200_000,)))
        assert drawn.shape == (200_000, 2)
        assert bool(d.support.check(minigrad.tensor(drawn)).all()), type(d).__name__
        np.testing.assert_allclose(drawn.mean(0), as_array(d.mean), rtol=0.02, atol=0.01)
        np.testing.assert_allclose(drawn.var(0), as_array(d.variance), rtol=0.05)
    dirichlet = D.Dirichlet(tensor(minigrad, [[0.5, 1.0, 3.0], [0.01, 0.02, 0.03]]))
    drawn = as_array(dirichlet.sample((100_000,)))
    assert drawn.shape == (100_000, 2, 3)
    np.testing.assert_allclose(drawn.sum(-1), 1.0, rtol=1e-12)
    assert (drawn > 0).all()  # tiny concentrations: draws clamped above 0, as PyTorch
    np.testing.assert_allclose(drawn[:, 0].mean(0), np.array([0.5, 1.0, 3.0]) / 4.5, atol=0.01)


def test_manual_seed_repeats_every_new_sampler():
    makers = [
        lambda: D.Gamma(minigrad.ones(3), 2.0),
        lambda: D.Beta(minigrad.ones(3), 2.0),
        lambda: D.Exponential(minigrad.ones(3)),
        lambda: D.Laplace(minigrad.zeros(3), 1.0),
        lambda: D.Dirichlet(minigrad.ones(2, 3)),
    ]
    for make in makers:
        minigrad.manual_seed(11)
        first = make().sample((5,))
        minigrad.manual_seed(11)
        assert first.tolist() == make().sample((5,)).tolist()


def test_shapes_and_expand():
    assert D.Beta(0.5, 0.5).sample().shape == ()
    assert D.Gamma(minigrad.ones(2), 1.0).sample((4, 3)).shape == (4, 3, 2)
    assert D.Dirichlet(minigrad.ones(2, 3)).sample((4,)).shape == (4, 2, 3)
    for d in (
        D.Beta(minigrad.ones(1), 2.0),
        D.Gamma(minigrad.ones(1), 2.0),
        D.Exponential(minigrad.ones(1)),
        D.Laplace(minigrad.zeros(1), 1.0),
    ):
        expanded = d.expand((4, 3))
        assert expanded.batch_shape == (4, 3) and expanded.sample().shape == (4, 3)
        assert expanded.log_prob(minigrad.full((4, 3), 0.5)).shape == (4, 3)
    expanded = D.Dirichlet(minigrad.ones(3)).expand((2,))
    assert expanded.batch_shape == (2,) and expanded.event_shape == (3,)
    assert expanded.sample((5,)).shape == (5, 2, 3)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "parameter", "constraint"),
    [
        (lambda: D.Gamma(minigrad.tensor([1.0, -1.0]), 1.0), "concentration", "GreaterThan"),
        (lambda: D.Gamma(1.0, 0.0), "rate", "GreaterThan"),
        (lambda: D.Exponential(minigrad.tensor([-2.0])), "rate", "GreaterThan"),
        (lambda: D.Laplace(0.0, -1.0), "scale", "GreaterThan"),
        (lambda: D.Dirichlet(minigrad.tensor([1.0, -2.0])), "concentration", "Independent"),
        # Beta is a Dirichlet underneath, which checks first (as in PyTorch).
        (lambda: D.Beta(-1.0, 2.0), "concentration", "Independent"),
    ],
)
def test_invalid_parameters_raise_value_error(make, parameter, constraint):
    with pytest.raises(ValueError, match=f"Expected parameter {parameter} ") as raised:
        make()
    assert constraint in str(raised.value)
    assert "validate_args=False" in str(raised.value)


@pytest.mark.parametrize(
    ("make", "value", "support"),
    [
        (lambda: D.Beta(2.0, 2.0), minigrad.tensor(1.5), "Interval"),
        (lambda: D.Gamma(2.0, 1.0), minigrad.tensor(-0.5), "GreaterThanEq"),
        (lambda: D.Exponential(1.0), minigrad.tensor(-1.0), "GreaterThanEq"),
        (lambda: D.Dirichlet(minigrad.ones(3)), minigrad.tensor([0.5, 0.5, 0.5]), "Simplex()"),
    ],
)
def test_log_prob_outside_the_support_raises_value_error(make, value, support):
    with pytest.raises(ValueError, match="Expected value argument") as raised:
        make().log_prob(value)
    assert support in str(raised.value)


def test_dirichlet_needs_a_vector_and_validation_can_be_off():
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(minigrad.tensor(1.0))
    with pytest.raises(ValueError, match="at least one-dimensional.*minigrad.tensor"):
        D.Dirichlet(2.0)
    assert D.Gamma(-1.0, 1.0, validate_args=False).concentration.item() == -1.0
    unchecked = D.Exponential(1.0, validate_args=False)
    assert unchecked.log_prob(minigrad.tensor(-1.0)).item() == pytest.approx(1.0)


def test_the_new_names_import():
    from minigrad.distributions import Beta, Dirichlet, Exponential, Gamma, Laplace

    exported = {getattr(D, name) for name in D.__all__}
    assert {Beta, Dirichlet, Exponential, Gamma, Laplace} <= exported


# --------------------------------------------------------------------------- properties


positive = st.floats(min_value=0.05, max_value=20.0)


@PROPERTY
@given(positive, positive, positive, positive)
def test_kl_is_zero_for_equal_and_positive_otherwise(a, b, c, d):
    pairs = [
        (D.Gamma(a, b), D.Gamma(c, d)),
        (D.Beta(a, b), D.Beta(c, d)),
        (D.Exponential(a), D.Exponential(c)),
        (D.Laplace(a, b), D.Laplace(c, d)),
        (D.Dirichlet(minigrad.tensor([a, b])), D.Dirichlet(minigrad.tensor([c, d]))),
    ]
    for p, q in pairs:
        assert D.kl_divergence(p, p).item() == pytest.approx(0.0, abs=1e-9)
        assert D.kl_divergence(p, q).item() >= -1e-9

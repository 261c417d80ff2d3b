"""minigrad.distributions against torch.distributions and against the formulas.

What runs:
- Values: log_prob, entropy, mean, mode, variance, stddev, cdf and kl_divergence of Normal,
  Bernoulli, Categorical, Uniform, MultivariateNormal (covariance, precision, scale_tril;
  diagonal and full), Independent and OneHotCategorical, in float64, against NumPy
  formulas written here (always) and against real PyTorch on the same parameters to 1e-10
  (the `real_torch` fixture: skipped where PyTorch is absent).
- Gradients: gradcheck in float64 of log_prob, entropy, kl_divergence and rsample (the
  reparameterised draws, the noise fixed by reseeding), and of the Cholesky factor and the
  triangular solve MultivariateNormal is built on.
- Sampling: statistics of large seeded samples (means, variances, frequencies, a
  covariance) with loose tolerances; manual_seed repeats a draw; sample() has no graph.
- Shapes (batch, event, sample, expand, enumerate_support), validation (validate_args,
  set_default_validate_args, the ValueError's content), the KL registry (most specific
  match, ambiguity warning, NotImplementedError for unregistered pairs), and hypothesis
  property tests of the closed forms.
No outside code runs here: tests/test_pytorch_examples_distributions.py runs PyTorch's
REINFORCE and VAE examples.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.distributions as D
from minigrad.autograd import gradcheck
from minigrad.distributions import Categorical, constraints
from minigrad.distributions.cholesky import cholesky
from minigrad.distributions.triangular_solve import solve_triangular

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TIGHT = {"rtol": 1e-10, "atol": 1e-10}

_rng = np.random.default_rng(35)
LOC = _rng.normal(size=(2, 3))
SCALE = _rng.uniform(0.5, 2.0, size=(2, 3))
X = _rng.normal(size=(4, 2, 3))
PROBS = np.array([[0.2, 0.5, 0.9], [0.01, 0.6, 0.35]])
LOGITS = np.array([[-30.0, -1.5, 0.0], [2.5, 38.0, -0.3]])
BITS = (_rng.uniform(size=(5, 2, 3)) < 0.5).astype(float)
CLASS_WEIGHTS = _rng.uniform(0.1, 1.0, size=(2, 4))  # unnormalised, as Categorical allows
CLASS_LOGITS = _rng.normal(size=(2, 4)) * 3
CLASSES = _rng.integers(0, 4, size=(3, 2))
LOW = _rng.normal(size=3)
HIGH = LOW + _rng.uniform(0.5, 2.0, size=3)
INSIDE = LOW + (HIGH - LOW) * _rng.uniform(size=(5, 3))
_A = _rng.normal(size=(2, 3, 3))
COV = _A @ _A.transpose(0, 2, 1) + 3 * np.eye(3)  # two full covariance matrices
MU = _rng.normal(size=(2, 3))
XS = _rng.normal(size=(5, 2, 3))
DIAGONAL_COV = np.diag([0.5, 2.0, 1.5])


def tensor(lib, values, **kwargs):
    """values (NumPy) as a float64 tensor of `lib` (minigrad or torch)."""
    return lib.tensor(np.asarray(values, dtype=np.float64), dtype=lib.float64, **kwargs)


def as_array(value) -> np.ndarray:
    """A tensor's (or array's) values as a float64 NumPy array."""
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.array(value, dtype=np.float64)


def close(got, expected, **tolerance) -> None:
    tolerance = tolerance or TIGHT
    got, expected = as_array(got), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, equal_nan=True, **tolerance)


@pytest.fixture
def torch64(real_torch):
    """PyTorch with float64 as its default dtype (minigrad's), so that numbers given as
    parameters become float64 in both libraries."""
    before = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    yield real_torch
    real_torch.set_default_dtype(before)


@pytest.fixture
def restore_validation():
    """set_default_validate_args changes a class attribute: put it back after the test."""
    before = D.Distribution._validate_args
    yield
    D.Distribution.set_default_validate_args(before)


# --------------------------------------------------------------------------- the package


def test_distributions_import_three_ways():
    import minigrad.distributions as alias
    from minigrad.distributions import Categorical as Imported

    assert minigrad.distributions is alias
    assert Imported is alias.Categorical is Categorical
    assert alias.kl_divergence is alias.kl.kl_divergence


def test_a_missing_distribution_says_so():
    with pytest.raises(AttributeError, match=r"torch\.distributions\.VonMises"):
        _ = D.VonMises


# --------------------------------------------------------------------------- the cases
#
# Each case builds a distribution and a value from the arrays above with either library,
# so the same code runs on minigrad and on PyTorch.


def _mvn(t, d, **matrix):
    return d.MultivariateNormal(tensor(t, MU), **{k: tensor(t, v) for k, v in matrix.items()})


CASES = {
    "normal": (lambda t, d: d.Normal(tensor(t, LOC), tensor(t, SCALE)), X),
    "normal_number_scale": (lambda t, d: d.Normal(tensor(t, LOC[0]), 2.0), X[:, 0]),
    "normal_numbers": (lambda t, d: d.Normal(0.5, 1.5), X[0, 0, 0]),
    "bernoulli_probs": (lambda t, d: d.Bernoulli(tensor(t, PROBS)), BITS),
    "bernoulli_logits": (lambda t, d: d.Bernoulli(logits=tensor(t, LOGITS)), BITS),
    "bernoulli_half": (lambda t, d: d.Bernoulli(tensor(t, [0.5, 0.25])), BITS[:, 0, :2]),
    "categorical_probs": (lambda t, d: d.Categorical(tensor(t, CLASS_WEIGHTS)), CLASSES),
    "categorical_logits": (lambda t, d: d.Categorical(logits=tensor(t, CLASS_LOGITS)), CLASSES),
    "categorical_zero_prob": (lambda t, d: d.Categorical(tensor(t, [0.5, 0.0, 0.5])), [0, 2]),
    "uniform": (lambda t, d: d.Uniform(tensor(t, LOW), tensor(t, HIGH)), INSIDE),
    "mvn_covariance": (lambda t, d: _mvn(t, d, covariance_matrix=COV), XS),
    "mvn_precision": (lambda t, d: _mvn(t, d, precision_matrix=COV), XS),
    "mvn_scale_tril": (lambda t, d: _mvn(t, d, scale_tril=np.linalg.cholesky(COV)), XS),
    "mvn_diagonal": (lambda t, d: _mvn(t, d, covariance_matrix=DIAGONAL_COV), XS),
    "mvn_value_broadcast": (lambda t, d: _mvn(t, d, covariance_matrix=COV[0]), XS[:, :1]),
    "independent_normal": (
        lambda t, d: d.Independent(d.Normal(tensor(t, LOC), tensor(t, SCALE)), 1),
        X,
    ),
    "independent_bernoulli": (lambda t, d: d.Independent(d.Bernoulli(tensor(t, PROBS)), 2), BITS),
    "one_hot": (lambda t, d: d.OneHotCategorical(tensor(t, CLASS_WEIGHTS)), np.eye(4)[CLASSES]),
}
# Values that are not floats: the class indices of a Categorical.
INTEGER_VALUES = {"categorical_probs", "categorical_logits", "categorical_zero_prob"}
PROPERTIES = ["mean", "mode", "variance", "stddev"]


def _value(lib, name):
    value = CASES[name][1]
    if name in INTEGER_VALUES:
        return lib.tensor(np.asarray(value, dtype=np.int64))
    return tensor(lib, value)


@pytest.mark.parametrize("name", CASES)
def test_values_match_pytorch(name, torch64):
    real_torch = torch64
    build, _ = CASES[name]
    mine, theirs = build(minigrad, D), build(real_torch, real_torch.distributions)
    assert mine.batch_shape == tuple(theirs.batch_shape)
    assert mine.event_shape == tuple(theirs.event_shape)
    expected = as_array(theirs.log_prob(_value(real_torch, name)))
    close(mine.log_prob(_value(minigrad, name)), expected)
    close(mine.entropy(), as_array(theirs.entropy()))
    for prop in PROPERTIES:
        close(getattr(mine, prop), as_array(getattr(theirs, prop)))
    if isinstance(mine, (D.Normal, D.Uniform)):
        value = _value(minigrad, name)
        close(mine.cdf(value), as_array(theirs.cdf(_value(real_torch, name))))


def _normal_log_pdf(x, loc, scale):
    return -((x - loc) ** 2) / (2 * scale**2) - np.log(scale) - 0.5 * np.log(2 * np.pi)


def test_normal_values_are_the_formulas():
    d = D.Normal(tensor(minigrad, LOC), tensor(minigrad, SCALE))
    close(d.log_prob(tensor(minigrad, X)), _normal_log_pdf(X, LOC, SCALE))
    close(d.entropy(), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(SCALE))
    close(d.mean, LOC)
    close(d.variance, SCALE**2)
    close(d.stddev, SCALE)
    erf = np.vectorize(math.erf)
    close(d.cdf(tensor(minigrad, X)), 0.5 * (1 + erf((X - LOC) / (SCALE * np.sqrt(2)))))


def test_bernoulli_values_are_the_formulas():
    probs = 1 / (1 + np.exp(-LOGITS))
    d = D.Bernoulli(logits=tensor(minigrad, LOGITS))
    # log p(x) = x log p + (1 - x) log(1 - p), written stably: x·l - log(1 + e^l).
    expected = BITS * LOGITS - np.logaddexp(0, LOGITS)
    close(d.log_prob(tensor(minigrad, BITS)), expected)
    close(d.probs, probs)
    close(d.mean, probs)
    close(d.variance, probs * (1 - probs))
    close(D.Bernoulli(tensor(minigrad, [0.2, 0.5, 0.7])).mode, [0.0, np.nan, 1.0])
    p = PROBS
    close(D.Bernoulli(tensor(minigrad, p)).entropy(), -(p * np.log(p) + (1 - p) * np.log1p(-p)))
    # probs -> logits is log p - log(1 - p).
    close(D.Bernoulli(tensor(minigrad, p)).logits, np.log(p) - np.log1p(-p))


def test_categorical_values_are_the_formulas():
    probs = CLASS_WEIGHTS / CLASS_WEIGHTS.sum(-1, keepdims=True)
    d = D.Categorical(tensor(minigrad, CLASS_WEIGHTS))
    close(d.probs, probs)
    close(d.log_prob(minigrad.tensor(CLASSES)), np.log(probs[[0, 1], CLASSES]))
    close(d.entropy(), -(probs * np.log(probs)).sum(-1))
    assert d.mode.tolist() == probs.argmax(-1).tolist()
    assert np.isnan(as_array(d.mean)).all() and d.mean.shape == (2,)
    # A class of probability 0 adds nothing to the entropy (0 log 0 = 0), not NaN.
    close(D.Categorical(tensor(minigrad, [0.5, 0.0, 0.5])).entropy(), np.log(2))
    # logits are normalised: their exponentials sum to 1.
    logits = D.Categorical(logits=tensor(minigrad, CLASS_LOGITS)).logits
    close(logits.exp().sum(-1), np.ones(2))


def test_one_hot_categorical_values_are_the_formulas():
    probs = CLASS_WEIGHTS / CLASS_WEIGHTS.sum(-1, keepdims=True)
    d = D.OneHotCategorical(tensor(minigrad, CLASS_WEIGHTS))
    assert (d.batch_shape, d.event_shape) == ((2,), (4,))
    close(d.log_prob(tensor(minigrad, np.eye(4)[CLASSES])), np.log(probs[[0, 1], CLASSES]))
    close(d.mean, probs)
    close(d.variance, probs * (1 - probs))
    close(d.mode, np.eye(4)[probs.argmax(-1)])


def test_uniform_values_are_the_formulas():
    d = D.Uniform(tensor(minigrad, LOW), tensor(minigrad, HIGH))
    close(d.log_prob(tensor(minigrad, INSIDE)), np.broadcast_to(-np.log(HIGH - LOW), (5, 3)))
    close(d.entropy(), np.log(HIGH - LOW))
    close(d.mean, (LOW + HIGH) / 2)
    close(d.variance, (HIGH - LOW) ** 2 / 12)
    close(d.stddev, (HIGH - LOW) / np.sqrt(12))
    assert np.isnan(as_array(d.mode)).all()
    outside = D.Uniform(0.0, 1.0, validate_args=False).log_prob(minigrad.tensor([-0.5, 0.0, 1.0]))
    assert as_array(outside).tolist() == [-math.inf, 0.0, -math.inf]  # [low, high)


def _mvn_log_pdf(x, mu, cov):
    diff = x - mu
    solved = np.linalg.solve(cov, diff[..., None])[..., 0]
    _, log_det = np.linalg.slogdet(cov)
    return -0.5 * (mu.shape[-1] * np.log(2 * np.pi) + log_det + (diff * solved).sum(-1))


@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_values_are_the_formulas(given):
    matrix = {
        "covariance_matrix": COV,
        "precision_matrix": np.linalg.inv(COV),
        "scale_tril": np.linalg.cholesky(COV),
    }[given]
    d = D.MultivariateNormal(tensor(minigrad, MU), **{given: tensor(minigrad, matrix)})
    assert (d.batch_shape, d.event_shape) == ((2,), (3,))
    close(d.log_prob(tensor(minigrad, XS)), _mvn_log_pdf(XS, MU, COV))
    close(d.covariance_matrix, COV)
    close(d.precision_matrix, np.linalg.inv(COV))
    close(d.scale_tril, np.linalg.cholesky(COV))
    close(d.variance, np.diagonal(COV, axis1=-2, axis2=-1))
    _, log_det = np.linalg.slogdet(COV)
    close(d.entropy(), 0.5 * 3 * (1 + np.log(2 * np.pi)) + 0.5 * log_det)
    close(d.mean, MU)
    close(d.mode, MU)


def test_diagonal_multivariate_normal_is_independent_normals():
    mvn = D.MultivariateNormal(tensor(minigrad, MU), tensor(minigrad, DIAGONAL_COV))
    scale = tensor(minigrad, np.sqrt(np.diag(DIAGONAL_COV)))
    diagonal = D.Independent(D.Normal(tensor(minigrad, MU), scale), 1)
    assert (mvn.batch_shape, mvn.event_shape) == (diagonal.batch_shape, diagonal.event_shape)
    close(mvn.log_prob(tensor(minigrad, XS)), as_array(diagonal.log_prob(tensor(minigrad, XS))))
    close(mvn.entropy(), as_array(diagonal.entropy()))
    close(mvn.variance, as_array(diagonal.variance))


def test_independent_sums_the_reinterpreted_dimensions():
    base = D.Normal(tensor(minigrad, LOC), tensor(minigrad, SCALE))
    d = D.Independent(base, 1)
    assert (d.batch_shape, d.event_shape) == ((2,), (3,))
    assert (D.Independent(base, 2).batch_shape, D.Independent(base, 2).event_shape) == ((), (2, 3))
    close(d.log_prob(tensor(minigrad, X)), _normal_log_pdf(X, LOC, SCALE).sum(-1))
    close(D.Independent(base, 2).entropy(), as_array(base.entropy()).sum())
    assert d.has_rsample and not D.Independent(D.Bernoulli(0.5 * minigrad.ones(3)), 1).has_rsample
    assert repr(d).startswith("Independent(Normal(") and repr(d).endswith(", 1)")


# --------------------------------------------------------------------------- KL


KL_CASES = {
    "normal_normal": lambda t, d: (
        d.Normal(tensor(t, LOC), tensor(t, SCALE)),
        d.Normal(tensor(t, LOC[0, ::-1].copy()), tensor(t, SCALE[1])),
    ),
    "bernoulli_bernoulli": lambda t, d: (
        d.Bernoulli(tensor(t, PROBS)),
        d.Bernoulli(logits=tensor(t, LOGITS)),
    ),
    "bernoulli_edges": lambda t, d: (
        d.Bernoulli(tensor(t, [0.0, 1.0, 0.3, 0.0, 1.0])),
        d.Bernoulli(tensor(t, [0.5, 1.0, 0.0, 0.0, 0.2])),
    ),
    "categorical_categorical": lambda t, d: (
        d.Categorical(tensor(t, CLASS_WEIGHTS)),
        d.Categorical(logits=tensor(t, CLASS_LOGITS[0])),
    ),
    "categorical_zeros": lambda t, d: (
        d.Categorical(tensor(t, [[0.5, 0.5, 0.0], [0.2, 0.0, 0.8]])),
        d.Categorical(tensor(t, [[0.5, 0.0, 0.5], [0.1, 0.0, 0.9]])),
    ),
    "one_hot_one_hot": lambda t, d: (
        d.OneHotCategorical(tensor(t, CLASS_WEIGHTS)),
        d.OneHotCategorical(logits=tensor(t, CLASS_LOGITS)),
    ),
    "uniform_uniform": lambda t, d: (
        d.Uniform(tensor(t, LOW), tensor(t, HIGH)),
        d.Uniform(tensor(t, LOW - [0.3, -0.1, 0.2]), tensor(t, HIGH + [0.2, 0.1, -0.4])),
    ),
    "mvn_mvn": lambda t, d: (
        d.MultivariateNormal(tensor(t, MU), tensor(t, COV)),
        d.MultivariateNormal(tensor(t, MU[0]), scale_tril=tensor(t, np.linalg.cholesky(COV[1]))),
    ),
    "mvn_mvn_precision": lambda t, d: (
        d.MultivariateNormal(tensor(t, MU[0]), precision_matrix=tensor(t, COV[0])),
        d.MultivariateNormal(tensor(t, MU), tensor(t, COV[::-1].copy())),
    ),
    "independent_independent": lambda t, d: (
        d.Independent(d.Normal(tensor(t, LOC), tensor(t, SCALE)), 1),
        d.Independent(d.Normal(tensor(t, LOC * 0.5), tensor(t, SCALE[::-1].copy())), 1),
    ),
    "uniform_normal": lambda t, d: (
        d.Uniform(tensor(t, LOW), tensor(t, HIGH)),
        d.Normal(tensor(t, LOC), tensor(t, SCALE)),
    ),
    "normal_uniform": lambda t, d: (
        d.Normal(tensor(t, LOC), tensor(t, SCALE)),
        d.Uniform(tensor(t, LOW), tensor(t, HIGH)),
    ),
}


@pytest.mark.parametrize("name", KL_CASES)
def test_kl_divergence_matches_pytorch(name, torch64):
    real_torch = torch64
    p, q = KL_CASES[name](minigrad, D)
    tp, tq = KL_CASES[name](real_torch, real_torch.distributions)
    expected = as_array(real_torch.distributions.kl_divergence(tp, tq))
    close(D.kl_divergence(p, q), expected)


def test_kl_normal_normal_is_the_formula():
    p_loc, p_scale, q_loc, q_scale = LOC, SCALE, LOC[::-1], SCALE[:, ::-1]
    p = D.Normal(tensor(minigrad, p_loc), tensor(minigrad, p_scale))
    q = D.Normal(tensor(minigrad, q_loc.copy()), tensor(minigrad, q_scale.copy()))
    expected = (
        np.log(q_scale / p_scale) + (p_scale**2 + (p_loc - q_loc) ** 2) / (2 * q_scale**2) - 0.5
    )
    close(D.kl_divergence(p, q), expected)
    close(D.kl_divergence(p, p), np.zeros((2, 3)))


def test_kl_multivariate_normal_is_the_formula():
    p_cov, q_cov, p_mu, q_mu = COV[0], COV[1], MU[0], MU[1]
    p = D.MultivariateNormal(tensor(minigrad, p_mu), tensor(minigrad, p_cov))
    q_inv = np.linalg.inv(q_cov)
    q = D.MultivariateNormal(tensor(minigrad, q_mu), precision_matrix=tensor(minigrad, q_inv))
    diff = q_mu - p_mu
    expected = 0.5 * (
        np.trace(q_inv @ p_cov)
        + diff @ q_inv @ diff
        - 3
        + np.linalg.slogdet(q_cov)[1]
        - np.linalg.slogdet(p_cov)[1]
    )
    close(D.kl_divergence(p, q), expected)


def test_kl_of_disjoint_supports_is_infinite():
    uniform = D.Uniform(tensor(minigrad, [0.0, 0.0]), tensor(minigrad, [1.0, 1.0]))
    wider = D.Uniform(tensor(minigrad, [-1.0, 0.5]), tensor(minigrad, [2.0, 2.0]))
    assert as_array(D.kl_divergence(uniform, wider)).tolist() == [math.log(3.0), math.inf]
    normal = D.Normal(tensor(minigrad, [0.0, 1.0]), 1.0)
    assert np.isinf(as_array(D.kl_divergence(normal, uniform))).all()
    never = D.Categorical(tensor(minigrad, [0.5, 0.5, 0.0]))
    close(D.kl_divergence(D.Categorical(tensor(minigrad, [0.5, 0.0, 0.5])), never), math.inf)
    spread = D.Categorical(tensor(minigrad, [0.5, 0.25, 0.25]))
    close(D.kl_divergence(never, spread), 0.5 * math.log(2))


def test_kl_of_unregistered_pairs_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="No KL.*Categorical.*Uniform"):
        D.kl_divergence(D.Categorical(minigrad.ones(3)), D.Uniform(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="Normal and q type Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
    mvn = D.MultivariateNormal(minigrad.zeros(3), minigrad.eye(3))
    with pytest.raises(NotImplementedError, match="Independent and q type MultivariateNormal"):
        D.kl_divergence(D.Independent(D.Normal(minigrad.zeros(3), 1.0), 1), mvn)
    two = D.Independent(D.Normal(minigrad.zeros(2, 3), 1.0), 2)
    with pytest.raises(NotImplementedError, match="reinterpreted_batch_ndims"):
        D.kl_divergence(D.Independent(D.Normal(minigrad.zeros(2, 3), 1.0), 1), two)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(mvn, D.MultivariateNormal(minigrad.zeros(2), minigrad.eye(2)))


def test_register_kl_dispatches_to_the_most_specific_pair():
    class Wide(D.Normal):
        pass

    class Narrow(Wide):
        pass

    @D.register_kl(Wide, D.Normal)
    def _wide(p, q):
        return minigrad.tensor(1.0)

    @D.register_kl(Narrow, D.Normal)
    def _narrow(p, q):
        return minigrad.tensor(2.0)

    try:
        assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 1.0
        assert D.kl_divergence(Narrow(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 2.0
        assert D.kl_divergence(Narrow(0.0, 1.0), Narrow(0.0, 1.0)).item() == 2.0
        # (Normal, Normal) stays the formula for plain Normals.
        assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0

        # Specific in p for one formula, in q for another: ambiguous, and said so.
        @D.register_kl(D.Normal, Narrow)
        def _other(p, q):
            return minigrad.tensor(3.0)

        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence"):
            D.kl_divergence(Narrow(0.0, 1.0), Narrow(0.0, 1.0))
    finally:
        for pair in [(Wide, D.Normal), (Narrow, D.Normal), (D.Normal, Narrow)]:
            D.kl._KL_REGISTRY.pop(pair, None)
        D.kl._KL_MEMOIZE.clear()


def test_register_kl_wants_distribution_types():
    with pytest.raises(TypeError, match="type_q to be a Distribution subclass"):
        D.register_kl(D.Normal, int)


# --------------------------------------------------------------------------- gradients


def _leaf(values):
    return minigrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def _reseeded(draw):
    """draw(*params) with the noise fixed, so that gradcheck sees a function."""

    def fixed(*params):
        minigrad.manual_seed(7)
        return draw(*params)

    return fixed


def test_gradcheck_normal():
    loc, scale, x = _leaf(LOC), _leaf(SCALE), _leaf(X)
    assert gradcheck(lambda m, s, v: D.Normal(m, s).log_prob(v), (loc, scale, x))
    assert gradcheck(lambda m, s: D.Normal(m, s).entropy(), (loc, scale))
    assert gradcheck(_reseeded(lambda m, s: D.Normal(m, s).rsample((4,))), (loc, scale))
    q_loc, q_scale = _leaf(LOC[::-1].copy()), _leaf(SCALE[::-1].copy())
    kl = lambda a, b, c, d: D.kl_divergence(D.Normal(a, b), D.Normal(c, d))  # noqa: E731
    assert gradcheck(kl, (loc, scale, q_loc, q_scale))


def test_gradcheck_bernoulli_and_categorical():
    logits, probs = _leaf(LOGITS / 10), _leaf(PROBS)
    bits = minigrad.tensor(BITS)
    assert gradcheck(lambda lg: D.Bernoulli(logits=lg).log_prob(bits), (logits,))
    assert gradcheck(lambda p: D.Bernoulli(probs=p).log_prob(bits), (probs,))
    assert gradcheck(lambda lg: D.Bernoulli(logits=lg).entropy(), (logits,))
    kl = lambda p, lg: D.kl_divergence(D.Bernoulli(p), D.Bernoulli(logits=lg))  # noqa: E731
    assert gradcheck(kl, (probs, logits))
    weights, class_logits = _leaf(CLASS_WEIGHTS), _leaf(CLASS_LOGITS)
    classes = minigrad.tensor(CLASSES)
    assert gradcheck(lambda w: D.Categorical(w).log_prob(classes), (weights,))
    assert gradcheck(lambda lg: D.Categorical(logits=lg).log_prob(classes), (class_logits,))
    assert gradcheck(lambda lg: D.Categorical(logits=lg).entropy(), (class_logits,))
    kl = lambda w, lg: D.kl_divergence(D.Categorical(w), D.Categorical(logits=lg))  # noqa: E731
    assert gradcheck(kl, (weights, class_logits))
    one_hot = minigrad.tensor(np.eye(4)[CLASSES])
    assert gradcheck(lambda w: D.OneHotCategorical(w).log_prob(one_hot), (weights,))


def test_gradcheck_uniform():
    low, high = _leaf(LOW), _leaf(HIGH)
    inside = minigrad.tensor(INSIDE)
    assert gradcheck(lambda a, b: D.Uniform(a, b).log_prob(inside), (low, high))
    assert gradcheck(_reseeded(lambda a, b: D.Uniform(a, b).rsample((5,))), (low, high))
    outer_low, outer_high = _leaf(LOW - 1), _leaf(HIGH + 1)
    kl = lambda a, b, c, d: D.kl_divergence(D.Uniform(a, b), D.Uniform(c, d))  # noqa: E731
    assert gradcheck(kl, (low, high, outer_low, outer_high))
    loc, scale = _leaf(LOC[0]), _leaf(SCALE[0])
    kl = lambda a, b, c, d: D.kl_divergence(D.Uniform(a, b), D.Normal(c, d))  # noqa: E731
    assert gradcheck(kl, (low, high, loc, scale))


def _spd(factor):
    """A symmetric positive-definite matrix from any square `factor`: FFᵀ + 3I."""
    return factor @ factor.mT + 3 * minigrad.eye(factor.shape[-1], dtype=factor.dtype)


@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_gradcheck_multivariate_normal(given):
    mu, factor, xs = _leaf(MU), _leaf(_A), _leaf(XS)

    def matrix(f):
        # Only the lower triangle of scale_tril is a parameter (gradcheck nudges them all).
        return f.tril() + 5 * minigrad.eye(3) if given == "scale_tril" else _spd(f)

    def log_prob(m, f, x):
        return D.MultivariateNormal(m, **{given: matrix(f)}).log_prob(x)

    assert gradcheck(log_prob, (mu, factor, xs))
    assert gradcheck(lambda f: D.MultivariateNormal(mu, **{given: matrix(f)}).entropy(), (factor,))
    rsample = _reseeded(lambda m, f: D.MultivariateNormal(m, **{given: matrix(f)}).rsample((3,)))
    assert gradcheck(rsample, (mu, factor))


def test_gradcheck_kl_multivariate_normal():
    mu, factor, other = _leaf(MU), _leaf(_A), _leaf(_A[::-1].copy())

    def kl(m, f, g):
        p = D.MultivariateNormal(m, _spd(f))
        q = D.MultivariateNormal(m[0] * 0.5, scale_tril=g[0].tril() + 5 * minigrad.eye(3))
        return D.kl_divergence(p, q)

    assert gradcheck(kl, (mu, factor, other))


def test_gradcheck_cholesky_and_triangular_solve():
    factor = _leaf(_A)
    assert gradcheck(lambda f: cholesky(_spd(f)), (factor,))
    lower = _leaf(np.linalg.cholesky(COV))
    upper = _leaf(np.linalg.cholesky(COV).transpose(0, 2, 1))
    rhs = _leaf(_rng.normal(size=(4, 2, 3, 2)))  # batch dimensions that broadcast
    assert gradcheck(lambda a, b: solve_triangular(a, b, upper=False), (lower, rhs))
    assert gradcheck(lambda a, b: solve_triangular(a, b, upper=True), (upper, rhs))
    solved = solve_triangular(lower, rhs, upper=False)
    close(lower @ solved, np.broadcast_to(as_array(rhs), (4, 2, 3, 2)))


def test_cholesky_matches_numpy_and_refuses_what_is_not_positive_definite():
    close(cholesky(tensor(minigrad, COV)), np.linalg.cholesky(COV))
    with pytest.raises(RuntimeError, match="leading minor of order 2 is not positive-definite"):
        cholesky(minigrad.tensor([[1.0, 2.0], [2.0, 1.0]]))


def test_gradients_match_pytorch(real_torch):
    """The gradients of a full covariance's log_prob (through the Cholesky factor) and of
    a Bernoulli KL equal PyTorch's."""

    def grads(t, d):
        mu, cov = tensor(t, MU, requires_grad=True), tensor(t, COV, requires_grad=True)
        p = tensor(t, PROBS, requires_grad=True)
        loss = d.MultivariateNormal(mu, cov).log_prob(tensor(t, XS)).sum()
        loss = loss + d.kl_divergence(d.Bernoulli(p), d.Bernoulli(logits=tensor(t, LOGITS))).sum()
        loss.backward()
        return [as_array(mu.grad), as_array(cov.grad), as_array(p.grad)]

    for mine, theirs in zip(grads(minigrad, D), grads(real_torch, real_torch.distributions)):
        close(mine, theirs, rtol=1e-9, atol=1e-10)


# --------------------------------------------------------------------------- sampling


def test_sample_has_no_graph_and_rsample_has_one():
    loc = minigrad.zeros(3, requires_grad=True)
    normal = D.Normal(loc, 1.0)
    assert not normal.sample((2,)).requires_grad
    drawn = normal.rsample((2,))
    assert drawn.requires_grad
    drawn.sum().backward()
    close(loc.grad, [2.0, 2.0, 2.0])  # d(loc + σε)/d loc = 1, per draw
    with pytest.raises(NotImplementedError, match="has_rsample"):
        D.Bernoulli(0.5).rsample()
    kinds = (normal, D.Uniform(0.0, 1.0), D.Categorical(minigrad.ones(2)))
    assert [d.has_rsample for d in kinds] == [True, True, False]


def test_manual_seed_repeats_every_sampler():
    makers = [
        lambda: D.Normal(minigrad.zeros(3), 1.0),
        lambda: D.Bernoulli(0.3 * minigrad.ones(3)),
        lambda: D.Categorical(minigrad.ones(2, 4)),
        lambda: D.Uniform(minigrad.zeros(3), 2.0),
        lambda: D.MultivariateNormal(minigrad.zeros(3), minigrad.eye(3)),
        lambda: D.OneHotCategorical(minigrad.ones(4)),
    ]
    for make in makers:
        minigrad.manual_seed(11)
        first = make().sample((5,))
        minigrad.manual_seed(11)
        again = make().sample((5,))
        assert first.tolist() == again.tolist()


def _stats(samples):
    values = as_array(samples)
    return values.mean(0), values.var(0)


def test_continuous_samples_have_the_right_statistics():
    minigrad.manual_seed(0)
    loc, scale = tensor(minigrad, [-1.0, 3.0]), tensor(minigrad, [0.5, 2.0])
    mean, var = _stats(D.Normal(loc, scale).sample((200_000,)))
    np.testing.assert_allclose(mean, [-1.0, 3.0], atol=0.02)
    np.testing.assert_allclose(var, [0.25, 4.0], rtol=0.02)
    drawn = as_array(D.Uniform(loc, loc + 2 * scale).sample((200_000,)))
    assert (drawn >= [-1.0, 3.0]).all() and (drawn < [0.0, 7.0]).all()
    np.testing.assert_allclose(drawn.mean(0), [-0.5, 5.0], atol=0.02)
    np.testing.assert_allclose(drawn.var(0), [1 / 12, 16 / 12], rtol=0.02)


def test_multivariate_normal_samples_have_the_covariance():
    minigrad.manual_seed(1)
    d = D.MultivariateNormal(tensor(minigrad, MU[0]), tensor(minigrad, COV[0]))
    drawn = as_array(d.sample((100_000,)))
    np.testing.assert_allclose(drawn.mean(0), MU[0], atol=0.05)
    np.testing.assert_allclose(np.cov(drawn.T), COV[0], atol=0.15)


def test_discrete_samples_have_the_right_frequencies():
    minigrad.manual_seed(2)
    probs = tensor(minigrad, [[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    drawn = as_array(D.Categorical(probs).sample((100_000,)))
    assert drawn.shape == (100_000, 2)
    for row, expected in enumerate([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]):
        frequencies = np.bincount(drawn[:, row].astype(int), minlength=3) / len(drawn)
        np.testing.assert_allclose(frequencies, expected, atol=0.01)
    one_hot = as_array(D.OneHotCategorical(probs).sample((100_000,)))
    assert set(np.unique(one_hot.sum(-1))) == {1.0}
    np.testing.assert_allclose(one_hot.mean(0), as_array(probs), atol=0.01)
    bits = as_array(D.Bernoulli(tensor(minigrad, [0.05, 0.5, 0.9])).sample((100_000,)))
    assert set(np.unique(bits)) == {0.0, 1.0}
    np.testing.assert_allclose(bits.mean(0), [0.05, 0.5, 0.9], atol=0.01)


# --------------------------------------------------------------------------- shapes


def test_sample_shapes():
    normal = D.Normal(minigrad.zeros(2), 1.0)
    assert D.Normal(0.0, 1.0).sample().shape == ()
    assert normal.sample().shape == (2,)
    assert normal.rsample((4, 5)).shape == (4, 5, 2)
    assert D.Categorical(minigrad.ones(2, 3)).sample((4,)).shape == (4, 2)
    assert D.Categorical(minigrad.ones(3)).sample().dtype == minigrad.int64
    mvn = D.MultivariateNormal(minigrad.zeros(2, 3), minigrad.eye(3))
    assert mvn.sample((4,)).shape == (4, 2, 3)
    assert D.OneHotCategorical(minigrad.ones(2, 3)).sample((4,)).shape == (4, 2, 3)
    with pytest.raises(TypeError, match=r"sample\(\(n,\)\)"):
        normal.sample(5)


def test_expand_and_enumerate_support():
    expanded = D.Normal(minigrad.zeros(1), 1.0).expand((4, 3))
    assert expanded.batch_shape == (4, 3) and expanded.sample().shape == (4, 3)
    categorical = D.Categorical(minigrad.ones(3)).expand((2,))
    assert categorical.sample((5,)).shape == (5, 2)
    mvn = D.MultivariateNormal(minigrad.zeros(3), minigrad.eye(3)).expand((2,))
    assert mvn.log_prob(minigrad.zeros(3)).shape == (2,)
    assert D.Independent(D.Normal(minigrad.zeros(3), 1.0), 1).expand((2,)).batch_shape == (2,)
    assert D.Bernoulli(minigrad.ones(2) * 0.3).enumerate_support().tolist() == [[0, 0], [1, 1]]
    assert D.Categorical(minigrad.ones(2, 3)).enumerate_support(expand=False).shape == (3, 1)
    assert D.OneHotCategorical(minigrad.ones(2, 3)).enumerate_support().shape == (3, 2, 3)


def test_batch_shapes_broadcast():
    d = D.Normal(minigrad.zeros(2, 1), minigrad.ones(3))
    assert d.batch_shape == (2, 3)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        D.Normal(minigrad.zeros(2), minigrad.ones(3))
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        D.Normal(minigrad.zeros(2), 1.0).log_prob(minigrad.zeros(3))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        D.MultivariateNormal(minigrad.zeros(3), minigrad.eye(3)).log_prob(minigrad.zeros(2))


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "parameter", "constraint"),
    [
        (lambda: D.Normal(minigrad.zeros(2), minigrad.tensor([1.0, -1.0])), "scale", "GreaterThan"),
        (lambda: D.Normal(minigrad.tensor([math.nan]), 1.0), "loc", "Real()"),
        (lambda: D.Bernoulli(minigrad.tensor([1.2])), "probs", "Interval"),
        (lambda: D.Categorical(minigrad.tensor([-0.5, 1.5])), "probs", "Simplex()"),
        (lambda: D.Uniform(2.0, 1.0), "low", "LessThan"),
        (
            lambda: D.MultivariateNormal(minigrad.zeros(2), minigrad.tensor([[1, 2], [2, 1.0]])),
            "covariance_matrix",
            "PositiveDefinite()",
        ),
        (
            lambda: D.MultivariateNormal(minigrad.zeros(2), scale_tril=minigrad.ones(2, 2)),
            "scale_tril",
            "LowerCholesky()",
        ),
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
        (lambda: D.Bernoulli(0.2), minigrad.tensor(0.5), "Boolean()"),
        (lambda: D.Categorical(minigrad.ones(2)), minigrad.tensor(3), "IntegerInterval"),
        (lambda: D.Uniform(0.0, 1.0), minigrad.tensor(2.0), "Interval"),
        (lambda: D.OneHotCategorical(minigrad.ones(2)), minigrad.tensor([1.0, 1.0]), "OneHot()"),
    ],
)
def test_log_prob_outside_the_support_raises_value_error(make, value, support):
    with pytest.raises(ValueError, match="Expected value argument") as raised:
        make().log_prob(value)
    assert support in str(raised.value)


def test_validate_args_false_skips_the_checks(restore_validation):
    normal = D.Normal(0.0, -1.0, validate_args=False)
    assert normal.scale.item() == -1.0
    assert np.isinf(D.Uniform(0.0, 1.0, validate_args=False).log_prob(minigrad.tensor(2.0)).item())
    D.Distribution.set_default_validate_args(False)
    D.Normal(0.0, -1.0)  # no error
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, -1.0, validate_args=True)
    D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="True or False"):
        D.Distribution.set_default_validate_args("yes")


def test_wrong_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli(probs=0.3, logits=0.1)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Categorical(minigrad.tensor(1.0))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(minigrad.zeros(2), minigrad.eye(2), scale_tril=minigrad.eye(2))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(minigrad.tensor(0.0), minigrad.eye(2))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims <= len"):
        D.Independent(D.Normal(minigrad.zeros(3), 1.0), 2)
    with pytest.raises(ValueError, match="Wrap lists"):
        D.Normal([0.0, 1.0], 1.0)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        D.MultivariateNormal(
            minigrad.zeros(2), minigrad.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=False
        )


def test_constraints():
    assert constraints.positive.check(minigrad.tensor([1.0, 0.0])).tolist() == [True, False]
    assert constraints.simplex.check(minigrad.tensor([[0.5, 0.5], [0.5, 0.6]])).tolist() == [
        True,
        False,
    ]
    with_nan = minigrad.tensor([[0.0, math.nan], [1.0, 2.0]])
    assert constraints.real_vector.check(with_nan).tolist() == [False, True]
    assert constraints.is_dependent(D.Uniform.support)
    assert repr(D.Independent(D.Normal(minigrad.zeros(3), 1.0), 1).support) == (
        "IndependentConstraint(Real(), 1)"
    )
    with pytest.raises(ValueError, match="dependent"):
        constraints.dependent.check(minigrad.zeros(1))


# --------------------------------------------------------------------------- properties


finite = st.floats(-5.0, 5.0, allow_nan=False)
positive = st.floats(0.1, 5.0, allow_nan=False)


@PROPERTY
@given(finite, positive, finite, positive, finite)
def test_normal_properties(p_loc, p_scale, q_loc, q_scale, x):
    p = D.Normal(minigrad.tensor(p_loc), minigrad.tensor(p_scale))
    q = D.Normal(minigrad.tensor(q_loc), minigrad.tensor(q_scale))
    close(p.log_prob(minigrad.tensor(x)), _normal_log_pdf(x, p_loc, p_scale))
    kl = D.kl_divergence(p, q).item()
    assert kl >= -1e-12
    assert abs(D.kl_divergence(p, p).item()) < 1e-12
    expected = math.log(q_scale / p_scale) + (p_scale**2 + (p_loc - q_loc) ** 2) / (2 * q_scale**2)
    assert kl == pytest.approx(expected - 0.5, rel=1e-9, abs=1e-10)


@PROPERTY
@given(st.lists(st.floats(0.01, 10.0), min_size=2, max_size=6), st.data())
def test_categorical_properties(weights, data):
    probs = np.asarray(weights) / np.sum(weights)
    by_probs = D.Categorical(minigrad.tensor(weights))
    by_logits = D.Categorical(logits=minigrad.tensor(np.log(weights) + 3.0))
    k = data.draw(st.integers(0, len(weights) - 1))
    close(by_probs.log_prob(minigrad.tensor(k)), math.log(probs[k]))
    close(by_logits.log_prob(minigrad.tensor(k)), math.log(probs[k]))
    close(by_probs.entropy(), -(probs * np.log(probs)).sum())
    assert abs(D.kl_divergence(by_probs, by_logits).item()) < 1e-10


@PROPERTY
@given(st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_multivariate_normal_properties(n, seed):
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=(n, n))
    cov = factor @ factor.T + 0.5 * np.eye(n)
    mu, x = rng.normal(size=n), rng.normal(size=(3, n))
    p = D.MultivariateNormal(tensor(minigrad, mu), tensor(minigrad, cov))
    close(p.log_prob(tensor(minigrad, x)), _mvn_log_pdf(x, mu, cov), rtol=1e-9, atol=1e-9)
    q = D.MultivariateNormal(tensor(minigrad, mu), precision_matrix=tensor(minigrad, cov))
    assert D.kl_divergence(p, q).item() >= -1e-9
    assert abs(D.kl_divergence(p, p).item()) < 1e-9


def test_lazy_parameters_are_computed_once_and_keep_their_graph():
    logits = minigrad.tensor([0.3, -1.0], requires_grad=True)
    d = D.Bernoulli(logits=logits)
    assert "probs" not in vars(d)
    with minigrad.no_grad():
        probs = d.probs  # computed with grad recording on, as PyTorch's lazy_property
    assert "probs" in vars(d) and d.probs is probs and probs.requires_grad
    probs.sum().backward()
    close(logits.grad, as_array(probs * (1 - probs)))


def test_a_subclass_without_arg_constraints_warns():
    class Bare(D.Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        Bare()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Bare(validate_args=False)

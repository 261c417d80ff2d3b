"""minigrad.special under torch.special's names (issue 35): values against PyTorch, gradients
with gradcheck in float64, and the missing-name message for the rest."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad import special
from minigrad.autograd import gradcheck

ONE_ARGUMENT = ["erfc", "exp2", "ndtr", "ndtri", "logit", "sinc", "entr", "expit", "gammaln",
                "psi", "digamma", "erf", "erfinv", "expm1", "log1p"]
# Inputs inside each function's domain, away from its poles.
DOMAIN = {"ndtri": (0.05, 0.95), "logit": (0.05, 0.95), "erfinv": (-0.9, 0.9),
          "entr": (0.1, 2.0), "gammaln": (0.2, 3.0), "psi": (0.2, 3.0),
          "digamma": (0.2, 3.0), "log1p": (-0.5, 2.0)}


def _inputs(name: str) -> np.ndarray:
    low, high = DOMAIN.get(name, (-2.0, 2.0))
    return np.random.default_rng(len(name)).uniform(low, high, (3, 4))


@pytest.mark.parametrize("name", ONE_ARGUMENT)
def test_values_match_pytorch(name: str, real_torch) -> None:
    values = _inputs(name)
    ours = getattr(special, name)(minigrad.tensor(values)).numpy()
    theirs = getattr(real_torch.special, name)(real_torch.tensor(values)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ONE_ARGUMENT)
def test_gradients_pass_gradcheck(name: str) -> None:
    x = minigrad.tensor(_inputs(name), requires_grad=True)
    assert gradcheck(getattr(special, name), (x,))


def test_edges_as_pytorch(real_torch) -> None:
    edges = np.array([-1.0, 0.0, 1.0])
    for name in ("entr", "sinc", "ndtri", "logit"):
        ours = getattr(special, name)(minigrad.tensor(edges)).numpy()
        theirs = getattr(real_torch.special, name)(real_torch.tensor(edges)).numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    x, y = np.array([0.0, 0.0, 2.0]), np.array([-1.0, 3.0, 0.5])
    np.testing.assert_array_equal(
        special.xlog1py(minigrad.tensor(x), minigrad.tensor(y)).numpy(),
        real_torch.special.xlog1py(real_torch.tensor(x), real_torch.tensor(y)).numpy(),
    )
    np.testing.assert_allclose(
        special.logit(minigrad.tensor([0.0, 0.5, 1.0]), eps=1e-6).numpy(),
        real_torch.special.logit(real_torch.tensor([0.0, 0.5, 1.0], dtype=real_torch.float64),
                                 eps=1e-6).numpy(), rtol=1e-12)


def test_integers_become_the_default_float() -> None:
    result = special.exp2(minigrad.tensor([0, 1, 3]))
    assert result.dtype == minigrad.get_default_dtype()
    np.testing.assert_array_equal(result.numpy(), [1.0, 2.0, 8.0])


def test_a_name_minigrad_lacks_says_so() -> None:
    with pytest.raises(AttributeError, match=r"does not have `torch.special.zeta` yet"):
        special.zeta  # noqa: B018
    with pytest.raises(TypeError, match="must be a Variable, but got list"):
        special.erfc([1.0])

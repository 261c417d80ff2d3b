"""nn.functional's further activations, losses and norms (softplus, elu, hardtanh, relu6,
mish, smooth_l1_loss, huber_loss, kl_div, normalize, cosine_similarity): gradcheck in
float64, and values and gradients against PyTorch where it is installed, boundary points
(0, the clamp limits, beta, |d| = delta) included."""

import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F

POINTS = np.array([-25.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 6.0, 7.0, 25.0])
RNG = np.random.default_rng(21)
TARGET = POINTS + RNG.uniform(-1.5, 1.5, POINTS.shape)
PROBS = np.array([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]])
LOGITS = RNG.standard_normal((2, 3))
ROWS = RNG.standard_normal((4, 3))

# name -> (call(F, library, x) -> output, the input's values)
CASES = {
    "softplus": (lambda F, lib, x: F.softplus(x), POINTS),
    "softplus-beta": (lambda F, lib, x: F.softplus(x, beta=2.0, threshold=5.0), POINTS),
    "elu": (lambda F, lib, x: F.elu(x), POINTS),
    "elu-alpha": (lambda F, lib, x: F.elu(x, alpha=0.5), POINTS),
    "hardtanh": (lambda F, lib, x: F.hardtanh(x), POINTS),
    "hardtanh-limits": (lambda F, lib, x: F.hardtanh(x, -2.0, 2.0), POINTS),
    "relu6": (lambda F, lib, x: F.relu6(x), POINTS),
    "mish": (lambda F, lib, x: F.mish(x), POINTS),
    "smooth_l1": (lambda F, lib, x: F.smooth_l1_loss(x, lib.tensor(TARGET)), POINTS),
    "smooth_l1-beta": (
        lambda F, lib, x: F.smooth_l1_loss(x, lib.tensor(TARGET), reduction="sum", beta=0.5),
        POINTS,
    ),
    "huber": (lambda F, lib, x: F.huber_loss(x, lib.tensor(TARGET), delta=0.7), POINTS),
    "kl_div": (lambda F, lib, x: F.kl_div(x, lib.tensor(PROBS), reduction="batchmean"), LOGITS),
    "kl_div-sum": (lambda F, lib, x: F.kl_div(x, lib.tensor(PROBS), reduction="sum"), LOGITS),
    "kl_div-log": (
        lambda F, lib, x: F.kl_div(x, lib.tensor(PROBS).clamp(min=0.01).log(), log_target=True),
        LOGITS,
    ),
    "normalize": (lambda F, lib, x: F.normalize(x, dim=1), ROWS),
    "normalize-p1": (lambda F, lib, x: F.normalize(x, p=1.0, dim=0), ROWS),
    "cosine_similarity": (lambda F, lib, x: F.cosine_similarity(x, x.flip(0) + 1.0), ROWS),
}


def _run(library, functional, name):
    call, values = CASES[name]
    x = library.tensor(values, dtype=library.float64, requires_grad=True)
    out = call(functional, library, x)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name) -> None:
    call, values = CASES[name]
    # Away from the kinks, where finite differences are defined.
    smooth = values + 0.123 if values is POINTS else values
    x = minigrad.tensor(smooth, requires_grad=True)
    assert minigrad.autograd.gradcheck(lambda v: call(F, minigrad, v), (x,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(name) -> None:
    torch = pytest.importorskip("torch")
    ours, our_grad = _run(minigrad, F, name)
    theirs, their_grad = _run(torch, torch.nn.functional, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-10, atol=1e-12)


def test_no_overflow_in_the_branch_where_throws_away() -> None:
    x = minigrad.tensor([1000.0, -1000.0], requires_grad=True)
    (F.softplus(x) + F.elu(x) + F.mish(x)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_a_name_minigrad_lacks_says_so_with_the_nearest_spelling() -> None:
    with pytest.raises(AttributeError, match=r"minigrad does not have `torch.nn.functional.selu`"):
        _ = F.selu
    with pytest.raises(AttributeError, match=r"nearest existing spelling: `torch.nn.functional.e"):
        _ = F.eluu

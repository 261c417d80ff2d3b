"""minigrad.nn.functional: values and gradients against PyTorch (float64), gradcheck,
second derivatives, stability at extreme inputs, dropout's randomness, and the errors.

The PyTorch cross-checks skip when torch is not installed; everything else runs without it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import Variable

RNG = np.random.default_rng(20)
X = RNG.standard_normal((5, 4)) * 2  # logits / activations input
LABELS = np.array([0, 3, 1, 1, 2])
LABELS_IGNORED = np.array([0, 3, -100, 1, 2])
CLASS_WEIGHT = RNG.uniform(0.5, 2.0, 4)
PROBS = RNG.dirichlet(np.ones(4), 5)  # soft targets, rows sum to 1
P = RNG.uniform(0.05, 0.95, (5, 4))  # probabilities for binary_cross_entropy
T = RNG.uniform(0.0, 1.0, (5, 4))  # binary targets (soft)
ELEMENT_WEIGHT = RNG.uniform(0.5, 2.0, (5, 4))
POS_WEIGHT = RNG.uniform(0.5, 3.0, 4)
X3 = RNG.standard_normal((2, 4, 3))  # (N, C, d1)
LABELS3 = RNG.integers(0, 4, (2, 3))
INDICES = np.array([[0, 2, 2], [1, 0, 3]])


def _ce(lib, weight=None, target=LABELS, **kw):
    """cross_entropy of the library `lib`, with targets and class weight of its kind."""
    labels = _labels(lib, target)
    return lambda x: lib.cross_entropy(x, labels, **_w(lib, weight), **kw)


def _labels(lib, labels):
    if lib is F:
        return labels
    import torch

    return torch.tensor(labels)


def _w(lib, weight):
    if weight is None:
        return {}
    if lib is F:
        return {"weight": mg.tensor(weight)}
    import torch

    return {"weight": torch.tensor(weight)}


def _t(lib, array):
    """A constant of library lib (a minigrad Variable, or a torch tensor)."""
    if lib is F:
        return mg.tensor(array)
    import torch

    return torch.tensor(array)


# Each case: name, f(lib) → a function of the differentiable inputs, the inputs' arrays.
CASES = [
    (
        "linear",
        lambda L: lambda x, w, b: L.linear(x, w, b),
        [X, RNG.standard_normal((3, 4)), RNG.standard_normal(3)],
    ),
    ("relu", lambda L: lambda x: L.relu(x), [X + 0.01]),
    ("leaky_relu", lambda L: lambda x: L.leaky_relu(x, 0.2), [X]),
    ("gelu", lambda L: lambda x: L.gelu(x), [X]),
    ("gelu_tanh", lambda L: lambda x: L.gelu(x, approximate="tanh"), [X]),
    ("silu", lambda L: lambda x: L.silu(x), [X]),
    ("tanh", lambda L: lambda x: L.tanh(x), [X]),
    ("sigmoid", lambda L: lambda x: L.sigmoid(x), [X]),
    ("logsigmoid", lambda L: lambda x: L.logsigmoid(x), [X * 5]),
    ("softmax", lambda L: lambda x: L.softmax(x, dim=1), [X]),
    ("softmax_dim0", lambda L: lambda x: L.softmax(x, 0), [X]),
    ("log_softmax", lambda L: lambda x: L.log_softmax(x, dim=-1), [X]),
    ("mse_loss", lambda L: lambda x, t: L.mse_loss(x, t), [X, T]),
    ("mse_loss_sum", lambda L: lambda x, t: L.mse_loss(x, t, reduction="sum"), [X, T]),
    (
        "mse_loss_weight",
        lambda L: lambda x, t: L.mse_loss(x, t, weight=_t(L, ELEMENT_WEIGHT)),
        [X, T],
    ),
    ("l1_loss", lambda L: lambda x, t: L.l1_loss(x, t), [X, T]),
    ("l1_loss_none", lambda L: lambda x, t: L.l1_loss(x, t, reduction="none"), [X, T]),
    ("bce", lambda L: lambda p, t: L.binary_cross_entropy(p, t), [P, T]),
    (
        "bce_weight_sum",
        lambda L: (
            lambda p, t: L.binary_cross_entropy(p, t, weight=_t(L, CLASS_WEIGHT), reduction="sum")
        ),
        [P, T],
    ),
    ("bce_none", lambda L: lambda p, t: L.binary_cross_entropy(p, t, reduction="none"), [P, T]),
    ("bce_logits", lambda L: lambda x, t: L.binary_cross_entropy_with_logits(x, t), [X, T]),
    (
        "bce_logits_weights",
        lambda L: (
            lambda x, t: L.binary_cross_entropy_with_logits(
                x, t, weight=_t(L, ELEMENT_WEIGHT), pos_weight=_t(L, POS_WEIGHT), reduction="none"
            )
        ),
        [X, T],
    ),
    ("ce", lambda L: _ce(L), [X]),
    ("ce_sum", lambda L: _ce(L, reduction="sum"), [X]),
    ("ce_none", lambda L: _ce(L, reduction="none"), [X]),
    ("ce_weight", lambda L: _ce(L, CLASS_WEIGHT), [X]),
    ("ce_ignore", lambda L: _ce(L, CLASS_WEIGHT, target=LABELS_IGNORED), [X]),
    ("ce_ignore_7", lambda L: _ce(L, target=np.array([0, 3, 7, 1, 7]), ignore_index=7), [X]),
    ("ce_smoothing", lambda L: _ce(L, label_smoothing=0.2), [X]),
    (
        "ce_smoothing_weight_ignore",
        lambda L: _ce(L, CLASS_WEIGHT, target=LABELS_IGNORED, label_smoothing=0.3),
        [X],
    ),
    ("ce_smoothing_sum", lambda L: _ce(L, CLASS_WEIGHT, reduction="sum", label_smoothing=0.1), [X]),
    (
        "ce_smoothing_none",
        lambda L: _ce(
            L, CLASS_WEIGHT, target=LABELS_IGNORED, reduction="none", label_smoothing=0.1
        ),
        [X],
    ),
    ("ce_probabilities", lambda L: lambda x, q: L.cross_entropy(x, q), [X, PROBS]),
    (
        "ce_probabilities_all",
        lambda L: (
            lambda x, q: L.cross_entropy(
                x, q, **_w(L, CLASS_WEIGHT), label_smoothing=0.2, reduction="sum"
            )
        ),
        [X, PROBS],
    ),
    (
        "ce_probabilities_none",
        lambda L: lambda x, q: L.cross_entropy(x, q, reduction="none"),
        [X, PROBS],
    ),
    (
        "ce_kdim",
        lambda L: lambda x: L.cross_entropy(x, _labels(L, LABELS3), label_smoothing=0.1),
        [X3],
    ),
    (
        "ce_kdim_none",
        lambda L: lambda x: L.cross_entropy(x, _labels(L, LABELS3), reduction="none"),
        [X3],
    ),
    ("ce_unbatched", lambda L: lambda x: L.cross_entropy(x, _labels(L, np.array(2))), [X[0]]),
    (
        "nll",
        lambda L: lambda x: L.nll_loss(x, _labels(L, LABELS_IGNORED), **_w(L, CLASS_WEIGHT)),
        [X],
    ),
    ("nll_none", lambda L: lambda x: L.nll_loss(x, _labels(L, LABELS), reduction="none"), [X]),
    ("pad", lambda L: lambda x: L.pad(x, (1, 2)), [X]),
    ("pad_value_crop", lambda L: lambda x: L.pad(x, (1, -1, -2, 3), value=0.5), [X]),
    ("pad_3d", lambda L: lambda x: L.pad(x, (0, 1, 1, 0, 2, 2)), [X3]),
    ("embedding", lambda L: lambda w: L.embedding(_labels(L, INDICES), w), [X]),
    (
        "embedding_padding",
        lambda L: lambda w: L.embedding(_labels(L, INDICES), w, padding_idx=2),
        [X],
    ),
    (
        "layer_norm",
        lambda L: lambda x, w, b: L.layer_norm(x, (4,), w, b),
        [X, CLASS_WEIGHT, POS_WEIGHT],
    ),
    ("layer_norm_2d", lambda L: lambda x: L.layer_norm(x, (4, 3), eps=1e-3), [X3]),
]
CASE_IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "make", "arrays"), CASES, ids=CASE_IDS)
def test_values_and_gradients_equal_torch(name, make, arrays):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    mine = [Variable(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_mine, out_theirs = make(F)(*mine), make(TF)(*theirs)
    np.testing.assert_allclose(out_mine.data, out_theirs.detach().numpy(), rtol=1e-12, atol=1e-14)
    upstream = np.random.default_rng(1).standard_normal(out_mine.shape)
    (out_mine * Variable(upstream)).sum().backward()
    (out_theirs * torch.tensor(upstream)).sum().backward()
    for k, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(
            a.grad.data, b.grad.numpy(), rtol=1e-11, atol=1e-13, err_msg=f"input {k}"
        )


# relu: a kink at 0 within finite differences' reach of some inputs; embedding_padding:
# the padding row gets no gradient on purpose (PyTorch's gradcheck refuses it too).
GRADCHECKED = [case for case in CASES if case[0] not in ("relu", "embedding_padding")]


@pytest.mark.parametrize(("name", "make", "arrays"), GRADCHECKED, ids=[c[0] for c in GRADCHECKED])
def test_gradcheck_in_float64(name, make, arrays):
    inputs = tuple(Variable(a.copy(), requires_grad=True) for a in arrays)
    assert mg.gradcheck(make(F), inputs)


SECOND_ORDER = [
    "gelu",
    "gelu_tanh",
    "leaky_relu",
    "logsigmoid",
    "bce",
    "bce_logits_weights",
    "ce_smoothing",
    "ce_probabilities_all",
    "layer_norm_2d",
]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_equal_torch(name):
    """Backward formulas are Variable ops: grad of (grad · v) matches torch's double backward."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    _, make, arrays = CASES[CASE_IDS.index(name)]
    mine = [Variable(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    direction = [np.random.default_rng(k).standard_normal(a.shape) for k, a in enumerate(arrays)]
    out_mine = make(F)(*mine).sum()
    out_theirs = make(TF)(*theirs).sum()
    grads_mine = mg.grad(out_mine, mine, create_graph=True)
    grads_theirs = torch.autograd.grad(out_theirs, theirs, create_graph=True)
    inner_mine = sum((g * Variable(d)).sum() for g, d in zip(grads_mine, direction))
    inner_theirs = sum((g * torch.tensor(d)).sum() for g, d in zip(grads_theirs, direction))
    second_theirs = torch.autograd.grad(inner_theirs, theirs, allow_unused=True)
    if not inner_mine.requires_grad:  # the gradient is constant: every second derivative is 0
        second_mine = [None] * len(mine)
    else:
        second_mine = mg.grad(inner_mine, mine, allow_unused=True)
    for a, b in zip(second_mine, second_theirs):
        expected = np.zeros(a.shape) if b is None else b.numpy()
        got = np.zeros(expected.shape) if a is None else a.data
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


# =========================================================================== stability


def test_cross_entropy_and_bce_with_logits_stay_finite_at_huge_logits():
    logits = Variable(np.array([[1000.0, -1000.0], [-1000.0, 1000.0]]), requires_grad=True)
    loss = F.cross_entropy(logits, np.array([0, 0]), reduction="none")
    np.testing.assert_allclose(loss.data, [0.0, 2000.0])
    targets = np.array([[1.0, 0.0], [1.0, 1.0]])
    bce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    np.testing.assert_allclose(bce.data, [[0.0, 0.0], [1000.0, 0.0]])
    bce.sum().backward()
    assert np.isfinite(logits.grad.data).all()


def test_binary_cross_entropy_clamps_its_logs_at_minus_100():
    p = Variable(np.array([0.0, 1.0, 0.0, 1.0]), requires_grad=True)
    t = np.array([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(p, t, reduction="none")
    np.testing.assert_array_equal(loss.data, [100.0, 100.0, 0.0, 0.0])
    loss.sum().backward()
    assert np.isfinite(p.grad.data).all()  # (x - t) / max(x(1 - x), 1e-12)
    np.testing.assert_allclose(p.grad.data, [-1e12, 1e12, 0.0, 0.0])


# =========================================================================== dropout


def test_dropout_zeroes_about_p_and_scales_the_rest():
    mg.manual_seed(0)
    x = Variable(np.ones((200, 50)), requires_grad=True)
    y = F.dropout(x, p=0.3)
    kept = y.data != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y.data[kept], 1 / 0.7)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, y.data)  # the mask is the gradient


def test_dropout_repeats_under_manual_seed_and_is_identity_when_not_training():
    x = Variable(np.arange(12.0).reshape(3, 4))
    mg.manual_seed(5)
    first = F.dropout(x, 0.5).data
    mg.manual_seed(5)
    np.testing.assert_array_equal(F.dropout(x, 0.5).data, first)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).data, np.zeros((3, 4)))


@pytest.mark.parametrize("p", [-0.1, 1.5, True])
def test_dropout_rejects_bad_p(p):
    with pytest.raises(ValueError, match="between 0 and 1, but got"):
        F.dropout(Variable(np.ones(3)), p)


def test_dropout_p_of_the_wrong_kind_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="argument 'p' .* must be a number, but got str '0.5'"):
        F.dropout(Variable(np.ones(3)), "0.5")


# =========================================================================== one_hot


def test_one_hot_values_and_dtype():
    y = F.one_hot(mg.tensor([0, 2, 1]))
    assert y.dtype == np.int64 and y.shape == (3, 3)
    np.testing.assert_array_equal(y.data, np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(mg.tensor([[1], [0]]), num_classes=4).shape == (2, 1, 4)


def test_one_hot_equals_torch():
    torch = pytest.importorskip("torch")
    labels = np.array([[3, 0], [1, 1]])
    np.testing.assert_array_equal(
        F.one_hot(mg.tensor(labels), 5).data,
        torch.nn.functional.one_hot(torch.tensor(labels), 5).numpy(),
    )


@pytest.mark.parametrize(
    ("labels", "classes", "error", "phrase"),
    [
        ([0.0, 1.0], -1, TypeError, "integer class labels"),
        ([0, -1], -1, ValueError, "non-negative"),
        ([0, 3], 3, ValueError, "smaller than num_classes (3)"),
        (np.zeros(0, np.int64), -1, ValueError, "pass num_classes"),
    ],
)
def test_one_hot_errors(labels, classes, error, phrase):
    with pytest.raises(error, match=__import__("re").escape(phrase)):
        F.one_hot(mg.tensor(labels), classes)


# =========================================================================== errors


def test_softmax_needs_dim():
    with pytest.raises(TypeError, match=r"softmax needs dim="):
        F.softmax(Variable(X))
    with pytest.raises(TypeError, match=r"log_softmax needs dim="):
        F.log_softmax(Variable(X))


def test_softmax_dtype_casts_first():
    y = F.softmax(Variable(X), dim=1, dtype=mg.float32)
    assert y.dtype == np.float32


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="'none' or 'tanh'; got 'erf'"):
        F.gelu(Variable(X), approximate="erf")


def test_pad_errors():
    x = Variable(X)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode wrap"):
        F.pad(x, (1, 1), mode="wrap")
    with pytest.raises(RuntimeError, match="divisible by 2"):  # PyTorch's classes
        F.pad(x, (1, 1, 1))
    with pytest.raises(RuntimeError, match="input of dimension 2"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="negative size"):
        F.pad(x, (-3, -2))
    with pytest.raises(TypeError, match="tuple of ints"):
        F.pad(x, (1.5, 1))


@pytest.mark.parametrize(
    ("call", "error", "phrases"),
    [
        (
            lambda: F.cross_entropy(Variable(X), LABELS, reduction="avg"),
            ValueError,
            ["reduction must be one of", "'avg'"],
        ),
        (
            lambda: F.cross_entropy(Variable(X), LABELS, label_smoothing=1.5),
            ValueError,
            ["label_smoothing", "1.5"],
        ),
        (
            lambda: F.cross_entropy(Variable(X), np.array([0, 1, 2, 3, 4])),
            IndexError,
            ["Target 4 is out of bounds", "4 classes (0 to 3)"],
        ),
        (
            lambda: F.cross_entropy(Variable(X), np.zeros(5)),
            ValueError,
            ["5 integer class indices", "probabilities of shape (5, 4)", "dtype float64"],
        ),
        (lambda: F.cross_entropy(Variable(X3), LABELS), ValueError, ["(2, 3)", "got (2, 4, 3)"]),
        (
            lambda: F.cross_entropy(Variable(X), PROBS, ignore_index=1),
            ValueError,
            ["ignore_index", "probabilities"],
        ),
        (
            lambda: F.cross_entropy(Variable(X), LABELS, weight=mg.ones(3)),
            ValueError,
            ["one number per class", "(4,)", "(3,)"],
        ),
        (
            lambda: F.cross_entropy(X, LABELS),
            TypeError,
            ["argument 'x'", "must be a Variable", "ndarray"],
        ),
        (lambda: F.nll_loss(Variable(X), PROBS), ValueError, ["5 integer class indices"]),
        (lambda: F.mse_loss(Variable(X), T[:, :3]), ValueError, ["(5, 4)", "(5, 3)", "must match"]),
        (
            lambda: F.binary_cross_entropy(Variable(X), T),
            ValueError,
            ["between 0 and 1", "with_logits"],
        ),
        (
            lambda: F.binary_cross_entropy(Variable(P), T * 2),
            ValueError,
            ["target should be between 0 and 1"],
        ),
        (
            lambda: F.binary_cross_entropy_with_logits(Variable(X), T[0]),
            ValueError,
            ["target has shape (4,)"],
        ),
        (
            lambda: F.binary_cross_entropy(Variable(P), T, weight=mg.ones(3)),
            ValueError,
            ["weight of shape (3,)"],
        ),
        (
            lambda: F.embedding(np.array([0.0]), Variable(X)),
            RuntimeError,
            ["integer indices", "float64"],
        ),
        (lambda: F.embedding(np.array([5]), Variable(X)), IndexError, ["index 5", "5 rows"]),
        (
            lambda: F.embedding(np.array([1]), Variable(X), scale_grad_by_freq=True),
            NotImplementedError,
            ["scale_grad_by_freq"],
        ),
        (lambda: F.layer_norm(Variable(X), (3,)), ValueError, ["normalized_shape=[3]", "[5, 4]"]),
        (lambda: F.linear(Variable(X), mg.ones(3, 5)), ValueError, ["(5, 4)", "(3, 5)"]),
    ],
    ids=[
        "bad-reduction",
        "label-smoothing-range",
        "class-out-of-range",
        "float-class-indices",
        "kdim-target-shape",
        "probabilities-with-ignore-index",
        "class-weight-shape",
        "array-input",
        "nll-probabilities",
        "mse-shape",
        "bce-input-range",
        "bce-target-range",
        "bce-logits-shape",
        "bce-weight-shape",
        "embedding-float-indices",
        "embedding-out-of-range",
        "embedding-scale-grad-by-freq",
        "layer-norm-shape",
        "linear-shapes",
    ],
)
def test_errors_say_what_was_expected_and_received(call, error, phrases):
    with pytest.raises(error) as info:
        call()
    for phrase in phrases:
        assert phrase in str(info.value), f"{phrase!r} not in {str(info.value)!r}"


def test_legacy_size_average_and_reduce_flags():
    x, t = Variable(X), Variable(T)
    np.testing.assert_allclose(F.mse_loss(x, t, reduce=False).data, (X - T) ** 2)
    np.testing.assert_allclose(F.mse_loss(x, t, size_average=False).item(), ((X - T) ** 2).sum())


def test_all_ignored_mean_is_nan_as_in_torch():
    with np.errstate(invalid="ignore"):
        loss = F.cross_entropy(Variable(X[:2]), np.array([-100, -100]))
    assert np.isnan(loss.item())


def test_inplace_variants_change_the_input():
    x = Variable(np.array([-1.0, 2.0]))
    assert F.relu(x, inplace=True) is x
    np.testing.assert_array_equal(x.data, [0.0, 2.0])
    y = Variable(np.array([-1.0, 2.0]))
    assert F.leaky_relu(y, 0.5, inplace=True) is y
    np.testing.assert_array_equal(y.data, [-0.5, 2.0])


def test_functional_is_an_attribute_of_nn():
    assert mg.nn.functional is F


def _exact_gelu(x: np.ndarray) -> np.ndarray:
    """GELU in float64 from math.erfc, the instrument for the float32 checks below."""
    return np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])


def test_gelu_in_float32_is_within_float32_resolution_of_the_exact_value():
    """float32 GELU takes Φ from Abramowitz & Stegun 7.1.26 (nn/_functions/normal_cdf.py):
    within 2e-7·max(1, |x|) of GELU computed in float64 with math.erfc, gradient too."""
    x = np.linspace(-9, 9, 30001).astype(np.float32)
    v = Variable(x, requires_grad=True)
    y = F.gelu(v)
    assert y.dtype == mg.float32
    error = np.abs(y.detach().numpy().astype(np.float64) - _exact_gelu(x))
    assert (error <= 2e-7 * np.maximum(1.0, np.abs(x))).all(), error.max()
    y.sum().backward()
    xs = x.astype(np.float64)
    exact_grad = np.array([0.5 * math.erfc(-a / math.sqrt(2.0)) for a in xs])
    exact_grad += xs * np.exp(-xs * xs / 2) / np.sqrt(2 * np.pi)
    assert np.abs(v.grad.numpy() - exact_grad).max() <= 3e-7


def test_gelu_in_float32_is_as_close_as_pytorchs(real_torch):
    x = np.linspace(-9, 9, 30001).astype(np.float32)
    exact = _exact_gelu(x)
    ours = np.abs(F.gelu(Variable(x)).numpy().astype(np.float64) - exact).max()
    theirs = real_torch.nn.functional.gelu(real_torch.from_numpy(x)).double().numpy()
    assert ours <= 1.5 * np.abs(theirs - exact).max()

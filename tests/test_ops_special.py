"""The special functions of minigrad/ops/special.py: erfinv, lgamma, digamma, polygamma, xlogy.

What runs:
- Values against closed forms and identities (always): Γ at integers and halves (math),
  ψ(1) = -γ, ψ(½) = -γ - 2 log 2, ψ'(1) = π²/6, the recurrences in x + 1, the reflection
  formulas, erf(erfinv(x)) = x, and the poles, infinities and nan PyTorch gives.
- Values against real PyTorch on wide ranges of float64 inputs (the `real_torch` fixture).
- Gradients: gradcheck and gradgradcheck in float64 (each backward is made of these ops).
- Dtypes, the spellings (function, method, in-place), polygamma's argument errors, and
  hypothesis property tests of the identities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

PROPERTY = settings(max_examples=40, deadline=None)
EULER = 0.57721566490153286061
TIGHT = {"rtol": 1e-12, "atol": 1e-12}

_rng = np.random.default_rng(36)
# Positive and negative, tiny and large: every branch of the series and reflections.
WIDE = np.concatenate(
    [
        _rng.uniform(-30, 30, 400),
        _rng.uniform(0, 3, 400),
        10 ** _rng.uniform(-300, 300, 100),
        [0.5, 1.0, 2.0, 1.4616321449683622, 9.999999, 10.0, 10.0000001, 1e5, 171.5, -0.5, -2.5],
    ]
)
UNIT = np.concatenate(
    [
        _rng.uniform(-1, 1, 400),
        1 - 10 ** _rng.uniform(-16, 0, 100),  # up to the float next to 1
        -1 + 10 ** _rng.uniform(-16, 0, 100),
        10 ** _rng.uniform(-300, 0, 50),
        [0.0, 0.5, -0.5, 1 - 2**-53],
    ]
)


def f64(values, **kwargs):
    return minigrad.tensor(np.asarray(values, dtype=np.float64), **kwargs)


def close(got, expected, **tolerance) -> None:
    got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    np.testing.assert_allclose(got, expected, equal_nan=True, **(tolerance or TIGHT))


# --------------------------------------------------------------------------- closed forms


def test_lgamma_is_log_factorial_and_matches_math():
    integers = np.arange(1.0, 30.0)
    close(minigrad.lgamma(f64(integers)), [math.lgamma(n) for n in integers])
    halves = [0.5 * math.log(math.pi), math.log(math.sqrt(math.pi) / 2)]  # Γ(½) = √π
    close(minigrad.lgamma(f64([0.5, 1.5])), halves)
    sample = WIDE[np.abs(WIDE) < 1e300]
    sample = sample[(sample > 0) | (sample != np.round(sample))]
    expected = [math.lgamma(value) for value in sample]
    close(minigrad.lgamma(f64(sample)), expected, rtol=1e-13, atol=1e-13)


def test_lgamma_poles_and_infinities():
    values = f64([0.0, -0.0, -1.0, -7.0, math.inf, -math.inf, math.nan])
    close(minigrad.lgamma(values), [math.inf] * 6 + [math.nan])


def test_digamma_closed_forms_and_identities():
    close(minigrad.digamma(f64([1.0, 0.5])), [-EULER, -EULER - 2 * math.log(2)])
    x = f64(_rng.uniform(0.05, 40, 200))
    # ψ(x + 1) = ψ(x) + 1/x, and the reflection ψ(1 - x) - ψ(x) = π cot(πx).
    close(minigrad.digamma(x + 1), (minigrad.digamma(x) + 1 / x).numpy(), rtol=1e-12, atol=1e-11)
    y = f64(_rng.uniform(-20, 0, 200))
    expected = minigrad.digamma(1 - y).numpy() - math.pi / np.tan(math.pi * y.numpy())
    close(minigrad.digamma(y), expected, rtol=1e-9, atol=1e-9)
    # PyTorch's values at the poles: -inf at +0, inf at -0, nan at the negative integers.
    close(minigrad.digamma(f64([0.0, -0.0, -3.0, math.inf, -math.inf])),
          [-math.inf, math.inf, math.nan, math.inf, math.nan])


def test_polygamma_closed_forms_and_identities():
    zeta3 = 1.2020569031595942
    close(minigrad.polygamma(1, f64([1.0, 0.5])), [math.pi**2 / 6, math.pi**2 / 2])
    close(minigrad.polygamma(2, f64([1.0])), [-2 * zeta3])
    x = f64(_rng.uniform(0.05, 40, 200))
    for n in (1, 2, 3, 6):
        step = (-1) ** n * math.factorial(n) / x.numpy() ** (n + 1)
        close(minigrad.polygamma(n, x + 1), minigrad.polygamma(n, x).numpy() + step, rtol=1e-11)
    # ψ'(1 - x) + ψ'(x) = π² / sin²(πx)
    y = f64(_rng.uniform(-20, 0, 200))
    expected = math.pi**2 / np.sin(math.pi * y.numpy()) ** 2 - minigrad.polygamma(1, 1 - y).numpy()
    close(minigrad.polygamma(1, y), expected, rtol=1e-8)
    close(minigrad.polygamma(0, x), minigrad.digamma(x).numpy())
    close(x.polygamma(1), minigrad.polygamma(1, x).numpy())


def test_erfinv_inverts_erf_with_its_edges():
    x = f64(UNIT)
    close(minigrad.erf(minigrad.erfinv(x)), UNIT, rtol=1e-15, atol=2e-16)
    close(minigrad.erfinv(f64([0.0, 1.0, -1.0, 1.5, -2.0, math.nan])),
          [0.0, math.inf, -math.inf, math.nan, math.nan, math.nan])
    tiny = 1e-300
    close(minigrad.erfinv(f64([tiny])), [tiny * math.sqrt(math.pi) / 2])
    # Near 1 the answer is set by 1 - x alone: erfc(erfinv(1 - d)) = d.
    d = 10 ** _rng.uniform(-16, -1, 50)
    y = minigrad.erfinv(f64(1 - d)).numpy()
    close([math.erfc(value) for value in y], 1 - (1 - d), rtol=1e-12)


# --------------------------------------------------------------------------- PyTorch


def test_values_match_pytorch(real_torch):
    torch = real_torch
    wide = torch.tensor(WIDE, dtype=torch.float64)
    close(minigrad.lgamma(f64(WIDE)), torch.lgamma(wide).numpy(), rtol=1e-10, atol=1e-10)
    close(minigrad.digamma(f64(WIDE)), torch.digamma(wide).numpy(), rtol=1e-10, atol=1e-10)
    close(minigrad.erfinv(f64(UNIT)), torch.erfinv(torch.tensor(UNIT)).numpy(), rtol=1e-10)
    positive = WIDE[(WIDE > 0) & (WIDE < 1e5)]
    negative = _rng.uniform(-20, 0, 200)
    for n in (1, 2, 3, 5):
        for points in (positive, negative):
            expected = torch.polygamma(n, torch.tensor(points)).numpy()
            # PyTorch's own trigamma stops its series early (about 5e-10 relative); the
            # identities above hold minigrad's to 1e-12.
            rtol = 1e-9 if n == 1 else 1e-10
            close(minigrad.polygamma(n, f64(points)), expected, rtol=rtol, atol=1e-12)


def test_xlogy_matches_pytorch_values_and_gradients(real_torch):
    torch = real_torch
    x_values = [0.0, 1.0, 2.0, 0.5, 0.0, -1.5]
    y_values = [0.0, 0.0, 3.0, 0.2, math.nan, 4.0]
    mine_x, mine_y = f64(x_values, requires_grad=True), f64(y_values, requires_grad=True)
    theirs_x = torch.tensor(x_values, dtype=torch.float64, requires_grad=True)
    theirs_y = torch.tensor(y_values, dtype=torch.float64, requires_grad=True)
    mine, theirs = minigrad.xlogy(mine_x, mine_y), torch.xlogy(theirs_x, theirs_y)
    close(mine, theirs.detach().numpy())
    mine.sum().backward()
    theirs.sum().backward()
    close(mine_x.grad, theirs_x.grad.numpy())
    close(mine_y.grad, theirs_y.grad.numpy())


def test_gradients_match_pytorch(real_torch):
    torch = real_torch
    points = [0.3, 1.7, 4.2, 12.5, -0.7, -2.3]
    for name in ("lgamma", "digamma"):
        mine = f64(points, requires_grad=True)
        theirs = torch.tensor(points, dtype=torch.float64, requires_grad=True)
        getattr(minigrad, name)(mine).sum().backward()
        getattr(torch, name)(theirs).sum().backward()
        close(mine.grad, theirs.grad.numpy(), rtol=1e-9)
    unit = [-0.9, -0.3, 0.0, 0.4, 0.99]
    mine = f64(unit, requires_grad=True)
    theirs = torch.tensor(unit, dtype=torch.float64, requires_grad=True)
    minigrad.erfinv(mine).sum().backward()
    torch.erfinv(theirs).sum().backward()
    close(mine.grad, theirs.grad.numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- gradients


def test_gradcheck_and_gradgradcheck():
    x = f64([0.3, 1.7, 4.2, 12.5, -0.7, -2.3], requires_grad=True)
    for function in (
        minigrad.lgamma,
        minigrad.digamma,
        lambda v: minigrad.polygamma(1, v),
        lambda v: v.polygamma(3),
    ):
        assert gradcheck(function, (x,))
        assert gradgradcheck(function, (x,))
    u = f64([-0.9, -0.3, 0.0, 0.4, 0.99], requires_grad=True)
    assert gradcheck(minigrad.erfinv, (u,))
    assert gradgradcheck(minigrad.erfinv, (u,))
    a = f64([[0.3, 1.2, 2.0]], requires_grad=True)
    b = f64([[0.5], [3.0]], requires_grad=True)  # broadcast to (2, 3)
    assert gradcheck(minigrad.xlogy, (a, b))
    assert gradgradcheck(minigrad.xlogy, (a, b))


def test_xlogy_zero_times_log_zero_is_zero():
    x = f64([0.0, 0.0, 2.0], requires_grad=True)
    y = f64([0.0, 5.0, 0.0])
    result = minigrad.xlogy(x, y)
    close(result, [0.0, 0.0, -math.inf])
    result.sum().backward()
    # PyTorch (2.14): d/dx = log y at x = 0 too, and 0 only where log y does not exist.
    close(x.grad[:2], [0.0, math.log(5.0)])
    close(minigrad.xlogy(2.0, f64([1.0, math.e])), [0.0, 2.0])
    close(f64([1.0, 3.0]).xlogy(math.e), [1.0, 3.0])


# --------------------------------------------------------------------------- dtypes, errors


def test_dtypes_and_spellings():
    single = minigrad.tensor([1.5, 2.5], dtype=minigrad.float32)
    for name in ("lgamma", "digamma", "erfinv"):
        assert getattr(minigrad, name)(single * 0.3).dtype == minigrad.float32
        assert getattr(single, name)().dtype == minigrad.float32
    assert minigrad.polygamma(1, single).dtype == minigrad.float32
    assert minigrad.lgamma(minigrad.tensor([1, 2, 3])).dtype == minigrad.float64
    close(minigrad.lgamma(minigrad.tensor([1, 2, 3])), [0.0, 0.0, math.log(2)])
    in_place = f64([3.0, 4.0])
    in_place.lgamma_()
    close(in_place, [math.log(2), math.log(6)])
    in_place = f64([1.0, 2.0])
    in_place.polygamma_(1)
    close(in_place, [math.pi**2 / 6, math.pi**2 / 6 - 1])
    assert minigrad.polygamma(minigrad.tensor(1), f64([1.0])).item() == pytest.approx(
        math.pi**2 / 6, rel=1e-14
    )
    assert minigrad.ops.Erfinv is minigrad.ops.special.Erfinv


def test_polygamma_refuses_a_bad_order():
    x = f64([1.0])
    with pytest.raises(RuntimeError, match="does not support negative n"):
        minigrad.polygamma(-1, x)
    with pytest.raises(TypeError, match="'n'"):
        minigrad.polygamma(1.5, x)
    with pytest.raises(TypeError, match="'n'"):
        x.polygamma(True)


def test_text_and_bad_shapes_are_refused():
    with pytest.raises(TypeError, match="text Variable"):
        minigrad.lgamma(minigrad.Variable("words"))
    with pytest.raises(Exception, match="cannot be broadcast"):
        minigrad.xlogy(f64([1.0, 2.0]), f64([1.0, 2.0, 3.0]))


# --------------------------------------------------------------------------- properties


@PROPERTY
@given(st.floats(min_value=1e-3, max_value=1e3))
def test_lgamma_recurrence_property(x):
    value = f64([x, x + 1])
    low, high = minigrad.lgamma(value).tolist()
    assert high - low == pytest.approx(math.log(x), rel=1e-11, abs=1e-11)


@PROPERTY
@given(st.floats(min_value=-0.999999, max_value=0.999999))
def test_erfinv_round_trip_property(p):
    y = minigrad.erfinv(f64([p])).item()
    assert math.erf(y) == pytest.approx(p, rel=1e-14, abs=1e-16)

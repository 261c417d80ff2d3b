"""Checks of lesson 00: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson00


def test_0_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    x = minigrad.Variable(2.0, requires_grad=True)
    (x**3 - x).backward()
    lesson00.check_0_1(x.grad.item())
    assert "Exercise 0.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (6.0, "that is f\\(2\\) itself"),
        (12.0, "derivative of -x adds -1"),
        (22.0, "backward\\(\\) twice"),
        (minigrad.Variable(11.0), "float with .item\\(\\)"),
        ("11", "should be a float; got str"),
        (10.0, "slope is 10, expected 11\\."),
    ],
)
def test_0_1_mistakes_get_a_hint(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_1(answer)


def test_0_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    a = minigrad.Variable(2.0, requires_grad=True)
    b = minigrad.Variable(3.0, requires_grad=True)
    (a * b + b**2).backward()
    lesson00.check_0_2(a.grad.item(), b.grad.item())
    lesson00.check_0_2(a.grad, b.grad)  # Variables are accepted too
    assert capsys.readouterr().out.count("Exercise 0.2: correct.") == 2


@pytest.mark.parametrize(
    ("grad_a", "grad_b", "hint"),
    [
        (8.0, 3.0, "swapped"),
        (2.0, 8.0, "with respect to a is b"),
        (3.0, 2.0, "the b\\*\\*2 term adds 2b"),
        (3.0, 6.0, "a \\* b adds a"),
        (3.0, 16.0, "twice the answer"),
        (None, 8.0, "grad_a is None"),
        (3.0, np.array([8.0, 8.0]), "grad_b has shape \\(2,\\), expected \\(\\)"),
    ],
)
def test_0_2_mistakes_get_a_hint(grad_a: object, grad_b: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_2(grad_a, grad_b)

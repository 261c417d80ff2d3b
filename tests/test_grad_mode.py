"""Grad modes: no_grad, enable_grad, set_grad_enabled; contexts, decorators, threads."""

import threading

import numpy as np
import pytest

import minigrad
from minigrad import Variable, enable_grad, is_grad_enabled, no_grad, set_grad_enabled


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    assert is_grad_enabled()
    yield
    enabled = is_grad_enabled()
    set_grad_enabled(True)  # never leak a disabled mode into other tests
    assert enabled, "a test left grad mode disabled"


def _records():
    """Whether an operation on a Variable that requires grad records a graph right now."""
    out = Variable([1.0], requires_grad=True) * 2
    return out.requires_grad and out.grad_fn is not None


def test_default_is_enabled():
    assert is_grad_enabled() is True
    assert _records()


def test_no_grad_context():
    x = Variable([1.0, 2.0], requires_grad=True)
    with no_grad():
        assert is_grad_enabled() is False
        y = x * x
        z = x + 1.0
    assert not y.requires_grad and y.grad_fn is None
    assert not z.requires_grad
    np.testing.assert_array_equal(y.data, [1.0, 4.0])
    assert is_grad_enabled()
    assert (x * x).requires_grad


def test_no_grad_restores_after_an_exception():
    with pytest.raises(ValueError):
        with no_grad():
            raise ValueError("boom")
    assert is_grad_enabled()


def test_enable_grad_inside_no_grad():
    with no_grad():
        with enable_grad():
            assert is_grad_enabled()
            assert _records()
        assert not is_grad_enabled()
        assert not _records()
    assert is_grad_enabled()


def test_nesting_restores_each_level():
    with no_grad():
        with no_grad():
            assert not is_grad_enabled()
        assert not is_grad_enabled()
        with set_grad_enabled(True):
            assert is_grad_enabled()
            with set_grad_enabled(False):
                assert not is_grad_enabled()
            assert is_grad_enabled()
        assert not is_grad_enabled()
    assert is_grad_enabled()


@pytest.mark.parametrize("mode", [True, False])
def test_set_grad_enabled_context(mode):
    with set_grad_enabled(mode):
        assert is_grad_enabled() is mode
        assert _records() is mode
    assert is_grad_enabled()


def test_set_grad_enabled_context_inside_no_grad_restores_no_grad():
    with no_grad():
        with set_grad_enabled(True):
            assert is_grad_enabled()
        assert not is_grad_enabled()


def test_set_grad_enabled_as_a_plain_call_takes_effect_at_once():
    try:
        set_grad_enabled(False)
        assert is_grad_enabled() is False
        assert not _records()
    finally:
        set_grad_enabled(True)
    assert is_grad_enabled() is True
    assert _records()


def test_set_grad_enabled_rejects_non_bools():
    with pytest.raises(TypeError):
        set_grad_enabled(0)
    assert is_grad_enabled()


def test_no_grad_decorator_with_parentheses():
    @no_grad()
    def doubled(x):
        assert not is_grad_enabled()
        return x + x

    x = Variable([1.0], requires_grad=True)
    assert not doubled(x).requires_grad
    assert is_grad_enabled()


def test_no_grad_decorator_without_parentheses():
    @no_grad
    def tripled(x):
        """Docstring survives."""
        return x + x + x

    x = Variable([1.0], requires_grad=True)
    out = tripled(x)
    assert not out.requires_grad
    np.testing.assert_array_equal(out.data, [3.0])
    assert tripled.__name__ == "tripled"
    assert tripled.__doc__ == "Docstring survives."
    assert is_grad_enabled()


def test_enable_grad_decorator_with_and_without_parentheses():
    @enable_grad
    def plain():
        return is_grad_enabled()

    @enable_grad()
    def called():
        return is_grad_enabled()

    with no_grad():
        assert plain() is True
        assert called() is True
        assert not is_grad_enabled()


@pytest.mark.parametrize("mode", [True, False])
def test_set_grad_enabled_decorator(mode):
    @set_grad_enabled(mode)
    def probe():
        return is_grad_enabled()

    # decorating must not switch the mode of the code around it
    assert is_grad_enabled()
    assert probe() is mode
    assert is_grad_enabled()
    with no_grad():
        assert probe() is mode
        assert not is_grad_enabled()


def test_decorator_restores_after_an_exception():
    @no_grad
    def fails():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert is_grad_enabled()


def test_decorated_function_is_reentrant():
    depth = []

    @no_grad()
    def recurse(n):
        depth.append(is_grad_enabled())
        if n:
            with enable_grad():
                recurse(n - 1)
        return is_grad_enabled()

    assert recurse(3) is False
    assert depth == [False] * 4
    assert is_grad_enabled()


def test_no_grad_does_not_affect_factories_and_parameter():
    with no_grad():
        p = minigrad.Parameter([1.0, 2.0])
        z = minigrad.zeros(2, requires_grad=True)
        v = Variable([1.0], requires_grad=True)
    assert p.requires_grad and z.requires_grad and v.requires_grad


def test_modes_are_exported_from_all_module_paths():
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"):
        assert getattr(minigrad, name) is getattr(minigrad.autodiff, name)
        assert getattr(minigrad, name) is getattr(minigrad.autograd, name)


def test_backward_inside_no_grad_still_computes_gradients():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with no_grad():
        y.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0])
    assert is_grad_enabled()


def test_backward_leaves_the_mode_as_it_was():
    x = Variable([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    assert is_grad_enabled()
    y = (x * x).sum()
    with no_grad():
        y.backward(create_graph=True)
        assert not is_grad_enabled()


# --------------------------------------------------------------------------- threads


THREADS = 8
ROUNDS = 25


def test_modes_are_thread_local():
    barrier = threading.Barrier(THREADS + 1, timeout=30)
    errors = []
    started_enabled = []

    def worker(index):
        try:
            started_enabled.append(is_grad_enabled())
            x = Variable([1.0], requires_grad=True)
            for round_number in range(ROUNDS):
                wanted = (index + round_number) % 2 == 0
                barrier.wait()  # everybody switches at the same time
                if round_number % 3 == 0:
                    context = set_grad_enabled(wanted)
                elif wanted:
                    context = enable_grad()
                else:
                    context = no_grad()
                with context:
                    barrier.wait()  # all threads are inside their (different) modes now
                    if is_grad_enabled() is not wanted:
                        errors.append((index, round_number, "mode"))
                    if (x * 2).requires_grad is not wanted:
                        errors.append((index, round_number, "recording"))
                    barrier.wait()  # nobody leaves before everybody checked
                if not is_grad_enabled():
                    errors.append((index, round_number, "restore"))
        except threading.BrokenBarrierError:
            errors.append((index, "broken barrier"))

    with no_grad():  # the main thread's own mode must not leak into the workers
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        try:
            for _ in range(ROUNDS):
                for _ in range(3):
                    barrier.wait()
                    assert not is_grad_enabled()
        finally:
            for thread in threads:
                thread.join(timeout=60)
        assert not is_grad_enabled()
    assert is_grad_enabled()
    assert errors == []
    assert started_enabled == [True] * THREADS


def test_plain_set_grad_enabled_in_a_thread_does_not_leak():
    seen = {}

    def worker():
        set_grad_enabled(False)
        seen["worker"] = is_grad_enabled()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["worker"] is False
    assert is_grad_enabled()
    assert _records()


def test_decorated_function_used_by_many_threads():
    barrier = threading.Barrier(THREADS, timeout=30)
    results = []

    @no_grad
    def inside():
        barrier.wait()
        value = is_grad_enabled()
        barrier.wait()
        return value

    def worker(index):
        if index % 2:
            results.append(("decorated", inside()))
        else:
            barrier.wait()
            results.append(("plain", is_grad_enabled()))
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == sorted(
        [("decorated", False)] * (THREADS // 2) + [("plain", True)] * (THREADS // 2)
    )
    assert is_grad_enabled()

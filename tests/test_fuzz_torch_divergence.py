"""The seeded fuzz against PyTorch (tests/fuzz_torch.py): 2,000 random calls of the
functions and Variable methods both libraries have, run on each; none may leak an internal
error or diverge silently (issue 35, item 6). benchmarks/fuzz_torch.py runs more calls with
a new seed each time.

Expected to fail until the findings are fixed (xfail, not strict). What seed 35 found
(10,000 calls; run `python benchmarks/fuzz_torch.py --seed 35` for the repros):

- leak: unbind() of a 0-d Variable raises IndexError "tuple index out of range";
- accepts what torch refuses: mean/argmax/argmin of int or bool Variables, new_full / full /
  broadcast_to with an int size, permute() / reshape() / sum_to_size() with no sizes,
  sum/max/sort with a keyword torch rejects (keepdim without dim, descending=1.5),
  x.add(int, alpha=float) on ints, lists or tuples where torch wants a Tensor;
- class divergences: in-place ops whose float result cannot be cast to int (TypeError,
  torch RuntimeError), bitwise ops on floats and neg of bool (torch NotImplementedError),
  item() of an empty Variable (ValueError, torch RuntimeError), negative sizes in
  factories (ValueError, torch RuntimeError), the varargs spellings torch's functions
  lack (minigrad.reshape(x, 3, 1), flip(x, 0, 1): torch TypeError), argument checks done
  in another order than torch's;
- dtype: int64 with float32 gives float64 (torch float32) in add, sub, div, pow,
  maximum, clamp, where; prod(dtype=bool);
- shape: all()/any() with dim=() reduce everything (torch reduces nothing), topk of a 0-d;
- missing: squeeze/flip/roll with dims=(), roll with a dim past an empty tensor, argmin
  on an empty dim-0 reduction, bernoulli/normal_ on int or bool, a 0-d int Variable as a
  size (eye, logspace), True as a size.
"""

from __future__ import annotations

import fuzz_torch
import numpy as np
import pytest

SEED = 35
CALLS = 2000


def test_comparison_rules_without_torch() -> None:
    """The judge itself: dtype kinds, the exact float dtype from float inputs, leaks."""
    ints, floats = np.arange(3), np.arange(3.0)
    assert fuzz_torch._compare(ints, ints.copy(), False, False) is None
    assert fuzz_torch._compare(floats, floats.astype(np.float32), False, False) is None
    assert fuzz_torch._compare(floats, floats.astype(np.float32), True, False)[0] == "dtype"
    assert fuzz_torch._compare(floats, ints, False, False)[0] == "dtype"
    assert fuzz_torch._compare(floats[:2], floats, False, False)[0] == "shape"
    assert fuzz_torch._compare(floats + 1, floats, False, False)[0] == "value"
    assert fuzz_torch._compare(1.0, floats, False, False)[0] == "type"
    try:
        {}["missing"]
    except KeyError as error:
        assert fuzz_torch.is_leak(error)


def test_arguments_cover_every_kind() -> None:
    """The generator makes 0-d to 3-d tensors of the four dtypes, empty ones included."""
    rng = np.random.default_rng(SEED)
    arrays = [fuzz_torch.random_array(rng) for _ in range(400)]
    assert {array.ndim for array in arrays} == {0, 1, 2, 3}
    assert {array.dtype.name for array in arrays} == {"bool", "int64", "float32", "float64"}
    assert any(array.size == 0 for array in arrays)


@pytest.mark.xfail(strict=False, reason="findings listed in the module docstring (issue 35)")
def test_no_leak_and_no_silent_divergence(real_torch) -> None:
    results = fuzz_torch.fuzz(real_torch, SEED, CALLS)
    tally = fuzz_torch.counts(results)
    assert tally["agree: both return"] > CALLS // 4  # the calls reach the ops
    findings = sum(tally[category] for category in fuzz_torch.FINDINGS)
    assert findings == 0, fuzz_torch.report(results)

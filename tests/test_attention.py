"""Attention: F.scaled_dot_product_attention, nn.MultiheadAttention,
nn.TransformerEncoderLayer and nn.TransformerEncoder.

Against PyTorch (skipped where it is not installed): the same values and gradients, in
float64 to 1e-10, for SDPA over shapes drawn by hypothesis (batch dims that broadcast,
bool and float masks, is_causal, scale) and for the modules on copied weights with every
option they take. Without PyTorch: gradcheck and gradgradcheck of the hand-derived backward,
the errors for bad input, and a GPT training step under minigrad.compile equal to eager.
"""

from __future__ import annotations

import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.nn import functional as F
from minigrad.nn._functions.attention import Attention

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import gpt  # noqa: E402 - benchmarks/gpt.py, the GPT step the benchmark times

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOLERANCE = {"rtol": 1e-10, "atol": 1e-10}


def _close(mine, theirs, what: str = "") -> None:
    np.testing.assert_allclose(
        np.asarray(mine.detach().numpy()), theirs.detach().numpy(), **TOLERANCE, err_msg=what
    )


def _pair(torch, array: np.ndarray, requires_grad: bool = True):
    """The same values as a minigrad Variable and a torch tensor."""
    return (
        mg.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


# =========================================================================== SDPA vs torch


@st.composite
def attention_case(draw):
    """Shapes and options for one SDPA call: batch dims (0 to 2) that query, key and value
    share or broadcast (a 1 or a missing dim), a mask of a shape broadcasting to the
    weights', is_causal, scale."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    L, S = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    E, Ev = draw(st.integers(1, 6)), draw(st.integers(1, 6))

    def batch_of():
        dims = [1 if draw(st.booleans()) and draw(st.booleans()) else b for b in batch]
        return dims[draw(st.integers(0, len(dims))) :] if draw(st.booleans()) else dims

    shapes = {"q": (*batch, L, E), "k": (*batch_of(), S, E), "v": (*batch_of(), S, Ev)}
    arrays = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    mask_kind = draw(st.sampled_from(["none", "bool", "float", "causal"]))
    mask = None
    if mask_kind in ("bool", "float"):
        dims = [1 if draw(st.booleans()) else b for b in batch]
        shape = (*dims[draw(st.integers(0, len(dims))) :], L, S)
        if draw(st.booleans()):
            # One row for every query. A 1-d mask broadcasts too, but PyTorch 2.14's
            # fused CPU kernel for 4-d inputs refuses it (IndexError; its math path takes it).
            shape = (S,) if len(batch) < 2 and draw(st.booleans()) else (1, S)
        if mask_kind == "bool":
            mask = rng.random(shape) < 0.7  # some rows may have no key left: zeros
        else:
            mask = rng.standard_normal(shape)
            mask[rng.random(shape) < 0.15] = -np.inf
    scale = draw(st.one_of(st.none(), st.floats(0.1, 2.0)))
    return arrays, mask, mask_kind == "causal", scale


@PROPERTY
@given(case=attention_case())
def test_sdpa_equals_pytorch_forward_and_gradients(real_torch, case) -> None:
    arrays, mask, causal, scale = case
    q, tq = _pair(real_torch, arrays["q"])
    k, tk = _pair(real_torch, arrays["k"])
    v, tv = _pair(real_torch, arrays["v"])
    m = tm = None
    if mask is not None:
        m, tm = _pair(real_torch, mask, requires_grad=mask.dtype != np.bool_)
    mine = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=scale)
    theirs = real_torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=tm, is_causal=causal, scale=scale
    )
    _close(mine, theirs, "output")
    seed = np.random.default_rng(0).standard_normal(tuple(theirs.shape))
    (mine * mg.tensor(seed)).sum().backward()
    (theirs * real_torch.tensor(seed)).sum().backward()
    for name, a, b in (("q", q, tq), ("k", k, tk), ("v", v, tv), ("mask", m, tm)):
        if a is not None and a.requires_grad:
            _close(a.grad, b.grad, f"gradient of {name}")


def test_sdpa_float32_gqa_and_a_query_with_no_key(real_torch) -> None:
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 6, 4, 8)).astype(np.float32)
    k, v = (rng.standard_normal((2, 3, 5, 8)).astype(np.float32) for _ in range(2))
    mine = F.scaled_dot_product_attention(*map(mg.tensor, (q, k, v)), enable_gqa=True)
    theirs = real_torch.nn.functional.scaled_dot_product_attention(
        *map(real_torch.tensor, (q, k, v)), enable_gqa=True
    )
    assert mine.dtype == np.float32
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False  # query 1 may attend to nothing: PyTorch gives zeros, not NaN
    out = F.scaled_dot_product_attention(*map(mg.tensor, (q[:, :3], k, v)), mg.tensor(mask))
    np.testing.assert_array_equal(out.numpy()[:, :, 1], 0.0)


def test_sdpa_empty_sequences_and_zero_width_heads(real_torch) -> None:
    rng = np.random.default_rng(4)
    cases = [((2, 0, 3), (2, 4, 3), (2, 4, 5)), ((2, 3, 0), (2, 4, 0), (2, 4, 5)),
             ((2, 3, 2), (2, 0, 2), (2, 0, 5))]
    for shapes in cases:
        arrays = [rng.standard_normal(shape) for shape in shapes]
        mine = F.scaled_dot_product_attention(*map(mg.tensor, arrays))
        theirs = real_torch.nn.functional.scaled_dot_product_attention(
            *map(real_torch.tensor, arrays)
        )
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


# =========================================================================== gradcheck


def _inputs(*shapes: tuple, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [mg.tensor(rng.standard_normal(shape), requires_grad=True) for shape in shapes]


@pytest.mark.parametrize(
    "options",
    [{}, {"is_causal": True}, {"scale": 0.7}, {"bool_mask": True}, {"float_mask": True}],
    ids=["plain", "causal", "scale", "bool-mask", "float-mask"],
)
def test_sdpa_gradcheck_and_gradgradcheck(options) -> None:
    q, k, v, bias = _inputs((2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5))
    keep = mg.tensor(np.random.default_rng(1).random((3, 5)) < 0.6)
    keep.data[:, 0] = True

    def attend(q, k, v, bias):
        mask = keep if options.get("bool_mask") else bias if options.get("float_mask") else None
        kwargs = {key: value for key, value in options.items() if "mask" not in key}
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kwargs)

    assert gradcheck(attend, (q, k, v, bias))
    assert gradgradcheck(attend, (q, k, v, bias))


def test_sdpa_with_dropout_gradchecks_for_a_fixed_mask() -> None:
    q, k, v = _inputs((2, 3, 4), (2, 5, 4), (2, 5, 3), seed=2)

    def attend(q, k, v):
        mg.manual_seed(7)  # the same dropout mask at every call
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)

    assert gradcheck(attend, (q, k, v))
    assert gradgradcheck(attend, (q, k, v))
    mg.manual_seed(7)
    with mg.no_grad():
        first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
        second = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
        everything = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not np.allclose(first.numpy(), second.numpy())  # a new mask each call
    np.testing.assert_array_equal(everything.numpy(), 0.0)


def test_the_weights_output_gradchecks_through_both_outputs() -> None:
    # MultiheadAttention returns the weights P as well: P's gradient goes into the same
    # backward (the second output), and a second derivative comes back through it.
    q, k, v, bias = _inputs((3, 4, 2), (3, 5, 2), (3, 5, 3), (4, 5), seed=5)

    def both(q, k, v, bias):
        out, weights = Attention.apply(q, k, v, bias, None, 0.8, False, False)
        return out.sum(-1) + (weights * weights).sum(-1)

    assert gradcheck(both, (q, k, v, bias))
    assert gradgradcheck(both, (q, k, v, bias))


def test_mha_gradgradchecks_with_weights() -> None:
    mg.manual_seed(0)
    layer = nn.MultiheadAttention(4, 2, batch_first=True)
    x, = _inputs((2, 3, 4), seed=6)

    def run(x):
        out, weights = layer(x, x, x)
        return out.sum() + (weights**2).sum()

    assert gradcheck(run, (x,))
    assert gradgradcheck(run, (x,))


# =========================================================================== modules vs torch


def _copy_weights(torch, theirs, mine) -> None:
    """PyTorch's weights into the minigrad module, by state_dict, strict."""
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def _compare_gradients(torch, mine_module, their_module, pairs) -> None:
    mine_names = [name for name, _ in mine_module.named_parameters()]
    their_names = [name for name, _ in their_module.named_parameters()]
    assert mine_names == their_names
    for (name, p), (_, tp) in zip(mine_module.named_parameters(), their_module.named_parameters()):
        _close(p.grad, tp.grad, f"gradient of {name}")
    for name, a, b in pairs:
        _close(a.grad, b.grad, f"gradient of {name}")


MHA_OPTIONS = [
    {},
    {"batch_first": True},
    {"kdim": 5, "vdim": 3},
    {"bias": False},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"dropout": 0.3},  # compared in eval mode
]
MASKS = ["none", "padding", "float", "bool-3d", "both"]


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", MASKS)
@pytest.mark.parametrize("options", MHA_OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_multihead_attention_equals_pytorch(real_torch, options, masks, need_weights) -> None:
    torch = real_torch
    E, H, L, S, N = 8, 2, 4, 5, 3
    rng = np.random.default_rng(len(masks) + 7 * need_weights)
    theirs = torch.nn.MultiheadAttention(E, H, **options).double()
    mine = nn.MultiheadAttention(E, H, **options)
    _copy_weights(torch, theirs, mine)
    if options.get("dropout"):
        theirs.eval(), mine.eval()
    first = options.get("batch_first", False)
    kdim, vdim = options.get("kdim", E), options.get("vdim", E)
    shapes = [(L, E), (S, kdim), (S, vdim)]
    arrays = [rng.standard_normal((N, *s) if first else (s[0], N, s[1])) for s in shapes]
    kwargs = {}
    if masks in ("padding", "both"):
        padding = rng.random((N, S)) < 0.3
        padding[:, 0] = False
        kwargs["key_padding_mask"] = padding
    if masks == "float":
        kwargs["attn_mask"] = rng.standard_normal((L, S))
    if masks in ("bool-3d", "both"):
        blocked = rng.random((N * H, L, S)) < 0.3
        blocked[..., 0] = False
        kwargs["attn_mask"] = blocked
    (q, tq), (k, tk), (v, tv) = (_pair(torch, a) for a in arrays)
    mine_out, mine_w = mine(q, k, v, need_weights=need_weights,
                            **{n: mg.tensor(a) for n, a in kwargs.items()})
    their_out, their_w = theirs(tq, tk, tv, need_weights=need_weights,
                                **{n: torch.tensor(a) for n, a in kwargs.items()})
    _close(mine_out, their_out, "output")
    assert (mine_w is None) == (their_w is None)
    loss, their_loss = (mine_out**2).sum(), (their_out**2).sum()
    if need_weights:
        _close(mine_w, their_w, "weights")
        loss, their_loss = loss + (mine_w**2).sum(), their_loss + (their_w**2).sum()
    loss.backward()
    their_loss.backward()
    _compare_gradients(torch, mine, theirs, [("query", q, tq), ("key", k, tk), ("value", v, tv)])


def test_multihead_self_attention_cross_attention_unbatched_and_per_head(real_torch) -> None:
    torch = real_torch
    rng = np.random.default_rng(11)
    theirs = torch.nn.MultiheadAttention(8, 4, batch_first=True).double()
    mine = nn.MultiheadAttention(8, 4, batch_first=True)
    _copy_weights(torch, theirs, mine)
    x, memory = rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 3, 8))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    (mx, tx), (mm, tm) = _pair(torch, x), _pair(torch, memory)
    cases = [
        (lambda m, a, b, c: m(a, a, a, attn_mask=c, is_causal=True, need_weights=False)),
        (lambda m, a, b, c: m(a, a, a, average_attn_weights=False)),
        (lambda m, a, b, c: m(a, b, b)),  # cross-attention: key is value
        (lambda m, a, b, c: m(a[0], a[0], a[0])),  # unbatched (L, E)
    ]
    for run in cases:
        mine_out = run(mine, mx, mm, mg.tensor(causal.numpy()))
        their_out = run(theirs, tx, tm, causal)
        for a, b in zip(mine_out, their_out):
            assert (a is None) == (b is None)
            if a is not None:
                _close(a, b)
        mine_out[0].sum().backward()
        their_out[0].sum().backward()
    _compare_gradients(torch, mine, theirs, [("x", mx, tx), ("memory", mm, tm)])


def test_multihead_attention_parameters_and_initialisation(real_torch) -> None:
    for options in ({}, {"kdim": 5, "vdim": 3}, {"bias": False}, {"add_bias_kv": True}):
        mine = nn.MultiheadAttention(16, 4, **options)
        theirs = real_torch.nn.MultiheadAttention(16, 4, **options)
        assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()
        ]
        assert list(mine.state_dict()) == list(theirs.state_dict())
    mg.manual_seed(0)
    layer = nn.MultiheadAttention(64, 4)
    bound = math.sqrt(6 / (64 + 3 * 64))  # Xavier-uniform over the (3E, E) in_proj_weight
    weight = layer.in_proj_weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert not layer.in_proj_bias.detach().numpy().any()
    assert not layer.out_proj.bias.detach().numpy().any()


ENCODER_OPTIONS = {
    "default": {},
    "batch_first": {"batch_first": True},
    "norm_first": {"norm_first": True},
    "gelu": {"activation": "gelu"},
    "gelu-tanh-module": {"activation": "gelu-tanh-module"},
    "no-bias": {"bias": False},
    "dropout-eval": {"dropout": 0.2},  # compared in eval mode
}


# PyTorch warns that a float mask beside a bool padding mask is deprecated (minigrad does not).
@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize("masks", ["none", "padding", "causal", "causal-hint", "both"])
@pytest.mark.parametrize("options", ENCODER_OPTIONS.values(), ids=ENCODER_OPTIONS.keys())
def test_transformer_encoder_equals_pytorch(real_torch, options, masks) -> None:
    torch = real_torch
    d, heads, ff, S, N = 8, 2, 16, 5, 3
    mine_kwargs, their_kwargs = dict(options), dict(options)
    mine_kwargs.setdefault("dropout", 0.0), their_kwargs.setdefault("dropout", 0.0)
    if options.get("activation") == "gelu-tanh-module":
        mine_kwargs["activation"] = nn.GELU(approximate="tanh")
        their_kwargs["activation"] = torch.nn.GELU(approximate="tanh")
    their_layer = torch.nn.TransformerEncoderLayer(d, heads, ff, **their_kwargs).double()
    mine_layer = nn.TransformerEncoderLayer(d, heads, ff, **mine_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note about nested tensors and norm_first
        theirs = torch.nn.TransformerEncoder(
            their_layer, 2, norm=torch.nn.LayerNorm(d).double(), enable_nested_tensor=False
        )
    mine = nn.TransformerEncoder(mine_layer, 2, norm=nn.LayerNorm(d))
    _copy_weights(torch, theirs, mine)
    if options.get("dropout"):
        theirs.eval(), mine.eval()
    first = options.get("batch_first", False)
    rng = np.random.default_rng(len(masks))
    x = rng.standard_normal((N, S, d) if first else (S, N, d))
    kwargs = {}
    if masks in ("padding", "both"):
        padding = rng.random((N, S)) < 0.3
        padding[:, 0] = False
        kwargs["src_key_padding_mask"] = padding
    if masks in ("causal", "causal-hint", "both"):
        kwargs["mask"] = torch.nn.Transformer.generate_square_subsequent_mask(
            S, dtype=torch.float64
        ).numpy()
    mine_kwargs = {n: mg.tensor(a) for n, a in kwargs.items()}
    their_kwargs = {n: torch.tensor(a) for n, a in kwargs.items()}
    if masks == "causal-hint":
        mine_kwargs["is_causal"] = their_kwargs["is_causal"] = True
    mx, tx = _pair(torch, x)
    mine_out, their_out = mine(mx, **mine_kwargs), theirs(tx, **their_kwargs)
    _close(mine_out, their_out, "output")
    (mine_out**2).sum().backward()
    (their_out**2).sum().backward()
    _compare_gradients(torch, mine, theirs, [("src", mx, tx)])


def test_encoder_layers_are_deep_copies_and_the_module_tree_is_pytorchs(real_torch) -> None:
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    encoder = nn.TransformerEncoder(layer, 3)
    weights = [block.linear1.weight for block in encoder.layers]
    assert len({id(w) for w in weights}) == 3
    assert all(w is not layer.linear1.weight for w in weights)
    for w in weights:
        np.testing.assert_array_equal(w.detach().numpy(), layer.linear1.weight.detach().numpy())
    theirs = real_torch.nn.TransformerEncoder(
        real_torch.nn.TransformerEncoderLayer(8, 2, 16), 3, enable_nested_tensor=False
    )
    assert [n for n, _ in encoder.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert list(encoder.state_dict()) == list(theirs.state_dict())


def test_gelu_tanh_equals_pytorch(real_torch) -> None:
    x = np.linspace(-6, 6, 101)
    for approximate in ("none", "tanh"):
        (a, ta) = _pair(real_torch, x)
        mine, theirs = nn.GELU(approximate)(a), real_torch.nn.GELU(approximate=approximate)(ta)
        _close(mine, theirs)
        mine.sum().backward(), theirs.sum().backward()
        _close(a.grad, ta.grad)


def test_modules_run_in_training_mode_with_dropout() -> None:
    mg.manual_seed(0)
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True), 2
    )
    x = mg.randn(2, 5, 8, requires_grad=True)
    first, second = encoder(x), encoder(x)
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    first.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    encoder.eval()
    with mg.no_grad():
        np.testing.assert_array_equal(encoder(x).numpy(), encoder(x).numpy())
    layer = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    out, weights = layer(x, x, x)
    assert out.shape == (2, 5, 8) and weights.shape == (2, 5, 5)


# =========================================================================== bad input


def _raises(error, *needles: str):
    """pytest.raises(error), then each needle in the message."""

    class Check:
        def __enter__(self):
            self.context = pytest.raises(error)
            self.info = self.context.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.context.__exit__(*exc)
            for needle in needles:
                assert needle in str(self.info.value), (needle, str(self.info.value))
            return handled

    return Check()


def test_sdpa_bad_input_names_both_shapes() -> None:
    q, k, v = mg.randn(2, 4, 8), mg.randn(2, 5, 8), mg.randn(2, 5, 6)
    sdpa = F.scaled_dot_product_attention
    with _raises(RuntimeError, "[2, 4, 8]", "[2, 5, 7]"):
        sdpa(q, mg.randn(2, 5, 7), v)  # E differs
    with _raises(RuntimeError, "[2, 5, 8]", "[2, 4, 6]"):
        sdpa(q, k, mg.randn(2, 4, 6))  # one value per key
    with _raises(RuntimeError, "[3, 4, 8]", "[2, 5, 8]", "broadcast"):
        sdpa(mg.randn(3, 4, 8), k, v)  # batch dims
    with _raises(RuntimeError, "[4, 4]", "[2, 4, 5]"):
        sdpa(q, k, v, attn_mask=mg.ones(4, 4, dtype=mg.bool))
    with _raises(RuntimeError, "int64", "bool"):
        sdpa(q, k, v, attn_mask=mg.ones(4, 5, dtype=mg.int64))
    with _raises(RuntimeError, "float32", "float64"):
        sdpa(q, k.float(), v)
    with _raises(RuntimeError, "floating-point"):
        sdpa(mg.ones(2, 4, 8, dtype=mg.int64), k.long(), v.long())
    with _raises(RuntimeError, "is_causal"):
        sdpa(q, k, v, attn_mask=mg.ones(4, 5, dtype=mg.bool), is_causal=True)
    with _raises(RuntimeError, "between 0 and 1", "1.5"):
        sdpa(q, k, v, dropout_p=1.5)
    with _raises(RuntimeError, "at least 2-dimensional", "[8]"):
        sdpa(q[0, 0], k[0, 0], v[0, 0])
    with _raises(RuntimeError, "[2, 4, 4, 8]", "[2, 3, 5, 8]"):
        sdpa(mg.randn(2, 4, 4, 8), mg.randn(2, 3, 5, 8), mg.randn(2, 3, 5, 8), enable_gqa=True)
    with _raises(TypeError, "scaled_dot_product_attention", "value"):
        sdpa(q, k, [1.0, 2.0])


def test_sdpa_raises_the_class_pytorch_raises(real_torch) -> None:
    torch = real_torch
    q, k, v = np.ones((2, 4, 8)), np.ones((2, 5, 8)), np.ones((2, 5, 6))
    calls = [
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(t(q), t(k[..., :7]), t(v)),
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v[:, :4])),
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
            t(q), t(k), t(v), attn_mask=t(np.ones((4, 4), dtype=bool))
        ),
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
            t(q), t(k), t(v), attn_mask=t(np.ones((4, 5), dtype=np.int64))
        ),
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
            t(q), t(k), t(v), attn_mask=t(np.ones((4, 5), dtype=bool)), is_causal=True
        ),
        lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
            t(q), t(k.astype(np.float32)), t(v)
        ),
    ]
    for call in calls:
        with pytest.raises(Exception) as theirs:
            call(torch, torch.tensor)
        with pytest.raises(Exception) as mine:
            call(mg, mg.tensor)
        assert type(mine.value) is type(theirs.value), (mine.value, theirs.value)


def test_multihead_attention_bad_input() -> None:
    with _raises(ValueError, "divisible", "embed_dim=10", "num_heads=3"):
        nn.MultiheadAttention(10, 3)  # PyTorch: AssertionError (see nn/attention.py)
    with _raises(ValueError, "greater than 0"):
        nn.MultiheadAttention(0, 2)
    layer = nn.MultiheadAttention(8, 2)  # sequence-first: (L, N, E)
    x = mg.randn(4, 3, 8)
    with _raises(RuntimeError, "embedding dimension of 8", "6"):
        layer(mg.randn(4, 3, 6), x, x)
    with _raises(RuntimeError, "[5, 3, 8]", "[4, 3, 8]"):
        layer(x, mg.randn(5, 3, 8), x)  # a value per key
    with _raises(RuntimeError, "[3, 4]", "[3, 5]", "key_padding_mask"):
        layer(x, x, x, key_padding_mask=mg.zeros(3, 5, dtype=mg.bool))
    with _raises(RuntimeError, "2D attn_mask", "[4, 5]", "[4, 4]"):
        layer(x, x, x, attn_mask=mg.zeros(4, 5))
    with _raises(RuntimeError, "3D attn_mask", "[6, 4, 4]"):
        layer(x, x, x, attn_mask=mg.zeros(2, 4, 4))
    with _raises(RuntimeError, "only bool and floating", "int64"):
        layer(x, x, x, attn_mask=mg.zeros(4, 4, dtype=mg.int64))
    with _raises(RuntimeError, "Need attn_mask"):
        layer(x, x, x, is_causal=True)
    with _raises(RuntimeError, "[4, 3, 8]", "[3, 4, 8]", "batch_first"):
        layer(x, mg.randn(3, 4, 8), mg.randn(3, 4, 8))  # key given batch-first
    with _raises(RuntimeError, "4-D", "[1, 4, 3, 8]"):
        layer(x[None], x[None], x[None])
    # A batch-first (N, L, E) batch into a sequence-first layer: the padding mask gives it away.
    batch_first = mg.randn(3, 7, 8)
    with _raises(RuntimeError, "key_padding_mask", "[3, 7]", "batch_first"):
        layer(batch_first, batch_first, batch_first, key_padding_mask=mg.zeros(3, 7, dtype=mg.bool))
    with _raises(RuntimeError, "activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with _raises(TypeError, "encoder_layer"):
        nn.TransformerEncoder(nn.Linear(2, 2).weight, 2)


# =========================================================================== compile


def _gpt_run(compiled: bool) -> tuple[list[float], list[np.ndarray], object]:
    mg.manual_seed(0)
    model, optimizer = gpt.build(mg, mg.float64)
    step = gpt.step_fn(model, optimizer)
    run = mg.compile(step) if compiled else step
    idx, targets = gpt.make_data(seed=1)
    losses = []
    for offset in range(5):
        x = mg.tensor(np.roll(idx, offset, axis=1))
        y = mg.tensor(np.roll(targets, offset, axis=1))
        losses.append(run(x, y).item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def test_a_gpt_training_step_under_compile_replays_and_equals_eager() -> None:
    eager_losses, eager_params, _ = _gpt_run(compiled=False)
    losses, params, compiled = _gpt_run(compiled=True)
    replays = re.search(r"(\d+) replay", compiled.explain())
    assert replays and int(replays.group(1)) >= 3, compiled.explain()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(params, eager_params):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)

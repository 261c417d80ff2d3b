"""Checks for lesson 16 (sequences and attention), and the references the lesson uses.

Exercise 16.1 calls the learner's `attention_backward(grad_output, q, k, v, scale)` on
self-attention cases of its own (keys and values of other widths, scales above and below 1)
and compares each of the three gradients with `attention_backward` below; a wrong one is
matched against what each likely mistake gives (softmax's row-sum term dropped, only the
Jacobian's diagonal, a transpose missing or added, the scale forgotten or divided by).
Exercise 16.2 calls `lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g)`, the four gradients
of an LSTM's cell update c = σ(a_f)·c_prev + σ(a_i)·tanh(a_g), and names a sigmoid's or
tanh's derivative left out or swapped, c in place of c_prev, and the forget gate left out of
c_prev's gradient. Exercise 16.3 calls `attention_counts(batch, heads, tokens, head_size)`,
the floats the lesson's Attention Function saves and the entries the causal mask allows,
and names a triangle where a square is stored, heads or batch forgotten, the diagonal
missed. The first case of each check tells every named mistake apart
(tests/test_course_lesson16.py).

The references are what the lesson's cells use after each exercise, so the lesson runs on
whatever the learner wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from minigrad.course import check

# --------------------------------------------------------------------------- references


def softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, each row's maximum taken off first: exp of a large score
    would overflow, and the result is unchanged by the shift. A score of -inf (a masked
    entry) gives exactly 0."""
    scores = np.asarray(scores, dtype=float)
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax_backward(grad_p: np.ndarray, p: np.ndarray) -> np.ndarray:
    """dS for P = softmax(S) along the last axis, given dP: the Jacobian-vector product
    P ⊙ (dP - rowsum(dP ⊙ P)), without forming the Jacobian diag(p) - p pᵀ of each row."""
    return p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))


def causal_mask(tokens: int) -> np.ndarray:
    """(tokens, tokens) booleans, True where query i may look at key j (j <= i)."""
    return np.tril(np.ones((tokens, tokens), dtype=bool))


def _transposed(a: np.ndarray) -> np.ndarray:
    """The last two axes swapped (a matrix transposed, whatever the leading axes)."""
    return np.swapaxes(a, -1, -2)


def attention_forward(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(O, P) for q (..., T_q, d), k (..., T_k, d), v (..., T_k, d_v): S = scale·q kᵀ,
    P = softmax(S) along the keys (future keys at -inf when causal), O = P v."""
    scores = q @ _transposed(k) * scale
    if causal:
        scores = np.where(causal_mask(scores.shape[-1])[-scores.shape[-2] :], scores, -np.inf)
    p = softmax(scores)
    return p @ v, p


def attention_backward(
    grad_output: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    scale: float,
    causal: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dq, dk, dv) for O = softmax(scale·q kᵀ) v, given dO = grad_output: P recomputed,
    then dV = Pᵀ dO, dP = dO Vᵀ, dS = P ⊙ (dP - rowsum(dP ⊙ P)), dQ = dS K·scale,
    dK = dSᵀ Q·scale. A masked entry has P = 0, so its dS is 0."""
    grad_output, q, k, v = (np.asarray(a, dtype=float) for a in (grad_output, q, k, v))
    _, p = attention_forward(q, k, v, scale, causal)
    grad_v = _transposed(p) @ grad_output
    grad_p = grad_output @ _transposed(v)
    grad_scores = softmax_backward(grad_p, p)
    return grad_scores @ k * scale, _transposed(grad_scores) @ q * scale, grad_v


def sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1/(1 + e^(-x)), written as (1 + tanh(x/2))/2, which overflows nowhere."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def lstm_cell_grads(
    grad_c: np.ndarray, c_prev: np.ndarray, a_i: np.ndarray, a_f: np.ndarray, a_g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The gradients of the pre-activations a_i, a_f, a_g and of c_prev, for the cell update
    c = f·c_prev + i·g with i = σ(a_i), f = σ(a_f), g = tanh(a_g), given dL/dc = grad_c:
    dc·g·σ'(a_i), dc·c_prev·σ'(a_f), dc·i·tanh'(a_g), dc·f (σ' = σ(1 - σ), tanh' = 1 - tanh²)."""
    grad_c = np.asarray(grad_c, dtype=float)
    i, f, g = sigmoid(a_i), sigmoid(a_f), np.tanh(a_g)
    return (
        grad_c * g * i * (1 - i),
        grad_c * c_prev * f * (1 - f),
        grad_c * i * (1 - g**2),
        grad_c * f,
    )


def attention_counts(batch: int, heads: int, tokens: int, head_size: int) -> tuple[int, int]:
    """(saved, unmasked) for the lesson's Attention Function on q, k, v of shape
    (batch, heads, tokens, head_size) with the causal mask: the floats it saves for backward
    (q, k and v, and the attention matrix P, zeros included) and the entries of P the mask
    allows (each query sees itself and the tokens before it)."""
    per_head_saved = 3 * tokens * head_size + tokens * tokens
    per_head_allowed = tokens * (tokens + 1) // 2
    return batch * heads * per_head_saved, batch * heads * per_head_allowed


def data_file(name: str) -> Path:
    """lessons/data/<name>: next to the notebook (data/), above it (the student version runs
    in lessons/exercises/), or in the repository this package was installed from."""
    repository = Path(__file__).resolve().parents[2] / "lessons" / "data"
    places = [Path("data"), Path("..") / "data", repository]
    for place in places:
        if (place / name).is_file():
            return place / name
    raise FileNotFoundError(
        f"lessons/data/{name} is not in data/, ../data/ or {repository}: copy it from the "
        f"course's repository into a folder data/ next to this notebook."
    )


# The references under names the checks' arguments (named as the learner's functions) do not
# hide.
_reference_attention_backward = attention_backward
_reference_lstm_cell_grads = lstm_cell_grads
_reference_attention_counts = attention_counts


# --------------------------------------------------------------------------- Exercise 16.1

# (tokens, head size d, value width d_v, scale). The first case tells the named mistakes
# apart; then values narrower than the keys, a scale above 1 (where dividing by it shows),
# and two tokens.
_ATTENTION_CASES: list[tuple[int, int, int, float]] = [
    (5, 3, 4, 0.6),
    (6, 4, 2, 0.5),
    (4, 2, 3, 1.7),
    (2, 3, 3, 0.8),
]

DV_NOT_TRANSPOSED = (
    "that is P dO: O = P V is a matrix product, so as for a linear layer (lesson 05) "
    "dV = Pᵀ dO. Entry (j, :) of dV collects dO's rows weighted by how much each query "
    "looked at key j, a column of P."
)
ROWSUM_DROPPED = (
    "softmax's backward is missing its row-sum term: every score of a row moves every "
    "weight of that row (they add up to 1), so dS = P ⊙ (dP - rowsum(dP ⊙ P)), not P ⊙ dP."
)
DIAGONAL_ONLY = (
    "that uses only the diagonal of softmax's Jacobian, p(1 - p) ⊙ dP, as if each weight "
    "depended on its own score alone: ∂p_i/∂s_j = p_i(δ_ij - p_j) for every j of the row, "
    "so dS = P ⊙ (dP - rowsum(dP ⊙ P))."
)
NO_SOFTMAX = (
    "softmax's backward is skipped (dS = dP): P = softmax(S), so dP goes through "
    "softmax's Jacobian-vector product, dS = P ⊙ (dP - rowsum(dP ⊙ P)), before reaching q "
    "and k."
)
ROWSUM_WRONG_AXIS = (
    "the row sum runs over the wrong axis: softmax normalizes each row (over the keys, the "
    "last axis), so the sum in P ⊙ (dP - rowsum(dP ⊙ P)) runs over axis -1, keepdims=True."
)
SCALE_FORGOTTEN = (
    "the scale is missing: S = scale·Q Kᵀ, so the gradients of q and k carry the factor "
    "scale (dQ = dS K·scale, dK = dSᵀ Q·scale)."
)
SCALE_DIVIDED = (
    "that divides by the scale: S = scale·Q Kᵀ multiplies by it, so the gradients of q "
    "and k are multiplied by it too (dQ = dS K·scale)."
)
DQ_TRANSPOSED = (
    "that is dSᵀ K·scale: S = Q Kᵀ·scale, so dQ = dS K·scale (query i's row of dS "
    "weights the keys it looked at); dSᵀ belongs to dK."
)
DK_NOT_TRANSPOSED = (
    "that is dS Q·scale: S = Q Kᵀ·scale, so K's gradient needs dS transposed, "
    "dK = dSᵀ Q·scale (key j's column of dS weights the queries that looked at it)."
)


def _attention_variants(
    grad_output: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float
) -> dict[str, np.ndarray]:
    """The pieces of the backward: P, dP, dS, and dS computed the likely wrong ways."""
    _, p = attention_forward(q, k, v, scale)
    grad_p = grad_output @ _transposed(v)
    return {
        "p": p,
        "grad_p": grad_p,
        "right": softmax_backward(grad_p, p),
        ROWSUM_DROPPED: p * grad_p,
        DIAGONAL_ONLY: p * (1 - p) * grad_p,
        NO_SOFTMAX: grad_p,
        ROWSUM_WRONG_AXIS: p * (grad_p - (grad_p * p).sum(axis=-2, keepdims=True)),
    }


_SOFTMAX_MISTAKES = (ROWSUM_DROPPED, DIAGONAL_ONLY, NO_SOFTMAX, ROWSUM_WRONG_AXIS)


def _attention_mistakes(
    grad_output: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float
) -> dict[str, dict[str, np.ndarray]]:
    """Per gradient ("grad_q", "grad_k", "grad_v"): hint -> the value a likely mistake
    gives. Mistakes that change a shape (cross-attention, batched inputs) are named by
    the shape hints instead."""
    parts = _attention_variants(grad_output, q, k, v, scale)
    grad_scores = parts["right"]
    grad_q: dict[str, np.ndarray] = {
        hint: parts[hint] @ k * scale for hint in _SOFTMAX_MISTAKES
    }
    grad_q[SCALE_FORGOTTEN] = grad_scores @ k
    grad_q[SCALE_DIVIDED] = grad_scores @ k / scale
    grad_q[DQ_TRANSPOSED] = _transposed(grad_scores) @ k * scale
    grad_k: dict[str, np.ndarray] = {
        hint: _transposed(parts[hint]) @ q * scale for hint in _SOFTMAX_MISTAKES
    }
    grad_k[SCALE_FORGOTTEN] = _transposed(grad_scores) @ q
    grad_k[SCALE_DIVIDED] = _transposed(grad_scores) @ q / scale
    grad_k[DK_NOT_TRANSPOSED] = grad_scores @ q * scale
    grad_v = {DV_NOT_TRANSPOSED: parts["p"] @ grad_output}
    return {"grad_q": grad_q, "grad_k": grad_k, "grad_v": grad_v}


_ATTENTION_HINTS: list[check.HintRule] = [
    (
        ValueError,
        "Follow the shapes: P and dP are (T_q, T_k), dO is (T_q, d_v), q is (T_q, d), k "
        "(T_k, d) and v (T_k, d_v); each gradient has its input's shape. For a matrix's "
        "transpose whatever the leading axes, use np.swapaxes(a, -1, -2).",
    ),
]


def _returned(exercise: str, what: str, got: Any, names: tuple[str, ...], noun: str) -> tuple:
    """`got` as a tuple of len(names) values, or a CheckError saying what it is."""
    if got is None:
        check.fail(exercise, f"{what} is None: did you forget to `return` the {noun}?")
    wanted = f"{len(names)} values, ({', '.join(names)})"
    if not isinstance(got, (tuple, list)):
        check.fail(exercise, f"{what} should return {wanted}; got {check.with_article(got)}.")
    if len(got) != len(names):
        check.fail(exercise, f"{what} should return {wanted}; got {len(got)} values.")
    return tuple(got)


def check_16_1(attention_backward: Callable[..., Any]) -> None:
    """attention_backward(grad_output, q, k, v, scale): the gradients (dq, dk, dv) of
    O = softmax(scale·q kᵀ) v, in NumPy."""
    exercise = "16.1"
    if not callable(attention_backward):
        check.fail(
            exercise,
            f"attention_backward should be a function; got "
            f"{check.with_article(attention_backward)}.",
        )
    rng = np.random.default_rng(161)
    names = ("grad_q", "grad_k", "grad_v")
    for tokens, size, value_size, scale in _ATTENTION_CASES:
        q = rng.standard_normal((tokens, size))
        k = rng.standard_normal((tokens, size))
        v = rng.standard_normal((tokens, value_size))
        grad_output = rng.standard_normal((tokens, value_size))
        what = (
            f"attention_backward(grad_output, q, k, v, scale={scale}) for q and k of shape "
            f"{q.shape}, v {v.shape}"
        )
        got = check.call(
            exercise, what, attention_backward, grad_output.copy(), q.copy(), k.copy(),
            v.copy(), scale, hints=_ATTENTION_HINTS,
        )
        got = _returned(exercise, what, got, names, "gradients")
        expected = dict(zip(names, _reference_attention_backward(grad_output, q, k, v, scale)))
        mistakes = _attention_mistakes(grad_output, q, k, v, scale)
        shapes = {"grad_q": q.shape, "grad_k": k.shape, "grad_v": v.shape}
        for name in ("grad_v", "grad_q", "grad_k"):
            value = check.as_array(exercise, f"{name} of {what}", got[names.index(name)])
            check.expect_close(
                exercise,
                f"{name} of {what}",
                value,
                expected[name],
                mistakes[name],
                shape_hint=_attention_shape_hint(name, value.shape, shapes),
            )
    check.passed(
        exercise,
        "batches with heads (4-D q, k, v), scores in the thousands, and that your function "
        "leaves its inputs unchanged",
    )


def _attention_shape_hint(
    name: str, got: tuple[int, ...], shapes: dict[str, tuple[int, ...]]
) -> str | None:
    """What a gradient of the wrong shape most likely is: another input's gradient (the
    three returned in another order), or P's."""
    others = [other[5:] for other, shape in shapes.items() if other != name and got == shape]
    if others and got != shapes[name]:
        return (
            f"that is the shape of {' and '.join(others)}: return the gradients in the order of "
            f"the inputs, (grad_q, grad_k, grad_v), each with its input's shape."
        )
    tokens = shapes["grad_q"][-2]
    if got[-2:] == (tokens, tokens):
        return (
            "that is the shape of P (T × T), a step on the way: carry it on to the input, "
            "with one more product by k, q or dO."
        )
    return None


# --------------------------------------------------------------------------- Exercise 16.2

# (shape, spread of the pre-activations). The first case tells the named mistakes apart;
# then wider pre-activations (gates near 0 and 1) and one sample.
_LSTM_CASES: list[tuple[tuple[int, ...], float]] = [
    ((3, 4), 1.2),
    ((2, 5), 3.0),
    ((1, 6), 0.7),
]

SIGMOID_PRIME_MISSING = (
    "the sigmoid's derivative is missing: the gate is σ(a), so the chain rule brings in "
    "σ'(a) = σ(a)(1 - σ(a)) between dc·c_prev (or dc·g) and the pre-activation."
)
TANH_PRIME_MISSING = (
    "tanh's derivative is missing: g = tanh(a_g), so d a_g = dc·i·(1 - g²)."
)
C_INSTEAD_OF_C_PREV = (
    "that uses the new cell state c: c = f·c_prev + i·g, so ∂c/∂f = c_prev, the state "
    "that came in, not the one that goes out."
)
SWAPPED_DERIVATIVES = (
    "tanh's derivative and the sigmoid's are swapped: i and f are sigmoids, with "
    "σ' = σ(1 - σ); g is a tanh, with tanh' = 1 - tanh². Use each gate's own output in its "
    "own derivative."
)
SIGMOID_PRIME_OF_PREACTIVATION = (
    "the derivative's formula is applied to the pre-activation: σ'(a) = σ(a)(1 - σ(a)), "
    "the gate's output times one minus it, not a(1 - a)."
)
C_PREV_WITHOUT_F = (
    "that is dc itself: c = f·c_prev + i·g, so c_prev's gradient is dc·f. The forget gate "
    "scales the gradient on its way back, step after step (it is what keeps it from "
    "vanishing when f is near 1)."
)
I_AND_G_SWAPPED = (
    "i and g are swapped: c = f·c_prev + i·g, so ∂c/∂i = g (then σ'(a_i)) and ∂c/∂g = i "
    "(then tanh'(a_g))."
)


def _lstm_mistakes(
    grad_c: np.ndarray, c_prev: np.ndarray, a_i: np.ndarray, a_f: np.ndarray, a_g: np.ndarray
) -> dict[str, dict[str, np.ndarray]]:
    """Per gradient: hint -> the value a likely mistake gives."""
    i, f, g = sigmoid(a_i), sigmoid(a_f), np.tanh(a_g)
    c = f * c_prev + i * g
    dc = grad_c
    return {
        "grad_a_i": {
            SIGMOID_PRIME_MISSING: dc * g,
            SWAPPED_DERIVATIVES: dc * g * (1 - i**2),
            SIGMOID_PRIME_OF_PREACTIVATION: dc * g * a_i * (1 - a_i),
            I_AND_G_SWAPPED: dc * i * i * (1 - i),
        },
        "grad_a_f": {
            SIGMOID_PRIME_MISSING: dc * c_prev,
            C_INSTEAD_OF_C_PREV: dc * c * f * (1 - f),
            SWAPPED_DERIVATIVES: dc * c_prev * (1 - f**2),
            SIGMOID_PRIME_OF_PREACTIVATION: dc * c_prev * a_f * (1 - a_f),
        },
        "grad_a_g": {
            TANH_PRIME_MISSING: dc * i,
            SWAPPED_DERIVATIVES: dc * i * g * (1 - g),
            I_AND_G_SWAPPED: dc * g * (1 - g**2),
        },
        "grad_c_prev": {C_PREV_WITHOUT_F: dc},
    }


def check_16_2(lstm_cell_grads: Callable[..., Any]) -> None:
    """lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g): the gradients of the LSTM cell
    update's pre-activations and of c_prev, in NumPy."""
    exercise = "16.2"
    if not callable(lstm_cell_grads):
        check.fail(
            exercise,
            f"lstm_cell_grads should be a function; got {check.with_article(lstm_cell_grads)}.",
        )
    rng = np.random.default_rng(162)
    names = ("grad_a_i", "grad_a_f", "grad_a_g", "grad_c_prev")
    for shape, spread in _LSTM_CASES:
        grad_c, c_prev = rng.standard_normal(shape), rng.standard_normal(shape)
        a_i, a_f, a_g = (spread * rng.standard_normal(shape) for _ in range(3))
        what = f"lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g) for arrays of shape {shape}"
        got = check.call(
            exercise, what, lstm_cell_grads, *(a.copy() for a in (grad_c, c_prev, a_i, a_f, a_g))
        )
        got = _returned(exercise, what, got, names, "gradients")
        expected = dict(zip(names, _reference_lstm_cell_grads(grad_c, c_prev, a_i, a_f, a_g)))
        mistakes = _lstm_mistakes(grad_c, c_prev, a_i, a_f, a_g)
        for index, name in enumerate(names):
            check.expect_close(
                exercise, f"{name} of {what}", got[index], expected[name], mistakes[name]
            )
    check.passed(exercise, "that your function leaves the arrays it is given unchanged")


# --------------------------------------------------------------------------- Exercise 16.3

# (batch, heads, tokens, head size). The first case tells the named mistakes apart; then
# one head of one sequence, a single token, and GPT-2 small's shape (12 heads of 64, 1024
# tokens).
_COUNT_CASES: list[tuple[int, int, int, int]] = [
    (2, 3, 10, 4),
    (1, 1, 6, 5),
    (3, 2, 1, 8),
    (1, 12, 1024, 64),
]

SAVED_TRIANGLE = (
    "that counts only the lower triangle of P: the mask makes the upper entries 0, but P "
    "is still a dense (T, T) array per head, zeros included, and all of it is saved."
)
SAVED_HEADS_FORGOTTEN = (
    "the heads are missing: every head has its own q, k, v and its own (T, T) matrix P, "
    "so multiply by the number of heads too."
)
SAVED_BATCH_FORGOTTEN = (
    "the batch is missing: each sequence of the batch has its own q, k, v and P, so "
    "multiply by the batch size too."
)
SAVED_P_ONLY = (
    "that is P alone: backward also needs q, k and v (dQ = dS K, dK = dSᵀ Q, dP = dO Vᵀ), "
    "and the Function saves them too, 3·T·d floats per head."
)
SAVED_QKV_ONCE = (
    "q, k and v are counted as one array: they are three, each T·d floats per head."
)
SAVED_OUTPUT_TOO = (
    "that counts the output O as well: backward gets dO from the engine and never needs O "
    "itself, so the Function does not save it."
)
SAVED_SCORES_TOO = (
    "that counts the scores S beside P: softmax's backward needs only P "
    "(dS = P ⊙ (dP - rowsum(dP ⊙ P))), so the Function keeps P alone."
)
SAVED_FULL_WIDTH = (
    "that counts q, k and v with the model's whole width (heads × head_size) in each head: "
    "a head holds only its own head_size columns of q, k and v."
)
ALLOWED_FULL = (
    "that is every entry, T²: the causal mask lets query i see only the keys j ≤ i, the "
    "lower triangle with its diagonal."
)
ALLOWED_NO_DIAGONAL = (
    "that is T(T - 1)/2, the triangle without its diagonal (or the masked entries): each "
    "token also sees itself, so the allowed entries are 1 + 2 + ... + T = T(T + 1)/2."
)
ALLOWED_HALF = (
    "that is T²/2: the lower triangle with its diagonal holds 1 + 2 + ... + T = "
    "T(T + 1)/2 entries, T/2 more than half the square."
)
ALLOWED_ONE_MORE = (
    "off by one: 1 + 2 + ... + T = T(T + 1)/2, not (T + 1)(T + 2)/2; query i (from 0) "
    "sees i + 1 keys."
)
ALLOWED_HEADS_FORGOTTEN = (
    "the heads are missing: each head has its own masked (T, T) matrix, so multiply by "
    "the number of heads too."
)
ALLOWED_BATCH_FORGOTTEN = (
    "the batch is missing: each sequence of the batch has its own masked matrices, so "
    "multiply by the batch size too."
)


def _count_mistakes(batch: int, heads: int, tokens: int, size: int) -> tuple[dict, dict]:
    """(saved mistakes, unmasked mistakes): hint -> the count a likely mistake gives."""
    qkv, square, triangle = 3 * tokens * size, tokens * tokens, tokens * (tokens + 1) // 2
    n = batch * heads
    saved = {
        SAVED_TRIANGLE: n * (qkv + triangle),
        SAVED_HEADS_FORGOTTEN: batch * (qkv + square),
        SAVED_BATCH_FORGOTTEN: heads * (qkv + square),
        SAVED_P_ONLY: n * square,
        SAVED_QKV_ONCE: n * (tokens * size + square),
        SAVED_OUTPUT_TOO: n * (qkv + tokens * size + square),
        SAVED_SCORES_TOO: n * (qkv + 2 * square),
        SAVED_FULL_WIDTH: n * (heads * qkv + square),
    }
    unmasked = {
        ALLOWED_FULL: n * square,
        ALLOWED_NO_DIAGONAL: n * (tokens * (tokens - 1) // 2),
        ALLOWED_HALF: n * square / 2,
        ALLOWED_ONE_MORE: n * ((tokens + 1) * (tokens + 2) // 2),
        ALLOWED_HEADS_FORGOTTEN: batch * triangle,
        ALLOWED_BATCH_FORGOTTEN: heads * triangle,
    }
    return saved, unmasked


def check_16_3(attention_counts: Callable[..., Any]) -> None:
    """attention_counts(batch, heads, tokens, head_size): (floats the Attention Function
    saves, entries the causal mask allows)."""
    exercise = "16.3"
    if not callable(attention_counts):
        check.fail(
            exercise,
            f"attention_counts should be a function; got {check.with_article(attention_counts)}.",
        )
    for batch, heads, tokens, size in _COUNT_CASES:
        what = f"attention_counts(batch={batch}, heads={heads}, tokens={tokens}, head_size={size})"
        got = check.call(exercise, what, attention_counts, batch, heads, tokens, size)
        got = _returned(exercise, what, got, ("saved", "unmasked"), "counts")
        saved, unmasked = _reference_attention_counts(batch, heads, tokens, size)
        saved_mistakes, unmasked_mistakes = _count_mistakes(batch, heads, tokens, size)
        for name, value, expected, mistakes in (
            ("saved", got[0], saved, saved_mistakes),
            ("unmasked", got[1], unmasked, unmasked_mistakes),
        ):
            count = check.as_array(exercise, f"{name} of {what}", value)
            if count.ndim:
                check.fail(
                    exercise,
                    f"{name} of {what} has shape {count.shape}: return one number, the count "
                    f"over every batch and head.",
                )
            # Counts are exact: an off-by-one among a billion must still show.
            check.expect_close(
                exercise, f"{name} of {what}", count, expected, mistakes, rtol=0, atol=0.5
            )
    check.passed(
        exercise, "a context of 2**24 tokens, where building the T × T mask cannot fit"
    )

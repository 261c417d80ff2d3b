"""torch.nn.utils.rnn's pad_sequence: sequences of different lengths as one padded batch.

The packed-sequence API (pack_padded_sequence, PackedSequence, ...) is not here: minigrad's
recurrent layers take padded batches, so pad, run, and mask (or index) the padded steps.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.checks import check_iterable
from minigrad.core.errors import missing_name
from minigrad.core.variable import Variable
from minigrad.nn.functional import pad
from minigrad.ops.shape import stack


def pad_sequence(
    sequences: Any,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Variable:
    """B sequences of shapes (L_i, *) → (L_max, B, *) (or (B, L_max, *) with batch_first),
    each filled with padding_value after its end (before its start with padding_side='left')."""
    sequences = check_iterable(sequences, "sequences", "pad_sequence", "Variables")
    if not sequences:
        raise RuntimeError("received an empty list of sequences; pad_sequence needs at least one.")
    if padding_side not in ("right", "left"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side!r}."
        )
    for index, sequence in enumerate(sequences):
        if not isinstance(sequence, Variable) or sequence.is_text or sequence.ndim == 0:
            what = "a 0-d or text Variable" if isinstance(sequence, Variable) else (
                type(sequence).__name__
            )
            raise TypeError(
                f"pad_sequence expects Variables of shape (length, *); sequence {index} is "
                f"{what}. Make each one with minigrad.tensor(...)."
            )
        if sequence.shape[1:] != sequences[0].shape[1:]:
            raise RuntimeError(
                f"pad_sequence: the sequences must agree after their first dimension; sequence "
                f"0 has shape {tuple(sequences[0].shape)} and sequence {index} "
                f"{tuple(sequence.shape)}."
            )
    longest = max(sequence.shape[0] for sequence in sequences)
    padded = []
    for sequence in sequences:
        missing = longest - sequence.shape[0]
        # F.pad lists (before, after) pairs from the last dim backwards: the first dim is last.
        widths = [0, 0] * (sequence.ndim - 1)
        widths += [missing, 0] if padding_side == "left" else [0, missing]
        padded.append(pad(sequence, widths, value=padding_value) if missing else sequence)
    return stack(padded, 0 if batch_first else 1)


def __getattr__(name: str) -> Any:
    raise missing_name("torch.nn.utils.rnn", name, ["pad_sequence"])

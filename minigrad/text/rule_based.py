"""RuleBasedEngine: a deterministic, offline stand-in for a language model.

It reads the instructions of the feedback language (minigrad.text.feedback) and applies
them with the smallest edits it can: add a missing word at the end, delete a word, drop
filler words and then trailing words to shorten, append words to lengthen, add a literal
prefix or suffix that a pattern asks for. What it cannot do (a note in free text, a
pattern that is not a plain literal) it leaves alone and lists in `last_unhandled`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from minigrad.text import feedback as language

# Words it drops first when a text must get shorter: they carry the least meaning.
FILLER = ("very", "really", "just", "quite", "the", "a", "an", "that", "so", "truly")
# Words it appends when a text must get longer (it has no model to invent content).
PADDING = ("simple", "clear", "and", "useful", "for", "everyone", "every", "day")


class RuleBasedEngine:
    """feedback(): the judgement's instructions as they are; rewrite(): minimal edits."""

    def __init__(self) -> None:
        self.last_unhandled: list[str] = []

    def feedback(self, judgement: str, *, role: str) -> str:
        if not isinstance(judgement, str):
            raise TypeError(f"a judgement is a str; got {type(judgement).__name__}.")
        # The evaluators already write instructions, so the feedback is the judgement
        # itself, without its summary lines (notes) that ask for nothing.
        lines = [line for line in judgement.splitlines() if _is_instruction(line)]
        return "\n".join(lines)

    def rewrite(
        self, text: str, feedback: str, *, role: str = "text", constraints: Sequence[str] = ()
    ) -> str:
        if not isinstance(text, str) or not isinstance(feedback, str):
            raise TypeError(
                f"rewrite expects a str text and a str feedback; got "
                f"{type(text).__name__} and {type(feedback).__name__}."
            )
        if isinstance(constraints, str) or not all(isinstance(c, str) for c in constraints):
            raise TypeError("constraints must be a list of str, e.g. ['Keep the word \"x\".'].")
        # Constraints come last, so they win over the feedback.
        instructions = language.parse(feedback) + language.parse("\n".join(constraints))
        self.last_unhandled = []
        words = text.split()
        keep = {str(i.argument).lower() for i in instructions if i.kind in ("add", "keep")}

        for instruction in instructions:
            if instruction.kind == "replace":
                words = str(instruction.argument).split()
        for instruction in instructions:
            if instruction.kind == "remove" and str(instruction.argument).lower() not in keep:
                words = [w for w in words if not _same_word(w, str(instruction.argument))]
        for instruction in instructions:
            if instruction.kind == "add" and not _has_word(words, str(instruction.argument)):
                words.append(str(instruction.argument))
            elif instruction.kind == "pattern":
                words = self._apply_pattern(words, str(instruction.argument))
            elif instruction.kind == "note":
                self.last_unhandled.append(str(instruction.argument))
        for instruction in instructions:
            if instruction.kind in ("at_most", "at_least"):
                words = _resize(words, instruction, keep, len(text.split()))
        return " ".join(words)

    def _apply_pattern(self, words: list[str], pattern: str) -> list[str]:
        """Patterns it can satisfy: a plain literal, optionally anchored with ^ or $."""
        if re.search(pattern, " ".join(words)):
            return words
        at_start = pattern.startswith("^")
        at_end = pattern.endswith("$") and not pattern.endswith("\\$")
        literal = pattern[1 if at_start else 0 : len(pattern) - 1 if at_end else len(pattern)]
        if not _is_plain(literal):
            self.last_unhandled.append(f"the pattern /{pattern}/ is not a plain literal")
            return words
        literal = re.sub(r"\\(.)", r"\1", literal)  # \. means a plain "."
        if at_start:
            return literal.split() + words
        if at_end and words and not literal[:1].isalnum():
            return words[:-1] + [words[-1] + literal]  # punctuation sticks to the last word
        return words + literal.split()


def _is_instruction(line: str) -> bool:
    return any(i.kind != "note" for i in language.parse(line))


def _is_plain(literal: str) -> bool:
    """A pattern with no regular-expression operators (escaped characters allowed)."""
    return re.fullmatch(r"(?:[^.^$*+?()\[\]{}|\\]|\\.)*", literal) is not None


def _same_word(candidate: str, word: str) -> bool:
    return candidate.strip(".,;:!?\"'()").lower() == word.lower()


def _has_word(words: list[str], word: str) -> bool:
    return language.contains_word(" ".join(words), word)


def _resize(words: list[str], instruction: language.Instruction, keep: set[str], before: int):
    """Meet a word limit. When the judged text was longer than this one (a template added
    words around it), the limit is shifted by the difference: only the excess goes."""
    limit, judged = instruction.argument
    offset = judged - before if judged is not None and judged > before else 0
    if instruction.kind == "at_most":
        return _shorten(words, max(limit - offset, 0), keep)
    return _lengthen(words, max(limit - offset, 0))


def _shorten(words: list[str], limit: int, keep: set[str]) -> list[str]:
    """Drop filler words, then the last words that are not kept, until `limit` remain."""
    words = list(words)
    for filler in FILLER:
        while len(words) > limit and any(_same_word(w, filler) for w in words):
            position = next(i for i, w in enumerate(words) if _same_word(w, filler))
            del words[position]
    position = len(words) - 1
    while len(words) > limit and position >= 0:
        if words[position].strip(".,;:!?\"'()").lower() not in keep:
            del words[position]
        position = min(position, len(words)) - 1
    return words


def _lengthen(words: list[str], limit: int) -> list[str]:
    words = list(words)
    padding = iter(PADDING * (1 + limit // len(PADDING)))
    while len(words) < limit:
        words.append(next(padding))
    return words

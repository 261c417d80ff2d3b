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
        keep = {str(i.argument).lower() for i in instructions if i.kind in ("add", "keep")}
        replacements = [str(i.argument) for i in instructions if i.kind == "replace"]
        if replacements:
            text = replacements[-1]  # verbatim: spaces and line breaks included
        for instruction in instructions:
            if instruction.kind == "remove" and str(instruction.argument).lower() not in keep:
                text = _remove_word(text, str(instruction.argument))
        words = text.split()
        edited = False  # an untouched text keeps its own spacing and line breaks
        for instruction in instructions:
            if instruction.kind == "add" and not _has_word(words, str(instruction.argument)):
                words.append(str(instruction.argument))
                edited = True
            elif instruction.kind == "pattern":
                changed = self._apply_pattern(words, str(instruction.argument))
                edited = edited or changed != words
                words = changed
            elif instruction.kind == "note":
                self.last_unhandled.append(str(instruction.argument))
        # Only the last word limit counts: with momentum, older feedback comes first.
        limits = [i for i in instructions if i.kind in ("at_most", "at_least")]
        if limits:
            resized = _resize(words, limits[-1], keep)
            edited = edited or resized != words
            words = resized
        result = " ".join(words) if edited else text
        self._report_unmet(result, instructions, keep)
        return result

    def _report_unmet(self, result: str, instructions: list, keep: set[str]) -> None:
        """List the instructions the result still does not meet, so nothing fails silently."""
        for instruction in instructions:
            argument = str(instruction.argument)
            protected = argument.lower() in keep
            if (
                instruction.kind == "remove"
                and not protected
                and language.contains_word(result, argument)
            ):
                self.last_unhandled.append(f'could not remove "{argument}"')
            elif instruction.kind == "pattern" and not re.search(argument, result):
                if not any(argument in note for note in self.last_unhandled):
                    self.last_unhandled.append(f"the text still does not match /{argument}/")

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
        if at_start and at_end:
            return literal.split()  # the pattern spells out the whole text
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


def _remove_word(text: str, word: str) -> str:
    """`text` without `word` (any case): a token that is the word with punctuation around it
    ("Cheap!") goes whole; inside a token ("cheap/fast") only the word goes."""
    escaped = re.escape(word)
    removed = re.sub(rf"(?<!\S)[^\w\s]*{escaped}[^\w\s]*(?!\S)", "", text, flags=re.IGNORECASE)
    removed = re.sub(rf"(?<![\w'-]){escaped}(?![\w'-])", "", removed, flags=re.IGNORECASE)
    if removed == text:
        return text
    removed = re.sub(r"[ \t]{2,}", " ", removed)
    return re.sub(r"[ \t]+\n", "\n", removed).strip()


def _is_word(token: str) -> bool:
    return re.search(r"\w", token) is not None


def _bare(word: str) -> str:
    return word.strip(".,;:!?\"'()").lower()


def _has_word(words: list[str], word: str) -> bool:
    return language.contains_word(" ".join(words), word)


def _resize(words: list[str], instruction: language.Instruction, keep: set[str]) -> list[str]:
    """Meet a word limit; the limit is about this text itself (parts get theirs from route)."""
    limit, _ = instruction.argument
    if instruction.kind == "at_most":
        return _shorten(words, limit, keep)
    return _lengthen(words, limit)


def _shorten(words: list[str], limit: int, keep: set[str]) -> list[str]:
    """Drop filler words (first ones first), then the last words not kept, to `limit`."""
    # Tokens without a letter or digit ("|", "-") are not words: never counted or dropped.
    excess = sum(1 for w in words if _is_word(w)) - limit
    if excess <= 0:
        return list(words)
    dropped: set[int] = set()
    # One pass per filler word, in FILLER's order: linear in the text's length.
    for filler in FILLER:
        for position, word in enumerate(words):
            if len(dropped) == excess:
                break
            if position not in dropped and _bare(word) == filler:
                dropped.add(position)
    for position in range(len(words) - 1, -1, -1):
        if len(dropped) == excess:
            break
        word = words[position]
        if position not in dropped and _is_word(word) and _bare(word) not in keep:
            dropped.add(position)
    return [word for position, word in enumerate(words) if position not in dropped]


def _lengthen(words: list[str], limit: int) -> list[str]:
    words = list(words)
    padding = iter(PADDING * (1 + limit // len(PADDING)))
    count = sum(1 for w in words if _is_word(w))
    for _ in range(limit - count):
        words.append(next(padding))
    return words

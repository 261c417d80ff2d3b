"""RuleBasedEngine: a deterministic, offline stand-in for a language model.

It reads the instructions of the feedback language (minigrad.text.feedback) and applies
them with the smallest edits it can. How it edits depends on what the text is:

- prose, a text written as sentences (it ends with ".", "!" or "?", or it is asked to end
  with a period), is edited clause by clause so that it still reads as sentences: a
  clause holding a word to remove goes whole, words to add take the removed word's place
  or join the end as a list, shortening drops modifiers, clauses and phrases before
  single words, and the result starts with a capital and ends with a mark (see
  minigrad.text.prose);
- any other text (a title, a list of keywords) is edited word by word: add a missing word
  at the end, delete a word, drop filler words and then trailing words to shorten, append
  words to lengthen.

In both it adds a literal prefix or suffix that a pattern asks for. What it cannot do (a
note in free text, a pattern that is not a plain literal) it leaves alone and lists in
`last_unhandled`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from minigrad.text import feedback as language
from minigrad.text.prose import Prose, strip_word

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
            if instruction.kind == "note":
                self.last_unhandled.append(str(instruction.argument))
        if _is_prose(text, instructions):
            result = self._rewrite_prose(text, instructions, keep)
        else:
            result = self._rewrite_words(text, instructions, keep)
        self._report_unmet(result, instructions, keep)
        return result

    def _rewrite_prose(self, text: str, instructions: list, keep: set[str]) -> str:
        """Edit sentences clause by clause (minigrad.text.prose), then apply patterns."""
        prose = Prose(text, keep)
        missing = _missing_words(text, instructions)
        for instruction in instructions:
            if instruction.kind == "remove" and str(instruction.argument).lower() not in keep:
                prose.remove(str(instruction.argument), replacement=missing)
        prose.add(missing)
        prose.tidy()
        limits = [i for i in instructions if i.kind in ("at_most", "at_least")]
        if limits:
            limit, _ = limits[-1].argument
            if limits[-1].kind == "at_most":
                prose.shorten(limit)
            else:
                prose.lengthen(limit)
        for instruction in instructions:
            # A literal the text must start with goes in before the capitals are set.
            literal = _start_literal(str(instruction.argument))
            if instruction.kind == "pattern" and literal is not None:
                if not re.search(str(instruction.argument), prose.text()):
                    prose.prefix(literal.split())
        asks_for_period = any(_asks_for_period(i) for i in instructions)
        prose.finish(end="." if asks_for_period else None)
        result = prose.text() if prose.changed else text  # untouched: its own line breaks
        words = result.split()
        patterned = words
        for instruction in instructions:
            if instruction.kind == "pattern" and not _asks_for_period(instruction):
                patterned = self._apply_pattern(patterned, str(instruction.argument))
        return result if patterned == words else " ".join(patterned)

    def _rewrite_words(self, text: str, instructions: list, keep: set[str]) -> str:
        """Edit a text that is not prose word by word."""
        for instruction in instructions:
            if instruction.kind == "remove" and str(instruction.argument).lower() not in keep:
                text = strip_word(text, str(instruction.argument))
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
        # Only the last word limit counts: with momentum, older feedback comes first.
        limits = [i for i in instructions if i.kind in ("at_most", "at_least")]
        if limits:
            resized = _resize(words, limits[-1], keep)
            edited = edited or resized != words
            words = resized
        return " ".join(words) if edited else text

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


def _is_prose(text: str, instructions: list) -> bool:
    """Whether to edit `text` as sentences: it ends like one, or it is asked to."""
    ends_a_sentence = re.search(r"[.!?][\"')\]]*\s*$", text) is not None
    return ends_a_sentence or any(_asks_for_period(i) for i in instructions)


def _asks_for_period(instruction: language.Instruction) -> bool:
    return instruction.kind == "pattern" and instruction.argument == r"\.$"


def _start_literal(pattern: str) -> str | None:
    """The text a pattern such as /^Meet/ asks to start with; None for any other pattern."""
    if not pattern.startswith("^") or (pattern.endswith("$") and not pattern.endswith("\\$")):
        return None
    literal = pattern[1:]
    return re.sub(r"\\(.)", r"\1", literal) if literal and _is_plain(literal) else None


def _missing_words(text: str, instructions: list) -> list[str]:
    """The words to add that `text` lacks, in order, each once."""
    missing: list[str] = []
    for instruction in instructions:
        word = str(instruction.argument)
        if instruction.kind != "add" or language.contains_word(text, word):
            continue
        if word.lower() not in (m.lower() for m in missing):
            missing.append(word)
    return missing


def _is_instruction(line: str) -> bool:
    return any(i.kind != "note" for i in language.parse(line))


def _is_plain(literal: str) -> bool:
    """A pattern with no regular-expression operators (escaped characters allowed)."""
    return re.fullmatch(r"(?:[^.^$*+?()\[\]{}|\\]|\\.)*", literal) is not None


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

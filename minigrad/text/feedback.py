"""The feedback language: the sentences evaluators write and the rule-based engine reads.

A textual gradient is free text, but the offline engine needs to act on it, so the
evaluators write one instruction per line, each in a fixed form:

    Add the word "minigrad".
    Remove the word "cheap".
    Shorten the text to at most 5 words (it has 7).
    Lengthen the text to at least 12 words (it has 4).
    Make the text match the pattern /^Meet/.
    Replace the whole text with "hello".
    Keep the word "minigrad".            (a constraint: never remove it)

`parse` finds these instructions anywhere in a line (so a prefix such as "[description]"
or "In part 2:" is fine); lines it cannot read are kept as notes, for a model to use.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Instruction(NamedTuple):
    """One thing to change: kind is add, remove, keep, at_most, at_least, pattern, replace, note.

    For at_most and at_least the argument is (limit, count the judged text had or None).
    """

    kind: str
    argument: str | tuple[int, int | None]


def add_word(word: str) -> str:
    return f'Add the word "{word}".'


def remove_word(word: str) -> str:
    return f'Remove the word "{word}".'


def keep_word(word: str) -> str:
    return f'Keep the word "{word}".'


def at_most_words(limit: int, now: int) -> str:
    return f"Shorten the text to at most {limit} {_words(limit)} (it has {now})."


def at_least_words(limit: int, now: int) -> str:
    return f"Lengthen the text to at least {limit} {_words(limit)} (it has {now})."


def _words(count: int) -> str:
    return "word" if count == 1 else "words"


def match_pattern(pattern: str) -> str:
    return f"Make the text match the pattern /{pattern}/."


def replace_with(text: str) -> str:
    return f'Replace the whole text with "{text}".'


# Each form as a regular expression; the first group is the argument.
_FORMS = (
    ("add", re.compile(r'Add the word "([^"]+)"')),
    ("remove", re.compile(r'Remove the word "([^"]+)"')),
    ("keep", re.compile(r'Keep the word "([^"]+)"')),
    ("at_most", re.compile(r"Shorten the text to at most (\d+) words?(?: \(it has (\d+)\))?")),
    ("at_least", re.compile(r"Lengthen the text to at least (\d+) words?(?: \(it has (\d+)\))?")),
    ("pattern", re.compile(r"Make the text match the pattern /(.*)/\.?\s*$")),
    ("replace", re.compile(r'Replace the whole text with "(.*)"\.?\s*$', re.DOTALL)),
)


def parse(feedback: str) -> list[Instruction]:
    """The instructions in a feedback text, in order; unreadable lines become notes."""
    if not isinstance(feedback, str):
        raise TypeError(f"feedback must be a str; got {type(feedback).__name__}.")
    instructions = []
    for line in feedback.splitlines():
        line = line.strip()
        if not line:
            continue
        for kind, form in _FORMS:
            match = form.search(line)
            if match:
                argument = match.group(1)
                if kind in ("at_most", "at_least"):
                    # (limit, words the judged text had, or None when not said)
                    now = match.group(2)
                    argument = (int(argument), int(now) if now else None)
                instructions.append(Instruction(kind, argument))
                break
        else:
            instructions.append(Instruction("note", line))
    return instructions


def words_of(text: str) -> list[str]:
    """The words of a text: runs of letters, digits, apostrophes and hyphens that hold at
    least one letter or digit ("well-known" is one word; a lone "-" or "|" is none)."""
    return re.findall(r"[\w'-]*\w[\w'-]*", text)


def contains_word(text: str, word: str) -> bool:
    """Whether `word` occurs in `text` as a whole word, ignoring case."""
    return re.search(rf"(?<![\w'-]){re.escape(word)}(?![\w'-])", text, re.IGNORECASE) is not None


def route(
    feedback: str, inputs: list[tuple[str, str]], trainable: list[bool] | None = None
) -> list[str]:
    """Share a feedback text on a whole out among its parts, given as (role, text) pairs.

    Like a Jacobian, each line goes where it can act, in the part's own terms:
    - a line naming a part's role in brackets ("[title] ...") goes to that part;
    - "Remove the word X" goes to the parts that contain X;
    - "Add the word X", or a pattern for the end, goes to the last trainable part; a
      pattern for the start (^...) to the first;
    - a word limit becomes the part's own: the whole's excess (or shortfall) is asked of
      the longest (or last) trainable part, with the limit restated for that part;
    - anything else concerns the whole and goes to every part.
    Returns one feedback text per part ("" for none).
    """
    if trainable is None:
        trainable = [True] * len(inputs)
    candidates = [i for i, ok in enumerate(trainable) if ok] or list(range(len(inputs)))
    shares: list[list[str]] = [[] for _ in inputs]
    for line in feedback.splitlines():
        if not line.strip():
            continue
        targets = [i for i, (role, _) in enumerate(inputs) if role and f"[{role}]" in line]
        if targets:
            for index in targets:
                shares[index].append(line)
            continue
        instructions = parse(line)
        instruction = instructions[0] if instructions else Instruction("note", line)
        if instruction.kind == "remove":
            word = str(instruction.argument)
            targets = [i for i, (_, text) in enumerate(inputs) if contains_word(text, word)]
        elif instruction.kind == "add" or (
            instruction.kind == "pattern" and not str(instruction.argument).startswith("^")
        ):
            targets = candidates[-1:]
        elif instruction.kind == "pattern":
            targets = candidates[:1]
        elif instruction.kind in ("at_most", "at_least"):
            index, line = _restated_limit(instruction, inputs, candidates)
            targets = [index]
        for index in targets or range(len(inputs)):
            shares[index].append(line)
    return ["\n".join(lines) for lines in shares]


def _restated_limit(
    instruction: Instruction, inputs: list[tuple[str, str]], candidates: list[int]
) -> tuple[int, str]:
    """Which part should meet a word limit of the whole, and the limit in its own terms."""
    limit, whole = instruction.argument
    counts = [len(words_of(text)) for _, text in inputs]
    if whole is None:
        whole = sum(counts)
    if instruction.kind == "at_most":
        # The longest trainable part has the most words to give (ties: the last one).
        index = max(reversed(candidates), key=lambda i: counts[i])
        own_limit = max(counts[index] - (whole - limit), 0)
        return index, at_most_words(own_limit, counts[index])
    index = candidates[-1]
    own_limit = counts[index] + (limit - whole)
    return index, at_least_words(own_limit, counts[index])

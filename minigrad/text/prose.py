"""Prose: the little grammar the RuleBasedEngine uses to edit a text written as sentences.

A text such as "The kettle is good and it is also very good for tea." is read into
sentences, each a list of clauses, each a list of words:

- a sentence ends with ".", "!" or "?";
- a clause starts the sentence, or follows a semicolon, or follows a comma or a joining
  word ("and", "but", ...) when a new subject comes next ("and it is ...", ", you ..."),
  or follows a comma before a short list that ends the sentence (", durable and cheap");
  the first clause of a sentence is its main clause;
- a phrase is a stretch of a clause that starts with a preposition or with "that",
  "which", "who" ("for hours", "that boils water"): a detail the clause can do without.

The edits then remove or keep whole units, so that the result still reads as sentences:

- removing a word drops the clause that holds it, unless it is the main clause or holds
  a word to keep; there the word goes with its modifiers ("very good"), and the words to
  add take its place ("The kettle is good" -> "The kettle is durable and cheap");
- words to add that found no such place join the end of the last sentence as a list
  ("..., durable and cheap", or "... and concise" after a clause with "is" or "are");
- shortening drops modifiers ("very", "really"), then whole clauses, sentences and
  phrases that hold no word to keep, the last ones first, then words from lists ("brief,
  polite and detailed" -> "brief and polite"), then a main clause that holds no word to
  keep when another clause follows it; only if that is not enough does it cut words at
  the end of a clause's first part, and then any word not kept;
- tidying an edited clause leaves it ending on no word that needs one after it ("and",
  "is", "the", "for", ...), drops it if only such words and pronouns are left ("it is"),
  and removes a word said twice in a row; each sentence starts with a capital letter and
  the text ends with a mark.

It knows short word lists, not meaning: it cannot tell a noun from an adjective, so what
it writes is grammatical in the common cases, not always. It never guesses: the same text
and edits always give the same result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from minigrad.text import feedback as language

# Joining words that start a new clause when a subject follows them ("and it is ...").
CONJUNCTIONS = ("and", "but", "or", "so", "yet", "because", "while")
# Words that can start a clause: pronouns and determiners ("it", "you", "the", ...).
SUBJECTS = (
    "i", "you", "he", "she", "it", "we", "they", "there", "this", "that", "these", "those",
    "the", "a", "an", "my", "your", "our", "their", "its", "his", "which", "who",
)  # fmt: skip
COPULAS = ("is", "are", "was", "were", "am", "be", "been")
# Modifiers go with the word they modify, and go first when a text must get shorter.
MODIFIERS = ("very", "really", "truly", "quite", "extremely", "just", "also")
PREPOSITIONS = (
    "for", "in", "on", "at", "with", "without", "by", "from", "to", "of", "about", "into",
    "over", "under", "through", "during", "before", "after",
)  # fmt: skip
RELATIVES = ("that", "which", "who")
# A phrase (a detail a clause can lose) starts with a preposition or a relative pronoun.
PHRASE_STARTERS = (*PREPOSITIONS, *RELATIVES)
DETERMINERS = (
    "a", "an", "the", "this", "these", "those", "my", "your", "our", "their", "its", "all",
    "every", "each", "no",
)  # fmt: skip
# Words a clause cannot end on: each needs a word after it.
DANGLING = frozenset(
    (*CONJUNCTIONS, *COPULAS, *MODIFIERS, *PREPOSITIONS, *DETERMINERS, *RELATIVES)
    + ("not", "i", "we", "they", "he", "she")
)
# A clause made of these words only says nothing ("it is", "and you").
FUNCTION_WORDS = DANGLING | {"it", "you", "there"}
# Words added, as a list, when prose must get longer (it has no model to invent content).
PADDING = ("simple", "clear", "useful", "reliable", "practical", "friendly", "modern", "light")

_END_MARK = re.compile(r"[.!?]+[\"')\]]*$")


@dataclass
class Clause:
    """Words with a subject and verb of their own, or the start of a sentence.

    `joiner` is what attaches the clause to the one before it, as written right after
    that clause: "" for a sentence's first clause, "," or ";" or " and" or ", but", ...
    """

    joiner: str
    words: list[str]
    added: bool = False  # made, in this rewrite, of words the engine was asked to add
    edited: bool = False  # lost words in this rewrite, so it may need tidying


@dataclass
class Sentence:
    """Clauses, and the mark that ends the sentence ("." "!" "?", or "" for none yet)."""

    clauses: list[Clause] = field(default_factory=list)
    end: str = ""


def core(word: str) -> str:
    """A word without the punctuation around it, in lower case: "(Cheap!" -> "cheap"."""
    return re.sub(r"^\W+|\W+$", "", word).lower()


def word_count(words: list[str]) -> int:
    """How many words WordCount sees in these tokens (a lone "-" is not a word)."""
    return sum(len(language.words_of(word)) for word in words)


def as_list(items: list[str], *, final_and: bool = True) -> list[str]:
    """Items written as a list: ["a"], ["a", "and", "b"], ["a,", "b", "and", "c"]."""
    if not final_and or len(items) < 2:
        return [item + "," for item in items[:-1]] + items[-1:]
    return [item + "," for item in items[:-2]] + [items[-2], "and", items[-1]]


def list_items(words: list[str]) -> list[str] | None:
    """The items, if `words` are one word or a list as as_list writes it; else None."""
    if len(words) == 1:
        return list(words)
    start = trailing_list_start(words)
    return None if start != 0 else _items(words)


def trailing_list_start(words: list[str]) -> int | None:
    """Where a list that ends `words` starts ("... is durable and cheap" -> the index of
    "durable"); None if `words` do not end with one."""
    spans = _lists_in(words)
    return spans[-1][0] if spans and spans[-1][1] == len(words) else None


def strip_word(text: str, word: str) -> str:
    """`text` without `word` (any case): a token that is the word with punctuation around it
    ("Cheap!") goes whole; inside a token ("cheap/fast") only the word goes."""
    escaped = re.escape(word)
    removed = re.sub(rf"(?<!\S)[^\w\s]*{escaped}[^\w\s]*(?!\S)", "", text, flags=re.IGNORECASE)
    removed = re.sub(rf"(?<![\w'-]){escaped}(?![\w'-])", "", removed, flags=re.IGNORECASE)
    if removed == text:
        return text
    removed = re.sub(r"[ \t]{2,}", " ", removed)
    return re.sub(r"[ \t]+\n", "\n", removed).strip()


class Prose:
    """A text read as sentences of clauses, edited clause by clause (see the module doc).

    `keep` holds the words (lower case) no edit may drop. `changed` says whether any edit
    changed the text, so that an untouched text can be returned exactly as it was.
    """

    def __init__(self, text: str, keep: set[str]) -> None:
        self.sentences = parse(text)
        self.keep = keep
        self.changed = False
        self._to_add: list[str] = []  # words to add, waiting for the place of a removed word
        self._placed: list[str] = []  # words to add that took such a place
        self._prefixed = False  # a pattern put a literal first: leave its case alone

    # ------------------------------------------------------------------ the edits

    def remove(self, word: str, replacement: list[str]) -> None:
        """Remove `word`: a clause other than the main one goes whole (a list after a comma
        loses only the item); in the main clause, or one holding a word to keep, the word
        goes with its modifiers, and the first place it leaves gets `replacement`, the
        words to add, unless they already have a place."""
        if replacement and not self._placed:
            self._to_add = list(replacement)
        target = [core(part) for part in word.split()]
        for sentence in self.sentences:
            for index in range(len(sentence.clauses) - 1, -1, -1):
                clause = sentence.clauses[index]
                if _find(clause.words, target):
                    self._remove_from(sentence, index, target)
                elif any(language.contains_word(w, word) for w in clause.words):
                    # Inside a token ("cheap/fast"): only the word itself can go.
                    clause.words = [w for w in (strip_word(w, word) for w in clause.words) if w]
                    clause.edited = self.changed = True

    def add(self, words: list[str]) -> None:
        """Add the words that found no place in remove as a list at the end of the last
        sentence: they extend a list already there ("..., handmade" -> "..., handmade and
        ceramic", "is durable and cheap" -> "is durable, cheap and light") or make one."""
        placed = {word.lower() for word in self._placed}
        words = [word for word in words if word.lower() not in placed]
        if not words:
            return
        self.changed = True
        if not self.sentences:
            self.sentences.append(Sentence([Clause("", as_list(words), added=True)]))
            return
        last = self.sentences[-1].clauses[-1]
        if last.joiner.startswith(",") and list_items(last.words):
            last.words = as_list([*_items(last.words), *words])
            return
        start = trailing_list_start(last.words)
        if start is not None:
            last.words[start:] = as_list([*_items(last.words[start:]), *words])
            return
        self.sentences[-1].clauses.append(Clause(",", as_list(words), added=True))

    def prefix(self, words: list[str]) -> None:
        """Put `words` first (a pattern such as /^Meet/ asks for them), as they are written."""
        if not self.sentences:
            self.sentences.append(Sentence([Clause("", [])]))
        self.sentences[0].clauses[0].words[:0] = words
        self._prefixed = self.changed = True

    def shorten(self, limit: int) -> None:
        """At most `limit` words: drop modifiers, then whole clauses, sentences and phrases
        without a word to keep (the last ones first), then list items and main clauses,
        then cut clauses short."""
        count = self.count()
        if count <= limit:
            return
        self.changed = True
        count = self._drop_modifiers(count, limit)
        count = self._drop_clauses(count, limit)
        count = self._drop_sentences(count, limit)
        count = self._drop_phrases(count, limit)
        count = self._drop_list_items(count, limit)
        count = self._drop_main_clauses(count, limit)
        self._cut_words(count, limit)
        self.tidy()

    def lengthen(self, limit: int) -> None:
        """At least `limit` words: a list of padding words at the end ("..., simple, clear")."""
        missing = limit - self.count()
        if missing <= 0:
            return
        self.changed = True
        padding = [PADDING[i % len(PADDING)] for i in range(missing)]
        words = as_list(padding[:-1]) if missing >= 3 else as_list(padding, final_and=False)
        if not self.sentences:
            self.sentences.append(Sentence([Clause("", words)]))
        else:
            self.sentences[-1].clauses.append(Clause(",", words, added=True))

    def tidy(self) -> None:
        """Tidy every edited clause (see the module doc); drop empty clauses and sentences."""
        before = self.text()
        tidied = (self._tidy_sentence(sentence) for sentence in self.sentences)
        self.sentences = [sentence for sentence in tidied if sentence.clauses]
        self.changed = self.changed or self.text() != before

    def finish(self, end: str | None = None) -> None:
        """Give an edited text its final form: added lists joined, each sentence starting
        with a capital, the last one ending with a mark (`end` when given, e.g. "." for a
        text asked to end with a period). A text nothing changed is left as it is."""
        if end is not None and self.sentences and self.sentences[-1].end != end:
            self.sentences[-1].end = end
            self.changed = True
        if not self.changed:
            return
        self._join_added_lists()
        for number, sentence in enumerate(self.sentences):
            first = sentence.clauses[0].words
            if first and first[0][:1].islower() and not (number == 0 and self._prefixed):
                first[0] = first[0][0].upper() + first[0][1:]
        if self.sentences and not self.sentences[-1].end:
            self.sentences[-1].end = "."

    # ------------------------------------------------------------------ reading it

    def count(self) -> int:
        """Its words, as WordCount counts them."""
        return len(language.words_of(self.text()))

    def text(self) -> str:
        """The sentences written out, with single spaces."""
        return " ".join(_render(sentence) for sentence in self.sentences)

    # ------------------------------------------------------------------ removing

    def _is_kept(self, word: str) -> bool:
        return core(word) in self.keep

    def _holds_kept(self, words: list[str]) -> bool:
        return any(self._is_kept(word) for word in words)

    def _remove_from(self, sentence: Sentence, index: int, target: list[str]) -> None:
        """Remove `target` from the sentence's clause number `index`, as remove says."""
        clause = sentence.clauses[index]
        self.changed = True
        items = list_items(clause.words) if index > 0 and clause.joiner.startswith(",") else None
        if items and len(items) > 1 and len(target) == 1:
            # A list loses only the item: ", light and cheap" -> ", light".
            clause.words = as_list([item for item in items if core(item) != target[0]])
        elif index > 0 and not self._holds_kept(clause.words):
            del sentence.clauses[index]
        else:
            self._remove_inside(clause, target)

    def _remove_inside(self, clause: Clause, target: list[str]) -> None:
        """Remove each occurrence of `target` from a clause that stays, the last first."""
        clause.edited = True
        words = clause.words
        starts = _find(words, target)
        for position in reversed(starts):
            start, end = position, position + len(target)
            while start > 0 and core(words[start - 1]) in MODIFIERS:
                if self._is_kept(words[start - 1]):
                    break
                start -= 1
            if position == starts[0] and self._to_add:
                self._put_in_place(words, start, end)
                continue
            # "durable and good" and "good and durable" both become "durable".
            if start > 0 and core(words[start - 1]) in ("and", "or"):
                start -= 1
            elif end < len(words) and core(words[end]) in ("and", "or"):
                end += 1
            # "a sturdy, cheap mug" loses the comma with "cheap".
            if start > 0 and words[start - 1].endswith(",") and not words[end - 1].endswith(","):
                words[start - 1] = words[start - 1][:-1]
            del words[start:end]

    def _put_in_place(self, words: list[str], start: int, end: int) -> None:
        """The words to add replace words[start:end], written to fit in: next to an "and"
        they join its list ("good and fast" -> "durable, light and fast", "fast and good"
        -> "fast, durable and light")."""
        items, self._placed, self._to_add = self._to_add, self._to_add, []
        if end < len(words) and core(words[end]) in ("and", "or"):
            words[start:end] = as_list(items, final_and=False)
        elif len(items) > 1 and start > 1 and core(words[start - 1]) in ("and", "or"):
            words[start - 2] = words[start - 2].rstrip(",") + ","
            words[start - 1 : end] = as_list(items)
        else:
            words[start:end] = as_list(items)

    # ------------------------------------------------------------------ shortening

    def _drop_modifiers(self, count: int, limit: int) -> int:
        for sentence in self.sentences:
            for clause in sentence.clauses:
                for position in range(len(clause.words) - 1, -1, -1):
                    word = clause.words[position]
                    if count > limit and core(word) in MODIFIERS and not self._is_kept(word):
                        count -= word_count([clause.words.pop(position)])
                        clause.edited = True
        return count

    def _drop_clauses(self, count: int, limit: int) -> int:
        for sentence in reversed(self.sentences):
            for index in range(len(sentence.clauses) - 1, 0, -1):
                clause = sentence.clauses[index]
                if count > limit and not self._holds_kept(clause.words):
                    count -= word_count([clause.joiner, *clause.words])
                    del sentence.clauses[index]
        return count

    def _drop_sentences(self, count: int, limit: int) -> int:
        for index in range(len(self.sentences) - 1, 0, -1):
            words = [w for clause in self.sentences[index].clauses for w in clause.words]
            if count > limit and not self._holds_kept(words):
                count -= len(language.words_of(_render(self.sentences[index])))
                del self.sentences[index]
        return count

    def _drop_phrases(self, count: int, limit: int) -> int:
        """Drop or shorten phrases without a word to keep, the last first.

        A phrase of at most four words that starts with a preposition ("for hours", "in
        glazed ceramic") goes whole: cut short, it would lose its noun. A relative phrase
        ("that keeps water cold all day") goes whole too, unless losing its end is enough.
        A longer prepositional phrase may hold the clause's verb ("in glazed ceramic keeps
        your coffee hot all day": the engine cannot see where the phrase ends), so it only
        loses its end, keeping three words.
        """
        for sentence in reversed(self.sentences):
            for clause in reversed(sentence.clauses):
                starts = [i for i, w in enumerate(clause.words) if i and core(w) in PHRASE_STARTERS]
                for start, end in reversed(list(zip(starts, [*starts[1:], len(clause.words)]))):
                    phrase = clause.words[start:end]
                    if count <= limit or self._holds_kept(phrase):
                        continue
                    clause.edited = True
                    relative = core(phrase[0]) in RELATIVES
                    if (relative and len(phrase) - (count - limit) < 3) or (
                        not relative and len(phrase) <= 4
                    ):
                        count -= word_count(phrase)
                        del clause.words[start:end]
                        continue
                    while count > limit and end - start > 3:
                        end -= 1
                        count -= word_count([clause.words.pop(end)])
                    dangling = self._drop_dangling_before(clause.words, end)
                    count -= word_count(dangling)
                    end -= len(dangling)
                    if relative and end - start < 3:  # "that keeps": too little left
                        count -= word_count(clause.words[start:end])
                        del clause.words[start:end]
        return count

    def _drop_list_items(self, count: int, limit: int) -> int:
        """Drop words listed with "and" that are not kept, the last first: "a brief,
        polite and detailed way" -> "a brief and polite way" -> "a brief way"."""
        for sentence in reversed(self.sentences):
            for clause in reversed(sentence.clauses):
                for start, end in reversed(_lists_in(clause.words)):
                    items = _items(clause.words[start:end])
                    while count > limit and len(items) > 1:
                        loose = [item for item in items if not self._is_kept(item)]
                        if not loose:
                            break
                        items.remove(loose[-1])
                        before = word_count(clause.words[start:end])
                        clause.words[start:end] = as_list(items)
                        end = start + len(as_list(items))
                        count -= before - word_count(clause.words[start:end])
                        clause.edited = True
        return count

    def _drop_main_clauses(self, count: int, limit: int) -> int:
        """Drop a main clause without a word to keep when a clause of its own follows it:
        "The kettle boils fast, and it is made of steel." -> "It is made of steel."."""
        for sentence in reversed(self.sentences):
            clauses = sentence.clauses
            if count > limit and len(clauses) > 1 and not self._holds_kept(clauses[0].words):
                count -= word_count([*clauses[0].words, clauses[1].joiner])
                del clauses[0]
                clauses[0].joiner = ""
        return count

    def _cut_words(self, count: int, limit: int) -> None:
        """Cut the end of each clause's first part (its words before its first phrase), the
        last clause first: its last word goes with the words before it that need it
        ("every question"), as long as two words are left (a subject and a verb, with
        luck) and no kept word, or word after one ("handmade mug"), is touched. If that
        is not enough, any word not kept goes, from the end."""
        for sentence in reversed(self.sentences):
            for clause in reversed(sentence.clauses):
                words = clause.words
                head = _head_length(words)
                while count > limit:
                    cut = head - 1
                    while cut > 0 and core(words[cut - 1]) in DANGLING:
                        cut -= 1
                    if cut < 2 or self._holds_kept(words[cut - 1 : head]):
                        break
                    count -= word_count(words[cut:head])
                    del words[cut:head]
                    head = cut
                    clause.edited = True
        for sentence in reversed(self.sentences):
            for clause in reversed(sentence.clauses):
                for position in range(len(clause.words) - 1, -1, -1):
                    if count > limit and not self._is_kept(clause.words[position]):
                        count -= word_count([clause.words.pop(position)])
                        clause.edited = True

    def _drop_dangling_before(self, words: list[str], position: int) -> list[str]:
        """After a cut at `position`, drop the words before it that need a word after them
        ("keeps your |" -> "keeps |"), as tidy does at a clause's end; returns them."""
        dropped: list[str] = []
        while position > 1 and core(words[position - 1]) in DANGLING:
            if self._is_kept(words[position - 1]):
                break
            position -= 1
            dropped.insert(0, words.pop(position))
        return dropped

    # ------------------------------------------------------------------ tidying

    def _tidy_sentence(self, sentence: Sentence) -> Sentence:
        clauses = [clause for clause in sentence.clauses if self._tidy_clause(clause)]
        if clauses and clauses[0].joiner:
            # Its first clause went: the next one starts the sentence, without "and".
            first = clauses[0]
            first.joiner = ""
            while first.words and core(first.words[0]) in CONJUNCTIONS:
                if self._is_kept(first.words[0]):
                    break
                first.words.pop(0)
        return Sentence([clause for clause in clauses if clause.words], sentence.end)

    def _tidy_clause(self, clause: Clause) -> bool:
        """Tidy an edited clause in place; False when nothing worth saying is left."""
        if not clause.edited:
            return bool(clause.words)
        words = clause.words
        words[:] = [w for i, w in enumerate(words) if i == 0 or core(w) != core(words[i - 1])]
        while words and core(words[-1]) in DANGLING and not self._is_kept(words[-1]):
            words.pop()
        if words and words[-1].endswith((",", ";", ":")):
            words[-1] = words[-1][:-1]
        return not all(core(w) in FUNCTION_WORDS and not self._is_kept(w) for w in words)

    def _join_added_lists(self) -> None:
        """A list of one added word joins a clause with "is" or "are" by "and" ("You are a
        helpful assistant and concise"); any other list follows a comma."""
        for sentence in self.sentences:
            for index, clause in enumerate(sentence.clauses):
                if not clause.added or index == 0:
                    continue
                before = sentence.clauses[index - 1].words
                if len(clause.words) == 1 and any(core(w) in COPULAS for w in before):
                    clause.joiner = " and"
                else:
                    clause.joiner = ","


def parse(text: str) -> list[Sentence]:
    """`text` as sentences of clauses (see the module doc)."""
    return [Sentence(_clauses(tokens), end) for tokens, end in _split_sentences(text.split())]


def _split_sentences(tokens: list[str]) -> list[tuple[list[str], str]]:
    """The tokens of each sentence, and the mark that ends it ("" for none)."""
    sentences, current = [], []
    for token in tokens:
        mark = _END_MARK.search(token)
        if not mark:
            current.append(token)
            continue
        if mark.start() > 0:
            current.append(token[: mark.start()])
        if current:
            sentences.append((current, mark.group()))
        current = []
    if current:
        sentences.append((current, ""))
    return sentences


def _clauses(tokens: list[str]) -> list[Clause]:
    """A sentence's tokens as clauses (see the module doc)."""
    clauses = [Clause("", [])]
    joiner = ""  # a comma or semicolon that ended the last token and starts a new clause
    for index, token in enumerate(tokens):
        following = core(tokens[index + 1]) if index + 1 < len(tokens) else ""
        if joiner:
            if core(token) in CONJUNCTIONS:
                clauses.append(Clause(f"{joiner} {token}", []))
                joiner = ""
                continue
            clauses.append(Clause(joiner, []))
            joiner = ""
        elif clauses[-1].words and core(token) in CONJUNCTIONS and following in SUBJECTS:
            clauses.append(Clause(f" {token}", []))
            continue
        # A list that ends the sentence is short: only the last few tokens are looked at.
        rest = tokens[index + 1 :] if len(tokens) - index <= 8 else []
        if token.endswith(";") or (
            token.endswith(",")
            and (following in CONJUNCTIONS or following in SUBJECTS or list_items(rest))
        ):
            joiner = token[-1]
            token = token[:-1]
        clauses[-1].words.append(token)
    return [clause for clause in clauses if clause.words]


def _items(words: list[str]) -> list[str]:
    """The items of a list as as_list writes it: ["a,", "b", "and", "c"] -> [a, b, c]."""
    return [word.rstrip(",") for word in words if word.lower() != "and"]


def _lists_in(words: list[str]) -> list[tuple[int, int]]:
    """Where lists of different single words joined by "and" are: (start, end) pairs."""
    spans = []
    for index, word in enumerate(words):
        if word.lower() != "and" or index == 0 or index + 1 >= len(words):
            continue
        start = index - 1
        while start > 0 and words[start - 1].endswith(",") and words[start - 1] != ",":
            start -= 1
        items = [core(item) for item in _items(words[start : index + 2])]
        plain = all(item and item not in FUNCTION_WORDS for item in items)
        if plain and not words[index - 1].endswith(",") and len(set(items)) == len(items):
            spans.append((start, index + 2))
    return spans


def _find(words: list[str], target: list[str]) -> list[int]:
    """Where the words `target` (lower case) start in `words`."""
    size = len(target)
    return [
        i for i in range(len(words) - size + 1) if [core(w) for w in words[i : i + size]] == target
    ]


def _head_length(words: list[str]) -> int:
    """How many words come before the clause's first phrase."""
    for index, word in enumerate(words):
        if index and core(word) in PHRASE_STARTERS:
            return index
    return len(words)


def _render(sentence: Sentence) -> str:
    parts = []
    for clause in sentence.clauses:
        if not clause.words:
            continue
        text = " ".join(clause.words)
        parts.append(f"{clause.joiner} {text}" if parts else text)
    return "".join(parts) + sentence.end if parts else ""

"""Text analysis for the built-in search: split identifiers and prose into terms, drop stopwords, stem.

One analyzer serves both sides of the index, so a document term and a query term meet only when they were
produced by the same steps:

1. split on anything that is not a letter or digit, and inside words on camelCase boundaries
   (``getMemberDeliveryDetail`` -> get member delivery detail; ``HTTPServer`` -> http server; ``v1`` -> v 1);
2. lowercase; drop one-letter words and stopwords (a generic English list plus request fillers such as
   "please");
3. stem with the Snowball English stemmer (Porter2, PyStemmer), so "deliveries" and "delivery", "movies" and
   "movie", "created" and "create" meet, and "news" stays "news".

Analyzing is memoized per surface word: API specs and query sets repeat the same words many times.
PyStemmer is used only in this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import filterfalse
from string import ascii_lowercase

import Stemmer  # PyStemmer: the Snowball stemmers in C

# A lowercase word | a capital and then: a lowercase word, or an uppercase run that stops before a capitalized
# word ("HTTP" in HTTPServer), or an uppercase run | digits. "Lowercase" is any letter but A-Z, so accented and
# non-Latin words stay whole. ASCII text (most specs) uses the same pattern with plain ASCII classes, about twice
# as fast. Both split as "[A-Z]+(?=[A-Z]L)|[A-Z]?L+|[A-Z]+|[0-9]+" (L: lowercase), alternatives tried in that
# order, would (tests/engine/test_text.py), with less backtracking.
_WORD = re.compile(r"[^\W\d_A-Z]+|[A-Z](?:[^\W\d_A-Z]+|[A-Z]*(?=[A-Z][^\W\d_A-Z])|[A-Z]*)|[0-9]+")
_ASCII_WORD = re.compile(r"[a-z]+|[A-Z](?:[a-z]+|[A-Z]*(?=[A-Z][a-z])|[A-Z]*)|[0-9]+")


def _split(text: str) -> list[str]:
    """The surface words of ``text`` (case kept)."""
    return (_ASCII_WORD if text.isascii() else _WORD).findall(text)


# fmt: off
STOPWORDS: frozenset[str] = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "anyone",
    "anything", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "etc", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
    "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "kindly",
    "let", "may", "me", "might", "more", "most", "must", "my", "myself", "no", "nor", "not", "of", "off",
    "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "please",
    "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
    "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "very", "via", "want", "wanted", "wants", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "within", "without", "would",
    "you", "your", "yours", "yourself", "yourselves",
))
# fmt: on

# what an ASCII text's kept words leave out: the stopwords and the one-letter words (one digit is kept)
_ASCII_DROPPED: frozenset[str] = STOPWORDS | frozenset(ascii_lowercase)
_CACHE_LIMIT = 200_000


_STEMMER = Stemmer.Stemmer("english")
_STEM_CACHE = 100_000  # PyStemmer's own per-word cache; the Analyzer memoizes words anyway
_STEMMER.maxCacheSize = _STEM_CACHE


def stem(word: str) -> str:
    """The Snowball English (Porter2) stem of a lowercase word: "movies" -> "movi", "news" -> "news"."""
    return _STEMMER.stemWord(word)  # type: ignore[no-any-return]


def stems(words: list[str]) -> list[str]:
    """``stem`` of each of ``words``, in order (one call into C for the whole list)."""
    return _STEMMER.stemWords(words)  # type: ignore[no-any-return]


class Analyzer:
    """Turns text into terms, memoizing each surface word's term. One instance per index.

    ``memo`` maps each surface word (case kept) to its term, and is read directly on hot paths.
    """

    __slots__ = ("_by_lower", "_kept", "memo")

    def __init__(self) -> None:
        self.memo: dict[str, str] = {}  # surface word (case kept) -> term; read directly on hot paths
        self._kept: dict[str, str] = {}  # surface word (case kept) -> lowercase, '' when dropped; as memo
        self._by_lower: dict[str, str] = {}  # lowercase word -> term, for the words memo has

    def term(self, word: str) -> str:
        """The term for one surface word ('' for a stopword or a one-letter word)."""
        found = self.memo.get(word)
        if found is None:
            if len(self.memo) > _CACHE_LIMIT:
                self.memo.clear()
                self._kept.clear()
                self._by_lower.clear()
            found = self._new(word)
        return found

    def _new(self, word: str) -> str:
        lower = word.lower()
        found = "" if (len(lower) < 2 and not lower.isdigit()) or lower in STOPWORDS else stem(lower)
        self.memo[word] = found
        self._kept[word] = lower if found else ""
        self._by_lower[lower] = found
        return found

    def _fill(self, words: Iterable[str]) -> dict[str, str]:
        """The memo, with a term for each of ``words`` (cleared first when it is full)."""
        memo = self.memo
        new = set(words).difference(memo)
        if new:
            if len(memo) + len(new) > _CACHE_LIMIT:
                memo.clear()
                self._kept.clear()
                self._by_lower.clear()
                new = set(words)
            for word in new:
                self._new(word)
        return memo

    def terms(self, text: str) -> list[str]:
        """The terms of ``text``, in order, repeats kept."""
        memo = self.memo
        out: list[str] = []
        for word in _split(text):
            found = memo.get(word)
            if found is None:
                found = self.term(word)
            if found:
                out.append(found)
        return out

    def lowercase_terms(self, words: Iterable[str]) -> list[str]:
        """The term of each lowercase word (a look-up when the word or a capitalized form was seen)."""
        by_lower, term = self._by_lower, self.term
        return [found if (found := by_lower.get(word)) is not None else term(word) for word in words]

    def kept_words(self, text: str) -> list[str]:
        """The lowercase words of ``text`` that have a term, in order (stopwords and one-letter words left out):
        the words behind ``terms(text)``. The per-word work runs in C: for ASCII text (most specs) the words are
        lowercased by one ``str.lower`` of their joined text and filtered against ``_ASCII_DROPPED``."""
        if text.isascii():
            lowered = " ".join(_ASCII_WORD.findall(text)).lower().split()
            return list(filterfalse(_ASCII_DROPPED.__contains__, lowered))
        words = _WORD.findall(text)
        try:
            kept = list(map(self._kept.__getitem__, words))
        except KeyError:  # a word seen for the first time
            self._fill(words)
            kept = list(map(self._kept.__getitem__, words))
        return list(filter(None, kept)) if "" in kept else kept

    def split(self, text: str) -> list[str]:
        """The surface words of ``text`` (case kept), before stopwords and stemming."""
        return _split(text)

    def words(self, text: str) -> list[tuple[str, str]]:
        """(lowercase surface word, term) pairs of ``text``; stopwords are kept with an empty term."""
        return [(word.lower(), self.term(word)) for word in _split(text)]


def split_words(text: str) -> list[str]:
    """The lowercase words of ``text`` split on separators and camelCase, nothing dropped."""
    if text.isascii():  # one lower() over the joined words (C) instead of one call per word
        return " ".join(_ASCII_WORD.findall(text)).lower().split()
    return [word.lower() for word in _WORD.findall(text)]


def normalize_name(name: str) -> str:
    """A parameter or entity name without case, ``_``, ``-``, spaces or dots: ``member_no`` == ``memberNo``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())

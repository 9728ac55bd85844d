"""Rescue misspelt query words: find the vocabulary word a query word most likely meant.

Only words whose term is not in the index vocabulary are looked up. The candidates are the vocabulary words
one insertion, deletion, substitution or adjacent transposition away (``Speller._candidates``), ranked with
``qlab.adapters.fuzzy``: highest similarity first, then the most frequent word, then alphabetically.

Only non-words are corrected, and only with confidence:

- short words never: below ``MIN_LENGTH`` letters one edit makes most words another ("cart" -> "card");
- real English words never ("pending" is not a typo of "opening"): a word of the packaged English word list
  (``english_words.txt.gz``, SCOWL; see ``english_words.NOTICE``) is left alone;
- one typo at most ("bitrhday" -> "birthday"), two from ``LONG_WORD`` letters; a made-up "scofp" is two edits
  from "scope" and stays as it is;
- one answer: when two vocabulary words of different stems are equally close, nothing is corrected.
"""

from __future__ import annotations

import gzip
from collections.abc import Collection, Mapping
from pathlib import Path

from qlab.adapters import fuzzy
from qlab.engine.text import stem

MIN_LENGTH = 5  # letters; shorter words are not corrected
MIN_SIMILARITY = 0.8  # rapidfuzz normalized similarity (0-1) a correction must reach
SCANS_PER_WORD = 0.25  # lookups by scanning, per vocabulary word, before the deletion index is built
LONG_WORD = 9  # letters from which a word may carry two typos
WORDS_FILE = Path(__file__).with_name("english_words.txt.gz")
_ENGLISH: list[frozenset[str]] = []


def english_words() -> frozenset[str]:
    """The packaged English words of five letters or more (read once)."""
    if not _ENGLISH:
        with gzip.open(WORDS_FILE, "rt", encoding="utf-8") as handle:
            _ENGLISH.append(frozenset(handle.read().split()))
    return _ENGLISH[0]


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class Speller:
    """Corrections against a fixed vocabulary of surface words (lowercase), each with a frequency."""

    __slots__ = (
        "_by_length",
        "_frequency",
        "_index",
        "_memo",
        "_scans_left",
        "_windows",
        "_words",
        "english",
        "min_length",
        "min_similarity",
    )

    def __init__(
        self,
        frequency: Mapping[str, int],
        *,
        min_length: int = MIN_LENGTH,
        min_similarity: float = MIN_SIMILARITY,
        scans_per_word: float = SCANS_PER_WORD,
        english: Collection[str] | None = None,
    ) -> None:
        self._frequency = dict(frequency)
        self.english = english_words() if english is None else english  # words never corrected
        self.min_length = min_length
        self.min_similarity = min_similarity
        self._memo: dict[str, str | None] = {}
        # the words a correction can be: long enough (one deletion from min_length) and made of letters
        self._words = [word for word in self._frequency if len(word) >= min_length - 1 and word.isalpha()]
        self._by_length: dict[int, list[str]] = {}
        self._windows: dict[int, list[str]] = {}  # length -> the words of that length, one less or one more
        self._index: dict[str, list[str]] | None = None
        self._scans_left = int(scans_per_word * len(self._words))

    def correct(self, word: str) -> str | None:
        """The vocabulary word ``word`` was most likely meant to be, or None (too short, or nothing close)."""
        if word in self._memo:
            return self._memo[word]
        found = self._lookup(word)
        self._memo[word] = found
        return found

    def _lookup(self, word: str) -> str | None:
        if (
            len(word) < self.min_length
            or not word.isalpha()
            or word in self._frequency
            or word in self.english
        ):
            return None
        limit = 2 if len(word) >= LONG_WORD else 1
        ranked: list[tuple[int, float, int, str]] = []
        for candidate in self._candidates(word):
            distance = fuzzy.typo_distance(word, candidate, limit=limit)
            if distance > limit:
                continue
            similarity = fuzzy.similarity(word, candidate)
            if similarity >= self.min_similarity:
                ranked.append((distance, -similarity, -self._frequency[candidate], candidate))
        if not ranked:
            return None
        ranked.sort()
        best = ranked[0]
        # equally close words of another stem: no confident answer
        if any(r[0] == best[0] and stem(r[3]) != stem(best[3]) for r in ranked[1:]):
            return None
        return best[3]

    def _candidates(self, word: str) -> Collection[str]:
        """The vocabulary words within an Indel distance of 2 of ``word`` whose length differs by at most one
        (those a correction can reach: at least ``min_similarity``, for the scan).

        The first lookups scan the words of the right lengths with rapidfuzz (no set-up cost); after
        ``SCANS_PER_WORD`` lookups per vocabulary word, a deletion-neighbourhood index (every word and every
        word one character shorter) pays for itself and a lookup becomes a few dict look-ups."""
        if self._index is None and self._scans_left > 0:
            self._scans_left -= 1
            window = self._window(len(word))
            if not window:
                return ()
            size = len(word)
            # fuzz.ratio is 1 - indel / (len(a) + len(b)): the Indel distance is read back from it
            return [
                choice
                for choice, ratio in fuzzy.best_matches(
                    word, window, limit=len(window), cutoff=100.0 * self.min_similarity - 1e-6
                )
                if round((1.0 - ratio) * (size + len(choice))) <= 2
            ]
        index = self._index if self._index is not None else self._build()
        candidates: set[str] = set(index.get(word, ()))
        for key in _deletes(word):
            candidates.update(index.get(key, ()))
        return candidates

    def _window(self, size: int) -> list[str]:
        """The words of length ``size``, one less or one more."""
        found = self._windows.get(size)
        if found is None:
            if not self._by_length:  # the words by length, read once
                for word in self._words:
                    self._by_length.setdefault(len(word), []).append(word)
            by_length = self._by_length
            found = self._windows[size] = [
                *by_length.get(size - 1, ()),
                *by_length.get(size, ()),
                *by_length.get(size + 1, ()),
            ]
        return found

    def _build(self) -> dict[str, list[str]]:
        index: dict[str, list[str]] = {}
        for word in self._words:
            index.setdefault(word, []).append(word)
            for key in _deletes(word):
                index.setdefault(key, []).append(word)
        self._index = index
        return index

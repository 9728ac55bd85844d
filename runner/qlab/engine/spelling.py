"""Rescue misspelt query words: find the vocabulary word a query word most likely meant.

Only words whose term is not in the index vocabulary are looked up. Candidates come from a
deletion-neighbourhood index (every vocabulary word and every word one character shorter than it), which
finds all words within one insertion, deletion, substitution or adjacent transposition in a few dict look-ups,
instead of comparing against the whole vocabulary. The candidates are then ranked with ``qlab.fuzzy``
(rapidfuzz): highest similarity first, then the most frequent word, then alphabetical order.

Short words are never corrected: below ``min_length`` (5) letters one edit turns most words into another real
word ("give" -> "given", "cart" -> "card"), so a correction would be a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from qlab import fuzzy

MIN_LENGTH = 5  # letters; shorter words are not corrected
MIN_SIMILARITY = 0.8  # rapidfuzz normalized similarity (0-1) a correction must reach


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class Speller:
    """Corrections against a fixed vocabulary of surface words (lowercase), each with a frequency."""

    __slots__ = ("_frequency", "_index", "_memo", "min_length", "min_similarity")

    def __init__(
        self,
        frequency: Mapping[str, int],
        *,
        min_length: int = MIN_LENGTH,
        min_similarity: float = MIN_SIMILARITY,
    ) -> None:
        self._frequency = dict(frequency)
        self.min_length = min_length
        self.min_similarity = min_similarity
        self._memo: dict[str, str | None] = {}
        index: dict[str, list[str]] = {}
        for word in self._frequency:
            if len(word) < min_length - 1 or not word.isalpha():
                continue
            index.setdefault(word, []).append(word)
            for key in _deletes(word):
                index.setdefault(key, []).append(word)
        self._index = index

    def correct(self, word: str) -> str | None:
        """The vocabulary word ``word`` was most likely meant to be, or None (too short, or nothing close)."""
        if word in self._memo:
            return self._memo[word]
        found = self._lookup(word)
        self._memo[word] = found
        return found

    def _lookup(self, word: str) -> str | None:
        if len(word) < self.min_length or not word.isalpha() or word in self._frequency:
            return None
        index = self._index
        candidates: set[str] = set(index.get(word, ()))
        for key in _deletes(word):
            candidates.update(index.get(key, ()))
        ranked: list[tuple[float, int, str]] = []
        for candidate in candidates:
            # one edit is the neighbourhood's promise; Levenshtein counts a transposition as two
            if fuzzy.edit_distance(word, candidate, limit=2) > 2:
                continue
            similarity = fuzzy.similarity(word, candidate)
            if similarity >= self.min_similarity:
                ranked.append((-similarity, -self._frequency[candidate], candidate))
        return min(ranked)[2] if ranked else None

"""rapidfuzz, behind one module: "Did you mean …?" suggestions and fuzzy term matching.

rapidfuzz is imported on first use: most runs never word a "Did you mean" and never correct a misspelled
query word, and they should not pay for the import.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from types import ModuleType


@cache
def _rapidfuzz() -> tuple[ModuleType, ModuleType]:
    from rapidfuzz import fuzz, process

    return fuzz, process


@cache
def _osa() -> ModuleType:
    from rapidfuzz.distance import OSA

    return OSA


def suggest(word: str, choices: Iterable[str], *, cutoff: float = 70.0) -> str | None:
    """The closest choice to ``word`` (by normalized similarity, 0-100), or None below ``cutoff``."""
    options = list(dict.fromkeys(choices))
    if not options:
        return None
    fuzz, process = _rapidfuzz()
    match = process.extractOne(word, options, scorer=fuzz.ratio, score_cutoff=cutoff)
    return None if match is None else str(match[0])


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 70.0) -> str:
    """`` Did you mean 'x'?`` (leading space) or an empty string."""
    best = suggest(word, choices, cutoff=cutoff)
    return f" Did you mean {best!r}?" if best is not None and best != word else ""


def similarity(a: str, b: str) -> float:
    """Normalized similarity in [0, 1]."""
    fuzz, _ = _rapidfuzz()
    return float(fuzz.ratio(a, b)) / 100.0


def typo_distance(a: str, b: str, *, limit: int | None = None) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions
    ("bitrhday" -> "birthday" is 1); above ``limit``, ``limit + 1``."""
    return int(_osa().distance(a, b, score_cutoff=limit))


def best_matches(
    word: str, choices: list[str], *, limit: int = 3, cutoff: float = 80.0
) -> list[tuple[str, float]]:
    """Up to ``limit`` (choice, similarity 0-1) pairs above ``cutoff`` (0-100), best first."""
    fuzz, process = _rapidfuzz()
    found = process.extract(word, choices, scorer=fuzz.ratio, limit=limit, score_cutoff=cutoff)
    return [(str(choice), float(score) / 100.0) for choice, score, _ in found]

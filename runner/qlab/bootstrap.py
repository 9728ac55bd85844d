"""Paired bootstrap of a metric difference between two runs of the same cases (no numpy).

Each case gives a pair (baseline value, candidate value). The per-case differences are resampled with
replacement ``resamples`` times; the mean of each resample is one draw of the metric change. The percentile
interval of those draws says how large a change the case sample supports. The RNG is ``random.Random(seed)``,
so the same inputs always give the same interval (promotion decisions must be reproducible in CI).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 20240501


@dataclass(frozen=True, slots=True)
class Interval:
    """The observed mean change ``delta`` (candidate - baseline) and its bootstrap interval [low, high]."""

    delta: float
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "delta": round(self.delta, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
            "n": self.n,
        }


def paired_interval(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """The paired bootstrap interval of ``mean(candidate - baseline)``.

    ``baseline[i]`` and ``candidate[i]`` are the same case. Raises ValueError for unequal lengths, an empty
    sample, or a confidence outside (0, 1).
    """
    if len(baseline) != len(candidate):
        raise ValueError("paired samples must have the same length")
    if not baseline:
        raise ValueError("a paired bootstrap needs at least one case")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    diffs = [c - b for b, c in zip(baseline, candidate, strict=True)]
    n = len(diffs)
    delta = math.fsum(diffs) / n
    if all(d == diffs[0] for d in diffs):
        # every resample has the same mean: the interval is a point, no need to draw
        return Interval(delta, delta, delta, confidence, resamples, seed, n)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low = means[_index(tail, resamples)]
    high = means[_index(1.0 - tail, resamples)]
    return Interval(delta, low, high, confidence, resamples, seed, n)


def _index(quantile: float, size: int) -> int:
    # nearest-rank percentile, clamped to the sample
    return min(size - 1, max(0, math.ceil(quantile * size) - 1))

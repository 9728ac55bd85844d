"""Paired bootstrap of a metric difference between two runs of the same cases (no numpy).

Each case gives a pair (baseline value, candidate value). The per-case differences are resampled with
replacement ``resamples`` times; the mean of each resample is one draw of the metric change. The percentile
interval of those draws says how large a change the case sample supports. The RNG is ``random.Random(seed)``,
so the same inputs always give the same interval (promotion decisions must be reproducible in CI).

Per-case differences usually take few distinct values (hit@k: -1, 0, 1), so a resample is drawn as one
multinomial over them (``binomial``, our own exact sampler, so results do not depend on the Python version);
with more than ``_MAX_LEVELS`` distinct values the cases are drawn one by one. Both are exact bootstraps."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 20240501
_MAX_LEVELS = 64  # distinct differences up to which a resample is drawn as a multinomial


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
    levels = sorted(Counter(diffs).items())
    if len(levels) <= _MAX_LEVELS:
        means = sorted(_multinomial_sum(rng, levels, n) / n for _ in range(resamples))
    else:
        means = sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low = means[_index(tail, resamples)]
    high = means[_index(1.0 - tail, resamples)]
    return Interval(delta, low, high, confidence, resamples, seed, n)


def _index(quantile: float, size: int) -> int:
    # nearest-rank percentile, clamped to the sample
    return min(size - 1, max(0, math.ceil(quantile * size) - 1))


def _multinomial_sum(rng: random.Random, levels: list[tuple[float, int]], n: int) -> float:
    """The sum of one resample of n draws: each level's count is a binomial of what is left (exact)."""
    total = 0.0
    left_draws, left_weight = n, n
    for value, count in levels[:-1]:
        drawn = binomial(rng, left_draws, count / left_weight) if left_draws else 0
        total += value * drawn
        left_draws -= drawn
        left_weight -= count
    return total + levels[-1][0] * left_draws


def binomial(rng: random.Random, n: int, p: float) -> int:
    """A Binomial(n, p) variate from ``rng`` (exact; deterministic for a seeded ``rng``)."""
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:  # sample the smaller tail: both methods below assume p <= 1/2
        return n - binomial(rng, n, 1.0 - p)
    if n * p < 10.0:
        # Devroye's geometric method: count successes by jumping over the failures between them
        log_q = math.log1p(-p)
        successes = position = 0
        while True:
            position += math.floor(math.log(1.0 - rng.random()) / log_q) + 1
            if position > n:
                return successes
            successes += 1
    return _btrs(rng, n, p)


def _btrs(rng: random.Random, n: int, p: float) -> int:
    """Hörmann (1993), "The generation of binomial random variates", algorithm BTRS (n * p >= 10, p <= 1/2)."""
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = math.log(p / (1.0 - p))
    mode = math.floor((n + 1) * p)
    h = math.lgamma(mode + 1) + math.lgamma(n - mode + 1)
    while True:
        u = rng.random() - 0.5
        v = rng.random()
        us = 0.5 - abs(u)
        if us <= 0.0:
            continue
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:  # the squeeze: accept without the costly test
            return k
        v = v * alpha / (a / (us * us) + b)
        if v > 0.0 and math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - mode) * log_odds:
            return k

"""The paired bootstrap: deterministic for a seed, and its interval covers the observed change."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qlab.governance.promotion.bootstrap import paired_interval


def test_same_seed_same_interval_and_another_seed_may_differ() -> None:
    base = [1.0] * 30 + [0.0] * 10
    cand = [1.0] * 25 + [0.0] * 5 + [1.0] * 3 + [0.0] * 7
    a = paired_interval(base, cand, seed=7)
    b = paired_interval(base, cand, seed=7)
    assert a == b
    assert a.delta == pytest.approx(-2 / 40)
    assert a.low < a.delta < a.high
    others = {paired_interval(base, cand, seed=s).low for s in range(5)}
    assert len(others) > 1  # the seed is really used


def test_constant_difference_is_a_point() -> None:
    out = paired_interval([0.0, 1.0], [0.5, 1.5])
    assert (out.low, out.delta, out.high) == (0.5, 0.5, 0.5)


@pytest.mark.parametrize(
    ("base", "cand", "message"),
    [([1.0], [1.0, 2.0], "same length"), ([], [], "at least one"), ([1.0], [1.0], "confidence")],
)
def test_bad_input(base: list[float], cand: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_interval(base, cand, confidence=1.5 if message == "confidence" else 0.95)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=1, max_size=30))
def test_interval_is_ordered_and_within_the_possible_range(pairs: list[tuple[float, float]]) -> None:
    base, cand = [p[0] for p in pairs], [p[1] for p in pairs]
    out = paired_interval(base, cand, resamples=200)
    assert -1.0 <= out.low <= out.high <= 1.0
    assert min(c - b for b, c in pairs) <= out.low
    assert out.high <= max(c - b for b, c in pairs)


@pytest.mark.parametrize(
    ("n", "p"), [(5, 0.3), (40, 0.1), (1000, 0.02), (1000, 0.5), (100_000, 0.9), (50, 0.97)]
)
def test_the_binomial_sampler_has_the_binomial_mean_and_variance(n: int, p: float) -> None:
    import random

    from qlab.governance.promotion.bootstrap import binomial

    rng = random.Random(3)
    draws = [binomial(rng, n, p) for _ in range(4000)]
    mean = sum(draws) / len(draws)
    var = sum((d - mean) ** 2 for d in draws) / (len(draws) - 1)
    assert all(0 <= d <= n for d in draws)
    # 4000 draws: the sample mean is within ~4 standard errors, the variance within 15 %
    assert abs(mean - n * p) <= 4 * (n * p * (1 - p) / len(draws)) ** 0.5 + 1e-9
    assert var == pytest.approx(n * p * (1 - p), rel=0.15)


def test_the_multinomial_resampling_agrees_with_case_by_case_resampling() -> None:
    import math
    import random

    rng = random.Random(11)
    base = [float(rng.random() < 0.8) for _ in range(3000)]
    cand = [b if rng.random() > 0.1 else 1.0 - b for b in base]
    fast = paired_interval(base, cand)
    # the same bootstrap drawn one case at a time
    diffs = [c - b for b, c in zip(base, cand, strict=True)]
    draw = random.Random(5)
    means = sorted(math.fsum(draw.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(2000))
    assert fast.low == pytest.approx(means[49], abs=0.004)
    assert fast.high == pytest.approx(means[1949], abs=0.004)

"""The metrics of a promotion: each of the rule's metrics over the paired cases of both runs, noise-aware.

A metric with a per-case value (``qlab.governance.promotion.rules.CASE_METRICS``) is averaged over the cases both
runs judged (``compare`` hands in only those) and that the metric measured in both; a case blocked or not judged
on one side is no evidence, never a 0. A repeated case's outcome counts with the share of its repeats that passed
(2 of 3: 0.667), so a flaky case moves the mean and the bootstrap interval by what it really did. The cases whose
value dropped or rose are kept as the evidence behind the number. A drop is a regression beyond
``tolerance``; with ``bootstrap``, the paired-bootstrap interval must lie below zero as well. A metric only
suites report (``ndcg_at_k``) is compared per suite, with the tolerance only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qlab.governance.promotion.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, paired_interval
from qlab.governance.promotion.rules import case_metric
from qlab.governance.records import Artifact
from qlab.project.model import PromotionRule

_EPS = 1e-9  # float noise in metric means is not a regression


@dataclass(frozen=True, slots=True)
class MetricCheck:
    """A metric of both runs. ``regressed`` follows the noise rule (tolerance, bootstrap interval)."""

    metric: str
    source: str  # "cases" (per-case values, paired) or "suite:<name>" (a suite-level figure)
    baseline: float | None
    candidate: float | None
    n: int
    tolerance: float
    interval: Interval | None = None
    worse: tuple[str, ...] = ()  # cases whose value dropped (the evidence behind a drop)
    better: tuple[str, ...] = ()  # cases whose value rose

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    @property
    def regressed(self) -> bool:
        delta = self.delta
        if delta is None:
            return False
        beyond_tolerance = delta < -self.tolerance - _EPS
        if self.interval is None:
            return beyond_tolerance
        # bootstrap: the drop must be beyond tolerance AND the whole interval must lie below zero
        return beyond_tolerance and self.interval.high < -_EPS

    def to_dict(self) -> dict[str, Any]:
        delta = self.delta
        return {
            "metric": self.metric,
            "source": self.source,
            "baseline": _round(self.baseline),
            "candidate": _round(self.candidate),
            "delta": _round(delta),
            "n": self.n,
            "tolerance": self.tolerance,
            "interval": self.interval.to_dict() if self.interval else None,
            "regressed": self.regressed,
            "worse": list(self.worse),
            "better": list(self.better),
        }


def metric_checks(
    rule: PromotionRule,
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
    baseline: Artifact,
    candidate: Artifact,
    suites: list[str],
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> list[MetricCheck]:
    """Each of the rule's metrics (``pass_rate`` when it names none) over the paired cases of both runs."""
    out: list[MetricCheck] = []
    for metric in rule.metrics or ("pass_rate",):
        value_of = case_metric(metric)
        if value_of is None:
            out += _suite_metric_checks(metric, rule, baseline, candidate, suites)
            continue
        pairs: list[tuple[float, float]] = []
        worse: list[str] = []
        better: list[str] = []
        for case_id, b in base.items():
            c = cand.get(case_id)
            if c is None:
                continue
            bv, cv = value_of(b), value_of(c)
            if bv is None or cv is None:
                continue  # measured on one side only: not like with like
            pairs.append((bv, cv))
            if pairs[-1][1] < pairs[-1][0]:
                worse.append(case_id)
            elif pairs[-1][1] > pairs[-1][0]:
                better.append(case_id)
        if not pairs:
            out.append(MetricCheck(metric, "cases", None, None, 0, rule.tolerance))
            continue
        bs, cs = [p[0] for p in pairs], [p[1] for p in pairs]
        interval = paired_interval(bs, cs, seed=seed, resamples=resamples) if rule.bootstrap else None
        mean_b, mean_c = sum(bs) / len(bs), sum(cs) / len(cs)
        out.append(
            MetricCheck(
                metric,
                "cases",
                mean_b,
                mean_c,
                len(pairs),
                rule.tolerance,
                interval,
                tuple(worse),
                tuple(better),
            )
        )
    return out


def _suite_metric_checks(
    metric: str, rule: PromotionRule, baseline: Artifact, candidate: Artifact, suites: list[str]
) -> list[MetricCheck]:
    """A metric only suites report (e.g. ndcg_at_k): compared per suite, tolerance only (no per-case values)."""
    out: list[MetricCheck] = []
    for suite in suites:
        b = (_suite_info(baseline, suite).get("metrics") or {}).get(metric)
        c = (_suite_info(candidate, suite).get("metrics") or {}).get(metric)
        if isinstance(b, (int, float)) or isinstance(c, (int, float)):
            bf = float(b) if isinstance(b, (int, float)) else None
            cf = float(c) if isinstance(c, (int, float)) else None
            out.append(MetricCheck(metric, f"suite:{suite}", bf, cf, 0, rule.tolerance))
    if not out:
        out.append(MetricCheck(metric, "suites", None, None, 0, rule.tolerance))
    return out


def _suite_info(artifact: Artifact, suite: str) -> Mapping[str, Any]:
    info = (artifact.data.get("suites") or {}).get(suite)
    return info if isinstance(info, Mapping) else {}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)

"""Promotion: judge a baseline → candidate change under its qlab.yaml rule (the promotion policy).

``compare`` refuses runs that cannot be compared (exit 2), then reports case by case (``qlab.contracts.changes``:
fixed, regressed, still failing and passing only for cases both runs judged; unevaluated for a case one run blocked,
skipped or could not judge; new passing / new failing, judged on their own; removed, each with both sides' stage
objects), checks the rule's metrics noise-aware over the cases both runs judged (a drop beyond ``tolerance``; with
``bootstrap: true`` only when the paired-bootstrap interval lies below zero too; a repeated case counts with the
share of its repeats that passed), checks the rule's evidence requirements, and decides: 0 promote, 1 block. A
required case that regressed, or a new required case that fails, always blocks, whatever the rule says; a
``flaky: true`` case is reported but never blocks, and a draft case (``status: draft``) is not required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qlab.contracts.changes import change_kind
from qlab.contracts.errors import EXIT_BLOCKED, EXIT_INPUT, EXIT_PASS
from qlab.contracts.metrics import pass_ratio
from qlab.governance.promotion import checks
from qlab.governance.promotion.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from qlab.governance.promotion.changes import CHANGE_KINDS, COMPARED, CaseChange
from qlab.governance.promotion.checks import Check
from qlab.governance.promotion.comparable import compared_cases, refusals
from qlab.governance.promotion.metrics import MetricCheck, metric_checks
from qlab.governance.promotion.rules import CHANGE_MODES
from qlab.governance.records import Artifact, evidence
from qlab.project.model import PromotionRule

_EPS = 1e-9  # float noise in metric means is not a regression


@dataclass(frozen=True, slots=True)
class PromotionReport:
    """The outcome of ``compare``: ``verdict`` promote | block | refused and its ``exit_code`` (0 | 1 | 2)."""

    change_type: str
    rule: PromotionRule
    verdict: str
    reasons: tuple[str, ...]
    baseline: Mapping[str, Any]
    candidate: Mapping[str, Any]
    changes: tuple[CaseChange, ...] = ()
    metrics: tuple[MetricCheck, ...] = ()
    checks: tuple[Check, ...] = ()
    suites: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {"promote": EXIT_PASS, "block": EXIT_BLOCKED}.get(self.verdict, EXIT_INPUT)

    def of_kind(self, kind: str) -> list[CaseChange]:
        return [c for c in self.changes if c.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "change_type": self.change_type,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            "rule": {
                "suites": list(rule.suites),
                "require": list(rule.require),
                "metrics": list(rule.metrics),
                "tolerance": rule.tolerance,
                "bootstrap": rule.bootstrap,
                "same": list(rule.same),
            },
            "compared_suites": list(self.suites),
            "baseline": dict(self.baseline),
            "candidate": dict(self.candidate),
            "counts": dict(self.counts),
            "requirements": [c.to_dict() for c in self.checks],
            "metrics": [m.to_dict() for m in self.metrics],
            # "passing" cases carry no news: counted, not listed
            "cases": {
                kind: [c.to_dict() for c in self.of_kind(kind)] for kind in CHANGE_KINDS if kind != "passing"
            },
        }


def compare(
    baseline: Artifact,
    candidate: Artifact,
    *,
    change_type: str,
    rule: PromotionRule,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    reviewed: Sequence[Mapping[str, Any]] = (),
) -> PromotionReport:
    """Compare two result artifacts under ``rule`` (see the module docstring for the decision).

    ``reviewed``: the stored learning suggestions; ``shadow_improves`` falls back on the shadow results of
    those accepted from the baseline run when neither artifact holds one.
    """
    mode = CHANGE_MODES.get(change_type)
    suites, base_cases, cand_cases = compared_cases(baseline, candidate, rule=rule, mode=mode)
    runs = (_run_info(baseline), _run_info(candidate))
    refused = refusals(baseline, candidate, rule=rule, base=base_cases, cand=cand_cases)
    if refused:
        return PromotionReport(change_type, rule, "refused", tuple(refused), *runs, suites=tuple(suites))
    changes = _classify(base_cases, cand_cases, baseline, candidate)
    # only the cases both runs judged are evidence of a change in a metric
    both = {c.case_id for c in changes if c.kind in COMPARED}
    paired = {k: v for k, v in base_cases.items() if k in both}
    metrics = tuple(metric_checks(rule, paired, cand_cases, baseline, candidate, suites, seed, resamples))
    results: list[Check] = []
    for name in dict.fromkeys((*rule.require, "no_required_regression")):
        results.append(
            checks.run(
                name,
                changes=changes,
                metrics=metrics,
                baseline=baseline,
                candidate=candidate,
                cand_cases=cand_cases,
                tolerance=rule.tolerance,
                reviewed=reviewed,
            )
        )
    reasons = tuple(reason for check in results if not check.passed for reason in check.reasons)
    counts = {kind: sum(1 for c in changes if c.kind == kind) for kind in CHANGE_KINDS}
    return PromotionReport(
        change_type,
        rule,
        "block" if reasons else "promote",
        reasons,
        *runs,
        changes=tuple(changes),
        metrics=metrics,
        checks=tuple(results),
        suites=tuple(suites),
        counts=counts,
    )


def _run_info(artifact: Artifact) -> dict[str, Any]:
    fp = artifact.data.get("fingerprint") or {}
    return {
        "path": artifact.path,
        "digest": artifact.digest,
        "run_id": artifact.run_id,
        "collection_digest": fp.get("collection_digest"),
        "config_digest": fp.get("config_digest"),
        "engine": fp.get("engine"),
        "model": fp.get("model"),
    }


def _suite_info(artifact: Artifact, suite: str) -> Mapping[str, Any]:
    info = (artifact.data.get("suites") or {}).get(suite)
    return info if isinstance(info, Mapping) else {}


def _classify(
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
    baseline: Artifact,
    candidate: Artifact,
) -> list[CaseChange]:
    out: list[CaseChange] = []
    for case_id in [*base, *(c for c in cand if c not in base)]:
        b, c = base.get(case_id), cand.get(case_id)
        either = c if c is not None else b
        assert either is not None
        suite = str(either["suite"])  # compared cases are those of the compared suites
        info = _suite_info(candidate, suite) or _suite_info(baseline, suite)
        required = bool(info.get("required", True)) or any(bool(x and x.get("critical")) for x in (b, c))
        # a draft case (``status: draft``) never gates, in a run or in a promotion: the candidate's lifecycle decides
        required = required and (either.get("lifecycle") != "draft")
        flaky = any(bool(x and x.get("flaky")) for x in (b, c))
        kind = change_kind(b, c)
        out.append(
            CaseChange(
                case_id=case_id,
                suite=suite,
                kind=kind,
                required=required,
                flaky=flaky,
                baseline=evidence(b) if b is not None else None,
                candidate=evidence(c) if c is not None else None,
                baseline_status=str(b["status"]) if b is not None else None,
                candidate_status=str(c["status"]) if c is not None else None,
                baseline_ratio=pass_ratio(b) if b is not None else None,
                candidate_ratio=pass_ratio(c) if c is not None else None,
            )
        )
    return out

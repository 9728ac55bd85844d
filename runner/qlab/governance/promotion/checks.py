"""The evidence a promotion rule can ``require`` (the promotion policy's "Required Evidence", made checkable).

Each check returns passed + the reasons it failed. Missing evidence fails: a change is promoted on evidence,
never on its absence (no readiness report → ``readiness_improves`` fails; no scrub check ran →
``scrub_passes`` fails).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.contracts.reasons import AUTH_FAILURES
from qlab.governance.promotion.changes import CaseChange
from qlab.governance.promotion.metrics import MetricCheck
from qlab.governance.promotion.rules import selection_correct
from qlab.governance.records import Artifact

AUTH_REASONS = AUTH_FAILURES
READY_STATES = frozenset({"ready", "not_required"})
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
READINESS_KEYS: tuple[str, ...] = ("schema_coverage", "contract_coverage")
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    reasons: tuple[str, ...] = ()
    details: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "passed": self.passed, "reasons": list(self.reasons)}
        if self.details:
            out["details"] = dict(self.details)
        return out


@dataclass(frozen=True, slots=True)
class _Inputs:
    changes: Sequence[CaseChange]
    metrics: Sequence[MetricCheck]
    baseline: Artifact
    candidate: Artifact
    cand_cases: Mapping[str, Mapping[str, Any]]
    tolerance: float
    reviewed: Sequence[Mapping[str, Any]] = ()


def run(
    name: str,
    *,
    changes: Sequence[CaseChange],
    metrics: Sequence[MetricCheck],
    baseline: Artifact,
    candidate: Artifact,
    cand_cases: Mapping[str, Mapping[str, Any]],
    tolerance: float,
    reviewed: Sequence[Mapping[str, Any]] = (),
) -> Check:
    """Run requirement ``name`` (a name of ``promotion_rules.REQUIREMENTS``).

    ``reviewed``: the suggestions of the suggestions file (``shadow_improves`` reads the accepted ones).
    """
    inputs = _Inputs(changes, metrics, baseline, candidate, cand_cases, tolerance, reviewed)
    return _CHECKS[name](name, inputs)


def _result(name: str, reasons: list[str], details: Mapping[str, Any] | None = None) -> Check:
    return Check(name, not reasons, tuple(reasons), details)


def _regressions(name: str, x: _Inputs, *, required_only: bool) -> Check:
    reasons = []
    for change in x.changes:
        if change.flaky or (required_only and not change.required):
            continue  # flaky cases are reported, never gate
        if change.kind == "regressed":
            failure = (change.candidate or {}).get("failure") or {}
            where = f" at {failure.get('stage')}/{failure.get('reason')}" if failure else ""
            label = "required case" if change.required else "case"
            reasons.append(
                f"{label} {change.case_id} ({change.suite}) regressed: passed in the baseline, "
                f"{change.candidate_status}{where} in the candidate"
            )
        elif change.kind == "new_failing" and change.required:
            # a new case is judged on its own: a required one must pass, as the candidate's run itself demands
            failure = (change.candidate or {}).get("failure") or {}
            where = f" at {failure.get('stage')}/{failure.get('reason')}" if failure else ""
            reasons.append(
                f"new required case {change.case_id} ({change.suite}) fails in the candidate: "
                f"{change.candidate_status}{where}"
            )
        elif change.kind == "removed" and change.required:
            reasons.append(f"required case {change.case_id} ({change.suite}) no longer runs in the candidate")
    return _result(name, reasons)


def _no_regression(name: str, x: _Inputs) -> Check:
    return _regressions(name, x, required_only=False)


def _no_required_regression(name: str, x: _Inputs) -> Check:
    return _regressions(name, x, required_only=True)


def _metric_not_worse(name: str, x: _Inputs) -> Check:
    reasons = []
    for m in x.metrics:
        if m.baseline is None or m.candidate is None:
            reasons.append(
                f"{m.metric}: no data in {'the baseline' if m.baseline is None else 'the candidate'}"
            )
        elif m.regressed:
            noise = f", interval [{m.interval.low:+.4f}, {m.interval.high:+.4f}]" if m.interval else ""
            shown = ", ".join(m.worse[:5]) + (f" and {len(m.worse) - 5} more" if len(m.worse) > 5 else "")
            evidence = f"; worse on {shown}" if m.worse else ""
            reasons.append(
                f"{m.metric} ({m.source}) dropped {m.baseline:.4f} -> {m.candidate:.4f} "
                f"(tolerance {m.tolerance}{noise}){evidence}"
            )
    return _result(name, reasons)


def _plan_target_correct(name: str, x: _Inputs) -> Check:
    reasons = []
    judged = 0
    for case_id, case in x.cand_cases.items():
        if case.get("mode") not in ("plan", "execute"):
            continue
        judged += 1
        correct = selection_correct(case)
        if not correct:
            selector = case.get("target_selector") or {}
            failure = case.get("failure") or {}
            reasons.append(
                f"{case_id}: final target {selector.get('selected_target')!r} is not the expected one"
                + (f" ({failure.get('stage')}/{failure.get('reason')})" if failure else "")
            )
    if not judged:
        reasons.append("the compared suites hold no plan case in the candidate")
    return _result(name, reasons, {"plan_cases": judged})


def _readiness_improves(name: str, x: _Inputs) -> Check:
    b = x.baseline.data.get("readiness")
    c = x.candidate.data.get("readiness")
    if not isinstance(b, Mapping) or not isinstance(c, Mapping):
        return _result(name, ["a run has no readiness report; run the build stage in both"])
    reasons: list[str] = []
    improved = False
    details: dict[str, Any] = {}
    for key in READINESS_KEYS:
        bv, cv = b.get(key), c.get(key)
        if not isinstance(bv, (int, float)) or not isinstance(cv, (int, float)):
            reasons.append(f"readiness.{key} is missing in a run")
            continue
        details[key] = {"baseline": bv, "candidate": cv}
        if cv < bv - x.tolerance - _EPS:
            reasons.append(f"readiness.{key} dropped {bv:.4f} -> {cv:.4f}")
        improved = improved or cv > bv + _EPS
    if not reasons and not improved:
        reasons.append("neither readiness.schema_coverage nor readiness.contract_coverage improved")
    return _result(name, reasons, details)


def shadow_of(artifact: Artifact) -> Mapping[str, Any] | None:
    """The learn stage's shadow-rank result in a run (``stages.learn.details.shadow``), if any."""
    learn = (artifact.data.get("stages") or {}).get("learn")
    details = learn.get("details") if isinstance(learn, Mapping) else None
    shadow = details.get("shadow") if isinstance(details, Mapping) else None
    return shadow if isinstance(shadow, Mapping) and shadow.get("cases") else None


def accepted_shadows(
    reviewed: Sequence[Mapping[str, Any]], *, run_id: str | None
) -> list[tuple[str, Mapping[str, Any]]]:
    """``(id, shadow)`` of each suggestion accepted from run ``run_id`` that carries a shadow-rank result.

    ``qlab learn shadow --result BASELINE`` stores a shadow result with each suggestion, not in the artifact
    (an artifact is bound to its digest): the way for a baseline without a learn gate. The accepted suggestions
    of the baseline run are what is promoted.
    """
    out = []
    for item in reviewed:
        shadow = item.get("shadow")
        if (
            run_id is not None
            and item.get("status") == "accepted"
            and item.get("run_id") == run_id
            and isinstance(shadow, Mapping)
            and shadow.get("cases")
        ):
            out.append((str(item.get("id")), shadow))
    return out


def _shadow_reasons(
    shadow: Mapping[str, Any], *, metric_label: str, case_label: str
) -> tuple[list[str], bool]:
    """The reasons ``shadow`` fails (a metric dropped, a case ranks worse) and whether a metric improved."""
    delta = shadow.get("delta") or {}
    reasons = [
        f"{metric_label}{metric} dropped by {-value:.4f}"
        for metric, value in delta.items()
        if isinstance(value, (int, float)) and value < -_EPS
    ]
    reasons += [
        f"{case_label}case {case_id} ranks worse with the suggestions applied"
        for case_id in shadow.get("regressed") or ()
    ]
    better = any(isinstance(v, (int, float)) and v > _EPS for v in delta.values())
    return reasons, better


def _shadow_improves(name: str, x: _Inputs) -> Check:
    # the suggestions being promoted were shadow-ranked in the run they came from: the baseline
    shadow = shadow_of(x.baseline) or shadow_of(x.candidate)
    if shadow is not None:
        reasons, better = _shadow_reasons(shadow, metric_label="shadow ", case_label="shadow: ")
        if not better and not reasons:
            reasons.append("the shadow result does not improve any search metric")
        return _result(name, reasons, {"delta": dict(shadow.get("delta") or {})})
    accepted = accepted_shadows(x.reviewed, run_id=x.baseline.run_id)
    if not accepted:
        return _result(
            name,
            [
                "no shadow-rank result in either run, and no suggestion accepted from the baseline run "
                f"({x.baseline.run_id}) carries one; run `qlab learn shadow --result BASELINE`, then "
                "`qlab learn accept ID --by NAME`"
            ],
        )
    reasons, improved = [], False
    for suggestion_id, per in accepted:
        label = f"shadow of {suggestion_id}: "
        failed, better = _shadow_reasons(per, metric_label=label, case_label=label)
        reasons += failed
        improved = improved or better
    if not improved and not reasons:
        reasons.append("the shadow result of the accepted suggestions does not improve any search metric")
    details = {"suggestions": {sid: dict(per.get("delta") or {}) for sid, per in accepted}}
    return _result(name, reasons, details)


def _scrub_passes(name: str, x: _Inputs) -> Check:
    reasons = []
    for label, artifact in (("baseline", x.baseline), ("candidate", x.candidate)):
        guards = [
            g
            for g in artifact.data.get("guards") or ()
            if isinstance(g, Mapping) and g.get("guard") == "scrub"
        ]
        learn_gates = [
            g
            for g in artifact.data.get("gates") or ()
            if isinstance(g, Mapping) and g.get("stage") == "learn"
        ]
        leaked = any(
            isinstance(c.get("failure"), Mapping) and c["failure"].get("reason") == "scrub_failed"
            for c in artifact.cases
        )
        if guards:
            if not all(g.get("passed") is True for g in guards) or leaked:
                reasons.append(f"the scrub check failed in the {label}")
        elif learn_gates:
            if any(g.get("status") != "passed" for g in learn_gates) or leaked:
                reasons.append(f"the learn gate (scrub check) did not pass in the {label}")
        else:
            reasons.append(f"no scrub check ran in the {label} (no scrub guard, no learn gate)")
    return _result(name, reasons)


def _execute_cases(x: _Inputs) -> list[tuple[str, Mapping[str, Any]]]:
    return [(cid, c) for cid, c in x.cand_cases.items() if c.get("mode") == "execute"]


def _auth_ready(name: str, x: _Inputs) -> Check:
    cases = _execute_cases(x)
    reasons = [] if cases else ["the compared suites hold no execute case in the candidate"]
    for case_id, case in cases:
        readiness = case.get("auth_readiness")
        failure = case.get("failure") or {}
        if failure.get("reason") in AUTH_REASONS:
            reasons.append(f"{case_id}: {failure.get('reason')}")
        elif not isinstance(readiness, Mapping):
            reasons.append(f"{case_id}: no auth_readiness recorded (did the execute stage run?)")
        elif readiness.get("status") not in READY_STATES and readiness.get("ready") is not True:
            codes = ", ".join(readiness.get("reason_codes") or ()) or str(readiness.get("status"))
            reasons.append(f"{case_id}: auth not ready ({codes})")
    return _result(name, reasons)


def _read_only(case: Mapping[str, Any]) -> bool:
    execute = case.get("execute") or {}
    if case.get("mutation_safety") == "allow_mutation" or execute.get("mutation") in (
        "mutating",
        "destructive",
    ):
        return False
    return str(execute.get("method", "GET")).upper() not in MUTATING_METHODS


def _read_assertions_pass(name: str, x: _Inputs) -> Check:
    cases = [(cid, c) for cid, c in _execute_cases(x) if _read_only(c)]
    reasons = [] if cases else ["the compared suites hold no read-only execute case in the candidate"]
    for case_id, case in cases:
        failed = [a for a in case.get("assertions") or () if isinstance(a, Mapping) and not a.get("passed")]
        if case.get("status") != "passed" or failed:
            failure = case.get("failure") or {}
            what = "; ".join(str(a.get("message") or a.get("type")) for a in failed) or str(
                failure.get("reason")
            )
            reasons.append(f"{case_id}: {case.get('status')}: {what}")
    return _result(name, reasons, {"read_only_cases": len(cases)})


_CHECKS: dict[str, Callable[[str, _Inputs], Check]] = {
    "no_regression": _no_regression,
    "no_required_regression": _no_required_regression,
    "metric_not_worse": _metric_not_worse,
    "plan_target_correct": _plan_target_correct,
    "readiness_improves": _readiness_improves,
    "shadow_improves": _shadow_improves,
    "scrub_passes": _scrub_passes,
    "auth_ready": _auth_ready,
    "read_assertions_pass": _read_assertions_pass,
}

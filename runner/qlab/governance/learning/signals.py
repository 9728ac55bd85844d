"""The learning loop's eight signals: what a finished run (and the one before it) tells qlab about what to learn.

Each detector reads the scrubbed result artifact (with the previous run's artifact for the signals that compare
two runs, and the human decisions on record) and returns signals ``{signal, case_ids, text, evidence}``:
``failed_then_succeeded`` and ``user_correction`` (``flips``), ``auth_readiness_drift``, ``search_miss``,
``selector_override``, ``budget_breach``, ``guard_violation`` and ``reviewer_reject``. ``detect`` runs them all.
``qlab.governance.learning.suggest`` turns signals into proposals (``qlab.governance.learning.apply``); the
table in docs/governance.md (learning signals) says when each fires and which proposal it may lead to."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from qlab.contracts.reasons import AUTH_FAILURES, is_infrastructure

SIGNALS: tuple[str, ...] = (
    "failed_then_succeeded",
    "user_correction",
    "selector_override",
    "search_miss",
    "auth_readiness_drift",
    "budget_breach",
    "guard_violation",
    "reviewer_reject",
)
AUTH_REASONS = AUTH_FAILURES
OWN_SIGNAL_GUARDS = frozenset({"budget"})  # guards with a signal of their own
MAX_CASES = 50

Signal = dict[str, Any]


def _signal(name: str, case_ids: Sequence[str], text: str, evidence: Mapping[str, Any]) -> Signal:
    return {"signal": name, "case_ids": list(case_ids)[:MAX_CASES], "text": text, "evidence": dict(evidence)}


def _iter_cases(artifact: Mapping[str, Any] | None) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(case id, case) of each case object, in order, without a dict of them all (case ids are unique in a run:
    the project refuses a duplicate)."""
    return ((str(c["case_id"]), c) for c in (artifact or {}).get("cases") or () if isinstance(c, Mapping))


def _file_digests(artifact: Mapping[str, Any] | None) -> dict[str, str]:
    files = (((artifact or {}).get("provenance") or {}).get("dataset") or {}).get("files") or ()
    return {str(f.get("path")): str(f.get("digest")) for f in files if isinstance(f, Mapping)}


def _product_failure(case: Mapping[str, Any]) -> bool:
    reason = (case.get("failure") or {}).get("reason")
    return case.get("status") in ("failed", "error") and not is_infrastructure(reason)


# ------------------------------------------------------------------------------------------- two runs


def flips(artifact: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[Signal]:
    """failed_then_succeeded and user_correction: cases that failed before and pass now."""
    if not previous:
        return []
    # only the cases that failed before can flip (a large run's cases are not all indexed twice)
    before = {case_id: c for case_id, c in _iter_cases(previous) if _product_failure(c)}
    now = {case_id: c for case_id, c in _iter_cases(artifact) if case_id in before}
    digests_before, digests_now = _file_digests(previous), _file_digests(artifact)
    fixed: list[str] = []
    corrected: list[str] = []
    for case_id, case in now.items():
        old = before.get(case_id)
        if old is None or case.get("status") != "passed" or not _product_failure(old):
            continue
        path = str(case.get("file", ""))
        edited = path in digests_before and digests_before.get(path) != digests_now.get(path)
        (corrected if edited else fixed).append(case_id)
    out = []
    run_before = previous.get("run_id")
    if fixed:
        out.append(
            _signal(
                "failed_then_succeeded",
                fixed,
                f"{len(fixed)} case(s) failed in run {run_before} and pass now, their case files unchanged: "
                "the product was fixed; each can guard the fix as a regression case",
                {
                    "previous_run": run_before,
                    "failures": {i: before[i].get("failure") for i in fixed[:MAX_CASES]},
                },
            )
        )
    if corrected:
        out.append(
            _signal(
                "user_correction",
                corrected,
                f"{len(corrected)} case(s) failed in run {run_before} and pass now after their case files were "
                "edited: a person corrected the input or the expectation",
                {
                    "previous_run": run_before,
                    "failures": {i: before[i].get("failure") for i in corrected[:MAX_CASES]},
                },
            )
        )
    return out


def _auth_failure(case: Mapping[str, Any] | None) -> bool:
    """The case failed for an auth reason: preflight (no request sent) or 401/403 at run time."""
    return ((case or {}).get("failure") or {}).get("reason") in AUTH_REASONS


def _auth_prerun(artifact: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return [g for g in (artifact or {}).get("prerun") or () if g.get("guard") == "auth_readiness"]


def auth_readiness_drift(artifact: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[Signal]:
    """Auth readiness lost since the previous run: a case ready and not failing for an auth reason then, failing
    for one now (preflight or 401/403), or a pre-run auth check that passed then and fails now; or schema
    coverage that fell. Drift is a change: a case failing auth in both runs, or a pre-run check failing in both,
    is not one (and without a previous run there is nothing to drift from)."""
    out: list[Signal] = []
    # only a case failing for an auth reason now can have lost its readiness (case ids are unique in a run)
    now = {case_id: c for case_id, c in _iter_cases(artifact) if _auth_failure(c)}
    lost = []
    for case_id, old in _iter_cases(previous):
        if case_id not in now or _auth_failure(old):
            continue
        if (old.get("auth_readiness") or {}).get("status") in ("ready", "not_required"):
            lost.append(case_id)
    passed_before = {str(g.get("subject")) for g in _auth_prerun(previous) if g.get("passed")}
    prerun = [
        g for g in _auth_prerun(artifact) if not g.get("passed") and str(g.get("subject")) in passed_before
    ]
    if lost or prerun:
        text = (
            f"auth readiness drifted: {len(lost)} case(s) ready in the previous run are not now"
            if lost
            else "auth readiness drifted: the pre-run auth check passed in the previous run and fails now"
        )
        out.append(
            _signal(
                "auth_readiness_drift",
                lost,
                text,
                {
                    "kind": "auth",
                    "prerun": [g.get("message") for g in prerun],
                    "reasons": sorted({str((now[i].get("failure") or {}).get("reason")) for i in lost}),
                },
            )
        )
    old_cov = ((previous or {}).get("readiness") or {}).get("schema_coverage")
    new_cov = (artifact.get("readiness") or {}).get("schema_coverage")
    if isinstance(old_cov, (int, float)) and isinstance(new_cov, (int, float)) and new_cov < old_cov:
        out.append(
            _signal(
                "auth_readiness_drift",
                [],
                f"readiness drifted: schema coverage fell from {old_cov:.4f} to {new_cov:.4f} since run "
                f"{(previous or {}).get('run_id')}",
                {"kind": "readiness", "schema_coverage_before": old_cov, "schema_coverage_now": new_cov},
            )
        )
    return out


# ------------------------------------------------------------------------------------------- one run


def search_misses(artifact: Mapping[str, Any]) -> list[Signal]:
    """Cases whose expected tool is not in the Top-K (the alias and rewrite generators group them)."""
    missed = [
        i
        for i, c in _iter_cases(artifact)
        if isinstance(c.get("search"), Mapping) and c["search"].get("hit") is False
    ]
    if not missed:
        return []
    return [
        _signal("search_miss", missed, f"{len(missed)} case(s) missed their expected tool in the Top-K", {})
    ]


def selector_overrides(artifact: Mapping[str, Any]) -> list[Signal]:
    """Overrides of the LLM's target that were wrong, and candidates the selector could not tell apart."""
    wrong, tied = [], []
    for case_id, case in _iter_cases(artifact):
        selector = case.get("target_selector")
        if not isinstance(selector, Mapping):
            continue
        failed_here = (case.get("failure") or {}).get("stage") == "select"
        if selector.get("overrode_llm") and (failed_here or selector.get("correct") is False):
            wrong.append(case_id)
        elif selector.get("ambiguous"):
            tied.append(case_id)
    if not wrong and not tied:
        return []
    text = f"the target selector overrode the LLM wrongly in {len(wrong)} case(s) and could not decide in {len(tied)}"
    return [_signal("selector_override", [*wrong, *tied], text, {"wrong": wrong, "ambiguous": tied})]


def _failed_guards(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    guards = artifact.get("guards")
    if not isinstance(guards, list):
        guards = [g for s in (artifact.get("stages") or {}).values() for g in (s or {}).get("guards") or ()]
    return [
        g
        for g in guards
        if isinstance(g, Mapping) and g.get("passed") is False and g.get("stage") != "pre-run"
    ]


def budget_breaches(artifact: Mapping[str, Any]) -> list[Signal]:
    failed = [g for g in _failed_guards(artifact) if g.get("guard") == "budget"]
    if not failed:
        return []
    budget = ((artifact.get("provenance") or {}).get("run_configuration") or {}).get("budget") or {}
    tokens, cost = _usage(artifact)
    used = {"duration_sec": round(float(artifact.get("duration_ms") or 0.0) / 1000.0, 3), "llm_cost_usd": cost,
            "llm_tokens": tokens}  # fmt: skip
    text = "the run went over its budget: " + "; ".join(dict.fromkeys(str(g.get("message")) for g in failed))
    return [
        _signal(
            "budget_breach",
            [],
            text,
            {"budget": budget, "used": used, "stages": [g.get("stage") for g in failed]},
        )
    ]


def _usage(artifact: Mapping[str, Any]) -> tuple[int, float]:
    from qlab.contracts.metrics import llm_usage  # the run's own count

    tokens, cost = llm_usage(artifact.get("cases") or ())
    return tokens, round(cost, 8)


def guard_violations(artifact: Mapping[str, Any]) -> list[Signal]:
    failed = [g for g in _failed_guards(artifact) if g.get("guard") not in OWN_SIGNAL_GUARDS]
    if not failed:
        return []
    found = [
        {"guard": g.get("guard"), "stage": g.get("stage"), "mode": g.get("mode"), "message": g.get("message")}
        for g in failed
    ]
    names = ", ".join(dict.fromkeys(f"{g['guard']} ({g['mode']})" for g in found))
    return [_signal("guard_violation", [], f"in-run checks failed: {names}", {"guards": found})]


def reviewer_rejects(decisions: Sequence[Mapping[str, Any]]) -> list[Signal]:
    """``decisions``: the human decisions on record (``{what, id, decision, by, reason}``)."""
    rejected = [d for d in decisions if d.get("decision") in ("rejected", "regenerate")]
    if not rejected:
        return []
    text = f"{len(rejected)} human decision(s) turned something down: " + ", ".join(
        f"{d.get('what')} {d.get('id')} ({d.get('decision')})" for d in rejected[:5]
    )
    return [_signal("reviewer_reject", [], text, {"decisions": list(rejected)[:MAX_CASES]})]


def detect(
    artifact: Mapping[str, Any],
    *,
    previous: Mapping[str, Any] | None = None,
    decisions: Sequence[Mapping[str, Any]] = (),
) -> list[Signal]:
    """Every signal of the run, in the table's order."""
    return [
        *flips(artifact, previous),
        *selector_overrides(artifact),
        *search_misses(artifact),
        *auth_readiness_drift(artifact, previous),
        *budget_breaches(artifact),
        *guard_violations(artifact),
        *reviewer_rejects(decisions),
    ]

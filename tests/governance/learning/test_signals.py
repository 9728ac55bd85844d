"""The eight learning signals: each detector fires on what it names, and stays quiet otherwise."""

from __future__ import annotations

from typing import Any

from governance.builders import artifact, plan_case, search_case
from qlab.governance.learning.signals import SIGNALS, detect


def _names(found: list[dict[str, Any]]) -> list[str]:
    return [s["signal"] for s in found]


def _files(data: dict[str, Any], digest: str) -> dict[str, Any]:
    data["provenance"]["dataset"]["files"] = [{"path": "gates/search_core/s-1.yaml", "digest": digest}]
    return data


def test_there_are_eight_signals_and_a_clean_run_raises_none() -> None:
    assert len(SIGNALS) == 8
    assert detect(artifact([search_case("s-1"), plan_case("p-1")])) == []


def test_a_case_that_failed_before_and_passes_now_is_fixed_or_corrected() -> None:
    before = _files(artifact([search_case("s-1", rank=None)], run_id="run-1"), "sha256:a")
    fixed = _files(artifact([search_case("s-1")], run_id="run-2"), "sha256:a")
    (signal,) = detect(fixed, previous=before)
    assert (signal["signal"], signal["case_ids"]) == ("failed_then_succeeded", ["s-1"])
    assert signal["evidence"]["failures"]["s-1"]["reason"] == "expected_target_absent"
    corrected = _files(artifact([search_case("s-1")], run_id="run-2"), "sha256:b")  # its file was edited
    assert _names(detect(corrected, previous=before)) == ["user_correction"]
    assert detect(fixed) == []  # nothing to compare with


def test_an_infrastructure_failure_that_recovers_is_no_fix() -> None:
    failure = {"stage": "select", "reason": "llm_unreachable", "message": ""}
    before = artifact([plan_case("p-1", status="error", failure=failure)])
    assert detect(artifact([plan_case("p-1")]), previous=before) == []


def test_a_wrong_override_and_ambiguity_are_selector_signals() -> None:
    wrong = plan_case("p-1", llm="getOrder", selected="cancelOrder", correct=False)
    tied = plan_case("p-2")
    tied["target_selector"]["ambiguous"] = True
    right = plan_case("p-3", llm="getMemberDeliveryList")  # overridden and right: no signal
    (signal,) = detect(artifact([wrong, tied, right]))
    assert signal["signal"] == "selector_override"
    assert signal["evidence"] == {"wrong": ["p-1"], "ambiguous": ["p-2"]}


def test_search_misses() -> None:
    (signal,) = detect(artifact([search_case("s-1", rank=None), search_case("s-2", rank=None)]))
    assert (signal["signal"], signal["case_ids"]) == ("search_miss", ["s-1", "s-2"])


def test_auth_readiness_drift_from_the_previous_run_the_prerun_check_or_coverage() -> None:
    ready = {"status": "ready", "profile": "b", "headers": ["Authorization"], "reason_codes": []}
    before = artifact(
        [{"case_id": "e-1", "suite": "x", "mode": "execute", "status": "passed", "auth_readiness": ready}],
        readiness={"schema_coverage": 0.95},
    )
    failure = {"stage": "execute", "reason": "auth_context_required", "message": ""}
    now = artifact(
        [{"case_id": "e-1", "suite": "x", "mode": "execute", "status": "failed", "failure": failure}],
        readiness={"schema_coverage": 0.9},
    )
    auth, coverage = detect(now, previous=before)
    assert (auth["signal"], auth["case_ids"], auth["evidence"]["kind"]) == (
        "auth_readiness_drift",
        ["e-1"],
        "auth",
    )
    assert coverage["evidence"] == {
        "kind": "readiness",
        "schema_coverage_before": 0.95,
        "schema_coverage_now": 0.9,
    }
    check = {"guard": "auth_readiness", "stage": "pre-run", "message": "x", "subject": "dev"}
    failing, passing = (
        artifact([], prerun=[{**check, "passed": False}]),
        artifact([], prerun=[{**check, "passed": True}]),
    )
    assert _names(detect(failing, previous=passing)) == ["auth_readiness_drift"]


def test_drift_is_a_change_not_a_state() -> None:
    """Rule: drift is reported only on a change. A case rejected 401/403 in both runs, a pre-run auth check
    failing in both, and a first run with nothing before it are no drift (each was reported on every run);
    a case that passed before and gets 401 now is."""
    ready = {"status": "ready", "profile": "b", "headers": ["Authorization"], "reason_codes": []}
    rejected = {"stage": "execute", "reason": "auth_failed", "message": "HTTP 401"}

    def run(status: str, **extra: Any) -> dict[str, Any]:
        case = {"case_id": "e-1", "suite": "x", "mode": "execute", "status": status, "auth_readiness": ready}
        return {**case, **extra}

    check = {"guard": "auth_readiness", "stage": "pre-run", "passed": False, "message": "x", "subject": "dev"}
    before = artifact([run("failed", failure=rejected)], prerun=[check])
    now = artifact([run("failed", failure=rejected)], prerun=[check])
    assert detect(now, previous=before) == []
    assert detect(now) == []
    (drift,) = detect(now, previous=artifact([run("passed")]))
    assert (drift["case_ids"], drift["evidence"]["reasons"]) == (["e-1"], ["auth_failed"])


def test_a_failed_budget_check_is_a_breach_and_other_failed_checks_are_violations() -> None:
    guards = [
        {
            "guard": "budget",
            "stage": "plan",
            "passed": False,
            "mode": "warn",
            "message": "run time 9.0s > 5s",
        },
        {"guard": "citation_coverage", "stage": "execute", "passed": False, "mode": "warn", "message": "e-1"},
        {"guard": "scrub", "stage": "learn", "passed": True, "mode": "block", "message": ""},
    ]
    data = artifact([search_case("s-1")], guards=guards, duration_ms=9000.0)
    data["provenance"]["run_configuration"] = {"budget": {"max_duration_sec": 5}}
    budget, violation = detect(data)
    assert budget["signal"] == "budget_breach"
    assert (
        budget["evidence"]["used"]["duration_sec"] == 9.0
        and budget["evidence"]["budget"]["max_duration_sec"] == 5
    )
    assert violation["signal"] == "guard_violation"
    assert [g["guard"] for g in violation["evidence"]["guards"]] == ["citation_coverage"]


def test_rejections_and_regenerate_requests_on_record_are_reviewer_rejects() -> None:
    decisions = [
        {"what": "proposal", "id": "sg-1", "decision": "accepted"},
        {"what": "proposal", "id": "sg-2", "decision": "rejected"},
        {"what": "release review of s", "id": "sha256:x", "decision": "regenerate"},
    ]
    (signal,) = detect(artifact([search_case("s-1")]), decisions=decisions)
    assert signal["signal"] == "reviewer_reject"
    assert [d["id"] for d in signal["evidence"]["decisions"]] == ["sg-2", "sha256:x"]

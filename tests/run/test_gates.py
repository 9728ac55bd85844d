"""Gate verdicts and the decision, on artifact-level data."""

from __future__ import annotations

from typing import Any

from qlab.run import gates
from qlab.run.gates import GateSpec


def _c(case_id: str, suite: str = "s", status: str = "passed", **kw: Any) -> dict[str, Any]:
    return {"case_id": case_id, "suite": suite, "mode": "search", "status": status, "latency_ms": {}, **kw}


SPEC = GateSpec(
    "search", "search", ("s", "t"), (("hit_at_k", ">=", 0.9),), (("expected_target_absent", None),)
)


def _eval(cases: list[dict[str, Any]], metrics: dict[str, dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return gates.evaluate(
        SPEC,
        cases=cases,
        suite_metrics=metrics,
        stage_metrics={},
        rules={n: gates.SuiteRule(required=r) for n, r in kw.pop("required", {"s": True, "t": True}).items()},
        **kw,
    )


def test_thresholds_per_suite() -> None:
    record = _eval([_c("a")], {"s": {"hit_at_k": 0.95}, "t": {"hit_at_k": 0.5}})
    assert record["status"] == "blocked"
    assert [(r["suite"], r["passed"], r["gating"]) for r in record["thresholds"]] == [
        ("s", True, True),
        ("t", False, True),
    ]
    assert record["reasons"] == ["hit_at_k 0.5 breaches >= 0.9 (t)"]


def test_no_data_and_required_false_do_not_gate() -> None:
    record = _eval(
        [_c("a", "t")], {"s": {"hit_at_k": None}, "t": {"hit_at_k": 0.5}}, required={"s": True, "t": False}
    )
    assert record["status"] == "warned" and record["thresholds"][0]["gating"] is False
    assert record["warnings"] == ["hit_at_k 0.5 breaches >= 0.9 (t); suite is required: false"]


def test_deferred_thresholds_warn() -> None:
    record = _eval([_c("a")], {"s": {"hit_at_k": 0.5}}, defer_thresholds=True)
    assert record["status"] == "warned" and "deferred" in record["reasons"][0]


def test_stops_from_failure_reasons_and_reported() -> None:
    miss = _c("m", status="failed", failure={"stage": "search", "reason": "expected_target_absent"})
    flaky = _c(
        "f", status="failed", flaky=True, failure={"stage": "search", "reason": "expected_target_absent"}
    )
    record = _eval(
        [miss],
        {"s": {"hit_at_k": 1.0}},
        reported_stops=[{"condition": "expected_target_absent", "case_ids": ["m"], "message": "m missing"}],
    )
    assert record["stops"] == [
        {"condition": "expected_target_absent", "case_ids": ["m"], "message": "m missing", "gating": True}
    ]
    only_flaky = _eval([flaky], {"s": {"hit_at_k": 1.0}})
    assert only_flaky["status"] == "warned" and only_flaky["stops"][0]["gating"] is False


def test_guards_by_mode() -> None:
    bad = {"guard": "budget", "stage": "search", "passed": False, "mode": "warn", "message": "over"}
    assert _eval([_c("a")], {"s": {"hit_at_k": 1.0}}, guards=[bad])["status"] == "warned"
    assert (
        _eval([_c("a")], {"s": {"hit_at_k": 1.0}}, guards=[{**bad, "mode": "block"}])["status"] == "blocked"
    )


def test_decide() -> None:
    passed = {"name": "a", "status": "passed", "reasons": [], "warnings": []}
    blocked = {"name": "b", "status": "blocked", "reasons": ["x", "w"], "warnings": ["w"]}
    assert gates.decide([passed]) == {
        "verdict": "pass",
        "reasons": ["1 gate(s) passed"],
        "exit_code": 0,
        "advisory": False,
    }
    assert gates.decide([passed, blocked]) == {
        "verdict": "block",
        "reasons": ["gate b blocked: x"],
        "exit_code": 1,
        "advisory": False,
    }
    assert gates.decide([blocked], exit_zero=True)["exit_code"] == 0
    pre = [
        {
            "guard": "sources_resolvable",
            "stage": "pre-run",
            "passed": False,
            "mode": "block",
            "message": "gone",
        }
    ]
    assert gates.decide([passed], prerun=pre, exit_zero=True)["exit_code"] == 2


def test_roll_back_and_round_trip() -> None:
    case = _c(
        "p",
        search={"hit": True, "top_k": 5},
        plan={"status": "synthesized"},
        latency_ms={"search": 1.0, "plan": 2.0},
    )
    gates.roll_back(case, blocking_stage="search", message="m")
    assert "plan" not in case and case["latency_ms"] == {"search": 1.0} and case["status"] == "blocked"
    record = _eval([_c("a")], {"s": {"hit_at_k": 1.0}})
    assert GateSpec.from_record(record) == SPEC

"""Gate verdicts and the decision, on artifact-level data."""

from __future__ import annotations

from typing import Any

import pytest

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
    # the message comes from the cases alone (the same words for a run and for the merge of its shards)
    message = "1 case(s): m (expected_target_absent)"
    assert record["stops"] == [
        {"condition": "expected_target_absent", "case_ids": ["m"], "message": message, "gating": True}
    ]
    # a stop the stage reported with cases no failure reason explains keeps the cases; one without cases keeps
    # the stage's message
    learned = gates.evaluate(
        GateSpec("learn", "learn", (), (), (("scrub_failed", None),)),
        cases=[],
        suite_metrics={},
        stage_metrics={},
        rules={},
        reported_stops=[{"condition": "scrub_failed", "case_ids": [], "message": "a token in summary.md"}],
    )
    assert [s["message"] for s in learned["stops"]] == ["a token in summary.md"]
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


# --------------------------------------------------------------------------------------------- the decision rule

FAIL = {"stage": "execute", "reason": "assertion_failed"}


def _x(case_id: str, suite: str = "r", status: str = "passed", **kw: Any) -> dict[str, Any]:
    """An execute case (``failure`` given as a dict)."""
    case = {"case_id": case_id, "suite": suite, "mode": "execute", "status": status, "latency_ms": {}, **kw}
    if status == "passed":
        case.update(search={"hit": True, "hit_rank": 1}, plan={"status": "synthesized"}, execute={})
    return case


def _judge(
    spec: GateSpec, cases: list[dict[str, Any]], rules: dict[str, gates.SuiteRule] | None = None, **kw: Any
) -> dict[str, Any]:
    from qlab import metrics

    suite_metrics = {
        s: metrics.case_metrics([c for c in cases if c["suite"] == s]) for s in {c["suite"] for c in cases}
    }
    return gates.evaluate(
        spec, cases=cases, suite_metrics=suite_metrics, stage_metrics={}, rules=rules or {}, **kw
    )


EXECUTE = GateSpec("execute", "execute", ("r",))


def test_a_gate_without_tolerance_blocks_on_the_first_failing_required_case() -> None:
    record = _judge(EXECUTE, [_x("ok"), _x("bad", status="failed", failure=FAIL)])
    assert record["status"] == "blocked"
    assert record["reasons"] == [
        "r: 1 failing case(s), tolerates 0 (no tolerance stated: no max_failures, no share-of-cases threshold "
        "measured on it): bad at execute (assertion_failed)"
    ]
    assert record["failures"] == [
        {
            "suite": "r",
            "must_pass": False,
            "failing": 1,
            "tolerated": 0,
            "tolerance": "no tolerance stated: no max_failures, no share-of-cases threshold measured on it",
            "cases": [{"case_id": "bad", "stage": "execute", "reason": "assertion_failed"}],
            "blocks": True,
        }
    ]
    assert gates.decide([record])["verdict"] == "block"


@pytest.mark.parametrize(
    ("n", "op", "value", "allowed"),
    [(10, ">=", 0.9, 1), (30, ">=", 0.95, 1), (10, ">", 0.9, 0), (3, ">=", 0.5, 1), (5, ">=", 1.0, 0),
     (10, "==", 0.8, 2), (7, ">=", 0.0, 7), (4, ">", 0.5, 1)],
)  # fmt: skip
def test_a_share_threshold_tolerates_floor_of_one_minus_r_times_n(
    n: int, op: str, value: float, allowed: int
) -> None:
    assert gates.allowed(n, op, value) == allowed
    # and it is exactly the most failures that keep the share: one more breaks it
    if op == ">=":
        assert (n - allowed) / n >= value - 1e-12 and (allowed == n or (n - allowed - 1) / n < value)


def test_share_thresholds_and_max_failures_state_the_tolerance() -> None:
    cases = [_x(f"c{i}") for i in range(9)] + [_x("bad", status="failed", failure=FAIL)]
    share = GateSpec("execute", "execute", ("r",), (("execute_success_rate", ">=", 0.9),))
    assert _judge(share, cases)["status"] == "passed"  # 1 of 10 tolerated, and 0.9 holds
    assert _judge(share, [*cases, _x("bad2", status="failed", failure=FAIL)])["status"] == "blocked"
    limit = GateSpec("execute", "execute", ("r",), max_failures=1)
    assert _judge(limit, cases)["status"] == "passed"
    two = _judge(limit, [*cases, _x("bad2", status="failed", failure=FAIL)])
    assert two["status"] == "blocked" and "tolerates 1 (max_failures: 1)" in two["reasons"][0]
    # a threshold that is not a share of cases states no tolerance (latency, override rate)
    latency = GateSpec("execute", "execute", ("r",), (("latency_execute_p95_ms", "<=", 1000.0),))
    assert _judge(latency, cases)["status"] == "blocked"


@pytest.mark.parametrize("rule", [{"category": "regression"}, {"category": "flow", "must_pass": True}])
def test_regression_and_must_pass_suites_tolerate_none_whatever_the_gate_says(rule: dict[str, Any]) -> None:
    cases = [_x(f"c{i}") for i in range(9)] + [_x("bad", status="failed", failure=FAIL)]
    lenient = GateSpec("execute", "execute", ("r",), (("execute_success_rate", ">=", 0.5),), max_failures=5)
    record = _judge(lenient, cases, {"r": gates.suite_rule(rule)})
    assert record["status"] == "blocked"
    assert "a must-pass suite" in record["reasons"][0] and "tolerates 0" in record["reasons"][0]
    assert _judge(lenient, cases, {"r": gates.suite_rule({"category": "flow"})})["status"] == "passed"


def test_a_case_is_charged_to_the_first_gate_of_its_suite_at_or_after_its_stage() -> None:
    at_plan = _x("e3", status="failed", failure={"stage": "plan", "reason": "plan_failed"})
    # the suite is only in the execute gate: the execute gate answers for a failure at plan, naming the stage
    assert gates.charged(EXECUTE, [at_plan]) == [at_plan]
    record = _judge(EXECUTE, [_x("e1"), at_plan])
    assert record["status"] == "blocked" and "e3 at plan (plan_failed)" in record["reasons"][0]
    # with a plan gate of the same suite before it, that gate answers for it, not the execute gate
    plan_gate = GateSpec("plan", "plan", ("r",))
    assert gates.charged(EXECUTE, [at_plan], earlier=[plan_gate]) == []
    # a later failure is never an earlier gate's
    at_execute = _x("e4", status="failed", failure=FAIL)
    assert gates.charged(plan_gate, [at_execute]) == []
    # another suite's case is not this gate's
    assert gates.charged(EXECUTE, [{**at_plan, "suite": "other"}]) == []


def test_a_rate_names_the_cases_it_counts_from_earlier_stages() -> None:
    spec = GateSpec("execute", "execute", ("r",), (("execute_read_success_rate", ">=", 1.0),))
    cases = [_x(f"e{i}", mutation_safety="read_only") for i in range(5)]
    cases.append(
        _x(
            "e5",
            status="failed",
            mutation_safety="read_only",
            failure={"stage": "plan", "reason": "plan_failed"},
        )
    )
    row = _judge(spec, cases)["thresholds"][0]
    assert row["actual"] == pytest.approx(5 / 6, abs=1e-6) and row["failed_earlier"] == {"plan": 1}


def test_an_infrastructure_fault_makes_the_gate_error_and_the_run_error_never_block() -> None:
    down = _x("e1", status="error", failure={"stage": "execute", "reason": "dev_server_failed"})
    failing = _x("e2", status="failed", failure=FAIL)
    record = _judge(EXECUTE, [down, failing])
    assert record["status"] == "error" and record["errors"] == [
        {"reason": "dev_server_failed", "case_ids": ["e1"]}
    ]
    assert record["reasons"][0].startswith(
        "1 case(s) could not be judged: dev_server_failed (e1); Read the server"
    )
    decision = gates.decide([record], exit_zero=True)
    assert (decision["verdict"], decision["exit_code"]) == ("error", 2)
    assert all("block" not in r.lower() for r in decision["reasons"])
    # a required: false suite's fault does not stop the decision
    optional = _judge(EXECUTE, [down], {"r": gates.SuiteRule(required=False)})
    assert optional["status"] == "warned"


def test_a_failed_pre_run_check_is_an_error_with_its_hint() -> None:
    pre = [
        {
            "guard": "environment_reachable",
            "stage": "pre-run",
            "passed": False,
            "mode": "block",
            "message": "environment dev: http://x does not answer",
            "reason": "environment_unreachable",
        }
    ]
    decision = gates.decide([], prerun=pre)
    assert decision["verdict"] == "error" and decision["exit_code"] == 2
    assert "Start the environment" in decision["reasons"][0]


def test_a_case_that_passed_only_some_repeats_warns_as_flaky() -> None:
    record = _judge(EXECUTE, [_x("e1", attempts=3, passes=2)])
    assert record["status"] == "warned"
    assert record["warnings"] == ["1 case(s) passed only some of their repeats (flaky): e1 (2/3)"]
    assert gates.decide([record])["verdict"] == "pass"


def test_a_shard_defers_a_threshold_tolerance_but_not_a_must_pass_one() -> None:
    spec = GateSpec("execute", "execute", ("r",), (("execute_success_rate", ">=", 0.9),))
    cases = [_x("c1"), _x("bad", status="failed", failure=FAIL)]
    deferred = _judge(spec, cases, defer_thresholds=True)
    assert deferred["status"] == "warned" and any("qlab merge counts" in w for w in deferred["warnings"])
    regression = _judge(
        spec, cases, {"r": gates.suite_rule({"category": "regression"})}, defer_thresholds=True
    )
    assert regression["status"] == "blocked"


def test_the_record_round_trips_max_failures() -> None:
    spec = GateSpec("execute", "execute", ("r",), max_failures=2)
    assert GateSpec.from_record(_judge(spec, [_x("a")])) == spec

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
    gates.roll_back(case, blocking_stage="search", gate="search")
    assert "plan" not in case and case["latency_ms"] == {"search": 1.0} and case["status"] == "blocked"
    assert case["failure"]["message"] == "the search gate blocked the run; this case never ran"
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
    from qlab.contracts import metrics

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


# --------------------------------------------------------------------------------------------- each rule at its edge
# (each test names the rule it protects; the mutants they were written for: git show 6b179e1:bench/RESULTS-mutation.md)

OP_TABLE = [  # (op, actual, value, holds): every operator at its boundary and one step either side
    (">=", 0.9, 0.9, True), (">=", 0.89, 0.9, False), (">=", 0.91, 0.9, True),
    (">", 0.9, 0.9, False), (">", 0.91, 0.9, True), (">", 0.89, 0.9, False),
    ("<=", 250.0, 250.0, True), ("<=", 250.5, 250.0, False), ("<=", 249.5, 250.0, True),
    ("<", 250.0, 250.0, False), ("<", 249.5, 250.0, True), ("<", 250.5, 250.0, False),
    ("==", 1.0, 1.0, True), ("==", 0.99, 1.0, False), ("==", 1.01, 1.0, False),
    ("!=", 0.0, 0.0, False), ("!=", 0.01, 0.0, True), ("!=", -0.01, 0.0, True),
]  # fmt: skip


@pytest.mark.parametrize(("op", "actual", "value", "holds"), OP_TABLE)
def test_every_threshold_operator_at_its_boundary(op: str, actual: float, value: float, holds: bool) -> None:
    """Rule: a threshold ``metric op value`` holds exactly when the comparison does — equality included for
    >=, <= and ==, excluded for >, < and != — and a breach on a required suite blocks the gate."""
    spec = GateSpec("search", "search", ("s",), (("mrr", op, value),))
    record = gates.evaluate(
        spec, cases=[_c("a")], suite_metrics={"s": {"mrr": actual}}, stage_metrics={}, rules={}
    )
    row = record["thresholds"][0]
    assert (row["actual"], row["passed"], row["gating"]) == (actual, holds, True)
    assert record["status"] == ("passed" if holds else "blocked")
    if not holds:
        assert record["reasons"] == [f"mrr {actual:g} breaches {op} {value:g} (s)"]


def test_a_threshold_without_suites_is_judged_on_the_stage_figures_and_gates() -> None:
    """Rule: a gate that names no suite judges its thresholds on the stage's figures, and a breach blocks."""
    spec = GateSpec("build", "build", (), (("schema_coverage", ">=", 0.9),))
    record = gates.evaluate(
        spec, cases=[], suite_metrics={}, stage_metrics={"schema_coverage": 0.5}, rules={}
    )
    assert record["thresholds"] == [
        {"metric": "schema_coverage", "op": ">=", "value": 0.9, "actual": 0.5, "passed": False, "suite": None,
         "gating": True}
    ]  # fmt: skip
    assert (record["status"], record["reasons"]) == ("blocked", ["schema_coverage 0.5 breaches >= 0.9"])


def test_a_breach_names_every_earlier_stage_it_counts() -> None:
    spec = GateSpec("execute", "execute", ("r",), (("execute_success_rate", ">=", 1.0),))
    cases = [
        _x("ok"),
        _x("s1", status="failed", failure={"stage": "search", "reason": "expected_target_absent"}),
        _x("p1", status="failed", failure={"stage": "plan", "reason": "plan_failed"}),
        _x("p2", status="failed", failure={"stage": "plan", "reason": "plan_failed"}),
    ]
    record = _judge(spec, cases)
    assert record["reasons"][0] == (
        "execute_success_rate 0.25 breaches >= 1 (r) (counting 1 failed at search, 2 failed at plan)"
    )


@pytest.mark.parametrize(
    ("n", "op", "value", "allowed"),
    [(10**6, ">=", 1e-06, 999_999), (10**6, ">", 1e-06, 999_998), (10**5, ">=", 0.99999, 1),
     (3, ">=", 2e-16, 2), (10, ">=", 1e20, 0), (10, ">=", -0.5, 15), (10, ">=", 1, 0)],
)  # fmt: skip
def test_a_share_is_read_as_the_decimal_it_is_written_as(n: int, op: str, value: float, allowed: int) -> None:
    """Exact decimal arithmetic without the fractions module: exponents (1e-06 is a millionth), a share above 1
    or below 0, an int share."""
    assert gates.allowed(n, op, value) == allowed


@pytest.mark.parametrize(
    ("n", "op", "value", "allowed"),
    [(10, ">", 0.85, 1), (10, ">", 0.8, 1), (10, "==", 0.8, 2), (2, ">=", 1.5, 0), (2, ">", 1.5, 0)],
)
def test_strict_and_equal_shares_tolerate_what_keeps_them_true(
    n: int, op: str, value: float, allowed: int
) -> None:
    """Rule 3 for > and ==: ``> 0.85`` over 10 tolerates 1 (0.9 > 0.85), ``> 0.8`` also 1 (0.8 is not > 0.8);
    a share above 1 can never hold and tolerates none."""
    assert gates.allowed(n, op, value) == allowed


@pytest.mark.parametrize(("op", "tolerated"), [(">=", 2), (">", 1), ("==", 2)])
def test_every_share_operator_states_its_tolerance(op: str, tolerated: int) -> None:
    spec = GateSpec("execute", "execute", ("r",), (("execute_success_rate", op, 0.8),))
    cases = [_x(f"c{i}") for i in range(10)]
    most, why, from_thresholds = gates.tolerance(spec, "r", cases, gates.SuiteRule())
    assert (most, why, from_thresholds) == (tolerated, f"execute_success_rate {op} 0.8 over 10 case(s)", True)


@pytest.mark.parametrize("op", ["<=", "<", "!="])
def test_a_share_bounded_from_above_states_no_tolerance(op: str) -> None:
    spec = GateSpec("execute", "execute", ("r",), (("execute_success_rate", op, 0.8),))
    assert gates.tolerance(spec, "r", [_x("c")], gates.SuiteRule())[0] == 0


def test_a_share_measured_on_no_case_states_no_tolerance() -> None:
    """A share threshold over zero measured cases gives no tolerance (it is "no data", not "0 of 0 allowed")."""
    spec = GateSpec("execute", "execute", ("r",), (("hit_at_k", ">=", 0.9),))
    unmeasured = [_x("e1", status="failed", failure=FAIL)]  # an execute failure has no search object
    assert gates.tolerance(spec, "r", unmeasured, gates.SuiteRule()) == (
        0,
        "no tolerance stated: no max_failures, no share-of-cases threshold measured on it",
        False,
    )


def test_a_threshold_on_a_metric_this_qlab_does_not_know_states_no_tolerance() -> None:
    """A record from another qlab may name a metric this one does not define: no tolerance, and no crash."""
    spec = GateSpec("execute", "execute", ("r",), (("future_metric", ">=", 0.5),))
    assert gates.tolerance(spec, "r", [_x("c")], gates.SuiteRule())[0:2] == (
        0,
        "no tolerance stated: no max_failures, no share-of-cases threshold measured on it",
    )


def test_max_failures_is_judged_by_every_shard_not_deferred() -> None:
    """Rule: a shard defers only the tolerance it derived from a share (its n is not the run's); ``max_failures``
    and "none stated" are per suite and block in the shard itself."""
    cases = [_x("c1"), _x("bad", status="failed", failure=FAIL), _x("bad2", status="failed", failure=FAIL)]
    limit = GateSpec("execute", "execute", ("r",), max_failures=1)
    assert gates.tolerance(limit, "r", cases, gates.SuiteRule()) == (1, "max_failures: 1", False)
    assert _judge(limit, cases, defer_thresholds=True)["status"] == "blocked"
    assert _judge(EXECUTE, cases, defer_thresholds=True)["status"] == "blocked"


def test_the_failure_records_say_whether_they_block() -> None:
    """``failures[].blocks``: true when the suite blocks here, false when a shard defers it to merge."""
    spec = GateSpec("execute", "execute", ("r",), (("execute_success_rate", ">=", 0.9),))
    cases = [_x("c1"), _x("bad", status="failed", failure=FAIL)]
    assert (
        gates.judge_failures(spec, cases, rules={})["failures"][0]["blocks"] is True
    )  # not deferred by default
    assert gates.judge_failures(spec, cases, rules={}, defer=True)["failures"][0]["blocks"] is False
    assert gates.judge_failures(EXECUTE, cases, rules={}, defer=True)["failures"][0]["blocks"] is True
    assert gates.judge_failures(EXECUTE, [_x("c1")], rules={})["failures"][0]["blocks"] is False


def test_only_failed_or_error_cases_with_a_failure_are_charged() -> None:
    """Rule 2: a ``blocked``/``skipped`` case (it never ran) and a ``failed`` case without its failure object are
    not failing cases of the gate."""
    blocked = _x("b", status="blocked", failure={"stage": "search", "reason": "blocked_by_stage"})
    skipped = _x("k", status="skipped", failure={"stage": "execute", "reason": "stopped_by_error"})
    bare = _x("f", status="failed")
    error = _x("e", status="error", failure={"stage": "execute", "reason": "assertion_failed"})
    assert gates.charged(EXECUTE, [blocked, skipped, bare, error]) == [error]


def test_charging_looks_at_every_case_not_only_the_first() -> None:
    passing, other, failing = (
        _x("ok"),
        {**_x("o", status="failed", failure=FAIL), "suite": "x"},
        _x("f", status="failed", failure=FAIL),
    )
    late = _x("late", status="failed", failure={"stage": "learn", "reason": "scrub_failed"})
    assert gates.charged(EXECUTE, [passing, other, late, failing]) == [failing]


def test_an_earlier_gate_of_another_suite_takes_nothing_from_this_one() -> None:
    at_plan = _x("e3", status="failed", failure={"stage": "plan", "reason": "plan_failed"})
    other_suite_later = GateSpec("smoke", "execute", ("other",))
    same_suite_earlier_stage = GateSpec("search", "search", ("r",))
    assert gates.charged(EXECUTE, [at_plan], earlier=[other_suite_later, same_suite_earlier_stage]) == [
        at_plan
    ]


def test_a_failure_at_a_stage_qlab_does_not_order_is_charged_to_the_first_gate_of_its_suite() -> None:
    """A failure whose stage is not a gate stage (e.g. ``pre-run``) counts before every stage: the first gate that
    judges the suite answers for it, the build gate included."""
    odd = _x("o", status="failed", failure={"stage": "pre-run", "reason": "auth_profile_missing"})
    assert gates.charged(GateSpec("build", "build", ("r",)), [odd]) == [odd]
    assert gates.charged(EXECUTE, [odd], earlier=[GateSpec("build", "build", ("r",))]) == []


def test_every_suite_of_a_gate_is_judged_even_after_an_empty_one() -> None:
    spec = GateSpec("execute", "execute", ("empty", "r"))
    record = _judge(spec, [_x("bad", status="failed", failure=FAIL)])
    assert record["status"] == "blocked" and [f["suite"] for f in record["failures"]] == ["r"]


def test_at_most_five_cases_are_named_then_an_ellipsis() -> None:
    five = [_x(f"b{i}", status="failed", failure=FAIL) for i in range(5)]
    listed = ", ".join(f"b{i} at execute (assertion_failed)" for i in range(5))
    assert _judge(EXECUTE, five)["reasons"][0].endswith(f"measured on it): {listed}")
    six = [*five, _x("b5", status="failed", failure=FAIL)]
    assert _judge(EXECUTE, six)["reasons"][0].endswith(f"measured on it): {listed} …")
    shaky = [_x(f"e{i}", attempts=3, passes=2) for i in range(6)]
    shown = ", ".join(f"e{i} (2/3)" for i in range(5))
    assert _judge(EXECUTE, shaky[:5])["warnings"] == [
        f"5 case(s) passed only some of their repeats (flaky): {shown}"
    ]
    assert _judge(EXECUTE, shaky)["warnings"] == [
        f"6 case(s) passed only some of their repeats (flaky): {shown} …"
    ]


def test_must_pass_says_why_and_other_suites_have_no_reason() -> None:
    assert gates.suite_rule({"category": "flow", "must_pass": True}) == gates.SuiteRule(
        True, True, "must_pass: true"
    )
    assert gates.suite_rule({"category": "regression"}) == gates.SuiteRule(True, True, "category regression")
    assert gates.suite_rule({"category": "flow", "required": False}) == gates.SuiteRule(False, False, "")
    assert gates.suite_rules({"a": {}}) == {"a": gates.SuiteRule(True, False, "")}
    most, why, _ = gates.tolerance(EXECUTE, "r", [], gates.suite_rule({"must_pass": True}))
    assert (most, why) == (0, "a must-pass suite (must_pass: true) tolerates none")


def test_error_texts() -> None:
    ids = [f"e{i}" for i in range(7)]
    assert gates.error_text({"reason": "made_up", "case_ids": ids[:2]}) == (
        "2 case(s) could not be judged: made_up (e0, e1)"
    )
    assert gates.error_text({"reason": "made_up", "case_ids": ids}) == (
        "7 case(s) could not be judged: made_up (e0, e1, e2, e3, e4 …)"
    )
    assert (
        gates.error_text({"reason": "made_up", "case_ids": [], "message": "spec gone"})
        == "made_up: spec gone"
    )
    assert gates.error_text({"reason": "made_up"}) == "made_up: "
    hint = gates.REASONS["spec_fetch_failed"].hint
    assert (
        gates.error_text({"reason": "spec_fetch_failed", "message": "404"})
        == f"spec_fetch_failed: 404; {hint}"
    )


def test_the_records_of_gates_that_did_not_run() -> None:
    spec = GateSpec("search", "search", ("s",), (("hit_at_k", ">=", 0.9),), (("top_1_below", 0.5),))
    assert gates.skipped(spec, "blocked by gate build") == {
        "name": "search",
        "stage": "search",
        "suites": ["s"],
        "stop_if": [{"name": "top_1_below", "value": 0.5}],
        "status": "skipped",
        "thresholds": [
            {
                "metric": "hit_at_k",
                "op": ">=",
                "value": 0.9,
                "actual": None,
                "passed": None,
                "suite": None,
                "gating": False,
            }
        ],
        "stops": [],
        "guards": [],
        "reasons": ["blocked by gate build"],
        "warnings": [],
    }
    record = gates.errored(spec, "spec_fetch_failed", "404")
    assert record["status"] == "error"
    assert record["errors"] == [{"reason": "spec_fetch_failed", "case_ids": [], "message": "404"}]
    assert record["reasons"] == [gates.error_text(record["errors"][0])]
    assert gates.decide([record])["reasons"] == [f"gate search could not decide: {record['reasons'][0]}"]


def test_gate_specs_from_config_and_from_minimal_records() -> None:
    from qlab.project.model import Gate, StopCondition, Threshold

    gate = Gate("execute", "execute", ("r",), (Threshold("pass_rate", ">=", 1),), (StopCondition("x_below", 0.5),),
                max_failures=2)  # fmt: skip
    spec = GateSpec.from_config(gate, suites=("r", "q"))
    assert spec == GateSpec(
        "execute", "execute", ("r", "q"), (("pass_rate", ">=", 1.0),), (("x_below", 0.5),), 2
    )
    assert GateSpec.from_record(gates.skipped(spec, "x") | {"max_failures": 2}) == spec
    assert GateSpec.from_record({"name": "n", "stage": "plan"}) == GateSpec("n", "plan")


def test_roll_back_removes_the_later_stages_only() -> None:
    """Rule: a case rolled back to a blocking stage keeps what it did up to that stage and nothing after."""
    full = {
        "search": {"hit": True},
        "target_selector": {"selected_target": "t"},
        "plan": {"status": "synthesized"},
        "execute": {},
        "auth_readiness": {},
        "assertions": [{"type": "http_status", "passed": True}],
        "learning": {},
        "latency_ms": {"search": 1.0, "target_selection": 2.0, "plan": 3.0, "execute": 4.0},
    }
    at_search = _x("a", **full)
    gates.roll_back(at_search, blocking_stage="search", gate="g")
    assert set(at_search) - {"case_id", "suite", "mode", "status", "failure"} == {"search", "latency_ms"}
    assert at_search["latency_ms"] == {"search": 1.0}
    at_execute = _x("b", **{**full, "latency_ms": dict(full["latency_ms"])})
    gates.roll_back(at_execute, blocking_stage="execute", gate="g")
    assert "assertions" in at_execute and "execute" in at_execute and "learning" not in at_execute
    assert at_execute["latency_ms"] == full["latency_ms"]
    bare = {"case_id": "c", "suite": "r", "status": "passed"}  # no latencies recorded: nothing to remove
    gates.roll_back(bare, blocking_stage="plan", gate="g")
    assert bare["status"] == "blocked"
    odd = _x("d", **{**full, "latency_ms": dict(full["latency_ms"])})
    gates.roll_back(odd, blocking_stage="pre-run", gate="g")  # not a stage: nothing after it is known
    assert "execute" in odd and odd["failure"]["stage"] == "pre-run"


@pytest.mark.parametrize(
    ("error", "status", "reason"),
    [(False, "blocked", "blocked_by_stage"), (True, "skipped", "stopped_by_error")],
)
def test_roll_back_says_why_the_case_never_ran(error: bool, status: str, reason: str) -> None:
    case = _x("a", status="failed", failure=FAIL)
    gates.roll_back(case, blocking_stage="plan", gate="plan", error=error)
    what = "could not decide" if error else "blocked the run"
    assert (case["status"], case["failure"]) == (
        status,
        {"stage": "plan", "reason": reason, "message": f"the plan gate {what}; this case never ran"},
    )


def test_a_stopped_case_is_told_which_stage_it_went_through_and_which_it_never_reached() -> None:
    """Rule: a case a blocking gate stopped after it went through select is not told it never ran there."""
    case = _x(
        "a", target_selector={"selected_target": "t"}, latency_ms={"search": 1.0, "target_selection": 2.0}
    )
    gates.roll_back(case, blocking_stage="select", gate="select", keep={"search", "select"})
    assert case["failure"]["message"] == (
        "the select gate blocked the run; this case went through select and never reached plan"
    )
    assert gates.stopped_text("g", error=True, mode="search", holds={}.get) == (
        "the g gate could not decide; this case never ran"
    )


def test_stop_texts_in_reasons() -> None:
    spec = GateSpec("search", "search", ("s",), (), (("expected_target_absent", None), ("custom", None)))
    flaky = _c(
        "f", status="failed", flaky=True, failure={"stage": "search", "reason": "expected_target_absent"}
    )
    record = gates.evaluate(spec, cases=[flaky], suite_metrics={}, stage_metrics={}, rules={},
                            reported_stops=[{"condition": "custom", "case_ids": [], "message": ""}])  # fmt: skip
    assert record["reasons"][0] == "stop_if custom"  # an empty message leaves no dangling colon
    assert record["reasons"][1:] == record["warnings"] == ["stop_if expected_target_absent: 1 case(s): f (expected_target_absent) (non-gating cases)",
                                  "1 flaky case(s) failed and do not gate: f at search (expected_target_absent)"]  # fmt: skip


def test_a_warn_mode_pre_run_check_never_decides_the_exit_code() -> None:
    """Rule: only a ``block``-mode pre-run check that failed makes the run ERROR; a failed ``warn``-mode one
    (auth readiness) is reported and the verdict comes from the gates."""
    passed = {"name": "a", "status": "passed", "reasons": [], "warnings": []}
    blocked = {"name": "b", "status": "blocked", "reasons": ["x"]}  # an older record without ``warnings``
    warn = {
        "guard": "auth_readiness",
        "stage": "pre-run",
        "passed": False,
        "mode": "warn",
        "message": "no token",
    }
    assert gates.decide([passed], prerun=[warn]) == {
        "verdict": "pass", "reasons": ["1 gate(s) passed"], "exit_code": 0, "advisory": False,
    }  # fmt: skip
    assert gates.decide([blocked], prerun=[warn])["exit_code"] == 1
    block = {**warn, "mode": "block"}
    assert gates.decide([passed], prerun=[block]) == {
        "verdict": "error", "reasons": ["pre-run check auth_readiness failed: no token"], "exit_code": 2,
        "advisory": False,
    }  # fmt: skip
    assert gates.decide([passed], prerun=[{**block, "passed": True}])["verdict"] == "pass"


def test_pass_reasons_count_warned_gates_and_only_their_warnings() -> None:
    warned = {"name": "w", "status": "warned", "reasons": ["flaky"], "warnings": ["flaky"]}
    passed = {"name": "a", "status": "passed", "reasons": [], "warnings": []}
    skipped = {"name": "k", "status": "skipped", "reasons": ["no case selected"], "warnings": []}
    assert gates.decide([warned, passed, skipped])["reasons"] == ["2 gate(s) passed", "gate w warned: flaky"]
    error = {"name": "e", "status": "error", "errors": [{"reason": "made_up", "case_ids": ["c"]}]}
    assert gates.decide([error], exit_zero=True) == {
        "verdict": "error",
        "reasons": ["gate e could not decide: 1 case(s) could not be judged: made_up (c)"],
        "exit_code": 2,
        "advisory": True,
    }


def test_roll_back_to_the_stages_a_case_went_through_drops_every_other_stage_and_its_repeats() -> None:
    """Rule: with ``keep`` (the stages the case went through in the gates that ran), a rolled-back case keeps the
    objects of those stages only, the build stage never being one of them, and no repeat of it counts as a pass."""
    case = _x(
        "a",
        target_selector={"selected_target": "t"},
        learning={},
        attempts=3,
        passes=3,
        latency_ms={"search": 1.0, "target_selection": 2.0, "plan": 3.0, "execute": 4.0},
    )
    gates.roll_back(case, blocking_stage="select", gate="g", keep={"search", "plan"})
    assert case == {
        "case_id": "a",
        "suite": "r",
        "mode": "execute",
        "status": "blocked",
        "search": {"hit": True, "hit_rank": 1},
        "plan": {"status": "synthesized"},
        "attempts": 3,
        "passes": 0,
        "latency_ms": {"search": 1.0, "plan": 3.0},
        "failure": {
            "stage": "select",
            "reason": "blocked_by_stage",
            "message": "the g gate blocked the run; this case went through search and never reached select",
        },
    }


def test_a_case_taken_by_an_earlier_gate_leaves_the_next_cases_to_this_one() -> None:
    """Rule 2 case by case: a case an earlier gate answers for is skipped, the following ones are still charged."""
    taken = _x("s1", suite="s", status="failed", failure=FAIL)
    mine = _x("r1", status="failed", failure=FAIL)
    spec = GateSpec("execute", "execute", ("r", "s"))
    assert gates.charged(spec, [taken, mine], earlier=[GateSpec("smoke", "execute", ("s",))]) == [mine]


def test_exactly_five_unjudged_cases_are_all_named_without_an_ellipsis() -> None:
    ids = [f"e{i}" for i in range(5)]
    assert gates.error_text({"reason": "made_up", "case_ids": ids}) == (
        "5 case(s) could not be judged: made_up (e0, e1, e2, e3, e4)"
    )


def test_a_stop_message_is_shown_whole_after_its_condition() -> None:
    spec = GateSpec("search", "search", ("s",), (), (("custom", None),))
    reported = [{"condition": "custom", "case_ids": [], "message": "stage said: too slow X"}]
    record = gates.evaluate(spec, cases=[_c("a")], suite_metrics={}, stage_metrics={}, rules={},
                            reported_stops=reported)  # fmt: skip
    assert record["reasons"] == ["stop_if custom: stage said: too slow X"]


def test_a_share_threshold_tolerates_failures_of_the_suite_s_own_cases_not_the_whole_gate_s() -> None:
    """Rule (issue 36, 8): ``execute_success_rate >= 0.9`` on a gate of [execute_read, execute_mutation] with 10
    passing reads and 1 failing mutation: the mutation suite's one case tolerates floor(0.1 * 1) = 0 failures, so
    the gate blocks. Counted over the whole gate's 11 cases it would tolerate 1, and PASS."""
    spec = GateSpec(
        "execute", "execute", ("execute_read", "execute_mutation"), (("execute_success_rate", ">=", 0.9),)
    )
    reads = [_x(f"r{i}", suite="execute_read") for i in range(10)]
    write = _x(
        "w1", suite="execute_mutation", status="failed", failure=FAIL, mutation_safety="allow_mutation"
    )
    rules = {"execute_read": gates.SuiteRule(), "execute_mutation": gates.SuiteRule()}
    verdict = gates.judge_failures(spec, [*reads, write], rules=rules)
    mutation = next(f for f in verdict["failures"] if f["suite"] == "execute_mutation")
    assert (mutation["failing"], mutation["tolerated"], mutation["blocks"]) == (1, 0, True)
    assert mutation["tolerance"] == "execute_success_rate >= 0.9 over 1 case(s)"
    assert verdict["blocking"] and verdict["blocking"][0].startswith(
        "execute_mutation: 1 failing case(s), tolerates 0"
    )

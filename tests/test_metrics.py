"""Acceptance metrics from case dicts: rates, None for no data, flaky cases left out, percentiles."""

from __future__ import annotations

from typing import Any

from qlab import metrics


def _c(case_id: str, status: str = "passed", **kw: Any) -> dict[str, Any]:
    return {"case_id": case_id, "suite": "s", "mode": "search", "status": status, "latency_ms": {}, **kw}


def test_percentile() -> None:
    assert metrics.percentile([], 50) is None
    assert metrics.percentile([7.0], 95) == 7.0
    assert metrics.percentile([1, 2, 3, 4], 50) == 2.5
    assert metrics.percentile(list(range(1, 101)), 95) == 95.05


def test_search_metrics() -> None:
    cases = [
        _c("a", search={"hit": True, "hit_rank": 1, "top_k": 5}),
        _c("b", search={"hit": True, "hit_rank": 2, "top_k": 5}),
        _c(
            "c",
            "failed",
            search={"hit": False, "hit_rank": None, "top_k": 5},
            failure={"stage": "search", "reason": "expected_target_absent"},
        ),
        _c("d", "error", failure={"stage": "search", "reason": "engine_error"}),  # counts as a miss
        _c("e", "blocked", failure={"stage": "build", "reason": "blocked_by_stage"}),  # never reached search
    ]
    out = metrics.search_metrics(cases)
    assert out == {
        "hit_at_k": 0.5,
        "top_1": 0.25,
        "mrr": 0.375,
        "ndcg_at_k": round((1 + 1 / 1.5849625007211563) / 4, 6),
    }
    assert metrics.search_metrics([]) == {"hit_at_k": None, "top_1": None, "mrr": None, "ndcg_at_k": None}


def test_select_plan_execute() -> None:
    ts = {"llm_target": "x", "selected_target": "y", "overrode_llm": True, "reason_codes": []}
    cases = [
        _c("a", target_selector=ts, plan={"status": "synthesized"}),
        _c("b", "failed", target_selector=ts, failure={"stage": "select", "reason": "wrong_target_selected"}),
        _c(
            "c",
            "failed",
            plan={"status": "needs_input"},
            failure={"stage": "plan", "reason": "required_fields_unsatisfied"},
        ),
        _c("d", execute={"http_status": 200}, mutation_safety="read_only"),
        _c(
            "e",
            "failed",
            execute={"http_status": 500},
            mutation_safety="read_only",
            failure={"stage": "execute", "reason": "http_error"},
        ),
        _c(
            "f",
            execute={"http_status": 201},
            mutation_safety="allow_mutation",
            assertions=[{"type": "t", "passed": False}],
        ),
    ]
    assert metrics.select_metrics(cases) == {
        "selector_accuracy": 0.5,
        "override_rate": 1.0,
        "override_correct_rate": 0.5,
        "override_precision": 0.5,
        "llm_tokens": 0.0,
        "llm_cost_usd": 0.0,
    }
    usage = {"llm_usage": {"prompt_tokens": 30, "completion_tokens": 5, "cost_usd": 0.25}}
    assert metrics.llm_usage(
        [{"target_selector": usage}, {"target_selector": {"llm_usage": {"total_tokens": 7}}}]
    ) == (42, 0.25)
    assert metrics.plan_metrics(cases) == {"plan_hit_rate": 0.5}
    out = metrics.execute_metrics(cases)
    assert out["execute_read_success_rate"] == 0.5 and out["execute_success_rate"] == round(2 / 3, 6)
    assert out["assertion_pass_rate"] == 0.0


def test_structured_failure_rate_and_flaky() -> None:
    cases = [
        _c("a", "failed", failure={"stage": "execute", "reason": "auth_failed"}),
        _c("b", "error", failure={"stage": "execute", "reason": "KeyError"}),
        _c("c", "failed", flaky=True, failure={"stage": "execute", "reason": "timeout"}),
    ]
    assert metrics.structured_failure_rate(cases) == round(2 / 3, 6)
    assert metrics.case_metrics(cases)["structured_failure_rate"] == 0.5  # the flaky case does not gate
    assert metrics.structured_failure_rate([_c("x")]) is None
    assert metrics.counts(cases)["flaky_failed"] == 1


def test_acceptance_and_latency() -> None:
    cases = [_c(str(i), latency_ms={"search": float(i), "plan": 10.0}) for i in range(1, 21)]
    out = metrics.acceptance(cases)
    assert out["latency_ms"] == {"search": {"p50": 10.5, "p95": 19.05}, "plan": {"p50": 10.0, "p95": 10.0}}
    assert out["execute_read_success_rate"] is None


def _x(case_id: str, status: str = "passed", **kw: Any) -> dict[str, Any]:
    """An execute case that passed every stage (or failed where its ``failure`` says)."""
    case = {"case_id": case_id, "suite": "r", "mode": "execute", "status": status, "latency_ms": {}, **kw}
    case.setdefault("mutation_safety", "read_only")
    if status == "passed":
        case.update(search={"hit": True, "hit_rank": 1}, target_selector={"selected_target": "t"},
                    plan={"status": "synthesized"}, execute={"http_status": 200})  # fmt: skip
    return case


def test_a_rate_counts_the_cases_that_failed_at_an_earlier_stage() -> None:
    """Six execute cases, one failed at plan: execute_read_success_rate is 5/6, not 5/5 (the issue's case)."""
    cases = [_x(f"e{i}") for i in range(5)]
    cases.append(
        _x("e5", "failed", search={"hit": True, "hit_rank": 1}, target_selector={"selected_target": "t"},
           failure={"stage": "plan", "reason": "required_fields_unsatisfied"})
    )  # fmt: skip
    figures = metrics.case_metrics(cases)
    assert figures["execute_read_success_rate"] == round(5 / 6, 6)
    assert figures["execute_success_rate"] == round(5 / 6, 6)
    assert figures["plan_hit_rate"] == round(5 / 6, 6) and figures["selector_accuracy"] == 1.0
    assert metrics.denominator("execute_read_success_rate", cases) == 6
    assert metrics.earlier_failures("execute_read_success_rate", cases) == {"plan": 1}
    assert metrics.earlier_failures("plan_hit_rate", cases) == {}  # it failed at plan itself
    # a case that failed at search counts against select, plan and execute; a blocked one counts nowhere
    miss = _x("m", "failed", failure={"stage": "search", "reason": "expected_target_absent"})
    blocked = _x("b", "blocked", failure={"stage": "search", "reason": "blocked_by_stage"})
    figures = metrics.case_metrics([_x("ok"), miss, blocked])
    assert figures["selector_accuracy"] == figures["plan_hit_rate"] == figures["execute_success_rate"] == 0.5
    assert metrics.earlier_failures("selector_accuracy", [miss, blocked]) == {"search": 1}


def test_a_stage_outside_the_case_mode_never_measures_it() -> None:
    search_miss = _c("s", "failed", failure={"stage": "search", "reason": "expected_target_absent"})
    assert not metrics.measured(search_miss, "select") and not metrics.measured(search_miss, "execute")
    assert metrics.select_metrics([search_miss])["selector_accuracy"] is None


def test_pass_ratio_and_flaky_counts() -> None:
    once, flaky, failing = _c("a"), _c("b", attempts=3, passes=2), _c("c", "failed", attempts=3, passes=1)
    assert [metrics.pass_ratio(c) for c in (once, flaky, failing)] == [1.0, 0.666667, 0.333333]
    assert [metrics.unstable(c) for c in (once, flaky, failing)] == [False, True, True]
    assert metrics.counts([once, flaky, failing])["flaky_passed"] == 1


def test_every_threshold_metric_of_the_config_schema_has_a_definition() -> None:
    from qlab.resources import load_schema

    enum = load_schema("config")["definitions"]["metric"]["enum"]
    assert list(metrics.METRICS) == enum
    assert all(m.definition and m.unit in ("share", "ms", "count", "usd") for m in metrics.METRICS.values())
    counting = {name for name, m in metrics.METRICS.items() if m.counts_cases}
    # every metric that states a tolerance has a denominator of cases, and only those
    assert counting == {name for name in metrics.METRICS if metrics.denominator(name, []) is not None}

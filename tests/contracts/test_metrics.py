"""Acceptance metrics from case dicts: rates, None for no data, flaky cases left out, percentiles."""

from __future__ import annotations

from typing import Any

from qlab.contracts import metrics


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
        "family_hit_at_k": None,  # no case says whether its target's family was found
    }
    assert metrics.search_metrics([]) == {
        "hit_at_k": None, "top_1": None, "mrr": None, "ndcg_at_k": None, "family_hit_at_k": None,
    }  # fmt: skip


def test_family_hit_at_k_counts_the_cases_whose_target_family_was_found() -> None:
    """Q1, "can search find the right target family?": a miss whose family is in the Top-K found it."""
    cases = [
        _c("a", search={"hit": True, "hit_rank": 1, "top_k": 5, "family_hit": True}),
        _c("b", "failed", search={"hit": False, "hit_rank": None, "top_k": 5, "family_hit": True}),
        _c("c", "failed", search={"hit": False, "hit_rank": None, "top_k": 5, "family_hit": False}),
        _c("d", search={"hit": True, "hit_rank": 1, "top_k": 5}),  # a target without a family
    ]
    out = metrics.search_metrics(cases)
    assert (out["hit_at_k"], out["family_hit_at_k"]) == (0.5, 0.666667)


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


def test_a_failure_that_became_a_500_is_not_structured() -> None:
    """The engine throwing, the API answering 500, an unexpected error while executing: each has a reason code,
    and none is classified (the rate read 1.0 by construction however the engine failed)."""
    threw = _c(
        "a", "error", failure={"stage": "search", "reason": "engine_error", "message": "KeyError: 'x'"}
    )
    five = _c(
        "b", "failed", failure={"stage": "execute", "reason": "http_error"}, execute={"http_status": 503}
    )
    odd = _c(
        "c",
        "error",
        failure={
            "stage": "execute",
            "reason": "http_error",
            "message": "unexpected error while executing: KeyError",
        },
    )
    refused = _c(
        "d", "failed", failure={"stage": "execute", "reason": "http_error"}, execute={"http_status": 404}
    )
    assert metrics.structured_failure_rate([threw, five, odd, refused]) == 0.25
    assert [metrics.structured(c) for c in (threw, five, odd, refused)] == [False, False, False, True]


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
    # a case that failed at search counts against select, plan and execute
    miss = _x("m", "failed", failure={"stage": "search", "reason": "expected_target_absent"})
    figures = metrics.case_metrics([_x("ok"), miss])
    assert figures["selector_accuracy"] == figures["plan_hit_rate"] == figures["execute_success_rate"] == 0.5
    assert metrics.earlier_failures("selector_accuracy", [_x("ok"), miss]) == {"search": 1}


def test_a_stage_the_run_never_reached_measures_nothing() -> None:
    """Rule (issue 36, 2): when a gate stops the run, the later stages were not reached: a case that failed
    before them counts in none of their rates (n/a (not reached), never 0), and a case the gate stopped counts
    where it went through and passed."""
    stop = {"stage": "select", "reason": "blocked_by_stage"}
    miss = _x("m", "failed", failure={"stage": "select", "reason": "wrong_target_selected"},
              search={"hit": True, "hit_rank": 1}, target_selector={"selected_target": "x"})  # fmt: skip
    went = [
        _x(f"b{i}", "blocked", failure=stop, search={"hit": True, "hit_rank": 1}, target_selector={"selected_target": "t"})
        for i in range(9)
    ]  # fmt: skip
    never = _x("n", "blocked", failure=stop)  # a case of a later gate only: it never ran
    cases = [miss, *went, never]
    figures = metrics.case_metrics(cases)
    assert figures["selector_accuracy"] == 0.9  # as the select gate judged it, before the block
    assert figures["hit_at_k"] == 1.0
    assert figures["plan_hit_rate"] is None and figures["execute_success_rate"] is None  # not 0
    assert metrics.acceptance(cases)["plan_hit_rate"] is None
    assert metrics.not_reached(figures, cases) == [
        "plan_hit_rate", "execute_read_success_rate", "execute_success_rate", "assertion_pass_rate",
    ]  # fmt: skip
    assert metrics.not_reached({"selector_accuracy": None}, []) == []  # no case at all: no data
    assert metrics.stopped_at(cases) == "select" and metrics.stopped_at([miss]) is None
    # a part of the run (one suite) is measured with the whole run's stop
    assert metrics.case_metrics([miss], stop="select")["plan_hit_rate"] is None
    assert metrics.case_metrics([miss])["plan_hit_rate"] == 0.0  # nothing stopped it: a miss of plan too
    assert (
        metrics.denominator("plan_hit_rate", cases) == 0
        and metrics.denominator("selector_accuracy", cases) == 10
    )


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
    from qlab.contracts.resources import load_schema

    enum = load_schema("config")["definitions"]["metric"]["enum"]
    assert list(metrics.METRICS) == enum
    assert all(m.definition and m.unit in ("share", "ms", "count", "usd") for m in metrics.METRICS.values())
    counting = {name for name, m in metrics.METRICS.items() if m.counts_cases}
    # every metric that states a tolerance has a denominator of cases, and only those
    assert counting == {name for name in metrics.METRICS if metrics.denominator(name, []) is not None}


# ----------------------------------------------------------------------------------- each figure at its edges

import pytest  # noqa: E402

SEARCHED = {"search": {"hit": True, "hit_rank": 1}}
MISSED_SEARCH = {"failure": {"stage": "search", "reason": "expected_target_absent"}}


def _p(case_id: str, status: str = "passed", mode: str = "plan", **kw: Any) -> dict[str, Any]:
    return {**_c(case_id, status, **kw), "mode": mode}


@pytest.mark.parametrize(
    ("metric", "cases", "n"),
    [
        ("hit_at_k", [_c("a", **SEARCHED), _c("b", search={"hit": None}), _c("c", "failed", **MISSED_SEARCH),
                      _c("d", "blocked", **SEARCHED), _c("e", "blocked"), _c("f", flaky=True, **SEARCHED)], 3),
        ("top_1", [_c("a", **SEARCHED), _c("b", search={"hit": None}), _c("x")], 1),
        ("selector_accuracy", [_p("a", target_selector={}), _p("b", "failed", **MISSED_SEARCH), _p("c", "skipped", target_selector={}),
                               _p("d", "blocked", search={}), _c("s", **SEARCHED)], 3),
        ("plan_hit_rate", [_p("a", plan={}), _p("b", "failed", failure={"stage": "select", "reason": "x"}), _p("c")], 2),
        ("execute_success_rate", [_p("a", mode="execute", execute={}), _p("b", "failed", mode="execute", **MISSED_SEARCH),
                                  _p("c", mode="plan", plan={})], 2),
        ("execute_read_success_rate", [_p("a", mode="execute", execute={}), _p("m", mode="execute", execute={}, mutation_safety="allow_mutation"),
                                       _p("r", mode="execute", execute={}, mutation_safety="read_only")], 2),
        ("pass_rate", [_c("a"), _c("b", "failed"), _c("c", "error"), _c("d", "blocked"), _c("e", "skipped")], 3),
        ("mrr", [_c("a", **SEARCHED)], None),
        ("latency_p95_ms", [_c("a")], None),
    ],
)  # fmt: skip
def test_each_share_metric_counts_the_cases_it_is_over(
    metric: str, cases: list[dict[str, Any]], n: int | None
) -> None:
    """Rule: a share-of-cases metric's denominator is the gating cases its stage measured (what the tolerance
    ``floor((1 - r) * n)`` is computed on); other metrics have none."""
    assert metrics.denominator(metric, cases) == n
    assert metrics.METRICS[metric].counts_cases is (n is not None)


def test_counts_by_status_with_flaky_ones() -> None:
    cases = [_c("a"), _c("b", "failed", flaky=True), _c("c", "error", flaky=True), _c("d", "failed"),
             _c("e", "blocked"), _c("f", "skipped"), _c("g", attempts=3, passes=2), _c("h", "failed", attempts=3, passes=2),
             {"case_id": "no-status"}, _c("i", "failed", lifecycle="draft"), _c("j", lifecycle="draft"),
             _c("k", "error", lifecycle="draft")]  # fmt: skip
    assert metrics.counts(cases) == {
        "total": 12, "passed": 4, "failed": 4, "error": 2, "blocked": 1, "skipped": 1, "flaky_failed": 2, "flaky_passed": 1,
        "draft": 3, "draft_failed": 2,
    }  # fmt: skip


def test_reached_and_measured() -> None:
    assert metrics.reached(_c("a", **SEARCHED), "search")
    for status in ("blocked", "skipped"):  # stopped after search: it went through search, and nothing later
        assert metrics.reached(_c("a", status, **SEARCHED), "search")
        assert not metrics.reached(_c("a", status, **SEARCHED), "select")
        assert not metrics.reached(
            _c("a", status, failure={"stage": "search", "reason": "blocked_by_stage"}), "search"
        )
    assert metrics.reached(_c("b", "failed", **MISSED_SEARCH), "search")
    assert not metrics.reached(_c("c", "passed"), "search")
    assert not metrics.reached(_c("c", "passed", search={}), "nowhere")
    failed_at_search = _p("p", "failed", **MISSED_SEARCH)
    assert metrics.measured(failed_at_search, "plan") and metrics.measured(failed_at_search, "select")
    assert not metrics.measured({**failed_at_search, "mode": "search"}, "plan")  # not a stage of its mode
    assert not metrics.measured(_p("q", "passed"), "plan")


@pytest.mark.parametrize(
    ("case", "ratio", "unstable"),
    [
        ({"status": "passed"}, 1.0, False), ({"status": "failed"}, 0.0, False),
        ({"status": "passed", "attempts": 1, "passes": 0}, 1.0, False),  # one attempt: its status says it
        ({"status": "passed", "attempts": 3}, 1.0, False),  # no passes count: its status says it
        ({"status": "failed", "attempts": 3, "passes": 0}, 0.0, False),
        ({"status": "passed", "attempts": 3, "passes": 3}, 1.0, False),
        ({"status": "passed", "attempts": 2, "passes": 1}, 0.5, True),
        ({"status": "failed", "attempts": 3, "passes": 2}, 0.666667, True),
        ({"status": "passed", "attempts": "3", "passes": 1}, 1.0, False),
    ],
)  # fmt: skip
def test_pass_ratio_and_unstable(case: dict[str, Any], ratio: float, unstable: bool) -> None:
    assert (metrics.pass_ratio(case), metrics.unstable(case)) == (ratio, unstable)


def test_percentile_of_two_and_three_values() -> None:
    assert metrics.percentile([10.0, 20.0], 50) == 15.0
    assert metrics.percentile([10.0, 20.0], 100) == 20.0
    assert metrics.percentile([30.0, 10.0, 20.0], 95) == 29.0


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [({"total_tokens": 7, "tokens": 9}, 7), ({"tokens": 9}, 9), ({"input_tokens": 3, "output_tokens": 4}, 7),
     ({"prompt_tokens": 3, "completion_tokens": 5}, 8), ({"input_tokens": 2}, 2), ({"completion_tokens": 2}, 2), ({}, 0),
     ({"total_tokens": "7", "input_tokens": 1}, 1)],
)  # fmt: skip
def test_usage_tokens_in_every_spelling(usage: dict[str, Any], tokens: int) -> None:
    assert metrics.usage_tokens(usage) == tokens


def test_llm_usage_adds_up_and_rounds_cost() -> None:
    cases = [
        _p(f"p{i}", target_selector={"llm_usage": {"total_tokens": 10, "cost_usd": 0.000000123}})
        for i in range(3)
    ]
    cases.append(_p("q", target_selector={"llm_usage": {"tokens": 5, "cost_usd": "free"}}))
    assert metrics.llm_usage(cases) == (35, pytest.approx(0.000000369))
    out = metrics.select_metrics(cases)
    assert (out["llm_tokens"], out["llm_cost_usd"]) == (35.0, 3.7e-07)


def test_overrides_are_counted_over_the_cases_with_an_llm_target() -> None:
    right = _p("r", target_selector={"llm_target": "a", "overrode_llm": True})
    wrong = _p("w", "failed", target_selector={"llm_target": "a", "overrode_llm": True},
               failure={"stage": "select", "reason": "wrong_target_selected"})  # fmt: skip
    kept = _p("k", target_selector={"llm_target": "a", "overrode_llm": False})
    none = _p("n", target_selector={"llm_target": None})
    out = metrics.select_metrics([right, wrong, kept, none])
    assert (out["override_rate"], out["override_correct_rate"], out["override_precision"]) == (
        0.666667,
        0.5,
        0.5,
    )
    assert out["selector_accuracy"] == 0.75


def test_top_1_counts_rank_one_only_and_mrr_keeps_six_decimals() -> None:
    cases = [_c("a", search={"hit": True, "hit_rank": 1}), _c("b", search={"hit": True, "hit_rank": 3}),
             _c("c", search={"hit": True, "hit_rank": 2}), _c("d", search={"hit": False, "hit_rank": 1})]  # fmt: skip
    out = metrics.search_metrics(cases)
    assert (out["hit_at_k"], out["top_1"], out["mrr"]) == (0.75, 0.25, round((1 + 1 / 3 + 1 / 2) / 4, 6))


def test_plan_and_execute_hits() -> None:
    plans = [_p("a", plan={"status": "synthesized"}), _p("b", "failed", plan={"status": "synthesized"},
             failure={"stage": "plan", "reason": "plan_check_failed"}), _p("c", plan={"status": "needs_input"})]  # fmt: skip
    assert metrics.plan_metrics(plans) == {"plan_hit_rate": 0.333333}
    runs = [
        _p("a", mode="execute", execute={}, assertions=[{"passed": True}, {"passed": False}, {}]),
        _p(
            "b",
            "failed",
            mode="execute",
            execute={},
            failure={"stage": "execute", "reason": "assertion_failed"},
        ),
        _p("c", mode="execute", execute={}, mutation_safety="allow_mutation", assertions=[{"passed": True}]),
        _p("d", "error", mode="execute", execute={}, failure={"stage": "plan", "reason": "x"}),
    ]
    assert metrics.execute_metrics(runs) == {
        "execute_read_success_rate": 0.333333, "execute_success_rate": 0.5, "assertion_pass_rate": 0.5,
        "auth_ready_rate": None,  # no case recorded an auth readiness preflight
    }  # fmt: skip
    ready, not_ready = {"status": "ready"}, {"status": "not_ready", "reason_codes": ["auth_context_required"]}
    runs[0]["auth_readiness"], runs[1]["auth_readiness"] = ready, not_ready
    assert metrics.execute_metrics(runs)["auth_ready_rate"] == 0.5


def test_case_metrics_and_acceptance_in_full() -> None:
    cases = [_c("a", **SEARCHED, latency_ms={"search": 4.0, "custom": 1.0}), _c("b", "failed", **MISSED_SEARCH, latency_ms={"search": 8.0}),
             _c("c", "error", failure={"stage": "search", "reason": "engine_error"}), _c("d", "blocked"),
             _c("f", "failed", flaky=True, **MISSED_SEARCH)]  # fmt: skip
    out = metrics.case_metrics(cases)
    # the engine that threw is the one failure not classified (a 500, in the metric's words)
    assert (out["pass_rate"], out["structured_failure_rate"]) == (0.333333, 0.5)
    assert (out["latency_search_p50_ms"], out["latency_search_p95_ms"]) == (6.0, 7.8)
    assert (out["latency_custom_p50_ms"], out["latency_custom_p95_ms"]) == (1.0, 1.0)
    acceptance = metrics.acceptance(cases)
    assert acceptance == {
        "search_hit_at_k": 0.333333, "search_top_1": 0.333333, "target_selector_accuracy": None, "plan_hit_rate": None,
        "execute_read_success_rate": None, "structured_failure_rate": 0.5,
        "latency_ms": {"search": {"p50": 6.0, "p95": 7.8}, "custom": {"p50": 1.0, "p95": 1.0}},
    }  # fmt: skip
    assert list(metrics.latency([{"latency_ms": {"zeta": 1.0, "plan": 2.0, "alpha": 3.0, "search": 4.0}}])) == [
        "search", "plan", "alpha", "zeta",
    ]  # fmt: skip
    assert metrics.latency([{"latency_ms": {"plan": 1.23456}}]) == {"plan": {"p50": 1.235, "p95": 1.235}}


def test_earlier_failures_by_stage_in_stage_order_gating_only() -> None:
    cases = [_p("p", "failed", mode="execute", failure={"stage": "plan", "reason": "x"}),
             _p("s1", "failed", mode="execute", **MISSED_SEARCH), _p("s2", "error", mode="execute", **MISSED_SEARCH),
             _p("f", "failed", mode="execute", flaky=True, **MISSED_SEARCH),
             _p("e", "failed", mode="execute", failure={"stage": "execute", "reason": "x"})]  # fmt: skip
    out = metrics.earlier_failures("execute_success_rate", cases)
    assert out == {"search": 2, "plan": 1} and list(out) == ["search", "plan"]
    assert metrics.earlier_failures("latency_p95_ms", cases) == {}
    assert metrics.earlier_failures("no_such_metric", cases) == {}
    assert metrics.failed_earlier(_p("x", "error", **MISSED_SEARCH), "plan") == "search"
    assert metrics.failed_earlier(_p("x", "blocked", **MISSED_SEARCH), "plan") is None


def test_a_flag_less_case_gates() -> None:
    assert metrics.gating({}) and metrics.gating({"flaky": False}) and not metrics.gating({"flaky": True})


def test_override_precision_is_the_share_of_overrides_that_were_right() -> None:
    right = [_p(f"r{i}", target_selector={"llm_target": "a", "overrode_llm": True}) for i in range(2)]
    wrong = _p("w", "failed", target_selector={"llm_target": "a", "overrode_llm": True},
               failure={"stage": "select", "reason": "wrong_target_selected"})  # fmt: skip
    assert metrics.select_metrics([*right, wrong])["override_precision"] == 0.666667


def test_a_case_without_an_expected_target_is_in_no_search_rate() -> None:
    """Rule: a case whose search names no expected target (``hit: null``) has no rank to count: hit@K, Top-1 and
    their denominators leave it out."""
    hit = _c("a", search={"hit": True, "hit_rank": 1, "top_k": 5})
    second = _c("c", search={"hit": True, "hit_rank": 2, "top_k": 5})
    no_target = _c("b", search={"hit": None, "hit_rank": None, "top_k": 5})
    assert metrics.search_metrics([hit, no_target])["hit_at_k"] == 1.0
    cases = [hit, second, no_target]
    assert (metrics.denominator("hit_at_k", cases), metrics.denominator("top_1", cases)) == (2, 2)


def test_counts_tell_flaky_passes_only_of_passed_cases_and_every_one_of_them() -> None:
    shaky = [_c(f"g{i}", attempts=3, passes=2) for i in range(2)]
    failed_shaky = _c("h", "failed", attempts=3, passes=1)  # failed, not flaky: a failure, not a flaky pass
    odd = _c("o", "running")  # a status this qlab does not know is counted under its own name
    found = metrics.counts([*shaky, failed_shaky, odd])
    assert (found["flaky_passed"], found["failed"], found["running"]) == (2, 1, 1)


def test_a_case_of_a_mode_qlab_does_not_know_is_measured_only_where_it_ran() -> None:
    odd = {"case_id": "x", "mode": "other", "status": "failed", "failure": {"stage": "search", "reason": "r"}}
    assert metrics.measured(odd, "search") and not metrics.measured(odd, "plan")

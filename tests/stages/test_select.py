"""The select stage: the seed's target_selector block, a recorded LLM target, every select failure reason,
the override metrics, search reuse, engine errors."""

from __future__ import annotations

from pathlib import Path

from qlab.engine.builtin import BuiltinEngine
from qlab.engine.types import Selection
from qlab.stages import search, select

from .engine_stages import DEMO, Counting, case, context, results_for

SEED = case(
    "member-plan-001",
    "Find the member delivery detail",
    "getMemberDeliveryDetail",
    entities={"memberNo": "M-1001"},
    llm_target="getMemberDeliveryList",  # recorded: the LLM proposed the list
)


def test_recorded_llm_target_is_overridden_as_in_seed_000(tmp_path: Path) -> None:
    results = results_for([SEED])
    report = select.run(context(tmp_path), [SEED], results)
    r = results["member-plan-001"]
    assert r.status == "passed"
    assert r.target_selector == {
        "llm_target": "getMemberDeliveryList",
        "selected_target": "getMemberDeliveryDetail",
        "overrode_llm": True,
        "reason_codes": ["llm_target_overridden", "selected_by_strong_evidence"],
    }
    assert r.search is not None and r.search["hit"] is True  # the plan case was searched on the way
    assert set(r.latency_ms) == {"search", "target_selection"}
    m = report.suite_metrics["plan_e2e"]
    assert (m["selector_accuracy"], m["override_rate"], m["override_precision"]) == (1.0, 1.0, 1.0)
    assert m["override_correct_rate"] == m["override_precision"]
    assert m["llm_tokens"] == 0.0 and m["llm_cost_usd"] == 0.0
    assert m["latency_target_selection_p50_ms"] is not None


def test_a_search_from_the_search_gate_is_reused_not_repeated(tmp_path: Path) -> None:
    engine = Counting(BuiltinEngine(DEMO))
    ctx = context(tmp_path, engine=engine)
    results = results_for([SEED])
    search.run(ctx, [SEED], results)
    select.run(ctx, [SEED], results)
    assert engine.calls == ["search", "select"]
    assert len(ctx.answers.searches) == 1


def test_search_mode_cases_are_not_selected(tmp_path: Path) -> None:
    only_search = case("s1", "carriers", "listCarriers", mode="search")
    engine = Counting(BuiltinEngine(DEMO))
    results = results_for([only_search])
    select.run(context(tmp_path, engine=engine), [only_search], results)
    assert engine.calls == [] and results["s1"].target_selector is None


def test_wrong_target_selected(tmp_path: Path) -> None:
    wrong = case("w", "list a member's deliveries", "getMemberDeliveryDetail", entities={"memberNo": "M-1"})
    results = results_for([wrong])
    report = select.run(context(tmp_path), [wrong], results)
    failure = results["w"].failure
    assert failure is not None and (failure.stage, failure.reason) == ("select", "wrong_target_selected")
    assert "selected getMemberDeliveryList, expected getMemberDeliveryDetail" in failure.message
    assert report.suite_metrics["plan_e2e"]["selector_accuracy"] == 0.0


def test_a_wrong_override_counts_against_override_precision(tmp_path: Path) -> None:
    # the LLM was right (the list); the detail's score margin overrides it: a wrong override
    wrong_override = case(
        "o", "Find the member delivery detail", "getMemberDeliveryList", llm_target="getMemberDeliveryList"
    )
    kept = case(
        "k", "list a member's deliveries", "getMemberDeliveryList", llm_target="getMemberDeliveryList"
    )
    results = results_for([wrong_override, kept])
    report = select.run(context(tmp_path), [wrong_override, kept], results)
    assert results["o"].failure.reason == "wrong_target_selected"  # type: ignore[union-attr]
    assert results["k"].target_selector["reason_codes"] == ["llm_target_kept"]  # type: ignore[index]
    m = report.suite_metrics["plan_e2e"]
    assert (m["override_rate"], m["override_precision"], m["selector_accuracy"]) == (0.5, 0.0, 0.5)


def test_ambiguous_critical_stops_but_ambiguous_non_critical_does_not(tmp_path: Path) -> None:
    # "order O-9001" (no verb, so no intent): getOrder and cancelOrder score alike; the selector reports the tie
    critical = case("c1", "order O-9001", "getOrder", entities={"orderId": "O-9001"})
    other = case("c2", "order O-9001", "getOrder", entities={"orderId": "O-9001"})
    results = results_for([critical, other], critical=("c1",))
    report = select.run(context(tmp_path, critical=("c1",)), [critical, other], results)
    assert results["c1"].target_selector["ambiguous"] is True  # type: ignore[index]
    assert "ambiguous_candidates" in results["c1"].target_selector["reason_codes"]  # type: ignore[index]
    assert results["c1"].failure.reason == "ambiguous_critical"  # type: ignore[union-attr]
    assert results["c2"].status == "passed"  # not critical: the tie resolved to the read-only getOrder
    assert results["c2"].target_selector["selected_target"] == "getOrder"  # type: ignore[index]
    assert [(s.condition, s.case_ids) for s in report.stops] == [("ambiguous_critical", ("c1",))]


def test_select_assertions(tmp_path: Path) -> None:
    cases = [
        case(
            "a1",
            "Find the member delivery detail",
            None,
            assertions=[("selected_target", {"equals": "getMemberDeliveryDetail"})],
        ),
        case(
            "a2",
            "Find the member delivery detail",
            None,
            llm_target="getMemberDeliveryList",
            assertions=[("not_overridden", {})],
        ),
        case(
            "a3",
            "list a member's deliveries",
            None,
            llm_target="getMemberDeliveryList",
            assertions=[("not_overridden", {})],
        ),
    ]
    results = results_for(cases)
    select.run(context(tmp_path), cases, results)
    assert results["a1"].assertions[0].passed and results["a1"].status == "passed"
    assert results["a2"].failure.reason == "wrong_target_selected"  # type: ignore[union-attr]
    assert results["a2"].assertions[0].message == "not_overridden: expected False, actual True"
    assert results["a3"].status == "passed"


def test_a_search_miss_stops_the_case_before_select(tmp_path: Path) -> None:
    miss = case("m", "which carriers deliver", "getMyProfile")
    engine = Counting(BuiltinEngine(DEMO))
    results = results_for([miss])
    report = select.run(context(tmp_path, engine=engine), [miss], results)
    assert engine.calls == ["search"]
    assert (results["m"].failure.stage, results["m"].failure.reason) == ("search", "expected_target_absent")  # type: ignore[union-attr]
    # the case should have been measured by select: it failed before it, so it counts as a miss of select
    assert report.suite_metrics["plan_e2e"]["selector_accuracy"] == 0.0


def test_engine_error_at_select(tmp_path: Path) -> None:
    engine = Counting(BuiltinEngine(DEMO), fail_at="select")
    results = results_for([SEED])
    select.run(context(tmp_path, engine=engine), [SEED], results)
    r = results["member-plan-001"]
    assert (r.status, r.failure.stage, r.failure.reason) == ("error", "select", "engine_error")  # type: ignore[union-attr]
    assert "target_selection" in r.latency_ms


def test_llm_usage_is_summed(tmp_path: Path) -> None:
    usage = {"total_tokens": 100, "cost_usd": 0.25, "cached": False, "model": "m"}
    fixed = Selection(
        "getMemberDeliveryList", "getMemberDeliveryDetail", True, ("llm_target_overridden",), llm_usage=usage
    )
    engine = Counting(BuiltinEngine(DEMO), select=fixed)
    cases = [SEED, case("two", "Find the member delivery detail", "getMemberDeliveryDetail")]
    results = results_for(cases)
    report = select.run(context(tmp_path, engine=engine), cases, results)
    assert results["two"].target_selector["llm_usage"] == usage  # type: ignore[index]
    assert (report.metrics["llm_tokens"], report.metrics["llm_cost_usd"]) == (200.0, 0.5)

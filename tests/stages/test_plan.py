"""The plan stage: the seed's plan case end to end (search -> select -> plan), every plan failure reason,
plan_* assertions, the plans left for the execute stage, the plan hit rate."""

from __future__ import annotations

from pathlib import Path

from qlab.engine.builtin import BuiltinEngine
from qlab.engine.types import Plan, SearchResult
from qlab.stages import plan

from .engine_stages import DEMO, Counting, case, context, results_for

SEED = case(
    "member-plan-001",
    "Find the member delivery detail",
    "getMemberDeliveryDetail",
    entities={"memberNo": "M-1001"},
    plan_tools=("getMemberDeliveryList", "getMemberDeliveryDetail"),
    assertions=[
        ("selected_target", {"equals": "getMemberDeliveryDetail"}),
        ("plan_contains_tool", {"tool": "getMemberDeliveryDetail"}),
        ("no_user_input_slots", {}),
    ],
)


def test_seed_plan_case_end_to_end(tmp_path: Path) -> None:
    engine = Counting(BuiltinEngine(DEMO))
    ctx = context(tmp_path, engine=engine)
    results = results_for([SEED])
    report = plan.run(ctx, [SEED], results)
    r = results["member-plan-001"]
    assert r.status == "passed", r.failure
    assert engine.calls == ["search", "select", "plan"]
    assert set(r.latency_ms) == {"search", "target_selection", "plan"}
    assert r.search is not None and r.search["hit_rank"] == 1
    assert r.target_selector is not None and r.target_selector["selected_target"] == "getMemberDeliveryDetail"
    assert r.plan is not None
    assert r.plan["status"] == "synthesized" and r.plan["user_input_slots"] == []
    assert r.plan["tools"] == ["getMemberDeliveryList", "getMemberDeliveryDetail"]
    assert r.plan["steps"][1]["bindings"] == {"deliveryId": {"step": 0, "path": "$.data[0].deliveryId"}}
    assert r.plan["plan_id"].startswith("plan-") and r.plan["reason"] is None
    assert [a.type for a in r.assertions] == ["selected_target", "plan_contains_tool", "no_user_input_slots"]
    assert all(a.passed for a in r.assertions)
    assert isinstance(ctx.answers.plans["member-plan-001"], Plan)
    assert report.suite_metrics["plan_e2e"]["plan_hit_rate"] == 1.0
    assert report.stops == []


def test_required_fields_unsatisfied_fires_the_stop(tmp_path: Path) -> None:
    needs = case("n", "reschedule a delivery", "rescheduleDelivery", entities={"deliveryId": "D-1"})
    results = results_for([needs])
    report = plan.run(context(tmp_path), [needs], results)
    r = results["n"]
    assert r.plan["status"] == "needs_input"  # type: ignore[index]
    assert [s["parameter"] for s in r.plan["user_input_slots"]] == ["date"]  # type: ignore[index]
    assert (r.failure.stage, r.failure.reason) == ("plan", "required_fields_unsatisfied")  # type: ignore[union-attr]
    assert "rescheduleDelivery.date" in r.failure.message  # type: ignore[union-attr]
    assert [(s.condition, s.case_ids) for s in report.stops] == [("required_fields_unsatisfied", ("n",))]
    assert report.suite_metrics["plan_e2e"]["plan_hit_rate"] == 0.0


def test_a_case_may_expect_the_plan_to_ask_for_input(tmp_path: Path) -> None:
    asks = case(
        "asks",
        "reschedule a delivery",
        "rescheduleDelivery",
        entities={"deliveryId": "D-1"},
        assertions=[("plan_status", {"equals": "needs_input"})],
    )
    results = results_for([asks])
    plan.run(context(tmp_path), [asks], results)
    assert results["asks"].status == "passed"
    bad = case(
        "bad",
        "reschedule a delivery",
        "rescheduleDelivery",
        entities={"deliveryId": "D-1"},
        assertions=[("no_user_input_slots", {})],
    )
    results = results_for([bad])
    plan.run(context(tmp_path), [bad], results)
    assert results["bad"].failure.reason == "required_fields_unsatisfied"  # type: ignore[union-attr]
    assert results["bad"].assertions[0].actual == ["rescheduleDelivery.date"]


def test_plan_tools_mismatch(tmp_path: Path) -> None:
    cases = [
        case(
            "t1",
            "Find the member delivery detail",
            "getMemberDeliveryDetail",
            entities={"memberNo": "M"},
            plan_tools=("getMemberDeliveryDetail",),
        ),
        case(
            "t2",
            "Find the member delivery detail",
            None,
            entities={"memberNo": "M"},
            assertions=[("plan_tools_equal", {"tools": ["getMemberDeliveryDetail"]})],
        ),
        case(
            "t3",
            "Find the member delivery detail",
            None,
            entities={"memberNo": "M"},
            assertions=[("plan_contains_tool", {"tool": "trackDelivery"})],
        ),
    ]
    results = results_for(cases)
    plan.run(context(tmp_path), cases, results)
    for case_id in ("t1", "t2", "t3"):
        failure = results[case_id].failure
        assert failure is not None and (failure.stage, failure.reason) == ("plan", "plan_tools_mismatch"), (
            case_id
        )
    assert "expected ['getMemberDeliveryDetail']" in results["t1"].failure.message  # type: ignore[union-attr]


def test_plan_failed_when_nothing_was_selected(tmp_path: Path) -> None:
    empty = Counting(BuiltinEngine(DEMO), search=SearchResult(rows=()))
    lost = case("lost", "zzz", None)
    results = results_for([lost])
    report = plan.run(context(tmp_path, engine=empty), [lost], results)
    r = results["lost"]
    assert r.target_selector["reason_codes"] == ["no_llm_target", "no_candidates"]  # type: ignore[index]
    assert (r.plan["status"], r.plan["reason"]) == ("failed", "no_target")  # type: ignore[index]
    assert (r.failure.stage, r.failure.reason) == ("plan", "plan_failed")  # type: ignore[union-attr]
    assert empty.calls == ["search", "select"]  # the engine is not asked to plan for no target
    assert report.suite_metrics["plan_e2e"]["plan_hit_rate"] == 0.0


def test_plan_failed_reported_by_the_engine(tmp_path: Path) -> None:
    failed = Plan("p-x", "failed", diagnostics=("the planner crashed politely",), reason="target_unknown")
    engine = Counting(BuiltinEngine(DEMO), plan=failed)
    one = case("f", "Find the member delivery detail", "getMemberDeliveryDetail")
    results = results_for([one])
    plan.run(context(tmp_path, engine=engine), [one], results)
    assert results["f"].failure.reason == "plan_failed"  # type: ignore[union-attr]
    assert "the planner crashed politely" in results["f"].failure.message  # type: ignore[union-attr]


def test_engine_error_at_plan(tmp_path: Path) -> None:
    engine = Counting(BuiltinEngine(DEMO), fail_at="plan")
    results = results_for([SEED])
    plan.run(context(tmp_path, engine=engine), [SEED], results)
    r = results["member-plan-001"]
    assert (r.status, r.failure.stage, r.failure.reason) == ("error", "plan", "engine_error")  # type: ignore[union-attr]


def test_a_select_failure_skips_the_plan(tmp_path: Path) -> None:
    wrong = case("w", "list a member's deliveries", "getMemberDeliveryDetail", entities={"memberNo": "M-1"})
    engine = Counting(BuiltinEngine(DEMO))
    results = results_for([wrong])
    report = plan.run(context(tmp_path, engine=engine), [wrong], results)
    assert engine.calls == ["search", "select"] and results["w"].plan is None
    assert report.suite_metrics["plan_e2e"]["plan_hit_rate"] == 0.0  # failed before plan: a miss of plan too


class _Slow:
    """The built-in engine, whose plan takes ``seconds``."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.inner, self.seconds = BuiltinEngine(DEMO), seconds

    def search(self, query: str, *, k: int) -> SearchResult:
        return self.inner.search(query, k=k)

    def select(self, query: str, result: SearchResult, **kw: object) -> object:
        return self.inner.select(query, result, **kw)  # type: ignore[arg-type]

    def plan(self, query: str, target: str, **kw: object) -> Plan:
        __import__("time").sleep(self.seconds)
        return self.inner.plan(query, target, **kw)  # type: ignore[arg-type]


def test_a_plan_case_over_its_timeout_sec_fails_with_timeout(tmp_path: Path) -> None:
    """Rule (issue 36, 8): ``timeout_sec`` is enforced for plan cases too: a plan that takes longer than the case's
    one deadline fails it with ``timeout`` at plan (a 3 s plan passed with ``timeout_sec: 1``)."""
    import dataclasses

    slow = dataclasses.replace(SEED, timeout_sec=0.2)
    results = results_for([slow])
    plan.run(context(tmp_path, engine=_Slow(0.35)), [slow], results)
    r = results["member-plan-001"]
    assert r.failure is not None and (r.failure.stage, r.failure.reason) == ("plan", "timeout"), r.to_dict()
    assert "ran out of its timeout_sec (0.2 s) at plan" in r.failure.message
    fast = dataclasses.replace(SEED, timeout_sec=5.0)
    results = results_for([fast])
    plan.run(context(tmp_path, engine=_Slow(0.05)), [fast], results)
    assert results["member-plan-001"].status == "passed"

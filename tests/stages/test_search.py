"""The search stage over the demo collection with the built-in engine: the seed's search object, hits, misses,
unknown targets, assertions, metrics, latency, engine errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.contracts import metrics, resultschema
from qlab.contracts.results import json_form
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.types import SearchResult, SearchRow
from qlab.stages import search

from .engine_stages import DEMO, Counting, case, context, results_for


def test_a_hit_records_the_seed_search_object(tmp_path: Path) -> None:
    cases = [case("s1", "Find member delivery detail", "getMemberDeliveryDetail", mode="search", top_k=8)]
    results = results_for(cases)
    report = search.run(context(tmp_path), cases, results)
    r = results["s1"]
    assert r.status == "passed" and r.failure is None
    assert r.search is not None
    assert (r.search["hit"], r.search["hit_rank"], r.search["top_k"]) == (True, 1, 8)
    row = r.search["rows"][0]
    assert type(row) is SearchRow  # the engine's own rows, written as JSON by the artifact's writer
    assert row.tool_id == "getMemberDeliveryDetail" and row.matched_terms == ("member", "deliveri", "detail")
    assert r.latency_ms["search"] > 0
    assert report.stage == "search" and report.stops == []
    assert report.suite_metrics["search_core"]["hit_at_k"] == 1.0
    assert report.metrics["latency_search_p50_ms"] is not None


def test_metrics_over_hits_at_several_ranks(tmp_path: Path) -> None:
    cases = [
        case("s1", "member delivery detail", "getMemberDeliveryDetail", mode="search"),  # rank 1
        case("s2", "member delivery detail", "getMemberDeliveryList", mode="search"),  # rank 2
        case("s3", "carriers", "listCarriers", mode="search"),  # rank 1
        case("s4", "carriers", "getOrder", mode="search"),  # absent
    ]
    results = results_for(cases)
    report = search.run(context(tmp_path), cases, results)
    assert results["s2"].search["hit_rank"] == 2  # type: ignore[index]
    m = report.suite_metrics["search_core"]
    assert m["hit_at_k"] == 0.75
    assert m["top_1"] == 0.5
    assert m["mrr"] == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert m["ndcg_at_k"] == pytest.approx((1 + 1 / 1.584962500721156 + 1) / 4, rel=1e-5)


def test_an_absent_target_fails_the_case_and_fires_the_stop(tmp_path: Path) -> None:
    cases = [case("s1", "which carriers deliver", "getMyProfile", mode="search")]
    results = results_for(cases)
    report = search.run(context(tmp_path), cases, results)
    failure = results["s1"].failure
    assert failure is not None and (failure.stage, failure.reason) == ("search", "expected_target_absent")
    assert "getMyProfile is not in the results (K=5); top: 1. listCarriers" in failure.message
    assert results["s1"].search["hit"] is False  # type: ignore[index]
    assert [(s.condition, s.case_ids) for s in report.stops] == [("expected_target_absent", ("s1",))]


def test_a_target_beyond_k_is_absent(tmp_path: Path) -> None:
    cases = [case("s1", "member delivery detail", "getMemberDeliveryList", mode="search", top_k=1)]
    results = results_for(cases)
    search.run(context(tmp_path), cases, results)
    assert results["s1"].failure.reason == "expected_target_absent"  # type: ignore[union-attr]
    assert "not in the results (K=1); top: 1. getMemberDeliveryDetail" in results["s1"].failure.message  # type: ignore[union-attr]


def test_an_unknown_target(tmp_path: Path) -> None:
    cases = [case("s1", "member delivery detail", "getMemberDeliveryDetial", mode="search")]
    results = results_for(cases)
    report = search.run(context(tmp_path), cases, results)
    failure = results["s1"].failure
    assert failure is not None and failure.reason == "expected_target_unknown"
    assert "Did you mean 'getMemberDeliveryDetail'?" in failure.message
    assert report.stops[0].condition == "expected_target_absent"  # the gate's stop covers both reasons


def test_search_assertions(tmp_path: Path) -> None:
    cases = [
        case(
            "ok",
            "check service health",
            "getHealth",
            mode="search",
            assertions=[
                ("top_1_is", {"tool": "getHealth"}),
                ("top_k_contains", {"tool": "getHealth", "k": 3}),
            ],
        ),
        case(
            "top1",
            "member delivery detail",
            "getMemberDeliveryDetail",
            mode="search",
            assertions=[("top_1_is", {"tool": "getMemberDeliveryList"})],
        ),
        case(
            "topk",
            "member delivery detail",
            None,
            mode="search",
            assertions=[("top_k_contains", {"tool": "getOrder", "k": 8})],
        ),
        case(
            "other",
            "check service health",
            "getHealth",
            mode="search",
            assertions=[("http_status", {"in": [200]})],
        ),
    ]
    results = results_for(cases)
    engine = Counting(BuiltinEngine(DEMO))
    search.run(context(tmp_path, engine=engine), cases, results)
    assert [a.passed for a in results["ok"].assertions] == [True, True]
    top1 = results["top1"]
    assert top1.failure is not None and top1.failure.reason == "expected_target_absent"
    assert top1.assertions[0].actual == "getMemberDeliveryDetail"
    topk = results["topk"]
    assert topk.failure is not None and topk.failure.reason == "expected_target_absent"
    assert topk.assertions[0].expected == {"tool": "getOrder", "k": 8}
    assert not results["other"].assertions  # an execute assertion is not the search stage's
    assert results["topk"].search["hit"] is None  # type: ignore[index]  # no expected target


def test_an_engine_error_is_recorded_and_the_others_go_on(tmp_path: Path) -> None:
    engine = Counting(BuiltinEngine(DEMO), fail_at="search")
    cases = [case("s1", "q", "getHealth", mode="search"), case("s2", "q2", "getHealth", mode="search")]
    results = results_for(cases)
    search.run(context(tmp_path, engine=engine), cases, results)
    for r in results.values():
        assert r.status == "error"
        assert (r.failure.stage, r.failure.reason) == ("search", "engine_error")  # type: ignore[union-attr]
        assert "RuntimeError: search exploded" in r.failure.message  # type: ignore[union-attr]
    assert engine.calls == ["search", "search"]


def test_done_cases_are_left_alone(tmp_path: Path) -> None:
    cases = [case("s1", "q", "getHealth", mode="search")]
    results = results_for(cases)
    results["s1"].fail("build", "spec_invalid")
    engine = Counting(BuiltinEngine(DEMO))
    search.run(context(tmp_path, engine=engine), cases, results)
    assert engine.calls == [] and results["s1"].search is None


def test_an_http_engine_reply_that_breaks_the_contract_is_an_engine_error(tmp_path: Path) -> None:
    from engine.stub_servers import serve
    from qlab.engine.http_engine import HttpEngine
    from qlab.project.model import EngineConfig

    bad = {"rows": [{"tool_id": "getHealth", "rank": 1, "score": "high"}]}
    with serve(lambda p, h, b: (200, bad)) as (url, _):
        engine = HttpEngine(EngineConfig(type="http", url=url))
        cases = [case("s1", "check service health", "getHealth", mode="search")]
        results = results_for(cases)
        search.run(context(tmp_path, engine=engine), cases, results)
        engine.close()
    failure = results["s1"].failure
    assert failure is not None and (failure.stage, failure.reason) == ("search", "engine_error")
    assert "$.rows[0].score: expected a number" in failure.message
    assert results["s1"].status == "error"


def test_an_engine_s_rows_are_kept_as_they_are_for_the_boundary_to_check(tmp_path: Path) -> None:
    """A python engine's rows reach the case as the engine gave them (a rank 0 included): the in-run output_schema
    check is what finds and words a row that does not fit."""
    bad = SearchResult((SearchRow("getHealth", 0, 1.0),))
    cases = [case("s1", "check service health", "getHealth", mode="search")]
    results = results_for(cases)
    search.run(context(tmp_path, engine=Counting(None, search=bad)), cases, results)
    assert results["s1"].search["rows"] == bad.rows  # type: ignore[index]
    found = resultschema.problem("search", json_form(results["s1"].search))
    assert found == "$.hit_rank: 0 is below 1"  # its rank 0 (the first problem, in the object's order)
    rows = json_form(results["s1"].search)["rows"]
    assert (
        resultschema.problem("search", {"hit": None, "top_k": 5, "rows": rows})
        == "$.rows[0].rank: 0 is below 1"
    )


def test_a_case_with_assertions_and_no_expected_target_fits_the_schema_and_is_not_a_miss(
    tmp_path: Path,
) -> None:
    """``hit`` is null when a case names no expected target: the result schema allows it (the in-run
    output_schema check blocked the whole run), and hit@K counts only the cases that have a target."""
    cases = [
        case(
            "a1", "track my parcel", mode="search", assertions=[("top_k_contains", {"tool": "trackDelivery"})]
        ),
        case("s1", "Find member delivery detail", "getMemberDeliveryDetail", mode="search"),
    ]
    results = results_for(cases)
    search.run(context(tmp_path), cases, results)
    assert results["a1"].status == "passed" and results["a1"].search is not None
    assert results["a1"].search["hit"] is None
    assert resultschema.problem("search", json_form(results["a1"].search)) is None
    figures = metrics.search_metrics([r.to_dict() for r in results.values()])
    assert figures["hit_at_k"] == 1.0  # s1 hit; a1 has no target to miss


def test_search_records_whether_it_found_the_target_family(tmp_path: Path) -> None:
    """Q1, "can search find the right target family?": a miss whose expected target's family (the API's tag) has
    a tool in the Top-K found the family, another did not; hit@K and family_hit_at_k tell them apart."""
    cases = [
        case("s1", "postpone the parcel", "explainDeliveryStatus", mode="search"),  # top: rescheduleDelivery
        case("s2", "postpone the parcel", "getMember", mode="search"),  # members: not in the Top-1
    ]
    results = results_for(cases)
    search.run(context(tmp_path, k=1), cases, results)
    assert [(r.search["hit"], r.search["family_hit"]) for r in results.values()] == [
        (False, True),
        (False, False),
    ]
    assert resultschema.problem("search", json_form(results["s1"].search)) is None
    figures = metrics.search_metrics([r.to_dict() for r in results.values()])
    assert (figures["hit_at_k"], figures["family_hit_at_k"]) == (0.0, 0.5)

"""Post-run evaluation: each case's trajectory against its expected tools, its own view (duration, what it
produced), and the run's trajectory and evidence-bundle summaries."""

from __future__ import annotations

from typing import Any

from qlab.engine.types import SearchRow
from qlab.run.postrun import actual_output, annotate, duration_ms, evidence_bundle, section, trajectory


def _plan(tools: list[str], status: str = "passed") -> dict[str, Any]:
    return {
        "case_id": "p",
        "suite": "s",
        "mode": "plan",
        "status": status,
        "plan": {"tools": tools, "status": "synthesized"},
    }


def test_trajectory_exact_and_each_kind_of_difference() -> None:
    exact = trajectory(["a", "b"], _plan(["a", "b"]))
    assert (exact["exact"], exact["in_order"], exact["score"], exact["sub_question_coverage"]) == (
        True,
        True,
        1.0,
        1.0,
    )
    swapped = trajectory(["a", "b"], _plan(["b", "a"]))
    assert (swapped["exact"], swapped["in_order"], swapped["missing"], swapped["score"]) == (
        False,
        False,
        [],
        0.5,
    )
    more = trajectory(["a", "b"], _plan(["a", "x", "b", "b"]))
    assert (more["extra"], more["repeated"], more["in_order"], more["score"]) == (["x"], ["b"], True, 0.5)
    less = trajectory(["a", "b", "c"], _plan(["a", "c"]))
    assert (less["missing"], less["in_order"], less["sub_question_coverage"]) == (
        ["b"],
        True,
        round(2 / 3, 6),
    )


def test_the_requests_sent_are_the_trajectory_when_the_case_executed() -> None:
    case = {**_plan(["a", "b"]), "execute": {"steps": [{"tool": "a"}, {"tool": "a"}, {"tool": "b"}]}}
    found = trajectory(["a", "b"], case)
    assert (found["source"], found["actual"], found["repeated"]) == ("execute", ["a", "a", "b"], ["a"])
    nothing = trajectory(["a"], {"case_id": "s", "status": "failed"})  # failed before it planned
    assert (nothing["actual"], nothing["missing"], nothing["sub_question_coverage"]) == ([], ["a"], 0.0)


def test_annotate_only_evaluated_cases_with_expected_tools() -> None:
    cases = [_plan(["a"]), {**_plan(["a"]), "case_id": "q", "status": "blocked"}]
    annotate(cases, {"p": ["a"], "q": ["a"]})
    assert "trajectory" in cases[0] and "trajectory" not in cases[1]


def test_the_case_view_reads_the_first_row_only_and_stays_bounded() -> None:
    rows = (SearchRow("t1", 1, 2.0), SearchRow("t2", 2, 1.0))
    case = {"status": "passed", "latency_ms": {"search": 1.5, "plan": 2.25}, "search": {"hit_rank": 2, "rows": rows},
            "execute": {"http_status": 200, "response_excerpt": "x" * 900}}  # fmt: skip
    out = actual_output(case)
    assert (out["top_1"], out["hit_rank"], out["http_status"], len(out["response_excerpt"])) == (
        "t1",
        2,
        200,
        500,
    )
    assert duration_ms(case) == 3.75


def test_the_evidence_bundle_adds_up_the_claims_of_every_response() -> None:
    def case(claims: int, cited: int, sources: list[str]) -> dict[str, Any]:
        record = {"claims": claims, "needing_citation": claims, "cited": cited, "evidence_items": 2, "usable_evidence": 1,
                  "citations": claims, "valid_citations": cited, "unhandled_conflicts": 0, "sources": sources}  # fmt: skip
        return {"case_id": "e", "status": "passed", "execute": {"claims": record}}

    bundle = evidence_bundle([case(3, 3, ["a"]), case(1, 0, ["a", "b"])])
    assert bundle is not None
    assert (bundle["cases"], bundle["claims"], bundle["citation_coverage"], bundle["evidence_quality"]) == (
        2,
        4,
        0.75,
        0.5,
    )
    assert bundle["sources"] == 2
    assert section([{"status": "passed"}, {"status": "blocked"}])["evaluated_share"] == 0.5


def test_a_cases_duration_is_its_stage_latencies_added_up() -> None:
    """Rule: ``duration_ms`` adds up the stage latencies, rounded to 3 places; a case of one stage whose latency is
    already rounded has that very float as its duration (no second float per case)."""
    one = {"latency_ms": {"search": 0.16}}
    assert duration_ms(one) is one["latency_ms"]["search"]
    assert duration_ms({"latency_ms": {"search": 0.12345}}) == 0.123
    assert duration_ms({"latency_ms": {"search": 0.1, "plan": 0.2, "execute": 2}}) == 2.3
    assert duration_ms({"latency_ms": {"search": "x"}}) == 0.0 and duration_ms({}) == 0.0


def test_a_search_case_with_expected_plan_tools_gets_no_trajectory() -> None:
    """A search case never plans: its expected_plan_tools scored a trajectory with every tool missing (coverage
    0.0). It is kept and not checked, and ``qlab validate`` says so."""
    searched = {"case_id": "s", "mode": "search", "status": "passed", "search": {"hit": True}}
    planned = {"case_id": "p", "mode": "plan", "status": "passed", "plan": {"tools": ["getOrder"]}}
    annotate([searched, planned], {"s": ["getOrder"], "p": ["getOrder"]})
    assert "trajectory" not in searched and planned["trajectory"]["exact"]

"""The ten scorecard dimensions on a hand-computed run; None where the run has no data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, plan_case, search_case
from qlab.project.model import Budget
from qlab.run.scorecard import DIMENSIONS, compute, details


def _trajectory(expected: list[str], actual: list[str], missing: list[str]) -> dict[str, Any]:
    return {"expected": expected, "actual": actual, "missing": missing}


def _claims(claims: int, cited: int, citations: int, valid: int) -> dict[str, Any]:
    return {
        "claims": claims,
        "needing_citation": claims,
        "cited": cited,
        "citations": citations,
        "valid_citations": valid,
    }


def _run() -> dict[str, Any]:
    """Ten cases, every number below is counted by hand in the comments."""
    cases = [
        search_case("s-1"),  # passed
        search_case("s-2", rank=None),  # failed
        search_case("s-3", status="blocked"),  # blocked: not evaluated
        plan_case(
            "p-1",
            llm="x",
            target_selector={  # passed, LLM usage recorded
                "llm_target": "x",
                "selected_target": "y",
                "overrode_llm": True,
                "reason_codes": [],
                "llm_usage": {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.02},
            },
            trajectory=_trajectory(["a", "b"], ["a", "b"], []),  # 2 of 2 expected tools called
        ),
        plan_case("p-2", correct=False, trajectory=_trajectory(["a", "c"], ["a"], ["c"])),  # 1 of 2
        plan_case("p-3", attempts=3, passes=2),  # a failed attempt, passed in the end: recovered
        plan_case(
            "p-4",
            status="error",
            attempts=2,
            passes=0,
            failure={"stage": "plan", "reason": "engine_error", "message": ""},
        ),  # not recovered
        {
            "case_id": "e-1",
            "suite": "exec",
            "mode": "execute",
            "status": "passed",
            # 3 claims, 2 cite existing evidence; 4 citations, 3 valid; 2 retried requests, 1 recovered
            "execute": {
                "http_status": 200,
                "claims": _claims(3, 2, 4, 3),
                "retries": 3,
                "retried_requests": 2,
                "recovered_requests": 1,
            },
        },
        {
            "case_id": "e-2",
            "suite": "exec",
            "mode": "execute",
            "status": "failed",
            # a mutating plan refused without allow_mutation: the approval was triggered correctly
            "execute": {
                "http_status": 200,
                "safety": {"read_only": False, "allowed": False, "mutating_calls": ["step 0 createOrder"]},
                "events": [],
            },
            "failure": {"stage": "execute", "reason": "schema_mismatch"},
        },
        {
            "case_id": "e-3",
            "suite": "exec",
            "mode": "execute",
            "status": "failed",
            # a mutating request sent without the approval: triggered wrongly
            "execute": {
                "safety": {"read_only": False, "allowed": False, "mutating_calls": ["step 0 createOrder"]},
                "events": [{"event": "request_sent", "method": "POST"}],
            },
            "failure": {"stage": "execute", "reason": "mutation_not_allowed"},
            "citations": [{"valid": True}],  # an engine's own citation list
        },
    ]
    guards = [
        {"guard": "output_schema", "stage": "search", "passed": True},
        {"guard": "output_schema", "stage": "plan", "passed": False},
        {"guard": "scrub", "stage": "learn", "passed": True},
        {"guard": "budget", "stage": "plan", "passed": True},
    ]
    data = artifact(cases, guards=guards, duration_ms=30_000.0)
    data["stages"] = {
        "learn": {
            "details": {
                "suggestions": [
                    {"id": "sg-1", "status": "accepted"},
                    {"id": "sg-2", "status": "rejected"},
                    {"id": "sg-3", "status": "pending_review"},
                    {"id": "sg-4", "status": "accepted"},
                ]
            }
        }
    }
    return data


def test_every_dimension_on_a_hand_computed_run() -> None:
    score = compute(_run(), budget=Budget(max_llm_cost_usd=0.1, max_duration_sec=120))
    assert list(score) == list(DIMENSIONS)
    # evaluated = 9 (all but s-3); passed = s-1, p-1, p-3, e-1 = 4
    assert score["correctness"] == pytest.approx(4 / 9, abs=1e-6)
    # sub-questions: p-1 2 of 2, p-2 1 of 2; sources: e-1 2 of 3 claims cited -> (3 + 2) / (4 + 3)
    assert score["coverage"] == pytest.approx(5 / 7, abs=1e-6)
    # citations: e-1 3 of 4 valid, e-3 1 of 1 -> 4 / 5
    assert score["citation_quality"] == pytest.approx(4 / 5)
    # schema: 2 guards (1 passed) + e-1 (valid) + e-2 (schema_mismatch) -> 2 / 4
    assert score["schema_validity"] == 0.5
    # policy: scrub + budget guards (2 passed) + approvals: e-2 correct, e-3 not -> 3 / 4
    assert score["policy_compliance"] == pytest.approx(3 / 4)
    # cost 0.02 of 0.10 -> 1 - 0.2
    assert score["cost_efficiency"] == pytest.approx(0.8)
    # 30 s of 120 s -> 1 - 0.25
    assert score["latency"] == pytest.approx(0.75)
    # target_selector on p-1..p-4: p-2 failed at select -> 3 / 4
    assert score["tool_selection_accuracy"] == pytest.approx(0.75)
    # repeated: p-3 (recovered), p-4 (not); requests: e-1 1 of 2 -> 2 / 4
    assert score["retry_recovery"] == 0.5
    # accepted 2, rejected 1 (pending does not count) -> 2 / 3
    assert score["human_acceptance"] == pytest.approx(2 / 3, abs=1e-6)


def test_a_case_carries_the_dimensions_it_has_data_for() -> None:
    from qlab.run.scorecard import case_metrics

    cases = {c["case_id"]: c for c in _run()["cases"]}
    assert case_metrics(cases["s-1"]) == {"correctness": 1.0}
    assert case_metrics(cases["s-3"]) == {}  # blocked: nothing evaluated
    assert case_metrics(cases["p-2"]) == {"correctness": 0.0, "coverage": 0.5, "tool_selection_accuracy": 0.0}
    assert case_metrics(cases["e-1"]) == {
        "correctness": 1.0,
        "coverage": pytest.approx(2 / 3, abs=1e-6),
        "citation_quality": 0.75,
        "schema_validity": 1.0,
        "retry_recovery": 0.5,
    }
    assert case_metrics(cases["e-3"])["policy_compliance"] == 0.0


def test_a_regenerate_request_counts_as_not_accepted() -> None:
    assert (
        compute(artifact([search_case("s-1")]), reviews=["approved", "regenerate"])["human_acceptance"] == 0.5
    )


def test_a_builtin_engine_without_an_llm_spends_nothing_against_a_cost_budget() -> None:
    data = artifact([search_case("s-1")])
    data["provenance"]["run_configuration"] = {"engine": "builtin", "budget": {"max_llm_cost_usd": 0.5}}
    assert compute(data)["cost_efficiency"] == 1.0
    data["provenance"]["run_configuration"]["engine"] = "http"  # its LLM spend is not known: no data
    assert compute(data)["cost_efficiency"] is None


def test_reviews_given_by_the_caller_count_as_human_decisions() -> None:
    score = compute(_run(), reviews=["approved", "rejected", "rejected"])
    # 2 + 1 accepted, 1 + 2 rejected
    assert score["human_acceptance"] == 0.5


def test_a_run_without_data_gives_none_never_a_made_up_number() -> None:
    data = artifact([search_case("s-1")])
    score = compute(data)
    assert score["correctness"] == 1.0
    for name in (
        "coverage",
        "citation_quality",
        "schema_validity",
        "policy_compliance",
        "cost_efficiency",
        "latency",
        "tool_selection_accuracy",
        "retry_recovery",
        "human_acceptance",
    ):
        assert score[name] is None, name
    assert compute(artifact([]))["correctness"] is None


def test_budget_recorded_in_the_artifact_is_used_and_over_budget_scores_zero() -> None:
    data = _run()
    data["provenance"]["run_configuration"] = {"budget": {"max_llm_cost_usd": 0.01, "max_duration_sec": 10}}
    score = compute(data)
    assert score["cost_efficiency"] == 0.0  # 0.02 spent of 0.01
    assert score["latency"] == 0.0  # 30 s of 10 s
    tokens_only = compute(data, budget=Budget(max_llm_tokens=1200))
    assert tokens_only["cost_efficiency"] == pytest.approx(
        0.9
    )  # cost recorded but no cost budget: 120 of 1200 tokens


def test_details_carry_the_counts_and_the_formula() -> None:
    detail = details(_run())["correctness"]
    assert (detail.numerator, detail.denominator) == (4, 9)
    assert detail.formula == "passed / evaluated cases"


def test_docs_state_every_formula_the_code_uses() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "scorecard.md").read_text(encoding="utf-8")
    for name, score in details(_run(), budget=Budget(max_llm_cost_usd=1, max_duration_sec=1)).items():
        assert f"| `{name}` | `{score.formula}` |" in doc, name


def test_review_decisions_gathers_suggestions_and_release_reviews(tmp_path: Path) -> None:
    import json

    from governance.builders import make_project
    from qlab.governance.learning.reviews import decisions as review_decisions
    from qlab.project import load_project

    extra = "release:\n  s:\n    permissions: [deliveries]\n"
    config = load_project(make_project(tmp_path, extra=extra)).config
    (tmp_path / ".qlab").mkdir()
    statuses = ["accepted", "rejected", "pending_review", "accepted"]
    suggestions = [{"id": f"sg-{i:012d}", "status": s} for i, s in enumerate(statuses)]
    (tmp_path / ".qlab" / "suggestions.json").write_text(
        json.dumps({"version": 1, "suggestions": suggestions})
    )
    approvals = [
        {"skill": "s", "decision": "approved"},
        {"skill": "s", "decision": "rejected"},
        {"skill": "s", "decision": "regenerate"},
    ]
    (tmp_path / ".qlab" / "approvals.json").write_text(json.dumps({"version": 1, "approvals": approvals}))
    proposals = tmp_path / "gates" / "proposals"
    proposals.mkdir()
    (proposals / "prop-000000000001.json").write_text(
        json.dumps({"id": "prop-000000000001", "status": "accepted"})
    )
    (proposals / "prop-000000000002.json").write_text(
        json.dumps({"id": "prop-000000000002", "status": "pending_review"})
    )
    decisions = review_decisions(config)
    assert sorted(decisions) == [
        "accepted",
        "accepted",
        "accepted",
        "approved",
        "regenerate",
        "rejected",
        "rejected",
    ]
    # 4 accepted of 7 decisions
    assert compute(artifact([search_case("s-1")]), reviews=decisions)["human_acceptance"] == pytest.approx(
        4 / 7, abs=1e-6
    )


def test_an_approval_is_judged_from_what_went_out_not_only_from_what_the_plan_declared() -> None:
    """The approval half of policy_compliance read only cases whose plan declared a mutating call, which qlab
    itself refuses without the approval, so it was 1 by construction. A POST the plan did not declare mutating
    went out without anyone approving it, and a read-only plan refused as mutating is a false alarm: both are
    wrong triggers now."""
    from qlab.run.scorecard import approval_trigger

    post = {"event": "request_sent", "method": "POST", "host": "127.0.0.1"}
    undeclared = {"case_id": "e-1", "suite": "x", "status": "passed", "mode": "execute", "mutation_safety": "read_only",
                  "execute": {"safety": {"read_only": True, "allowed": True}, "events": [post]}}  # fmt: skip
    alarm = {"case_id": "e-2", "suite": "x", "status": "failed", "mode": "execute", "mutation_safety": "read_only",
             "failure": {"stage": "execute", "reason": "mutation_not_allowed"},
             "execute": {"safety": {"read_only": True, "allowed": False}, "events": []}}  # fmt: skip
    reads = {"case_id": "e-3", "suite": "x", "status": "passed", "mode": "execute",
             "execute": {"safety": {"read_only": True, "allowed": True}, "events": [{**post, "method": "GET"}]}}  # fmt: skip
    assert [approval_trigger(c) for c in (undeclared, alarm, reads)] == [False, False, None]
    assert compute(artifact([undeclared, alarm, reads]))["policy_compliance"] == 0.0

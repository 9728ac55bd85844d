"""Hand-written result artifacts (the documented shape of ``result.json``) for report and command tests.

They are written here, not produced by ``qlab run``, so the report tests pin the artifact contract itself.
"""

from __future__ import annotations

import copy
from typing import Any


def _case(
    case_id: str,
    suite: str,
    mode: str,
    status: str = "passed",
    *,
    rank: int | None = 1,
    top_k: int = 5,
    failure: tuple[str, str, str] | None = None,
    latency: dict[str, float] | None = None,
) -> dict[str, Any]:
    case: dict[str, Any] = {
        "case_id": case_id,
        "suite": suite,
        "mode": mode,
        "status": status,
        "latency_ms": latency or {"search": 12.0, "target_selection": 2.0, "plan": 40.0},
        "search": {"hit": rank is not None, "hit_rank": rank, "top_k": top_k, "rows": []},
        "file": f"gates/{suite}/{case_id}.yaml",
        "line": 1,
    }
    if mode != "search":
        case["target_selector"] = {
            "llm_target": None,
            "selected_target": "getMemberDeliveryDetail",
            "overrode_llm": False,
            "reason_codes": ["no_llm_target", "selected_top_rank"],
        }
    if failure is not None:
        stage, reason, message = failure
        case["failure"] = {"stage": stage, "reason": reason, "message": message}
    return case


def result(run_id: str = "run-1", *, started_at: str = "2026-12-01T10:00:00Z") -> dict[str, Any]:
    """A blocked run of the demo: search passes, the plan gate blocks on one unsatisfied case."""
    cases = [
        _case("member-search-001", "search_core", "search", rank=1),
        _case("member-search-002", "search_core", "search", rank=2),
        _case("member-search-003", "search_core", "search", rank=4),
        _case(
            "member-search-004",
            "search_core",
            "search",
            "failed",
            rank=None,
            failure=("search", "expected_target_absent", "getOrderHistory is not in the Top-5"),
        ),
        _case("member-plan-001", "plan_e2e", "plan", rank=1),
        _case(
            "member-plan-002",
            "plan_e2e",
            "plan",
            "failed",
            rank=1,
            failure=("plan", "required_fields_unsatisfied", "memberNo is required and no entity provides it"),
        ),
        _case(
            "member-exec-001",
            "execute_read",
            "execute",
            "blocked",
            rank=1,
            failure=("plan", "blocked_by_stage", "the plan gate blocked the run"),
        ),
    ]
    return {
        "schema_version": 1,
        "run_id": run_id,
        "started_at": started_at,
        "ended_at": "2026-12-01T10:00:03Z",
        "duration_ms": 3120.5,
        "qlab_version": "0.1.0",
        "project": "member-delivery-demo",
        "fingerprint": {
            "config_digest": "sha256:abc",
            "collection_digest": "sha256:def",
            "engine": "builtin",
        },
        "provenance": {"dataset": "gates/**/*.yaml", "model": None},
        "shard": None,
        "cases": cases,
        "suites": {
            "search_core": {
                "mode": "search",
                "category": "flow",
                "required": True,
                "cadence": "every_search_change",
                "metrics": {"hit_at_k": 0.75, "top_1": 0.25},
                "counts": {"passed": 3, "failed": 1},
            },
            "plan_e2e": {
                "mode": "plan",
                "category": "flow",
                "required": True,
                "cadence": "every_plan_change",
                "metrics": {"plan_hit_rate": 0.5},
                "counts": {"passed": 1, "failed": 1},
            },
        },
        "stages": {
            "search": {
                "metrics": {"hit_at_k": 0.75},
                "duration_ms": 40.0,
                "guards": [],
                "stops": [],
                "details": {},
            }
        },
        "gates": [
            {
                "name": "search",
                "stage": "search",
                "status": "passed",
                "thresholds": [
                    {"metric": "hit_at_k", "op": ">=", "value": 0.7, "actual": 0.75, "passed": True}
                ],
                "stops": [],
                "reasons": [],
            },
            {
                "name": "plan",
                "stage": "plan",
                "status": "blocked",
                "thresholds": [
                    {"metric": "plan_hit_rate", "op": ">=", "value": 0.9, "actual": 0.5, "passed": False}
                ],
                "stops": [
                    {
                        "condition": "required_fields_unsatisfied",
                        "case_ids": ["member-plan-002"],
                        "message": "1 case has unsatisfied required fields",
                    }
                ],
                "reasons": ["threshold plan_hit_rate >= 0.9 not met (0.5)"],
            },
            {
                "name": "execute",
                "stage": "execute",
                "status": "skipped",
                "thresholds": [],
                "stops": [],
                "reasons": ["blocked_by_stage"],
            },
        ],
        "metrics": {
            "search_hit_at_k": 0.8571,
            "search_top_1": 0.5714,
            "target_selector_accuracy": 1.0,
            "plan_hit_rate": 0.5,
            "execute_read_success_rate": None,
            "structured_failure_rate": 1.0,
            "latency_ms": {
                "search": {"p50": 12.0, "p95": 30.0},
                "target_selection": {"p50": 2.0, "p95": 3.0},
                "plan": {"p50": 40.0, "p95": 120.0},
            },
        },
        "categories": {"flow": {"passed": 4, "failed": 2}},
        "scorecard": {
            "correctness": 0.57,
            "coverage": 0.9,
            "citation_quality": None,
            "schema_validity": 1.0,
            "policy_compliance": 1.0,
            "cost_efficiency": None,
            "latency": 0.95,
            "tool_selection_accuracy": 1.0,
            "retry_recovery": None,
            "human_acceptance": None,
        },
        "guards": [
            {"guard": "output_schema", "stage": "search", "passed": True, "mode": "block", "message": ""}
        ],
        "readiness": {"schema_coverage": 0.92, "tools": 12},
        "decision": {
            "verdict": "block",
            "reasons": ["gate plan blocked: plan_hit_rate 0.5 < 0.9"],
            "exit_code": 1,
        },
    }


def fixed_result(run_id: str = "run-2", *, started_at: str = "2026-12-02T10:00:00Z") -> dict[str, Any]:
    """The next run: member-plan-002 fixed, member-search-002 regressed, one case new, one removed."""
    out = copy.deepcopy(result(run_id, started_at=started_at))
    by_id = {c["case_id"]: c for c in out["cases"]}
    plan = by_id["member-plan-002"]
    plan["status"] = "passed"
    del plan["failure"]
    search = by_id["member-search-002"]
    search["status"] = "failed"
    search["search"] = {"hit": False, "hit_rank": None, "top_k": 5, "rows": []}
    search["failure"] = {"stage": "search", "reason": "expected_target_absent", "message": "not in Top-5"}
    out["cases"] = [c for c in out["cases"] if c["case_id"] != "member-exec-001"]
    out["cases"].append(_case("member-search-005", "search_core", "search", rank=1))
    out["metrics"]["plan_hit_rate"] = 1.0
    out["metrics"]["search_hit_at_k"] = 0.7143
    out["scorecard"]["correctness"] = 0.71
    plan_gate = out["gates"][1]
    plan_gate.update(status="passed", stops=[], reasons=[])
    plan_gate["thresholds"][0].update(actual=1.0, passed=True)
    out["gates"][2].update(status="passed", reasons=[])
    out["decision"] = {"verdict": "pass", "reasons": [], "exit_code": 0}
    return out


def full(artifact: dict[str, Any]) -> dict[str, Any]:
    """``artifact`` completed to the full ``schemas/result.schema.json`` shape: fingerprint, provenance, per-category
    counts, suite and gating on thresholds and stops.

    ``result()`` itself stays as it is: the JUnit and Markdown golden tests render it byte for byte.
    """
    out = copy.deepcopy(artifact)
    out["fingerprint"] = {
        "digest": "sha256:0f1e",
        "config_digest": "sha256:abc",
        "collection_digest": "sha256:def",
        "engine": "builtin",
        "model": None,
        "qlab_version": "0.1.0",
        "git_commit": "1234567",
    }
    out["provenance"] = {
        "dataset": {
            "files": [
                {"path": "gates/search_core/cases.yaml", "digest": "sha256:aaaa", "cases": 4},
                {"path": "gates/plan_e2e/cases.yaml", "digest": "sha256:bbbb", "cases": 2},
            ],
            "digest": "sha256:cccc",
        },
        "model": None,
        "run_configuration": {"config": "qlab.yaml", "shard": None, "exit_zero": False},
    }
    out["categories"] = {
        "flow": {
            "counts": {"total": 6, "passed": 4, "failed": 2, "error": 0, "blocked": 0, "skipped": 0},
            "pass_rate": 0.6667,
        },
        "step": {
            "counts": {"total": 1, "passed": 0, "failed": 0, "error": 0, "blocked": 1, "skipped": 0},
            "pass_rate": None,
        },
    }
    for gate in out["gates"]:
        for threshold in gate["thresholds"]:
            threshold.setdefault("suite", None)
            threshold.setdefault("gating", True)
        for stop in gate["stops"]:
            stop.setdefault("gating", True)
    return out


GATE_SUITES = {"search": ["search_core"], "plan": ["plan_e2e"], "execute": ["execute_read"]}


def as_written(artifact: dict[str, Any]) -> dict[str, Any]:
    """``full(artifact)`` with its gates' suites, and its decision, gate verdicts and metrics as its cases give
    them (``qlab.run.verify``): what a command that reads a result accepts (it refuses one whose stored verdict or
    figures disagree with its cases)."""
    from qlab.run import verify

    out = full(artifact)
    for gate in out["gates"]:
        gate.setdefault("suites", GATE_SUITES.get(gate["name"], []))
    found = verify.rederive(out)
    out.update(decision=found["decision"], gates=found["gates"], cases=found["cases"])
    out["metrics"] = {**out["metrics"], **found["metrics"]}
    for name, info in found["suites"].items():
        out["suites"][name] = {**out["suites"].get(name, {}), **info}
    return out

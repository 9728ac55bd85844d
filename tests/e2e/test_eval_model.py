"""The eval model on the demo project, end to end: the case lifecycle (a draft never gates, an archived case never
runs), the run's target version and status, every case's duration, output and metrics, the in-run claims checks
and the client's retries, post-run trajectories, every scorecard dimension recomputed by hand from result.json,
and the learning loop: signals → proposals → sandbox A/B → quality gate → publish → a second run that shows the
fix and proposes its regression case.

One demo copy serves every test of the module (two runs and a sandbox eval); they run in order."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from qlab.cli import main
from qlab.contracts.resources import load_schema

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import servers

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

DRAFTS = """\
- id: search-consignment-001
  status: draft
  name: an operator's word for a delivery
  query: whereabouts of consignment D-5003
  expected_target: trackDelivery
- id: search-consignment-002
  status: draft
  query: consignments belonging to M-1002
  expected_target: getMemberDeliveryList
- id: search-retired-001
  status: archived
  query: list every carrier
  expected_target: listCarriers
"""


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out + out.err


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project (qlab.yaml, gates/, its spec) in a temporary folder, with two draft cases that miss and
    an archived one; a release review asking for a new run is on record."""
    root = tmp_path_factory.mktemp("demo")
    shutil.copy(ROOT / "qlab.yaml", root / "qlab.yaml")
    shutil.copytree(ROOT / "gates", root / "gates")
    (root / "runner" / "qlab" / "demo").mkdir(parents=True)
    shutil.copy(ROOT / "runner" / "qlab" / "demo" / "openapi.yaml", root / "runner" / "qlab" / "demo")
    (root / "gates" / "search_core" / "zz-drafts.yaml").write_text(DRAFTS, encoding="utf-8")
    (root / ".qlab").mkdir()
    reviews = [
        {
            "skill": "member-delivery-skill",
            "decision": "approved",
            "reviewer": "ann",
            "result_digest": "sha256:1",
        },
        {
            "skill": "member-delivery-skill",
            "decision": "regenerate",
            "reviewer": "bo",
            "result_digest": "sha256:2",
        },
    ]
    (root / ".qlab" / "approvals.json").write_text(json.dumps({"version": 1, "approvals": reviews}))
    return root / "qlab.yaml"


@pytest.fixture(scope="module")
def env(demo: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QLAB_DEMO_PORT", str(servers.free_port()))
        yield patch


def _result(demo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((demo.parent / ".qlab" / "out" / "result.json").read_text())
    jsonschema.Draft7Validator(load_schema("result")).validate(data)
    return data


def _cases(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case_id"]: c for c in result["cases"]}


def test_the_first_run_passes_with_its_drafts_failing_and_its_archived_case_listed(
    demo: Path, env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _cli(
        ["run", "--config", str(demo), "--target-version", "member-delivery-skill@1.3.0"], capsys
    )
    assert code == 0, text
    result = _result(demo)
    assert (result["status"], result["target_version"]) == ("completed", "member-delivery-skill@1.3.0")
    bindings = next(g for g in result["prerun"] if g["guard"] == "skill_bindings")
    assert bindings["passed"] and bindings["message"] == "1 skill(s) bound"
    assert result["suites"]["business_manual_20"]["counts"]["passed"] == 20
    assert result["suites"]["business_manual_20"]["cadence"] == "every_release_candidate"
    assert (
        result["suites"]["search_core"]["target_type"],
        result["suites"]["search_core"]["target_ref"],
    ) == (
        "skill",
        "member-delivery-skill",
    )
    cases = _cases(result)
    drafts = [cases["search-consignment-001"], cases["search-consignment-002"]]
    assert [(c["status"], c["lifecycle"]) for c in drafts] == [("failed", "draft")] * 2
    assert result["suites"]["search_core"]["counts"]["draft_failed"] == 2
    assert [a["case_id"] for a in result["archived_cases"]] == ["search-retired-001"]
    assert "search-retired-001" not in cases
    for case in result["cases"]:
        assert case["duration_ms"] == round(sum(case["latency_ms"].values()), 3)
        assert case["metrics"]["correctness"] == (1.0 if case["status"] == "passed" else 0.0)
    assert cases["member-plan-001"]["actual_output"]["plan_tools"] == [
        "getMemberDeliveryList",
        "getMemberDeliveryDetail",
    ]


def test_the_claims_check_the_retries_and_the_trajectories(demo: Path) -> None:
    result = _result(demo)
    explained = _cases(result)["execute-read-006"]
    claims, execute = explained["execute"]["claims"], explained["execute"]
    assert (claims["claims"], claims["cited"], claims["valid_citations"], claims["usable_evidence"]) == (
        3,
        3,
        3,
        3,
    )
    assert (execute["retries"], execute["retried_requests"], execute["recovered_requests"]) == (1, 1, 1)
    guards = {g["guard"]: g for g in result["guards"] if g["stage"] == "execute"}
    assert guards["citation_coverage"]["passed"] and guards["evidence_quality"]["passed"]
    assert explained["trajectory"]["source"] == "execute" and explained["trajectory"]["exact"]
    assert result["postrun"]["evidence"]["claims"] == 3 and result["postrun"]["evidence"]["sources"] == 2
    assert (
        result["postrun"]["trajectory"]["cases"] == sum(1 for c in result["cases"] if "trajectory" in c) > 30
    )


def test_every_scorecard_dimension_recomputed_by_hand(demo: Path) -> None:
    result = _result(demo)
    cases, guards = result["cases"], result["guards"]
    evaluated = [c for c in cases if c["status"] in ("passed", "failed", "error")]
    paths = [c["trajectory"] for c in evaluated if "trajectory" in c]
    records = [c["execute"]["claims"] for c in evaluated if "claims" in c.get("execute", {})]
    expected = sum(len(set(t["expected"])) for t in paths) + sum(r["needing_citation"] for r in records)
    covered = sum(len(set(t["expected"])) - len(t["missing"]) for t in paths) + sum(
        r["cited"] for r in records
    )
    schema_guards = [g for g in guards if g["guard"] == "output_schema"]
    responses = [c for c in cases if c.get("execute", {}).get("http_status") is not None]
    bad = {"schema_mismatch", "invalid_json"}
    policy_guards = [g for g in guards if g["guard"] != "output_schema"]
    selected = [c for c in cases if "target_selector" in c]
    retried = sum(c.get("execute", {}).get("retried_requests", 0) for c in cases)
    recovered = sum(c.get("execute", {}).get("recovered_requests", 0) for c in cases)
    by_hand = {
        "correctness": sum(c["status"] == "passed" for c in evaluated) / len(evaluated),
        "coverage": covered / expected,
        "citation_quality": sum(r["valid_citations"] for r in records) / sum(r["citations"] for r in records),
        "schema_validity": (
            sum(g["passed"] for g in schema_guards)
            + sum((c.get("failure") or {}).get("reason") not in bad for c in responses)
        )
        / (len(schema_guards) + len(responses)),
        "policy_compliance": sum(g["passed"] for g in policy_guards)
        / len(policy_guards),  # no mutating plan ran
        "cost_efficiency": 1 - 0.0 / 0.50,  # the built-in engine spends nothing against max_llm_cost_usd 0.50
        "latency": 1 - min(1, result["duration_ms"] / (300 * 1000)),
        "tool_selection_accuracy": sum((c.get("failure") or {}).get("stage") != "select" for c in selected)
        / len(selected),
        "retry_recovery": recovered / retried,
        "human_acceptance": 1 / 2,  # approved by ann, bo asked for a new run
    }
    assert list(result["scorecard"]) == list(by_hand)
    for name, value in by_hand.items():
        assert result["scorecard"][name] == pytest.approx(value, abs=1e-6), name
    assert result["scorecard"]["correctness"] < 1.0  # the two drafts failed; they count in correctness


def test_policy_proposals_from_a_budget_breach_and_a_check_that_only_warned(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first run's result, as if it had run 400 s against its 300 s budget (which blocked it at the learn
    gate) and its citation check had only warned: the learning loop proposes a budget and a guard-mode change
    (policy), and the sandbox judges the stored run again under each: the budget one lets it through (block →
    pass), the citation one makes it block where it passed; qlab.yaml stays as it is."""
    result = _result(demo)
    result["duration_ms"] = 400_000.0
    over = {"guard": "budget", "stage": "learn", "passed": False, "mode": "block", "gate": "learn",
            "message": "budget_exceeded: run time 400.0s > 300s"}  # fmt: skip
    below = {"guard": "citation_coverage", "stage": "execute", "passed": False, "mode": "warn",
             "gate": "execute", "message": "e-1 0.5 < 1"}  # fmt: skip
    gates = {g["name"]: g for g in result["gates"]}
    gates["learn"]["guards"] = [g for g in gates["learn"]["guards"] if g["guard"] != "budget"] + [over]
    gates["learn"]["status"] = "blocked"
    # the check replaced, not added beside the one the run made: a result records each check once, and a reader
    # judges it again from its records (qlab.run.verify)
    gates["execute"]["guards"] = [g for g in gates["execute"]["guards"] if g["guard"] != "citation_coverage"]
    gates["execute"]["guards"].append(below)
    gates["execute"]["status"] = "warned"
    result["stages"]["learn"]["guards"] = [
        g for g in result["stages"]["learn"]["guards"] if g["guard"] != "budget"
    ] + [over]
    result["stages"]["execute"]["guards"] = [
        g for g in result["stages"]["execute"]["guards"] if g["guard"] != "citation_coverage"
    ] + [below]
    result["guards"] += [over, below]
    passed = dict(result["decision"])
    result["decision"] = {"verdict": "block", "reasons": ["gate learn blocked: guard budget"], "exit_code": 1}
    stored = demo.parent / "slow.json"
    stored.write_text(json.dumps(result), encoding="utf-8")
    code, text = _cli(["learn", "shadow", "--result", str(stored), "--config", str(demo), "--json"], capsys)
    assert code == 0, text
    proposals = {p["kind"]: p for p in json.loads(text)["suggestions"] if p["type"] == "policy"}
    assert proposals["budget"]["change"] == {"budget": {"max_duration_sec": 500}}
    assert proposals["guard_mode"]["change"] == {
        "gate": "execute",
        "guard": "citation_coverage",
        "mode": "block",
    }
    config_before = demo.read_text()
    code, text = _cli(
        [
            "learn",
            "sandbox",
            proposals["budget"]["id"],
            "--result",
            str(stored),
            "--config",
            str(demo),
            "--json",
        ],
        capsys,
    )
    assert code == 0, text
    (outcome,) = json.loads(text).values()
    assert outcome["decisions"] == [{"run_id": result["run_id"], "before": "block", "after": "pass"}]
    assert outcome["improvementCheck"]["passed"] and outcome["qualityGate"]["passed"]
    assert outcome["scorecardDelta"]["latency"] == pytest.approx(1 - 400 / 500, abs=1e-6)
    code, text = _cli(
        ["learn", "accept", proposals["budget"]["id"], "--by", "carol", "--config", str(demo)], capsys
    )
    assert (
        code == 0
        and "make this edit in qlab.yaml (qlab never edits it):\nbudget:\n  max_duration_sec: 500" in text
    )
    assert demo.read_text() == config_before
    # the citation check that only warned, in a run that passed: blocking on it makes that run BLOCK
    result["decision"] = passed
    gates["learn"]["guards"][-1] = {**over, "passed": True, "message": "within budget"}
    gates["learn"]["status"] = "passed"
    warned = demo.parent / "warned.json"
    warned.write_text(json.dumps(result), encoding="utf-8")
    code, text = _cli(
        ["learn", "sandbox", proposals["guard_mode"]["id"], "--result", str(warned), "--config", str(demo),
         "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, text
    (outcome,) = json.loads(text).values()
    assert outcome["decisions"] == [{"run_id": result["run_id"], "before": "pass", "after": "block"}]
    # what a stricter policy is for: the run it would stop is shown as stopped, not as a regression
    assert outcome["regressionCheck"]["passed"] and outcome["improvementCheck"]["decisions_stopped"]


def test_the_learning_loop_from_signal_to_a_published_memory_write(
    demo: Path, env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    learn = _result(demo)["stages"]["learn"]["details"]
    assert {s["signal"] for s in learn["signals"]} >= {"search_miss", "reviewer_reject"}
    proposals = {(p["type"], p["kind"]): p for p in learn["suggestions"]}
    rewrite = proposals[("memory", "query_rewrite")]
    assert rewrite["change"] == {"query_rewrites": {"consignment": "delivery", "consignments": "delivery"}}
    assert ("collection_metadata", "alias") in proposals
    knowledge = demo.parent / "gates" / "knowledge.yaml"
    before = knowledge.read_text()
    code, text = _cli(["learn", "sandbox", rewrite["id"], "--config", str(demo)], capsys)
    assert code == 0, text
    assert "A (as is)   B (with it)" in text and "quality gate:     PASSED" in text
    assert "improvementCheck: passed (search-consignment-001, search-consignment-002)" in text
    assert knowledge.read_text() == before  # the sandbox wrote nothing
    code, text = _cli(["learn", "accept", rewrite["id"], "--by", "alice", "--config", str(demo)], capsys)
    assert code == 0, text
    assert "consignment: delivery  # accepted by alice at " in knowledge.read_text()
    # the second run applies the knowledge: the drafts pass, and the learn gate sees the fix
    code, text = _cli(["run", "--config", str(demo)], capsys)
    assert code == 0, text
    result = _result(demo)
    cases = _cases(result)
    assert cases["search-consignment-001"]["status"] == cases["search-consignment-002"]["status"] == "passed"
    assert result["fingerprint"]["knowledge_digest"].startswith("sha256:")
    learn = result["stages"]["learn"]["details"]
    fixed = next(s for s in learn["signals"] if s["signal"] == "failed_then_succeeded")
    assert set(fixed["case_ids"]) == {"search-consignment-001", "search-consignment-002"}
    cases_proposed = [p for p in learn["suggestions"] if p["kind"] == "eval_case"]
    assert {p["change"]["case_id"] for p in cases_proposed} == {
        "search-consignment-001",
        "search-consignment-002",
    }


def test_a_permission_typo_is_caught_before_any_release_gate(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = demo.read_text().replace(
        "permissions: [members, deliveries]", "permissions: [members, deliveriez]"
    )
    typo = demo.parent / "typo.yaml"
    typo.write_text(text, encoding="utf-8")
    code, out = _cli(["validate", "--config", str(typo)], capsys)
    assert code == 2 and "permission 'deliveriez' names no tool id, family or tag" in out
    assert "Did you mean 'deliveries'?" in out
    # qlab run says the same, exit 2 before any case runs (it was a warning, exit 0)
    code, out = _cli(["run", "--config", str(typo), "--no-server", "--stage", "search"], capsys)
    assert code == 2 and "skill_bindings" in out and "deliveriez" in out, out

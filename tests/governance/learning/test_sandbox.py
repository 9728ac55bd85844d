"""Sandbox eval for every proposal type: stored runs replayed A (as is) / B (with the proposal, in memory), the
five figures, the quality gate; and not one project file changes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from governance.builders import (
    STEALING_ALIAS,
    artifact,
    blocked_at_search,
    honest_project,
    make_project,
    search_case,
    write,
)
from qlab.governance.env import collection_and_engines
from qlab.governance.learning.proposals import propose
from qlab.governance.learning.proposers import proposal
from qlab.governance.learning.sandbox import History, base_subject, compare, run_sandbox
from qlab.governance.records import load_artifact
from qlab.project import load_project


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sandbox(
    tmp_path: Path, item: dict[str, Any], *, extra: str = "", knowledge: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """The sandbox eval of ``item`` on a project whose last run missed s-parcel ("where is my parcel")."""
    config_path = make_project(tmp_path, aliases="{}\n", extra=extra)
    if knowledge:
        text = config_path.read_text().replace(
            "learning:\n", "learning:\n  knowledge_file: gates/knowledge.yaml\n"
        )
        config_path.write_text(text, encoding="utf-8")
    (tmp_path / ".qlab").mkdir(exist_ok=True)
    miss = search_case("s-parcel", rank=None, top=["listCarriers"], top_k=8)
    data = artifact([miss], duration_ms=kwargs.pop("duration_ms", 1000.0))
    data.update(kwargs.pop("data", {}))
    stored = write(tmp_path / ".qlab" / "last.json", data)
    project = load_project(config_path)
    collection, _factory = collection_and_engines(project.config)
    before = _files(tmp_path)
    out = run_sandbox(
        item,
        history=History((load_artifact(stored),), tuple(project.cases)),
        base=base_subject(project.config, collection),
        **kwargs,
    )
    assert _files(tmp_path) == before  # applied in memory only
    return out


ALIAS = {"id": "sg-000000000001", "status": "pending_review", "type": "collection_metadata", "kind": "alias",
         "tool_id": "trackDelivery", "aliases": ["where is my parcel"], "evidence": []}  # fmt: skip


def test_collection_metadata_replays_the_history_with_the_alias(tmp_path: Path) -> None:
    out = _sandbox(tmp_path, ALIAS)
    assert out["type"] == "collection_metadata" and out["replayed"] == 1
    assert out["scorecardDelta"]["correctness"] == 1.0  # 0 of 1 → 1 of 1
    assert (
        out["improvementCheck"]["passed"] and out["improvementCheck"]["improved"][0]["case_id"] == "s-parcel"
    )
    assert out["regressionCheck"]["passed"]
    assert out["costDelta"] == {"llm_cost_usd": 0.0, "llm_tokens": 0}
    assert isinstance(out["latencyDelta"]["replayed_ms"], float)
    assert out["before"]["verdicts"] == ["block"] and out["after"]["verdicts"] == ["pass"]
    assert out["qualityGate"]["passed"], out["qualityGate"]
    assert [c["name"] for c in out["qualityGate"]["checks"]] == [
        "output_schema",
        "policy",
        "regression_evals",
    ]


def test_memory_replays_with_the_query_rewrite(tmp_path: Path) -> None:
    rewrite = proposal(
        "query_rewrite", "search_miss", {"query_rewrites": {"parcel": "delivery"}}, "t", [], "r"
    )
    out = _sandbox(tmp_path, rewrite, knowledge=True)
    assert out["type"] == "memory" and out["improvementCheck"]["passed"] and out["qualityGate"]["passed"]
    assert not (tmp_path / "gates" / "knowledge.yaml").exists()  # nothing was written


def test_a_policy_change_rejudges_the_stored_runs_under_the_new_policy(tmp_path: Path) -> None:
    budget = proposal("budget", "budget_breach", {"budget": {"max_duration_sec": 20}}, "t", [], "r")
    out = _sandbox(tmp_path, budget, extra="budget:\n  max_duration_sec: 5\n", duration_ms=9000.0)
    assert out["type"] == "policy"
    # the stored run went over 5 s: its budget check blocked; with 20 s it holds (the miss still blocks)
    assert out["scorecardDelta"]["latency"] == pytest.approx(0.55, abs=1e-6)  # 0 → 1 - 9/20
    assert out["qualityGate"]["passed"], out["qualityGate"]
    weakened = proposal(
        "guard_mode", "guard_violation", {"gate": "search", "guard": "scrub", "mode": "warn"}, "t", [], "r"
    )
    out = _sandbox(tmp_path / "w", weakened)
    policy = next(c for c in out["qualityGate"]["checks"] if c["name"] == "policy")
    assert not policy["passed"] and policy["problems"] == ["gate search: guard scrub would only warn"]


def _eval_case_proposal(tmp_path: Path) -> dict[str, Any]:
    """An eval-case proposal for s-parcel: it missed in one run and was found at rank 2 in the next."""
    config_path = make_project(tmp_path / "p", aliases="{}\n")
    case = next(c for c in load_project(config_path).cases if c.id == "s-parcel")
    failing = write(tmp_path / "f.json", artifact([search_case("s-parcel", rank=None)]))
    fixed = write(tmp_path / "c.json", artifact([search_case("s-parcel", rank=2)], run_id="run-2"))
    made = propose(load_artifact(failing), "s-parcel", case=case, corrected=load_artifact(fixed))
    return {
        **proposal("eval_case", "failed_then_succeeded", {"case_id": "s-parcel"}, "t", [], "r"),
        "proposal": made,
    }


def test_an_eval_case_must_pass_in_the_sandbox_before_it_can_gate(tmp_path: Path) -> None:
    item = _eval_case_proposal(tmp_path)
    out = _sandbox(tmp_path / "q", item)
    (new,) = out["regressionCheck"]["new_failing"]
    assert (new["case_id"], new["after"], new["reason"]) == (
        "reg-s-parcel",
        "failed",
        "expected_target_absent",
    )
    assert not out["qualityGate"]["passed"]
    evals = next(c for c in out["qualityGate"]["checks"] if c["name"] == "regression_evals")
    assert any("the proposed case reg-s-parcel failed" in p for p in evals["problems"])


def test_an_eval_case_without_a_regression_suite_is_a_note_not_a_crash(tmp_path: Path) -> None:
    item = _eval_case_proposal(tmp_path)
    root = tmp_path / "q"
    root.mkdir()
    config = make_project(root, aliases="{}\n")
    text = config.read_text().replace(
        "  regression_suite: regression\n", "  suggestions_file: .qlab/s.json\n"
    )
    config.write_text(text, encoding="utf-8")
    project = load_project(config)
    collection, _factory = collection_and_engines(project.config)
    stored = write(root / "last.json", artifact([search_case("s-parcel", rank=None)]))
    out = run_sandbox(
        item,
        history=History((load_artifact(stored),), tuple(project.cases)),
        base=base_subject(project.config, collection),
    )
    assert out["replayed"] == 0 and "learning.regression_suite" in out["note"]
    assert not out["qualityGate"]["passed"]


def test_a_proposal_that_carries_a_secret_fails_the_policy_check(tmp_path: Path) -> None:
    out = _sandbox(tmp_path, ALIAS, secrets=["my parcel"])
    policy = next(c for c in out["qualityGate"]["checks"] if c["name"] == "policy")
    assert not out["qualityGate"]["passed"] and policy["problems"] == ["the proposal carries secret #1"]


def test_a_note_has_nothing_to_replay(tmp_path: Path) -> None:
    note = {"id": "sg-000000000002", "kind": "selector_policy", "status": "pending_review", "evidence": []}
    out = _sandbox(tmp_path, note)
    assert out["replayed"] == 0 and not out["qualityGate"]["passed"] and "nothing to apply" in out["note"]


def _side(statuses: dict[str, str], verdict: str) -> dict[str, Any]:
    cases = [
        {"case_id": i, "suite": "s", "mode": "search", "status": s, "latency_ms": {}}
        for i, s in statuses.items()
    ]
    card = dict.fromkeys(("correctness",), sum(s == "passed" for s in statuses.values()) / len(statuses))
    return {"cases": cases, "scorecard": card, "decision": {"verdict": verdict}, "metrics": {}}


def test_compare_flags_a_regressed_case_and_a_worse_decision() -> None:
    a = _side({"s-1": "passed", "s-2": "failed"}, "pass")
    b = _side({"s-1": "failed", "s-2": "passed"}, "block")
    out = compare([("run-1", a, b)])
    assert not out["regressionCheck"]["passed"]
    assert [r["case_id"] for r in out["regressionCheck"]["regressed"]] == ["s-1"]
    assert out["regressionCheck"]["decisions_worse"] == [
        {"run_id": "run-1", "before": "pass", "after": "block"}
    ]
    assert out["improvementCheck"]["passed"] and out["improvementCheck"]["improved"][0]["case_id"] == "s-2"


def test_no_history_is_an_input_error(tmp_path: Path) -> None:
    from qlab.contracts.errors import InputError

    config = load_project(make_project(tmp_path)).config
    collection, _ = collection_and_engines(config)
    with pytest.raises(InputError, match="no historical run to replay"):
        run_sandbox(ALIAS, history=History((), ()), base=base_subject(config, collection))
    assert os.path.exists(tmp_path / "qlab.yaml")


def _replay(tmp_path: Path, item: dict[str, Any], data: dict[str, Any], **kw: Any) -> dict[str, Any]:
    config_path = honest_project(tmp_path, **kw)
    stored = write(tmp_path / "last.json", data)
    project = load_project(config_path)
    collection, _factory = collection_and_engines(project.config)
    return run_sandbox(
        item,
        history=History((load_artifact(stored),), tuple(project.cases)),
        base=base_subject(project.config, collection),
    )


def test_an_alias_that_breaks_a_case_the_stored_run_never_executed_is_a_regression(tmp_path: Path) -> None:
    """Rule: both sides replay the same stages. The execute case never ran in the stored run (blocked at search):
    as is, it passes search, select and plan; with the alias the selector takes cancelOrder. It used to be
    "not replayed" before and "failed" after, which counted as neither, and the quality gate passed."""
    out = _replay(tmp_path, STEALING_ALIAS, blocked_at_search("e-order"), plan_cases=False)
    check = out["regressionCheck"]
    assert not check["passed"], check
    (regressed,) = check["regressed"]
    assert (regressed["case_id"], regressed["after"]) == ("e-order", "failed")
    assert regressed["before"] == "passed through plan (execute not replayed)"
    assert not out["qualityGate"]["passed"]


def test_an_alias_is_replayed_on_the_cases_it_affects_that_no_stored_run_holds(tmp_path: Path) -> None:
    """Rule: every case a proposal can affect is replayed, those of suites the stored run did not select too: the
    run that missed ran only the search suite, and the plan and execute cases' queries hold the alias's words."""
    out = _replay(
        tmp_path, STEALING_ALIAS, artifact([search_case("s-miss", rank=None, top=["getOrder"], top_k=1)])
    )
    regressed = out["regressionCheck"]["regressed"]
    assert {(r["run_id"], r["case_id"]) for r in regressed} == {
        ("(cases no stored run holds)", "p-order"),
        ("(cases no stored run holds)", "e-order"),
    }
    assert not out["qualityGate"]["passed"]


def test_a_budget_proposal_shows_the_stored_runs_real_decision_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule: for a policy proposal, the before side is the stored run's real decision. The run went over its
    budget at the build gate and BLOCKED; it ran only the search suite, so re-judging its cases found nothing to
    block and the before side used to read "pass". With the limit raised, the gates the run never reached have
    no evidence: the after side is undecided, never a made-up pass."""
    from qlab.cli import main

    config_path = make_project(tmp_path, aliases="{}\n", extra="budget:\n  max_duration_sec: 0.000001\n")
    text = config_path.read_text().replace("gates:\n", "gates:\n  - name: build\n    stage: build\n")
    config_path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["run", "--config", str(config_path), "--suite", "search_core", "-q"])
    assert done.value.code == 1, capsys.readouterr()
    stored = tmp_path / ".qlab" / "out" / "result.json"
    assert json.loads(stored.read_text())["decision"]["verdict"] == "block"
    raise_it = proposal("budget", "budget_breach", {"budget": {"max_duration_sec": 60}}, "t", [], "r")
    project = load_project(config_path)
    collection, _factory = collection_and_engines(project.config)
    out = run_sandbox(
        raise_it,
        history=History((load_artifact(stored),), tuple(project.cases)),
        base=base_subject(project.config, collection),
    )
    ((before, after),) = [(d["before"], d["after"]) for d in out["decisions"]]
    assert (before, after) == ("block", "undecided")
    assert out["regressionCheck"]["passed"] and not out["improvementCheck"]["passed"]

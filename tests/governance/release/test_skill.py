"""A skill's five release gates: each one failing in turn keeps the skill draft; all passing publishes it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, plan_case, write
from governance.collections import StubEngine, demo_collection
from qlab.contracts.errors import UsageError
from qlab.governance.records import load_artifact
from qlab.governance.release.skill import ReleaseOutcome, approve, evaluate, load_record, record, skill_named
from qlab.project.model import Case, CollectionConfig, Config, LearningConfig, Origin, ReleaseSkill, Suite

TRIGGERS = [
    {"id": "t-detail", "query": "delivery detail of a member", "should_trigger": True},
    {"id": "t-list", "query": "list the deliveries of a member", "should_trigger": True},
    {"id": "t-delete", "query": "delete an order", "should_trigger": False},
    {"id": "t-locker", "query": "parcel lockers near an address", "should_trigger": False},
]
GOLDEN = [
    {"id": "g-normal", "query": "delivery detail of a member", "kind": "normal",
     "provided_entities": {"memberNo": "M-1"}, "expected_target": "getMemberDeliveryDetail",
     "expected_plan_tools": ["getMemberDeliveryDetail"]},
    {"id": "g-boundary", "query": "deliveries of a member", "kind": "boundary",
     "expected_target": "getMemberDeliveryList"},
    {"id": "g-error", "query": "delivery detail", "kind": "error", "expected_target": "getMemberDeliveryDetail"},
]  # fmt: skip


def _project(tmp_path: Path, *, triggers: list[dict[str, Any]] = TRIGGERS, golden: list[dict[str, Any]] = GOLDEN,
             **skill: Any) -> Config:  # fmt: skip
    (tmp_path / "release").mkdir(exist_ok=True)
    (tmp_path / "release" / "trigger-cases.json").write_text(json.dumps(triggers), encoding="utf-8")
    (tmp_path / "release" / "golden-cases.json").write_text(json.dumps(golden), encoding="utf-8")
    options: dict[str, Any] = {
        "trigger_cases": "release/trigger-cases.json",
        "golden_cases": "release/golden-cases.json",
        "permissions": ("deliveries",),
        "max_tool_calls": 2,
        "max_latency_ms": 500.0,
        "regression_suite": "regression",
        **skill,
    }
    return Config(
        version=1,
        project="demo",
        path=str(tmp_path / "qlab.yaml"),
        collection=CollectionConfig(sources=()),
        engine=None,  # type: ignore[arg-type]
        environments={},
        auth_profiles={},
        suites={
            "regression": Suite("regression", "plan", ("gates/regression/*.yaml",), category="regression")
        },
        gates=(),
        release={"member-delivery": ReleaseSkill("member-delivery", **options)},
        learning=LearningConfig(regression_suite="regression"),
    )


REGRESSION = [
    Case(id="reg-1", mode="plan", query="delivery detail of a member", suite="regression",
         file="gates/regression/reg-1.yaml", origin=Origin("gates/regression/reg-1.yaml", 1, 1)),
]  # fmt: skip


def _result(
    tmp_path: Path, *, status: str = "passed", latency: float = 20.0, name: str = "result.json"
) -> Path:
    case = plan_case("reg-1", suite="regression", correct=status == "passed")
    case["latency_ms"] = {"search": latency, "plan": latency}
    data = artifact([case], collection="sha256:demo")
    return write(tmp_path / name, data)


def _release(tmp_path: Path, config: Config, result: Path | None) -> ReleaseOutcome:
    skill = skill_named(config, "member-delivery")
    collection = demo_collection()
    approvals_file = tmp_path / ".qlab" / "approvals.json"
    approvals = json.loads(approvals_file.read_text())["approvals"] if approvals_file.exists() else []
    return evaluate(
        skill,
        config=config,
        collection=collection,
        engine=StubEngine(collection),  # type: ignore[arg-type]
        artifact=load_artifact(result) if result else None,
        suite_cases=REGRESSION,
        approvals=approvals,
    )


def _statuses(outcome: ReleaseOutcome) -> list[tuple[str, str]]:
    return [(g.name, g.status) for g in outcome.gates]


def test_all_five_gates_pass_and_the_skill_is_published(tmp_path: Path) -> None:
    config = _project(tmp_path)
    result = _result(tmp_path)
    approve(config, "member-delivery", load_artifact(result), by="alice", now="2026-12-01T12:00:00Z")
    outcome = _release(tmp_path, config, result)
    assert _statuses(outcome) == [
        ("trigger_eval", "passed"),
        ("functional_eval", "passed"),
        ("policy_eval", "passed"),
        ("regression_eval", "passed"),
        ("human_review", "passed"),
    ], outcome.to_dict()
    assert outcome.status == "published" and outcome.exit_code == 0
    trigger = outcome.gates[0]
    assert trigger.metrics["precision"] == 1.0 and trigger.metrics["recall"] == 1.0
    path = record(config, outcome)
    saved = load_record(path)["skills"]["member-delivery"]
    assert saved["status"] == "published"
    assert saved["published"]["digest"] == load_artifact(result).digest
    assert saved["history"][-1]["gates"][4]["details"]["reviewer"] == "alice"
    # the files follow their schemas
    from qlab.project.schemas import validate

    assert validate(load_record(path), "release-record") == []
    approvals = json.loads((tmp_path / ".qlab" / "approvals.json").read_text())
    assert validate(approvals, "release-record", definition="approvals_file") == []


def _expect_draft(outcome: ReleaseOutcome, gate: str, reason: str) -> None:
    assert outcome.status == "draft" and outcome.exit_code == 1
    assert outcome.failed_gate == gate
    names = [g.name for g in outcome.gates]
    failed_at = names.index(gate)
    assert all(g.status == "passed" for g in outcome.gates[:failed_at])
    assert all(g.status == "skipped" for g in outcome.gates[failed_at + 1 :])
    assert any(reason in r for r in outcome.gates[failed_at].reasons), outcome.gates[failed_at].reasons
    assert outcome.to_dict()["failed_gate"] == gate


def test_trigger_eval_fails_on_a_negative_that_fires(tmp_path: Path) -> None:
    triggers = [*TRIGGERS, {"id": "t-bad", "query": "member delivery list", "should_trigger": False}]
    outcome = _release(tmp_path, _project(tmp_path, triggers=triggers), _result(tmp_path))
    _expect_draft(outcome, "trigger_eval", "precision 0.667 < 0.9 (fired on t-bad)")


def test_trigger_eval_fails_on_a_positive_that_does_not_fire(tmp_path: Path) -> None:
    triggers = [*TRIGGERS, {"id": "t-miss", "query": "purchase history", "should_trigger": True}]
    outcome = _release(tmp_path, _project(tmp_path, triggers=triggers), _result(tmp_path))
    _expect_draft(outcome, "trigger_eval", "recall 0.667 < 0.9 (missed t-miss)")


def test_functional_eval_fails_on_a_wrong_target(tmp_path: Path) -> None:
    golden = copy.deepcopy(GOLDEN)
    golden[1]["expected_target"] = "getLockerList"
    outcome = _release(tmp_path, _project(tmp_path, golden=golden), _result(tmp_path))
    _expect_draft(
        outcome,
        "functional_eval",
        "g-boundary (boundary): selected 'getMemberDeliveryList', expected 'getLockerList'",
    )


def test_functional_eval_fails_when_an_error_input_yields_an_executable_plan(tmp_path: Path) -> None:
    golden = copy.deepcopy(GOLDEN)
    golden[2] = {
        "id": "g-error",
        "query": "delivery detail",
        "kind": "error",
        "provided_entities": {"memberNo": "M-1"},
    }
    outcome = _release(tmp_path, _project(tmp_path, golden=golden), _result(tmp_path))
    _expect_draft(
        outcome, "functional_eval", "an error input without expectations produced an executable plan"
    )
    # with an expected target, an error input is judged on it (the lookup that will answer 404)
    golden[2]["expected_target"] = "getMemberDeliveryDetail"
    outcome = _release(tmp_path, _project(tmp_path, golden=golden), _result(tmp_path))
    assert outcome.gates[1].status == "passed", outcome.gates[1].reasons


def test_functional_eval_needs_all_three_kinds(tmp_path: Path) -> None:
    outcome = _release(tmp_path, _project(tmp_path, golden=GOLDEN[:2]), _result(tmp_path))
    _expect_draft(outcome, "functional_eval", "golden cases lack error inputs")


def test_policy_eval_fails_on_tool_calls_and_latency_budget(tmp_path: Path) -> None:
    outcome = _release(tmp_path, _project(tmp_path, max_tool_calls=0), _result(tmp_path))
    _expect_draft(outcome, "policy_eval", "g-normal: 1 tool calls > max_tool_calls 0")
    slow = _release(tmp_path, _project(tmp_path), _result(tmp_path, latency=400.0))
    _expect_draft(slow, "policy_eval", "p95 case latency 800.0 ms > max_latency_ms 500.0")


def test_policy_eval_fails_on_a_tool_outside_the_permissions(tmp_path: Path) -> None:
    golden = [*GOLDEN, {"id": "g-orders", "query": "list orders", "kind": "normal"}]
    outcome = _release(tmp_path, _project(tmp_path, golden=golden), _result(tmp_path))
    _expect_draft(
        outcome, "policy_eval", "g-orders: plan uses getOrderList, outside the permissions ['deliveries']"
    )


def test_regression_eval_fails_when_a_regression_case_failed_or_did_not_run(tmp_path: Path) -> None:
    config = _project(tmp_path)
    outcome = _release(tmp_path, config, _result(tmp_path, status="failed"))
    _expect_draft(outcome, "regression_eval", "reg-1: failed at select/wrong_target_selected")
    # a run of another suite only: the regression suite was not run at all
    other = write(tmp_path / "other.json", artifact([plan_case("p-1")], collection="sha256:demo"))
    _expect_draft(_release(tmp_path, config, other), "regression_eval", "reg-1 did not run in the result")


def test_a_draft_regression_case_is_listed_not_required(tmp_path: Path) -> None:
    from dataclasses import replace

    from qlab.governance.release.policy import regression_eval

    config = _project(tmp_path)
    drafts = [replace(REGRESSION[0], status="draft"), replace(REGRESSION[0], id="reg-2")]
    passing = write(
        tmp_path / "two.json", artifact([plan_case("reg-2", suite="regression")], collection="sha256:demo")
    )
    skill = skill_named(config, "member-delivery")
    gate = regression_eval(skill, config=config, suite_cases=drafts, collection=demo_collection(),
                           artifact=load_artifact(passing))  # fmt: skip
    assert gate.status == "passed" and gate.details["draft_cases"] == ["reg-1"]  # reg-1 did not even run


def test_regression_eval_fails_on_a_result_of_another_collection(tmp_path: Path) -> None:
    data = json.loads(_result(tmp_path).read_text())
    data["fingerprint"]["collection_digest"] = "sha256:older-collection"
    outcome = _release(tmp_path, _project(tmp_path), write(tmp_path / "old.json", data))
    _expect_draft(outcome, "regression_eval", "the result is of another collection")


def test_human_review_refuses_an_approval_bound_to_an_old_digest(tmp_path: Path) -> None:
    config = _project(tmp_path)
    old = _result(tmp_path, name="old.json")
    approve(config, "member-delivery", load_artifact(old), by="alice", now="2026-12-01T12:00:00Z")
    # a new run: other bytes, another digest
    new = _result(tmp_path, latency=21.0, name="new.json")
    assert load_artifact(new).digest != load_artifact(old).digest
    outcome = _release(tmp_path, config, new)
    _expect_draft(outcome, "human_review", "reviews of other results do not count")
    assert load_artifact(new).digest in outcome.gates[4].reasons[0]


def test_human_review_fails_when_the_latest_review_rejects(tmp_path: Path) -> None:
    config = _project(tmp_path)
    result = _result(tmp_path)
    approve(config, "member-delivery", load_artifact(result), by="alice", now="2026-12-01T12:00:00Z")
    approve(config, "member-delivery", load_artifact(result), by="bob", decision="rejected",
            note="risky", now="2026-12-01T13:00:00Z")  # fmt: skip
    _expect_draft(_release(tmp_path, config, result), "human_review", "bob rejected this result: risky")


def test_unknown_skill_and_empty_reviewer_are_usage_errors(tmp_path: Path) -> None:
    config = _project(tmp_path)
    with pytest.raises(UsageError, match="Did you mean 'member-delivery'"):
        skill_named(config, "member-delivry")
    with pytest.raises(UsageError, match="reviewer"):
        approve(config, "member-delivery", load_artifact(_result(tmp_path)), by="  ")


def test_trigger_phrases_declared_by_the_skill_fire_it(tmp_path: Path) -> None:
    """The trigger eval had no way to declare trigger phrases (skill.yaml's triggers.phrases): a positive the
    search does not tie to a permitted tool now fires on a declared phrase, in any inflection."""
    triggers = [*TRIGGERS, {"id": "t-history", "query": "purchase histories of M-1", "should_trigger": True}]
    config = _project(tmp_path, triggers=triggers, trigger_phrases=("purchase history",))
    trigger = _release(tmp_path, config, _result(tmp_path)).gates[0]
    assert trigger.status == "passed", trigger.reasons
    row = next(r for r in trigger.details["cases"] if r["id"] == "t-history")
    assert row["fired"] and row["by"] == ["phrase: purchase history"]


def test_trigger_step_types_keep_the_skill_to_the_steps_it_takes(tmp_path: Path) -> None:
    """triggers.step_types: a read-only skill with permission on orders does not fire on a delete."""
    import dataclasses

    from qlab.collection.model import MutationClass
    from qlab.governance.release.stages import fires

    collection = demo_collection()
    tools = tuple(
        dataclasses.replace(t, mutation=MutationClass.DESTRUCTIVE) if t.id == "deleteOrder" else t
        for t in collection.tools
    )
    collection = dataclasses.replace(collection, tools=tools)
    engine = StubEngine(collection)
    skill = ReleaseSkill("orders", permissions=("orders",))
    assert fires("delete an order", skill=skill, collection=collection, engine=engine)[0]  # type: ignore[arg-type]
    reads = dataclasses.replace(skill, step_types=("read",))
    fired, by = fires("delete an order", skill=reads, collection=collection, engine=engine)  # type: ignore[arg-type]
    assert not fired and by == []
    assert fires("list orders", skill=reads, collection=collection, engine=engine)[0]  # type: ignore[arg-type]

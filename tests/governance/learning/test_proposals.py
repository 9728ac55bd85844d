"""Regression prevention: a real failure becomes a proposal; accept-case moves it into the regression suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, make_project, search_case, write
from qlab.contracts.errors import ConfigError, InputError, UsageError
from qlab.governance.learning.accept import accept_case, load_proposal
from qlab.governance.learning.proposals import propose
from qlab.governance.records import load_artifact, write_json
from qlab.project import load_project
from qlab.project.schemas import validate
from qlab.project.yamlio import parse_yaml


def _failing(tmp_path: Path) -> Path:
    case = search_case("s-parcel", rank=None, top=["getMemberDeliveryList", "getLockerList"])
    case["file"] = "gates/search_core/cases.yaml"
    return write(tmp_path / "failing.json", artifact([case], collection="sha256:before"))


def _fixed(tmp_path: Path) -> Path:
    case = search_case("s-parcel", rank=1, top=["trackDelivery"])
    return write(tmp_path / "fixed.json", artifact([case], run_id="run-2", collection="sha256:after"))


def _propose(tmp_path: Path, config: Path, *, corrected: bool) -> dict[str, Any]:
    project = load_project(config)
    case = next(c for c in project.cases if c.id == "s-parcel")
    return propose(
        load_artifact(_failing(tmp_path)),
        "s-parcel",
        case=case,
        corrected=load_artifact(_fixed(tmp_path)) if corrected else None,
        now="2026-12-01T10:00:00Z",
    )


def test_a_failure_becomes_a_pending_proposal_with_input_expected_and_trace_evidence(tmp_path: Path) -> None:
    proposal = _propose(tmp_path, make_project(tmp_path), corrected=False)
    assert proposal["status"] == "pending_review"
    assert proposal["input"] == {
        "mode": "search",
        "query": "where is my parcel",
        "provided_entities": {"deliveryId": "D-5003"},
    }
    assert proposal["expected"] == {"expected_target": "trackDelivery"}
    failing = proposal["traceEvidence"]["failing"]
    assert failing["search"]["hit"] is False and failing["failure"]["reason"] == "expected_target_absent"
    assert proposal["tags"] == ["regression", "from_failure", "search", "expected_target_absent"]
    assert proposal["case"]["id"] == "reg-s-parcel"
    assert proposal["case"]["tags"] == ["regression", "tracking", "search", "expected_target_absent"]
    assert "key_difference" not in proposal
    assert validate(proposal, "proposal") == []


def test_a_corrected_run_records_the_key_difference(tmp_path: Path) -> None:
    proposal = _propose(tmp_path, make_project(tmp_path), corrected=True)
    diff = proposal["key_difference"]
    assert diff["stage"] == "search"
    assert {"path": "search.hit", "failing": False, "corrected": True} in diff["changes"]
    assert {"path": "search.hit_rank", "failing": None, "corrected": 1} in diff["changes"]
    assert diff["fingerprint"] == [
        {"field": "collection_digest", "failing": "sha256:before", "corrected": "sha256:after"}
    ]
    assert "the runs differ in collection_digest" in diff["summary"]
    assert proposal["expected"]["observed_success"] == {"hit_rank": 1}
    assert proposal["traceEvidence"]["corrected"]["search"]["hit"] is True
    assert validate(proposal, "proposal") == []


def test_a_passing_case_or_an_unfixed_correction_is_refused(tmp_path: Path) -> None:
    config = make_project(tmp_path)
    case = load_project(config).cases[0]
    passing = load_artifact(_fixed(tmp_path))
    with pytest.raises(InputError, match="passed; only a real failure"):
        propose(passing, "s-parcel", case=case)
    failing = load_artifact(_failing(tmp_path))
    with pytest.raises(InputError, match="is failed in the corrected run"):
        propose(failing, "s-parcel", case=case, corrected=failing)
    with pytest.raises(InputError, match=r"no case 's-parcl'.*Did you mean 's-parcel'"):
        propose(failing, "s-parcl", case=case)


def test_accept_case_moves_the_proposal_into_the_required_regression_suite(tmp_path: Path) -> None:
    config = make_project(tmp_path)
    path = tmp_path / "gates" / "proposals" / "p.json"
    write_json(path, _propose(tmp_path, config, corrected=True))
    accepted = accept_case(path, config_path=config, by="alice", now="2026-12-02T09:00:00Z")

    assert accepted.case_id == "reg-s-parcel" and accepted.suite == "regression"
    assert accepted.file == tmp_path / "gates" / "regression" / "reg-s-parcel.yaml"
    text = accepted.file.read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("# accepted by alice at 2026-12-02T09:00:00Z from proposal prop-")
    assert parse_yaml(text, "x.yaml").data["expected_target"] == "trackDelivery"
    # from now on the suite runs it: the project has the case in its regression suite, as a plan case
    project = load_project(config)
    joined = project.cases_for("regression")
    assert [c.id for c in joined] == ["reg-s-parcel", "r-health"] and joined[0].mode == "plan"
    assert "must now also plan" in accepted.note
    saved = json.loads(path.read_text())
    assert (saved["status"], saved["accepted_by"], saved["case_id"]) == ("accepted", "alice", "reg-s-parcel")
    with pytest.raises(UsageError, match="already accepted"):
        accept_case(path, config_path=config, by="bob")


def test_accept_case_refuses_a_regression_suite_that_is_not_required(tmp_path: Path) -> None:
    config = make_project(tmp_path, required=False)
    path = write_json_path(tmp_path, _propose(tmp_path, config, corrected=False))
    with pytest.raises(InputError, match="the regression suite must be required"):
        accept_case(path, config_path=config, by="alice")
    assert [p.name for p in (tmp_path / "gates" / "regression").iterdir()] == ["seed.yaml"]


def test_accept_case_rejects_an_invalid_proposal_with_its_location(tmp_path: Path) -> None:
    config = make_project(tmp_path)
    proposal = _propose(tmp_path, config, corrected=False)
    proposal["status"] = "maybe"
    path = write_json_path(tmp_path, proposal)
    with pytest.raises(ConfigError) as info:
        load_proposal(path)
    assert "$.status" in str(info.value) and ":4:" in str(info.value)


def write_json_path(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "proposal.json"
    write_json(path, data)
    return path


def test_accept_case_refuses_a_regression_suite_that_no_gate_runs(tmp_path: Path) -> None:
    config = make_project(tmp_path, gated=False)
    path = write_json_path(tmp_path, _propose(tmp_path, config, corrected=False))
    with pytest.raises(InputError, match="regression suite 'regression' is in no gate"):
        accept_case(path, config_path=config, by="alice")


def test_a_case_below_its_claims_minimum_can_be_proposed_though_the_check_only_warned(tmp_path: Path) -> None:
    """A case whose check only warned passed, but below its own minimum: that shortfall is a real failure, and a
    regression case can be made from it (propose-case used to refuse every passed case)."""
    claims = {"claims": 2, "cited": 1, "citation_coverage": 0.5, "min_citation_coverage": 1.0}
    below = {"case_id": "e-1", "suite": "execute_read", "mode": "execute", "status": "passed", "latency_ms": {}, "query": "explain D-5001",
             "execute": {"http_status": 200, "claims": claims}, "file": "gates/x.yaml", "line": 1}  # fmt: skip
    made = propose(load_artifact(write(tmp_path / "r.json", artifact([below]))), "e-1", case=None)
    assert made["tags"][-1] == "citation_coverage_below" and "0.5 < 1" in made["description"]
    fine = {
        **below,
        "case_id": "e-2",
        "execute": {"http_status": 200, "claims": {**claims, "citation_coverage": 1.0}},
    }
    with pytest.raises(InputError, match="passed; only a real failure"):
        propose(load_artifact(write(tmp_path / "f.json", artifact([fine]))), "e-2", case=None)


def test_the_trace_evidence_holds_the_guard_results_of_the_stages_the_case_went_through(
    tmp_path: Path,
) -> None:
    """traceEvidence.guardResults (the specification's trace evidence: stepRuns, evidenceItems, guardResults) was
    missing: the failing run's in-run checks at the stages the case reached now come with it."""
    guards = [
        {"guard": "output_schema", "stage": "search", "gate": "search", "passed": True, "mode": "block", "message": "1 object(s)"},
        {"guard": "budget", "stage": "search", "gate": "search", "passed": False, "mode": "warn", "message": "over"},
        {"guard": "scrub", "stage": "execute", "gate": "execute", "passed": True, "mode": "block", "message": "ok"},
    ]  # fmt: skip
    case = search_case("s-parcel", rank=None, query="where is my parcel", expected_target="trackDelivery")
    made = propose(load_artifact(write(tmp_path / "r.json", artifact([case], guards=guards))), "s-parcel", case=None,
                   description="d")  # fmt: skip
    assert [(g["guard"], g["passed"]) for g in made["traceEvidence"]["guardResults"]] == [
        ("output_schema", True),
        ("budget", False),
    ]
    assert validate(made, "proposal") == []

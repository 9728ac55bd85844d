"""The build stage: metrics, the schema_coverage_below stop condition naming the tools, details, errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collection.helpers import (
    DEMO_SPEC,
    FIXTURES,
    build_gate,
    config,
    get_op,
    openapi,
    spec,
    swagger,
    write_json,
)  # tests/ is on sys.path
from qlab.contracts.errors import SpecError
from qlab.project.model import AuthProfile, Gate, StopCondition
from qlab.stages.build import run_build

BEARER = {"b": AuthProfile(name="b", type="bearer", token_env="T")}


def test_metrics_and_details(tmp_path: Path) -> None:
    cfg = config(tmp_path, [openapi("demo", DEMO_SPEC)], auth="b", profiles=BEARER)
    collection, report = run_build(cfg, build_gate(0.8))
    assert collection is not None and len(collection.tools) == 15
    assert report.stage == "build" and report.stops == []
    assert report.metrics == {"schema_coverage": 0.9333, "contract_coverage": 1.0, "tools": 15.0}
    assert report.details["readiness"]["verdict"] == "ready"
    assert report.details["collection"]["digest"] == collection.digest
    assert report.details["collection"]["cached"] is False and report.duration_ms > 0
    again_collection, again = run_build(cfg, build_gate(0.8))
    assert again.details["collection"]["cached"] is True and again_collection == collection


def test_low_coverage_stops_and_names_the_tools(shared_data: Path, tmp_path: Path) -> None:
    spec = shared_data / "openapi-specs" / "kubernetes" / "swagger.json"
    collection, report = run_build(config(tmp_path, [swagger("k8s", spec)]), build_gate(0.8))
    assert collection is not None  # built: its digest still goes into the fingerprint
    (stop,) = report.stops
    assert stop.condition == "schema_coverage_below"
    worst = report.details["readiness"]["worst"]
    assert stop.message.startswith(f"schema coverage {report.metrics['schema_coverage']:g} is below 0.8 (")
    assert f"lowest: {worst[0]['tool']} {worst[0]['score']:.2f} (" in stop.message
    assert "and 5 more in details.readiness.worst" in stop.message


def test_the_gate_compares_the_coverage_it_records(tmp_path: Path) -> None:
    """Six operations fully described and one with a summary only: coverage 6.85 / 7 = 0.97857…, recorded as
    0.9786. A gate written at the recorded figure holds (it compared the unrounded mean before: "schema coverage
    0.98 is below 0.98"), and one a step above stops, printing both figures as written."""
    described = {"summary": "List the things", "description": "Every thing there is, newest first."}
    paths = {f"/t{i}": {"get": get_op(f"list{i}", {"type": "array"}, **described)} for i in range(6)}
    paths["/t6"] = {"get": get_op("list6", {"type": "array"}, summary="List the last things")}
    cfg = config(tmp_path, [openapi("api", write_json(tmp_path / "spec.json", spec(paths)))])
    _, report = run_build(cfg, build_gate(0.9786))
    assert report.metrics["schema_coverage"] == 0.9786 and report.stops == []
    assert report.details["readiness"]["verdict"] == "ready"
    (stop,) = run_build(cfg, build_gate(0.9787))[1].stops
    assert stop.message.startswith("schema coverage 0.9786 is below 0.9787 (1 of 7 tools under it)")


def test_without_a_gate_or_a_stop_condition_nothing_stops(tmp_path: Path) -> None:
    cfg = config(tmp_path, [openapi("demo", DEMO_SPEC)])
    assert run_build(cfg, None)[1].stops == []
    other = Gate(name="build", stage="build", stop_if=(StopCondition("any_failure"),))
    assert run_build(cfg, other)[1].stops == []


def test_contract_coverage_is_none_without_reference_inputs(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text('{"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}')
    from qlab.project.model import Source

    _collection, report = run_build(config(tmp_path, [Source("m", "mcp", "tools.json")]), None)
    assert report.metrics["contract_coverage"] is None and report.metrics["tools"] == 1.0


def test_broken_source_raises_spec_error(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "broken" / "no-paths.yaml", tmp_path / "api.yaml")
    with pytest.raises(SpecError) as caught:
        run_build(config(tmp_path, [openapi("api", "api.yaml")]), build_gate(0.8))
    assert (
        str(caught.value)
        == f"{tmp_path / 'api.yaml'}:1:1: $: the spec has no `paths`: there are no operations to build tools from"
    )

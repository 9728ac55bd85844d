"""The readiness report: coverage, worst tools, unsatisfied inputs, contract coverage, collisions, verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.collection.builder import build_collection
from qlab.collection.model import Collection, IOContract, Parameter
from qlab.collection.readiness import compute_readiness
from qlab.project.model import AuthProfile

from .helpers import DEMO_SPEC, build_gate, config, openapi, swagger, tool

BEARER = {"demo_bearer": AuthProfile(name="demo_bearer", type="bearer", token_env="T")}


def test_demo_is_ready_with_its_auth_profile(tmp_path: Path) -> None:
    cfg = config(tmp_path, [openapi("demo", DEMO_SPEC)], auth="demo_bearer", profiles=BEARER)
    readiness = build_collection(cfg, use_cache=False).readiness
    assert (readiness.verdict, readiness.reasons) == ("ready", ())
    assert readiness.schema_coverage == pytest.approx(0.9333, abs=1e-4)
    assert readiness.contract_coverage == 1.0
    assert readiness.counts["reference_inputs"] == 11 and readiness.counts["contracts"] == 33
    assert [(u.tool, u.parameter, u.kind) for u in readiness.unsatisfied] == [
        ("rescheduleDelivery", "date", "value"),
        ("createOrder", "items", "value"),
    ]
    assert readiness.auth["status"] == "ok"
    json.dumps(readiness.to_dict())  # JSON-ready


def test_demo_without_profile_is_not_ready(tmp_path: Path) -> None:
    readiness = build_collection(config(tmp_path, [openapi("demo", DEMO_SPEC)]), use_cache=False).readiness
    assert (readiness.verdict, readiness.reasons) == ("not_ready", ("auth_profile_missing",))


def test_kubernetes_readiness(shared_data: Path, tmp_path: Path) -> None:
    spec = shared_data / "openapi-specs" / "kubernetes" / "swagger.json"
    profiles = {"k": AuthProfile(name="k", type="bearer", token_env="K")}
    readiness = build_collection(config(tmp_path, [swagger("k8s", spec)], auth="k", profiles=profiles),
                                 use_cache=False).readiness  # fmt: skip
    assert readiness.counts["tools"] == 1123
    # no operation has a summary: every tool misses 0.2, so coverage is under the 0.8 default threshold
    assert all(t.checks["summary"] == 0.0 for t in readiness.tools)
    assert readiness.schema_coverage < 0.8 and "schema_coverage_below" in readiness.reasons
    assert len(readiness.worst) == 10 and readiness.worst[0].score <= readiness.worst[-1].score
    assert readiness.contract_coverage is not None and readiness.contract_coverage > 0.9


def test_contract_coverage_counts_reference_inputs_only(tmp_path: Path) -> None:
    consumer = tool("getItem", params=[
        Parameter("itemId", "path", True, {"type": "string"}),
        Parameter("ownerId", "query", True, {"type": "string"}),
        Parameter("date", "query", True, {"type": "string"}),
        Parameter("page", "query", False, {"type": "integer"}),
    ])  # fmt: skip
    producer = tool(
        "listItems", summary="List", description="List items", responses={"200": {"type": "object"}}
    )
    contracts = (IOContract("listItems", "$.items[*].itemId", "getItem", "itemId", "name"),)
    readiness = compute_readiness(
        Collection(tools=(consumer, producer), contracts=contracts), config(tmp_path, [])
    )
    assert readiness.contract_coverage == 0.5  # itemId has a producer, ownerId has none, date is a value
    assert [(u.parameter, u.kind, u.status) for u in readiness.unsatisfied] == [
        ("ownerId", "reference", "needs_entity"),
        ("date", "value", "needs_entity"),
    ]
    assert "contract_coverage_low" not in readiness.reasons


def test_no_reference_inputs_means_no_contract_coverage(tmp_path: Path) -> None:
    readiness = compute_readiness(Collection(tools=(tool("a"),)), config(tmp_path, []))
    assert readiness.contract_coverage is None


def test_no_tools_is_not_ready(tmp_path: Path) -> None:
    readiness = compute_readiness(Collection(tools=()), config(tmp_path, []))
    assert (
        readiness.verdict == "not_ready"
        and "no_tools" in readiness.reasons
        and readiness.schema_coverage == 0.0
    )


def test_threshold_comes_from_the_build_gate(tmp_path: Path) -> None:
    cfg = config(
        tmp_path, [openapi("demo", DEMO_SPEC)], auth="demo_bearer", profiles=BEARER, gates=[build_gate(0.95)]
    )
    readiness = build_collection(cfg, use_cache=False).readiness
    assert readiness.threshold == 0.95
    assert (readiness.verdict, readiness.reasons) == ("needs_work", ("schema_coverage_below",))

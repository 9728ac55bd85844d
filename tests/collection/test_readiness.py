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


# ----------------------------------------------------------------------------------- the verdict at its edges

from qlab.collection import readiness as r  # noqa: E402


@pytest.mark.parametrize(
    ("coverage", "verdict", "reasons"),
    [
        (0.4999, "not_ready", ("schema_coverage_low", "schema_coverage_below")),
        (0.5, "needs_work", ("schema_coverage_below",)),  # NOT_READY_BELOW is exclusive
        (0.7999, "needs_work", ("schema_coverage_below",)),
        (0.8, "ready", ()),  # the threshold itself is met
        (1.0, "ready", ()),
    ],
)
def test_schema_coverage_boundaries(coverage: float, verdict: str, reasons: tuple[str, ...]) -> None:
    """Rule: coverage strictly below 0.5 is not ready; strictly below the threshold needs work; equal is fine."""
    assert r._verdict(coverage, None, 0.8, {"status": "ok"}, (), 3) == (verdict, reasons)


@pytest.mark.parametrize(
    ("contracts", "reasons"),
    [(None, ()), (0.0, ("contract_coverage_low",)), (0.4999, ("contract_coverage_low",)), (0.5, ())],
)
def test_contract_coverage_boundary(contracts: float | None, reasons: tuple[str, ...]) -> None:
    """Rule: contract coverage strictly below 0.5 needs work; no reference input at all (None) says nothing."""
    verdict = "needs_work" if reasons else "ready"
    assert r._verdict(1.0, contracts, 0.8, {"status": "ok"}, (), 3) == (verdict, reasons)


def test_every_reason_is_listed_blocking_first() -> None:
    auth = {"status": "auth_profile_missing", "mismatches": [{"scheme": "x"}]}
    collisions = ({"kind": "between_sources"},)
    assert r._verdict(0.1, 0.1, 0.8, auth, collisions, 0) == (
        "not_ready",
        ("no_tools", "auth_profile_missing", "schema_coverage_low", "schema_coverage_below",
         "contract_coverage_low", "name_collisions", "auth_profile_mismatch"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "reasons"),
    [("between_sources", ("name_collisions",)), ("within_source", ("name_collisions",)), ("renamed", ())],
)
def test_collisions_that_need_work(kind: str, reasons: tuple[str, ...]) -> None:
    assert r._verdict(1.0, None, 0.8, {}, ({"kind": kind},), 1)[1] == reasons


def test_an_auth_mismatch_needs_work_and_a_missing_profile_is_not_ready() -> None:
    assert r._verdict(1.0, None, 0.8, {"status": "ok", "mismatches": [{"s": 1}]}, (), 1) == (
        "needs_work", ("auth_profile_mismatch",)
    )  # fmt: skip
    assert r._verdict(1.0, None, 0.8, {"status": "ok", "mismatches": []}, (), 1) == ("ready", ())
    assert r._verdict(1.0, None, 0.8, {"status": "auth_profile_missing"}, (), 1) == (
        "not_ready", ("auth_profile_missing",)
    )  # fmt: skip


def test_the_report_in_numbers(tmp_path: Path) -> None:
    """Coverage is the mean over tools; the worst are those under 1.0, lowest first (ties by id), at most 10;
    counts, unsatisfied inputs and the JSON form say the same."""
    full = dict(summary="S", description="a longer description", responses={"200": {"type": "object"}})
    tools = [tool(f"t{i:02d}") for i in range(12)] + [tool("perfect", **full)]
    coverage = [r.tool_coverage(t) for t in tools]
    param = Parameter("orderId", "path", True, {"type": "string"})
    tools.append(tool("needs", params=[param, Parameter("q", "query", True, {"type": "string"})], **full))
    collection = Collection(
        tools=tuple(tools),
        contracts=(IOContract("t00", "$.id", "needs", "orderId", "name"),),
        sources=({"name": "a", "collisions": [{"kind": "within_source", "id": "t01"}]}, {"name": "b"}),
    )
    readiness = compute_readiness(collection, config(tmp_path, []), threshold=0.7, warnings=["w"])
    scores = [r.tool_coverage(t).score for t in tools]
    assert readiness.schema_coverage == round(sum(scores) / len(scores), r.PLACES)  # the recorded figure
    assert [w.tool for w in readiness.worst] == sorted(
        (c.tool for c in coverage if c.score < 1.0),
        key=lambda i: (r.tool_coverage(next(t for t in tools if t.id == i)).score, i),
    )[:10]
    assert len(readiness.worst) == 10 and "perfect" not in [w.tool for w in readiness.worst]
    assert readiness.counts == {
        "tools": 14, "sources": 2, "contracts": 1, "required_inputs": 2, "reference_inputs": 1,
        "reference_inputs_with_producer": 1, "needs_entity": 1,
    }  # fmt: skip
    assert readiness.contract_coverage == 1.0
    assert readiness.collisions == ({"kind": "within_source", "id": "t01"},)
    assert "name_collisions" in readiness.reasons
    data = readiness.to_dict()
    assert data["verdict"] == readiness.verdict and data["reasons"] == list(readiness.reasons)
    assert data["schema_coverage"] == round(readiness.schema_coverage, 4)
    assert data["contract_coverage"] == 1.0 and data["threshold"] == 0.7 and data["warnings"] == ["w"]
    assert data["weights"] == dict(r.WEIGHTS) and data["counts"] == readiness.counts
    assert data["collisions"] == [{"kind": "within_source", "id": "t01"}]
    assert data["unsatisfied"] == [
        {"tool": "needs", "parameter": "q", "location": "query", "kind": "value", "status": "needs_entity"}
    ]
    assert data["worst"] == [w.to_dict() for w in readiness.worst]
    assert data["tools"] == [t.to_dict() for t in readiness.tools] and data["auth"] == readiness.auth
    assert (
        compute_readiness(Collection(tools=(tool("a"),)), config(tmp_path, [])).to_dict()["contract_coverage"]
        is None
    )


def test_a_fully_described_tool_is_never_among_the_worst_and_low_contract_coverage_needs_work(
    tmp_path: Path,
) -> None:
    """Rules: ``worst`` lists only tools under full coverage (with room to spare, a perfect tool is not listed);
    contract coverage under 0.5 makes the collection need work, and the report rounds it to 4 places."""
    full = dict(summary="S", description="a longer description", responses={"200": {"type": "object"}})
    refs = [Parameter(name, "path", True, {"type": "string"}) for name in ("aId", "bId", "cId")]
    consumer = tool("needs", params=refs, **full)
    collection = Collection(
        tools=(consumer, tool("perfect", **full), tool("thin")),
        contracts=(IOContract("perfect", "$.id", "needs", "aId", "name"),),
    )
    readiness = compute_readiness(collection, config(tmp_path, []), threshold=0.1)
    assert [w.tool for w in readiness.worst] == ["thin", "needs"]  # lowest first; "perfect" scores 1.0
    assert readiness.to_dict()["contract_coverage"] == 0.3333
    assert (readiness.verdict, readiness.reasons) == ("needs_work", ("contract_coverage_low",))

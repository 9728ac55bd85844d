"""Limits of ``qlab`` as a subprocess, memory measured with ``wait4`` (the child's own peak RSS), never time:

- a 10,000-case suite (search, and execute against a local server) and a 1,000-operation collection run in
  bounded memory (< 500 MiB: a generous bound, the point is "bounded", not fast);
- a 50 MB case file is refused before it is read, with a message naming it (exit 2);
- a spec with ``$ref`` cycles, and one with 100-level nesting, are handled (built, searched, executed and their
  response schemas checked): no RecursionError, no exit 3.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from qlab.project.scaffold import demo_files
from reliability.project import Op, qlab, reasons, result_cases, spec, write_project
from reliability.servers_faults import FaultServer

MEMORY_BOUND_MIB = 500
DEMO_SPEC = demo_files()["openapi.yaml"]


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def _demo_search_cases() -> list[dict[str, Any]]:
    """The demo project's search cases (real queries over the demo spec)."""
    cases: list[dict[str, Any]] = []
    for name, content in demo_files().items():
        if name.startswith("gates/search_core/"):
            cases += yaml.safe_load(content)
    return [{"id": c["id"], "query": c["query"], "expected_target": c["expected_target"]} for c in cases]


def _search_project(
    root: Path, *, spec_text: bytes, cases: list[dict[str, Any]], per_file: int = 1000
) -> Path:
    root.mkdir(parents=True)
    (root / "openapi.yaml").write_bytes(spec_text)
    (root / "cases").mkdir()
    for start in range(0, len(cases), per_file):
        chunk = cases[start : start + per_file]
        (root / "cases" / f"part-{start // per_file:03d}.jsonl").write_text(
            "".join(json.dumps(c) + "\n" for c in chunk), encoding="utf-8"
        )
    config = {
        "version": 1,
        "project": "limits",
        "collection": {"sources": [{"name": "api", "openapi": "openapi.yaml"}]},
        "suites": {"search_all": {"mode": "search", "cases": ["cases/*.jsonl"], "k": 5}},
        "gates": [
            {"name": "build", "stage": "build"},
            {"name": "search", "stage": "search", "suites": ["search_all"]},
            {"name": "learn", "stage": "learn", "stop_if": ["scrub_failed"]},
        ],
        "output": {"dir": "out"},
    }
    path = root / "qlab.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- volume


@pytest.mark.slow
def test_a_10000_case_search_suite_runs_in_bounded_memory(tmp_path: Path) -> None:
    seeds = _demo_search_cases()
    cases = [{**seeds[i % len(seeds)], "id": f"case-{i:05d}"} for i in range(10_000)]
    config = _search_project(tmp_path / "p", spec_text=DEMO_SPEC, cases=cases)
    done = qlab("run", "--config", str(config), "--quiet", cwd=config.parent)
    assert done.code in (0, 1), done.console
    assert "internal error" not in done.console
    assert len(result_cases(config.parent / "out" / "result.json")) == 10_000
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(
        json.dumps(
            {
                "limit": "10k search cases",
                "peak_rss_mib": round(done.peak_rss_mib),
                "sec": round(done.seconds, 1),
            }
        )
    )


@pytest.mark.slow
def test_a_10000_case_execute_suite_runs_in_bounded_memory(tmp_path: Path, faults: FaultServer) -> None:
    ops = [Op("checkHealth", "GET", "/ok", "Check that the service is healthy")]
    case = {"query": "Check that the service is healthy", "expected_target": "checkHealth",
            "assertions": [{"type": "http_status", "in": [200]}, {"type": "json_path_equals", "path": "$.data.ok", "equals": True}]}  # fmt: skip
    config = write_project(
        tmp_path / "p",
        ops=ops,
        suites={"smoke": {"mode": "execute", "environment": "dev"}},
        # fresh copies: PyYAML would write one shared list as an anchor and 9,999 aliases, which qlab refuses as
        # an alias bomb (over 10,000 aliased values)
        cases={"smoke": [{**json.loads(json.dumps(case)), "id": f"exec-{i:05d}"} for i in range(10_000)]},
        environments={"dev": {"base_url": faults.url}},
    )
    done = qlab("run", "--config", str(config), "--quiet", cwd=config.parent)
    assert done.code == 0, done.console
    statuses = {status for status, _reason in reasons(config.parent / "out" / "result.json").values()}
    assert statuses == {"passed"}
    assert len(faults.hits("/ok")) >= 10_000
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(
        json.dumps(
            {
                "limit": "10k execute cases",
                "peak_rss_mib": round(done.peak_rss_mib),
                "sec": round(done.seconds, 1),
            }
        )
    )


WORDS = ["member", "delivery", "order", "parcel", "carrier", "invoice", "account", "profile", "address", "payment", "refund", "shipment", "tracking", "label", "warehouse", "stock", "product", "price", "discount", "voucher", "subscription", "schedule", "route", "driver", "vehicle", "region", "store", "customer", "contact", "ticket", "claim", "insurance", "report", "export", "batch", "history"]  # fmt: skip


@pytest.mark.slow
def test_a_1000_operation_collection_builds_and_runs_in_bounded_memory(tmp_path: Path) -> None:
    rng = random.Random(1000)
    ops = []
    for i in range(1000):
        a, b, c = rng.sample(WORDS, 3)
        ops.append(
            Op(
                f"get{a.title()}{b.title()}{i}",
                "GET",
                f"/{a}/{b}/{i}",
                f"Get the {a} {b} of a {c} number {i}",
            )
        )
    cases = [
        {"id": f"q-{i}", "query": op.summary, "expected_target": op.op_id} for i, op in enumerate(ops[::10])
    ]
    config = _search_project(tmp_path / "p", spec_text=yaml.safe_dump(spec(ops)).encode(), cases=cases)
    build = qlab("build", "--config", str(config), "--json", cwd=config.parent)
    assert build.code in (0, 1), build.console
    assert json.loads(build.stdout)["collection"]["tools"] == 1000
    done = qlab("run", "--config", str(config), "--quiet", cwd=config.parent)
    assert done.code in (0, 1), done.console
    assert len(result_cases(config.parent / "out" / "result.json")) == 100
    assert max(build.peak_rss_mib, done.peak_rss_mib) < MEMORY_BOUND_MIB, (
        build.peak_rss_mib,
        done.peak_rss_mib,
    )
    print(json.dumps({"limit": "1000 operations", "build_rss_mib": round(build.peak_rss_mib),
                      "run_rss_mib": round(done.peak_rss_mib), "sec": round(done.seconds, 1)}))  # fmt: skip


# ---------------------------------------------------------------------------------------------- size


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_50mb_case_file_is_refused_with_a_message(tmp_path: Path, command: str) -> None:
    seeds = _demo_search_cases()
    config = _search_project(tmp_path / "p", spec_text=DEMO_SPEC, cases=seeds)
    big = config.parent / "cases" / "huge.jsonl"
    line = (json.dumps({**seeds[0], "id": "x" * 40, "description": "y" * 400}) + "\n").encode()
    with open(big, "wb") as handle:
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            handle.write(line)
    assert big.stat().st_size >= 50 * 1024 * 1024
    done = qlab(command, "--config", str(config), cwd=config.parent)
    assert done.code == 2, done.console
    assert "huge.jsonl" in done.stderr and "MiB" in done.stderr and "limit" in done.stderr, done.stderr
    assert "Traceback" not in done.console and "internal error" not in done.console
    assert done.peak_rss_mib < 200, done.peak_rss_mib  # refused from its size, never read into memory


# ---------------------------------------------------------------------------------------------- shape


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _shape_spec() -> dict[str, Any]:
    """``/echo`` answers with a cyclic schema (Node → children → Node, A → B → A); ``/deep/100`` with a schema
    nested 100 levels deep; a request body with a 100-level array nesting."""
    deep_items: dict[str, Any] = {"type": "string"}
    for _ in range(100):
        deep_items = {"type": "array", "items": deep_items}

    def op(op_id: str, summary: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"operationId": op_id, "summary": summary, "description": summary,
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}}  # fmt: skip

    return {
        "openapi": "3.0.3",
        "info": {"title": "shapes", "version": "1"},
        "paths": {
            "/echo": {"get": op("echoTree", "Echo the request as a tree of nodes", {"$ref": "#/components/schemas/Node"})},
            "/deep/100": {"get": op("getDeepTree", "Get the hundred level nested tree",
                                    {"type": "object", "properties": {"data": _nested(100)}, "required": ["data"]})},
            "/anything": {
                "post": {
                    **op("postPair", "Post a cyclic pair of records", {"$ref": "#/components/schemas/A"}),
                    "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"grid": deep_items}}}}},
                }
            },
        },
        "components": {
            "schemas": {
                "Node": {"type": "object", "properties": {"name": {"type": "string"},
                         "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}},
                "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}},
            }
        },
    }  # fmt: skip


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_ref_cycles_and_100_level_nesting_are_handled(
    tmp_path: Path, faults: FaultServer, as_json: bool
) -> None:
    root = tmp_path / "p"
    config = write_project(
        root,
        ops=[],
        suites={"search": {"mode": "search"}, "shapes": {"mode": "execute", "environment": "dev"}},
        cases={
            "search": [
                {"id": "find-tree", "query": "Echo the request as a tree of nodes", "expected_target": "echoTree"},
                {"id": "find-deep", "query": "Get the hundred level nested tree", "expected_target": "getDeepTree"},
                {"id": "find-pair", "query": "Post a cyclic pair of records", "expected_target": "postPair"},
            ],
            "shapes": [
                {"id": "cyclic-schema", "query": "Echo the request as a tree of nodes", "expected_target": "echoTree",
                 "assertions": [{"type": "http_status", "in": [200]}, {"type": "response_schema"}]},
                {"id": "deep-schema", "query": "Get the hundred level nested tree", "expected_target": "getDeepTree",
                 "assertions": [{"type": "http_status", "in": [200]}, {"type": "response_schema"},
                                {"type": "json_path_exists", "path": "$.data" + ".a" * 99}]},
            ],
        },
        environments={"dev": {"base_url": faults.url}},
    )  # fmt: skip
    document = _shape_spec()
    if as_json:
        (root / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
        config.write_text(config.read_text().replace("openapi: openapi.yaml", "openapi: openapi.json"))
    else:
        (root / "openapi.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    build = qlab("build", "--config", str(config), "--json", cwd=root)
    assert build.code in (0, 1), build.console
    assert "RecursionError" not in build.console and "internal error" not in build.console
    assert json.loads(build.stdout)["collection"]["tools"] == 3
    done = qlab("run", "--config", str(config), cwd=root)
    assert "RecursionError" not in done.console and "internal error" not in done.console, done.console
    got = reasons(root / "out" / "result.json")
    assert got == {
        "find-tree": ("passed", None),
        "find-deep": ("passed", None),
        "find-pair": ("passed", None),
        "cyclic-schema": ("passed", None),
        "deep-schema": ("passed", None),
    }, done.console
    assert done.code == 0

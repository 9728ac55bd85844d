"""The downstream fault matrix, through the execute stage (``qlab.stages.execute.run``) against the fault server
on 127.0.0.1: every fault gets its failure class, and the healthy cases of the same run still pass.

One execute-stage run holds one case per fault plus healthy cases, sequentially (concurrency 1) and on the
thread pool (concurrency 8), so a fault in one case cannot damage another case's result.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from execute.factory import a, case, config, context, env, plan, step, tool
from qlab.contracts.results import CaseResult
from qlab.project.model import Case
from qlab.stages.base import StageReport
from qlab.stages.execute import run
from reliability.project import Op, fault_server_env, qlab, reasons, result_cases, write_project
from reliability.servers_faults import FaultServer, closed_port
from servers import free_port

BIG_MIB = 10
RETRIES = 2


@dataclass(frozen=True, slots=True)
class Matrix:
    """One execute-stage run of the whole matrix: its results, its report, the server it ran against."""

    results: dict[str, CaseResult]
    report: StageReport
    server: FaultServer
    elapsed: float


@pytest.fixture(scope="module", params=[1, 8], ids=["sequential", "pool-8"])
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    """The matrix run once per concurrency, each against a fresh server (the flaky routes count hits)."""
    with FaultServer() as server:
        started = time.monotonic()
        results, report = _run_matrix(tmp_path_factory.mktemp("matrix"), server, concurrency=request.param)
        yield Matrix(results, report, server, time.monotonic() - started)


def _tools() -> dict[str, Any]:
    paths = {
        "ok": "/ok",
        "s500": "/status/500",
        "s502": "/status/502",
        "s503": "/status/503",
        "s401": "/status/401",
        "s403": "/status/403",
        "s404": "/status/404",
        "flaky503": "/flaky/503/1",
        "flaky429": "/flaky/429/1",
        "retry_after_huge": "/retry-after/3600",
        "slow": "/slow/5",
        "reset": "/reset",
        "invalid_json": "/invalid-json",
        "big": f"/big/{BIG_MIB}",
        "deep": "/deep/100000",
        "redirect_loop": "/redirect-loop",
        "wrong_type": "/wrong-type",
        "json_as_text": "/json-as-text",
    }
    tools = {name: tool(name, "GET", path) for name, path in paths.items()}
    return tools


OK = (a("http_status", in_=[200]), a("json_path_equals", path="$.data.ok", equals=True))
JSON = (a("json_path_exists", path="$.data"),)

# case id -> (tool, case keyword arguments, expected (status, failure reason))
MATRIX: dict[str, tuple[str, dict[str, Any], tuple[str, str | None]]] = {
    "healthy-1": ("ok", {"assertions": OK}, ("passed", None)),
    "500": ("s500", {}, ("failed", "http_error")),
    "502": ("s502", {}, ("failed", "http_error")),
    "503": ("s503", {}, ("failed", "http_error")),
    "503-recovers": ("flaky503", {"assertions": OK}, ("passed", None)),
    "401": ("s401", {}, ("failed", "auth_failed")),
    "403": ("s403", {}, ("failed", "auth_failed")),
    "404": ("s404", {}, ("failed", "http_error")),
    "429-retry-after": ("flaky429", {"assertions": OK}, ("passed", None)),
    "429-retry-after-too-long": ("retry_after_huge", {"timeout_sec": 3.0}, ("failed", "http_error")),
    "slower-than-timeout": ("slow", {"timeout_sec": 0.5}, ("failed", "timeout")),
    "reset-mid-body": ("reset", {}, ("failed", "connection_error")),
    "invalid-json": ("invalid_json", {"assertions": JSON}, ("failed", "invalid_json")),
    "10mb-body": (
        "big",
        {"assertions": (a("body_contains", text="no-such-text"),)},
        ("failed", "assertion_failed"),
    ),
    "10mb-body-passes": (
        "big",
        {"assertions": (a("json_path_exists", path="$.data.blob"),)},
        ("passed", None),
    ),
    "json-nested-100k-deep": ("deep", {"assertions": JSON}, ("failed", "invalid_json")),
    "json-nested-100k-deep-unchecked": (
        "deep",
        {"assertions": (a("http_status", in_=[200]),)},
        ("passed", None),
    ),
    "redirect-loop": ("redirect_loop", {}, ("failed", "http_error")),
    "wrong-content-type": ("wrong_type", {"assertions": JSON}, ("failed", "invalid_json")),
    "json-sent-as-text": (
        "json_as_text",
        {"assertions": (a("header_equals", name="Content-Type", equals="application/json"),)},
        ("failed", "assertion_failed"),
    ),
    "healthy-2": ("ok", {"assertions": OK}, ("passed", None)),
}
REFUSED = {"connection-refused": ("ok", {}, ("failed", "connection_error"))}


def _run_matrix(
    tmp_path: Path, server: FaultServer, *, concurrency: int
) -> tuple[dict[str, CaseResult], StageReport]:
    cases: list[Case] = []
    plans = {}
    for cid, (tool_id, kwargs, _expected) in {**MATRIX, **REFUSED}.items():
        suite = "down" if cid in REFUSED else "s"
        cases.append(case(cid, suite=suite, **kwargs))
        plans[cid] = plan(step(tool_id))
    environments = {
        "dev": env(server.url, concurrency=concurrency, retries=RETRIES),
        "down": env(f"http://127.0.0.1:{closed_port()}", name="down", retries=RETRIES),
    }
    cfg = config(tmp_path, environments, suites={"s": "dev", "down": "down"})
    ctx = context(cfg, _tools(), plans=plans)
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    try:
        report = run(ctx, cases, results)
    finally:
        ctx.execute.close()
    return results, report


def test_every_fault_gets_its_failure_class_and_healthy_cases_pass(matrix: Matrix) -> None:
    results = matrix.results
    got = {cid: (r.status, r.failure.reason if r.failure else None) for cid, r in results.items()}
    expected = {cid: spec[2] for cid, spec in {**MATRIX, **REFUSED}.items()}
    assert got == expected, json.dumps({k: v.to_dict() for k, v in results.items() if got[k] != expected[k]})
    for result in results.values():  # every case has a complete execute record, whatever happened to it
        record = result.to_dict()
        assert record["execute"]["steps"], record
        assert record["latency_ms"]["execute"] > 0
        if result.failure is not None:
            assert result.failure.stage == "execute" and result.failure.message, record
    # every fault is classified (status failed with a reason), none an unexpected error, but the three the API
    # answered 5xx (500, 502, 503): failures that became 500s are what the metric counts against
    assert matrix.report.metrics["structured_failure_rate"] == round(13 / 16, 6)
    passed = sum(1 for spec in MATRIX.values() if spec[2][0] == "passed")
    assert matrix.report.metrics["execute_success_rate"] == round(passed / len(results), 6)
    assert matrix.report.details["failure_reasons"] == {
        "assertion_failed": 2,
        "auth_failed": 2,
        "connection_error": 2,
        "http_error": 6,
        "invalid_json": 3,
        "timeout": 1,
    }
    # bounded: no case waited on Retry-After: 3600, nor on the 5 s server beyond its own timeout
    assert matrix.elapsed < 60


def test_retries_are_honoured_and_bounded(matrix: Matrix) -> None:
    results, faults = matrix.results, matrix.server

    def steps(cid: str) -> dict[str, Any]:
        return dict(results[cid].to_dict()["execute"]["steps"][0])

    def retries(cid: str) -> list[dict[str, Any]]:
        return [e for e in results[cid].to_dict()["execute"]["events"] if e["event"] == "retry"]

    # 503 always: retried RETRIES times, then reported with the attempt count
    assert steps("503")["attempts"] == RETRIES + 1
    assert [e["reason"] for e in retries("503")] == ["503"] * RETRIES
    assert len(faults.hits("/status/503")) == RETRIES + 1
    # 500/502/404/401/403 are never retried
    for path in ("/status/500", "/status/502", "/status/404", "/status/401", "/status/403"):
        assert len(faults.hits(path)) == 1, path
    # 503 then 200: the retry recovers the case
    assert steps("503-recovers")["attempts"] == 2 and steps("503-recovers")["status"] == 200
    # 429 with Retry-After: 1 — the wait is the server's, and the server saw the two attempts >= 1 s apart
    (retry,) = retries("429-retry-after")
    assert (retry["reason"], retry["wait_ms"]) == ("429", 1000)
    first, second = faults.hits("/flaky/429/1")
    assert second.at - first.at >= 0.95
    # Retry-After: 3600 does not fit the 3 s case budget: no wait, one attempt, an http_error that says 429
    assert retries("429-retry-after-too-long") == []
    assert len(faults.hits("/retry-after/3600")) == 1
    assert "429" in (results["429-retry-after-too-long"].failure.message or "")  # type: ignore[union-attr]
    # connection refused: a connect error of an idempotent request is retried, then connection_error
    assert steps("connection-refused")["attempts"] == RETRIES + 1
    # the redirect loop is named as such
    assert "redirect" in (results["redirect-loop"].failure.message or "").lower()  # type: ignore[union-attr]


def test_a_10mb_body_is_truncated_in_results(matrix: Matrix) -> None:
    results = matrix.results
    failed = results["10mb-body"].to_dict()
    ex = failed["execute"]
    assert ex["response_bytes"] >= BIG_MIB * 1024 * 1024 - 64  # the whole body was read and measured ...
    assert "truncated" in ex["response_excerpt"] and len(ex["response_excerpt"]) < 2200  # ... not stored
    for item in failed["assertions"]:
        assert len(json.dumps(item)) < 10_000, item
    assert len(json.dumps(failed)) < 20_000
    passed = results["10mb-body-passes"].to_dict()
    assert "response_excerpt" not in passed["execute"] and len(json.dumps(passed)) < 20_000


# ---------------------------------------------------------------------------------------------- the whole CLI

CLI_OPS = [
    Op("checkHealth", "GET", "/ok", "Check that the service is healthy"),
    Op("triggerInternalFailure", "GET", "/status/500", "Trigger an internal server failure"),
    Op("callBadGateway", "GET", "/status/502", "Call the bad gateway proxy"),
    Op("reachMaintenance", "GET", "/status/503", "Reach the unavailable maintenance service"),
    Op("openVault", "GET", "/status/401", "Open the unauthorized vault"),
    Op("enterArchive", "GET", "/status/403", "Enter the forbidden archive"),
    Op("fetchMissingDocument", "GET", "/status/404", "Fetch the missing document"),
    Op("recoverThrottle", "GET", "/flaky/429/1", "Recover from the throttled burst"),
    Op("hitQuota", "GET", "/retry-after/3600", "Hit the exhausted quota"),
    Op("waitExport", "GET", "/slow/5", "Wait for the sluggish report export"),
    Op("downloadStream", "GET", "/reset", "Download the interrupted stream"),
    Op("readLedger", "GET", "/invalid-json", "Read the corrupted ledger"),
    Op("exportDump", "GET", f"/big/{BIG_MIB}", "Export the enormous archive dump"),
    Op("inspectTree", "GET", "/deep/100000", "Inspect the nested tree"),
    Op("followRedirect", "GET", "/redirect-loop", "Follow the circular redirect"),
    Op("loadPage", "GET", "/wrong-type", "Load the maintenance page"),
]
OK_CLI = [
    {"type": "http_status", "in": [200]},
    {"type": "json_path_equals", "path": "$.data.ok", "equals": True},
]
JSON_CLI = [{"type": "json_path_exists", "path": "$.data"}]
# case id -> (operation id, extra case keys, expected (status, failure reason))
CLI_MATRIX: dict[str, tuple[str, dict[str, Any], tuple[str, str | None]]] = {
    "healthy-1": ("checkHealth", {"assertions": OK_CLI}, ("passed", None)),
    "500": ("triggerInternalFailure", {}, ("failed", "http_error")),
    "502": ("callBadGateway", {}, ("failed", "http_error")),
    "503": ("reachMaintenance", {}, ("failed", "http_error")),
    "401": ("openVault", {}, ("failed", "auth_failed")),
    "403": ("enterArchive", {}, ("failed", "auth_failed")),
    "404": ("fetchMissingDocument", {}, ("failed", "http_error")),
    "429-retry-after": ("recoverThrottle", {"assertions": OK_CLI}, ("passed", None)),
    "429-retry-after-too-long": ("hitQuota", {"timeout_sec": 3}, ("failed", "http_error")),
    "slower-than-timeout": ("waitExport", {"timeout_sec": 1}, ("failed", "timeout")),
    "reset-mid-body": ("downloadStream", {}, ("failed", "connection_error")),
    "invalid-json": ("readLedger", {"assertions": JSON_CLI}, ("failed", "invalid_json")),
    "10mb-body": (
        "exportDump",
        {"assertions": [{"type": "body_contains", "text": "no-such-text"}]},
        ("failed", "assertion_failed"),
    ),
    "deep-json": ("inspectTree", {"assertions": JSON_CLI}, ("failed", "invalid_json")),
    "redirect-loop": ("followRedirect", {}, ("failed", "http_error")),
    "wrong-content-type": ("loadPage", {"assertions": JSON_CLI}, ("failed", "invalid_json")),
    "healthy-2": ("checkHealth", {"assertions": OK_CLI}, ("passed", None)),
}


def _summary(op_id: str) -> str:
    return next(op.summary for op in CLI_OPS if op.op_id == op_id)


def test_the_whole_cli_run_survives_every_fault(tmp_path: Path) -> None:
    """``qlab run`` on a temp qlab.yaml: the fault server is the environment's dev server, every fault case
    gets its class in result.json, the healthy ones pass, and the run ends blocked (exit 1), not crashed."""
    port = free_port()
    cases = [
        {"id": cid, "query": _summary(op_id), "expected_target": op_id, **extra}
        for cid, (op_id, extra, _expected) in CLI_MATRIX.items()
    ]
    refused = [
        {"id": "connection-refused", "query": _summary("checkHealth"), "expected_target": "checkHealth"}
    ]
    config = write_project(
        tmp_path / "project",
        ops=CLI_OPS,
        # "down" is required: false: a required suite's environment that does not answer stops the run before
        # any case (ERROR, environment_unreachable); here the refused connection is one more case outcome
        suites={"faults": {"mode": "execute", "environment": "dev"},
                "down": {"mode": "execute", "environment": "down", "required": False}},
        cases={"faults": cases, "down": refused},
        environments={
            "dev": fault_server_env(port, retries=RETRIES),
            "down": {"base_url": f"http://127.0.0.1:{closed_port()}", "retry_backoff_sec": 0.05},
        },
        gates=[
            {"name": "build", "stage": "build"},
            {"name": "execute", "stage": "execute", "suites": ["faults", "down"],
             "thresholds": {"execute_success_rate": ">= 1.0"}},
            {"name": "learn", "stage": "learn", "stop_if": ["scrub_failed"]},
        ],
    )  # fmt: skip
    out = tmp_path / "out"
    done = qlab("run", "--config", str(config), "--out", str(out), cwd=tmp_path)
    assert done.code == 1, done.console  # blocked by the execute gate's threshold: a verdict, not a crash
    assert "Traceback" not in done.console and "internal error" not in done.console, done.console
    expected = {cid: spec[2] for cid, spec in CLI_MATRIX.items()} | {
        "connection-refused": ("failed", "connection_error")
    }
    assert reasons(out / "result.json") == expected, done.console
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert junit.count('classname="qlab.faults"') + junit.count('classname="qlab.down"') == len(expected)
    assert "connection_error" in junit and "invalid_json" in junit
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["decision"]["exit_code"] == 1
    assert (out / "result.json").stat().st_size < 2 * 1024 * 1024  # the 10 MB body is not in it
    retried = [
        e
        for e in result_cases(out / "result.json")["429-retry-after"]["execute"]["events"]
        if e["event"] == "retry"
    ]
    assert [(e["reason"], e["wait_ms"]) for e in retried] == [("429", 1000)]  # Retry-After honoured
    assert done.peak_rss_mib < 500, done.peak_rss_mib
    # the dev server ran, logged its requests, and was stopped
    log = (out / "server-dev.log").read_text(encoding="utf-8")
    assert "GET /status/500 500" in log and "qlab: stopped" in log
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()

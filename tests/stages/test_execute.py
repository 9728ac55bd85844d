"""The execute stage end to end, against real servers on 127.0.0.1: the demo API, httpbin, json-server and a
server that counts requests."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

import servers
from execute.factory import FakeEngine, a, case, config, context, demo_tools, env, param, plan, step, tool
from qlab.adapters.scrub import find_leaks
from qlab.collection.model import MutationClass, Tool
from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan
from qlab.execute.client import make_run_client
from qlab.project.model import AuthProfile, Capture, Case, CleanupStep, Environment, Guard
from qlab.stages.base import StageReport
from qlab.stages.context import RunContext
from qlab.stages.execute import _resolver, run

DEMO_TOKEN = "demo-CANARY-7c1d2e"
BEARER = AuthProfile("demo_bearer", "bearer", token_env="QLAB_TEST_TOKEN")


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with servers.demo_server(token=DEMO_TOKEN) as url:
        yield url


@pytest.fixture
def counter() -> Iterator[servers.CountingServer]:
    with servers.CountingServer() as server:
        yield server


def execute(
    tmp_path: Path,
    cases: Sequence[Case],
    tools: Mapping[str, Tool],
    environment: Environment,
    *,
    plans: Mapping[str, Plan] | None = None,
    profiles: Sequence[AuthProfile] = (),
    collection_auth: str | None = None,
    engine: Any = None,
    transport: httpx.BaseTransport | None = None,
    guards: tuple[Guard, ...] = (),
) -> tuple[StageReport, dict[str, CaseResult], RunContext, list[str]]:
    cfg = config(
        tmp_path,
        {environment.name: environment},
        auth_profiles={p.name: p for p in profiles},
        collection_auth=collection_auth,
        suites={c.suite: environment.name for c in cases} or None,
    )
    log: list[str] = []
    ctx = context(cfg, tools, engine=engine, plans=plans, guards=guards, log=log)
    if transport is not None:
        ctx.execute.client = make_run_client(transport=transport)
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    try:
        report = run(ctx, cases, results)
    finally:
        ctx.execute.close()
    return report, results, ctx, log


# ---------------------------------------------------------------------------------------------- the demo API


def test_read_cases_against_the_demo_api(
    tmp_path: Path, demo_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QLAB_TEST_TOKEN", DEMO_TOKEN)
    tools = demo_tools()
    cases = [
        case(
            "member",
            assertions=(
                a("http_status", in_=[200]),
                a("json_path_exists", path="$.data"),
                a("response_schema"),
                a("json_path_equals", path="$.data.tier", equals="premium"),
            ),
        ),
        case("chain", assertions=(a("http_status", range="2xx"), a("json_path_count", path="$.data", min=1))),
        case("profile", assertions=(a("json_path_matches", path="$.data.accountId", regex="^A-"),)),
    ]
    plans = {
        "member": plan(step("getMember", memberNo="M-1001")),
        # the second step's memberNo is bound to the first step's response
        "chain": plan(
            step("listMembers", tier="plus"),
            step("getMemberDeliveryList", {"memberNo": {"step": 0, "path": "$.data[0].memberNo"}}),
        ),
        "profile": plan(step("getMyProfile")),
    }
    report, results, ctx, _log = execute(
        tmp_path, cases, tools, env(demo_url, auth="demo_bearer"), plans=plans, profiles=[BEARER]
    )
    for result in results.values():
        assert result.status == "passed", result.to_dict()
    member = results["member"].to_dict()
    assert member["auth_readiness"] == {
        "status": "ready",
        "profile": "demo_bearer",
        "headers": ["Authorization"],
        "reason_codes": [],
    }
    ex = member["execute"]
    assert (ex["http_status"], ex["content_type"]) == (200, "application/json")
    assert ex["response_bytes"] > 0 and ex["latency_ms"] > 0
    assert ex["steps"] == [
        {
            "tool": "getMember",
            "method": "GET",
            "path": "/members/M-1001",
            "status": 200,
            "latency_ms": ex["steps"][0]["latency_ms"],
            "bytes": ex["response_bytes"],
        }
    ]
    assert [e["event"] for e in ex["events"]] == ["request_sent", "response_received"] + ["assertion"] * 4
    assert member["latency_ms"]["execute"] > 0
    assert [s["path"] for s in results["chain"].to_dict()["execute"]["steps"]] == [
        "/members?tier=plus",
        "/members/M-1002/deliveries",
    ]
    assert report.metrics["execute_success_rate"] == report.metrics["execute_read_success_rate"] == 1.0
    assert report.metrics["assertion_pass_rate"] == report.metrics["auth_ready_rate"] == 1.0
    assert report.metrics["latency_p50_ms"] is not None and report.metrics["latency_p95_ms"] is not None
    assert report.stops == [] and all(g.passed for g in report.guards)
    assert {g.guard for g in report.guards} == {"mutation_safety", "host_allowlist"}
    assert DEMO_TOKEN in ctx.secrets
    assert DEMO_TOKEN not in json.dumps([r.to_dict() for r in results.values()])


def test_mutation_with_capture_and_cleanup(
    tmp_path: Path, demo_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QLAB_TEST_TOKEN", DEMO_TOKEN)
    cleanup = (
        CleanupStep(tool="cancelOrder", arguments={"orderId": "${captures.orderId}"}, expect_status=(204,)),
    )
    ok = case(
        "create",
        mutation_safety="allow_mutation",
        captures=(Capture("orderId", "$.data.orderId"),),
        cleanup=cleanup,
        assertions=(a("http_status", in_=[201]), a("json_path_equals", path="$.data.status", equals="open")),
    )
    failing = case(
        "create-bad",
        mutation_safety="allow_mutation",
        captures=(Capture("orderId", "$.data.orderId"),),
        cleanup=cleanup,
        assertions=(a("json_path_equals", path="$.data.status", equals="paid"),),
    )
    plans = {c.id: plan(step("createOrder", memberNo="M-1003", items=["SKU-9"])) for c in (ok, failing)}
    environment = env(demo_url, auth="demo_bearer", allowed_hosts=("127.0.0.1",))
    report, results, _ctx, _log = execute(
        tmp_path, [ok, failing], demo_tools(), environment, plans=plans, profiles=[BEARER]
    )
    assert results["create"].status == "passed", results["create"].to_dict()
    ex = results["create"].to_dict()["execute"]
    assert ex["captures"] == ["orderId"]  # names only
    assert (
        ex["cleanup"][0]["method"] == "DELETE"
        and ex["cleanup"][0]["status"] == 204
        and ex["cleanup"][0]["outcome"] == "passed"
    )
    assert [e["outcome"] for e in ex["events"] if e["event"] == "cleanup"] == ["passed"]
    # cleanup ran after the failed assertion too, and both orders are gone
    bad = results["create-bad"]
    assert (bad.status, bad.failure and bad.failure.reason) == ("failed", "assertion_failed")
    assert bad.to_dict()["execute"]["cleanup"][0]["outcome"] == "passed"
    assert [o["orderId"] for o in httpx.get(f"{demo_url}/orders").json()["data"]] == [
        "O-9001",
        "O-9002",
        "O-9003",
        "O-9004",
    ]
    assert report.metrics["execute_read_success_rate"] is None
    assert [s.condition for s in report.stops] == ["assertion_failed"]


def test_wrong_token_is_auth_failed_and_sensitive_fields_are_scrubbed(
    tmp_path: Path, demo_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QLAB_TEST_TOKEN", "not-the-token")
    cases = [
        case("profile"),
        case(
            "member", assertions=(a("json_path_equals", path="$.data.email", equals="someone@example.com"),)
        ),
    ]
    plans = {"profile": plan(step("getMyProfile")), "member": plan(step("getMember", memberNo="M-1001"))}
    environment = env(demo_url, auth="demo_bearer", sensitive_fields=("email",))
    report, results, _ctx, _log = execute(
        tmp_path, cases, demo_tools(), environment, plans=plans, profiles=[BEARER]
    )
    profile = results["profile"]
    assert profile.failure is not None and profile.failure.reason == "auth_failed"
    assert profile.to_dict()["execute"]["http_status"] == 401
    member = json.dumps(results["member"].to_dict())
    assert "mina.park@example.com" not in member and "[REDACTED]" in member
    assert results["member"].failure is not None and results["member"].failure.reason == "assertion_failed"
    assert report.metrics["auth_ready_rate"] == 1.0  # the preflight was fine; the API said no


def test_dev_server_started_by_the_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qlab.project.model import ServerConfig

    port = servers.free_port()
    monkeypatch.setenv("QLAB_TEST_TOKEN", "tok-dev-server")
    server = ServerConfig(
        command=f"python -m qlab.demo.server --port {port} --token-env QLAB_TEST_TOKEN",
        url=f"http://127.0.0.1:{port}/health",
        timeout_sec=20,
        reuse_existing=False,
    )
    environment = env(f"http://127.0.0.1:{port}", auth="demo_bearer", server=server)
    c = case("profile", assertions=(a("http_status", in_=[200]),))
    report, results, _ctx, _log = execute(
        tmp_path,
        [c],
        demo_tools(),
        environment,
        plans={"profile": plan(step("getMyProfile"))},
        profiles=[BEARER],
    )
    assert results["profile"].status == "passed", results["profile"].to_dict()
    assert report.details["servers"]["dev"]["status"] == "started"
    assert Path(report.details["servers"]["dev"]["log"]).exists()
    with pytest.raises(httpx.ConnectError):  # ctx.execute.close() stopped it
        httpx.get(f"http://127.0.0.1:{port}/health")


def test_a_dev_server_that_does_not_start_is_an_infrastructure_fault(tmp_path: Path) -> None:
    """Every case of its environment errs with ``dev_server_failed`` (ERROR for the run, never BLOCK)."""
    from qlab.contracts.reasons import is_infrastructure
    from qlab.project.model import ServerConfig

    port = servers.free_port()
    server = ServerConfig(
        command=f"{sys.executable} -c 'raise SystemExit(3)'",
        url=f"http://127.0.0.1:{port}/health",
        timeout_sec=5,
        reuse_existing=False,
    )
    environment = env(f"http://127.0.0.1:{port}", server=server)
    c = case("profile", assertions=(a("http_status", in_=[200]),))
    _report, results, _ctx, _log = execute(
        tmp_path, [c], demo_tools(), environment, plans={"profile": plan(step("getMyProfile"))}
    )
    failure = results["profile"].failure
    assert failure is not None and (results["profile"].status, failure.reason) == (
        "error",
        "dev_server_failed",
    )
    assert is_infrastructure(failure.reason)


# ---------------------------------------------------------------------------------------------- safety


def test_refused_mutations_send_nothing(tmp_path: Path, counter: servers.CountingServer) -> None:
    tools = {
        "createThing": tool(
            "createThing", "POST", "/things", params=(param("name", "body"),), body={"type": "object"}
        ),
        "getThing": tool("getThing", "GET", "/things/1"),
        "drop_table": tool("drop_table", None, None, kind="mcp", mutation=MutationClass.DESTRUCTIVE),
    }
    cleanup = (CleanupStep(method="DELETE", path="/things/1"),)
    asserts = (a("http_status", in_=[201]),)
    cases = [
        case("not-allowed", assertions=asserts, cleanup=cleanup),
        case("bad-host", mutation_safety="allow_mutation", assertions=asserts, cleanup=cleanup, suite="prod"),
        case("no-cleanup", mutation_safety="allow_mutation", assertions=asserts),
        case("no-assertions", mutation_safety="allow_mutation", cleanup=cleanup),
        case("mcp", query="drop"),
        case("read-with-delete-cleanup", cleanup=cleanup),
    ]
    plans = {c.id: plan(step("createThing", name="x")) for c in cases}
    plans["mcp"] = plan(step("drop_table"))
    plans["read-with-delete-cleanup"] = plan(step("getThing"))
    dev = env(counter.url, allowed_hosts=("localhost",))
    cfg = config(tmp_path, {"dev": dev}, suites={"s": "dev", "prod": "dev"})
    ctx = context(cfg, tools, plans=plans, guards=(Guard("host_allowlist", "warn"),))
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    try:
        report = run(ctx, cases, results)
    finally:
        ctx.execute.close()
    reasons = {cid: r.failure.reason if r.failure else None for cid, r in results.items()}
    assert reasons == {
        "not-allowed": "mutation_not_allowed",
        "bad-host": "mutation_not_allowed",
        "no-cleanup": "mutation_not_allowed",
        "no-assertions": "mutation_not_allowed",
        "mcp": "mutation_not_allowed",
        "read-with-delete-cleanup": "mutation_not_allowed",
    } | {
        "bad-host": "host_not_allowed",
        "no-cleanup": "host_not_allowed",
        "no-assertions": "host_not_allowed",
    }
    assert counter.count == 0, counter.requests
    assert all(
        r.auth_readiness is None for r in results.values()
    )  # refused before the preflight: no token fetched
    (stop,) = report.stops
    assert stop.condition == "mutation_unsafe" and len(stop.case_ids) == 6
    guards = {g.guard: g for g in report.guards}
    assert not guards["mutation_safety"].passed and guards["mutation_safety"].mode == "block"
    assert not guards["host_allowlist"].passed and guards["host_allowlist"].mode == "warn"
    assert report.metrics["execute_success_rate"] == 0.0

    # now on an allowed host: cleanup_missing for the two without cleanup/assertions, still nothing sent
    cases2 = [c for c in cases if c.id in ("no-cleanup", "no-assertions")]
    _report, results2, _ctx, _log = execute(
        tmp_path, cases2, tools, env(counter.url, allowed_hosts=("127.0.0.1",)), plans=plans
    )
    assert {r.failure.reason for r in results2.values() if r.failure} == {"cleanup_missing"}
    assert counter.count == 0


def test_allowed_mutation_is_sent_with_cleanup(tmp_path: Path, counter: servers.CountingServer) -> None:
    tools = {
        "createThing": tool(
            "createThing", "POST", "/things", params=(param("name", "body"),), body={"type": "object"}
        )
    }
    c = case(
        "ok",
        mutation_safety="allow_mutation",
        captures=(Capture("p", "$.data.path"),),
        cleanup=(CleanupStep(method="DELETE", path="/things/{id}", arguments={"id": "${captures.p}"}),),
        assertions=(a("http_status", in_=[200]),),
    )
    _r, results, _c, _l = execute(
        tmp_path,
        [c],
        tools,
        env(counter.url, allowed_hosts=("127.0.0.1",)),
        plans={"ok": plan(step("createThing", name="n"))},
    )
    assert results["ok"].status == "passed", results["ok"].to_dict()
    assert counter.requests == [("POST", "/things"), ("DELETE", "/things/%2Fthings")]


# ---------------------------------------------------------------------------------------------- json-server


def test_json_server_mutation_with_cleanup(tmp_path: Path) -> None:
    db = tmp_path / "db.json"
    db.write_text(json.dumps({"orders": [{"id": 1, "memberNo": "M-1", "items": ["a"]}]}))
    manager = servers.json_server(db)
    with servers.infrastructure(
        "json-server"
    ):  # node absent: a skip; a server that cannot start: fails in CI
        url = manager.__enter__()
    try:
        tools = {
            "createOrder": tool(
                "createOrder",
                "POST",
                "/orders",
                params=(param("memberNo", "body", required=True), param("items", "body")),
                body={"type": "object"},
                responses={"201": {"type": "object", "required": ["id"]}},
            ),
            "deleteOrder": tool(
                "deleteOrder", "DELETE", "/orders/{id}", params=(param("id", "path", required=True),)
            ),
        }
        made = case(
            "json-create",
            mutation_safety="allow_mutation",
            captures=(Capture("orderId", "$.id"),),
            cleanup=(CleanupStep(tool="deleteOrder", arguments={"id": "${captures.orderId}"}),),
            assertions=(
                a("http_status", in_=[201]),
                a("response_schema"),
                a("json_path_equals", path="$.memberNo", equals="M-2"),
            ),
        )
        timed = case(
            "json-timeout",
            mutation_safety="allow_mutation",
            captures=(Capture("orderId", "$.id"),),
            timeout_sec=5,
            cleanup=(
                CleanupStep(method="DELETE", path="/orders/{id}", arguments={"id": "${captures.orderId}"}),
            ),
            assertions=(a("latency_ms_below", ms=0.001),),
        )
        plans = {c.id: plan(step("createOrder", memberNo="M-2", items=["x"])) for c in (made, timed)}
        environment = env(url, allowed_hosts=("127.0.0.1",), concurrency=1)
        _report, results, _ctx, _log = execute(tmp_path, [made, timed], tools, environment, plans=plans)
        assert results["json-create"].status == "passed", results["json-create"].to_dict()
        assert (
            results["json-timeout"].failure is not None
            and results["json-timeout"].failure.reason == "assertion_failed"
        )
        for r in results.values():
            assert r.to_dict()["execute"]["cleanup"][0]["outcome"] == "passed"
        assert [o["id"] for o in httpx.get(f"{url}/orders").json()] == [1]
    finally:
        manager.__exit__(None, None, None)


# ---------------------------------------------------------------------------------------------- httpbin


def _httpbin_tools() -> dict[str, Tool]:
    return {
        "status": tool("status", "GET", "/status/{code}", params=(param("code", "path", required=True),)),
        "delay": tool("delay", "GET", "/delay/{n}", params=(param("n", "path", required=True),)),
        "basic": tool(
            "basic", "GET", "/basic-auth/{user}/{pw}", params=(param("user", "path"), param("pw", "path"))
        ),
        "bearer": tool("bearer", "GET", "/bearer", security=({"bearerAuth": ()},)),
        "headers": tool("headers", "GET", "/headers"),
        "anything": tool("anything", "GET", "/anything", params=(param("q"),)),
        "html": tool("html", "GET", "/html"),
        "cookies": tool("cookies", "GET", "/cookies/set", params=(param("session"),)),
        "json": tool("json", "GET", "/json", responses={"200": {"type": "object", "required": ["data"]}}),
    }


def test_httpbin_failure_classes(tmp_path: Path, httpbin_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("U", "alice")
    monkeypatch.setenv("PW", "pw-CANARY-1")
    cases = [
        case("500"),
        case("404-expected", assertions=(a("http_status", in_=[404]),)),
        case("503-retried"),
        case("timeout", timeout_sec=0.5),
        case("basic", assertions=(a("json_path_equals", path="$.authenticated", equals=True),)),
        case("not-json", assertions=(a("json_path_exists", path="$.data"),)),
        case("schema", assertions=(a("response_schema"),)),
        case("cookie"),
    ]
    plans = {
        "500": plan(step("status", code=500)),
        "404-expected": plan(step("status", code=404)),
        "503-retried": plan(step("status", code=503)),
        "timeout": plan(step("delay", n=3)),
        "basic": plan(step("basic", user="alice", pw="pw-CANARY-1")),
        "not-json": plan(step("html")),
        "schema": plan(step("json")),
        "cookie": plan(step("cookies", session="sess-CANARY-2")),
    }
    environment = env(httpbin_url, auth="basic", retries=1)
    report, results, ctx, log = execute(
        tmp_path,
        cases,
        _httpbin_tools(),
        environment,
        plans=plans,
        profiles=[AuthProfile("basic", "basic", username_env="U", password_env="PW")],
    )
    reasons = {cid: (r.status, r.failure.reason if r.failure else None) for cid, r in results.items()}
    assert reasons == {
        "500": ("failed", "http_error"),
        "404-expected": ("passed", None),
        "503-retried": ("failed", "http_error"),
        "timeout": ("failed", "timeout"),
        "basic": ("passed", None),
        "not-json": ("failed", "invalid_json"),
        "schema": ("failed", "schema_mismatch"),
        "cookie": ("passed", None),
    }
    retried = results["503-retried"].to_dict()["execute"]
    assert [e["reason"] for e in retried["events"] if e["event"] == "retry"] == ["503"]
    assert retried["steps"][0]["attempts"] == 2
    assert "sess-CANARY-2" in ctx.secrets  # a cookie the API set is a secret from then on
    # the 500 and the 503 are what the metric counts against: failures that became 500s (3 of 5 classified)
    assert report.metrics["structured_failure_rate"] == 0.6
    assert {s.condition for s in report.stops} == {"assertion_failed"}
    text = json.dumps([r.to_dict() for r in results.values()]) + "\n".join(log)
    assert "pw-CANARY-1" not in text and "sess-CANARY-2" not in text


def test_cleanup_runs_after_a_timeout(tmp_path: Path) -> None:
    tools = {
        "slowCreate": tool("slowCreate", "POST", "/slow/orders"),
        "undo": tool("undo", "DELETE", "/orders/{what}", params=(param("what", "path", required=True),)),
    }
    c = case(
        "slow",
        mutation_safety="allow_mutation",
        timeout_sec=0.5,
        assertions=(a("http_status", in_=[200]),),
        cleanup=(CleanupStep(tool="undo", arguments={"what": "slow-order"}),),
    )
    with servers.CountingServer(slow_sec=3.0) as slow:
        _r, results, _c, _l = execute(
            tmp_path,
            [c],
            tools,
            env(slow.url, allowed_hosts=("127.0.0.1",)),
            plans={"slow": plan(step("slowCreate"))},
        )
        assert slow.requests == [("POST", "/slow/orders"), ("DELETE", "/orders/slow-order")]
    record = results["slow"].to_dict()
    assert record["failure"]["reason"] == "timeout"
    assert record["execute"]["cleanup"][0]["outcome"] == "passed"
    assert [e["event"] for e in record["execute"]["events"]][-1] == "cleanup"


def test_secret_canaries_never_reach_results_logs_or_the_console(
    tmp_path: Path, httpbin_url: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    canaries = {"TOK": "CANARY-bearer-31337", "KEY": "CANARY-apikey-4242", "H": "CANARY-header-777"}
    for name, value in canaries.items():
        monkeypatch.setenv(name, value)
    profiles = [
        AuthProfile("bearer", "bearer", token_env="TOK"),
        AuthProfile("key", "api_key", query="api_key", value_env="KEY"),
        AuthProfile("hdr", "headers", headers={"X-Session": "H"}),
    ]
    tools = _httpbin_tools()
    # failing assertions make the stage record the echoed bodies (excerpt) and actual values
    echo = (
        a("body_contains", text="no-such-text"),
        a("json_path_equals", path="$.headers.Authorization", equals="x"),
    )
    results_all: dict[str, CaseResult] = {}
    logs: list[str] = []
    for profile in profiles:
        cases = [
            case(f"{profile.name}-headers", assertions=echo),
            case(f"{profile.name}-anything", assertions=(a("json_path_equals", path="$.args", equals={}),)),
            case(f"{profile.name}-bearer", assertions=(a("json_path_equals", path="$.token", equals="x"),)),
        ]
        plans = {
            cases[0].id: plan(step("headers")),
            cases[1].id: plan(step("anything", q="v")),
            cases[2].id: plan(step("bearer")),
        }
        _report, results, ctx, log = execute(
            tmp_path, cases, tools, env(httpbin_url, auth=profile.name), plans=plans, profiles=[profile]
        )
        results_all.update(results)
        logs.extend(log)
        assert set(canaries.values()) & ctx.secrets
    # the echoes did happen: each case failed on what it saw
    assert all(r.status == "failed" for r in results_all.values())
    artifact = tmp_path / "out" / "result.json"
    artifact.parent.mkdir()
    artifact.write_text(json.dumps([r.to_dict() for r in results_all.values()], indent=2))
    (tmp_path / "out" / "run.log").write_text("\n".join(logs))
    print("\n".join(logs))
    sys.stderr.write(artifact.read_text())
    captured = capfd.readouterr()
    for value in canaries.values():
        assert value not in artifact.read_text()
        assert value not in captured.out and value not in captured.err
    assert find_leaks([tmp_path / "out"], list(canaries.values())) == []
    assert "[REDACTED]" in artifact.read_text()
    assert "api_key=[REDACTED]" in artifact.read_text()


# ---------------------------------------------------------------------------------------------- auth preflight


def test_preflight_failures_send_nothing(
    tmp_path: Path, counter: servers.CountingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QLAB_TEST_TOKEN", raising=False)
    tools = {"getThing": tool("getThing", "GET", "/things", security=({"bearerAuth": ()},))}
    cases = [
        case("unset", suite="a"),
        case("failing-command", suite="b"),
        case("no-profile", suite="c"),
        case("unknown-profile", suite="d"),
    ]
    plans = {c.id: plan(step("getThing")) for c in cases}
    envs = {
        "a": env(counter.url, name="a", auth="demo_bearer"),
        "b": env(counter.url, name="b", auth="cmd"),
        "c": env(counter.url, name="c"),
        "d": env(counter.url, name="d", auth="nope"),
    }
    cfg = config(
        tmp_path,
        envs,
        suites={"a": "a", "b": "b", "c": "c", "d": "d"},
        auth_profiles={"demo_bearer": BEARER, "cmd": AuthProfile("cmd", "bearer", token_command="exit 1")},
    )
    ctx = context(cfg, tools, plans=plans)
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    try:
        report = run(ctx, cases, results)
    finally:
        ctx.execute.close()
    reasons = {cid: r.failure.reason if r.failure else None for cid, r in results.items()}
    assert reasons == {
        "unset": "auth_context_required",
        "failing-command": "auth_header_resolution_failed",
        "no-profile": "auth_profile_missing",
        "unknown-profile": "auth_profile_missing",
    }
    assert counter.count == 0
    assert results["unset"].auth_readiness == {
        "status": "not_ready",
        "profile": "demo_bearer",
        "headers": [],
        "reason_codes": ["auth_context_required"],
        "missing_env": ["QLAB_TEST_TOKEN"],
        "message": results["unset"].auth_readiness["message"],
    }  # type: ignore[index]
    assert report.metrics["auth_ready_rate"] == 0.0
    (stop,) = report.stops
    assert stop.condition == "auth_not_ready" and set(stop.case_ids) == set(reasons)


# ---------------------------------------------------------------------------------------------- plans, environments, errors


def test_plans_from_the_engine_from_result_dicts_and_missing_environments(
    tmp_path: Path, counter: servers.CountingServer
) -> None:
    """A case no plan gate planned goes search → select → plan through the plan stage's own code: it keeps
    every stage object it went through, and fails where a plan case would."""
    tools = {
        "getThing": tool("getThing", "GET", "/things/{id}", params=(param("id", "path", required=True),)),
        "getOther": tool("getOther", "GET", "/other"),
    }
    engine = FakeEngine({"find thing": plan(step("getThing", id=7))})
    cases = [
        case("engine", query="find thing", expected_target="getThing"),
        case("dict"),
        case("wrong", query="find thing", expected_target="getOther"),
        case("unknown", query="find thing", expected_target="other"),
        case("no-env", suite="orphan"),
        case("nothing", query="unknown"),
    ]
    cfg = config(tmp_path, {"dev": env(counter.url)}, suites={"s": "dev", "orphan": None})
    ctx = context(cfg, tools, engine=engine)
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    results["dict"].plan = {
        "plan_id": "p1",
        "status": "synthesized",
        "steps": [{"tool_id": "getThing", "arguments": {"id": 9}}],
    }
    try:
        run(ctx, cases, results)
    finally:
        ctx.execute.close()
    engine_case = results["engine"].to_dict()
    assert engine_case["status"] == "passed"
    assert {"search", "target_selection", "plan", "execute"} <= set(engine_case["latency_ms"])
    assert engine_case["search"]["hit"] is True and engine_case["search"]["hit_rank"] == 1
    assert engine_case["target_selector"]["selected_target"] == "getThing"
    assert engine_case["plan"]["status"] == "synthesized" and engine_case["plan"]["user_input_slots"] == []
    assert ctx.answers.plans["engine"].tools == ("getThing",)  # the executed plan is kept for later stages
    assert results["dict"].status == "passed"
    assert ("GET", "/things/7") in counter.requests and ("GET", "/things/9") in counter.requests

    def where(case_id: str) -> tuple[str, str] | None:
        failure = results[case_id].failure
        return None if failure is None else (failure.stage, failure.reason)

    # judged as the plan gate judges it: the expected target is not in the Top-K
    assert where("wrong") == ("search", "expected_target_absent")
    assert results["wrong"].search is not None and results["wrong"].search["hit"] is False
    assert where("unknown") == ("search", "expected_target_unknown")
    assert where("no-env") == ("execute", "environment_missing")
    assert where("nothing") == ("plan", "plan_failed")  # no target to plan for, as in the plan gate
    assert results["nothing"].plan is not None and results["nothing"].target_selector is not None
    assert counter.count == 2


def test_an_unexpected_error_is_an_error_case_and_the_run_goes_on(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/boom":
            raise RuntimeError("transport bug")
        return httpx.Response(200, json={"data": 1})

    tools = {"boom": tool("boom", "GET", "/boom"), "fine": tool("fine", "GET", "/fine")}
    cases = [case("boom"), case("fine", assertions=(a("json_path_exists", path="$.data"),))]
    plans = {"boom": plan(step("boom")), "fine": plan(step("fine"))}
    report, results, _c, _l = execute(
        tmp_path,
        cases,
        tools,
        env("http://api.test", concurrency=4),
        plans=plans,
        transport=httpx.MockTransport(handler),
    )
    assert (results["boom"].status, results["boom"].failure and results["boom"].failure.reason) == (
        "error",
        "http_error",
    )
    assert "RuntimeError: transport bug" in (
        results["boom"].failure.message if results["boom"].failure else ""
    )
    assert results["fine"].status == "passed"
    assert report.metrics["structured_failure_rate"] == 0.0


def _interrupting_transport(seen: list[str]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.url.path == "/orders/O-1/slow":
            raise KeyboardInterrupt  # what Ctrl-C looks like in the middle of a request
        return httpx.Response(201 if request.method == "POST" else 200, json={"data": {"orderId": "O-1"}})

    return httpx.MockTransport(handler)


def _interrupted_case() -> tuple[dict[str, Tool], Case, Plan]:
    tools = {
        "create": tool("create", "POST", "/orders", params=(param("n", "body"),), body={"type": "object"}),
        "slow": tool("slow", "GET", "/orders/{id}/slow", params=(param("id", "path", required=True),)),
        "fine": tool("fine", "GET", "/fine"),
    }
    c = case(
        "interrupted",
        mutation_safety="allow_mutation",
        captures=(Capture("orderId", "$.data.orderId"),),
        cleanup=(CleanupStep(method="DELETE", path="/orders/{id}", arguments={"id": "${captures.orderId}"}),),
        assertions=(a("http_status", in_=[200]),),
    )
    return tools, c, plan(step("create", n=1), step("slow", {"id": {"step": 0, "path": "$.data.orderId"}}))


@pytest.mark.parametrize("concurrency", [1, 2])
def test_ctrl_c_runs_cleanup_then_reraises(tmp_path: Path, concurrency: int) -> None:
    seen: list[str] = []
    tools, interrupted, p = _interrupted_case()
    others = [case(f"other-{i}") for i in range(6)]
    cases = [interrupted, *others]
    plans = {"interrupted": p} | {c.id: plan(step("fine")) for c in others}
    cfg = config(
        tmp_path, {"dev": env("http://api.test", allowed_hosts=("api.test",), concurrency=concurrency)}
    )
    ctx = context(cfg, tools, plans=plans)
    ctx.execute.client = make_run_client(transport=_interrupting_transport(seen))
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    with pytest.raises(KeyboardInterrupt):
        try:
            run(ctx, cases, results)
        finally:
            ctx.execute.close()
    assert [s for s in seen if "O-1" in s or s == "POST /orders"] == [
        "POST /orders",
        "GET /orders/O-1/slow",
        "DELETE /orders/O-1",
    ]
    record = results["interrupted"].to_dict()
    assert record["status"] == "skipped" and record["failure"]["reason"] == "cancelled"
    assert record["execute"]["cleanup"] == [
        {
            "tool": None,
            "method": "DELETE",
            "path": "/orders/O-1",
            "status": 200,
            "latency_ms": record["execute"]["cleanup"][0]["latency_ms"],
            "bytes": 26,
            "outcome": "passed",
        }
    ]
    for other in others:  # every other case either ran to the end or says it did not run
        result = results[other.id]
        assert result.status in ("passed", "skipped") and result.execute is not None


def test_a_real_sigint_with_cases_in_flight_on_the_pool(tmp_path: Path) -> None:
    import os
    import signal
    import threading
    import time as _time

    seen: list[str] = []
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            seen.append(f"{request.method} {request.url.path}")
        if request.url.path == "/orders/O-1/slow":
            os.kill(
                os.getpid(), signal.SIGINT
            )  # Ctrl-C arrives in the main thread while this case is in flight
            _time.sleep(0.2)
        elif request.url.path == "/fine":
            _time.sleep(0.05)
        return httpx.Response(201 if request.method == "POST" else 200, json={"data": {"orderId": "O-1"}})

    tools, interrupted, p = _interrupted_case()
    others = [case(f"other-{i}") for i in range(40)]
    cases = [interrupted, *others]
    plans = {"interrupted": p} | {c.id: plan(step("fine")) for c in others}
    cfg = config(tmp_path, {"dev": env("http://api.test", allowed_hosts=("api.test",), concurrency=2)})
    ctx = context(cfg, tools, plans=plans)
    ctx.execute.client = make_run_client(transport=httpx.MockTransport(handler))
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    with pytest.raises(KeyboardInterrupt):
        try:
            run(ctx, cases, results)
        finally:
            ctx.execute.close()
    # the case in flight finished its request and ran its cleanup; cases not started say so
    assert "DELETE /orders/O-1" in seen, seen
    assert results["interrupted"].to_dict()["execute"]["cleanup"][0]["outcome"] == "passed"
    skipped = [r for r in results.values() if r.status == "skipped"]
    assert skipped and all(r.execute == {"skipped": "not run: interrupted by Ctrl-C"} for r in skipped)
    assert all(r.execute is not None for r in results.values())


def test_a_second_ctrl_c_still_lets_the_case_in_flight_clean_up(tmp_path: Path) -> None:
    import os
    import signal
    import threading
    import time as _time

    seen: list[str] = []
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            seen.append(f"{request.method} {request.url.path}")
        if request.url.path == "/orders/O-1/slow":
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C ...
            _time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGINT)  # ... and again, while qlab waits for this case to clean up
            _time.sleep(0.3)
        return httpx.Response(201 if request.method == "POST" else 200, json={"data": {"orderId": "O-1"}})

    tools, interrupted, p = _interrupted_case()
    cfg = config(tmp_path, {"dev": env("http://api.test", allowed_hosts=("api.test",), concurrency=4)})
    ctx = context(cfg, tools, plans={"interrupted": p, "other": plan(step("fine"))})
    ctx.execute.client = make_run_client(transport=httpx.MockTransport(handler))
    cases = [interrupted, case("other")]
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    with pytest.raises(KeyboardInterrupt):
        try:
            run(ctx, cases, results)
        finally:
            ctx.execute.close()
    assert "DELETE /orders/O-1" in seen, seen
    assert results["interrupted"].to_dict()["execute"]["cleanup"][0]["outcome"] == "passed"


def test_ctrl_c_during_cleanup_sends_the_cleanup_again(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "DELETE" and seen.count("DELETE /orders/O-1") == 1:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the cleanup request
        return httpx.Response(201 if request.method == "POST" else 200, json={"data": {"orderId": "O-1"}})

    tools, interrupted, _p = _interrupted_case()
    cfg = config(tmp_path, {"dev": env("http://api.test", allowed_hosts=("api.test",), concurrency=1)})
    ctx = context(cfg, tools, plans={"interrupted": plan(step("create", n=1))})
    ctx.execute.client = make_run_client(transport=httpx.MockTransport(handler))
    c = interrupted
    results = {c.id: CaseResult(c.id, c.suite, c.mode)}
    with pytest.raises(KeyboardInterrupt):
        try:
            run(ctx, [c], results)
        finally:
            ctx.execute.close()
    assert seen == ["POST /orders", "DELETE /orders/O-1", "DELETE /orders/O-1"]
    record = results["interrupted"].to_dict()["execute"]
    assert [r["outcome"] for r in record["cleanup"]] == ["passed"]


# ---------------------------------------------------------------------------------------------- hostile API


def test_an_allowed_mutation_redirected_to_another_host_is_refused_and_nothing_reaches_it(
    tmp_path: Path,
) -> None:
    """The case has allow_mutation, cleanup and assertions, and its host is allowlisted; the API answers the POST
    with 307/308 to another origin. Nothing is sent there, the case fails ``redirect_refused``, the cleanup still
    runs on the allowed host, and the host_allowlist guard reports the refusal."""
    with servers.HopServer() as other, servers.HopServer(redirect_to=other.url) as api:
        tools = {
            "order307": tool("order307", "POST", "/redirect/307"),
            "order308": tool("order308", "POST", "/redirect/308"),
        }
        cleanup = (CleanupStep(method="DELETE", path="/orders/1"),)
        cases = [
            case(
                cid,
                mutation_safety="allow_mutation",
                assertions=(a("http_status", in_=[201]),),
                cleanup=cleanup,
            )
            for cid in tools
        ]
        plans = {cid: plan(step(cid)) for cid in tools}
        dev = env(api.url, allowed_hosts=(f"127.0.0.1:{api.port}",))
        report, results, _ctx, _log = execute(tmp_path, cases, tools, dev, plans=plans)
        assert other.requests() == []
        sent = [(m, p) for m, p, _h in api.requests()]
    for cid in tools:
        result = results[cid]
        assert (result.status, result.failure and result.failure.reason) == ("failed", "redirect_refused")
        assert f"redirect to 127.0.0.1:{other.port}" in result.failure.message  # type: ignore[union-attr]
        assert result.execute["cleanup"][0]["outcome"] == "passed", result.execute  # type: ignore[index]
    assert sorted(sent) == sorted(
        [("POST", "/redirect/307"), ("POST", "/redirect/308"), *[("DELETE", "/orders/1")] * 2]
    )
    guards = {g.guard: g for g in report.guards}
    assert not guards["host_allowlist"].passed and "order307" in guards["host_allowlist"].message
    assert [s.condition for s in report.stops] == ["mutation_unsafe"]


def test_userinfo_in_base_url_never_replaces_the_profile_and_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    password = "pw-CANARY-userinfo-31337"
    monkeypatch.setenv("QLAB_TEST_TOKEN", DEMO_TOKEN)
    with servers.HopServer() as api:
        dev = env(f"http://alice:{password}@127.0.0.1:{api.port}", auth="demo_bearer")
        cases = [case("read", assertions=(a("json_path_equals", path="$.data.path", equals="/nope"),))]
        _report, results, ctx, log = execute(
            tmp_path,
            cases,
            {"get": tool("get", path="/x")},
            dev,
            plans={"read": plan(step("get"))},
            profiles=[BEARER],
        )
        ((_method, _path, headers),) = api.requests()
    assert headers["Authorization"] == f"Bearer {DEMO_TOKEN}"  # the profile's bearer, not Basic from userinfo
    assert password in ctx.secrets and f"alice:{password}" in ctx.secrets
    written = json.dumps(results["read"].to_dict()) + "\n".join(log)
    assert password not in written and "alice:" not in written, written
    # without a profile, the userinfo is the request's Basic credentials
    with servers.HopServer() as api:
        dev = env(f"http://alice:{password}@127.0.0.1:{api.port}")
        execute(
            tmp_path,
            [case("plain")],
            {"get": tool("get", path="/x")},
            dev,
            plans={"plain": plan(step("get"))},
        )
        ((_method, _path, headers),) = api.requests()
    assert headers["Authorization"].startswith("Basic ")


def test_a_slow_drip_ends_as_timeout_at_timeout_sec(tmp_path: Path) -> None:
    with servers.HopServer() as api:
        cases = [case("drip", timeout_sec=0.5, assertions=(a("http_status", in_=[200]),))]
        started = __import__("time").monotonic()
        _report, results, _ctx, _log = execute(
            tmp_path,
            cases,
            {"get": tool("get", path="/drip/60/0.1")},
            env(api.url),
            plans={"drip": plan(step("get"))},
        )
        took = __import__("time").monotonic() - started
    assert results["drip"].failure is not None and results["drip"].failure.reason == "timeout", results[
        "drip"
    ].to_dict()
    assert took < 2.0, took


# ------------------------------------------------------------------------------- operation-level security


def test_operation_level_security_picks_the_profiles_each_request_sends(
    tmp_path: Path, httpbin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Petstore's shape: most operations want the OAuth token, getInventory wants the API key, a public one
    (``security: []``) wants nothing, one wants key and token together; the case records say which was sent
    (the next test checks the requests themselves)."""
    monkeypatch.setenv("PET_TOKEN", "tok-CANARY-1")
    monkeypatch.setenv("PET_KEY", "key-CANARY-2")
    profiles = [
        AuthProfile("petstore_auth", "bearer", token_env="PET_TOKEN", security_scheme="petstore_auth"),
        AuthProfile("api_key", "api_key", header="api_key", value_env="PET_KEY", security_scheme="api_key"),
    ]
    tools = {
        name: tool(name, path="/headers", security=security)
        for name, security in (
            ("findPets", ({"petstore_auth": ("read:pets",)},)),
            ("getInventory", ({"api_key": ()},)),
            ("public", ()),
            ("both", ({"api_key": (), "petstore_auth": ()},)),
            ("either", ({"unknown_scheme": ()}, {"api_key": ()})),
        )
    }
    cases = [case(name) for name in tools]
    plans = {name: plan(step(name)) for name in tools}
    environment = env(httpbin_url, auth="petstore_auth")  # what qlab init writes: the most required scheme
    _, results, _, _ = execute(tmp_path, cases, tools, environment, plans=plans, profiles=profiles,
                               collection_auth="petstore_auth")  # fmt: skip
    sent = {}
    for name, result in results.items():
        assert result.status == "passed", (name, result.failure)
        readiness = result.auth_readiness or {}
        sent[name] = (readiness.get("profile"), readiness.get("status"), readiness.get("headers"))
    assert sent == {
        "findPets": ("petstore_auth", "ready", ["Authorization"]),
        "getInventory": ("api_key", "ready", ["api_key"]),
        "public": (None, "not_required", []),
        "both": ("api_key+petstore_auth", "ready", ["Authorization", "api_key"]),
        "either": ("api_key", "ready", ["api_key"]),
    }


def test_operation_level_security_on_the_wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PET_TOKEN", "tok-1")
    monkeypatch.setenv("PET_KEY", "key-2")
    seen: dict[str, dict[str, str]] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen[request.url.path] = {k.lower(): v for k, v in request.headers.items()}
        return httpx.Response(200, json={})

    profiles = [
        AuthProfile("petstore_auth", "bearer", token_env="PET_TOKEN", security_scheme="petstore_auth"),
        AuthProfile("api_key", "api_key", header="api_key", value_env="PET_KEY", security_scheme="api_key"),
    ]
    tools = {
        "findPets": tool("findPets", path="/pets", security=({"petstore_auth": ()},)),
        "getInventory": tool("getInventory", path="/store/inventory", security=({"api_key": ()},)),
        "logout": tool("logout", path="/user/logout", security=()),
    }
    cases = [case(name) for name in tools]
    plans = {name: plan(step(name)) for name in tools}
    execute(tmp_path, cases, tools, env("http://127.0.0.1:9", auth="petstore_auth"), plans=plans,
            profiles=profiles, transport=httpx.MockTransport(handler))  # fmt: skip
    assert seen["/pets"].get("authorization") == "Bearer tok-1" and "api_key" not in seen["/pets"]
    assert seen["/store/inventory"].get("api_key") == "key-2"
    assert "authorization" not in seen["/store/inventory"]
    assert "authorization" not in seen["/user/logout"] and "api_key" not in seen["/user/logout"]


def test_timeout_sec_is_one_deadline_across_all_steps_of_the_plan(tmp_path: Path) -> None:
    """Rule (issue 36, 8): three steps of 0.6 s each under ``timeout_sec: 1``: the case times out during its second
    step and its third is never sent; a budget per step (1 s each) would have let all three pass."""
    with servers.CountingServer(slow_sec=0.6) as api:
        tools = {name: tool(name, path=f"/slow/{name}") for name in ("a", "b", "c")}
        cases = [case("three", timeout_sec=1.0)]
        started = __import__("time").monotonic()
        _report, results, _ctx, _log = execute(
            tmp_path,
            cases,
            tools,
            env(api.url, retries=0),
            plans={"three": plan(step("a"), step("b"), step("c"))},
        )
        took = __import__("time").monotonic() - started
        sent = [path for _, path in api.requests]
    failure = results["three"].failure
    assert failure is not None and failure.reason == "timeout", results["three"].to_dict()
    assert "/slow/c" not in sent and took < 1.5, (sent, took)


def test_a_later_execute_gate_fetches_tokens_with_an_open_client(tmp_path: Path) -> None:
    """Each execute gate closes the run's HTTP client when it ends; the auth resolver, kept for the run with its
    cached tokens, must fetch a later gate's tokens with that gate's client, not the closed one."""
    ctx = context(config(tmp_path, {"dev": env("http://127.0.0.1:9")}), demo_tools())
    first = _resolver(ctx)
    ctx.execute.close()
    second = _resolver(ctx)
    assert second is first and second.http is ctx.execute.client
    assert second.http is not None and not second.http.is_closed

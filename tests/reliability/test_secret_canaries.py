"""Secret canaries: unique tokens planted in every kind of auth profile, in a Cookie header, in a Set-Cookie the
API sends and in an OAuth2 token endpoint's answer, echoed back in response bodies (httpbin ``/headers``,
``/anything``, ``/cookies/set``; the fault server's ``/echo`` and ``/login``), through a whole ``qlab run``.

Afterwards every file the run wrote (result JSON, JUnit, summary, run log, dev-server log, the collection cache,
GitHub's step summary and outputs, an HTML report rendered from the result) and the console (stdout + stderr,
in plain and in GitHub Actions mode) are searched for every canary, whole and in part: zero hits.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qlab.scrub import find_leaks, secret_variants
from reliability.project import Finished, Op, fault_server_env, qlab, result_cases, write_project
from reliability.servers_faults import FaultServer, Secrets
from servers import free_port


def canary(kind: str) -> str:
    return f"CANARY{kind}x{secrets.token_hex(10)}"


# env var -> value; one per secret a profile reads (the planted tokens)
CANARIES = {
    "CANARY_BEARER": canary("bearer"),
    "CANARY_APIKEY_HEADER": canary("apikeyh"),
    "CANARY_APIKEY_QUERY": canary("apikeyq"),
    "CANARY_USER": canary("user"),
    "CANARY_PASS": canary("pass"),
    "CANARY_CLIENT_ID": canary("clientid"),
    "CANARY_CLIENT_SECRET": canary("clientsecret"),
    "CANARY_HEADER": canary("header"),
    "CANARY_COOKIE": canary("cookie"),
}
COMMAND_TOKEN = canary("command")  # printed by the bearer profile's token_command
OAUTH_TOKEN = canary("oauthtoken")  # handed out by the token endpoint
SET_COOKIE = canary("setcookie")  # sent by the API in Set-Cookie (fault server /login)
HTTPBIN_COOKIE = canary("binsetcookie")  # httpbin /cookies/set?session=… answers with this Set-Cookie
ALL = [*CANARIES.values(), COMMAND_TOKEN, OAUTH_TOKEN, SET_COOKIE, HTTPBIN_COOKIE]
# the derived forms a secret takes on the wire: Basic credentials and the OAuth2 client's Basic header
DERIVED = [
    base64.b64encode(f"{CANARIES['CANARY_USER']}:{CANARIES['CANARY_PASS']}".encode()).decode(),
    base64.b64encode(f"{CANARIES['CANARY_CLIENT_ID']}:{CANARIES['CANARY_CLIENT_SECRET']}".encode()).decode(),
]


def _profiles(token_file: Path, token_url: str) -> dict[str, dict[str, Any]]:
    return {
        "bearer_env": {"type": "bearer", "token_env": "CANARY_BEARER"},
        "bearer_command": {"type": "bearer", "token_command": f"cat {token_file}"},
        "api_key_header": {"type": "api_key", "header": "X-API-Key", "value_env": "CANARY_APIKEY_HEADER"},
        "api_key_query": {"type": "api_key", "query": "api_key", "value_env": "CANARY_APIKEY_QUERY"},
        "basic": {"type": "basic", "username_env": "CANARY_USER", "password_env": "CANARY_PASS"},
        "oauth2": {
            "type": "oauth2_client_credentials",
            "token_url": token_url,
            "client_id_env": "CANARY_CLIENT_ID",
            "client_secret_env": "CANARY_CLIENT_SECRET",
            "scopes": ["read"],
        },
        "custom_headers": {
            "type": "headers",
            "headers": {"X-Session-Token": "CANARY_HEADER", "Cookie": "CANARY_COOKIE"},
        },
    }


OPS = [
    Op("echoHeaders", "GET", "/headers", "Echo the request headers back"),
    Op("echoAnything", "GET", "/anything", "Echo anything about the request"),
    Op("setCookies", "GET", "/cookies/set", "Set session cookies from the query", query=("session",)),
    Op("login", "GET", "/login", "Log in and receive a session cookie"),
    Op("echoRequest", "GET", "/echo", "Echo the full request with cookies"),
]
# failing assertions make qlab record what it saw: excerpts of the echoed bodies, the actual values
ECHO_FAILS = [
    {"type": "json_path_equals", "path": "$.headers", "equals": {}},
    {"type": "body_contains", "text": "no-such-text"},
]


def _cases(profile: str) -> list[dict[str, Any]]:
    return [
        {"id": f"{profile}-headers", "query": "Echo the request headers back", "expected_target": "echoHeaders",
         "assertions": ECHO_FAILS},
        {"id": f"{profile}-anything", "query": "Echo anything about the request", "expected_target": "echoAnything",
         "assertions": [{"type": "json_path_equals", "path": "$.args", "equals": {}},
                        {"type": "header_equals", "name": "Content-Type", "equals": "text/plain"}]},
        {"id": f"{profile}-passes", "query": "Echo the request headers back", "expected_target": "echoHeaders",
         "assertions": [{"type": "http_status", "in": [200]}]},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def token_endpoint() -> Iterator[FaultServer]:
    """The OAuth2 token endpoint (fault server in this process): checks the client, hands out OAUTH_TOKEN."""
    owned = Secrets(
        client_id=CANARIES["CANARY_CLIENT_ID"],
        client_secret=CANARIES["CANARY_CLIENT_SECRET"],
        access_token=OAUTH_TOKEN,
    )
    with FaultServer(secrets=owned) as server:
        yield server


def _run(
    tmp_path: Path, httpbin_url: str, token_endpoint: FaultServer, *, github: bool
) -> tuple[Finished, Path]:
    root = tmp_path / "project"
    root.mkdir()
    token_file = tmp_path / "token.txt"
    token_file.write_text(COMMAND_TOKEN + "\n", encoding="utf-8")
    profiles = _profiles(token_file, f"{token_endpoint.url}/oauth/token")
    environments: dict[str, Any] = {name: {"base_url": httpbin_url, "auth": name} for name in profiles}
    port = free_port()
    environments["api"] = fault_server_env(port, auth="custom_headers", sensitive_fields=["session"])
    suites: dict[str, Any] = {name: {"mode": "execute", "environment": name} for name in profiles}
    suites["api"] = {"mode": "execute", "environment": "api"}
    cases = {name: _cases(name) for name in profiles}
    cases["bearer_env"].append(
        {"id": "httpbin-set-cookie", "query": "Set session cookies from the query", "expected_target": "setCookies",
         "provided_entities": {"session": HTTPBIN_COOKIE}, "follow_redirects": False,
         "assertions": [{"type": "http_status", "in": [302]}]}
    )  # fmt: skip
    cases["api"] = [
        {"id": "set-cookie", "query": "Log in and receive a session cookie", "expected_target": "login",
         "assertions": [{"type": "json_path_equals", "path": "$.data", "equals": {}}]},
        {"id": "cookie-echo", "query": "Echo the full request with cookies", "expected_target": "echoRequest",
         "assertions": [{"type": "json_path_equals", "path": "$.cookies", "equals": {}}]},
    ]  # fmt: skip
    # the "-fails" cases fail on purpose (their failure output is what may leak): the execute gate tolerates
    # them, so the run goes on to the learn gate's scrub check of everything written
    gates = [
        {"name": "build", "stage": "build"},
        {"name": "execute", "stage": "execute", "suites": list(suites), "max_failures": 100},
        {"name": "learn", "stage": "learn", "stop_if": ["scrub_failed"]},
    ]
    config = write_project(
        root,
        ops=OPS,
        suites=suites,
        cases=cases,
        environments=environments,
        auth_profiles=profiles,
        gates=gates,
    )
    env = {**CANARIES, "FAULT_COOKIE_VALUE": SET_COOKIE}
    if github:
        env |= {
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "github-summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "github-output.txt"),
        }
    done = qlab("run", "--config", str(config), cwd=root, env=env)
    return done, root


def _forms(secret: str, *, partial: bool) -> set[bytes]:
    """The secret in every encoding qlab could write it; with ``partial``, also the first 12 of its 20 random
    hex digits (a secret cut in half by truncation leaks too)."""
    forms = {v.encode() for v in secret_variants(secret)}
    forms.add(base64.b64encode(secret.encode()))
    if partial:
        random_part = secret.rpartition("x")[2]
        assert len(random_part) == 20, secret
        forms.add(random_part[:12].encode())
    return forms


def _hits(blob: bytes) -> list[str]:
    needles = [(s, _forms(s, partial=True)) for s in ALL] + [(s, _forms(s, partial=False)) for s in DERIVED]
    return [secret for secret, forms in needles if any(form in blob for form in forms)]


@pytest.mark.parametrize("github", [False, True], ids=["console", "github-actions"])
def test_no_canary_reaches_any_output_or_the_console(
    tmp_path: Path, httpbin_url: str, token_endpoint: FaultServer, github: bool
) -> None:
    done, root = _run(tmp_path, httpbin_url, token_endpoint, github=github)
    assert done.code in (0, 1), done.console
    assert "Traceback" not in done.console and "internal error" not in done.console, done.console
    out = root / "out"
    cases = result_cases(out / "result.json")

    # the canaries really went out and came back: every profile was ready and every echo was seen
    for cid, record in cases.items():
        if cid.endswith("-passes") or cid == "httpbin-set-cookie":
            assert record["status"] == "passed", json.dumps(record)[:2000]
        else:
            assert (record["status"], record["failure"]["reason"]) == ("failed", "assertion_failed"), record
        assert (record.get("auth_readiness") or {}).get("status") == "ready", record
    assert token_endpoint.hits("/oauth/token"), "the OAuth2 token endpoint was never asked"
    assert "[REDACTED]" in (out / "result.json").read_text(encoding="utf-8")

    # an HTML report rendered from the result, as CI would publish it
    report = qlab("report", str(out / "result.json"), "--html", str(out / "report.html"), cwd=root)
    assert report.code == 0, report.console

    # every file under the project and beside it, except the inputs that hold a canary on purpose
    inputs = {tmp_path / "token.txt", root / "cases" / "bearer_env.yaml"}
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p not in inputs)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    expected = {"project/out/result.json", "project/out/junit.xml", "project/out/summary.md", "project/out/run.log",
                "project/out/server-api.log", "project/out/report.html"}  # fmt: skip
    assert expected <= names, names
    if github:
        assert {"github-summary.md", "github-output.txt"} <= names, names
    leaks = {p.relative_to(tmp_path).as_posix(): _hits(p.read_bytes()) for p in written}
    assert {k: v for k, v in leaks.items() if v} == {}
    assert _hits((done.console + report.console).encode()) == []
    # the product's own scrub check agrees (every encoded form, recursively)
    assert find_leaks(written, [*ALL, *DERIVED]) == []
    learn = json.loads((out / "result.json").read_text(encoding="utf-8"))["gates"]
    assert next(g for g in learn if g["name"] == "learn")["status"] == "passed"

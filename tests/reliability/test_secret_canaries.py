"""Secret canaries: unique tokens planted in every kind of auth profile, in a Cookie header (as one pair of a
``sid=…; theme=dark`` string), in a Set-Cookie the API sends, in an OAuth2 token endpoint's answer, in a
``base_url``'s userinfo, in a failing token command's stderr, in a sensitive field's value (a JSON number, under
another spelling of the field's name), in the text of the engine under test (its plan diagnostics and an error
it raises) and in a dev server that logs the credentials it receives; echoed back in response bodies (httpbin
``/headers``, ``/anything``, ``/cookies/set``; the fault server's ``/echo``, ``/login``, ``/profile``, and
``/encoded``: a header's token as hex, every-byte ``%XX`` in mixed case, cut by a line break, in wrapped base64),
through a whole ``qlab run``. Redirects point reads and a mutation at a server of another origin.

Afterwards every file the run wrote (result JSON, JUnit, summary, run log, dev-server log, the collection cache,
GitHub's step summary and outputs, the HTML, Markdown and JUnit reports rendered from the result) and the
console (stdout + stderr, in plain and in GitHub Actions mode) are searched for every canary, whole, in part,
base64-, URL-, hex- and %XX-encoded, in any letter case and across line breaks: zero hits. And the server of the other origin saw no mutation and no credential.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from qlab.adapters.scrub import find_leaks, secret_variants
from reliability.project import Finished, Op, fault_server_env, qlab, result_cases, write_project
from reliability.servers_faults import FaultServer, Secrets
from servers import HopServer, free_port


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
COOKIE_PAIR = canary("cookiepair")  # the value of sid= inside the Cookie header string
CANARIES["CANARY_COOKIE"] = f"sid={COOKIE_PAIR}; theme=dark"  # the env var holds the whole header value
USERINFO = canary("userinfo")  # the password in base_url's userinfo (http://qlab:<it>@host)
CANARIES["CANARY_USERINFO"] = USERINFO
COMMAND_TOKEN = canary("command")  # printed by the bearer profile's token_command
COMMAND_STDERR = canary("cmdstderr")  # printed on stderr by a failing token_command
OAUTH_TOKEN = canary("oauthtoken")  # handed out by the token endpoint
SET_COOKIE = canary("setcookie")  # sent by the API in Set-Cookie (fault server /login)
HTTPBIN_COOKIE = canary("binsetcookie")  # httpbin /cookies/set?session=… answers with this Set-Cookie
USER_ID = "90817263545463"  # a sensitive field's value, sent as a JSON number (fault server /profile)
PLANTED = [c for c in CANARIES.values() if c.startswith("CANARY")]
ALL = [*PLANTED, COOKIE_PAIR, COMMAND_TOKEN, COMMAND_STDERR, OAUTH_TOKEN, SET_COOKIE, HTTPBIN_COOKIE]
# the derived forms a secret takes on the wire: Basic credentials (a profile's, the OAuth2 client's, the
# userinfo's when no profile sets Authorization)
DERIVED = [
    base64.b64encode(f"{CANARIES['CANARY_USER']}:{CANARIES['CANARY_PASS']}".encode()).decode(),
    base64.b64encode(f"{CANARIES['CANARY_CLIENT_ID']}:{CANARIES['CANARY_CLIENT_SECRET']}".encode()).decode(),
    base64.b64encode(f"qlab:{USERINFO}".encode()).decode(),
]
NUMBERS = [USER_ID]  # matched as whole numbers (no partial form: any 12 digits would be noise)


def _profiles(token_file: Path, stderr_file: Path, token_url: str) -> dict[str, dict[str, Any]]:
    return {
        "bearer_env": {"type": "bearer", "token_env": "CANARY_BEARER"},
        "bearer_command": {"type": "bearer", "token_command": f"cat {token_file}"},
        "bearer_failing": {"type": "bearer", "token_command": f"cat {stderr_file} >&2; exit 1"},
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
    Op("showProfile", "GET", "/profile", "Show the profile of the signed in user"),
    Op("showEncoded", "GET", "/encoded", "Show the session token in every encoding"),
    Op(
        "redirectTo",
        "GET",
        "/redirect-to",
        "Follow the redirect to another address",
        query=("url", "status_code"),
    ),
    Op(
        "placeOrder",
        "POST",
        "/redirect-to",
        "Place an order through the redirecting checkout",
        query=("url", "status_code"),
    ),
    Op("explode", "GET", "/explode", "Explode the engine on purpose"),
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


# The engine under test, as a team would write one in Python: qlab's built-in engine whose plan diagnostics carry
# the token it was configured with, and which fails with the token in its message on one query.
LEAKY_ENGINE = """
import dataclasses, os
from qlab.engine.builtin import BuiltinEngine

class Leaky:
    name = "leaky"

    def __init__(self, collection):
        self.inner = BuiltinEngine(collection)

    def search(self, query, *, k):
        if "Explode" in query:
            raise RuntimeError("backend refused token " + os.environ["CANARY_BEARER"])
        return self.inner.search(query, k=k)

    def select(self, query, result, *, entities, llm_target):
        return self.inner.select(query, result, entities=entities, llm_target=llm_target)

    def plan(self, query, target, *, entities):
        plan = self.inner.plan(query, target, entities=entities)
        note = "engine used token " + os.environ["CANARY_BEARER"]
        return dataclasses.replace(plan, diagnostics=(*plan.diagnostics, note))

def make(collection):
    return Leaky(collection)
"""


def _run(
    tmp_path: Path, httpbin_url: str, token_endpoint: FaultServer, hop: HopServer, *, github: bool
) -> tuple[Finished, Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "leaky_engine.py").write_text(LEAKY_ENGINE, encoding="utf-8")
    token_file = tmp_path / "token.txt"
    token_file.write_text(COMMAND_TOKEN + "\n", encoding="utf-8")
    stderr_file = tmp_path / "stderr.txt"
    stderr_file.write_text(f"refresh failed for {COMMAND_STDERR}\n", encoding="utf-8")
    profiles = _profiles(token_file, stderr_file, f"{token_endpoint.url}/oauth/token")
    environments: dict[str, Any] = {name: {"base_url": httpbin_url, "auth": name} for name in profiles}
    bin_host = httpbin_url.removeprefix("http://")
    with_userinfo = f"http://qlab:${{CANARY_USERINFO}}@{bin_host}"  # interpolated from the environment
    environments["userinfo"] = {"base_url": with_userinfo, "auth": "bearer_env"}
    environments["userinfo_basic"] = {"base_url": with_userinfo}
    environments["redirects"] = {"base_url": httpbin_url, "auth": "api_key_header",
                                 "allowed_hosts": [bin_host, f"127.0.0.1:{hop.port}"]}  # fmt: skip
    port = free_port()
    environments["api"] = fault_server_env(
        port,
        auth="custom_headers",
        sensitive_fields=["session", "userId"],  # the API writes user_id and user-id
    )
    suites: dict[str, Any] = {name: {"mode": "execute", "environment": name} for name in environments}
    suites["engine"] = {"mode": "plan"}
    cases = {name: _cases(name) for name in profiles}
    cases["bearer_env"].append(
        {"id": "httpbin-set-cookie", "query": "Set session cookies from the query", "expected_target": "setCookies",
         "provided_entities": {"session": HTTPBIN_COOKIE}, "follow_redirects": False,
         "assertions": [{"type": "http_status", "in": [302]}]}
    )  # fmt: skip
    cases["userinfo"] = _cases("userinfo")[:1]
    cases["userinfo_basic"] = _cases("userinfo_basic")[:1]
    cases["redirects"] = [
        {"id": "read-redirect", "query": "Follow the redirect to another address", "expected_target": "redirectTo",
         "provided_entities": {"url": f"{hop.url}/landed", "status_code": "302"},
         "assertions": [{"type": "http_status", "in": [200]}]},
        {"id": "post-redirect", "query": "Place an order through the redirecting checkout",
         "expected_target": "placeOrder", "mutation_safety": "allow_mutation",
         "provided_entities": {"url": f"{hop.url}/orders", "status_code": "307"},
         "assertions": [{"type": "http_status", "in": [201]}],
         "cleanup": [{"method": "DELETE", "path": "/anything/cleanup", "expect_status": [200]}]},
    ]  # fmt: skip
    cases["api"] = [
        {"id": "set-cookie", "query": "Log in and receive a session cookie", "expected_target": "login",
         "assertions": [{"type": "json_path_equals", "path": "$.data", "equals": {}}]},
        {"id": "cookie-echo", "query": "Echo the full request with cookies", "expected_target": "echoRequest",
         "assertions": [{"type": "json_path_equals", "path": "$.cookies", "equals": {}}]},
        {"id": "profile", "query": "Show the profile of the signed in user", "expected_target": "showProfile",
         "assertions": [{"type": "json_path_equals", "path": "$.data.owner", "equals": 0},
                        {"type": "json_path_equals", "path": "$.data", "equals": {}}]},
        {"id": "explode", "query": "Explode the engine on purpose", "expected_target": "explode"},
        {"id": "encoded", "query": "Show the session token in every encoding", "expected_target": "showEncoded",
         "assertions": [{"type": "json_path_equals", "path": "$.data", "equals": {}}]},
    ]  # fmt: skip
    cases["engine"] = [
        {
            "id": "engine-plan",
            "query": "Show the profile of the signed in user",
            "expected_target": "showProfile",
        }
    ]
    # some cases fail on purpose (their failure output is what may leak): the gates tolerate them, so the run goes
    # on to the learn gate's scrub check of everything written
    executes = [name for name, s in suites.items() if s["mode"] == "execute"]
    gates = [
        {"name": "build", "stage": "build"},
        {"name": "plan", "stage": "plan", "suites": ["engine"], "max_failures": 100},
        {"name": "execute", "stage": "execute", "suites": executes, "max_failures": 100},
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
        extra={"engine": {"type": "python", "object": "leaky_engine:make"}},
    )
    # the dev server reads these from the environment qlab hands it: its cookie, the user id it serves, and
    # whether to log the credentials it receives
    env = {**CANARIES, "FAULT_COOKIE_VALUE": SET_COOKIE, "FAULT_USER_ID": USER_ID, "FAULT_LOG_HEADERS": "1"}
    if github:
        env |= {
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "github-summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "github-output.txt"),
        }
    done = qlab("run", "--config", str(config), cwd=root, env=env)
    return done, root


def _forms(secret: str, *, partial: bool) -> set[bytes]:
    """The secret in every encoding qlab could write it (raw, JSON, URL, HTML, base64 at any alignment) and, as
    the console search adds, URL-encoded and base64 whole; with ``partial``, also the first 12 of its 20 random
    hex digits (a secret cut in half by truncation leaks too)."""
    forms = {v.encode() for v in secret_variants(secret)}
    forms |= {base64.b64encode(secret.encode()), quote(secret, safe="").encode()}
    if partial:
        random_part = secret.rpartition("x")[2]
        assert len(random_part) == 20, secret
        forms.add(random_part[:12].encode())
    return forms


def _needles() -> list[tuple[str, set[bytes] | re.Pattern[bytes]]]:
    return (
        [(s, _forms(s, partial=True)) for s in ALL]
        + [(s, _forms(s, partial=False)) for s in DERIVED]
        + [(n, re.compile(rb"(?<![0-9])" + n.encode() + rb"(?![0-9])")) for n in NUMBERS]
    )


_BREAK = re.compile(rb"(?:\r\n|\r|\n|\\r\\n|\\n|\\r)[ \t]*")


def _hits(blob: bytes) -> list[str]:
    """The secrets in ``blob``, in any of their forms, also in any letter case (hex and ``%XX`` echoes) and across
    line breaks (a wrapped token, a base64 blob at 76 columns)."""
    lower, joined = blob.lower(), _BREAK.sub(b"", blob)
    found = []
    for secret, forms in _needles():
        if isinstance(forms, re.Pattern):
            hit = forms.search(blob) is not None or forms.search(joined) is not None
        else:
            hit = any(f in blob or f.lower() in lower or f in joined for f in forms)
        if hit:
            found.append(secret)
    return found


@pytest.fixture
def hop() -> Iterator[HopServer]:
    """A server of another origin, where the redirects point: it must see no mutation and no credential."""
    with HopServer() as server:
        yield server


@pytest.mark.parametrize("github", [False, True], ids=["console", "github-actions"])
def test_no_canary_reaches_any_output_or_the_console(
    tmp_path: Path, httpbin_url: str, token_endpoint: FaultServer, hop: HopServer, github: bool
) -> None:
    done, root = _run(tmp_path, httpbin_url, token_endpoint, hop, github=github)
    assert done.code in (0, 1), done.console
    assert "Traceback" not in done.console and "internal error" not in done.console, done.console
    out = root / "out"
    cases = result_cases(out / "result.json")

    # the canaries really went out and came back: every profile was ready and every echo was seen
    expected = {
        "httpbin-set-cookie": ("passed", None),
        "read-redirect": ("passed", None),  # followed to the other origin (allowlisted), credentials dropped
        "post-redirect": ("failed", "redirect_refused"),  # a mutation is never redirected
        "explode": ("error", "engine_error"),
        **{
            f"bearer_failing-{k}": ("failed", "auth_header_resolution_failed")
            for k in ("headers", "anything", "passes")
        },
    }
    for cid, record in cases.items():
        if cid == "engine-plan":
            assert record["plan"]["diagnostics"], record  # the engine's text was stored, scrubbed
            continue
        want = expected.get(
            cid, ("passed", None) if cid.endswith("-passes") else ("failed", "assertion_failed")
        )
        assert (record["status"], (record.get("failure") or {}).get("reason")) == want, (cid, record)
        ready = "not_ready" if cid.startswith("bearer_failing") else "ready"
        if cid not in ("explode", "userinfo_basic-headers"):
            assert (record.get("auth_readiness") or {}).get("status") == ready, (cid, record)
    assert token_endpoint.hits("/oauth/token"), "the OAuth2 token endpoint was never asked"
    assert "[REDACTED]" in (out / "result.json").read_text(encoding="utf-8")

    # the server of the other origin: the followed read arrived without any credential, the mutation never did
    seen = hop.requests()
    assert [(m, p) for m, p, _h in seen] == [("GET", "/landed")], seen
    assert _hits(repr(seen).encode()) == [] and CANARIES["CANARY_APIKEY_HEADER"] not in repr(seen)

    # the reports CI would publish, rendered from the result
    rendered = {"report.html": "--html", "report.md": "--markdown", "report-junit.xml": "--junit"}
    for name, flag in rendered.items():
        report = qlab("report", str(out / "result.json"), flag, str(out / name), cwd=root)
        assert report.code == 0, report.console

    # every file under the project and beside it, except the inputs that hold a canary on purpose
    inputs = {tmp_path / "token.txt", tmp_path / "stderr.txt", root / "cases" / "bearer_env.yaml",
              root / "cases" / "api.yaml"}  # fmt: skip
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p not in inputs)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    expected_files = {"project/out/result.json", "project/out/junit.xml", "project/out/summary.md",
                      "project/out/run.log", "project/out/server-api.log", *(f"project/out/{n}" for n in rendered)}  # fmt: skip
    assert expected_files <= names, names
    if github:
        assert {"github-summary.md", "github-output.txt"} <= names, names
    leaks = {p.relative_to(tmp_path).as_posix(): _hits(p.read_bytes()) for p in written}
    found = {k: v for k, v in leaks.items() if v}
    assert found == {}, (
        f"{sum(map(len, found.values()))} leak(s) of {len({s for v in found.values() for s in v})} canaries: {found}"
    )
    assert _hits(done.console.encode()) == []
    # the careless server did log its credentials; qlab's copy of its log holds none of them
    assert "request headers" in (out / "server-api.log").read_text(encoding="utf-8")
    # the product's own scrub check agrees (every encoded form, recursively)
    assert find_leaks(written, [*ALL, *DERIVED]) == []
    # the refused redirect blocks the execute gate (host_allowlist); the scrub check still ran over the outputs
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    gates = {g["name"]: g for g in result["gates"]}
    assert "guard host_allowlist (block): refused: post-redirect" in gates["execute"]["reasons"]
    assert not any("guard scrub" in r for g in gates.values() for r in g.get("reasons") or ())
    scrub = result["stages"]["learn"]["details"]["scrub"]
    assert scrub["leaks"] == 0 and scrub["secrets_checked"] >= len(ALL), scrub

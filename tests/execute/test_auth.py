from __future__ import annotations

import base64
import sys
import time
from urllib.parse import parse_qs

import httpx
import pytest

from execute.factory import tool
from qlab.execute.auth import AuthResolver, requires_auth
from qlab.execute.client import make_run_client
from qlab.project.model import AuthProfile


def _resolver(
    env: dict[str, str], *profiles: AuthProfile, client: httpx.Client | None = None
) -> AuthResolver:
    return AuthResolver({p.name: p for p in profiles}, environ=env, client=client)


def test_bearer_from_env_stores_names_only() -> None:
    r = _resolver({"TOK": "s3cret-token"}, AuthProfile("demo_bearer", "bearer", token_env="TOK"))
    res = r.preflight("demo_bearer", required=True)
    assert res.headers == {"Authorization": "Bearer s3cret-token"}
    assert res.readiness() == {
        "status": "ready",
        "profile": "demo_bearer",
        "headers": ["Authorization"],
        "reason_codes": [],
    }
    assert "s3cret-token" not in repr(res.readiness())
    assert {"s3cret-token", "Bearer s3cret-token"} <= r.secrets


@pytest.mark.parametrize("value", [None, "", "   "])
def test_unset_or_empty_env_is_auth_context_required(value: str | None) -> None:
    env = {} if value is None else {"TOK": value}
    res = _resolver(env, AuthProfile("p", "bearer", token_env="TOK")).preflight("p", required=True)
    assert res.readiness()["status"] == "not_ready"
    assert res.reason_codes == ("auth_context_required",)
    assert res.missing_env == ("TOK",)
    assert res.headers == {}


def test_profile_missing_by_name_or_absent_when_required() -> None:
    r = _resolver({}, AuthProfile("a", "bearer", token_env="T"))
    assert r.preflight("nope", required=False).reason_codes == ("auth_profile_missing",)
    assert "auth_profiles: a" in r.preflight("nope", required=False).message
    assert r.preflight(None, required=True).reason_codes == ("auth_profile_missing",)
    assert r.preflight(None, required=False).readiness() == {
        "status": "not_required",
        "profile": None,
        "headers": [],
        "reason_codes": [],
    }


def test_requires_auth() -> None:
    public, secured, optional = (
        tool("a"),
        tool("b", security=({"bearerAuth": ()},)),
        tool("c", security=({}, {"bearerAuth": ()})),
    )
    assert not requires_auth([public], collection_profile=None)
    assert requires_auth([public, secured], collection_profile=None)
    assert not requires_auth([optional], collection_profile=None)
    assert requires_auth([public], collection_profile="demo_bearer")


def test_token_command() -> None:
    ok = AuthProfile("c", "bearer", token_command=f"{sys.executable} -c \"print('tok-from-cmd')\"")
    assert _resolver({}, ok).preflight("c", required=True).headers == {"Authorization": "Bearer tok-from-cmd"}
    stderr = "refresh failed for tok-expired-0123456789"
    failing = AuthProfile("f", "bearer", token_command=f"echo partial-secret; echo '{stderr}' >&2; exit 3")
    resolver = _resolver({}, failing)
    res = resolver.preflight("f", required=True)
    assert res.reason_codes == ("auth_header_resolution_failed",)
    # neither stream is shown (a failing command often prints the token it could not refresh) ...
    assert "exited with 3" in res.message and "not shown" in res.message
    assert "partial-secret" not in res.message and "tok-expired" not in res.message
    # ... and both are registered for the scrubber: the line whole, and its token-like words
    assert {"partial-secret", stderr, "tok-expired-0123456789"} <= resolver.secrets
    assert "refresh" not in resolver.secrets  # an ordinary short word would be redacted everywhere
    empty = AuthProfile("e", "bearer", token_command="true")
    assert "printed nothing" in _resolver({}, empty).preflight("e", required=True).message


def test_api_key_header_or_query_and_basic_and_headers() -> None:
    env = {"KEY": "k-1", "U": "alice", "P": "pw", "H1": "v1", "H2": "v2"}
    r = _resolver(
        env,
        AuthProfile("h", "api_key", header="X-Api-Key", value_env="KEY"),
        AuthProfile("q", "api_key", query="api_key", value_env="KEY"),
        AuthProfile("b", "basic", username_env="U", password_env="P"),
        AuthProfile("c", "headers", headers={"X-Tenant": "H1", "X-Session": "H2"}),
    )
    assert r.preflight("h", required=True).headers == {"X-Api-Key": "k-1"}
    q = r.preflight("q", required=True)
    assert (q.params, q.readiness()["query_params"], q.readiness()["headers"]) == (
        {"api_key": "k-1"},
        ["api_key"],
        [],
    )
    basic = r.preflight("b", required=True).headers["Authorization"]
    assert base64.b64decode(basic.split()[1]) == b"alice:pw"
    assert r.preflight("c", required=True).readiness()["headers"] == ["X-Session", "X-Tenant"]
    assert {"k-1", "pw", "v1", "v2"} <= r.secrets


def test_oauth2_client_credentials_cached_per_run() -> None:
    calls: list[httpx.Request] = []

    def token_endpoint(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        form = parse_qs(request.content.decode())
        assert form == {"grant_type": ["client_credentials"], "scope": ["read write"]}
        assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"cid:csecret").decode()
        return httpx.Response(
            200, json={"access_token": "at-123", "token_type": "bearer", "expires_in": 3600}
        )

    client = make_run_client(transport=httpx.MockTransport(token_endpoint))
    profile = AuthProfile(
        "o",
        "oauth2_client_credentials",
        token_url="http://auth.test/token",
        client_id_env="CID",
        client_secret_env="CS",
        scopes=("read", "write"),
    )
    r = _resolver({"CID": "cid", "CS": "csecret"}, profile, client=client)
    first, second = r.preflight("o", required=True), r.preflight("o", required=True)
    assert first.headers == second.headers == {"Authorization": "Bearer at-123"}
    assert len(calls) == 1
    assert first.expires_at is not None and first.expires_at > time.monotonic()
    assert {"at-123", "csecret"} <= r.secrets


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(401, json={"error": "invalid_client"}), "answered 401"),
        (httpx.Response(200, json={"token_type": "bearer"}), "gave no access_token"),
        (httpx.Response(200, text="<html>"), "gave no access_token"),
    ],
)
def test_oauth2_failures_are_resolution_failures(response: httpx.Response, message: str) -> None:
    client = make_run_client(transport=httpx.MockTransport(lambda _r: response))
    profile = AuthProfile(
        "o",
        "oauth2_client_credentials",
        token_url="http://auth.test/token",
        client_id_env="CID",
        client_secret_env="CS",
    )
    res = _resolver({"CID": "cid", "CS": "cs"}, profile, client=client).preflight("o", required=True)
    assert res.reason_codes == ("auth_header_resolution_failed",)
    assert message in res.message


def test_oauth2_real_endpoint_without_a_token(httpbin_url: str) -> None:
    profile = AuthProfile(
        "o",
        "oauth2_client_credentials",
        token_url=f"{httpbin_url}/anything",
        client_id_env="CID",
        client_secret_env="CS",
    )
    with make_run_client() as client:
        res = _resolver({"CID": "cid", "CS": "cs"}, profile, client=client).preflight("o", required=True)
    assert res.reason_codes == ("auth_header_resolution_failed",)


def test_oauth2_unset_client_secret_is_context_required() -> None:
    profile = AuthProfile(
        "o", "oauth2_client_credentials", token_url="http://x", client_id_env="CID", client_secret_env="CS"
    )
    assert _resolver({"CID": "x"}, profile).preflight("o", required=True).reason_codes == (
        "auth_context_required",
    )


# ----------------------------------------------------------------------------------- each rule at its edge

OAUTH = AuthProfile("o", "oauth2_client_credentials", token_url="http://auth.test/token", client_id_env="CID",
                    client_secret_env="CS")  # fmt: skip


def _token_server(*answers: httpx.Response) -> tuple[httpx.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1]

    return make_run_client(transport=httpx.MockTransport(answer)), seen


def test_the_messages_name_what_is_missing() -> None:
    r = _resolver({}, AuthProfile("a", "bearer", token_env="T"), AuthProfile("b", "basic", username_env="U"),
                  AuthProfile("c", "bearer"), AuthProfile("d", "oauth2_client_credentials", client_id_env="I",
                                                             client_secret_env="S"))  # fmt: skip
    assert r.preflight(None, required=True).message == (
        "the tool or collection requires auth but no auth profile is configured"
    )
    assert (
        r.preflight("zz", required=True).message
        == "auth profile 'zz' is not defined (auth_profiles: a, b, c, d)"
    )
    assert (
        _resolver({}).preflight("zz", required=True).message
        == "auth profile 'zz' is not defined (auth_profiles: none)"
    )
    unset = r.preflight("b", required=True)
    assert unset.message == "auth profile 'b': env var(s) unset or empty: U, <not configured>"
    assert unset.missing_env == ("U", "<not configured>") and unset.profile == "b"
    assert unset.readiness() == {"status": "not_ready", "profile": "b", "headers": [], "reason_codes": ["auth_context_required"],
                                 "missing_env": ["U", "<not configured>"], "message": unset.message}  # fmt: skip
    assert (
        r.preflight("c", required=True).message
        == "auth profile 'c': neither token_env nor token_command is set"
    )
    no_url = _resolver(
        {"I": "i", "S": "s"},
        AuthProfile("d", "oauth2_client_credentials", client_id_env="I", client_secret_env="S"),
    )
    failed = no_url.preflight("d", required=True)
    assert (failed.message, failed.profile) == (
        "auth profile 'd': oauth2_client_credentials needs token_url",
        "d",
    )


def test_an_api_key_goes_in_x_api_key_by_default() -> None:
    assert _resolver({"K": "k-1"}, AuthProfile("k", "api_key", value_env="K")).preflight(
        "k", required=True
    ).headers == {"X-API-Key": "k-1"}


def test_the_token_command_runs_with_the_runs_environment_and_its_timeout() -> None:
    profile = AuthProfile("c", "bearer", token_command='printf "%s" "$QLAB_TEST_ONLY_TOKEN"')
    resolver = _resolver({"QLAB_TEST_ONLY_TOKEN": "tok-from-env-123", "PATH": "/usr/bin:/bin"}, profile)
    assert resolver.preflight("c", required=True).headers == {"Authorization": "Bearer tok-from-env-123"}
    slow = AuthProfile("s", "bearer", token_command="sleep 5; echo late-token")
    started = time.monotonic()
    res = AuthResolver({"s": slow}, environ={"PATH": "/usr/bin:/bin"}, command_timeout=0.3).preflight(
        "s", required=True
    )
    assert res.message == "auth profile 's': token command failed: TimeoutExpired"
    assert time.monotonic() - started < 4


def test_a_failing_command_says_its_output_is_hidden_only_when_there_was_some() -> None:
    quiet = _resolver({}, AuthProfile("q", "bearer", token_command="exit 4")).preflight("q", required=True)
    assert quiet.message == "auth profile 'q': token command exited with 4"
    loud = _resolver({}, AuthProfile("l", "bearer", token_command="echo boom >&2; exit 4")).preflight(
        "l", required=True
    )
    assert loud.message.startswith("auth profile 'l': token command exited with 4")
    assert "output is not shown" in loud.message and "boom" not in loud.message
    assert _resolver({}, AuthProfile("e", "bearer", token_command="true")).preflight(
        "e", required=True
    ).message == ("auth profile 'e': token command printed nothing")


def test_what_a_command_printed_is_registered_from_eight_characters_a_line_twelve_a_word() -> None:
    from qlab.execute.auth import _printed

    assert _printed("12345678\nshort\n", "") == {"12345678\nshort", "12345678"}
    assert _printed("a 123456789012 b 12345678901", "") == {"a 123456789012 b 12345678901", "123456789012"}


def test_the_token_request_carries_the_client_credentials_and_asks_for_json() -> None:
    client, seen = _token_server(httpx.Response(200, json={"access_token": "at-1"}))
    res = _resolver({"CID": "cid", "CS": "cs"}, OAUTH, client=client).preflight("o", required=True)
    assert seen[0].headers["Authorization"] == "Basic " + base64.b64encode(b"cid:cs").decode()
    assert seen[0].headers["Accept"] == "application/json"
    assert parse_qs(seen[0].content.decode()) == {"grant_type": ["client_credentials"]}  # no scope asked
    assert res.headers == {"Authorization": "Bearer at-1"} and res.expires_at is None
    assert not client.is_closed  # a client the run gave is the run's to close


@pytest.mark.parametrize(
    ("token_type", "header"),
    [(None, "Bearer at-1"), ("", "Bearer at-1"), ("BEARER", "Bearer at-1"), ("MAC", "MAC at-1")],
)
def test_the_token_type_names_the_scheme(token_type: str | None, header: str) -> None:
    client, _ = _token_server(httpx.Response(200, json={"access_token": "at-1", "token_type": token_type}))
    res = _resolver({"CID": "c", "CS": "s"}, OAUTH, client=client).preflight("o", required=True)
    assert res.headers == {"Authorization": header}


@pytest.mark.parametrize(("status", "ready"), [(399, True), (400, False), (401, False), (500, False)])
def test_a_token_endpoint_status_from_400_is_a_failure(status: int, ready: bool) -> None:
    client, _ = _token_server(httpx.Response(status, json={"access_token": "at-1"}))
    res = _resolver({"CID": "c", "CS": "s"}, OAUTH, client=client).preflight("o", required=True)
    assert res.ready is ready
    if not ready:
        assert res.message == f"auth profile 'o': token endpoint http://auth.test/token answered {status}"


@pytest.mark.parametrize("token", ["", 42, None])
def test_an_empty_or_odd_access_token_is_no_token(token: object) -> None:
    client, _ = _token_server(httpx.Response(200, json={"access_token": token}))
    res = _resolver({"CID": "c", "CS": "s"}, OAUTH, client=client).preflight("o", required=True)
    assert res.message == "auth profile 'o': token endpoint http://auth.test/token gave no access_token"


@pytest.mark.parametrize(("lifetime", "requests"), [(30.6, 1), (29.5, 2), (3600, 1), ("3600", 1)])
def test_a_token_is_fetched_again_30_seconds_before_it_expires(lifetime: object, requests: int) -> None:
    """Rule: a token is reused until 30 s before ``expires_in`` runs out, never sent stale."""
    client, seen = _token_server(httpx.Response(200, json={"access_token": "at-1", "expires_in": lifetime}))
    resolver = _resolver({"CID": "c", "CS": "s"}, OAUTH, client=client)
    resolver.preflight("o", required=True)
    resolver.preflight("o", required=True)
    assert len(seen) == requests


def test_an_unreachable_token_endpoint_is_named() -> None:
    from servers import free_port

    url = f"http://127.0.0.1:{free_port()}/token"
    profile = AuthProfile(
        "o", "oauth2_client_credentials", token_url=url, client_id_env="CID", client_secret_env="CS"
    )
    res = _resolver({"CID": "c", "CS": "s"}, profile).preflight("o", required=True)  # qlab's own client
    assert res.message == f"auth profile 'o': token endpoint {url} unreachable: ConnectError"


def test_an_unknown_profile_is_recorded_under_the_name_the_case_gave() -> None:
    assert _resolver({}, OAUTH).preflight("nope", required=False).readiness() == {
        "status": "not_ready",
        "profile": "nope",
        "headers": [],
        "reason_codes": ["auth_profile_missing"],
        "message": "auth profile 'nope' is not defined (auth_profiles: o)",
    }


def test_on_windows_the_token_command_runs_through_cmd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the token command is a shell command line: ``cmd /c`` on Windows, ``/bin/sh -c`` elsewhere."""
    import subprocess

    ran: list[list[str]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, "tok-from-cmd-1\n", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    profile = AuthProfile("c", "bearer", token_command="get-token --fresh")
    for platform in ("win32", "linux"):
        monkeypatch.setattr(sys, "platform", platform)
        assert _resolver({}, profile).preflight("c", required=True).headers == {
            "Authorization": "Bearer tok-from-cmd-1"
        }
    assert ran == [["cmd", "/c", "get-token --fresh"], ["/bin/sh", "-c", "get-token --fresh"]]


def test_the_token_endpoint_is_given_30_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: qlab's own client for the token request waits 30 s at most (a hung endpoint is a failure, not a
    hung run), and is closed after it."""
    from qlab.adapters import http

    made: list[httpx.Client] = []
    real = http.make_client

    def making(**kwargs: object) -> httpx.Client:
        assert kwargs == {"timeout": 30.0}
        made.append(
            real(transport=httpx.MockTransport(lambda _: httpx.Response(200, json={"access_token": "a"})))
        )
        return made[-1]

    monkeypatch.setattr(http, "make_client", making)
    assert _resolver({"CID": "c", "CS": "s"}, OAUTH).preflight("o", required=True).headers == {
        "Authorization": "Bearer a"
    }
    assert len(made) == 1 and made[0].is_closed


def test_a_token_is_fetched_again_at_the_instant_it_is_due(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a cached token is reused only strictly before its refresh instant (expiry less 30 s)."""
    import types

    from qlab.execute import auth

    clock = [1000.0]
    monkeypatch.setattr(auth, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    client, seen = _token_server(httpx.Response(200, json={"access_token": "at-1", "expires_in": 40}))
    resolver = _resolver({"CID": "c", "CS": "s"}, OAUTH, client=client)
    assert resolver.preflight("o", required=True).expires_at == 1010.0
    clock[0] = 1009.5
    resolver.preflight("o", required=True)
    assert len(seen) == 1
    clock[0] = 1010.0
    resolver.preflight("o", required=True)
    assert len(seen) == 2


def test_operation_level_security_chooses_among_profiles_that_name_a_scheme() -> None:
    env = {"TOK": "t", "KEY": "k"}
    bearer = AuthProfile("oauth", "bearer", token_env="TOK", security_scheme="petstore_auth")
    key = AuthProfile("key", "api_key", header="api_key", value_env="KEY", security_scheme="api_key")
    unset = AuthProfile("app", "api_key", header="X-App", value_env="APP", security_scheme="app_id")
    r = _resolver(env, bearer, key, unset)
    pick = lambda *security: r.choose(tool("t", security=security))  # noqa: E731
    assert pick({"api_key": ()}).headers == {"api_key": "k"}  # type: ignore[union-attr]
    assert pick({"petstore_auth": ("read",)}).profile == "oauth"  # type: ignore[union-attr]
    assert pick().status == "not_required"  # type: ignore[union-attr]  # security: [] (or none at all)
    both = pick({"api_key": (), "petstore_auth": ()})
    assert (
        both is not None and both.profile == "key+oauth" and set(both.headers) == {"api_key", "Authorization"}
    )
    assert pick({"app_id": ()}, {"api_key": ()}).profile == "key"  # type: ignore[union-attr]  # the first ready
    failed = pick({"app_id": ()})
    assert failed is not None and failed.reason_codes == ("auth_context_required",)
    assert pick({"app_id": ()}, {}).status == "not_required"  # type: ignore[union-attr]  # optional auth
    assert pick({"other": ()}) is None  # no profile answers it: the environment's profile serves it
    assert _resolver(env, AuthProfile("p", "bearer", token_env="TOK")).choose(tool("t")) is None


@pytest.mark.parametrize(
    ("command", "env", "named"),
    [
        ('echo "$API_TOKEN"', {}, ("API_TOKEN",)),
        ("printf %s ${API_TOKEN}", {"API_TOKEN": " "}, ("API_TOKEN",)),  # set but empty is missing too
        ('echo "${API_TOKEN:-fallback}"', {}, ()),  # it states its own fallback
        ('echo "$API_TOKEN"', {"API_TOKEN": "x"}, ()),
        ("echo $$HOME_ID", {}, ()),  # $$ is the shell's own
    ],
)
def test_a_token_command_names_the_variables_it_reads_that_are_unset(
    command: str, env: dict[str, str], named: tuple[str, ...]
) -> None:
    """Rule (issue 36, 5): a fork pull request has no secrets; the token command prints nothing and the message and
    the readiness record name the variable it lacks (names only), not just "printed nothing"."""
    from qlab.execute.auth import unset_in_command

    assert unset_in_command(command, env) == named
    if named and "$API_TOKEN" in command:
        res = _resolver({"PATH": "/usr/bin:/bin", **env}, AuthProfile("p", "bearer", token_command=command))
        found = res.preflight("p", required=True)
        assert found.reason_codes == ("auth_header_resolution_failed",)
        assert "it reads API_TOKEN, not set or empty here" in found.message
        assert found.readiness()["missing_env"] == ["API_TOKEN"]

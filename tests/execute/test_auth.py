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

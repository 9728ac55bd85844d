from __future__ import annotations

import ssl
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from qlab.adapters import http
from qlab.execute.client import (
    Exchange,
    Redirects,
    RetryPolicy,
    TransportFailure,
    classify,
    make_run_client,
    retry_after,
    send,
)
from qlab.execute.events import EVENT_KINDS, EventLog
from qlab.execute.request import PreparedRequest
from servers import HopServer


def _req(method: str = "GET", url: str = "http://api.test/x") -> PreparedRequest:
    return PreparedRequest(method, url, "/x")


def _send(
    client: http.Client,
    request: PreparedRequest,
    *,
    retries: int = 2,
    timeout: float = 5.0,
    sleeps: list[float] | None = None,
    follow: bool = True,
    events: EventLog | None = None,
):  # type: ignore[no-untyped-def]
    waits = sleeps if sleeps is not None else []
    return send(
        client,
        request,
        deadline=time.monotonic() + timeout,
        redirects=Redirects(follow),
        retry=RetryPolicy(retries=retries, backoff_sec=0.1, max_retry_after_sec=3.0),
        events=events or EventLog(),
        step="0",
        display_path=request.path,
        sleep=waits.append,
    )


def _mock(
    statuses: list[int], headers: dict[str, str] | None = None
) -> tuple[http.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status = statuses[min(len(seen) - 1, len(statuses) - 1)]
        return httpx.Response(
            status, headers=headers if status in (429, 503) else None, json={"n": len(seen)}
        )

    return make_run_client(transport=httpx.MockTransport(handler)), seen


def test_503_then_200_retries_with_exponential_backoff() -> None:
    client, seen = _mock([503, 503, 200])
    sleeps: list[float] = []
    events = EventLog()
    exchange = _send(client, _req(), sleeps=sleeps, events=events)
    assert (exchange.status, exchange.attempts, len(seen)) == (200, 3, 3)
    assert sleeps == [0.1, 0.2]
    assert [e["reason"] for e in events.of("retry")] == ["503", "503"]
    assert {e["event"] for e in events.events} <= set(EVENT_KINDS)
    assert all(e["at"].endswith("Z") and len(e["at"]) == 24 for e in events.events)


def test_429_honours_retry_after_capped() -> None:
    client, _ = _mock([429, 429, 200], headers={"Retry-After": "60"})
    sleeps: list[float] = []
    exchange = _send(client, _req(), sleeps=sleeps, timeout=30)
    assert exchange.status == 200
    assert sleeps == [3.0, 3.0]  # 60 s asked, capped at max_retry_after_sec


def test_retries_run_out_and_the_last_answer_is_returned() -> None:
    client, seen = _mock([503])
    assert _send(client, _req(), retries=1).status == 503
    assert len(seen) == 2


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_non_idempotent_methods_are_never_retried(method: str) -> None:
    client, seen = _mock([503, 200])
    assert _send(client, _req(method)).status == 503
    assert len(seen) == 1


def test_a_retry_that_would_pass_the_deadline_is_not_made() -> None:
    client, seen = _mock([429, 200], headers={"Retry-After": "2"})
    assert _send(client, _req(), timeout=1.0).status == 429
    assert len(seen) == 1


def test_retry_after_http_date() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    later = (now + timedelta(seconds=7)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert retry_after({"retry-after": later}, now=now) == 7.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_connect_errors_are_retried_then_classified() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("refused", request=request)

    client = make_run_client(transport=httpx.MockTransport(handler))
    with pytest.raises(TransportFailure) as info:
        _send(client, _req(), retries=2)
    assert (info.value.reason, info.value.attempts, len(calls)) == ("connection_error", 3, 3)


def test_real_connection_refused() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with make_run_client() as client, pytest.raises(TransportFailure) as info:
        _send(client, _req(url=f"http://127.0.0.1:{port}/"), retries=1)
    assert info.value.reason == "connection_error"


def test_classify_tls_and_timeouts() -> None:
    wrapped = httpx.ConnectError("boom")
    wrapped.__cause__ = ssl.SSLCertVerificationError("certificate verify failed")
    assert classify(wrapped) == "tls_error"
    assert classify(httpx.ReadTimeout("slow")) == "timeout"
    assert classify(httpx.RemoteProtocolError("bad")) == "connection_error"
    assert classify(httpx.TooManyRedirects("loop")) == "http_error"


def test_a_server_with_a_self_signed_certificate_fails_the_case_as_a_tls_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The run's client verifies certificates with the process's TLS context, made when it opens its first https
    connection: a real TLS server on 127.0.0.1 whose certificate no CA signed is refused during the handshake
    (a client without verification would get through it and then wait for an answer that never comes)."""
    import socket
    import subprocess
    import threading

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            try:
                with context.wrap_socket(conn, server_side=True):
                    time.sleep(5)  # a handshake that went through: no answer, the client times out
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with make_run_client() as client, pytest.raises(TransportFailure) as info:
            _send(client, _req(url=f"https://127.0.0.1:{port}/"), retries=0, timeout=2.0)
    finally:
        listener.close()
    assert info.value.reason == "tls_error"
    assert "certificate" in str(info.value).lower()


def test_httpbin_delay_past_timeout_is_a_timeout(httpbin_url: str) -> None:
    with make_run_client() as client, pytest.raises(TransportFailure) as info:
        _send(client, _req(url=f"{httpbin_url}/delay/3"), timeout=0.5)
    assert info.value.reason == "timeout"


def test_httpbin_redirects_follow_the_setting(httpbin_url: str) -> None:
    with make_run_client() as client:
        assert _send(client, _req(url=f"{httpbin_url}/redirect/2"), follow=True).status == 200
        assert _send(client, _req(url=f"{httpbin_url}/redirect/2"), follow=False).status == 302


def test_httpbin_cookies_are_not_shared_between_requests(httpbin_url: str) -> None:
    with make_run_client() as client:
        exchange = _send(client, _req(url=f"{httpbin_url}/cookies/set?session=abc123"), follow=False)
        assert exchange.cookies == {"session": "abc123"}
        echoed = _send(client, _req(url=f"{httpbin_url}/cookies"))
        assert b"abc123" not in echoed.body


def test_the_tools_idempotent_flag_overrides_the_method() -> None:
    client, seen = _mock([503, 200])
    put_not_idempotent = PreparedRequest("PUT", "http://api.test/x", "/x", idempotent=False)
    assert _send(client, put_not_idempotent).status == 503 and len(seen) == 1
    client, seen = _mock([503, 200])
    post_idempotent = PreparedRequest("POST", "http://api.test/x", "/x", idempotent=True)
    assert _send(client, post_idempotent).status == 200 and len(seen) == 2


# ---------------------------------------------------------------------------------------------- redirects


SECRET_KEY, SECRET_COOKIE, SECRET_QUERY = (
    "key-CANARY-0a1b2c3d4e",
    "sid=ck-CANARY-5f6a7b8c",
    "q-CANARY-9d8e7f6a5b",
)


def _credentialed(
    client: http.Client,
    url: str,
    *,
    method: str = "GET",
    redirects: Redirects,
    events: EventLog | None = None,
):  # type: ignore[no-untyped-def]
    """A request carrying every kind of credential an auth profile adds: a header, a cookie, a query key."""
    return send(
        client,
        PreparedRequest(method, url, "/x", params=(("page", "1"),)),
        deadline=time.monotonic() + 5,
        redirects=redirects,
        retry=RetryPolicy(retries=0),
        events=events or EventLog(),
        step="0",
        display_path="/x",
        auth_headers={"X-API-Key": SECRET_KEY, "Cookie": SECRET_COOKIE},
        auth_params={"api_key": SECRET_QUERY},
    )


def _leaked(server: HopServer) -> list[str]:
    found = []
    for _method, path, headers in server.requests():
        text = path + repr(headers)
        found += [s for s in (SECRET_KEY, SECRET_COOKIE, SECRET_QUERY) if s in text]
    return found


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_a_mutating_request_is_never_redirected(code: int, method: str) -> None:
    with HopServer() as other, HopServer(redirect_to=other.url) as api, make_run_client() as client:
        allowed = Redirects(True, read_only=False, allowed_hosts=("127.0.0.1",))  # even to an allowed host
        with pytest.raises(TransportFailure) as info:
            _credentialed(client, f"{api.url}/redirect/{code}", method=method, redirects=allowed)
        assert info.value.reason == "redirect_refused"
        assert f"answered {code} with a redirect to 127.0.0.1:{other.port}" in str(info.value)
        assert other.requests() == [] and len(api.requests()) == 1


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_read_is_not_redirected_off_the_allowlist(code: int) -> None:
    with HopServer() as other, HopServer(redirect_to=other.url) as api, make_run_client() as client:
        only_api = Redirects(True, read_only=True, allowed_hosts=(f"127.0.0.1:{api.port}",))
        with pytest.raises(TransportFailure) as info:
            _credentialed(client, f"{api.url}/redirect/{code}", redirects=only_api)
        assert info.value.reason == "redirect_refused" and "allowed_hosts" in str(info.value)
        assert other.requests() == []


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_read_redirected_to_another_allowed_origin_drops_every_credential(code: int) -> None:
    with HopServer() as other, HopServer(redirect_to=other.url) as api, make_run_client() as client:
        events = EventLog()
        both = Redirects(
            True, read_only=True, allowed_hosts=(f"127.0.0.1:{api.port}", f"127.0.0.1:{other.port}")
        )
        exchange = _credentialed(client, f"{api.url}/redirect/{code}", redirects=both, events=events)
        assert exchange.status == 200
        assert [(m, p.split("?")[0]) for m, p, _h in other.requests()] == [("GET", "/landed")]
        assert _leaked(other) == []  # no header, cookie or query key crossed to the other origin
        assert len(_leaked(api)) == 3  # while the API itself got all three
        hosts = [e["host"] for e in events.of("request_sent")]
        assert hosts == [f"127.0.0.1:{api.port}", f"127.0.0.1:{other.port}"]  # every hop is on record


def test_a_redirect_within_the_origin_keeps_the_credentials() -> None:
    with HopServer() as api, make_run_client() as client:
        exchange = _credentialed(client, f"{api.url}/redirect/302", redirects=Redirects(True))
        assert exchange.status == 200
        landed = [h for _m, p, h in api.requests() if p.startswith("/landed")]
        assert landed and landed[0].get("X-API-Key") == SECRET_KEY and SECRET_COOKIE in landed[0]["Cookie"]


def test_a_redirect_not_followed_is_the_answer() -> None:
    with HopServer() as other, HopServer(redirect_to=other.url) as api, make_run_client() as client:
        exchange = _credentialed(client, f"{api.url}/redirect/307", method="POST", redirects=Redirects(False))
        assert exchange.status == 307 and other.requests() == []


# ---------------------------------------------------------------------------------------------- deadline


@pytest.mark.parametrize("route", ["drip", "drip-headers"])
def test_timeout_sec_is_a_deadline_a_slow_drip_cannot_stretch(route: str) -> None:
    """40 bytes, one every 0.1 s (4 s in all, each read well inside any read timeout) against a 0.6 s deadline."""
    with HopServer() as api, make_run_client() as client:
        started = time.monotonic()
        with pytest.raises(TransportFailure) as info:
            _send(client, _req(url=f"{api.url}/{route}/40/0.1"), timeout=0.6, retries=0)
        took = time.monotonic() - started
    assert info.value.reason == "timeout", info.value
    assert took < 1.5, took


# ------------------------------------------------------------------------------ redirects, hop by hop (no network)

SECRET_PROFILE = "k-CANARY-profile-5150"


def _hops(allowed: tuple[str, ...] = ("other.test",)) -> tuple[http.Client, list[httpx.Request]]:
    """api.test and other.test behind one MockTransport: /start goes to other.test/back, which comes back to
    api.test/home; /loop/<n> redirects to /loop/<n+1> for ever; /away goes to other.test with a userinfo."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        path = request.url.path
        where = {"/start": "http://other.test/back?from=api", "/back": "http://api.test/home",
                 "/away": "http://user:pw-CANARY@other.test/landed"}.get(path)  # fmt: skip
        if path.startswith("/loop/"):
            where = f"/loop/{int(path.rsplit('/', 1)[1]) + 1}"
        return httpx.Response(302, headers={"Location": where}) if where else httpx.Response(200, json={})

    return make_run_client(transport=httpx.MockTransport(handler)), seen


def _hop_send(client: http.Client, path: str, redirects: Redirects) -> Exchange:
    request = PreparedRequest("GET", f"http://api.test{path}", path,
                              headers={"Accept": "application/json", "X-Tenant": "t-1", "Cookie": "sid=c-CANARY"})  # fmt: skip
    return send(client, request, deadline=time.monotonic() + 5, redirects=redirects, retry=RetryPolicy(),
                events=EventLog(), step="0", display_path=path, auth_headers={"X-Profile-Key": SECRET_PROFILE},
                auth_params={"api_key": "q-CANARY"})  # fmt: skip


def test_credentials_stay_dropped_on_the_way_back_and_other_headers_stay() -> None:
    """Rule: off the origin, the profile's headers (whatever their name), cookies and query keys are dropped,
    and stay dropped when a later hop returns to the origin; the request's other headers travel on."""
    client, seen = _hops()
    assert _hop_send(client, "/start", Redirects(True, allowed_hosts=("other.test",))).status == 200
    sent = [(r.url.host, r.url.path, str(r.url.query, "ascii"), sorted(k for k in r.headers if k.startswith("x-")),
             "cookie" in r.headers) for r in seen]  # fmt: skip
    assert sent == [
        ("api.test", "/start", "api_key=q-CANARY", ["x-profile-key", "x-tenant"], True),
        ("other.test", "/back", "from=api", ["x-tenant"], False),
        ("api.test", "/home", "", ["x-tenant"], False),
    ]
    assert all(r.headers["accept"] == "application/json" for r in seen)


def test_a_redirect_to_a_url_with_userinfo_sends_no_credentials_of_it() -> None:
    client, seen = _hops()
    _hop_send(client, "/away", Redirects(True, allowed_hosts=("other.test",)))
    assert [(r.url.host, r.url.userinfo, "authorization" in r.headers) for r in seen] == [
        ("api.test", b"", False),
        ("other.test", b"", False),
    ]


@pytest.mark.parametrize(("allowed", "listed"), [((), "none"), (("a.test", "b.test"), "a.test, b.test")])
def test_a_refused_redirect_names_the_allow_list(allowed: tuple[str, ...], listed: str) -> None:
    client, seen = _hops()
    with pytest.raises(TransportFailure) as info:
        _hop_send(client, "/start", Redirects(True, allowed_hosts=allowed))
    assert (info.value.reason, str(info.value), len(seen)) == (
        "redirect_refused",
        "GET /start answered 302 with a redirect to other.test:80, which is neither the request's own origin nor "
        f"in allowed_hosts ({listed}); nothing was sent there",
        1,
    )


def test_a_redirect_loop_ends_after_twenty_hops() -> None:
    client, seen = _hops()
    with pytest.raises(TransportFailure) as info:
        _hop_send(client, "/loop/0", Redirects(True))
    assert (info.value.reason, str(info.value), len(seen)) == (
        "http_error",
        "GET /loop/0 answered 302 with a redirect to api.test:80: more than 20 redirects",
        21,  # the request and 20 redirects followed
    )


@pytest.mark.parametrize(("error", "said"), [(httpx.ReadError("reset by peer"), "ReadError: reset by peer"),
                                             (httpx.ReadError("  "), "ReadError")])  # fmt: skip
def test_a_transport_error_is_named_with_its_text_when_it_has_one(error: Exception, said: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    client = make_run_client(transport=httpx.MockTransport(handler))
    with pytest.raises(TransportFailure) as info:
        _send(client, _req())
    assert (info.value.reason, str(info.value)) == ("connection_error", f"GET /x: connection_error: {said}")


def test_a_retry_needs_time_left_after_its_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a retry is made only if, after the wait, the deadline is still ahead (not exactly reached)."""
    import types

    from qlab.execute import client

    monkeypatch.setattr(client, "time", types.SimpleNamespace(monotonic=lambda: 100.0))
    assert client._fits(0.5, 101.0) and not client._fits(1.0, 101.0)


def test_retry_after_dates_without_a_zone_past_and_now() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert retry_after({"retry-after": "Thu, 01 Jan 2026 00:00:09 -0000"}, now=now) == 9.0  # no zone: UTC
    assert retry_after({"retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"}, now=now) == 0.0  # already past
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert 3500 < (retry_after({"retry-after": future}) or 0) <= 3600  # against the clock


def test_the_retry_policy_of_an_environment() -> None:
    from qlab.project.model import Environment

    assert RetryPolicy.of(Environment("dev", "http://h", retries=0, retry_backoff_sec=0.5)) == RetryPolicy(
        0, 0.5
    )
    assert RetryPolicy.of(Environment("dev", "http://h", retries=-1, retry_backoff_sec=-2)) == RetryPolicy(
        0, 0.0
    )


def _see_other() -> tuple[http.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        code = {"/303": 303, "/307": 307, "/302": 302}.get(request.url.path)
        if code:
            return httpx.Response(code, headers={"Location": "/landed?page=2"})
        return httpx.Response(200, json={})

    return make_run_client(transport=httpx.MockTransport(handler)), seen


@pytest.mark.parametrize(("method", "path", "then"), [("POST", "/303", "GET"), ("HEAD", "/303", "HEAD"),
                                                      ("POST", "/307", "POST"), ("GET", "/302", "GET")])  # fmt: skip
def test_a_redirected_read_carries_no_body_and_keeps_the_profiles_query_keys(
    method: str, path: str, then: str
) -> None:
    """Rule: a 303 turns any method but HEAD into GET; a read's redirect sends no body; within the origin the
    profile's query keys come back on the Location's query, the request's own parameters do not; the hop waits
    at most what is left of the deadline. Every hop is on record (``redirect``, then ``request_sent``)."""
    client, seen = _see_other()
    events = EventLog()
    request = PreparedRequest(method, f"http://api.test{path}", path, params=(("q", "x"),), body_kind="json",
                              body={"k": "v"}, idempotent=True)  # fmt: skip
    deadline = time.monotonic() + 5
    send(client, request, deadline=deadline, redirects=Redirects(True), retry=RetryPolicy(), events=events,
         step="cleanup 1", display_path=path, auth_params={"api_key": "q-CANARY"})  # fmt: skip
    first, hop = seen
    assert (first.method, str(first.url.query, "ascii"), first.content) == (
        method,
        "q=x&api_key=q-CANARY",
        b'{"k":"v"}' if method != "HEAD" else first.content,
    )
    assert (hop.method, hop.url.path, str(hop.url.query, "ascii"), hop.content) == (
        then,
        "/landed",
        "page=2&api_key=q-CANARY",
        b"",
    )
    assert 0 < hop.extensions["timeout"]["read"] <= 5
    kept = [{k: v for k, v in e.items() if k not in ("at", "latency_ms")} for e in events.events]
    status = int(path[1:])
    assert kept == [
        {"event": "request_sent", "step": "cleanup 1", "method": method, "path": path, "attempt": 1,
         "host": "api.test:80"},
        {"event": "redirect", "step": "cleanup 1", "status": status, "to": "api.test:80", "path": "/landed"},
        {"event": "request_sent", "step": "cleanup 1", "method": then, "path": "/landed", "host": "api.test:80"},
        {"event": "response_received", "step": "cleanup 1", "status": 200, "bytes": 2},
    ]  # fmt: skip


def test_a_case_out_of_time_sends_nothing_more() -> None:
    """Rule: at (or past) the deadline no attempt is made: ``timeout``, naming the request, attempts so far."""
    client, seen = _see_other()
    with pytest.raises(TransportFailure) as info:
        send(client, _req(), deadline=time.monotonic(), retry=RetryPolicy(), events=EventLog(), step="0",
             display_path="/x")  # fmt: skip
    assert (info.value.reason, str(info.value), info.value.attempts, seen) == (
        "timeout",
        "GET /x: the case ran out of its timeout_sec",
        0,
        [],
    )


def test_connect_errors_are_retried_with_doubling_waits_all_on_record() -> None:
    """Rule: a connect error of an idempotent request is retried after backoff, 2x, 4x…; every attempt, error and
    retry is an event, and the failure counts every attempt."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    client, events, waits = make_run_client(transport=httpx.MockTransport(handler)), EventLog(), []
    with pytest.raises(TransportFailure) as info:
        _send(client, _req(), retries=2, sleeps=waits, events=events)
    assert (info.value.reason, info.value.attempts, waits) == ("connection_error", 3, [0.1, 0.2])
    kept = [{k: v for k, v in e.items() if k not in ("at", "latency_ms")} for e in events.events]
    sent = {"event": "request_sent", "step": "0", "method": "GET", "path": "/x", "host": "api.test:80"}
    error = {"event": "response_received", "step": "0", "status": None, "error": "connection_error"}
    assert kept == [
        {**sent, "attempt": 1}, error,
        {"event": "retry", "step": "0", "attempt": 2, "reason": "connection_error", "wait_ms": 100},
        {**sent, "attempt": 2}, error,
        {"event": "retry", "step": "0", "attempt": 3, "reason": "connection_error", "wait_ms": 200},
        {**sent, "attempt": 3}, error,
    ]  # fmt: skip
    assert all(0 <= e["latency_ms"] < 5000 for e in events.of("response_received"))


# --------------------------------------------------------------------------------------------- edges the
# mutation run left open (bench/mutation.py; its survivors: git show 6b179e1:bench/RESULTS-mutation.md): each
# test names the rule it keeps


def test_a_retried_answer_is_on_record_with_its_status_wait_and_attempt() -> None:
    """Rule: every 429/503 retry leaves the answer it retried (status, latency, bytes) and a ``retry`` event with
    the next attempt, the status as reason and the wait in whole milliseconds; the waits are the ones slept."""
    client, _ = _mock([429, 503, 200], headers={"Retry-After": "1"})
    sleeps: list[float] = []
    events = EventLog()
    exchange = _send(client, _req(), sleeps=sleeps, events=events, timeout=30)
    assert (exchange.status, exchange.attempts, sleeps) == (200, 3, [1.0, 1.0])
    shape = [{k: v for k, v in e.items() if k not in ("at", "latency_ms")} for e in events.events]
    assert shape == [
        {"event": "request_sent", "step": "0", "method": "GET", "path": "/x", "attempt": 1, "host": "api.test:80"},
        {"event": "response_received", "step": "0", "status": 429, "bytes": 7},
        {"event": "retry", "step": "0", "attempt": 2, "reason": "429", "wait_ms": 1000},
        {"event": "request_sent", "step": "0", "method": "GET", "path": "/x", "attempt": 2, "host": "api.test:80"},
        {"event": "response_received", "step": "0", "status": 503, "bytes": 7},
        {"event": "retry", "step": "0", "attempt": 3, "reason": "503", "wait_ms": 1000},
        {"event": "request_sent", "step": "0", "method": "GET", "path": "/x", "attempt": 3, "host": "api.test:80"},
        {"event": "response_received", "step": "0", "status": 200, "bytes": 7},
    ]  # fmt: skip
    assert all(
        isinstance(e["latency_ms"], float) and e["latency_ms"] >= 0 for e in events.of("response_received")
    )


def test_the_exchange_keeps_the_request_and_the_cookies_of_every_hop() -> None:
    """Rule: the exchange is the request that was sent, and the cookies a redirect hop set are kept beside the
    final answer's (a later step of the case may need them); the final answer's own win on a name clash."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/x":
            return httpx.Response(302, headers={"Location": "/y", "Set-Cookie": "hop=1; Path=/"})
        return httpx.Response(
            200, headers=[("Set-Cookie", "final=2; Path=/"), ("Set-Cookie", "hop=3; Path=/")]
        )

    request = _req()
    exchange = _send(make_run_client(transport=httpx.MockTransport(handler)), request)
    assert exchange.request is request and exchange.status == 200
    assert exchange.cookies == {"hop": "3", "final": "2"}

    def one_hop(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/x":
            return httpx.Response(302, headers={"Location": "/y", "Set-Cookie": "session=abc; Path=/"})
        return httpx.Response(200)

    assert _send(make_run_client(transport=httpx.MockTransport(one_hop)), _req()).cookies == {
        "session": "abc"
    }
    assert _send(_mock([200])[0], _req()).cookies == {}


def test_an_error_after_the_deadline_is_a_timeout_whatever_the_socket_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule: when the case's deadline has passed by the time a transport error comes back, the failure is
    ``timeout`` with the timeout_sec wording (the deadline cut the connection, whatever error the socket then
    raised); before the deadline the error keeps its own class and text."""
    clock = [100.0]
    monkeypatch.setattr("qlab.execute.client.time.monotonic", lambda: clock[0])

    def late(request: httpx.Request) -> httpx.Response:
        clock[0] = 200.0  # the answer never came in time
        raise httpx.ReadError("connection reset by peer")

    with pytest.raises(TransportFailure) as failure:
        send(make_run_client(transport=httpx.MockTransport(late)), _req(), deadline=150.0,
             retry=RetryPolicy(retries=0), events=EventLog(), step="0", display_path="/x")  # fmt: skip
    assert failure.value.reason == "timeout"
    assert str(failure.value) == "GET /x: timeout: the case ran out of its timeout_sec"
    assert failure.value.attempts == 1

    def early(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset by peer")

    clock[0] = 100.0
    with pytest.raises(TransportFailure) as failure:
        send(make_run_client(transport=httpx.MockTransport(early)), _req(), deadline=150.0,
             retry=RetryPolicy(retries=0), events=EventLog(), step="0", display_path="/x")  # fmt: skip
    assert failure.value.reason == "connection_error"
    assert str(failure.value) == "GET /x: connection_error: ReadError: connection reset by peer"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://api.test/x", "api.test:80"),
        ("https://api.test/x", "api.test:443"),
        ("http://api.test:8080/x", "api.test:8080"),
        ("http://[::1]:9000/x", "[::1]:9000"),
        ("https://[::1]/x", "[::1]:443"),
        ("ftp://files.test/x", "files.test:0"),
        ("http://user:secret@api.test/x", "api.test:80"),
    ],
)
def test_host_of_names_host_and_port_always_and_never_the_userinfo(url: str, host: str) -> None:
    """Rule: events and guards name a request's host as ``host:port`` (the default port written, IPv6 in
    brackets, 0 for a scheme without a default), never its userinfo."""
    from qlab.execute.client import host_of

    assert host_of(http.URL(url)) == host


@pytest.mark.parametrize(("asked", "kept"), [(0, 1), (-3, 1), (1, 1), (8, 8)])
def test_the_run_client_has_at_least_one_connection(asked: int, kept: int) -> None:
    """Rule: the run's client keeps at least one connection whatever width it is asked for, and as many as
    asked otherwise (the pool's limit is the environment's concurrency)."""
    seen: list[int] = []

    def connections(**kwargs: Any) -> http.Client:
        seen.append(kwargs["max_connections"])
        return original(**kwargs)

    original = http.make_client
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(http, "make_client", connections)
        make_run_client(max_connections=asked).close()
        make_run_client().close()
    assert seen == [kept, 8]

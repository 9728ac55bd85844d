from __future__ import annotations

import ssl
import time
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from qlab import http
from qlab.execute.client import RetryPolicy, TransportFailure, classify, make_run_client, retry_after, send
from qlab.execute.events import EVENT_KINDS, EventLog
from qlab.execute.request import PreparedRequest


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
        follow_redirects=follow,
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

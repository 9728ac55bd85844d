"""Sending requests: one sync httpx client per run, retries with backoff, transport errors classified.

Why a sync client (shared by a thread pool, see ``qlab.stages.execute``) and not ``AsyncClient``: on loopback
sequential sync httpx does ~2,100 req/s while 16 concurrent requests on one AsyncClient do ~580 req/s, and a
new client costs ~20 ms (the CA bundle), so a run makes exactly one. The pool keeps ``max_connections`` equal
to the concurrency: httpcore scans its pool on every request, so extra idle connections only cost time.

Retries happen only for idempotent requests — the tool's ``idempotent`` flag when it has one, else the method
(a POST that may have reached the server is never sent twice) — and
only on connect errors, 429 and 503. A 429/503 ``Retry-After`` is honoured, capped at ``max_retry_after_sec``
and by the case's deadline; otherwise the wait is ``backoff_sec * 2**(attempt-1)``.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from qlab import http
from qlab.execute.events import EventLog
from qlab.execute.request import PreparedRequest
from qlab.project.model import Environment

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    retries: int = 2
    backoff_sec: float = 0.2
    max_retry_after_sec: float = 10.0

    @classmethod
    def of(cls, env: Environment) -> RetryPolicy:
        return cls(retries=max(0, env.retries), backoff_sec=max(0.0, env.retry_backoff_sec))


@dataclass(slots=True)
class Exchange:
    """One answered request (after retries): status, headers, body, the last attempt's latency."""

    request: PreparedRequest
    status: int
    headers: Mapping[str, str]
    body: bytes
    latency_ms: float
    attempts: int = 1
    cookies: dict[str, str] = field(default_factory=dict)  # Set-Cookie name -> value of the final response


class TransportFailure(Exception):
    """No usable answer: ``reason`` is ``timeout``, ``connection_error``, ``tls_error`` or ``http_error``."""

    def __init__(self, reason: str, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.reason = reason
        self.attempts = attempts


def make_run_client(*, max_connections: int = 8, transport: http.BaseTransport | None = None) -> http.Client:
    """The run's client: bounded connections, no cookie persistence between requests, no env proxies."""
    return http.make_client(
        max_connections=max(1, max_connections), transport=transport, persist_cookies=False
    )


def classify(exc: BaseException) -> str:
    """The failure class of a transport exception."""
    if isinstance(exc, http.TimeoutException):
        return "timeout"
    cause: BaseException | None = exc
    while cause is not None:  # httpx → httpcore → ssl.SSLError: a TLS failure hides in the cause chain
        if isinstance(cause, ssl.SSLError):
            return "tls_error"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, http.TransportError):
        return "connection_error"
    return "http_error"  # TooManyRedirects, invalid URL, ...


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def send(
    client: http.Client,
    request: PreparedRequest,
    *,
    deadline: float,
    follow_redirects: bool,
    retry: RetryPolicy,
    events: EventLog,
    step: str,
    display_path: str,
    auth_headers: Mapping[str, str] | None = None,
    auth_params: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Exchange:
    """Send ``request`` until it is answered or retries run out; raise TransportFailure when never answered.

    ``deadline`` is a ``time.monotonic()`` instant (the case's ``timeout_sec``); each attempt's timeout is what
    is left of it. ``step`` names the step in events (``"0"``, ``"cleanup 1"``); ``display_path`` is the path
    shown in events (secret query values already redacted).
    """
    kwargs = request.httpx_kwargs()
    if auth_headers:
        kwargs["headers"] = {**kwargs.get("headers", {}), **auth_headers}
    if auth_params:
        kwargs["params"] = [*kwargs.get("params", []), *auth_params.items()]
    idempotent = (
        request.idempotent if request.idempotent is not None else request.method in IDEMPOTENT_METHODS
    )
    attempt = 0
    while True:
        attempt += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TransportFailure(
                "timeout",
                f"{request.method} {display_path}: the case ran out of its timeout_sec",
                attempts=attempt - 1,
            )
        events.add("request_sent", step=step, method=request.method, path=display_path, attempt=attempt)
        started = time.perf_counter()
        try:
            response = client.request(
                request.method, request.url, timeout=remaining, follow_redirects=follow_redirects, **kwargs
            )
        except (http.HTTPError, ssl.SSLError, OSError, ValueError) as exc:
            reason = classify(exc)
            latency = (time.perf_counter() - started) * 1000
            events.add(
                "response_received", step=step, status=None, error=reason, latency_ms=round(latency, 3)
            )
            connect = isinstance(exc, (http.ConnectError, http.ConnectTimeout))
            wait = retry.backoff_sec * 2 ** (attempt - 1)
            if connect and idempotent and attempt <= retry.retries and _fits(wait, deadline):
                events.add(
                    "retry",
                    step=step,
                    attempt=attempt + 1,
                    reason="connection_error",
                    wait_ms=round(wait * 1000),
                )
                sleep(wait)
                continue
            raise TransportFailure(
                reason, f"{request.method} {display_path}: {reason}: {_describe(exc)}", attempts=attempt
            ) from None
        latency = (time.perf_counter() - started) * 1000
        body = response.content
        events.add(
            "response_received",
            step=step,
            status=response.status_code,
            latency_ms=round(latency, 3),
            bytes=len(body),
        )
        if response.status_code in RETRY_STATUSES and idempotent and attempt <= retry.retries:
            hinted = retry_after(response.headers)
            wait = min(
                retry.max_retry_after_sec,
                hinted if hinted is not None else retry.backoff_sec * 2 ** (attempt - 1),
            )
            if _fits(wait, deadline):
                events.add(
                    "retry",
                    step=step,
                    attempt=attempt + 1,
                    reason=str(response.status_code),
                    wait_ms=round(wait * 1000),
                )
                sleep(wait)
                continue
        cookies: dict[str, str] = {}
        for hop in (*response.history, response):  # a redirect may set a cookie too
            if "set-cookie" in hop.headers:
                cookies.update({c.name: c.value or "" for c in hop.cookies.jar})
        return Exchange(request, response.status_code, response.headers, body, latency, attempt, cookies)


def _fits(wait: float, deadline: float) -> bool:
    """A retry is worth it only if the wait leaves time for another attempt."""
    return time.monotonic() + wait < deadline


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

"""Sending requests: one sync httpx client per run, retries with backoff, transport errors classified.

The run makes one client (``make_run_client``), shared by the execute stage's thread pool, its connections
bounded by the pool's concurrency. ``send`` retries only what is safe to send twice and classifies what never
got an answer (``TransportFailure``).

The case's ``timeout_sec`` is one deadline for everything a request does, retries and redirects included:
every socket operation is cut to the time left (``http.deadline``), so a server that drips its answer ends as
``timeout``. A body over the response cap (``limits.response_mib``, decoded; ``http.read_body``) ends the case
as ``response_too_large``, not retried.

Redirects are followed here, never by httpx, hop by hop, as ``Redirects`` allows. Every hop is a
``request_sent`` event with its ``host``, so the in-run ``host_allowlist`` guard checks each hop.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from qlab.adapters import http
from qlab.adapters.scrub import SECRET_KEYS, normalize_key
from qlab.execute.events import EventLog
from qlab.execute.request import PreparedRequest
from qlab.project.model import Environment, Limits, host_allowed

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
RETRY_STATUSES = frozenset({429, 503})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 20
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Redirects:
    """Whether and where a request may be redirected. ``read_only``: the request reads a read-only tool;
    ``allowed_hosts``: the environment's allowlist.

    - a request that may change data (not a read of a read-only tool) is never redirected: a 3xx answer to it
      is ``redirect_refused``, and nothing is sent to the new location;
    - a read follows a redirect to its own origin or to a host in ``allowed_hosts``; anywhere else is
      ``redirect_refused``;
    - when the origin changes, every credential qlab added is dropped for that hop and the ones after it: the
      auth profile's headers and query parameters, cookies, and any header with a secret's name
      (``X-API-Key``, ``Authorization``…). httpx alone strips only ``Authorization``.
    """

    follow: bool = False
    read_only: bool = True
    allowed_hosts: tuple[str, ...] = ()


NO_REDIRECTS = Redirects()


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
    """No usable answer: ``reason`` is ``timeout``, ``connection_error``, ``tls_error``, ``http_error``,
    ``redirect_refused`` or ``response_too_large``."""

    def __init__(self, reason: str, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.reason = reason
        self.attempts = attempts


def make_run_client(*, max_connections: int = 8, transport: http.BaseTransport | None = None) -> http.Client:
    """The run's client: bounded connections, no cookie persistence between requests, no env proxies, and no
    redirect followed by httpx (``send`` follows them itself)."""
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
    redirects: Redirects = NO_REDIRECTS,
    retry: RetryPolicy,
    events: EventLog,
    step: str,
    display_path: str,
    auth_headers: Mapping[str, str] | None = None,
    auth_params: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    max_bytes: int = Limits().response_bytes,
) -> Exchange:
    """Send ``request`` until it is answered or retries run out; raise TransportFailure when never answered.

    ``deadline`` is a ``time.monotonic()`` instant (the case's ``timeout_sec``), the end of every attempt,
    redirect and wait. ``step`` names the step in events (``"0"``, ``"cleanup 1"``); ``display_path`` is the
    path shown in events (secret query values already redacted). ``max_bytes``: the cap of each body, decoded.

    Retries happen only for idempotent requests (the tool's ``idempotent`` flag, else the method: a POST that
    may have reached the server is never sent twice), only on connect errors, 429 and 503. A ``Retry-After``
    is honoured, capped at ``max_retry_after_sec`` and by the deadline; otherwise the wait is
    ``backoff_sec * 2**(attempt-1)``.
    """
    kwargs = request.httpx_kwargs()
    if auth_headers:
        kwargs["headers"] = {**kwargs.get("headers", {}), **auth_headers}
    if auth_params:
        kwargs["params"] = [*kwargs.get("params", []), *auth_params.items()]
    idempotent = (
        request.idempotent if request.idempotent is not None else request.method in IDEMPOTENT_METHODS
    )
    url = http.URL(request.url)  # parsed once: the host the events name is the host the request goes to
    host = host_of(url)
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
        events.add(
            "request_sent",
            step=step,
            method=request.method,
            path=display_path,
            attempt=attempt,
            host=host,
        )
        started = time.perf_counter()
        try:
            with http.deadline(deadline):
                answer = http.call(
                    client, request.method, url, timeout=remaining, max_bytes=max_bytes, **kwargs
                )
                response, body = _follow(
                    client,
                    answer,
                    request,
                    kwargs,
                    redirects=redirects,
                    deadline=deadline,
                    events=events,
                    step=step,
                    display_path=display_path,
                    credentials=(set(auth_headers or ()), set(auth_params or ())),
                    max_bytes=max_bytes,
                )
        except TransportFailure as failure:
            failure.attempts = attempt
            raise
        except http.BodyTooLarge as exc:
            latency = (time.perf_counter() - started) * 1000
            events.add(
                "response_received",
                step=step,
                status=None,
                error="response_too_large",
                latency_ms=round(latency, 3),
            )
            raise TransportFailure(
                "response_too_large",
                f"{request.method} {display_path}: {exc} (limits.response_mib)",
                attempts=attempt,
            ) from None
        except (http.HTTPError, ssl.SSLError, OSError, ValueError) as exc:
            reason = classify(exc)
            if reason != "timeout" and time.monotonic() >= deadline:
                reason = "timeout"  # the deadline cut the connection short, whatever the socket then said
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
            what = "the case ran out of its timeout_sec" if reason == "timeout" else _describe(exc)
            raise TransportFailure(
                reason, f"{request.method} {display_path}: {reason}: {what}", attempts=attempt
            ) from None
        latency = (time.perf_counter() - started) * 1000
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


def host_of(url: http.URL) -> str:
    """``host:port`` of a URL (the port always written): what events and guards name, never its userinfo."""
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    return f"[{url.host}]:{port}" if ":" in url.host else f"{url.host}:{port}"


def _origin(url: http.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port  # httpx writes a scheme's default port as None


def _follow(
    client: http.Client,
    answer: tuple[http.Response, bytes],
    request: PreparedRequest,
    kwargs: dict[str, Any],
    *,
    redirects: Redirects,
    deadline: float,
    events: EventLog,
    step: str,
    display_path: str,
    credentials: tuple[set[str], set[str]],
    max_bytes: int,
) -> tuple[http.Response, bytes]:
    """Follow the redirects of ``answer`` (a response and its body) as ``redirects`` allows; the final
    response, its ``history`` holding the hops, and its body. Raises TransportFailure ``redirect_refused``
    for a refused hop."""
    response, body = answer
    if not redirects.follow or response.status_code not in REDIRECT_STATUSES:
        return response, body  # (most responses: no URL parsed)
    origin = _origin(http.URL(request.url))
    method = request.method
    hop_kwargs = dict(kwargs)
    history: list[http.Response] = []
    stripped = False  # once off the origin, the credentials stay dropped (also on a way back)
    while response.status_code in REDIRECT_STATUSES and "location" in response.headers:
        target = response.url.join(response.headers["location"]).copy_with(username=None, password=None)
        host = host_of(target)
        what = f"{method} {display_path} answered {response.status_code} with a redirect to {host}"
        if not redirects.read_only:
            raise TransportFailure(
                "redirect_refused",
                f"{what}: a request that may change data is never redirected; nothing was sent to {host}",
            )
        same_origin = _origin(target) == origin
        if not same_origin and not host_allowed(str(target), redirects.allowed_hosts):
            listed = ", ".join(redirects.allowed_hosts) or "none"
            raise TransportFailure(
                "redirect_refused",
                f"{what}, which is neither the request's own origin nor in allowed_hosts ({listed}); "
                "nothing was sent there",
            )
        if len(history) >= MAX_REDIRECTS:
            raise TransportFailure("http_error", f"{what}: more than {MAX_REDIRECTS} redirects")
        if not same_origin and not stripped:
            hop_kwargs = _without_credentials(hop_kwargs, credentials[0])
            stripped = True
        if response.status_code == 303 and method != "HEAD":
            method = "GET"
        for key in ("json", "data", "files", "content"):  # a read's redirect carries no body
            hop_kwargs.pop(key, None)
        hop_kwargs.pop("params", None)  # the Location is the whole URL; the profile's keys come back below
        sent = target
        if same_origin and not stripped and credentials[1]:
            # added to the Location's own query: httpx's ``params=`` would replace that query
            sent = target.copy_merge_params(
                [(k, v) for k, v in kwargs.get("params", []) if k in credentials[1]]
            )
        history.append(response)
        events.add("redirect", step=step, status=response.status_code, to=host, path=target.path)
        events.add("request_sent", step=step, method=method, path=target.path, host=host)
        response, body = http.call(
            client,
            method,
            str(sent),
            timeout=max(deadline - time.monotonic(), 0.001),
            max_bytes=max_bytes,
            **hop_kwargs,
        )
    response.history = history
    return response, body


def _without_credentials(kwargs: dict[str, Any], header_names: set[str]) -> dict[str, Any]:
    """``kwargs`` for a hop to another origin: no auth header, cookie or secret-named header (the query is the
    Location's own: ``_follow`` never carries the request's parameters to another origin)."""
    dropped = {n.lower() for n in header_names}
    headers = {
        k: v
        for k, v in (kwargs.get("headers") or {}).items()
        if k.lower() not in dropped and normalize_key(k) not in SECRET_KEYS
    }
    return {**kwargs, "headers": headers}


def _fits(wait: float, deadline: float) -> bool:
    """A retry is worth it only if the wait leaves time for another attempt."""
    return time.monotonic() + wait < deadline


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

"""httpx, behind one module: every HTTP client qlab makes comes from here.

A client makes connections, which a run reuses: one client per purpose. The CA bundle (~20 ms) is loaded once per
process, into one TLS context every client shares.
Only ``http.py`` imports httpx (and httpcore, its transport); callers use the re-exported names.

httpx's timeouts bound each socket operation, not a request: a server that sends one byte every half second
never trips a 2 s read timeout. ``deadline(instant)`` gives the requests a thread makes inside it one total
deadline: the clients ``make_client`` builds run on a network backend that cuts every connect, read and write
to the time left, so the request fails with a timeout at the deadline whatever the server does.
"""

from __future__ import annotations

import functools
import ssl
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

# httpx imports its command-line client whenever rich, pygments and click are installed (click always is, with
# qlab): ~45 ms and ~6 MiB in every qlab process, for a client qlab never runs. None in sys.modules makes that one
# import fail as it does where they are absent (httpx then defines a stub ``httpx.main``); the entry is removed
# right after, so an explicit ``import httpx._main`` later in the process still works.
_CLI = "httpx._main"
_BLOCK_CLI = _CLI not in sys.modules and "httpx" not in sys.modules
if _BLOCK_CLI:
    sys.modules[_CLI] = None  # type: ignore[assignment]
try:
    import httpcore
    import httpx
finally:
    if _BLOCK_CLI and _CLI in sys.modules and sys.modules[_CLI] is None:
        del sys.modules[_CLI]

Client = httpx.Client
Response = httpx.Response
Request = httpx.Request
Timeout = httpx.Timeout
TransportError = httpx.TransportError
TimeoutException = httpx.TimeoutException
ConnectError = httpx.ConnectError
ConnectTimeout = httpx.ConnectTimeout
Headers = httpx.Headers
HTTPError = httpx.HTTPError
MockTransport = httpx.MockTransport
BaseTransport = httpx.BaseTransport
TooManyRedirects = httpx.TooManyRedirects
RemoteProtocolError = httpx.RemoteProtocolError
ReadError = httpx.ReadError
URL = httpx.URL

_DEADLINE = threading.local()
_MIN_WAIT_SEC = 0.001  # past the deadline a socket operation still gets this long, then times out


@contextmanager
def deadline(instant: float | None) -> Iterator[None]:
    """Within the block, no socket operation of a request this thread sends (with a ``make_client`` client)
    waits past ``instant``, a ``time.monotonic()`` value; past it the request raises a TimeoutException."""
    previous = getattr(_DEADLINE, "at", None)
    _DEADLINE.at = instant
    try:
        yield
    finally:
        _DEADLINE.at = previous


def _bounded(timeout: float | None) -> float | None:
    at: float | None = getattr(_DEADLINE, "at", None)
    if at is None:
        return timeout
    left = max(at - time.monotonic(), _MIN_WAIT_SEC)
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most until the thread's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every operation cut to the thread's deadline (see ``deadline``)."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The one certificate-verifying TLS context of the process, shared by its clients (a pre-run probe, the
    execute stage, an engine): loading the CA bundle is most of what a client costs (~20 ms and ~1 MiB each)."""
    return httpx.create_ssl_context(trust_env=False)


class _Pool(httpcore.ConnectionPool):
    """httpcore's connection pool, given the process's TLS context when it opens its first https connection: a
    run that only speaks plain http (a dev server on 127.0.0.1) never loads the CA bundle (~16 ms, ~1 MiB)."""

    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        if self._ssl_context is None and origin.scheme == b"https":
            self._ssl_context = _ssl_context()
        return super().create_connection(origin)


class _Transport(httpx.HTTPTransport):
    """httpx's own transport over the deadline backend. ``HTTPTransport.__init__`` is not called: it would
    build a second connection pool (and load the CA bundle again); this pool is the one it would build, with
    the backend swapped and the TLS context set on first use (``_Pool``), and ``_pool`` is all the inherited
    methods use."""

    def __init__(self, limits: httpx.Limits) -> None:
        self._pool = _Pool(
            ssl_context=None,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )


def make_client(
    *,
    base_url: str = "",
    timeout: float = 30.0,
    max_connections: int = 16,
    follow_redirects: bool = False,
    headers: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    persist_cookies: bool = True,
) -> httpx.Client:
    """A sync client with bounded connections. ``transport`` lets tests inject ``httpx.MockTransport``.

    Redirects are not followed unless asked: a client that carries credentials (an engine's headers, an LLM
    key, an OAuth2 client secret) must never resend them to wherever a redirect points.

    ``persist_cookies=False`` gives a client that keeps no cookies, so a Set-Cookie from one request never
    rides along on another (the execute stage shares one client between cases); each response still has its
    own ``cookies``.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return (httpx.Client if persist_cookies else _CookielessClient)(
        base_url=base_url,
        timeout=httpx.Timeout(timeout),
        limits=limits,
        follow_redirects=follow_redirects,
        headers=dict(headers or {}),
        transport=transport if transport is not None else _Transport(limits),
        trust_env=False,  # never route through a proxy from the environment: only the configured hosts
    )


class _NoCookies(httpx.Cookies):
    """A cookie store that stays empty: a response's Set-Cookie is not even parsed into it."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set(self, name: str, value: str, domain: str = "", path: str = "/") -> None:
        raise TypeError("this client keeps no cookies")


class _CookielessClient(httpx.Client):
    """A client without a cookie store. httpx has no switch for that, and its default store parses every
    response into urllib's cookie jar (even one whose policy accepts nothing): ~25 µs a request, a sixth of
    qlab's CPU per case against a fast server (``bench/bench_execute.py cpu``)."""

    _none = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._none

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        raise TypeError("this client keeps no cookies")


def get_text(
    url: str, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None
) -> tuple[str, str]:
    """GET ``url`` and return (text, content-type). Raises httpx errors; callers turn them into InputError."""
    with make_client(timeout=timeout, transport=transport, follow_redirects=True) as client:
        response = client.get(url)
        response.raise_for_status()
        return response.text, response.headers.get("content-type", "")

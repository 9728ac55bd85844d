"""httpx, behind one module: every request qlab sends goes through a client made here, every body it reads
through ``read_body``. One policy for cases, engines, LLM endpoints, spec fetches and probes:

- no proxy, ``.netrc`` or certificate file from the environment (``trust_env`` off);
- no redirect followed by httpx: callers check each hop (``execute.client`` against ``allowed_hosts``; ``get``
  keeps credentials on the URL's own origin);
- one total deadline per request, headers and body: its timeout, tightened by ``deadline(instant)``;
- bodies decoded (gzip, deflate, stacked) in bounded steps up to a cap of decoded bytes (``BodyTooLarge``),
  JSON from outside is read strictly by ``qlab.adapters.strictjson``.

httpcore (declared) is used through its public connection pool and network backend only.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
import sys
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# httpx imports its command-line client whenever rich, pygments and click are installed (click always is, with
# qlab), for a client qlab never runs. None in sys.modules makes that one import fail as it does where they are
# absent (httpx then defines a stub ``httpx.main``); the entry is removed right after, so an explicit
# ``import httpx._main`` later in the process still works.
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
ReadTimeout = httpx.ReadTimeout
ConnectError = httpx.ConnectError
ConnectTimeout = httpx.ConnectTimeout
DecodingError = httpx.DecodingError
Headers = httpx.Headers
HTTPError = httpx.HTTPError
MockTransport = httpx.MockTransport
BaseTransport = httpx.BaseTransport
TooManyRedirects = httpx.TooManyRedirects
RemoteProtocolError = httpx.RemoteProtocolError
ReadError = httpx.ReadError
URL = httpx.URL

MiB = 1024 * 1024
# the encodings ``read_body`` decodes (bounded); a server sending another one gets its bytes read as they are
ACCEPT_ENCODING = "gzip, deflate"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DECODE_STEP = 64 * 1024  # decoded bytes one decompression step may produce
_MIN_WAIT_SEC = 0.001  # past the deadline a socket operation still gets this long, then times out


class BodyTooLarge(httpx.HTTPError):
    """A body went over its cap of decoded bytes (``limit``); the part read so far is dropped."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the body is larger than {_size(limit)}, decoded")
        self.limit = limit


def _size(count: int) -> str:
    return f"{count / MiB:g} MiB" if count >= MiB else f"{count} bytes"


# ------------------------------------------------------------------------------------------- deadlines

_DEADLINE = threading.local()


@contextlib.contextmanager
def deadline(instant: float | None) -> Iterator[None]:
    """Within the block, no request this thread sends (with a ``make_client`` client) waits past ``instant``,
    a ``time.monotonic()`` value: its socket operations are cut to the time left, then raise a timeout."""
    previous = getattr(_DEADLINE, "at", None)
    _DEADLINE.at = instant if previous is None or instant is None else min(previous, instant)
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
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every operation cut to the thread's deadline (see ``deadline``)."""

    def __init__(self) -> None:
        self.inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


# ------------------------------------------------------------------------------------------- transport

# most specific first: a ReadTimeout is a TimeoutException is ...
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _httpx_errors(at: float | None) -> Iterator[None]:
    """httpcore's exceptions as httpx's, under the request's deadline ``at``."""
    try:
        with deadline(at):
            yield
    except Exception as exc:
        mapped = next((theirs for ours, theirs in _ERRORS if isinstance(exc, ours)), None)
        if mapped is None:
            raise
        raise mapped(str(exc)) from exc


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The one certificate-verifying TLS context of the process, shared by its clients: loading the CA bundle
    is most of what a client costs, and a run that only speaks plain http never loads it."""
    return httpx.create_ssl_context(trust_env=False)


class _Body(httpx.SyncByteStream):
    """A response body read under its request's deadline: each chunk is read with the time left, and a body
    still arriving at the deadline (a drip, or bytes that decode to nothing) ends in a timeout."""

    def __init__(self, inner: Iterable[bytes], at: float | None) -> None:
        self.inner = inner
        self.at = at

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self.inner)
        while True:
            with _httpx_errors(self.at):
                chunk = next(chunks, None)
            if chunk is None:
                return
            if self.at is not None and time.monotonic() > self.at:
                raise httpx.ReadTimeout("the body was still arriving at the request's deadline")
            yield chunk

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


class _Transport(httpx.BaseTransport):
    """httpx's default transport rebuilt on httpcore's public API: connection pools over the deadline backend.
    Each request gets one deadline, its timeout from now (capped by the thread's ``deadline``). The https pool
    (and with it the CA bundle) is made on the first https request."""

    def __init__(self, limits: httpx.Limits) -> None:
        self.limits = limits
        self.backend = _DeadlineBackend()
        self.plain = self.new_pool(None)
        self.tls: httpcore.ConnectionPool | None = None
        self.lock = threading.Lock()

    def new_pool(self, context: ssl.SSLContext | None) -> httpcore.ConnectionPool:
        return httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=self.limits.max_connections,
            max_keepalive_connections=self.limits.max_keepalive_connections,
            keepalive_expiry=self.limits.keepalive_expiry,
            network_backend=self.backend,
        )

    def _pool_for(self, scheme: bytes) -> httpcore.ConnectionPool:
        if scheme != b"https":
            return self.plain
        with self.lock:
            if self.tls is None:
                self.tls = self.new_pool(_ssl_context())
            return self.tls

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        timeout = (request.extensions.get("timeout") or {}).get("read")
        at = None if timeout is None else time.monotonic() + timeout
        thread_at: float | None = getattr(_DEADLINE, "at", None)
        if thread_at is not None:
            at = thread_at if at is None else min(at, thread_at)
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors(at):
            answer = self._pool_for(url.raw_scheme).handle_request(core)
        assert isinstance(answer.stream, Iterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream, at),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self.plain.close()
        if self.tls is not None:
            self.tls.close()


# --------------------------------------------------------------------------------------------- clients


def make_client(
    *,
    base_url: str = "",
    timeout: float = 30.0,
    max_connections: int = 16,
    headers: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    persist_cookies: bool = True,
) -> httpx.Client:
    """A sync client with bounded connections; ``timeout`` is each request's total deadline. ``transport``
    lets tests inject ``httpx.MockTransport``.

    It follows no redirect: a client that carries credentials (an engine's headers, an LLM key, an OAuth2
    client secret) must never resend them to wherever a redirect points.

    ``persist_cookies=False`` gives a client that keeps no cookies, so a Set-Cookie from one request never
    rides along on another (the execute stage shares one client between cases); each response still has its
    own ``cookies``.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return (httpx.Client if persist_cookies else _CookielessClient)(
        base_url=base_url,
        timeout=httpx.Timeout(timeout),
        limits=limits,
        follow_redirects=False,
        headers={"Accept-Encoding": ACCEPT_ENCODING, **dict(headers or {})},
        transport=transport if transport is not None else _Transport(limits),
        trust_env=False,  # no proxy, no .netrc, no certificate file from the environment
    )


class _NoCookies(httpx.Cookies):
    """A cookie store that stays empty: a response's Set-Cookie is not even parsed into it."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set(self, name: str, value: str, domain: str = "", path: str = "/") -> None:
        raise TypeError("this client keeps no cookies")


class _CookielessClient(httpx.Client):
    """A client without a cookie store. httpx has no switch for that, and its default store parses every
    response into urllib's cookie jar (even one whose policy accepts nothing), a cost paid on every case."""

    _none = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._none

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        raise TypeError("this client keeps no cookies")


# ---------------------------------------------------------------------------------------------- bodies


def read_body(response: httpx.Response, *, max_bytes: int) -> bytes:
    """The body of a response sent with ``stream=True`` (see ``call``), decoded, then closed.

    Each ``Content-Encoding`` layer (gzip, deflate; several stacked) is undone in steps of at most
    ``_DECODE_STEP`` decoded bytes, so nothing is ever held beyond ``max_bytes`` plus one step: more raises
    ``BodyTooLarge``; a broken encoding raises ``DecodingError``; the request's deadline, a timeout."""
    try:
        if response.is_stream_consumed:  # made with its content in memory (MockTransport): nothing to stream
            if len(response.content) > max_bytes:
                raise BodyTooLarge(max_bytes)
            return response.content
        declared = response.headers.get("content-length", "")
        layers = _encodings(response)
        if not layers and declared.isdigit() and int(declared) > max_bytes:
            raise BodyTooLarge(max_bytes)
        body = bytearray()
        for piece in _decoded(response.iter_raw(), layers):
            if len(body) + len(piece) > max_bytes:
                raise BodyTooLarge(max_bytes)
            body += piece
        return bytes(body)
    finally:
        response.close()


def call(
    client: httpx.Client, method: str, url: str | httpx.URL, *, max_bytes: int, **kwargs: Any
) -> tuple[httpx.Response, bytes]:
    """Send one request (no redirect followed) and read its body with ``read_body``: (response, body).
    ``kwargs`` are ``httpx.Client.build_request``'s (``headers``, ``params``, ``json``, ``content``,
    ``timeout``, …)."""
    response = client.send(client.build_request(method, url, **kwargs), stream=True)
    return response, read_body(response, max_bytes=max_bytes)


def status_of(client: httpx.Client, url: str, *, max_bytes: int = MiB) -> int:
    """GET ``url`` and return its status (a probe). The body is read, up to ``max_bytes``: a server that
    breaks off in the middle of its answer has not answered."""
    response = client.send(client.build_request("GET", url), stream=True)
    with contextlib.suppress(BodyTooLarge):  # an answer all the same
        read_body(response, max_bytes=max_bytes)
    return response.status_code


def _encodings(response: httpx.Response) -> list[str]:
    values = response.headers.get_list("content-encoding", split_commas=True)
    return [v.strip().lower() for v in values if v.strip().lower() not in ("", "identity")]


def _decoded(chunks: Iterator[bytes], layers: list[str]) -> Iterator[bytes]:
    """``chunks`` with the encodings ``layers`` undone, last applied first. An encoding qlab does not decode
    (br, zstd: never asked for) leaves the bytes as they came."""
    for layer in reversed(layers):
        if layer in ("gzip", "x-gzip"):
            chunks = _inflate(chunks, zlib.MAX_WBITS | 16)
        elif layer == "deflate":
            chunks = _inflate(chunks, zlib.MAX_WBITS, raw_fallback=True)
    return chunks


def _inflate(chunks: Iterator[bytes], wbits: int, *, raw_fallback: bool = False) -> Iterator[bytes]:
    """Decompress a stream in steps of at most ``_DECODE_STEP`` output bytes (zlib's ``max_length``): the
    consumer pulls each step, so a bomb is stopped by the consumer's cap, not by memory."""
    decoder = zlib.decompressobj(wbits)
    first = True  # no output yet: a "deflate" body may still turn out to be raw deflate
    for chunk in chunks:
        data = chunk
        while True:
            try:
                out = decoder.decompress(data, _DECODE_STEP)
            except zlib.error as exc:
                if first and raw_fallback:  # "deflate" sent without its zlib header, as many servers do
                    decoder, raw_fallback = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise httpx.DecodingError(f"the body is not valid {_name(wbits)}: {exc}") from None
            first = False
            data = decoder.unconsumed_tail
            if out:
                yield out
            if decoder.eof:
                return  # anything after the end of the compressed stream is ignored, as httpx does
            if not data and len(out) < _DECODE_STEP:
                break


def _name(wbits: int) -> str:
    return "gzip" if wbits > zlib.MAX_WBITS else "deflate"


# ------------------------------------------------------------------------------------------ one fetch


@dataclass(frozen=True, slots=True)
class Fetched:
    """A body fetched by ``get``: its bytes, ``Content-Type``, the URL that answered, and whether a redirect
    led there."""

    body: bytes
    content_type: str
    url: str
    redirected: bool


def get(
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    headers: Mapping[str, str] | None = None,
    max_redirects: int = 10,
    transport: httpx.BaseTransport | None = None,
) -> Fetched:
    """GET ``url`` (a spec, a referenced document) within one deadline of ``timeout`` seconds, following
    redirects between http(s) URLs: ``headers`` and the URL's own user info go only to the URL's origin, and a
    redirect from https to plain http is refused. Raises ``HTTPError`` (``HTTPStatusError`` for a 4xx/5xx,
    ``BodyTooLarge``, ``TooManyRedirects``, timeouts)."""
    start = httpx.URL(url)
    origin = (start.scheme, start.host, start.port)
    target = start
    with make_client(timeout=timeout, transport=transport) as client, deadline(time.monotonic() + timeout):
        for _hop in range(max_redirects + 1):
            own = (target.scheme, target.host, target.port) == origin
            response = client.send(
                client.build_request("GET", target, headers=dict(headers or {}) if own else {}),
                stream=True,
            )
            if response.status_code >= 400:
                response.close()
                response.raise_for_status()
            if response.status_code not in REDIRECT_STATUSES or "location" not in response.headers:
                body = read_body(response, max_bytes=max_bytes)
                return Fetched(body, response.headers.get("content-type", ""), str(target), target != start)
            response.close()
            following = target.join(response.headers["location"])
            if following.scheme not in ("http", "https") or (
                target.scheme == "https" and following.scheme == "http"
            ):
                raise httpx.UnsupportedProtocol(
                    f"{target.host} redirected to a {following.scheme}: URL; only https (or http from http) "
                    "is followed"
                )
            same = (following.scheme, following.host, following.port) == origin
            target = following if same else following.copy_with(username=None, password=None)
    raise httpx.TooManyRedirects(f"more than {max_redirects} redirects")

"""httpx, behind one module: every HTTP client qlab makes comes from here.

A client is expensive (~20 ms for the CA bundle), so a run makes one per purpose and reuses its connections.
Only ``http.py`` imports httpx; callers use the re-exported names.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

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


def make_client(
    *,
    base_url: str = "",
    timeout: float = 30.0,
    max_connections: int = 16,
    follow_redirects: bool = True,
    headers: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    persist_cookies: bool = True,
) -> httpx.Client:
    """A sync client with bounded connections. ``transport`` lets tests inject ``httpx.MockTransport``.

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
        transport=transport,
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
    with make_client(timeout=timeout, transport=transport) as client:
        response = client.get(url)
        response.raise_for_status()
        return response.text, response.headers.get("content-type", "")

"""httpx, behind one module: every HTTP client qlab makes comes from here.

A client is expensive (~20 ms for the CA bundle), so a run makes one per purpose and reuses its connections.
Only ``http.py`` imports httpx; callers use the re-exported names.
"""

from __future__ import annotations

from collections.abc import Mapping
from http.cookiejar import CookieJar, DefaultCookiePolicy

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

    ``persist_cookies=False`` gives the client a cookie jar that accepts nothing, so a Set-Cookie from one
    request never rides along on another (the execute stage shares one client between cases).
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    jar = None if persist_cookies else CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    return httpx.Client(
        base_url=base_url,
        timeout=httpx.Timeout(timeout),
        limits=limits,
        follow_redirects=follow_redirects,
        headers=dict(headers or {}),
        transport=transport,
        cookies=jar,
        trust_env=False,  # never route through a proxy from the environment: only the configured hosts
    )


def get_text(
    url: str, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None
) -> tuple[str, str]:
    """GET ``url`` and return (text, content-type). Raises httpx errors; callers turn them into InputError."""
    with make_client(timeout=timeout, transport=transport) as client:
        response = client.get(url)
        response.raise_for_status()
        return response.text, response.headers.get("content-type", "")

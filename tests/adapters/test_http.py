from __future__ import annotations

import httpx
import pytest

from fresh import run_fresh
from qlab.adapters import http


def _cookie_server() -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/login":
            return httpx.Response(200, headers={"set-cookie": "session=abc123; Path=/"})
        if request.url.path == "/hop":
            return httpx.Response(302, headers={"location": "/echo", "set-cookie": "hop=1; Path=/"})
        return httpx.Response(200, text=request.headers.get("cookie", ""))

    return httpx.MockTransport(handler), seen


def test_a_client_that_persists_cookies_sends_them_back() -> None:
    transport, _seen = _cookie_server()
    with http.make_client(transport=transport) as client:
        client.get("http://api.test/login")
        assert client.get("http://api.test/echo").text == "session=abc123"


def test_a_cookieless_client_keeps_nothing_but_each_response_has_its_cookies() -> None:
    transport, seen = _cookie_server()
    with http.make_client(transport=transport, persist_cookies=False) as client:
        login = client.get("http://api.test/login")
        assert dict(login.cookies) == {"session": "abc123"}
        assert client.get("http://api.test/echo").text == ""
        redirected = client.get(
            "http://api.test/hop", follow_redirects=True
        )  # the redirect's cookie does not ride to the next hop
        assert redirected.text == "" and dict(redirected.history[0].cookies) == {"hop": "1"}
        assert len(client.cookies) == 0 and "cookie" not in seen[-1].headers


def test_a_cookieless_client_refuses_cookies_set_by_hand() -> None:
    with http.make_client(persist_cookies=False) as client:
        with pytest.raises(TypeError):
            client.cookies = {"session": "abc123"}
        with pytest.raises(TypeError):
            client.cookies.set("session", "abc123")
        assert len(client.cookies) == 0


def test_clients_follow_no_redirect_unless_asked() -> None:
    """A client that carries credentials (an engine's headers, an LLM key) never resends them elsewhere."""
    transport, seen = _cookie_server()
    with http.make_client(transport=transport, headers={"X-API-Key": "k"}) as client:
        assert client.get("http://api.test/hop").status_code == 302
    assert [r.url.path for r in seen] == ["/hop"]


def test_clients_share_one_certificate_verifying_tls_context() -> None:
    """The CA bundle is loaded once per process, into one context that verifies certificates and host names;
    clients make it when they open their first https connection (here refused: no server on that port)."""
    from servers import free_port

    code = f"""
import ssl
from qlab.adapters import http
with http.make_client() as a, http.make_client(persist_cookies=False) as b:
    for client in (a, b):
        try:
            client.get("https://127.0.0.1:{free_port()}/")
        except http.ConnectError:
            pass
context = http._ssl_context()
print(http._ssl_context.cache_info().misses, context.verify_mode == ssl.CERT_REQUIRED, context.check_hostname,
      context.cert_store_stats()["x509_ca"] > 0)
"""
    assert run_fresh(code).split() == ["1", "True", "True", "True"]


def test_a_client_that_only_speaks_plain_http_never_loads_the_ca_bundle(httpbin_url: str) -> None:
    """A dev server on 127.0.0.1 is plain http: the run's client makes no TLS context for it."""
    assert httpbin_url.startswith("http://")
    code = f"""
from qlab.adapters import http
with http.make_client(persist_cookies=False) as client:
    print(client.get("{httpbin_url}/get").status_code, http._ssl_context.cache_info().misses)
"""
    assert run_fresh(code).split() == ["200", "0"]


def test_importing_the_client_does_not_load_the_httpx_command_line() -> None:
    """httpx imports its command-line client (rich, pygments) where they are installed; qlab never runs it. A
    later explicit import of it still works (no placeholder is left behind)."""
    import importlib.util

    from fresh import modules_after

    loaded = modules_after("import qlab.adapters.http")
    assert not loaded & {"httpx._main", "rich", "pygments"}
    if all(importlib.util.find_spec(m) for m in ("rich", "pygments", "click")):
        assert run_fresh("import qlab.adapters.http\nimport httpx._main\nprint(httpx._main.main)")

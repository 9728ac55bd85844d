"""The probe before execute is measured: any HTTP answer counts; no answer says why."""

from __future__ import annotations

import servers
from qlab.adapters import http
from qlab.run.baseline import probe


def test_any_http_answer_is_an_answer() -> None:
    seen: list[str] = []

    def handler(request: http.Request) -> http.Response:
        seen.append(str(request.url))
        return http.Response(404)

    assert probe("http://api.test/v1", transport=http.MockTransport(handler)) == ""
    assert seen == ["http://api.test/v1"]


def test_no_answer_says_why() -> None:
    def slow(request: http.Request) -> http.Response:
        raise http.TimeoutException("read timed out", request=request)

    assert (
        probe("http://api.test", timeout=0.5, transport=http.MockTransport(slow)) == "no answer within 0.5s"
    )
    closed = probe(f"http://127.0.0.1:{servers.free_port()}", timeout=2)
    assert closed.startswith("ConnectError")

"""A fault-injecting HTTP server on 127.0.0.1 (stdlib ``http.server``): every downstream fault qlab must survive.

Used in process (``with FaultServer() as server: server.url``, a thread) by the execute-stage tests, and as a
subprocess (``python tests/reliability/servers_faults.py --port N``) that ``qlab run`` starts itself as an
environment's dev server, so the CLI tests also prove the server's process group is stopped.

Routes (any method unless said otherwise; ``<n>`` is a number):

==========================  =====================================================================================
``/health``, ``/ok``        200 ``{"data": {"ok": true, ...}}``
``/status/<code>``          that status with a JSON error body (401 also sends ``WWW-Authenticate``)
``/flaky/<code>/<n>``       ``<code>`` for the first ``n`` hits of this path, then 200; a 429 carries
                            ``Retry-After: 1`` (``?retry_after=S`` sets it for any code)
``/retry-after/<s>``        always 429 with ``Retry-After: <s>``
``/slow/<s>``               answers 200 after ``s`` seconds (a float)
``/reset``                  promises 1 MB, sends 1 KB of it, then resets the connection (TCP RST)
``/invalid-json``           200 ``application/json`` whose body is cut JSON
``/big/<mb>``               200 JSON of about ``mb`` MiB (streamed: the server never holds it)
``/deep/<n>``               200 JSON nested ``n`` levels deep (``{"data": {"a": {"a": ...}}}``)
``/redirect-loop``          302 to itself, forever
``/wrong-type``             200 ``text/html`` page
``/json-as-text``           200 valid JSON sent as ``text/plain``
``/echo`` (``/anything``)   200 JSON echo of method, path, query, headers, cookies and body (like httpbin)
``/encoded``                200 echo of the ``X-Session-Token`` header in the forms an API may give a token: hex,
                            every byte ``%XX`` (mixed case), cut by a line break, base64 after a prefix (MIME,
                            76 columns)
``/login``                  200 that sets ``Set-Cookie: session=<cookie value>`` and echoes the value in the body
``/profile``                200 ``{"data": {"user_id": <n>, "owner": <n>, ...}}`` with ``<n>`` the number in
                            ``FAULT_USER_ID`` (a sensitive field's value, as a JSON number)
``/oauth/token`` (POST)     OAuth2 client-credentials token endpoint: checks Basic client credentials, returns
                            ``{"access_token": <token>, "token_type": "bearer", "expires_in": 3600}``
``/orders`` (POST)          201 ``{"data": {"orderId": "O-<n>"}}``; ``/orders/slow/<s>`` the same after ``s`` s
``/orders/<id>`` (DELETE)   204 (the cleanup request the crash tests look for)
==========================  =====================================================================================

Every request is recorded (method, path without the query, time). The request log the server writes (its
stdout, which ``qlab run`` sends to ``server-<env>.log``) holds method, path without query and status only,
as production servers are set up to do — unless ``FAULT_LOG_HEADERS=1``, when it also logs the request's
credentials and the cookie it sets, as a careless server does: qlab must keep them out of the log it writes.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

CHUNK = 64 * 1024
_LOGGED = frozenset({"authorization", "x-session-token", "x-api-key", "cookie"})
_FAULT_PREFIX = re.compile(
    r"^(/status/\d{3}|/slow/[\d.]+|/reset|/invalid-json|/deep/\d+|/redirect-loop|/wrong-type|/big/\d+|/retry-after/\d+)/.*$"
)


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the server received."""

    method: str
    path: str  # without the query
    at: float  # time.monotonic() of the server process
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Secrets:
    """What the server hands out or checks: the Set-Cookie value of ``/login`` and the OAuth2 client."""

    cookie_value: str = "cookie-value"
    client_id: str = "client"
    client_secret: str = "client-secret"
    access_token: str = "access-token"
    user_id: int = 4242
    log_headers: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Secrets:
        """The subprocess reads them from ``FAULT_*`` variables (never from its command line)."""
        default = cls()
        return cls(
            cookie_value=environ.get("FAULT_COOKIE_VALUE", default.cookie_value),
            client_id=environ.get("FAULT_CLIENT_ID", default.client_id),
            client_secret=environ.get("FAULT_CLIENT_SECRET", default.client_secret),
            access_token=environ.get("FAULT_ACCESS_TOKEN", default.access_token),
            user_id=int(environ.get("FAULT_USER_ID", default.user_id)),
            log_headers=environ.get("FAULT_LOG_HEADERS") == "1",
        )


class _State:
    def __init__(self, secrets: Secrets, record: IO[str] | None, log: IO[str] | None) -> None:
        self.secrets = secrets
        self.record = record
        self.log = log
        self.seen: list[Seen] = []
        self.hits: dict[str, int] = {}
        self.orders = itertools.count(1)
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def add(self, seen: Seen) -> int:
        """Record a request; returns how often its path was hit so far (this one included)."""
        with self.lock:
            self.seen.append(seen)
            count = self.hits[seen.path] = self.hits.get(seen.path, 0) + 1
            if self.record is not None:
                self.record.write(
                    json.dumps({"method": seen.method, "path": seen.path, "at": seen.at}) + "\n"
                )
                self.record.flush()
        return count

    def write_log(self, line: str) -> None:
        if self.log is not None:
            with self.lock:
                self.log.write(line + "\n")
                self.log.flush()


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no 40 ms Nagle/delayed-ACK stall between headers and body
        server_version = "qlab-fault-server"

        # ------------------------------------------------------------------------------------ plumbing

        def _any(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()}
            count = state.add(Seen(self.command, parts.path, time.monotonic(), headers))
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            try:
                self._route(parts.path, query, body, headers, count)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (a timeout): nothing to answer

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except ValueError:
                if not self.wfile.closed:
                    raise
                self.close_connection = True  # /reset closed the socket itself: nothing left to flush

        def log_message(self, format: str, *args: object) -> None:
            pass  # the request log is written by _send, without queries or headers

        def _send(
            self,
            status: int,
            body: bytes = b"",
            *,
            content_type: str = "application/json",
            headers: Mapping[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if body and self.command != "HEAD" and status != 204:
                self.wfile.write(body)
            state.write_log(f"{self.command} {urlsplit(self.path).path} {status}")
            if state.secrets.log_headers:  # a careless server: credentials and cookies in its log
                sent = {k: v for k, v in self.headers.items() if k.lower() in _LOGGED}
                state.write_log(
                    f"  request headers {sent} set-cookie {(headers or {}).get('Set-Cookie', '')}"
                )

        def _json(self, status: int, data: Any, *, headers: Mapping[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode(), headers=headers)

        # ------------------------------------------------------------------------------------ routes

        def _route(
            self, path: str, query: Mapping[str, str], body: bytes, headers: Mapping[str, str], count: int
        ) -> None:
            # a fault route also answers below itself (``/status/500/search``): an engine base URL can point at it
            path = _FAULT_PREFIX.sub(r"\1", path)
            if path in ("/health", "/ok"):
                self._json(200, {"data": {"ok": True, "path": path}})
            elif m := re.fullmatch(r"/status/(\d{3})", path):
                code = int(m.group(1))
                extra = {"WWW-Authenticate": 'Bearer realm="faults"'} if code == 401 else {}
                self._json(code, {"error": {"status": code, "message": f"injected {code}"}}, headers=extra)
            elif m := re.fullmatch(r"/flaky/(\d{3})/(\d+)", path):
                code, failures = int(m.group(1)), int(m.group(2))
                if count <= failures:
                    # a 429 says when to come back (1 s unless ?retry_after= says otherwise)
                    default = {"retry_after": "1"} if code == 429 else {}
                    after = {**default, **query}.get("retry_after")
                    extra = {"Retry-After": after} if after is not None else {}
                    self._json(code, {"error": {"status": code, "hit": count}}, headers=extra)
                else:
                    self._json(200, {"data": {"ok": True, "hit": count}})
            elif m := re.fullmatch(r"/retry-after/(\d+)", path):
                self._json(429, {"error": {"status": 429}}, headers={"Retry-After": m.group(1)})
            elif m := re.fullmatch(r"/slow/([\d.]+)", path):
                self._sleep(float(m.group(1)))
                self._json(200, {"data": {"ok": True, "slow": True}})
            elif path == "/reset":
                self._reset()
            elif path == "/invalid-json":
                self._send(200, b'{"data": [1, 2, {"cut": ')
            elif m := re.fullmatch(r"/big/(\d+)", path):
                self._big(int(m.group(1)))
            elif m := re.fullmatch(r"/deep/(\d+)", path):
                depth = int(m.group(1))
                self._send(200, b'{"data": ' + b'{"a": ' * depth + b"1" + b"}" * (depth + 1))
            elif path == "/redirect-loop":
                self._send(302, b"", headers={"Location": "/redirect-loop"})
            elif path == "/wrong-type":
                self._send(200, b"<html><body><h1>Maintenance</h1></body></html>", content_type="text/html")
            elif path == "/json-as-text":
                self._send(200, b'{"data": {"ok": true}}', content_type="text/plain")
            elif path in ("/echo", "/anything", "/headers"):
                self._echo(path, query, body, headers)
            elif path == "/encoded":
                self._encoded(headers.get("X-Session-Token", ""))
            elif path == "/login":
                value = state.secrets.cookie_value
                self._json(
                    200,
                    {"data": {"session": value, "logged_in": True}},
                    headers={"Set-Cookie": f"session={value}; Path=/; HttpOnly"},
                )
            elif path == "/profile":
                uid = state.secrets.user_id
                self._json(200, {"data": {"user_id": uid, "owner": uid, "name": "Hana", "user-id": str(uid)}})
            elif path == "/oauth/token" and self.command == "POST":
                self._token(headers)
            elif path == "/orders" and self.command == "POST":
                self._json(201, {"data": {"orderId": f"O-{next(state.orders)}", "status": "open"}})
            elif (m := re.fullmatch(r"/orders/slow/([\d.]+)", path)) and self.command == "POST":
                self._sleep(float(m.group(1)))
                self._json(201, {"data": {"orderId": f"O-{next(state.orders)}", "status": "open"}})
            elif re.fullmatch(r"/orders/[^/]+", path) and self.command == "DELETE":
                self._send(204)
            else:
                self._json(404, {"error": {"status": 404, "message": f"no route {path}"}})

        def _sleep(self, seconds: float) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not state.stopping.is_set():
                time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

        def _reset(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(1024 * 1024))
            self.end_headers()
            self.wfile.write(b'{"data": "' + b"r" * 1024)
            self.wfile.flush()
            # linger 0: close() sends a TCP RST instead of a FIN, i.e. "connection reset by peer" mid-body
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.rfile.close()
            self.wfile.close()
            self.connection.close()
            state.write_log(f"{self.command} /reset reset")

        def _big(self, mib: int) -> None:
            filler = max(0, mib * 1024 * 1024 - 32)
            head, tail = b'{"data": {"blob": "', b'"}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + filler + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            block = b"x" * CHUNK
            left = filler
            while left > 0:
                self.wfile.write(block[: min(CHUNK, left)])
                left -= CHUNK
            self.wfile.write(tail)
            state.write_log(f"{self.command} {urlsplit(self.path).path} 200")

        def _echo(self, path: str, query: Mapping[str, str], body: bytes, headers: Mapping[str, str]) -> None:
            cookies = {}
            for part in headers.get("Cookie", "").split(";"):
                name, _, value = part.strip().partition("=")
                if name:
                    cookies[name] = value
            text = body.decode("utf-8", errors="replace")
            self._json(
                200,
                {
                    "method": self.command,
                    "path": path,
                    "args": dict(query),
                    "headers": dict(headers),
                    "cookies": cookies,
                    "body": text,
                    "data": {"echo": True},
                },
            )

        def _encoded(self, token: str) -> None:
            hexed = token.encode().hex()
            percent = "".join(f"%{hexed[i : i + 2]}" for i in range(0, len(hexed), 2))
            forms = {
                "hex": hexed.upper(),
                "percent": "".join(c.upper() if i % 2 else c for i, c in enumerate(percent)),
                "wrapped": f"{token[:9]}\n  {token[9:]}",
                "mime": base64.encodebytes(b"session=" + token.encode() + b";x").decode(),
            }
            self._json(200, {"data": forms})

        def _token(self, headers: Mapping[str, str]) -> None:
            s = state.secrets
            expected = base64.b64encode(f"{s.client_id}:{s.client_secret}".encode()).decode()
            if headers.get("Authorization") != f"Basic {expected}":
                self._json(401, {"error": "invalid_client"})
                return
            self._json(200, {"access_token": s.access_token, "token_type": "bearer", "expires_in": 3600})

    return Handler


class FaultServer:
    """The fault server in a thread of this process: ``url``, ``seen`` requests, ``paths(method)``."""

    def __init__(
        self,
        *,
        port: int = 0,
        secrets: Secrets | None = None,
        record: IO[str] | None = None,
        log: IO[str] | None = None,
    ) -> None:
        self._state = _State(secrets or Secrets(), record, log)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self._state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def seen(self) -> list[Seen]:
        with self._state.lock:
            return list(self._state.seen)

    def hits(self, path: str) -> list[Seen]:
        """The requests for ``path`` (no query), in order."""
        return [s for s in self.seen if s.path == path]

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._state.stopping.set()  # slow handlers return at once
        self._server.shutdown()
        self._server.server_close()

    def serve_forever(self) -> None:
        self._server.serve_forever()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_record(path: Path) -> list[dict[str, Any]]:
    """The requests a subprocess server recorded with ``--record`` (JSON lines; a partial last line is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def iter_lines(path: Path) -> Iterator[str]:
    yield from path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else ()


def main(argv: list[str] | None = None) -> int:
    """Run the fault server in the foreground until SIGTERM/SIGINT (the dev-server mode of ``qlab run``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", type=Path, help="append every request as a JSON line to this file")
    parser.add_argument("--pid-file", type=Path, help="write this process' pid here once listening")
    args = parser.parse_args(argv)
    record = open(args.record, "a", encoding="utf-8") if args.record else None  # noqa: SIM115 - process-long
    server = FaultServer(port=args.port, secrets=Secrets.from_env(os.environ), record=record, log=sys.stdout)

    def _stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _stop)
    if args.pid_file:
        args.pid_file.write_text(str(os.getpid()), encoding="utf-8")
    print(f"fault server listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server._state.stopping.set()
        server._server.server_close()
        if record is not None:
            record.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

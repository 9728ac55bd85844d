"""A hostile HTTP server on 127.0.0.1: an API, a spec host, an LLM endpoint or an engine service that attacks
the client instead of answering it. It is a real server (stdlib ``http.server``, a thread of the test
process, its own free port); the tests point qlab at it.

An attack is a function registered under a name with ``@attack("name")``; the first segment of the request
path picks it, the rest is the attack's to read (``/gzip-bomb/64`` is a 64 MiB bomb; ``/gzip-bomb/64/chat/
completions`` the same for an LLM client that appends its own path). Adding an attack is one function here.
Every request is recorded (method, path with query, headers) in ``HostileServer.seen``.

``HostileServer.spec(name)`` serves a spec from ``hostile.specs.SPECS`` under ``/spec/<name>``.
"""

from __future__ import annotations

import functools
import gzip
import json
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str  # with its query
    headers: dict[str, str]


Attack = Callable[["Handler", list[str]], None]
ATTACKS: dict[str, Attack] = {}


def attack(name: str) -> Callable[[Attack], Attack]:
    """Register an attack under ``name`` (the first path segment); a name registered twice is refused."""

    def register(function: Attack) -> Attack:
        if name in ATTACKS:
            raise ValueError(f"attack {name!r} is already registered")
        ATTACKS[name] = function
        return function

    return register


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.owner.record(Seen(self.command, self.path, dict(self.headers.items())))
        parts = [p for p in self.path.split("?", 1)[0].split("/") if p]
        chosen = ATTACKS.get(parts[0] if parts else "", _not_found)
        try:
            chosen(self, parts[1:])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up: what the attack is there to prove

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

    def log_message(self, format: str, *args: object) -> None:
        pass

    @property
    def stopping(self) -> threading.Event:
        return self.server.owner.stopping

    @property
    def base(self) -> str:
        return self.server.owner.url

    def answer(
        self, status: int, body: bytes, *, content_type: str = "application/json", **headers: str
    ) -> None:
        """A whole answer with its length."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def chunked(self, pieces: Iterator[bytes], **headers: str) -> None:
        """An answer sent in chunks until ``pieces`` ends, the client leaves or the server stops."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.close_connection = True
        for piece in pieces:
            if self.stopping.is_set():
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")


def _not_found(handler: Handler, rest: list[str]) -> None:
    handler.answer(404, b'{"error": "no such attack"}')


def _mib(rest: list[str], default: int) -> int:
    return int(rest[0]) if rest and rest[0].isdigit() else default


# ------------------------------------------------------------------------------------------ bodies


def _deflated(data: bytes, *, final: bool = False) -> bytes:
    """``data`` as self-contained raw deflate blocks (a full flush: no reference to what came before), so one
    compressed MiB of zeros can be repeated instead of compressing every MiB."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_FULL_FLUSH)


@functools.cache
def zeros_gzip(mib: int, layers: int = 1) -> bytes:
    """A JSON string of ``mib`` MiB of zeros, gzip-compressed ``layers`` times (a few KB for a GiB)."""
    head, block, tail = b'{"data": "', b"0" * MiB, b'"}'
    crc = zlib.crc32(head)
    for _ in range(mib):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + mib * MiB + len(tail)
    stream = _deflated(head) + _deflated(block) * mib + _deflated(tail, final=True)
    data = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + stream + struct.pack("<II", crc, size & 0xFFFFFFFF)
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


@attack("gzip-bomb")
def _gzip_bomb(handler: Handler, rest: list[str]) -> None:
    """``/gzip-bomb/<mib>``: a small gzip body that decodes to ``mib`` MiB (default 1024)."""
    handler.answer(200, zeros_gzip(_mib(rest, 1024)), Content_Encoding="gzip")


@attack("gzip-gzip")
def _gzip_gzip(handler: Handler, rest: list[str]) -> None:
    """``/gzip-gzip/<mib>``: ``Content-Encoding: gzip, gzip``, decoding to ``mib`` MiB (default 4096)."""
    handler.answer(200, zeros_gzip(_mib(rest, 4096), layers=2), Content_Encoding="gzip, gzip")


@attack("endless")
def _endless(handler: Handler, rest: list[str]) -> None:
    """``/endless``: a chunked body that never ends, as fast as the client reads."""
    piece = b"[" + b"0," * 32 * 1024

    def pieces() -> Iterator[bytes]:
        while True:
            yield piece

    handler.chunked(pieces())


@attack("endless-empty-gzip")
def _endless_empty_gzip(handler: Handler, rest: list[str]) -> None:
    """``/endless-empty-gzip``: a gzip stream that never ends and decodes to nothing (empty stored blocks)."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    empty_block = b"\x00\x00\x00\xff\xff" * 8192  # a non-final stored block of length 0, many times

    def pieces() -> Iterator[bytes]:
        yield header
        while True:
            yield empty_block

    handler.chunked(pieces(), Content_Encoding="gzip")


@attack("drip")
def _drip(handler: Handler, rest: list[str]) -> None:
    """``/drip/<interval>``: headers at once, then a body of one byte every ``interval`` seconds (default 1),
    forever (``Content-Length`` says 1 MB)."""
    interval = float(rest[0]) if rest else 1.0
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(1_000_000))
    handler.end_headers()
    handler.close_connection = True
    handler.wfile.write(b"[")
    handler.wfile.flush()
    while not handler.stopping.wait(interval):
        handler.wfile.write(b" ")
        handler.wfile.flush()


@attack("drip-headers")
def _drip_headers(handler: Handler, rest: list[str]) -> None:
    """``/drip-headers/<interval>``: the status line and headers themselves, one byte per ``interval``."""
    interval = float(rest[0]) if rest else 1.0
    handler.close_connection = True
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"p" * 100_000
    for byte in head:
        if handler.stopping.wait(interval):
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()


@attack("schema-doc")
def _schema_doc(handler: Handler, rest: list[str]) -> None:
    """``/schema-doc/<mib>/<delay>/<name>``: after ``delay`` seconds, a valid JSON document of about ``mib`` MiB
    whose ``#/x`` is an object schema (a long description): one of many documents a spec's refs read."""
    mib, delay = float(rest[0]) if rest else 1.0, float(rest[1]) if len(rest) > 1 else 0.0
    if delay and handler.stopping.wait(delay):
        return
    description = "a" * int(mib * 1024 * 1024)
    handler.answer(200, json.dumps({"x": {"type": "object", "description": description}}).encode())


@attack("hang")
def _hang(handler: Handler, rest: list[str]) -> None:
    """``/hang``: read the request, answer nothing until the server stops."""
    handler.close_connection = True
    handler.stopping.wait()


@attack("status")
def _status(handler: Handler, rest: list[str]) -> None:
    """``/status/<code>``: that status, a JSON error body."""
    code = int(rest[0]) if rest and rest[0].isdigit() else 500
    handler.answer(code, json.dumps({"error": code}).encode())


# JSON that Python's json module reads but strict JSON forbids (or cannot represent)
JSON_VALUES = {
    "nan": b'{"data": {"value": NaN}}',
    "infinity": b'{"data": {"value": Infinity, "low": -Infinity}}',
    "huge": b'{"data": {"value": 1e999999}}',
    "surrogate": b'{"data": {"value": "\\ud800"}}',
}


@attack("json")
def _json(handler: Handler, rest: list[str]) -> None:
    """``/json/<kind>``: a JSON body holding one of ``JSON_VALUES`` (nan, infinity, huge, surrogate)."""
    handler.answer(200, JSON_VALUES.get(rest[0] if rest else "", b"{}"))


@attack("redirect-html")
def _redirect_html(handler: Handler, rest: list[str]) -> None:
    """``/redirect-html``: 302 to ``/login-page``, an HTML login form (what a spec URL behind SSO does)."""
    handler.answer(302, b"", Location=f"{handler.base}/login-page")


@attack("login-page")
def _login_page(handler: Handler, rest: list[str]) -> None:
    page = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><form>user: pass:</form></body></html>\n"
    handler.answer(200, page, content_type="text/html; charset=utf-8")


@attack("redirect-to")
def _redirect_to(handler: Handler, rest: list[str]) -> None:
    """``/redirect-to/<port>/<path…>``: 302 to that path on 127.0.0.1:<port> (another origin)."""
    handler.answer(302, b"", Location=f"http://127.0.0.1:{rest[0]}/{'/'.join(rest[1:])}")


CREDENTIAL = "qlab-canary-credential-5c1d"  # the one credential ``/private/...`` accepts


@attack("private")
def _private(handler: Handler, rest: list[str]) -> None:
    """``/private/<name>[/<file>]``: ``/spec/...``, but only for a request that carries ``CREDENTIAL``: as a bearer
    token, the password of basic auth, an ``X-Api-Key`` header or a ``token`` query parameter; else 401."""
    import base64

    sent = handler.headers.get("Authorization", "")
    basic = base64.b64decode(sent[6:]).decode() if sent.startswith("Basic ") else ""
    carried = (
        sent == f"Bearer {CREDENTIAL}"
        or basic.endswith(f":{CREDENTIAL}")
        or handler.headers.get("X-Api-Key") == CREDENTIAL
        or f"token={CREDENTIAL}" in handler.path
    )
    if not carried:
        handler.answer(401, b'{"error": "credentials required"}', WWW_Authenticate="Bearer")
        return
    _spec(handler, rest)


@attack("spec")
def _spec(handler: Handler, rest: list[str]) -> None:
    """``/spec/<name>[/<file>]``: a hostile spec of ``hostile.specs.SPECS``, built for this server's URL."""
    from hostile.specs import SPECS

    builder = SPECS.get(rest[0] if rest else "")
    if builder is None:
        _not_found(handler, rest)
        return
    files = builder(handler.base)
    body = files.get("/".join(rest[1:]) or "openapi.json")
    if body is None:
        _not_found(handler, rest)
        return
    handler.answer(200, body if isinstance(body, bytes) else json.dumps(body).encode())


# ------------------------------------------------------------------------------------------ the server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: HostileServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-request: expected here, nothing to print


class HostileServer:
    """The server, started in a thread on a free 127.0.0.1 port: ``with HostileServer() as hostile: hostile.url``."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def requests(self) -> list[Seen]:
        with self._lock:
            return list(self.seen)

    def spec(self, name: str) -> str:
        return f"{self.url}/spec/{name}/openapi.json"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

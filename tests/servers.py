"""Real servers the test suite starts on 127.0.0.1, each in its own process group, stopped at teardown.

Nothing here is mocked: httpbin under gunicorn, json-server from npm, the qlab demo server, an MCP server.

When such infrastructure is missing, the test says so instead of passing: a tool that is not installed here
(node, npm, chromium, curl) is a skip with its reason (pytest's ``-ra`` lists it in the summary), also in CI;
anything else that keeps it from working — a server that exits or never answers, npm failing to install a
package — is a skip on a developer's machine but a **failure in CI** (``CI`` set, as GitHub Actions sets it),
with the server's log: CI must never go green on a test that did not run (``infrastructure``).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = ROOT / ".qlab" / "node"  # npm packages the tests install (json-server, MCP everything server)


LOG_TAIL = 4000  # characters of a server's log shown when it did not start


class NotInstalled(RuntimeError):
    """A tool a test needs is not installed on this machine (node, npm, chromium, ...): the test skips, in CI too,
    with this reason."""


class ServerFailed(RuntimeError):
    """Infrastructure a test needs is there but did not work: a server exited or never answered (the message ends
    with its log), or npm could not install a package. A failure in CI, a skip elsewhere."""


def in_ci() -> bool:
    """True when ``CI`` is set to anything but empty/0/false (GitHub Actions, GitLab, ... and ``.ci/run``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    """The test cannot run because its infrastructure failed: fail in CI (a skip would let CI pass on a test that
    never ran), skip elsewhere; ``reason`` carries the log."""
    if in_ci():
        pytest.fail(f"test infrastructure failed (CI is set, so this is not a skip): {reason}", pytrace=False)
    pytest.skip(f"test infrastructure failed (a failure in CI): {reason}")


@contextmanager
def infrastructure(what: str) -> Iterator[None]:
    """Around starting what a test needs: NotInstalled skips with its reason; ServerFailed is ``unavailable``."""
    try:
        yield
    except NotInstalled as exc:
        pytest.skip(f"{what}: {exc}")
    except ServerFailed as exc:
        unavailable(f"{what}: {exc}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, *, timeout: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
            last = exc
        except (urllib.error.URLError, OSError) as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout}s: {last}")


@contextmanager
def running(
    cmd: Sequence[str],
    *,
    ready_url: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd`` in a new process group, wait for ``ready_url``, and stop the whole group afterwards.

    Its output goes to a temporary log file; when it exits or never answers, ServerFailed carries the log's tail."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        list(cmd),
        stdout=log,
        stderr=log,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        start_new_session=True,
    )
    try:
        try:
            wait_until_up(ready_url, timeout=timeout, proc=proc)
        except RuntimeError as exc:
            log.seek(0)
            tail = log.read().decode("utf-8", "replace")[-LOG_TAIL:].strip() or "(the server wrote nothing)"
            raise ServerFailed(f"{' '.join(cmd)}: {exc}\n--- its log ---\n{tail}") from None
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@contextmanager
def httpbin() -> Iterator[str]:
    """httpbin (PyPI) under gunicorn on a free loopback port; yields its base URL."""
    port = free_port()
    gunicorn = shutil.which("gunicorn") or str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "-b", f"127.0.0.1:{port}", "-w", "2", "-k", "sync", "--timeout", "60", "httpbin:app"]
    with running(cmd, ready_url=f"http://127.0.0.1:{port}/get"):
        yield f"http://127.0.0.1:{port}"


def npm_bin(package_bin: str) -> Path | None:
    """Path of an npm-installed executable under .qlab/node, or None when it is not installed."""
    path = NODE_DIR / "node_modules" / ".bin" / package_bin
    return path if path.exists() else None


def ensure_npm(package: str, bin_name: str) -> Path:
    """Install an npm package under .qlab/node once (the tests install what they need; nothing by hand) and
    return its executable. NotInstalled where node or npm is absent; ServerFailed (with npm's output) when npm
    could not install it — the registry unreachable, a broken package: see ``infrastructure``."""
    return _npm_install(package, NODE_DIR / "node_modules" / ".bin" / bin_name)


def ensure_npm_file(package: str, relative: str) -> Path:
    """A file of an npm package (``@octokit/openapi@23.0.2``, ``@octokit/openapi/generated/x.json``),
    installed under .qlab/node once, as :func:`ensure_npm` does."""
    return _npm_install(package, NODE_DIR / "node_modules" / relative)


def _npm_install(package: str, wanted: Path) -> Path:
    if wanted.exists():
        return wanted
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise NotInstalled(f"node and npm are needed for {package} (not installed here)")
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), package],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not wanted.exists():
        output = (done.stdout + done.stderr).strip()[-LOG_TAIL:] or "(npm wrote nothing)"
        raise ServerFailed(
            f"npm could not install {package} (exit {done.returncode})\n--- npm's output ---\n{output}"
        )
    return wanted


@contextmanager
def demo_server(*, token: str | None = None) -> Iterator[str]:
    """qlab's demo API (``python -m qlab.demo.server``) on a free loopback port; yields its base URL.

    The server reads its bearer token from a private env var set to ``token``; with None that var is unset and
    the server accepts its default token (``demo-token``).
    """
    port = free_port()
    token_env = f"QLAB_TEST_DEMO_TOKEN_{port}"
    cmd = [sys.executable, "-m", "qlab.demo.server", "--port", str(port), "--token-env", token_env]
    env = {token_env: token} if token is not None else {}
    with running(cmd, ready_url=f"http://127.0.0.1:{port}/health", env=env):
        yield f"http://127.0.0.1:{port}"


JSON_SERVER = "json-server@0.17.4"


@contextmanager
def json_server(db: Path) -> Iterator[str]:
    """json-server (npm) serving ``db`` (a JSON file it rewrites) on a free loopback port; yields its base URL.

    Installs json-server under .qlab/node on first use: NotInstalled where node/npm are absent, ServerFailed when
    npm cannot install it or the server does not come up (callers wrap the start in ``infrastructure``).
    """
    exe = ensure_npm(JSON_SERVER, "json-server")
    port = free_port()
    first = next(iter(json.loads(db.read_text())), "")
    cmd = [str(exe), "--host", "127.0.0.1", "--port", str(port), "--quiet", str(db)]
    with running(cmd, ready_url=f"http://127.0.0.1:{port}/{first}", cwd=db.parent):
        yield f"http://127.0.0.1:{port}"


class JSONHandler(http.server.BaseHTTPRequestHandler):
    """A quiet request handler for ``serving`` with ``send_json``."""

    def send_json(self, status: int, data: object, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """``handler`` served on 127.0.0.1 in this process (a thread per request) until the block ends; yields the
    port."""
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


class CountingServer:
    """An in-process HTTP server on 127.0.0.1 that counts every request it receives (any method, any path) and
    answers 200 ``{"data": {...}}``. ``count`` and ``requests`` (method, path) prove what was, or was not, sent.
    Paths under ``/slow`` can be made slow (``slow_sec``) to provoke timeouts."""

    def __init__(self, *, slow_sec: float = 0.0) -> None:
        """``slow_sec``: requests to paths under ``/slow`` wait this long before answering (threaded: nothing
        else waits for them)."""
        import http.server
        import threading

        owner = self
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms Nagle/delayed-ACK stall between headers and body

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with owner._lock:
                    owner.requests.append((self.command, self.path))
                if slow_sec and self.path.startswith("/slow"):
                    time.sleep(slow_sec)
                body = json.dumps({"data": {"path": self.path, "method": self.command}}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> CountingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class HopServer:
    """An in-process HTTP server on 127.0.0.1 (its own port: another origin than any other server) for the
    redirect and deadline tests. It records every request it receives (method, path with query, headers) in
    ``seen``, and answers:

    - ``/redirect/<code>`` (any method): ``<code>`` with ``Location: <redirect_to>/landed`` (``redirect_to`` is
      set by the test, e.g. another HopServer's ``url``; by default this server itself);
    - ``/drip/<n>/<interval>``: 200 whose ``n``-byte JSON-ish body is sent one byte every ``interval`` seconds
      (``Content-Length`` announced up front: the answer is valid, only slow);
    - ``/drip-headers/<n>/<interval>``: the same, but the status line and headers themselves drip;
    - anything else: 200 ``{"data": {"method", "path"}}`` (201 for a POST).
    """

    def __init__(self, *, redirect_to: str | None = None) -> None:
        import http.server
        import threading

        owner = self
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.redirect_to = redirect_to
        self._lock = threading.Lock()
        self._stopping = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with owner._lock:
                    owner.seen.append((self.command, self.path, dict(self.headers.items())))
                path = self.path.split("?", 1)[0]
                parts = path.strip("/").split("/")
                try:
                    if parts[0] == "redirect" and len(parts) == 2:
                        target = (owner.redirect_to or owner.url) + "/landed"
                        self.send_response(int(parts[1]))
                        self.send_header("Location", target)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                    elif parts[0] in ("drip", "drip-headers") and len(parts) == 3:
                        self._drip(int(parts[1]), float(parts[2]), headers_too=parts[0] == "drip-headers")
                    else:
                        body = json.dumps({"data": {"method": self.command, "path": path}}).encode()
                        self.send_response(201 if self.command == "POST" else 200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (its deadline): nothing to answer

            def _drip(self, size: int, interval: float, *, headers_too: bool) -> None:
                body = b'"' + b"x" * max(0, size - 2) + b'"'
                head = (
                    f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode()
                self.close_connection = True
                if not headers_too:
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                for byte in head + body:
                    if owner._stopping.wait(interval):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # a short poll: shutdown() waits for it, and the redirect tests start two servers each
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[tuple[str, str, dict[str, str]]]:
        with self._lock:
            return list(self.seen)

    def __enter__(self) -> HopServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

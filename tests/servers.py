"""Real servers the test suite starts on 127.0.0.1, each in its own process group, stopped at teardown.

Nothing here is mocked: httpbin under gunicorn, json-server from npm, the qlab demo server, an MCP server.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = ROOT / ".qlab" / "node"  # npm packages the tests install (json-server, MCP everything server)


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
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback only
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
    cmd: Sequence[str], *, ready_url: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 30.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd`` in a new process group, wait for ``ready_url``, and stop the whole group afterwards."""
    log = open(os.devnull, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        list(cmd),
        stdout=log,
        stderr=log,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        start_new_session=True,
    )
    try:
        wait_until_up(ready_url, timeout=timeout, proc=proc)
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
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


def ensure_npm(package: str, bin_name: str) -> Path | None:
    """Install an npm package under .qlab/node once (the tests install what they need; nothing by hand).

    Returns the executable's path, or None where node/npm are absent or the registry cannot be reached:
    callers skip with that reason.
    """
    found = npm_bin(bin_name)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), package],
        capture_output=True,
        timeout=600,
        check=False,
    )
    return npm_bin(bin_name) if done.returncode == 0 else None

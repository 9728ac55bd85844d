from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import servers
from qlab.contracts.errors import InputError
from qlab.execute.server import answers, argv_of, dev_server
from qlab.project.model import ServerConfig


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_argv() -> None:
    assert argv_of("python -m qlab.demo.server --port 1") == [
        sys.executable,
        "-m",
        "qlab.demo.server",
        "--port",
        "1",
    ]
    assert argv_of("npm run dev && echo x") == ["/bin/sh", "-c", "npm run dev && echo x"]


def test_starts_polls_logs_and_stops_the_whole_group(tmp_path: Path) -> None:
    port = servers.free_port()
    pids = tmp_path / "pids"
    # the server leaves a child behind that ignores SIGTERM: only a group SIGKILL ends it
    command = (
        f"{sys.executable} -c 'import os,signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f'open("{pids}", "w").write(str(os.getpid())); time.sleep(600)\' & '
        f"exec {sys.executable} -m http.server {port} --bind 127.0.0.1"
    )
    config = ServerConfig(
        command=command, url=f"http://127.0.0.1:{port}/", timeout_sec=20, reuse_existing=False
    )
    log = tmp_path / "logs" / "server-dev.log"
    with dev_server(config, log_path=log, stop_grace=0.5) as state:
        assert state == "started"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as response:
            assert response.status == 200
        for _ in range(100):
            if pids.exists() and pids.read_text():
                break
            time.sleep(0.05)
        child = int(pids.read_text())
        assert _alive(child)
    assert not answers(f"http://127.0.0.1:{port}/")
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
    text = log.read_text()
    assert "GET / HTTP/1.1" in text  # the server's own output went to the run log
    assert text.startswith("--- qlab: starting") and "--- qlab: stopped" in text


def test_reuse_existing(tmp_path: Path) -> None:
    with servers.CountingServer() as counter:
        config = ServerConfig(command="false", url=counter.url + "/health", reuse_existing=True)
        with dev_server(config, log_path=tmp_path / "s.log") as state:
            assert state == "reused"
        with (
            pytest.raises(InputError, match="already answers"),
            dev_server(
                ServerConfig(command="false", url=counter.url, reuse_existing=False),
                log_path=tmp_path / "s.log",
            ),
        ):
            pass


def test_early_exit_and_timeout_are_input_errors(tmp_path: Path) -> None:
    port = servers.free_port()
    url = f"http://127.0.0.1:{port}/"
    with (
        pytest.raises(InputError, match=r"exited with 3 before .* answered; see .*s\.log"),
        dev_server(
            ServerConfig(
                command=f"{sys.executable} -c 'import sys; sys.exit(3)'", url=url, reuse_existing=False
            ),
            log_path=tmp_path / "s.log",
        ),
    ):
        pass
    started = time.monotonic()
    with (
        pytest.raises(InputError, match=r"did not answer within 0.5s"),
        dev_server(
            ServerConfig(command="sleep 30", url=url, timeout_sec=0.5, reuse_existing=False),
            log_path=tmp_path / "s.log",
        ),
    ):
        pass
    assert time.monotonic() - started < 10
    with (
        pytest.raises(InputError, match="cannot start"),
        dev_server(
            ServerConfig(command="/nonexistent/binary", url=url, reuse_existing=False),
            log_path=tmp_path / "s.log",
        ),
    ):
        pass


def test_messages_and_the_log_name_the_program_not_the_interpolated_command(tmp_path: Path) -> None:
    """``server.command`` is interpolated (``env TOKEN=${API_TOKEN} ...``): its arguments may hold a secret, so
    what qlab writes names the program only (found by the audit: the token reached result.json and the logs)."""
    secret = "tok-DEV-SERVER-8181"
    url = f"http://127.0.0.1:{servers.free_port()}/"
    log = tmp_path / "s.log"
    for command in (f"env TOKEN={secret} false", f"/nonexistent/binary --token {secret}"):
        with (
            pytest.raises(InputError) as caught,
            dev_server(
                ServerConfig(command=command, url=url, timeout_sec=5, reuse_existing=False), log_path=log
            ),
        ):
            pass
        assert secret not in str(caught.value) and "(server.command in qlab.yaml)" in str(caught.value)
    assert secret not in log.read_text() and "starting 'env …'" in log.read_text()


KILLED_PARENT = """
import sys, time
from pathlib import Path
from qlab.execute.server import dev_server
from qlab.project.model import ServerConfig
port, log = sys.argv[1], Path(sys.argv[2])
config = ServerConfig(command=f"python -m http.server {port} --bind 127.0.0.1", url=f"http://127.0.0.1:{port}/",
                      reuse_existing=False)
with dev_server(config, log_path=log):
    print("up", flush=True)
    time.sleep(600)
"""


def test_a_killed_qlab_does_not_orphan_its_dev_server(tmp_path: Path) -> None:
    import signal
    import subprocess

    port = servers.free_port()
    parent = subprocess.Popen(
        [sys.executable, "-c", KILLED_PARENT, str(port), str(tmp_path / "s.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "up"
        assert answers(f"http://127.0.0.1:{port}/")
    finally:
        parent.send_signal(signal.SIGKILL)  # no cleanup code of qlab's runs
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    deadline = time.monotonic() + 10
    while answers(f"http://127.0.0.1:{port}/") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not answers(f"http://127.0.0.1:{port}/"), "the dev server outlived qlab"


def test_the_server_log_is_written_through_the_scrubber(tmp_path: Path) -> None:
    """A server that prints its own secrets (a connection string, a logged Authorization header) writes none of
    them into server-<env>.log: every line passes the run's scrubber on its way."""
    port = servers.free_port()
    secret = "db-pass-CANARY-4e5f6a7b"
    command = (
        f"{sys.executable} -c \"print('connecting with {secret}', flush=True); "
        f"print('Authorization: Bearer {secret}', flush=True)\" && "
        f"exec {sys.executable} -m http.server {port} --bind 127.0.0.1"
    )
    config = ServerConfig(
        command=command, url=f"http://127.0.0.1:{port}/", timeout_sec=20, reuse_existing=False
    )
    log = tmp_path / "server-dev.log"
    with dev_server(
        config, log_path=log, stop_grace=0.5, scrub=lambda line: line.replace(secret, "[REDACTED]")
    ):
        pass
    text = log.read_text(encoding="utf-8")
    assert "connecting with [REDACTED]" in text and "Bearer [REDACTED]" in text, text
    assert secret not in text and "--- qlab: stopped (exit" in text

"""The dev-server lifecycle, like Playwright's ``webServer``.

``dev_server(config, log_path=...)`` starts ``config.command`` in a new process group, its output going to
``log_path`` line by line through ``scrub`` (the run's scrubber, so a server that logs a credential writes no
secret), polls ``config.url`` until it answers below 500, yields, then stops the whole group (SIGTERM, then
SIGKILL after a grace period), so a server that forks workers leaves nothing behind. With ``reuse_existing``,
a server already answering at the URL is used as is and left running. On Linux the process qlab started
(the group leader) also gets SIGTERM if qlab dies without stopping it (``PR_SET_PDEATHSIG``); a shell
command's own children are not covered.

A command without shell syntax is split with ``shlex``; a leading ``python``/``python3`` becomes the running
interpreter, so ``python -m qlab.demo.server`` works in any virtualenv. A command with pipes, ``&&`` or
redirections runs under ``/bin/sh -c``.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from qlab.adapters import http
from qlab.contracts.errors import InputError
from qlab.project.model import ServerConfig

STOP_GRACE_SEC = 5.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_SHELL_CHARS = set("|&;<>$`()*?")


def answers(url: str, *, timeout: float = 2.0) -> bool:
    """True when ``url`` answers with a status below 500 (a redirect is an answer: it is not followed; the
    body is not read). Through ``qlab.adapters.http``: no proxy from the environment, like every request qlab sends."""
    try:
        with http.make_client(timeout=timeout) as client:
            return http.status_of(client, url) < 500
    except (http.HTTPError, OSError, ValueError):
        return False


def argv_of(command: str) -> list[str]:
    """The argv that runs ``command`` (see the module docstring)."""
    if any(ch in _SHELL_CHARS for ch in command):
        return ["/bin/sh", "-c", command]
    argv = shlex.split(command)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


@contextmanager
def dev_server(
    config: ServerConfig,
    *,
    log_path: Path,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    poll_interval: float = 0.1,
    stop_grace: float = STOP_GRACE_SEC,
    scrub: Callable[[str], str] = lambda line: line,
) -> Iterator[str]:
    """Run the server for the duration of the block; yields ``"started"`` or ``"reused"``.

    ``base_dir`` resolves a relative ``config.cwd`` (the folder of qlab.yaml). Raises InputError when the
    command cannot start, exits early, or the URL does not answer within ``config.timeout_sec``.
    """
    if answers(config.url):
        if config.reuse_existing:
            yield "reused"
            return
        raise InputError(
            f"{config.url} already answers before the dev server started: stop that server or set "
            "server.reuse_existing: true"
        )
    cwd = Path(config.cwd) if config.cwd else None
    if base_dir is not None:
        cwd = base_dir / cwd if cwd is not None else base_dir
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**(environ if environ is not None else os.environ), **config.env}
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"--- qlab: starting {_label(config)}\n")
        log.flush()
        try:
            proc = subprocess.Popen(
                argv_of(config.command),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent(),  # only a prctl call, prepared before the fork
            )
        except OSError as exc:
            raise InputError(
                f"dev server command {_label(config)} cannot start: {exc.strerror or exc}"
            ) from None
        assert proc.stdout is not None
        pump = threading.Thread(
            target=_copy, args=(proc.stdout, log, scrub), name="dev-server-log", daemon=True
        )
        pump.start()
        try:
            _wait(proc, config, log_path, poll_interval)
            yield "started"
        finally:
            stop(proc, grace=stop_grace)
            pump.join(timeout=stop_grace)  # the output the server wrote before it stopped, all of it
            log.write(f"--- qlab: stopped (exit {proc.returncode})\n")


LINE_LIMIT = 1 << 16  # a line longer than this is copied in pieces


def _copy(source: IO[bytes], log: IO[str], scrub: Callable[[str], str]) -> None:
    """Copy the server's output into the log, each line scrubbed, until the server's side closes."""
    with source:
        for raw in iter(lambda: source.readline(LINE_LIMIT), b""):
            try:
                log.write(scrub(raw.decode("utf-8", errors="replace")))
                log.flush()
            except (OSError, ValueError):  # the log was closed under us (qlab is exiting): drain and drop
                continue


def _label(config: ServerConfig) -> str:
    """How messages name the server command: its program only. The command is shown after ``${VAR}``
    interpolation, so its arguments may hold a token (``env TOKEN=${API_TOKEN} ...``); qlab.yaml has the rest."""
    try:
        argv = argv_of(config.command)
    except ValueError:
        argv = []
    program = Path(argv[0]).name if argv else "?"
    return f"'{program}{' …' if len(argv) > 1 else ''}' (server.command in qlab.yaml)"


def _wait(proc: subprocess.Popen[bytes], config: ServerConfig, log_path: Path, poll_interval: float) -> None:
    deadline = time.monotonic() + config.timeout_sec
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise InputError(
                f"dev server {_label(config)} exited with {proc.returncode} before {config.url} answered; "
                f"see {log_path}"
            )
        if answers(config.url, timeout=min(2.0, max(0.1, deadline - time.monotonic()))):
            return
        time.sleep(poll_interval)
    raise InputError(
        f"dev server {_label(config)}: {config.url} did not answer within {config.timeout_sec:g}s; see "
        f"{log_path}, or raise server.timeout_sec"
    )


def stop(proc: subprocess.Popen[bytes], *, grace: float = STOP_GRACE_SEC) -> None:
    """Stop ``proc``'s whole process group: SIGTERM, then SIGKILL when it outlives ``grace``."""
    if proc.poll() is None or _group_alive(proc.pid):
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
            proc.wait(timeout=grace)
        # children that ignored SIGTERM outlive the leader: the group gets SIGKILL
        if _group_alive(proc.pid):
            deadline = time.monotonic() + grace
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _group_alive(proc.pid):
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the kernel send SIGTERM to the child when qlab dies (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: the child only makes the call
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
        if os.getppid() != parent:  # qlab died between fork and prctl: nobody would tell us
            os._exit(1)

    return preexec


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows has no process groups here
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True

"""Temporary qlab projects for the CLI tests of the campaign: an OpenAPI spec for the fault server, a qlab.yaml
with environments (optionally starting the fault server as a dev server) and case files; and ``qlab run`` as
a subprocess whose peak RSS is measured.

Everything is written as a real user would write it, and ``qlab run`` reads it with the real loaders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

FAULT_SERVER = Path(__file__).with_name("servers_faults.py")


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a spec: the fault server route it calls and the words a query finds it by."""

    op_id: str
    method: str
    path: str
    summary: str
    security: bool = False  # needs the collection's auth (an OpenAPI security requirement)
    query: tuple[str, ...] = ()  # required query parameters (strings), filled from the case's entities


def spec(ops: Sequence[Op], *, title: str = "fault server") -> dict[str, Any]:
    """An OpenAPI 3.0 document with ``ops`` (JSON responses, a bearer scheme for the secured ones)."""
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        operation: dict[str, Any] = {
            "operationId": op.op_id,
            "summary": op.summary,
            "description": op.summary,
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
        if op.security:
            operation["security"] = [{"bearerAuth": []}]
        if op.query:
            operation["parameters"] = [
                {
                    "name": name,
                    "in": "query",
                    "required": True,
                    "description": name,
                    "schema": {"type": "string"},
                }
                for name in op.query
            ]
        paths.setdefault(op.path, {})[op.method.lower()] = operation
    return {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1.0"},
        "paths": paths,
        "components": {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}}},
    }


def fault_server_env(
    port: int,
    *,
    record: Path | None = None,
    pid_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An environment whose dev server is the fault server on ``port`` (started and stopped by qlab run)."""
    command = f"python {FAULT_SERVER} --port {port}"
    if record is not None:
        command += f" --record {record}"
    if pid_file is not None:
        command += f" --pid-file {pid_file}"
    server: dict[str, Any] = {
        "command": command,
        "url": f"http://127.0.0.1:{port}/health",
        "timeout_sec": 30,
        "reuse_existing": False,
    }
    if env:
        server["env"] = dict(env)
    return {"base_url": f"http://127.0.0.1:{port}", "retry_backoff_sec": 0.05, "server": server, **extra}


def write_project(
    root: Path,
    *,
    ops: Sequence[Op],
    suites: Mapping[str, Mapping[str, Any]],
    cases: Mapping[str, Sequence[Mapping[str, Any]]],
    environments: Mapping[str, Mapping[str, Any]],
    gates: Sequence[Mapping[str, Any]] | None = None,
    auth_profiles: Mapping[str, Mapping[str, Any]] | None = None,
    collection_auth: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write openapi.yaml, qlab.yaml and ``cases/<suite>.yaml``; returns the qlab.yaml path.

    ``suites`` maps a suite name to its settings (``mode`` at least; ``cases`` is filled in); ``gates`` default
    to build → one gate per mode used → learn (scrub check).
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "openapi.yaml").write_text(yaml.safe_dump(spec(ops), sort_keys=False), encoding="utf-8")
    (root / "cases").mkdir(exist_ok=True)
    suite_block: dict[str, Any] = {}
    for name, settings in suites.items():
        suite_block[name] = {**settings, "cases": [f"cases/{name}.yaml"]}
        text = yaml.safe_dump(list(cases.get(name, ())), sort_keys=False, allow_unicode=True)
        (root / "cases" / f"{name}.yaml").write_text(text, encoding="utf-8")
    if gates is None:
        gates = [{"name": "build", "stage": "build"}]
        for stage in ("search", "select", "plan", "execute"):
            members = [n for n, s in suites.items() if s["mode"] == stage]
            if members:
                gates.append({"name": stage, "stage": stage, "suites": members})
        gates.append({"name": "learn", "stage": "learn", "stop_if": ["scrub_failed"]})
    collection: dict[str, Any] = {"sources": [{"name": "faults", "openapi": "openapi.yaml"}]}
    if collection_auth:
        collection["auth"] = collection_auth
    config: dict[str, Any] = {
        "version": 1,
        "project": "reliability",
        "collection": collection,
        "engine": {"type": "builtin"},
        "environments": dict(environments),
        "suites": suite_block,
        "gates": list(gates),
        "output": {"dir": "out"},
    }
    if auth_profiles:
        config["auth_profiles"] = dict(auth_profiles)
    config.update(extra or {})
    path = root / "qlab.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished ``qlab`` subprocess: exit code, output, peak RSS (MiB) and wall time."""

    code: int
    stdout: str
    stderr: str
    peak_rss_mib: float
    seconds: float

    @property
    def console(self) -> str:
        return self.stdout + self.stderr


# Linux keeps a process's peak RSS across exec (the forking parent's pages count): a child forked from a big
# pytest process would report pytest's size. This launcher is exec'd first, small, and forks qlab from itself,
# so the peak measured with wait4 is qlab's own; it writes it (KiB) to the file named by argv[1].
_LAUNCHER = """
import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:  # killed by a signal: die by the same one, so the caller sees it
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def qlab(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
) -> Finished:
    """Run ``python -m qlab ARGS`` and measure its own peak RSS with ``wait4`` (through a small launcher)."""
    out_path, err_path, rss_path = cwd / ".qlab-stdout", cwd / ".qlab-stderr", cwd / ".qlab-rss"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(rss_path), sys.executable, "-m", "qlab", *args],
            cwd=cwd,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
    seconds = time.monotonic() - started
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    peak_kib = int(rss_path.read_text() or 0) if rss_path.exists() else 0
    for path in (out_path, err_path, rss_path):
        path.unlink(missing_ok=True)
    return Finished(proc.returncode, stdout, stderr, peak_kib / 1024, seconds)


def result_cases(result: Path) -> dict[str, dict[str, Any]]:
    """case id -> case record of a result.json."""
    data = json.loads(result.read_text(encoding="utf-8"))
    return {c["case_id"]: c for c in data["cases"]}


def reasons(result: Path) -> dict[str, tuple[str, str | None]]:
    """case id -> (status, failure reason) of a result.json."""
    return {
        cid: (c["status"], (c.get("failure") or {}).get("reason")) for cid, c in result_cases(result).items()
    }

"""Projects pointed at the hostile server, and ``qlab`` run on them as a subprocess with its peak RSS measured
(``reliability.project.qlab``: the child's own ``wait4`` figure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from reliability.project import Finished, Op, qlab, write_project

MEMORY_BOUND_MIB = 300  # peak RSS of a qlab process under any of these attacks


def api_project(
    root: Path,
    url: str,
    ops: Sequence[Op],
    *,
    assertions: Sequence[Mapping[str, Any]] = (),
    timeout_sec: float = 5,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """A project with one read-only execute case per operation of ``ops`` against the API at ``url``."""
    cases = [
        {
            "id": op.op_id,
            "query": op.summary,
            "expected_target": op.op_id,
            "timeout_sec": timeout_sec,
            "assertions": list(assertions),
        }
        for op in ops
    ]
    return write_project(
        root,
        ops=ops,
        suites={"hostile": {"mode": "execute", "environment": "api"}},
        cases={"hostile": cases},
        environments={"api": {"base_url": url, "allowed_hosts": ["127.0.0.1"]}},
        extra=extra,
    )


def spec_project(root: Path, location: str, *, source: Mapping[str, Any] | None = None, **top: Any) -> Path:
    """A project whose one source is the spec at ``location`` (a URL or a path), with one search case and a
    search gate but no build gate; ``source`` adds keys to the source, ``top`` to qlab.yaml."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "cases.yaml").write_text(
        yaml.safe_dump([{"id": "find-items", "query": "list the items", "expected_target": "listItems"}])
    )
    config = {
        "version": 1,
        "project": "hostile",
        "collection": {"sources": [{"name": "api", "openapi": location, **(source or {})}]},
        "suites": {"search_core": {"mode": "search", "cases": ["cases.yaml"]}},
        "gates": [{"name": "search", "stage": "search", "suites": ["search_core"]}],
        "output": {"dir": "out"},
        **top,
    }
    path = root / "qlab.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run(config: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300) -> Finished:
    """``qlab run`` on ``config``, its GitHub output written beside it (``gh-output.txt``)."""
    output = config.parent / "gh-output.txt"
    output.unlink(missing_ok=True)
    return qlab(
        "run",
        "--config",
        str(config),
        *args,
        cwd=config.parent,
        env={"GITHUB_OUTPUT": str(output), **(env or {})},
        timeout=timeout,
    )


def github_output(config: Path) -> dict[str, str]:
    """The one-line values ``qlab run`` wrote to ``$GITHUB_OUTPUT``."""
    lines = (config.parent / "gh-output.txt").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and "<<" not in line)

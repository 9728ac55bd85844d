"""The figures a new project starts from: run its gates once, the way ``qlab run`` will, and read what they
measured.

``measure(config_path, stage=...)`` runs the build gate and the gates of one stage (``--stage search`` or
``--stage execute``) through :func:`qlab.run.runner.run` and returns each suite's figures from the result
artifact: the very numbers the gates will compare on the next run, computed by the same code. Nothing is
written but the build cache (a temporary folder takes the run's provisional outputs and logs).

``probe(url)`` asks whether a server answers at all before any execute case is tried: an API that is offline
should cost one short timeout, not one per case.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab.adapters import http
from qlab.project import load_project
from qlab.project.starter.model import Measured
from qlab.run.options import RunOptions
from qlab.run.runner import run
from qlab.run.selection import SelectionSpec

PROBE_TIMEOUT_SEC = 5.0


@dataclass(frozen=True, slots=True)
class Baseline:
    """What one measuring run found: the build's schema coverage and each suite's figures."""

    schema_coverage: float | None
    suites: Mapping[str, Measured] = field(default_factory=dict)


def probe(
    url: str, *, timeout: float = PROBE_TIMEOUT_SEC, transport: http.BaseTransport | None = None
) -> str:
    """An empty string when ``url`` answers with any HTTP response (a 404 is an answer); else why not."""
    try:
        with http.make_client(timeout=timeout, transport=transport) as client:
            http.status_of(client, url)
    except http.TimeoutException:
        return f"no answer within {timeout:g}s"
    except http.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ""


def measure(config_path: Path, *, stage: str, environ: Mapping[str, str] | None = None) -> Baseline:
    """Run the build gate and the ``stage`` gates of the project at ``config_path`` once; see the module
    docstring. ``environ``: the variables qlab.yaml is interpolated with (default: the process's)."""
    project = load_project(config_path, environ=environ)
    with tempfile.TemporaryDirectory(prefix="qlab-baseline-") as scratch:
        options = RunOptions(selection=SelectionSpec(stages=(stage,)), log_dir=Path(scratch))
        artifact = run(project, options=options).artifact
    return Baseline(
        schema_coverage=_coverage(artifact),
        suites={name: _measured(artifact, name) for name in artifact.get("suites") or {}},
    )


def _coverage(artifact: Mapping[str, Any]) -> float | None:
    value = ((artifact.get("stages") or {}).get("build") or {}).get("metrics", {}).get("schema_coverage")
    return float(value) if isinstance(value, (int, float)) else None


def _measured(artifact: Mapping[str, Any], suite: str) -> Measured:
    section = (artifact.get("suites") or {}).get(suite) or {}
    cases = [c for c in artifact.get("cases") or () if c.get("suite") == suite]
    failed = [c for c in cases if c.get("status") in ("failed", "error")]
    reasons = Counter(str((c.get("failure") or {}).get("reason")) for c in failed if c.get("failure"))
    rejected = Counter(status for c in failed if (status := _rejected(c)) is not None)
    return Measured(
        figures=dict(section.get("metrics") or {}),
        cases=len(cases),
        reasons=dict(reasons),
        failing=len(failed),
        rejected=dict(sorted(rejected.items())),
    )


def _rejected(case: Mapping[str, Any]) -> int | None:
    """The HTTP status with which the API refused the case's last request (401, 403, 5xx), if it did."""
    steps = (case.get("execute") or {}).get("steps") or ()
    status = steps[-1].get("status") if steps else None
    return status if isinstance(status, int) and (status in (401, 403) or status >= 500) else None

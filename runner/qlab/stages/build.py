"""The build stage (stage 1): sources → collection artifact + readiness report; stop if schema coverage
is too low.

``run_build`` builds (or reuses from the cache) the collection and reports:

- metrics ``schema_coverage``, ``contract_coverage`` (None when no input needs a producer) and ``tools``;
  the gate runner checks the gate's thresholds against them;
- the ``schema_coverage_below: X`` stop condition of the gate, as a StopHit whose message names the tools
  pulling coverage down (the other stop conditions belong to later stages);
- ``details["readiness"]`` (``Readiness.to_dict()``) and ``details["collection"]`` (digest, counts, sources,
  whether it came from the cache).

A source that cannot be read raises SpecError (exit 2) saying where. The stage writes no file itself; the
collection layer keeps its build cache.
"""

from __future__ import annotations

import time

from qlab.collection.builder import BuildOutput, build_collection
from qlab.collection.model import Collection
from qlab.collection.readiness import Readiness
from qlab.project.model import Config, Gate
from qlab.stages.base import StageReport, StopHit

SCHEMA_COVERAGE_BELOW = "schema_coverage_below"
NAMED_IN_MESSAGE = 5  # tools named in the stop message; the full list is in details.readiness.worst


def run_build(config: Config, gate: Gate | None) -> tuple[Collection | None, StageReport]:
    """Build the collection of ``config`` and judge ``gate``'s build stop condition.

    Returns the collection whenever it was built (its digest goes into the run fingerprint even when the stop
    condition fires) and the stage report.
    """
    started = time.perf_counter()
    output = build_collection(config, use_cache=True)
    report = stage_report(output, gate)
    report.duration_ms = (time.perf_counter() - started) * 1000
    return output.collection, report


def stage_report(output: BuildOutput, gate: Gate | None) -> StageReport:
    """The StageReport of a finished build (also used by ``qlab build``)."""
    readiness = output.readiness
    collection = output.collection
    report = StageReport(stage="build")
    report.metrics = {
        "schema_coverage": readiness.schema_coverage,  # as recorded (``readiness.PLACES``): what gates compare
        "contract_coverage": readiness.contract_coverage,
        "tools": float(len(collection.tools)),
    }
    report.stops = build_stops(readiness, gate)
    report.details = {
        "readiness": readiness.to_dict(),
        "collection": {
            "digest": collection.digest,
            "tools": len(collection.tools),
            "contracts": len(collection.contracts),
            "sources": [
                {key: s.get(key) for key in ("name", "kind", "location", "digest", "dialect", "tools")}
                for s in collection.sources
            ],
            "cached": output.cached,
            "artifact": str(output.artifact_path) if output.artifact_path else None,
        },
    }
    return report


def build_stops(readiness: Readiness, gate: Gate | None) -> list[StopHit]:
    """The StopHits of ``gate``'s build stop conditions: ``schema_coverage_below: X`` fires when coverage < X."""
    hits: list[StopHit] = []
    for condition in gate.stop_if if gate is not None else ():
        if condition.name != SCHEMA_COVERAGE_BELOW or condition.value is None:
            continue
        if readiness.schema_coverage < condition.value:
            hits.append(StopHit(SCHEMA_COVERAGE_BELOW, message=coverage_message(readiness, condition.value)))
    return hits


def coverage_message(readiness: Readiness, threshold: float) -> str:
    """``schema coverage 0.62 is below 0.80; lowest: listPods 0.35 (summary, description), …``."""
    worst = readiness.worst[:NAMED_IN_MESSAGE]
    named = ", ".join(f"{t.tool} {t.score:.2f} ({'; '.join(t.missing[:2])})" for t in worst)
    more = len(readiness.worst) - len(worst)
    total_low = sum(1 for t in readiness.tools if t.score < threshold)
    tail = f", and {more} more in details.readiness.worst" if more > 0 else ""
    return (
        f"schema coverage {readiness.schema_coverage:g} is below {threshold:g} "
        f"({total_low} of {len(readiness.tools)} tools under it); lowest: {named}{tail}"
    )

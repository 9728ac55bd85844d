"""The readiness report of a collection: is it good enough to search, plan and execute against?

It covers the schema coverage per tool and overall (``coverage``) with the ``WORST`` tools; auth readiness
(``authcheck``); name collisions between sources and repeated ids, with the renames the build made; required
inputs nothing produces, each reported as ``needs_entity`` (``kind``: a ``reference`` such as ``deliveryId``
or a ``value`` such as ``date``); the contract coverage: of the required *reference* inputs
(``contracts.is_reference``), the share with a producer contract, None when there are none; and a verdict
(``ready``, ``needs_work``, ``not_ready``: ``_verdict``) with the reason codes behind it.

The coverages are rounded to ``PLACES`` decimals as recorded, and every comparison uses the rounded figure:
a gate's ``schema_coverage_below: 0.8387`` written from a recorded 0.8387 holds on the same collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from qlab.collection.authcheck import check_auth
from qlab.collection.contracts import is_reference
from qlab.collection.coverage import WEIGHTS, ToolCoverage, tool_coverage
from qlab.collection.model import Collection
from qlab.project.model import Config

DEFAULT_THRESHOLD = 0.8
NOT_READY_BELOW = 0.5
CONTRACTS_LOW = 0.5
WORST = 10
PLACES = 4  # decimals of the recorded coverages
Verdict = Literal["ready", "needs_work", "not_ready"]


@dataclass(frozen=True, slots=True)
class UnsatisfiedInput:
    """A required input no tool produces: a case has to provide it as an entity."""

    tool: str
    parameter: str
    location: str
    kind: Literal["reference", "value"]
    status: str = "needs_entity"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "parameter": self.parameter,
            "location": self.location,
            "kind": self.kind,
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class Readiness:
    verdict: Verdict
    reasons: tuple[str, ...]
    schema_coverage: float
    contract_coverage: float | None
    threshold: float
    tools: tuple[ToolCoverage, ...]
    worst: tuple[ToolCoverage, ...]
    auth: dict[str, Any]
    collisions: tuple[dict[str, Any], ...]
    unsatisfied: tuple[UnsatisfiedInput, ...]
    counts: dict[str, int]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``details["readiness"]`` of the build stage and ``qlab build --json``."""
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "schema_coverage": self.schema_coverage,
            "contract_coverage": self.contract_coverage,
            "threshold": self.threshold,
            "weights": dict(WEIGHTS),
            "counts": dict(self.counts),
            "auth": dict(self.auth),
            "collisions": [dict(c) for c in self.collisions],
            "unsatisfied": [u.to_dict() for u in self.unsatisfied],
            "worst": [t.to_dict() for t in self.worst],
            "tools": [t.to_dict() for t in self.tools],
            "warnings": list(self.warnings),
        }


def compute_readiness(
    collection: Collection,
    config: Config,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    warnings: Sequence[str] = (),
) -> Readiness:
    coverages = tuple(tool_coverage(t) for t in collection.tools)
    overall = round(sum(c.score for c in coverages) / len(coverages), PLACES) if coverages else 0.0
    worst = tuple(sorted((c for c in coverages if c.score < 1.0), key=lambda c: (c.score, c.tool))[:WORST])
    produced = {(c.consumer, c.parameter) for c in collection.contracts}
    unsatisfied: list[UnsatisfiedInput] = []
    references = satisfied = 0
    for tool in collection.tools:
        for param in tool.required_parameters:
            reference = is_reference(param)
            has_producer = (tool.id, param.name) in produced
            if reference:
                references += 1
                satisfied += has_producer
            if not has_producer:
                unsatisfied.append(
                    UnsatisfiedInput(
                        tool.id, param.name, param.location, "reference" if reference else "value"
                    )
                )
    contract_coverage = round(satisfied / references, PLACES) if references else None
    collisions = tuple(dict(c) for s in collection.sources for c in s.get("collisions") or ())
    auth = check_auth(collection, config)
    counts = {
        "tools": len(collection.tools),
        "sources": len(collection.sources),
        "contracts": len(collection.contracts),
        "required_inputs": sum(len(t.required_parameters) for t in collection.tools),
        "reference_inputs": references,
        "reference_inputs_with_producer": satisfied,
        "needs_entity": len(unsatisfied),
    }
    verdict, reasons = _verdict(overall, contract_coverage, threshold, auth, collisions, len(coverages))
    return Readiness(
        verdict=verdict,
        reasons=reasons,
        schema_coverage=overall,
        contract_coverage=contract_coverage,
        threshold=threshold,
        tools=coverages,
        worst=worst,
        auth=auth,
        collisions=collisions,
        unsatisfied=tuple(unsatisfied),
        counts=counts,
        warnings=tuple(warnings),
    )


def _verdict(
    coverage: float,
    contracts: float | None,
    threshold: float,
    auth: dict[str, Any],
    collisions: Sequence[dict[str, Any]],
    tools: int,
) -> tuple[Verdict, tuple[str, ...]]:
    """``not_ready``: no tools, auth required with no profile, or schema coverage below ``NOT_READY_BELOW``;
    ``needs_work``: schema coverage below ``threshold`` (the build gate's ``schema_coverage_below``, else
    ``DEFAULT_THRESHOLD``), contract coverage below ``CONTRACTS_LOW``, ids collided, or the auth profile does
    not fit a scheme; else ``ready``. With the reason codes behind it."""
    blocking: list[str] = []
    if tools == 0:
        blocking.append("no_tools")
    if auth.get("status") == "auth_profile_missing":
        blocking.append("auth_profile_missing")
    if coverage < NOT_READY_BELOW:
        blocking.append("schema_coverage_low")
    work: list[str] = []
    if coverage < threshold:
        work.append("schema_coverage_below")
    if contracts is not None and contracts < CONTRACTS_LOW:
        work.append("contract_coverage_low")
    if any(c.get("kind") in ("between_sources", "within_source") for c in collisions):
        work.append("name_collisions")
    if auth.get("mismatches"):
        work.append("auth_profile_mismatch")
    verdict: Verdict = "not_ready" if blocking else "needs_work" if work else "ready"
    return verdict, (*blocking, *work)  # every reason, the blocking ones first

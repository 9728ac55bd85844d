"""The readiness report of a collection: is it good enough to search, plan and execute against?

It covers (the build stage's readiness report):

- schema coverage per tool and overall (``coverage`` explains the checks and weights), and the ``worst``
  tools pulling it down;
- auth readiness: whether an auth profile exists for the security requirements (``authcheck``);
- name collisions between sources (and repeated ids within one), with the renames the build made;
- required inputs nothing can satisfy: no tool produces them, so a case must provide them as entities — they
  cannot be known at build time, so each is reported as ``needs_entity`` (``kind`` says whether it is a
  ``reference`` such as ``deliveryId`` or a ``value`` such as ``date``);
- contract coverage: of the required *reference* inputs (path parameters, and inputs whose last word is
  id-like: ``deliveryId``, ``memberNo``, ``device_id``; see ``contracts.is_reference``), the share that has at
  least one producer contract. Value inputs are left out: they come from the user, never from another call.
  None when the collection has no required reference inputs;
- a verdict: ``not_ready`` when there are no tools, auth is required with no profile, or schema coverage is
  below ``NOT_READY_BELOW``; ``needs_work`` when schema coverage is below the threshold (the build gate's
  ``schema_coverage_below`` value, else ``DEFAULT_THRESHOLD``), contract coverage is below
  ``CONTRACTS_LOW``, ids collided, or the auth profile does not fit a scheme; else ``ready``. ``reasons``
  lists the codes behind it.

The coverages are the figures as recorded, rounded to ``PLACES`` decimals, and every comparison uses them: a
gate's ``schema_coverage_below: 0.8387`` written from a recorded 0.8387 holds on the same collection.
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

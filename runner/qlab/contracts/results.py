"""Per-case results, kept stage by stage (the result shape).

A CaseResult is filled in as the case moves through the stages: each stage writes only its own object
(``search``, ``target_selector``, ``plan``, ``execute``, ``auth_readiness``, ``learning``) and its latency, and
the first stage that fails writes ``failure = {stage, reason}``. Later stages skip a case that already failed.
The run-level artifact (fingerprint, metrics, gates, decision) is assembled by ``qlab.run.artifact``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from qlab.engine.types import SearchRow

CaseStatus = Literal["passed", "failed", "error", "blocked", "skipped"]


def to_json(value: Any) -> Any:
    """``default`` of every JSON writer of results (``json.dumps(..., default=to_json)``): a search row
    (``SearchRow``, how a case's ``search.rows`` holds its Top-K) as its JSON object; anything else is an error."""
    if isinstance(value, SearchRow):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not JSON data")


def json_or_text(value: Any) -> Any:
    """``default`` of the writers that never fail on a value JSON has no type for (reports, command output): a
    search row as its JSON object, any other value (a path, a date) as its text."""
    return value.to_dict() if isinstance(value, SearchRow) else str(value)


def json_form(obj: Any) -> Any:
    """A stage object as JSON holds it: the search object with its rows as dicts (what the result schema checks),
    any other value as it is."""
    rows = obj.get("rows") if isinstance(obj, Mapping) else None
    if isinstance(rows, tuple | list) and all(isinstance(row, SearchRow) for row in rows):
        return {**obj, "rows": [row.to_dict() for row in rows]}
    return obj


def read_rows(cases: Iterable[Any]) -> None:
    """Each case's ``search.rows`` read back from JSON as SearchRows (in place), once the result schema checked
    them: a result read from a file holds its rows as a run does."""
    for case in cases:
        search = case.get("search") if isinstance(case, dict) else None
        if isinstance(search, dict) and isinstance(search.get("rows"), list):
            search["rows"] = tuple(map(SearchRow.from_dict, search["rows"]))


@dataclass(slots=True)
class Failure:
    """A stable failure reason and the stage it happened in. ``reason`` is a code from ``qlab.contracts.reasons``."""

    stage: str
    reason: str
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "reason": self.reason, "message": self.message}


@dataclass(slots=True)
class AssertionResult:
    type: str
    passed: bool
    message: str = ""  # on failure: expected, actual and the JSONPath
    expected: Any = None
    actual: Any = None
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "passed": self.passed}
        if self.message:
            out["message"] = self.message
        for key in ("expected", "actual", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(slots=True)
class CaseResult:
    case_id: str
    suite: str
    mode: str
    status: CaseStatus = "passed"
    latency_ms: dict[str, float] = field(
        default_factory=dict
    )  # stage -> ms (search, target_selection, plan, execute)
    search: dict[str, Any] | None = None  # its ``rows``: a tuple of SearchRow (``to_json`` writes them)
    target_selector: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    execute: dict[str, Any] | None = None
    auth_readiness: dict[str, Any] | None = None
    learning: dict[str, Any] | None = None
    # a new list when a stage adds to it: a case without assertions shares the empty tuple (no empty list per
    # search case)
    assertions: Sequence[AssertionResult] = ()
    failure: Failure | None = None
    attempts: int = 1
    passes: int = 1
    flaky: bool = False
    critical: bool = False
    file: str = ""
    line: int = 0
    # execute cases: the case's mutation_safety (read_only | allow_mutation); "execute read success rate" counts
    # the read_only ones. Empty for search and plan cases.
    mutation_safety: str = ""
    # the case's lifecycle when it is not active: "draft" (runs and is reported, never gates)
    lifecycle: str = ""
    name: str = ""  # the case's name (EvalCase.name), when its file gives one

    def fail(self, stage: str, reason: str, message: str = "", *, status: CaseStatus = "failed") -> None:
        """Record the first failure; later calls keep the first one (the stage that broke it)."""
        if self.failure is None:
            self.failure = Failure(stage, reason, message)
            self.status = status

    @property
    def done(self) -> bool:
        """True once the case failed, errored or was blocked: later stages leave it alone."""
        return self.status in ("failed", "error", "blocked", "skipped")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case_id": self.case_id,
            "suite": self.suite,
            "mode": self.mode,
            "status": self.status,
            "latency_ms": {stage: round(ms, 3) for stage, ms in self.latency_ms.items()},
        }
        # the stage objects in stage order, spelled out: this runs several times per case of a run (metrics, gates,
        # the artifact), and a loop over getattr costs twice as much
        if self.search is not None:
            out["search"] = self.search
        if self.target_selector is not None:
            out["target_selector"] = self.target_selector
        if self.plan is not None:
            out["plan"] = self.plan
        if self.execute is not None:
            out["execute"] = self.execute
        if self.auth_readiness is not None:
            out["auth_readiness"] = self.auth_readiness
        if self.learning is not None:
            out["learning"] = self.learning
        if self.assertions:
            out["assertions"] = [a.to_dict() for a in self.assertions]
        if self.failure is not None:
            out["failure"] = self.failure.to_dict()
        if self.attempts != 1:
            out["attempts"] = self.attempts
            out["passes"] = self.passes
        if self.flaky:
            out["flaky"] = True
        if self.critical:
            out["critical"] = True
        if self.file:
            out["file"] = self.file
            out["line"] = self.line
        if self.mutation_safety:
            out["mutation_safety"] = self.mutation_safety
        if self.lifecycle:
            out["lifecycle"] = self.lifecycle
        if self.name:
            out["name"] = self.name
        return out

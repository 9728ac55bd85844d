"""What an engine returns for each of the search, select and plan stages (the stages' result objects)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# Reason codes of the target selector (``target_selector.reason_codes``), verbatim where the specification names them.
LLM_TARGET_OVERRIDDEN = "llm_target_overridden"
SELECTED_BY_STRONG_EVIDENCE = "selected_by_strong_evidence"
LLM_TARGET_NOT_IN_TOP_K = "llm_target_not_in_top_k"
NO_LLM_TARGET = "no_llm_target"
AMBIGUOUS_CANDIDATES = "ambiguous_candidates"
LLM_TARGET_KEPT = "llm_target_kept"
SELECTED_TOP_RANK = "selected_top_rank"
NO_CANDIDATES = "no_candidates"

PlanStatus = Literal["synthesized", "needs_input", "failed"]


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One Top-K row, with the evidence behind its score."""

    tool_id: str
    rank: int  # 1-based
    score: float
    # per-field contribution, e.g. {"id": 2.1}
    field_scores: Mapping[str, float] = field(default_factory=dict)
    matched_terms: tuple[str, ...] = ()
    corrections: Mapping[str, str] = field(default_factory=dict)  # misspelt query term -> vocabulary term

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON holds it (``definitions/search_row`` of result.schema.json), scores to 4 places: how
        every writer and the in-run schema check see it."""
        return {
            "tool_id": self.tool_id,
            "rank": self.rank,
            "score": round(self.score, 4),
            "field_scores": {name: round(value, 4) for name, value in self.field_scores.items()},
            "matched_terms": list(self.matched_terms),
            "corrections": dict(self.corrections),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchRow:
        """A row read back from a result artifact whose shape the result schema has checked (``to_dict``'s
        inverse; an engine's reply is read by ``qlab.engine.wire.search_from_dict``, which checks as it reads)."""
        return cls(
            tool_id=data["tool_id"],
            rank=data["rank"],
            score=data.get("score", 0.0),
            field_scores=dict(data.get("field_scores") or {}),
            matched_terms=tuple(data.get("matched_terms") or ()),
            corrections=dict(data.get("corrections") or {}),
        )


@dataclass(frozen=True, slots=True)
class SearchResult:
    rows: tuple[SearchRow, ...]
    query_terms: tuple[str, ...] = ()

    def rank_of(self, tool_id: str) -> int | None:
        for row in self.rows:
            if row.tool_id == tool_id:
                return row.rank
        return None


@dataclass(frozen=True, slots=True)
class Selection:
    """The ``target_selector`` block."""

    llm_target: str | None
    selected_target: str | None
    overrode_llm: bool
    reason_codes: tuple[str, ...]
    ambiguous: bool = False
    candidates: tuple[str, ...] = ()  # the ids the selector could not tell apart, when ambiguous
    llm_usage: Mapping[str, Any] = field(default_factory=dict)  # tokens, cost_usd, cached, model


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One call of a plan. ``arguments`` holds literal values; ``bindings`` maps a parameter to an earlier step's
    output: ``{"memberNo": {"step": 0, "path": "$.data[0].memberNo"}}``."""

    tool_id: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    bindings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class InputSlot:
    """A required input nothing could fill: the user must be asked for it."""

    tool_id: str
    parameter: str
    location: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    reason: str = "no_entity_or_producer"


@dataclass(frozen=True, slots=True)
class Plan:
    plan_id: str  # deterministic: digest of (target, steps)
    status: PlanStatus
    steps: tuple[PlanStep, ...] = ()
    user_input_slots: tuple[InputSlot, ...] = ()
    # human-readable synthesis notes, e.g. "memberNo <- entity memberNo (exact)"
    diagnostics: tuple[str, ...] = ()
    reason: str | None = None  # for needs_input / failed: required_fields_unsatisfied, target_unknown, ...

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(s.tool_id for s in self.steps)

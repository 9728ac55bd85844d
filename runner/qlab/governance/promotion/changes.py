"""One case across the two runs of a promotion: its change class and both sides' evidence.

The shared type of ``compare`` (which classifies) and ``checks`` (which reads the classes), kept apart so
neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CHANGE_KINDS: tuple[str, ...] = ("regressed", "fixed", "still_failing", "new", "removed", "passing")


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case across the two runs; ``baseline``/``candidate`` are its stage objects (None when absent)."""

    case_id: str
    suite: str
    kind: str  # one of CHANGE_KINDS
    required: bool
    flaky: bool
    baseline: Mapping[str, Any] | None
    candidate: Mapping[str, Any] | None
    baseline_status: str | None
    candidate_status: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "suite": self.suite,
            "change": self.kind,
            "required": self.required,
            "flaky": self.flaky,
            "baseline": {"status": self.baseline_status, "evidence": self.baseline},
            "candidate": {"status": self.candidate_status, "evidence": self.candidate},
        }

"""One case across the two runs of a promotion: its change class and both sides' evidence.

The shared type of ``compare`` (which classifies) and ``checks`` (which reads the classes), kept apart so
neither imports the other. The classes themselves are ``qlab.contracts.changes`` (the reports show the same ones).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qlab.contracts.changes import (
    CHANGE_KINDS as CHANGE_KINDS,
)  # re-exported: the classes a promotion reports
from qlab.contracts.changes import COMPARED as COMPARED


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case across the two runs; ``baseline``/``candidate`` are its stage objects (None when absent).
    ``*_ratio``: the share of the case's repeats that passed in that run (1 or 0 for a case run once)."""

    case_id: str
    suite: str
    kind: str  # one of CHANGE_KINDS
    required: bool
    flaky: bool
    baseline: Mapping[str, Any] | None
    candidate: Mapping[str, Any] | None
    baseline_status: str | None
    candidate_status: str | None
    baseline_ratio: float | None = None
    candidate_ratio: float | None = None

    @property
    def unstable(self) -> bool:
        """Some repeats passed and some did not, in either run: reported as flaky."""
        return any(r is not None and 0.0 < r < 1.0 for r in (self.baseline_ratio, self.candidate_ratio))

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "suite": self.suite,
            "change": self.kind,
            "required": self.required,
            "flaky": self.flaky or self.unstable,
            "baseline": {
                "status": self.baseline_status,
                "pass_ratio": self.baseline_ratio,
                "evidence": self.baseline,
            },
            "candidate": {
                "status": self.candidate_status,
                "pass_ratio": self.candidate_ratio,
                "evidence": self.candidate,
            },
        }

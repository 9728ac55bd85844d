"""The in-run citation_coverage and evidence_quality checks at the execute boundary: a gating case below its
minimum fails them (block by default, or the gate's guard mode); a draft, flaky or optional case only shows."""

from __future__ import annotations

from pathlib import Path

from qlab.project.model import Gate, Guard
from qlab.results import CaseResult
from qlab.run.boundary import claims_checks
from run import fakes as f


def _result(case_id: str, coverage: float, quality: float, **over: object) -> CaseResult:
    result = CaseResult(case_id, "execute_read", "execute", **over)  # type: ignore[arg-type]
    record = {"claims": 2, "citation_coverage": coverage, "min_citation_coverage": 1.0,
              "evidence_quality": quality, "min_evidence_quality": 0.5}  # fmt: skip
    result.execute = {"http_status": 200, "claims": record}
    return result


def test_a_gating_case_below_its_minimum_fails_the_check(tmp_path: Path) -> None:
    config = f.config(tmp_path)
    coverage, quality = claims_checks(config, None, [_result("e1", 0.5, 1.0), _result("e2", 1.0, 1.0)])
    assert (coverage.guard, coverage.passed, coverage.mode, coverage.reason) == (
        "citation_coverage",
        False,
        "block",
        "citation_coverage_below",
    )
    assert "e1: 0.5 < 1" in coverage.message
    assert quality.passed and quality.message == "2 case(s) checked"


def test_a_draft_or_flaky_case_only_shows_and_the_gate_sets_the_mode(tmp_path: Path) -> None:
    config = f.config(tmp_path)
    coverage, _ = claims_checks(
        config, None, [_result("e1", 0.5, 1.0, lifecycle="draft"), _result("e2", 0.0, 1.0, flaky=True)]
    )
    assert coverage.passed and "not gating: e1: 0.5 < 1; e2: 0 < 1" in coverage.message
    gate = Gate("execute", "execute", guards=(Guard("citation_coverage", "warn"),))
    coverage, _ = claims_checks(config, gate, [_result("e1", 0.5, 1.0)])
    assert not coverage.passed and coverage.mode == "warn"
    assert claims_checks(config, None, [CaseResult("e3", "execute_read", "execute")]) == []  # no claims check

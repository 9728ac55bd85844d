"""The in-run citation_coverage and evidence_quality checks at the execute boundary: a gating case below its
minimum fails them (block by default, or the gate's guard mode); a draft, flaky or optional case only shows."""

from __future__ import annotations

from pathlib import Path

from qlab.contracts.results import CaseResult
from qlab.project.model import Gate, Guard
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


def _run_below(tmp_path: Path, mode: str) -> dict[str, object]:
    """A run whose one execute case's response cites half its claims, against a minimum of 1.0."""
    import dataclasses

    from qlab.project.model import ClaimsCheck
    from qlab.run.runner import run

    def execute(ctx, cases, results):  # type: ignore[no-untyped-def]
        report = f.FakeExecute()(ctx, cases, results)
        record = {"claims": 2, "cited": 1, "citation_coverage": 0.5, "min_citation_coverage": 1.0,
                  "evidence_quality": 1.0, "min_evidence_quality": 0.0}  # fmt: skip
        for c in cases:
            results[c.id].execute = {**(results[c.id].execute or {}), "claims": record}
        return report

    gates = list(f.DEFAULT_GATES)
    gates[4] = dataclasses.replace(gates[4], guards=(Guard("citation_coverage", mode),))  # type: ignore[arg-type]
    cases = [*f.demo_cases()[:4], f.case("e1", "execute_read", "execute", claims=ClaimsCheck())]
    project = f.FakeProject(f.config(tmp_path, gates=gates), tuple(cases))
    outcome = run(project, options=f.options(tmp_path, execute=execute))
    return next(c for c in outcome.artifact["cases"] if c["case_id"] == "e1")


def test_a_case_below_its_minimum_fails_where_the_check_blocks_and_can_become_a_regression_case(
    tmp_path: Path,
) -> None:
    """Rule: a case that does not meet its own claims minimum failed it. It stayed "passed" while the gate
    blocked, so it could never be proposed as a regression case; with the check set to warn it still passes."""
    blocked = _run_below(tmp_path, "block")
    assert (blocked["status"], blocked["failure"]["reason"]) == ("failed", "citation_coverage_below")
    warned = _run_below(tmp_path, "warn")
    assert warned["status"] == "passed"

"""Repeats as lanes: a repeat beyond the first does not start once the run is over its time budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from qlab.contracts.results import CaseResult
from qlab.project.model import Case, Suite
from qlab.run.lanes import Lanes
from qlab.stages.base import StageReport
from qlab.stages.context import RunContext
from run import fakes as f


def test_repeats_stop_once_the_run_is_over_budget(tmp_path: Path) -> None:
    suites = {"s": Suite("s", "search", ("s/*.yaml",), repeat=3, min_pass=2)}
    config = f.config(tmp_path, suites=suites)
    cases = [f.case("c1", "s", "search")]
    lanes = Lanes(cases, config, root=tmp_path)
    ran: list[int] = []

    def stage(ctx: RunContext, pending: Sequence[Case], lane: Mapping[str, CaseResult]) -> StageReport:
        ran.append(len(ran))
        return StageReport("search")

    checks = iter([False, True])  # the second repeat finds the run over budget
    lanes.run(stage, RunContext(config, None, None, None), cases, over_budget=lambda: next(checks))  # type: ignore[arg-type]
    assert ran == [0, 1]  # lanes 1 and 2 ran; lane 3 did not start
    attempts = lanes.attempts("c1")
    assert [a.status for a in attempts] == ["passed", "passed", "skipped"]
    assert attempts[2].failure is not None and attempts[2].failure.reason == "budget_exceeded"
    assert lanes.aggregate("c1").status == "passed" and lanes.aggregate("c1").passes == 2

    lanes = Lanes(cases, config, root=tmp_path)
    lanes.run(stage, RunContext(config, None, None, None), cases, over_budget=lambda: True)  # type: ignore[arg-type]
    reported = lanes.aggregate("c1")
    assert reported.status == "skipped" and reported.passes == 1  # min_pass 2 not reached: never passed

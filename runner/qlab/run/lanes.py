"""Repeats with a minimum pass count (``Suite.repeat`` / ``min_pass``), as parallel "lanes" of CaseResults.

Lane ``a`` holds attempt ``a + 1`` of every case whose suite repeats at least ``a + 1`` times. Each stage runs
once per lane, so every attempt moves through the stages on its own (attempt 2 may reach ``plan`` although
attempt 1 missed at ``search``). ``aggregate`` folds the attempts of a case into the one CaseResult that is
reported and gated: passed when at least ``min_pass`` attempts passed (the last passing attempt is kept),
else the first attempt that did not pass. A suite without ``repeat`` has one lane and costs nothing extra.

Repeats are bounded twice: ``repeat`` is at most 100 (the config schema), and once the run is over its time
budget (``budget.max_duration_sec``) no further lane starts: their attempts are ``skipped`` with
``budget_exceeded``, so a case that could not reach its ``min_pass`` is never reported passed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from qlab.contracts.results import CaseResult
from qlab.project.model import Case, Config
from qlab.run.provenance import relative
from qlab.stages.base import StageReport
from qlab.stages.context import RunContext, StageRun


@lru_cache(maxsize=4096)
def _case_file(base: str, file: str, root: str) -> str:
    """A case file relative to the repository root (cached: many cases share a file, and resolving is slow)."""
    return relative(Path(base) / file, Path(root)) if file else ""


def new_result(case: Case, config: Config, *, root: Path, base: str | None = None) -> CaseResult:
    """The empty result of one attempt of ``case``, carrying what reports need (file, line, flags)."""
    suite = config.suites[case.suite]
    file = _case_file(base or str(Path(config.path).parent), case.file, str(root))
    return CaseResult(
        case_id=case.id,
        suite=case.suite,
        mode=case.mode,
        flaky=case.flaky,
        critical=case.id in suite.critical,
        file=file,
        line=case.origin.line,
        mutation_safety=case.mutation_safety if case.mode == "execute" else "",
        lifecycle="draft" if case.status == "draft" else "",
        name=case.name or "",
    )


class Lanes:
    """Every attempt of every selected case."""

    def __init__(self, cases: Sequence[Case], config: Config, *, root: Path) -> None:
        self.cases = list(cases)
        self.min_pass: dict[str, int] = {}
        width = 1
        for case in self.cases:
            suite = config.suites[case.suite]
            repeat = max(1, suite.repeat)
            self.min_pass[case.id] = max(1, min(suite.min_pass, repeat))
            width = max(width, repeat)
        self.lanes: list[dict[str, CaseResult]] = [{} for _ in range(width)]
        base = str(Path(config.path).parent)
        for case in self.cases:
            for attempt in range(max(1, config.suites[case.suite].repeat)):
                self.lanes[attempt][case.id] = new_result(case, config, root=root, base=base)

    def run(
        self,
        stage: StageRun,
        ctx: RunContext,
        cases: Sequence[Case],
        *,
        over_budget: Callable[[], bool] = lambda: False,
    ) -> list[StageReport]:
        """Run ``stage`` once per lane over the cases of that lane that are not done yet; a lane after the first
        does not start once ``over_budget()`` (see the module docstring)."""
        reports = []
        for lane in self.lanes:
            pending = [c for c in cases if c.id in lane and not lane[c.id].done]
            if pending and lane is not self.lanes[0] and over_budget():
                for case in pending:
                    lane[case.id].fail(
                        "run",
                        "budget_exceeded",
                        "this repeat did not run: the run was over budget.max_duration_sec",
                        status="skipped",
                    )
                continue
            if pending or lane is self.lanes[0]:
                reports.append(stage(ctx, pending, lane))
        return reports

    def attempts(self, case_id: str) -> list[CaseResult]:
        return [lane[case_id] for lane in self.lanes if case_id in lane]

    def aggregate(self, case_id: str) -> CaseResult:
        """The reported result of a case (see the module docstring)."""
        tries = self.attempts(case_id)
        if len(tries) == 1:
            return tries[0]
        passed = [r for r in tries if r.status == "passed"]
        if len(passed) >= self.min_pass[case_id]:
            pick = passed[-1]
        else:
            pick = next(r for r in tries if r.status != "passed")
        return dataclasses.replace(pick, attempts=len(tries), passes=len(passed))

    def results(self, ids: Iterable[str] | None = None) -> list[CaseResult]:
        """Aggregated results, in selection order (or of ``ids``)."""
        wanted = [c.id for c in self.cases] if ids is None else list(ids)
        return [self.aggregate(case_id) for case_id in wanted]

    def block(
        self,
        case_ids: Iterable[str],
        *,
        stage: str,
        message: str | Callable[[CaseResult], str],
        error: bool = False,
    ) -> int:
        """Mark every attempt of these cases that is not done yet as blocked by ``stage`` (``skipped`` with
        ``stopped_by_error`` when the run stopped at an infrastructure fault); ``message`` may be made per attempt
        (what it went through); returns how many cases changed."""
        changed = 0
        reason = "stopped_by_error" if error else "blocked_by_stage"
        for case_id in case_ids:
            hit = False
            for result in self.attempts(case_id):
                if not result.done:
                    text = message if isinstance(message, str) else message(result)
                    result.fail(stage, reason, text, status="skipped" if error else "blocked")
                    hit = True
            changed += hit
        return changed

    def each(self, fn: Callable[[CaseResult], None]) -> None:
        for lane in self.lanes:
            for result in lane.values():
                fn(result)

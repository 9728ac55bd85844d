"""One scenario, every way it can be run: unsharded, and as 1, 2 and 3 shards merged by ``qlab merge``.

The scenarios (fake stages, ``run.fakes``; latencies are fixed, so metrics are comparable to the byte):

- ``pass``: every required case passes; a ``required: false`` suite has a failing case (it does not gate);
- ``blocked``: a search case misses its target, the search gate stops the run, later cases are blocked;
- ``hostile``: ``blocked`` with markup, workflow commands, XML-breaking and control characters in the text
  a failing case carries;
- ``select``: a regression case (a must-pass suite in the select and plan gates) selects the wrong target: the
  select gate blocks, the plan cases that passed select are blocked before plan;
- ``plan``: a plan case needs input the case does not give: the plan gate blocks (its stop);
- ``execute``: a read-only execute case fails an assertion: the execute gate blocks;
- ``error``: an execute case's dev server does not start: the execute gate could not decide (ERROR).

The select stage also searches the cases it selects for (as the real one does), so a case blocked after its
select gate has stage objects a merge must not keep.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from qlab.contracts.results import CaseResult
from qlab.project.model import Case, Suite
from qlab.run.artifact import read, write
from qlab.run.merge import merge
from qlab.run.runner import run
from qlab.run.shard import ShardSpec
from qlab.stages.base import StageReport, StopHit
from qlab.stages.context import RunContext
from run import fakes as f

HOSTILE = (
    '<script>alert("x")</script> ]]> &amp; </failure> %0A::error file=x::pwned\n::warning::y '
    "\x1b[31mred\x1b[0m \x00 \x07 \u202e ${{ secrets.T }} | pipe"
)
SCENARIOS = ("pass", "blocked", "hostile", "select", "plan", "execute", "error")
# the scenario's failing case: (index in ``cases``, its case)
_FAILING = {
    "select": ("r01", "regression", "plan", "wrong:x"),
    "plan": ("p02", "plan_e2e", "plan", "unsat:x"),
    "execute": ("e01", "execute_read", "execute", "assert:x"),
    "error": ("e01", "execute_read", "execute", "down:x"),
}
SHARDS = (1, 2, 3)


def _select(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """The fake select, after a search of the cases not searched yet (as the select stage's ``selected``)."""
    f.fake_search(ctx, [c for c in cases if results[c.id].search is None], results)
    return f.fake_select(ctx, [c for c in cases if not results[c.id].done], results)


def _execute(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """The fake execute, reporting its stops in its own words (the real stage names the reasons, not the cases)."""
    report = f.FakeExecute()(ctx, cases, results)
    ids = tuple(
        c.id for c in cases if getattr(results[c.id].failure, "reason", "") == "auth_context_required"
    )
    if ids:
        report.stops.append(StopHit("auth_not_ready", ids, f"{len(ids)} case(s): auth_context_required"))
    return report


def cases(scenario: str) -> list[Case]:
    out = [
        f.case(f"s{i:02d}", "search_core", "search", "second:x" if i % 3 == 0 else "t", line=i + 1)
        for i in range(9)
    ]
    out += [f.case(f"p{i:02d}", "plan_e2e", "plan", line=i + 1) for i in range(5)]
    out += [f.case(f"e{i:02d}", "execute_read", "execute", line=i + 1) for i in range(3)]
    out += [f.case("e03", "execute_read", "execute", "auth:x", line=4, flaky=True)]  # fails, does not gate
    out += [
        f.case("o01", "optional", "search", line=1),
        f.case("o02", "optional", "search", "absent:x", line=2),
    ]
    out += [f.case(f"r{i:02d}", "regression", "plan", line=i + 1) for i in range(3)]
    if scenario in ("blocked", "hostile"):
        target = f"absent:{HOSTILE}" if scenario == "hostile" else "absent:gone"
        out[4] = f.case("s04", "search_core", "search", target, line=5)
    if scenario in _FAILING:
        case_id, suite, mode, target = _FAILING[scenario]
        index = next(i for i, c in enumerate(out) if c.id == case_id)
        out[index] = f.case(case_id, suite, mode, target, line=out[index].origin.line)
    return out


def project(tmp: Path, scenario: str) -> f.FakeProject:
    config = f.config(tmp)
    suites = {
        **config.suites,
        "optional": Suite("optional", "search", ("o/*.yaml",), required=False),
        "regression": Suite("regression", "plan", ("r/*.yaml",), category="regression"),
    }
    joins = {"search": "optional", "select": "regression", "plan": "regression"}
    gates = tuple(
        dataclasses.replace(g, suites=(*g.suites, joins[g.name])) if g.name in joins else g
        for g in config.gates
    )
    return f.FakeProject(dataclasses.replace(config, suites=suites, gates=gates), tuple(cases(scenario)))


def options(tmp: Path, shard: ShardSpec | None = None, **kw: Any) -> Any:
    return dataclasses.replace(
        f.options(tmp, stages={"select": _select, "execute": _execute}, **kw), shard=shard
    )


@dataclasses.dataclass(frozen=True)
class Story:
    """A scenario's unsharded result and its merged results by shard count (as read back from JSON)."""

    whole: dict[str, Any]
    merged: dict[int, dict[str, Any]]


def story(scenario: str) -> Story:
    """The scenario told once per mutant under test — mutation testing (mutmut) names it in ``MUTANT_UNDER_TEST``;
    outside it there is none, so once per session — and at every call while mutmut maps which test calls which
    code (``MUTANT_UNDER_TEST=stats``): a cached story would hide the calls of every test but the first, and would
    hand a mutant the result its parent process computed with the unmutated code."""
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    return _tell(scenario) if mutant == "stats" else _told(scenario, mutant)


def _tell(scenario: str) -> Story:
    with tempfile.TemporaryDirectory(prefix=f"qlab-story-{scenario}-") as folder:
        return _tell_in(scenario, Path(folder))


def _tell_in(scenario: str, tmp: Path) -> Story:
    fake = project(tmp, scenario)
    whole = json.loads(json.dumps(run(fake, options=options(tmp)).artifact))
    merged: dict[int, dict[str, Any]] = {}
    for total in SHARDS:
        paths = [
            write(
                tmp / f"shards-{total}" / f"qlab-shard-{i}-of-{total}.json",
                run(fake, options=options(tmp, ShardSpec(i, total))).artifact,
            )
            for i in range(1, total + 1)
        ]
        merged[total] = json.loads(json.dumps(merge([(p, read(p)) for p in paths])))
    return Story(whole, merged)


@cache
def _told(scenario: str, mutant: str) -> Story:
    return _tell(scenario)

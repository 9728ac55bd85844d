"""Stage 4, plan: selected target + entities → Plan, slots, diagnostics; stop if required fields are
unsatisfied.

Every plan (and execute) case of the gate's suites that is not done yet gets its selection (reused, or run
now after its search) and one ``engine.plan`` call. The case's ``plan`` object is ``{plan_id, status, tools,
steps, user_input_slots, diagnostics, reason}`` with ``latency_ms["plan"]``; the Plan is left in
``ctx.answers.plans`` for the execute stage. A case fails with ``required_fields_unsatisfied`` when the plan
needs input (unless a ``plan_status`` assertion expects it), ``plan_failed`` when synthesis failed,
``plan_tools_mismatch`` when the plan's tools differ from what the case expects, and ``engine_error`` when the
engine raised.

Metrics: plan_hit_rate, latency_plan_p50_ms / _p95_ms. Stop condition seen: required_fields_unsatisfied."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts import metrics
from qlab.contracts.results import CaseResult
from qlab.engine import planner, wire
from qlab.engine.types import Plan
from qlab.project.model import Case
from qlab.stages import engine_checks
from qlab.stages.base import StageReport
from qlab.stages.context import RunContext
from qlab.stages.engine_calls import (
    call,
    latency_metrics,
    selected,
    stops_for,
    suite_and_gate_figures,
    suite_groups,
)

STAGE = "plan"


def plan_case(ctx: RunContext, case: Case, result: CaseResult) -> Plan | None:
    """The case's plan (after its selection); writes ``result.plan`` and judges it."""
    selection = selected(ctx, case, result)
    if selection is None:
        return None
    entities = dict(case.provided_entities)
    target = selection.selected_target
    if target is None:  # nothing to plan for: the plan fails without asking the engine
        found: Plan | None = planner.synthesize(None, entities, collection=ctx.collection)
        result.latency_ms["plan"] = 0.0
    else:
        found = call(
            result,
            STAGE,
            "plan",
            ctx,
            lambda: ctx.engine.plan(case.query, target, entities=entities),
            timeout_sec=case.timeout_sec,
        )
    if found is None:
        return None
    result.plan = wire.plan_to_dict(found)
    ctx.answers.plans[case.id] = found
    engine_checks.check_plan(case, result, found)
    return found


def _figures(dicts: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    out = metrics.plan_metrics(dicts)
    out.update(latency_metrics(dicts, "plan"))
    return out


def run(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """Plan the gate's plan and execute cases; see the module docstring."""
    started = time.perf_counter()
    handled = [c for c in cases if c.mode != "search" and not results[c.id].done]
    for case in handled:
        plan_case(ctx, case, results[case.id])
    report = StageReport(stage=STAGE)
    groups = suite_groups(handled, results)
    report.suite_metrics, report.metrics = suite_and_gate_figures(groups, _figures)
    unsatisfied = frozenset({"required_fields_unsatisfied"})
    report.stops = stops_for("required_fields_unsatisfied", unsatisfied, handled, results, STAGE)
    ctx.log(f"plan: {len(handled)} case(s), plan hit rate {report.metrics.get('plan_hit_rate')}")
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report

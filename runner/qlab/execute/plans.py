"""Where an execute case's plan comes from.

In order: the Plan object the plan stage left in ``ctx.shared["plans"][case_id]``; the plan dict it wrote into
the case's result; else the engine is asked (search → select → plan), as when the plan stage did not run for
the case's suite. A plan that cannot be had fails the case in the stage that could not produce it (``select``
or ``plan``), so an unintended tool is never executed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from qlab.engine.base import Engine
from qlab.engine.types import Plan, PlanStep
from qlab.project.model import Case
from qlab.results import CaseResult


def plan_from_dict(data: Mapping[str, Any]) -> Plan | None:
    """A Plan from the ``plan`` object of a result, or None when it does not carry executable steps."""
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        return None
    out: list[PlanStep] = []
    for step in steps:
        if not isinstance(step, Mapping):
            return None
        tool = step.get("tool_id", step.get("tool"))
        if not isinstance(tool, str):
            return None
        arguments = step.get("arguments") or {}
        bindings = step.get("bindings") or {}
        if not isinstance(arguments, Mapping) or not isinstance(bindings, Mapping):
            return None
        out.append(
            PlanStep(
                tool,
                dict(arguments),
                {str(k): dict(v) for k, v in bindings.items() if isinstance(v, Mapping)},
            )
        )
    return Plan(str(data.get("plan_id", "")), "synthesized", tuple(out))


def plan_for(
    case: Case, result: CaseResult, *, shared: Mapping[str, Plan], engine: Engine, k: int = 8
) -> Plan | None:
    """The case's plan, or None after failing ``result`` with the reason it could not be had."""
    known = shared.get(case.id)
    if known is not None:
        return known if _usable(known, result) else None
    if result.plan:
        parsed = plan_from_dict(result.plan)
        if parsed is not None:
            return parsed
    return _from_engine(case, result, engine=engine, k=k)


def _usable(plan: Plan, result: CaseResult) -> bool:
    if plan.status == "synthesized" and plan.steps:
        return True
    result.fail("plan", plan.reason or "required_fields_unsatisfied", f"plan {plan.plan_id} is {plan.status}")
    return False


def _from_engine(case: Case, result: CaseResult, *, engine: Engine, k: int) -> Plan | None:
    entities = dict(case.provided_entities)
    stage = "search"
    try:
        started = time.perf_counter()
        found = engine.search(case.query, k=k)
        result.latency_ms.setdefault("search", (time.perf_counter() - started) * 1000)
        stage, started = "select", time.perf_counter()
        selection = engine.select(case.query, found, entities=entities, llm_target=case.llm_target)
        result.latency_ms.setdefault("target_selection", (time.perf_counter() - started) * 1000)
        target = selection.selected_target
        if target is None:
            result.fail("search", "expected_target_absent", f"the engine found no target for {case.query!r}")
            return None
        if case.expected_target and target != case.expected_target:
            result.fail(
                "select",
                "wrong_target_selected",
                f"the engine selected {target}, the case expects {case.expected_target}: not executing it",
            )
            return None
        stage, started = "plan", time.perf_counter()
        plan = engine.plan(case.query, target, entities=entities)
        result.latency_ms.setdefault("plan", (time.perf_counter() - started) * 1000)
    except Exception as exc:  # an engine bug must not take the other cases down
        result.fail(stage, "engine_error", f"engine {getattr(engine, 'name', '?')}: {exc}", status="error")
        return None
    return plan if _usable(plan, result) else None

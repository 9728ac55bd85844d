"""Where an execute case's plan comes from.

In order: the Plan object the plan stage left in ``ctx.answers.plans[case_id]``; else the plan dict written
into the case's result. The execute stage makes sure there is one: a case whose suite sits in no plan gate is
planned by the plan stage's own code first (``qlab.stages.plan.plan_case``: search → select → plan), so it keeps
its ``search``, ``target_selector`` and ``plan`` objects like any plan case. A plan that cannot be had fails the
case at ``plan``, so an unintended tool is never executed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan, PlanStep
from qlab.project.model import Case


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


def plan_for(case: Case, result: CaseResult, *, plans: Mapping[str, Plan]) -> Plan | None:
    """The case's plan (``plans``: the Plans the run made, by case id), or None after failing ``result`` with
    the reason it could not be had."""
    known = plans.get(case.id)
    if known is not None:
        return known if _usable(known, result) else None
    parsed = plan_from_dict(result.plan) if result.plan else None
    if parsed is None:
        result.fail("plan", "plan_failed", "no executable plan: the plan object carries no steps")
    return parsed


def _usable(plan: Plan, result: CaseResult) -> bool:
    if plan.status == "synthesized" and plan.steps:
        return True
    result.fail("plan", plan.reason or "required_fields_unsatisfied", f"plan {plan.plan_id} is {plan.status}")
    return False

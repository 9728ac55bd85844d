"""The search, select and plan assertions of a case, judged against what the engine answered.

=====================  ========================  ===========================================================
type                   arguments                 passes when                     (reason on failure)
=====================  ========================  ===========================================================
top_k_contains         ``tool``, ``k``           ``tool`` is among the first ``k`` rows (expected_target_absent)
top_1_is               ``tool``                  ``tool`` is the first row               (expected_target_absent)
selected_target        ``equals``                the selector chose ``equals``           (wrong_target_selected)
not_overridden         --                        the selector kept the LLM target        (wrong_target_selected)
plan_contains_tool     ``tool``                  a plan step calls ``tool``              (plan_tools_mismatch)
plan_tools_equal       ``tools``                 the plan's tools are ``tools``, in order (plan_tools_mismatch)
plan_status            ``equals``                the plan's status is ``equals``  (by the actual status, below)
no_user_input_slots    --                        the plan asks the user for nothing (required_fields_unsatisfied)
=====================  ========================  ===========================================================

A failed ``plan_status`` is ``required_fields_unsatisfied`` when the plan needs input and ``plan_failed``
otherwise. Each check appends an ``AssertionResult`` (expected, actual, message) and fails the case with the
reason above; the first failure of a case is the one it keeps. Assertions of other stages are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qlab.engine.types import Plan, SearchResult, Selection
from qlab.project.model import ENGINE_ASSERTIONS, Assertion, Case
from qlab.results import AssertionResult, CaseResult

SEARCH_TYPES = ENGINE_ASSERTIONS["search"]
SELECT_TYPES = ENGINE_ASSERTIONS["select"]
PLAN_TYPES = ENGINE_ASSERTIONS["plan"]

_Check = Callable[[Assertion, Any], tuple[bool, Any, Any, str]]  # (passed, expected, actual, reason)


def _top_k_contains(a: Assertion, found: SearchResult) -> tuple[bool, Any, Any, str]:
    k = int(a.args.get("k", len(found.rows)) or len(found.rows))
    shown = [row.tool_id for row in found.rows[:k]]
    return a.args.get("tool") in shown, {"tool": a.args.get("tool"), "k": k}, shown, "expected_target_absent"


def _top_1_is(a: Assertion, found: SearchResult) -> tuple[bool, Any, Any, str]:
    first = found.rows[0].tool_id if found.rows else None
    return first == a.args.get("tool"), a.args.get("tool"), first, "expected_target_absent"


def _selected_target(a: Assertion, selection: Selection) -> tuple[bool, Any, Any, str]:
    expected = a.args.get("equals")
    return selection.selected_target == expected, expected, selection.selected_target, "wrong_target_selected"


def _not_overridden(a: Assertion, selection: Selection) -> tuple[bool, Any, Any, str]:
    return not selection.overrode_llm, False, selection.overrode_llm, "wrong_target_selected"


def _plan_contains_tool(a: Assertion, plan: Plan) -> tuple[bool, Any, Any, str]:
    return a.args.get("tool") in plan.tools, a.args.get("tool"), list(plan.tools), "plan_tools_mismatch"


def _plan_tools_equal(a: Assertion, plan: Plan) -> tuple[bool, Any, Any, str]:
    expected = list(a.args.get("tools") or [])
    return list(plan.tools) == expected, expected, list(plan.tools), "plan_tools_mismatch"


def _plan_status(a: Assertion, plan: Plan) -> tuple[bool, Any, Any, str]:
    reason = "required_fields_unsatisfied" if plan.status == "needs_input" else "plan_failed"
    return plan.status == a.args.get("equals"), a.args.get("equals"), plan.status, reason


def _no_user_input_slots(a: Assertion, plan: Plan) -> tuple[bool, Any, Any, str]:
    slots = [f"{slot.tool_id}.{slot.parameter}" for slot in plan.user_input_slots]
    return not slots, [], slots, "required_fields_unsatisfied"


CHECKS: dict[str, _Check] = {
    "top_k_contains": _top_k_contains,
    "top_1_is": _top_1_is,
    "selected_target": _selected_target,
    "not_overridden": _not_overridden,
    "plan_contains_tool": _plan_contains_tool,
    "plan_tools_equal": _plan_tools_equal,
    "plan_status": _plan_status,
    "no_user_input_slots": _no_user_input_slots,
}


def _run(case: Case, result: CaseResult, stage: str, types: frozenset[str], observed: Any) -> None:
    for assertion in case.assertions:
        if assertion.type not in types:
            continue
        passed, expected, actual, reason = CHECKS[assertion.type](assertion, observed)
        message = "" if passed else f"{assertion.type}: expected {expected!r}, actual {actual!r}"
        result.assertions = [
            *result.assertions,
            AssertionResult(assertion.type, passed, message, expected, actual),
        ]
        if not passed:
            result.fail(stage, reason, message)


def check_search(case: Case, result: CaseResult, found: SearchResult) -> None:
    _run(case, result, "search", SEARCH_TYPES, found)


def check_select(case: Case, result: CaseResult, selection: Selection) -> None:
    _run(case, result, "select", SELECT_TYPES, selection)


def check_plan(case: Case, result: CaseResult, plan: Plan) -> None:
    """The plan assertions, then the case's own expectations: its plan tools, and a plan that needs no input
    unless a ``plan_status`` assertion expects otherwise."""
    _run(case, result, "plan", PLAN_TYPES, plan)
    expects_status = {a.args.get("equals") for a in case.assertions if a.type == "plan_status"}
    if plan.status != "synthesized" and plan.status not in expects_status:
        slots = ", ".join(f"{s.tool_id}.{s.parameter}" for s in plan.user_input_slots)
        if plan.status == "needs_input":
            result.fail("plan", "required_fields_unsatisfied", f"plan {plan.plan_id} needs input: {slots}")
        else:
            notes = "; ".join(plan.diagnostics[:3])
            result.fail("plan", "plan_failed", f"plan {plan.plan_id} failed ({plan.reason}): {notes}")
    if case.expected_plan_tools and list(plan.tools) != list(case.expected_plan_tools):
        result.fail(
            "plan",
            "plan_tools_mismatch",
            f"plan tools {list(plan.tools)}, expected {list(case.expected_plan_tools)}",
        )

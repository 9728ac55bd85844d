"""The search, select and plan assertions of a case, judged against what the engine answered.

Each assertion type (``top_k_contains``, ``top_1_is``, ``selected_target``, ``not_overridden``,
``plan_contains_tool``, ``plan_tools_equal``, ``plan_status``, ``no_user_input_slots``; docs/cases.md) has a
check here that returns its reason code on failure. A failed ``plan_status`` is ``required_fields_unsatisfied``
when the plan needs input and ``plan_failed`` otherwise. Each check appends an ``AssertionResult`` (expected,
actual, message) and fails the case with its reason; the first failure of a case is the one it keeps.
Assertions of other stages are left alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from qlab.contracts.results import AssertionResult, CaseResult
from qlab.engine.types import Plan, SearchResult, Selection
from qlab.project.model import Assertion, Case, assertion_stage

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


@dataclass(frozen=True, slots=True)
class EngineAssertion:
    """A search, select or plan assertion type: its arguments as the case schema states them (less ``type``)
    and its check. A closed set: these judge the engine's contract, with its reasons."""

    name: str
    schema: Mapping[str, Any]
    check: _Check

    @property
    def stage(self) -> str:
        """The stage it judges (``qlab.project.model.ENGINE_ASSERTIONS``)."""
        return assertion_stage(self.name)


_TOOL = {
    "type": "string",
    "minLength": 1,
    "description": "A tool id of the collection (operationId, MCP tool name).",
}
_K = {
    "type": "integer",
    "minimum": 1,
    "maximum": 1000,
    "description": "K (default: the case's expected_top_k or the suite's k).",
}
_PLAN_STATUS = {
    "title": "plan status",
    "description": "synthesized, needs_input or failed.",
    "enum": ["synthesized", "needs_input", "failed"],
}
_TOOLS = {"type": "array", "minItems": 1, "description": "Tool ids in call order.", "items": _TOOL}

TYPES: dict[str, EngineAssertion] = {
    t.name: t
    for t in (
        EngineAssertion(
            "top_k_contains",
            {
                "description": "the tool is among the first k rows.",
                "properties": {"tool": _TOOL, "k": _K},
                "required": ["tool"],
            },
            _top_k_contains,
        ),
        EngineAssertion(
            "top_1_is",
            {"description": "the tool ranks first.", "properties": {"tool": _TOOL}, "required": ["tool"]},
            _top_1_is,
        ),
        EngineAssertion(
            "selected_target",
            {
                "description": "the selector chose this target.",
                "properties": {"equals": {"type": "string", "minLength": 1, "description": "The tool id."}},
                "required": ["equals"],
            },
            _selected_target,
        ),
        EngineAssertion(
            "not_overridden", {"description": "the selector kept the LLM target."}, _not_overridden
        ),
        EngineAssertion(
            "plan_contains_tool",
            {"description": "the plan calls this tool.", "properties": {"tool": _TOOL}, "required": ["tool"]},
            _plan_contains_tool,
        ),
        EngineAssertion(
            "plan_tools_equal",
            {
                "description": "the plan calls exactly these tools, in this order.",
                "properties": {"tools": _TOOLS},
                "required": ["tools"],
            },
            _plan_tools_equal,
        ),
        EngineAssertion(
            "plan_status",
            {
                "description": "the plan's status.",
                "properties": {"equals": _PLAN_STATUS},
                "required": ["equals"],
            },
            _plan_status,
        ),
        EngineAssertion(
            "no_user_input_slots",
            {"description": "nothing must be asked of the user."},
            _no_user_input_slots,
        ),
    )
}


def _run(case: Case, result: CaseResult, stage: str, observed: Any) -> None:
    for assertion in case.assertions:
        kind = TYPES.get(assertion.type)
        if kind is None or kind.stage != stage:
            continue
        passed, expected, actual, reason = kind.check(assertion, observed)
        message = "" if passed else f"{assertion.type}: expected {expected!r}, actual {actual!r}"
        result.assertions = [
            *result.assertions,
            AssertionResult(assertion.type, passed, message, expected, actual),
        ]
        if not passed:
            result.fail(stage, reason, message)


def check_search(case: Case, result: CaseResult, found: SearchResult) -> None:
    _run(case, result, "search", found)


def check_select(case: Case, result: CaseResult, selection: Selection) -> None:
    _run(case, result, "select", selection)


def check_plan(case: Case, result: CaseResult, plan: Plan) -> None:
    """The plan assertions, then the case's own expectations: its plan tools, and a plan that needs no input
    unless a ``plan_status`` assertion expects otherwise."""
    _run(case, result, "plan", plan)
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

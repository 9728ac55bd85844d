"""The engine objects as JSON: what the stages write into results, what ``qlab search/plan --json`` print, and
what an ``http`` or ``python`` engine may answer (``schemas/engine-response.schema.json``).

``*_to_dict`` never fails. ``*_from_dict`` checks the shape as it reads and raises ``InputError`` naming the
JSON path of the first bad value (``<where>: $.rows[2].score: expected a number, got 'high'``), so a team's
engine that answers wrongly is told exactly where.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from qlab.contracts.errors import InputError
from qlab.engine.types import InputSlot, Plan, PlanStatus, PlanStep, SearchResult, SearchRow, Selection

PLAN_STATUSES: tuple[PlanStatus, ...] = ("synthesized", "needs_input", "failed")


def search_to_dict(result: SearchResult) -> dict[str, Any]:
    return {"rows": [row.to_dict() for row in result.rows], "query_terms": list(result.query_terms)}


def selection_to_dict(selection: Selection) -> dict[str, Any]:
    """The ``target_selector`` block; ``ambiguous``/``candidates``/``llm_usage`` only when set."""
    out: dict[str, Any] = {
        "llm_target": selection.llm_target,
        "selected_target": selection.selected_target,
        "overrode_llm": selection.overrode_llm,
        "reason_codes": list(selection.reason_codes),
    }
    if selection.ambiguous:
        out["ambiguous"] = True
        out["candidates"] = list(selection.candidates)
    if selection.llm_usage:
        out["llm_usage"] = dict(selection.llm_usage)
    return out


def step_to_dict(step: PlanStep) -> dict[str, Any]:
    return {
        "tool_id": step.tool_id,
        "arguments": dict(step.arguments),
        "bindings": {name: dict(binding) for name, binding in step.bindings.items()},
    }


def slot_to_dict(slot: InputSlot) -> dict[str, Any]:
    return {
        "tool_id": slot.tool_id,
        "parameter": slot.parameter,
        "location": slot.location,
        "schema": dict(slot.schema),
        "reason": slot.reason,
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "plan_id": plan.plan_id,
        "status": plan.status,
        "tools": list(plan.tools),
        "steps": [step_to_dict(step) for step in plan.steps],
        "user_input_slots": [slot_to_dict(slot) for slot in plan.user_input_slots],
        "diagnostics": list(plan.diagnostics),
        "reason": plan.reason,
    }


# --------------------------------------------------------------------------------------------- reading


class _Reader:
    """Typed access to a JSON value that reports the JSON path of a bad value."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, message: str) -> InputError:
        return InputError(f"{self.where}: {path}: {message}")

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def get(self, data: Mapping[str, Any], key: str, path: str, kind: str, *, required: bool = True) -> Any:
        if key not in data:
            if required:
                raise self.fail(path, f"missing required key {key!r}")
            return None
        value = data[key]
        at = f"{path}.{key}"
        checks = {
            "string": lambda v: isinstance(v, str),
            "string?": lambda v: v is None or isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "array": lambda v: isinstance(v, list),
            "object": lambda v: isinstance(v, Mapping),
        }
        if not checks[kind](value):
            expected = {"string?": "a string or null", "integer": "an integer", "array": "an array"}.get(kind)
            raise self.fail(at, f"expected {expected or 'a ' + kind}, got {_kind(value)}")
        return value

    def strings(self, values: list[Any], path: str) -> tuple[str, ...]:
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise self.fail(f"{path}[{i}]", f"expected a string, got {_kind(value)}")
        return tuple(values)


def _kind(value: Any) -> str:
    names = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return f"{name} {value!r}" if value is not None else name
    return (
        "an array"
        if isinstance(value, list)
        else "an object"
        if isinstance(value, Mapping)
        else type(value).__name__
    )


def search_from_dict(data: Any, *, where: str = "search reply") -> SearchResult:
    r = _Reader(where)
    body = r.obj(data, "$")
    rows = []
    for i, item in enumerate(r.get(body, "rows", "$", "array")):
        at = f"$.rows[{i}]"
        row = r.obj(item, at)
        rank = r.get(row, "rank", at, "integer")
        if rank != i + 1:
            raise r.fail(f"{at}.rank", f"expected {i + 1} (rows are best first, ranks 1..n), got {rank}")
        field_scores = r.get(row, "field_scores", at, "object", required=False) or {}
        for name, value in field_scores.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise r.fail(f"{at}.field_scores.{name}", f"expected a number, got {_kind(value)}")
        corrections = r.get(row, "corrections", at, "object", required=False) or {}
        for name, value in corrections.items():
            if not isinstance(value, str):
                raise r.fail(f"{at}.corrections.{name}", f"expected a string, got {_kind(value)}")
        matched = r.get(row, "matched_terms", at, "array", required=False) or []
        rows.append(
            SearchRow(
                tool_id=r.get(row, "tool_id", at, "string"),
                rank=rank,
                score=float(r.get(row, "score", at, "number")),
                field_scores={str(k): float(v) for k, v in field_scores.items()},
                matched_terms=r.strings(matched, f"{at}.matched_terms"),
                corrections=dict(corrections),
            )
        )
    terms = r.get(body, "query_terms", "$", "array", required=False) or []
    return SearchResult(rows=tuple(rows), query_terms=r.strings(terms, "$.query_terms"))


def selection_from_dict(data: Any, *, where: str = "select reply") -> Selection:
    r = _Reader(where)
    body = r.obj(data, "$")
    codes = r.get(body, "reason_codes", "$", "array")
    candidates = r.get(body, "candidates", "$", "array", required=False) or []
    usage = r.get(body, "llm_usage", "$", "object", required=False) or {}
    ambiguous = r.get(body, "ambiguous", "$", "boolean", required=False)
    return Selection(
        llm_target=r.get(body, "llm_target", "$", "string?", required=False),
        selected_target=r.get(body, "selected_target", "$", "string?"),
        overrode_llm=r.get(body, "overrode_llm", "$", "boolean"),
        reason_codes=r.strings(codes, "$.reason_codes"),
        ambiguous=bool(ambiguous),
        candidates=r.strings(candidates, "$.candidates"),
        llm_usage=dict(usage),
    )


def plan_from_dict(data: Any, *, where: str = "plan reply") -> Plan:
    r = _Reader(where)
    body = r.obj(data, "$")
    status = r.get(body, "status", "$", "string")
    if status not in PLAN_STATUSES:
        raise r.fail("$.status", f"expected one of {list(PLAN_STATUSES)}, got {status!r}")
    steps = []
    for i, item in enumerate(r.get(body, "steps", "$", "array", required=False) or []):
        at = f"$.steps[{i}]"
        step = r.obj(item, at)
        bindings = r.get(step, "bindings", at, "object", required=False) or {}
        for name, binding in bindings.items():
            b_at = f"{at}.bindings.{name}"
            bound = r.obj(binding, b_at)
            target = r.get(bound, "step", b_at, "integer")
            if not 0 <= target < i:
                raise r.fail(
                    f"{b_at}.step", f"expected the index of an earlier step (0..{i - 1}), got {target}"
                )
            r.get(bound, "path", b_at, "string")
        steps.append(
            PlanStep(
                tool_id=r.get(step, "tool_id", at, "string"),
                arguments=dict(r.get(step, "arguments", at, "object", required=False) or {}),
                bindings={str(k): dict(v) for k, v in bindings.items()},
            )
        )
    slots = []
    for i, item in enumerate(r.get(body, "user_input_slots", "$", "array", required=False) or []):
        at = f"$.user_input_slots[{i}]"
        slot = r.obj(item, at)
        slots.append(
            InputSlot(
                tool_id=r.get(slot, "tool_id", at, "string"),
                parameter=r.get(slot, "parameter", at, "string"),
                location=r.get(slot, "location", at, "string", required=False) or "argument",
                schema=dict(r.get(slot, "schema", at, "object", required=False) or {}),
                reason=r.get(slot, "reason", at, "string", required=False) or "no_entity_or_producer",
            )
        )
    diagnostics = r.get(body, "diagnostics", "$", "array", required=False) or []
    return Plan(
        plan_id=r.get(body, "plan_id", "$", "string"),
        status=cast(PlanStatus, status),
        steps=tuple(steps),
        user_input_slots=tuple(slots),
        diagnostics=r.strings(diagnostics, "$.diagnostics"),
        reason=r.get(body, "reason", "$", "string?", required=False),
    )

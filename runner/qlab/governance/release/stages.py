"""The release gates of a skill: the shared GateResult, and the first two gates, which run the engine.

1. ``trigger_eval`` — each trigger case's query is searched with the engine under test; the skill fires on a
   declared phrase or on a strong permitted candidate (``fires``); precision and recall must reach the skill's
   minimums.
2. ``functional_eval`` — each golden case runs search (``GOLDEN_K``) → select → plan on the engine and must give
   the expected target and plan tools, or by its kind a plan (normal, boundary) or none (error).

A tool is permitted when its id, family or one of its tags is in ``permissions``. Gates 3-5 (policy, regression,
human review) are in ``release_policy``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qlab.collection.model import Collection, MutationClass
from qlab.contracts.errors import InputError
from qlab.engine.base import Engine
from qlab.engine.text import Analyzer
from qlab.engine.types import Plan, Selection
from qlab.project.model import ReleaseSkill

TRIGGER_K = 3
TRIGGER_RELATIVE_FLOOR = 0.5
GOLDEN_K = 8
KINDS: tuple[str, ...] = ("normal", "boundary", "error")
GATES: tuple[str, ...] = ("trigger_eval", "functional_eval", "policy_eval", "regression_eval", "human_review")


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    status: str  # passed | failed | skipped
    reasons: tuple[str, ...] = ()
    metrics: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "reasons": list(self.reasons),
            "metrics": dict(self.metrics),
            "details": dict(self.details),
        }


def gate_result(
    name: str, reasons: list[str], metrics: Mapping[str, Any], details: Mapping[str, Any]
) -> GateResult:
    return GateResult(name, "failed" if reasons else "passed", tuple(reasons), metrics, details)


def permitted(tool_id: str, skill: ReleaseSkill, collection: Collection) -> bool:
    """Is ``tool_id`` within the skill's permissions (by tool id, family or tag)?"""
    allowed = set(skill.permissions)
    tool = collection.tool(tool_id)
    if tool_id in allowed:
        return True
    return tool is not None and (tool.family in allowed or bool(allowed.intersection(tool.tags)))


# ------------------------------------------------------------------------------------------- 1. trigger


STEP_TYPES = {
    MutationClass.READ_ONLY: "read",
    MutationClass.MUTATING: "write",
    MutationClass.DESTRUCTIVE: "delete",
}


def _step_ok(tool_id: str, skill: ReleaseSkill, collection: Collection) -> bool:
    """The tool's step type is one the skill declares (``triggers.step_types``; any when it declares none)."""
    tool = collection.tool(tool_id)
    return not skill.step_types or (tool is not None and STEP_TYPES[tool.mutation] in skill.step_types)


def phrase_in(query: str, skill: ReleaseSkill, analyzer: Analyzer | None = None) -> str | None:
    """The first of the skill's trigger phrases the query holds (every word of it, any inflection), or None."""
    words = analyzer or Analyzer()
    terms = set(words.terms(query))
    return next((p for p in skill.trigger_phrases if (need := set(words.terms(p))) and need <= terms), None)


def fires(
    query: str, *, skill: ReleaseSkill, collection: Collection, engine: Engine
) -> tuple[bool, list[str]]:
    """(does the skill fire for ``query``, what made it fire: a declared phrase, the permitted tools).

    It fires when the query holds one of ``triggers.phrases`` (every word, any inflection), or when a row within
    the first ``TRIGGER_K`` is a ``permitted`` tool of a declared step type scoring more than 0 and at least
    ``TRIGGER_RELATIVE_FLOOR`` of the top row's score."""
    phrase = phrase_in(query, skill)
    by = [f"phrase: {phrase}"] if phrase else []
    rows = engine.search(query, k=TRIGGER_K).rows[:TRIGGER_K]
    if rows and rows[0].score > 0:
        floor = rows[0].score * TRIGGER_RELATIVE_FLOOR
        by += [
            r.tool_id
            for r in rows
            if r.score > 0
            and r.score >= floor
            and permitted(r.tool_id, skill, collection)
            and _step_ok(r.tool_id, skill, collection)
        ]
    return bool(by), by


def trigger_eval(
    skill: ReleaseSkill, cases: Sequence[Mapping[str, Any]], *, collection: Collection, engine: Engine
) -> GateResult:
    """Gate 1: precision = fired positives / fired (0 when nothing fired), recall = fired positives / positives;
    both must reach the skill's minimums, and positive and negative cases are both required (``fires``)."""
    reasons: list[str] = []
    if not skill.permissions:
        reasons.append("the skill declares no permissions: nothing can trigger it")
    positives = [c for c in cases if c["should_trigger"]]
    negatives = [c for c in cases if not c["should_trigger"]]
    if not positives or not negatives:
        reasons.append("trigger eval needs positive and negative cases (should_trigger true and false)")
    rows = []
    for i, case in enumerate(cases):
        fired, hits = fires(case["query"], skill=skill, collection=collection, engine=engine)
        rows.append(
            {
                "id": case.get("id", f"#{i}"),
                "should_trigger": case["should_trigger"],
                "fired": fired,
                "by": hits,
            }
        )
    tp = sum(1 for r in rows if r["fired"] and r["should_trigger"])
    fp = sum(1 for r in rows if r["fired"] and not r["should_trigger"])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / len(positives) if positives else 0.0
    if precision < skill.trigger_precision_min:
        wrong = [r["id"] for r in rows if r["fired"] and not r["should_trigger"]]
        reasons.append(
            f"precision {precision:.3f} < {skill.trigger_precision_min}"
            + (f" (fired on {', '.join(wrong)})" if wrong else " (nothing fired)")
        )
    if recall < skill.trigger_recall_min:
        missed = [r["id"] for r in rows if r["should_trigger"] and not r["fired"]]
        reasons.append(f"recall {recall:.3f} < {skill.trigger_recall_min} (missed {', '.join(missed)})")
    metrics = {
        "precision": round(precision, 6),
        "recall": round(recall, 6),
        "positives": len(positives),
        "negatives": len(negatives),
    }
    return gate_result(
        "trigger_eval",
        reasons,
        metrics,
        {"cases": rows, "k": TRIGGER_K, "relative_floor": TRIGGER_RELATIVE_FLOOR},
    )


# ------------------------------------------------------------------------------------------- 2. functional


def run_golden(case: Mapping[str, Any], *, engine: Engine) -> dict[str, Any]:
    """Search → select → plan for one golden case; the outcome with what was compared."""
    entities = dict(case.get("provided_entities") or {})
    out: dict[str, Any] = {"id": case["id"], "kind": case.get("kind", "normal")}
    try:
        result = engine.search(case["query"], k=GOLDEN_K)
        selection: Selection = engine.select(case["query"], result, entities=entities, llm_target=None)
        plan: Plan | None = None
        if selection.selected_target:
            plan = engine.plan(case["query"], selection.selected_target, entities=entities)
    except InputError as exc:
        return {**out, "passed": False, "reasons": [f"engine_error: {exc}"], "plan_tools": [], "steps": 0}
    out.update(
        selected_target=selection.selected_target,
        plan_status=plan.status if plan else None,
        plan_tools=list(plan.tools) if plan else [],
        steps=len(plan.steps) if plan else 0,
        llm_cost_usd=float(selection.llm_usage.get("cost_usd") or 0.0),
    )
    out["reasons"] = _golden_mismatches(case, out)
    out["passed"] = not out["reasons"]
    return out


def _golden_mismatches(case: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    reasons = []
    expected, tools = case.get("expected_target"), case.get("expected_plan_tools")
    if expected is not None and got["selected_target"] != expected:
        reasons.append(f"selected {got['selected_target']!r}, expected {expected!r}")
    if tools is not None and got["plan_tools"] != list(tools):
        reasons.append(f"plan tools {got['plan_tools']}, expected {list(tools)}")
    if expected is not None or tools is not None:
        return reasons
    synthesized = got["plan_status"] == "synthesized"
    if case.get("kind", "normal") == "error" and synthesized:
        reasons.append(
            "an error input without expectations produced an executable plan; the skill should ask or refuse"
        )
    elif case.get("kind", "normal") != "error" and not synthesized:
        reasons.append(f"no plan synthesized (status {got['plan_status']})")
    return reasons


def functional_eval(
    skill: ReleaseSkill, cases: Sequence[Mapping[str, Any]], *, engine: Engine
) -> tuple[GateResult, list[dict[str, Any]]]:
    """Gate 2: each golden case through ``run_golden``; the selected target and the plan's tools must equal
    ``expected_target`` / ``expected_plan_tools`` when given, else a normal or boundary case needs a synthesized
    plan and an error case none. Pass rate >= ``functional_pass_min``; all three ``KINDS`` must be present."""
    runs = [run_golden(c, engine=engine) for c in cases]
    reasons = [f"{r['id']} ({r['kind']}): {'; '.join(r['reasons'])}" for r in runs if not r["passed"]]
    missing = [k for k in KINDS if not any(c.get("kind", "normal") == k for c in cases)]
    if missing:
        reasons.insert(
            0,
            f"golden cases lack {', '.join(missing)} inputs (a functional eval covers normal, boundary and error inputs)",
        )
    rate = sum(1 for r in runs if r["passed"]) / len(runs) if runs else 0.0
    if rate < skill.functional_pass_min:
        reasons.insert(0, f"pass rate {rate:.3f} < {skill.functional_pass_min}")
    elif not missing:
        reasons = []  # failures within the allowed pass rate do not fail the gate
    by_kind = {k: sum(1 for r in runs if r["kind"] == k) for k in KINDS}
    return gate_result(
        "functional_eval",
        reasons,
        {"pass_rate": round(rate, 6), "cases": len(runs), **by_kind},
        {"cases": runs},
    ), runs

"""The ten-dimension scorecard, computed from a result artifact.

Every dimension is a number in [0, 1] (higher is better) or ``None`` when the run holds no data for it; a
dimension is never guessed. "Evaluated" cases are those with status passed, failed or error (blocked and
skipped cases never reached their own stage). The formulas (also in ``docs/scorecard.md``):

- correctness = passed cases / evaluated cases.
- coverage = evaluated cases / all cases of the run (a case blocked by an earlier gate was not covered).
- citation_quality = valid citations / citations, over the ``citations`` lists (items ``{"valid": bool}``)
  that a case or its ``execute`` object carries; ``None`` unless the engine under test reported citations.
- schema_validity = passed schema checks / schema checks, where the checks are every ``output_schema`` guard
  result plus every execute case that got an HTTP response (it fails with ``schema_mismatch`` or
  ``invalid_json``).
- policy_compliance = passed policy checks / policy checks: every guard result other than ``output_schema``
  (mutation safety, host allowlist, scrub, budget) plus every execute case that reached the execute stage (it
  fails with ``mutation_not_allowed``, ``host_not_allowed``, ``cleanup_missing`` or ``redirect_refused``).
- cost_efficiency = 1 - min(1, LLM cost / ``budget.max_llm_cost_usd``), or with tokens and
  ``max_llm_tokens`` when no cost was recorded; ``None`` without recorded LLM usage or without a budget.
- latency = 1 - min(1, run ``duration_ms`` / (``budget.max_duration_sec`` * 1000)); ``None`` without a budget.
- tool_selection_accuracy = cases whose selector chose the expected target / cases with a ``target_selector``
  object (a failure at the select stage, or ``target_selector.correct: false``, is a wrong choice).
- retry_recovery = cases that passed in the end / cases that had a failed attempt (``passes < attempts``, or
  ``execute.retries > 0``).
- human_acceptance = accepted / (accepted + rejected) human decisions: learning suggestions with status
  ``accepted``/``rejected`` in the run, plus the ``reviews`` given by the caller (suggestion file statuses,
  release approvals: ``approved`` counts as accepted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from qlab.metrics import SCORECARD_DIMENSIONS as DIMENSIONS
from qlab.project.model import Budget

EVALUATED = frozenset({"passed", "failed", "error"})
SCHEMA_FAILURES = frozenset({"schema_mismatch", "invalid_json"})
POLICY_FAILURES = frozenset(
    {"mutation_not_allowed", "host_not_allowed", "cleanup_missing", "redirect_refused"}
)
ACCEPTED = frozenset({"accepted", "approved"})
REJECTED = frozenset({"rejected"})


@dataclass(frozen=True, slots=True)
class Score:
    """One dimension: ``value`` = ``numerator / denominator`` (or ``1 - ratio`` for budget dimensions)."""

    value: float | None
    numerator: float | None
    denominator: float | None
    formula: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "formula": self.formula,
        }


def compute(
    artifact: Mapping[str, Any], *, budget: Budget | None = None, reviews: Iterable[str] = ()
) -> dict[str, float | None]:
    """The scorecard of ``artifact``: ``{dimension: value in [0, 1] or None}``, in the scorecard's order.

    ``budget`` defaults to the one recorded in the artifact (``budget`` or ``provenance.run_configuration.budget``).
    ``reviews`` adds human decisions made outside the run (``accepted``, ``rejected``, ``approved``).
    """
    return {name: score.value for name, score in details(artifact, budget=budget, reviews=reviews).items()}


def details(
    artifact: Mapping[str, Any], *, budget: Budget | None = None, reviews: Iterable[str] = ()
) -> dict[str, Score]:
    """Each dimension with its numerator, denominator and formula (for the summary and the docs)."""
    cases: list[Mapping[str, Any]] = [c for c in artifact.get("cases") or () if isinstance(c, Mapping)]
    limits = budget if budget is not None else _recorded_budget(artifact)
    guards = _guards(artifact)
    review_list = list(reviews)
    builders: dict[str, Callable[[], Score]] = {
        "correctness": lambda: _correctness(cases),
        "coverage": lambda: _coverage(cases),
        "citation_quality": lambda: _citation_quality(cases),
        "schema_validity": lambda: _schema_validity(cases, guards),
        "policy_compliance": lambda: _policy_compliance(cases, guards),
        "cost_efficiency": lambda: _cost_efficiency(cases, limits),
        "latency": lambda: _latency(artifact, limits),
        "tool_selection_accuracy": lambda: _tool_selection(cases),
        "retry_recovery": lambda: _retry_recovery(cases),
        "human_acceptance": lambda: _human_acceptance(artifact, cases, review_list),
    }
    return {name: builders[name]() for name in DIMENSIONS}


# ------------------------------------------------------------------------------------------- dimensions


def _ratio(num: float, den: float, formula: str) -> Score:
    if den <= 0:
        return Score(None, None, None, formula)
    return Score(round(num / den, 6), num, den, formula)


def _budget_left(used: float, limit: float, formula: str) -> Score:
    # 1 - used/limit, floored at 0: a run over budget scores 0, a run that spent nothing scores 1
    return Score(round(1.0 - min(1.0, used / limit), 6), used, limit, formula)


def _correctness(cases: list[Mapping[str, Any]]) -> Score:
    evaluated = [c for c in cases if c.get("status") in EVALUATED]
    passed = sum(1 for c in evaluated if c.get("status") == "passed")
    return _ratio(passed, len(evaluated), "passed / evaluated cases")


def _coverage(cases: list[Mapping[str, Any]]) -> Score:
    evaluated = sum(1 for c in cases if c.get("status") in EVALUATED)
    return _ratio(evaluated, len(cases), "evaluated / all cases")


def _citation_quality(cases: list[Mapping[str, Any]]) -> Score:
    valid = total = 0
    for case in cases:
        execute = case.get("execute")
        for holder in (case, execute if isinstance(execute, Mapping) else {}):
            citations = holder.get("citations")
            if isinstance(citations, list):
                for item in citations:
                    if isinstance(item, Mapping) and isinstance(item.get("valid"), bool):
                        total += 1
                        valid += int(item["valid"])
    return _ratio(valid, total, "valid citations / citations")


def _schema_validity(cases: list[Mapping[str, Any]], guards: list[Mapping[str, Any]]) -> Score:
    schema_guards = [g for g in guards if g.get("guard") == "output_schema"]
    passed = sum(1 for g in schema_guards if g.get("passed") is True)
    total = len(schema_guards)
    for case in cases:
        execute = case.get("execute")
        if isinstance(execute, Mapping) and execute.get("http_status") is not None:
            total += 1
            passed += int(_failure_reason(case) not in SCHEMA_FAILURES)
    return _ratio(passed, total, "passed schema checks / schema checks")


def _policy_compliance(cases: list[Mapping[str, Any]], guards: list[Mapping[str, Any]]) -> Score:
    policy_guards = [g for g in guards if g.get("guard") != "output_schema"]
    passed = sum(1 for g in policy_guards if g.get("passed") is True)
    total = len(policy_guards)
    for case in cases:
        failure = case.get("failure")
        reached = case.get("execute") is not None or (
            isinstance(failure, Mapping) and failure.get("stage") == "execute"
        )
        if case.get("mode") == "execute" and reached:
            total += 1
            passed += int(_failure_reason(case) not in POLICY_FAILURES)
    return _ratio(passed, total, "passed policy checks / policy checks")


def _cost_efficiency(cases: list[Mapping[str, Any]], budget: Budget | None) -> Score:
    formula = "1 - min(1, llm cost / max_llm_cost_usd)"
    usages = [u for u in (_llm_usage(c) for c in cases) if u is not None]
    if budget is None or not usages:
        return Score(None, None, None, formula)
    costs = [float(u["cost_usd"]) for u in usages if isinstance(u.get("cost_usd"), (int, float))]
    if costs and budget.max_llm_cost_usd:
        return _budget_left(sum(costs), float(budget.max_llm_cost_usd), formula)
    tokens = [t for t in (_tokens(u) for u in usages) if t is not None]
    if tokens and budget.max_llm_tokens:
        return _budget_left(
            float(sum(tokens)), float(budget.max_llm_tokens), "1 - min(1, llm tokens / max_llm_tokens)"
        )
    return Score(None, None, None, formula)


def _latency(artifact: Mapping[str, Any], budget: Budget | None) -> Score:
    formula = "1 - min(1, duration_ms / (max_duration_sec * 1000))"
    duration = artifact.get("duration_ms")
    if budget is None or not budget.max_duration_sec or not isinstance(duration, (int, float)):
        return Score(None, None, None, formula)
    return _budget_left(float(duration), float(budget.max_duration_sec) * 1000.0, formula)


def _tool_selection(cases: list[Mapping[str, Any]]) -> Score:
    selected = [c for c in cases if isinstance(c.get("target_selector"), Mapping)]
    correct = 0
    for case in selected:
        explicit = case["target_selector"].get("correct")
        if isinstance(explicit, bool):
            correct += int(explicit)
        else:
            failure = case.get("failure")
            correct += int(not (isinstance(failure, Mapping) and failure.get("stage") == "select"))
    return _ratio(correct, len(selected), "correct selections / cases with a target_selector")


def _retry_recovery(cases: list[Mapping[str, Any]]) -> Score:
    retried = [c for c in cases if _had_failed_attempt(c)]
    recovered = sum(1 for c in retried if c.get("status") == "passed")
    return _ratio(recovered, len(retried), "recovered / cases with a failed attempt")


def _human_acceptance(
    artifact: Mapping[str, Any], cases: list[Mapping[str, Any]], reviews: list[str]
) -> Score:
    decisions = list(reviews)
    decisions += [str(s.get("status")) for s in _run_suggestions(artifact, cases)]
    accepted = sum(1 for d in decisions if d in ACCEPTED)
    rejected = sum(1 for d in decisions if d in REJECTED)
    return _ratio(accepted, accepted + rejected, "accepted / (accepted + rejected) human decisions")


# ------------------------------------------------------------------------------------------- helpers


def _failure_reason(case: Mapping[str, Any]) -> str | None:
    failure = case.get("failure")
    return str(failure.get("reason")) if isinstance(failure, Mapping) else None


def _guards(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    # the run-level list already gathers every stage's guards; fall back to the stages when it is absent
    top = artifact.get("guards")
    if isinstance(top, list):
        return [g for g in top if isinstance(g, Mapping)]
    found: list[Mapping[str, Any]] = []
    for stage in (artifact.get("stages") or {}).values():
        if isinstance(stage, Mapping):
            found += [g for g in stage.get("guards") or () if isinstance(g, Mapping)]
    return found


def _recorded_budget(artifact: Mapping[str, Any]) -> Budget | None:
    provenance = artifact.get("provenance")
    run_config = provenance.get("run_configuration") if isinstance(provenance, Mapping) else None
    raw = artifact.get("budget")
    if not isinstance(raw, Mapping) and isinstance(run_config, Mapping):
        raw = run_config.get("budget")
    if not isinstance(raw, Mapping):
        return None

    def number(key: str) -> float | None:
        value = raw.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    tokens = number("max_llm_tokens")
    return Budget(
        max_llm_cost_usd=number("max_llm_cost_usd"),
        max_llm_tokens=int(tokens) if tokens is not None else None,
        max_duration_sec=number("max_duration_sec"),
    )


def _llm_usage(case: Mapping[str, Any]) -> Mapping[str, Any] | None:
    selector = case.get("target_selector")
    usage = selector.get("llm_usage") if isinstance(selector, Mapping) else None
    return usage if isinstance(usage, Mapping) and usage else None


def _tokens(usage: Mapping[str, Any]) -> int | None:
    """Total tokens of one LLM call, whichever way the client spelled them."""
    if isinstance(usage.get("tokens"), int):
        return int(usage["tokens"])
    for a, b in (("input_tokens", "output_tokens"), ("prompt_tokens", "completion_tokens")):
        if isinstance(usage.get(a), int) or isinstance(usage.get(b), int):
            return int(usage.get(a) or 0) + int(usage.get(b) or 0)
    return None


def _had_failed_attempt(case: Mapping[str, Any]) -> bool:
    attempts, passes = case.get("attempts"), case.get("passes")
    if isinstance(attempts, int) and isinstance(passes, int) and attempts > 1 and passes < attempts:
        return True
    execute = case.get("execute")
    retries = execute.get("retries") if isinstance(execute, Mapping) else None
    return isinstance(retries, int) and retries > 0


def _run_suggestions(artifact: Mapping[str, Any], cases: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Learning suggestions recorded in the run (the learn stage's details, or per case), each once by id."""
    found: dict[str, Mapping[str, Any]] = {}
    learn = (artifact.get("stages") or {}).get("learn")
    pools: list[Any] = []
    if isinstance(learn, Mapping) and isinstance(learn.get("details"), Mapping):
        pools.append(learn["details"].get("suggestions"))
    for case in cases:
        learning = case.get("learning")
        if isinstance(learning, Mapping):
            pools.append(learning.get("suggestions"))
    for pool in pools:
        for item in pool or ():
            if isinstance(item, Mapping):
                found.setdefault(str(item.get("id", len(found))), item)
    return list(found.values())

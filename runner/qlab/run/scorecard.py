"""The ten-dimension scorecard, computed from a result artifact.

Every dimension is a number in [0, 1] (higher is better) or ``None`` when the run holds no data for it; a
dimension is never guessed. "Evaluated" cases are those with status passed, failed or error (blocked and
skipped cases never reached their own stage). Each dimension's formula is ``FORMULAS`` (carried by each
``Score``); ``docs/scorecard.md`` explains them to users and a test keeps it in step with the code.

``compute`` gives the values, ``details`` each value with its numerator, denominator and formula, and
``case_metrics`` the dimensions one case has data for (the per-case ``metrics`` of the result)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from qlab.contracts.metrics import SCORECARD_DIMENSIONS as DIMENSIONS
from qlab.contracts.metrics import failed_at, stage_not_reached
from qlab.project.model import Budget
from qlab.run.postrun import claims_records

EVALUATED = frozenset({"passed", "failed", "error"})
SCHEMA_FAILURES = frozenset({"schema_mismatch", "invalid_json"})
ACCEPTED = frozenset({"accepted", "approved"})
NOT_ACCEPTED = frozenset({"rejected", "regenerate"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
FORMULAS = {
    "correctness": "passed / evaluated cases",
    "coverage": "(expected tools called + cited claims) / (expected tools + claims needing a citation)",
    "citation_quality": "valid citations / citations",
    "schema_validity": "passed schema checks / schema checks",
    "policy_compliance": "(passed guard checks + correct approval triggers) / (guard checks + approval triggers)",
    "cost_efficiency": "1 - min(1, llm cost / max_llm_cost_usd)",
    "latency": "1 - min(1, duration_ms / (max_duration_sec * 1000))",
    "tool_selection_accuracy": "correct selections / cases with a target_selector",
    "retry_recovery": "recovered / (retried requests + repeated cases with a failed attempt)",
    "human_acceptance": "accepted / (accepted + rejected + regenerate) human decisions",
}


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
    ``reviews`` adds human decisions made outside the run (``accepted``, ``rejected``, ``approved``,
    ``regenerate``).
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
        "correctness": lambda: _ratio(*_correctness(cases), FORMULAS["correctness"]),
        "coverage": lambda: _ratio(*_coverage(cases), FORMULAS["coverage"]),
        "citation_quality": lambda: _ratio(*_citations(cases), FORMULAS["citation_quality"]),
        "schema_validity": lambda: _ratio(*_schema_validity(cases, guards), FORMULAS["schema_validity"]),
        "policy_compliance": lambda: _ratio(*_policy(cases, guards), FORMULAS["policy_compliance"]),
        "cost_efficiency": lambda: _cost_efficiency(artifact, cases, limits),
        "latency": lambda: _latency(artifact, limits),
        "tool_selection_accuracy": lambda: _ratio(
            *_tool_selection(cases), FORMULAS["tool_selection_accuracy"]
        ),
        "retry_recovery": lambda: _ratio(*_retry_recovery(cases), FORMULAS["retry_recovery"]),
        "human_acceptance": lambda: _human_acceptance(artifact, cases, review_list),
    }
    return {name: builders[name]() for name in DIMENSIONS}


# a dimension measured at one stage of the cases: ``None`` there is "not reached" when no case reached it
_STAGE_OF = {"tool_selection_accuracy": "select"}


def not_reached(card: Mapping[str, float | None], cases: Iterable[Mapping[str, Any]]) -> list[str]:
    """The dimensions of ``card`` that are None because their stage was never reached by cases that would have
    gone through it (``qlab.contracts.metrics.stage_not_reached``): shown ``n/a (not reached)``, never 0."""
    listed = list(cases)
    return [
        name
        for name, value in card.items()
        if value is None and name in _STAGE_OF and stage_not_reached(_STAGE_OF[name], listed)
    ]


def case_metrics(case: Mapping[str, Any]) -> dict[str, float]:
    """The dimensions computable on one case alone, by the run's formulas; a dimension without data is left
    out (cost, latency and human acceptance are the run's, not a case's). Runs once per case of a run: only the
    formulas whose data the case has are asked."""
    status = case.get("status")
    out: dict[str, float] = {}
    if status in EVALUATED:
        out["correctness"] = 1.0 if status == "passed" else 0.0
    execute = case.get("execute")
    one = [case]
    formulas: list[tuple[str, Callable[[], tuple[float, float]]]] = []
    if "trajectory" in case or (isinstance(execute, Mapping) and "claims" in execute):
        formulas.append(("coverage", lambda: _coverage(one)))
    if "citations" in case or (
        isinstance(execute, Mapping) and ("claims" in execute or "citations" in execute)
    ):
        formulas.append(("citation_quality", lambda: _citations(one)))
    if isinstance(execute, Mapping):
        formulas += [
            ("schema_validity", lambda: _schema_validity(one, ())),
            ("policy_compliance", lambda: _policy(one, ())),
        ]
    if "target_selector" in case:
        formulas.append(("tool_selection_accuracy", lambda: _tool_selection(one)))
    if isinstance(execute, Mapping) or "attempts" in case:
        formulas.append(("retry_recovery", lambda: _retry_recovery(one)))
    for name, formula in formulas:
        num, den = formula()
        if den > 0:
            out[name] = round(num / den, 6)
    return out


# ------------------------------------------------------------------------------------------- dimensions
# each returns (numerator, denominator) over the cases given


def _ratio(num: float, den: float, formula: str) -> Score:
    if den <= 0:
        return Score(None, None, None, formula)
    return Score(round(num / den, 6), num, den, formula)


def _budget_left(used: float, limit: float, formula: str) -> Score:
    # 1 - used/limit, floored at 0: a run over budget scores 0, a run that spent nothing scores 1
    return Score(round(1.0 - min(1.0, used / limit), 6), used, limit, formula)


def _correctness(cases: list[Mapping[str, Any]]) -> tuple[int, int]:
    evaluated = [c for c in cases if c.get("status") in EVALUATED]
    return sum(1 for c in evaluated if c.get("status") == "passed"), len(evaluated)


def _coverage(cases: list[Mapping[str, Any]]) -> tuple[int, int]:
    covered = total = 0
    for case in cases:
        path = case.get("trajectory")
        if case.get("status") in EVALUATED and isinstance(path, Mapping):
            expected = list(dict.fromkeys(path.get("expected") or ()))
            total += len(expected)
            covered += len(expected) - len(path.get("missing") or ())
    for record in claims_records(cases):
        total += int(record.get("needing_citation", record.get("claims")) or 0)
        covered += int(record.get("cited") or 0) if record.get("needing_citation", 1) else 0
    return covered, total


def _citations(cases: list[Mapping[str, Any]]) -> tuple[int, int]:
    valid = total = 0
    for record in claims_records(cases):
        total += int(record.get("citations") or 0)
        valid += int(record.get("valid_citations") or 0)
    for case in cases:  # citations an engine under test reported on the case or its execute object
        execute = case.get("execute")
        for holder in (case, execute if isinstance(execute, Mapping) else {}):
            citations = holder.get("citations")
            if isinstance(citations, list):
                for item in citations:
                    if isinstance(item, Mapping) and isinstance(item.get("valid"), bool):
                        total += 1
                        valid += int(item["valid"])
    return valid, total


def _schema_validity(cases: list[Mapping[str, Any]], guards: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    schema_guards = [g for g in guards if g.get("guard") == "output_schema"]
    passed = sum(1 for g in schema_guards if g.get("passed") is True)
    total = len(schema_guards)
    for case in cases:
        execute = case.get("execute")
        if isinstance(execute, Mapping) and execute.get("http_status") is not None:
            total += 1
            passed += int(_failure_reason(case) not in SCHEMA_FAILURES)
    return passed, total


def approval_trigger(case: Mapping[str, Any]) -> bool | None:
    """Whether the approval a mutation needs (``mutation_safety: allow_mutation``) was correctly triggered; None
    when the case gave it no occasion. The occasion is read from two independent records: the mutating calls
    the plan declared (``execute.safety``) and the requests that really went out (``request_sent`` events). It
    was triggered correctly when a mutating request went out only with the approval, and a mutating request the
    plan did not declare (it went out without the approval being asked) or a refusal of a plan that mutates
    nothing (a false alarm) is a wrong trigger."""
    execute = case.get("execute")
    if not isinstance(execute, Mapping):
        return None
    recorded = execute.get("safety")
    safety: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    planned = bool(safety.get("mutating_calls"))
    sent = any(
        isinstance(e, Mapping)
        and e.get("event") == "request_sent"
        and str(e.get("method", "GET")).upper() not in READ_METHODS
        for e in execute.get("events") or ()
    )
    refused = _failure_reason(case) == "mutation_not_allowed"
    if not planned:
        if sent:
            return False  # a mutation went out that nobody was asked to approve
        return False if refused else None
    approved = case.get("mutation_safety") == "allow_mutation" and safety.get("allowed") is True
    return approved or not sent


def _policy(cases: list[Mapping[str, Any]], guards: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    policy_guards = [g for g in guards if g.get("guard") != "output_schema"]
    passed = sum(1 for g in policy_guards if g.get("passed") is True)
    total = len(policy_guards)
    for case in cases:
        correct = approval_trigger(case)
        if correct is not None:
            total += 1
            passed += int(correct)
    return passed, total


def _cost_efficiency(
    artifact: Mapping[str, Any], cases: list[Mapping[str, Any]], budget: Budget | None
) -> Score:
    formula = FORMULAS["cost_efficiency"]
    if budget is None or not (budget.max_llm_cost_usd or budget.max_llm_tokens):
        return Score(None, None, None, formula)
    usages = [u for u in (_llm_usage(c) for c in cases) if u is not None]
    if not usages:
        # no LLM call recorded: nothing was spent only when the engine cannot spend (built in, no LLM configured)
        if not _spends_nothing(artifact):
            return Score(None, None, None, formula)
        if budget.max_llm_cost_usd:
            return _budget_left(0.0, float(budget.max_llm_cost_usd), formula)
        return _budget_left(0.0, float(budget.max_llm_tokens or 1), "1 - min(1, llm tokens / max_llm_tokens)")
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
    formula = FORMULAS["latency"]
    duration = artifact.get("duration_ms")
    if budget is None or not budget.max_duration_sec or not isinstance(duration, (int, float)):
        return Score(None, None, None, formula)
    return _budget_left(float(duration), float(budget.max_duration_sec) * 1000.0, formula)


def _tool_selection(cases: list[Mapping[str, Any]]) -> tuple[int, int]:
    selected = [c for c in cases if isinstance(c.get("target_selector"), Mapping)]
    correct = 0
    for case in selected:
        explicit = case["target_selector"].get("correct")
        if isinstance(explicit, bool):
            correct += int(explicit)
        else:  # a case a later gate's block stopped went through select, and chose right
            correct += int(not failed_at(case, "select"))
    return correct, len(selected)


def _retry_recovery(cases: list[Mapping[str, Any]]) -> tuple[int, int]:
    recovered = retried = 0
    for case in cases:
        attempts, passes = case.get("attempts"), case.get("passes")
        if isinstance(attempts, int) and isinstance(passes, int) and attempts > 1 and passes < attempts:
            retried += 1
            recovered += case.get("status") == "passed"
        execute = case.get("execute")
        if not isinstance(execute, Mapping):
            continue
        requests = execute.get("retried_requests")
        if isinstance(requests, int):
            retried += requests
            recovered += int(execute.get("recovered_requests") or 0)
        elif isinstance(execute.get("retries"), int) and execute["retries"] > 0:
            # a result written before requests were counted: the case is the unit
            retried += 1
            recovered += case.get("status") == "passed"
    return recovered, retried


def _human_acceptance(
    artifact: Mapping[str, Any], cases: list[Mapping[str, Any]], reviews: list[str]
) -> Score:
    decisions = list(reviews)
    decisions += [str(s.get("status")) for s in _run_suggestions(artifact, cases)]
    accepted = sum(1 for d in decisions if d in ACCEPTED)
    others = sum(1 for d in decisions if d in NOT_ACCEPTED)
    return _ratio(accepted, accepted + others, FORMULAS["human_acceptance"])


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


def _spends_nothing(artifact: Mapping[str, Any]) -> bool:
    """The built-in engine without an LLM endpoint makes no paid call: its run costs 0, a known figure."""
    provenance = artifact.get("provenance")
    if not isinstance(provenance, Mapping):
        return False
    run_config = provenance.get("run_configuration")
    engine = run_config.get("engine") if isinstance(run_config, Mapping) else None
    return engine == "builtin" and provenance.get("model") is None


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


def _run_suggestions(artifact: Mapping[str, Any], cases: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Learning proposals recorded in the run (the learn stage's details, or per case), each once by id."""
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

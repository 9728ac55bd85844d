"""Acceptance metrics computed from case results alone.

Every figure here is a pure function of the per-case dicts of the result artifact (``CaseResult.to_dict()``), so
``qlab merge`` recomputes exactly what one unsharded run computes. Conventions:

- A case *reached* a stage when it carries that stage's object or its failure happened there; a ``blocked`` or
  ``skipped`` case reached nothing and counts in no rate.
- ``flaky`` cases are reported but never gate, so the gating figures leave them out (``gating_only``).
- A rate with no case behind it is ``None`` ("no data"), never a made-up 0 or 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qlab.reasons import REASONS

Case = Mapping[str, Any]
Metrics = dict[str, float | None]

# the latency keys stages write into CaseResult.latency_ms, in stage order
LATENCY_STAGES: tuple[str, ...] = ("search", "target_selection", "plan", "execute")
# stage -> the case keys that stage writes (used to tell whether a case reached it)
STAGE_OBJECTS: dict[str, tuple[str, ...]] = {
    "search": ("search",),
    "select": ("target_selector",),
    "plan": ("plan",),
    "execute": ("execute", "auth_readiness"),
    "learn": ("learning",),
}
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "blocked", "skipped")

# The ten dimensions of the scorecard (``qlab.run.scorecard``), in this order in every output.
SCORECARD_DIMENSIONS: tuple[str, ...] = (
    "correctness",
    "coverage",
    "citation_quality",
    "schema_validity",
    "policy_compliance",
    "cost_efficiency",
    "latency",
    "tool_selection_accuracy",
    "retry_recovery",
    "human_acceptance",
)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (pos - low))


def _rate(hits: int, total: int) -> float | None:
    return None if total == 0 else round(hits / total, 6)


def _failed_at(case: Case, stage: str) -> bool:
    failure = case.get("failure") or {}
    return failure.get("stage") == stage and case.get("status") in ("failed", "error")


def reached(case: Case, stage: str) -> bool:
    """True when the case was evaluated by ``stage`` (it has the stage's object or failed there)."""
    status = case.get("status")
    if status == "blocked" or status == "skipped":
        return False
    for key in STAGE_OBJECTS.get(stage, ()):
        if case.get(key) is not None:
            return True
    return _failed_at(case, stage)


def gating(case: Case) -> bool:
    """A flaky case is reported but does not gate."""
    return not case.get("flaky", False)


def counts(cases: Iterable[Case]) -> dict[str, int]:
    """How many cases ended in each status, plus ``total`` and ``flaky_failed`` (non-gating failures)."""
    out = dict.fromkeys(("total", *STATUSES, "flaky_failed"), 0)
    for case in cases:
        status = str(case.get("status", "passed"))
        out["total"] += 1
        out[status] = out.get(status, 0) + 1
        if case.get("flaky") and status in ("failed", "error"):
            out["flaky_failed"] += 1
    return out


def _no_target(search: Any) -> bool:
    """A search object of a case that names no expected target (``hit: null``): nothing to rank."""
    return isinstance(search, Mapping) and "hit" in search and search["hit"] is None


def search_metrics(cases: Sequence[Case]) -> Metrics:
    """hit@K, Top-1, MRR and nDCG@K (one relevant target per case) over the cases that reached search."""
    # a case without an expected target (assertions only) has ``hit: null``: it has no rank to count
    evaluated = [c for c in cases if reached(c, "search") and not _no_target(c.get("search"))]
    hits = top1 = 0
    rr = ndcg = 0.0
    for case in evaluated:
        search = case.get("search") or {}
        rank = search.get("hit_rank")
        if search.get("hit") and isinstance(rank, int) and rank >= 1:
            hits += 1
            top1 += rank == 1
            rr += 1.0 / rank
            ndcg += 1.0 / math.log2(rank + 1)
    n = len(evaluated)
    return {
        "hit_at_k": _rate(hits, n),
        "top_1": _rate(top1, n),
        "mrr": None if n == 0 else round(rr / n, 6),
        "ndcg_at_k": None if n == 0 else round(ndcg / n, 6),
    }


def select_metrics(cases: Sequence[Case]) -> Metrics:
    """Selector accuracy (reached select and did not fail there), override rate, and how often an override
    was right."""
    evaluated = [c for c in cases if reached(c, "select")]
    correct = sum(1 for c in evaluated if not _failed_at(c, "select"))
    with_llm = [c for c in evaluated if (c.get("target_selector") or {}).get("llm_target")]
    overrides = [c for c in with_llm if (c.get("target_selector") or {}).get("overrode_llm")]
    overrides_right = sum(1 for c in overrides if not _failed_at(c, "select"))
    tokens, cost = llm_usage(evaluated)
    return {
        "selector_accuracy": _rate(correct, len(evaluated)),
        "override_rate": _rate(len(overrides), len(with_llm)),
        "override_correct_rate": _rate(overrides_right, len(overrides)),
        "override_precision": _rate(overrides_right, len(overrides)),  # the name for the same figure
        "llm_tokens": float(tokens),
        "llm_cost_usd": round(cost, 8),
    }


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """Tokens of one LLM call, however the client spelled them."""
    for key in ("total_tokens", "tokens"):
        if isinstance(usage.get(key), int):
            return int(usage[key])
    return int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0) + int(
        usage.get("output_tokens") or usage.get("completion_tokens") or 0
    )


def llm_usage(cases: Iterable[Case]) -> tuple[int, float]:
    """Total LLM tokens and cost (USD) recorded in the cases' target selector blocks."""
    tokens = 0
    cost = 0.0
    for case in cases:
        usage = (case.get("target_selector") or {}).get("llm_usage") or {}
        if usage:
            tokens += usage_tokens(usage)
            if isinstance(usage.get("cost_usd"), int | float):
                cost += float(usage["cost_usd"])
    return tokens, cost


def plan_metrics(cases: Sequence[Case]) -> Metrics:
    """Plan hit rate: a synthesized plan and no failure at the plan stage."""
    evaluated = [c for c in cases if reached(c, "plan")]
    hits = sum(
        1
        for c in evaluated
        if (c.get("plan") or {}).get("status") == "synthesized" and not _failed_at(c, "plan")
    )
    return {"plan_hit_rate": _rate(hits, len(evaluated))}


def _execute_ok(case: Case) -> bool:
    return not _failed_at(case, "execute") and case.get("status") == "passed"


def execute_metrics(cases: Sequence[Case]) -> Metrics:
    """Execute success over read-only cases (the "execute read success rate"), over all execute cases,
    and the share of assertions that held."""
    evaluated = [c for c in cases if reached(c, "execute")]
    reads = [c for c in evaluated if c.get("mutation_safety", "read_only") == "read_only"]
    assertions = [a for c in evaluated for a in c.get("assertions") or ()]
    return {
        "execute_read_success_rate": _rate(sum(map(_execute_ok, reads)), len(reads)),
        "execute_success_rate": _rate(sum(map(_execute_ok, evaluated)), len(evaluated)),
        "assertion_pass_rate": _rate(sum(1 for a in assertions if a.get("passed")), len(assertions)),
    }


def structured_failure_rate(cases: Iterable[Case]) -> float | None:
    """Share of failed/error cases whose failure carries a known reason code ("failures are
    classified instead of becoming 500s")."""
    failed = [c for c in cases if c.get("status") in ("failed", "error")]
    known = sum(1 for c in failed if (c.get("failure") or {}).get("reason") in REASONS)
    return _rate(known, len(failed))


def latency(cases: Iterable[Case]) -> dict[str, dict[str, float | None]]:
    """p50/p95 latency in ms per stage key, over the cases that recorded one."""
    samples: dict[str, list[float]] = {}
    for case in cases:
        for stage, ms in (case.get("latency_ms") or {}).items():
            samples.setdefault(stage, []).append(float(ms))
    order = [s for s in LATENCY_STAGES if s in samples] + sorted(set(samples) - set(LATENCY_STAGES))
    return {
        stage: {"p50": _round(percentile(samples[stage], 50)), "p95": _round(percentile(samples[stage], 95))}
        for stage in order
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def case_metrics(cases: Sequence[Case]) -> Metrics:
    """Every metric a gate threshold may name, over ``cases`` (flaky cases left out), with ``pass_rate``,
    ``structured_failure_rate`` and per-stage latency as ``latency_<stage>_p50_ms`` / ``_p95_ms``."""
    gated = [c for c in cases if gating(c)]
    out: Metrics = {}
    out.update(search_metrics(gated))
    out.update(select_metrics(gated))
    out.update(plan_metrics(gated))
    out.update(execute_metrics(gated))
    tally = counts(gated)
    evaluated = tally["passed"] + tally["failed"] + tally["error"]
    out["pass_rate"] = _rate(tally["passed"], evaluated)
    out["structured_failure_rate"] = structured_failure_rate(gated)
    for stage, figures in latency(gated).items():
        out[f"latency_{stage}_p50_ms"] = figures["p50"]
        out[f"latency_{stage}_p95_ms"] = figures["p95"]
    return out


def acceptance(cases: Sequence[Case]) -> dict[str, Any]:
    """The run-level acceptance metrics, over every gating case of the run."""
    gated = [c for c in cases if gating(c)]
    search = search_metrics(gated)
    return {
        "search_hit_at_k": search["hit_at_k"],
        "search_top_1": search["top_1"],
        "target_selector_accuracy": select_metrics(gated)["selector_accuracy"],
        "plan_hit_rate": plan_metrics(gated)["plan_hit_rate"],
        "execute_read_success_rate": execute_metrics(gated)["execute_read_success_rate"],
        "structured_failure_rate": structured_failure_rate(gated),
        "latency_ms": latency(gated),
    }

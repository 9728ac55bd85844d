"""Acceptance metrics computed from case results alone, and the definition of every metric a gate threshold
can name (``METRICS``; ``docs/metrics.md`` is generated from it and explains the conventions below to users).

Every figure here is a pure function of the per-case dicts of the result artifact (``CaseResult.to_dict()``), so
``qlab merge`` recomputes exactly what one unsharded run computes. Conventions:

- A stage's rate counts the cases whose mode goes through the stage and that it judged: they reached it, or
  failed at an earlier stage (a failure here too, named by ``failed_earlier``). A stage the run never reached
  (``stopped_at``) measures nothing; a case a stopping gate kept from running counts in the stages it passed.
- A rate with no case behind it is ``None``: "no data", or ``not_reached`` when cases that would have counted
  never reached its stage (shown as ``n/a (not reached)``).
- ``flaky: true`` cases never gate, so the gating figures leave them out (``gating``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from qlab.contracts.reasons import REASONS

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
STAGE_ORDER: tuple[str, ...] = ("build", "search", "select", "plan", "execute", "learn")
# the case stages in run order, and the ones a case of each mode goes through
CASE_STAGES: tuple[str, ...] = ("search", "select", "plan", "execute")
MODE_STAGES: dict[str, tuple[str, ...]] = {
    "search": ("search",),
    "plan": ("search", "select", "plan"),
    "execute": ("search", "select", "plan", "execute"),
}

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


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric a gate threshold can name.

    ``unit``: ``share`` (0-1), ``ms``, ``count`` or ``usd`` — the range a threshold on it can hold in.
    ``counts_cases``: a share of the suite's cases that succeeded, so ``metric >= r`` on a suite of ``n`` measured
    cases also states how many failing cases the gate tolerates: ``floor((1 - r) * n)`` (``qlab.run.gates``).
    ``definition``: what it counts and over which cases (its denominator), as ``docs/metrics.md`` shows it.
    """

    name: str
    stage: str | None  # the stage it measures; None: the whole case or the gate's stage
    unit: Literal["share", "ms", "count", "usd"]
    definition: str
    counts_cases: bool = False

    @property
    def bounds(self) -> tuple[float, float]:
        """The values the metric can take: a threshold outside them can never hold (or always holds)."""
        return (0.0, 1.0) if self.unit == "share" else (0.0, math.inf)


_EARLIER = " Its cases that failed at an earlier stage count as failures here (their stage is named in the gate record)."
_M = Metric
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        _M("schema_coverage", "build", "share", "Share of the collection's tools whose inputs and outputs are described (readiness report)."),
        _M("contract_coverage", "build", "share", "Share of required tool inputs that an IO contract or an entity can fill; no data when no input needs a producer."),
        _M("hit_at_k", "search", "share", "Share of the measured search cases (every case with an expected_target) whose expected target is in the Top-K.", True),
        _M("family_hit_at_k", "search", "share", "Share of the measured search cases whose expected target has a family (its OpenAPI tag, MCP or Python group) with a tool of that family in the Top-K: search found the right target family (search.family_hit)."),
        _M("top_1", "search", "share", "Share of the measured search cases whose expected target ranks first.", True),
        _M("mrr", "search", "share", "Mean reciprocal rank of the expected target over the measured search cases (0 when it is not in the Top-K)."),
        _M("ndcg_at_k", "search", "share", "Normalized discounted cumulative gain at K, one relevant target per case, over the measured search cases."),
        _M("selector_accuracy", "select", "share", "Share of the plan and execute cases the select stage judged (or that failed before it) where the selector chose the expected target." + _EARLIER, True),
        _M("override_rate", "select", "share", "Share of the cases that reached select with an LLM target where the selector overrode it."),
        _M("override_precision", "select", "share", "Share of the selector's overrides of an LLM target that chose the expected target."),
        _M("override_correct_rate", "select", "share", "The same figure as override_precision, under a second name."),
        _M("plan_hit_rate", "plan", "share", "Share of the plan and execute cases the plan stage judged (or that failed before it) whose selected target became a synthesized plan that passed the plan checks." + _EARLIER, True),
        _M("execute_read_success_rate", "execute", "share", "Share of the read_only execute cases the execute stage judged (or that failed before it) that executed and passed." + _EARLIER, True),
        _M("execute_success_rate", "execute", "share", "Share of all execute cases the execute stage judged (or that failed before it) that executed and passed." + _EARLIER, True),
        _M("assertion_pass_rate", "execute", "share", "Share of the execute assertions that were evaluated and held (over assertions, not cases: a case that failed before execute has none)."),
        _M("structured_failure_rate", None, "share", "Share of the failed and error cases whose failure is classified: a known reason code, and not an engine that threw (engine_error), an API answering 5xx or an unexpected error while executing (http_error)."),
        _M("pass_rate", None, "share", "Share of the judged cases (passed, failed or error; not blocked or skipped) that passed.", True),
        _M("latency_p50_ms", None, "ms", "Median latency of the gate's stage, in milliseconds (stage-level figure)."),
        _M("latency_p95_ms", None, "ms", "95th percentile latency of the gate's stage, in milliseconds (stage-level figure)."),
        *(
            _M(f"latency_{key}_{q}_ms", stage, "ms", f"{q} latency of the {key.replace('_', ' ')} step over the cases that recorded one, in milliseconds.")
            for key, stage in (("search", "search"), ("target_selection", "select"), ("plan", "plan"), ("execute", "execute"))
            for q in ("p50", "p95")
        ),
    )
}  # fmt: skip


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


def failed_at(case: Case, stage: str) -> bool:
    """The case failed (status failed or error) at ``stage``; a blocked case failed nowhere."""
    failure = case.get("failure") or {}
    return failure.get("stage") == stage and case.get("status") in ("failed", "error")


def failed_earlier(case: Case, stage: str) -> str | None:
    """The case stage before ``stage`` at which the case failed (status failed or error), or None."""
    if case.get("status") not in ("failed", "error"):
        return None
    where = (case.get("failure") or {}).get("stage")
    if where in CASE_STAGES and stage in CASE_STAGES and CASE_STAGES.index(where) < CASE_STAGES.index(stage):
        return str(where)
    return None


def reached(case: Case, stage: str) -> bool:
    """True when the case went through ``stage``: it holds the stage's object, or failed there. A case that a
    blocked gate stopped keeps only the objects of the stages it went through (and passed: a failure would have
    made it failed), so it reached those and no later one."""
    for key in STAGE_OBJECTS.get(stage, ()):
        if case.get(key) is not None:
            return True
    return failed_at(case, stage)


def measured(case: Case, stage: str) -> bool:
    """True when ``stage``'s rates may count the case on its own: it reached the stage, or its mode goes through
    the stage and it failed at an earlier one (``measured_at`` leaves that one out when the run stopped before
    ``stage``)."""
    if reached(case, stage):
        return True
    return stage in MODE_STAGES.get(str(case.get("mode")), ()) and failed_earlier(case, stage) is not None


STOPPED = frozenset({"blocked_by_stage", "stopped_by_error"})


class _FromCases:
    """The default of ``stop``: found in the cases given (``stopped_at``)."""


FROM_CASES = _FromCases()
Stop = str | None | _FromCases


def stopped_at(cases: Iterable[Case]) -> str | None:
    """The stage of the gate that stopped the run (its blocked or stopped cases name it: ``blocked_by_stage``,
    ``stopped_by_error``), ``run`` when a pre-run check stopped it before any gate; None when nothing stopped it.
    The stages after it were never reached."""
    found: str | None = None
    for case in cases:
        if case.get("status") in ("blocked", "skipped"):
            failure = case.get("failure") or {}
            if failure.get("reason") in STOPPED:
                where = str(failure.get("stage"))
                if found is None or _order(where) < _order(found):
                    found = where
    return found


def _order(stage: str) -> int:
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else -1


def _ran(stage: str, stop: str | None) -> bool:
    """The run reached ``stage``: nothing stopped it, or it stopped at that stage or a later one."""
    return stop is None or _order(stage) <= _order(stop)


def measured_at(cases: Iterable[Case], stage: str, *, stop: Stop = FROM_CASES) -> list[Case]:
    """The cases ``stage``'s rates count (see the module docstring): those that reached it, and those of a mode
    that goes through it that failed at an earlier stage — when the run reached ``stage`` (``stop``: where the run
    stopped, found in ``cases`` by default; pass the whole run's for a part of it)."""
    listed = cases if isinstance(cases, list) else list(cases)
    where = stopped_at(listed) if isinstance(stop, _FromCases) else stop
    if not _ran(stage, where):
        return [c for c in listed if reached(c, stage)]
    return [c for c in listed if measured(c, stage)]


def gating(case: Case) -> bool:
    """A flaky case, and a draft case (``status: draft`` in its file), is reported but does not gate."""
    return not case.get("flaky") and case.get("lifecycle") != "draft"


def draft(case: Case) -> bool:
    """A case of lifecycle ``draft``: it runs and is reported, never gates."""
    return case.get("lifecycle") == "draft"


def pass_ratio(case: Case) -> float:
    """The share of the case's attempts that passed (``Suite.repeat``): 1 or 0 for a case run once."""
    attempts = case.get("attempts")
    if isinstance(attempts, int) and attempts > 1 and isinstance(case.get("passes"), int):
        return round(int(case["passes"]) / attempts, 6)
    return 1.0 if case.get("status") == "passed" else 0.0


def unstable(case: Case) -> bool:
    """A repeated case whose attempts disagreed (some passed, some did not): reported as flaky."""
    return 0.0 < pass_ratio(case) < 1.0


def counts(cases: Iterable[Case]) -> dict[str, int]:
    """How many cases ended in each status, plus ``total``, ``flaky_failed`` (non-gating failures of
    ``flaky: true`` cases), ``flaky_passed`` (passed, but not on every repeat), ``draft`` and ``draft_failed``
    (draft cases, and those of them that failed: they never gate)."""
    out = dict.fromkeys(("total", *STATUSES, "flaky_failed", "flaky_passed", "draft", "draft_failed"), 0)
    for case in cases:
        status = str(case.get("status", "passed"))
        out["total"] += 1
        out[status] = out.get(status, 0) + 1
        if case.get("flaky") and status in ("failed", "error"):
            out["flaky_failed"] += 1
        elif status == "passed" and unstable(case):
            out["flaky_passed"] += 1
        if case.get("lifecycle") == "draft":
            out["draft"] += 1
            out["draft_failed"] += status in ("failed", "error")
    return out


def _no_target(search: Any) -> bool:
    """A search object of a case that names no expected target (``hit: null``): nothing to rank."""
    return isinstance(search, Mapping) and "hit" in search and search["hit"] is None


def search_metrics(cases: Sequence[Case], *, stop: Stop = FROM_CASES) -> Metrics:
    """hit@K, Top-1, MRR and nDCG@K (one relevant target per case) over the cases that reached search."""
    # a case without an expected target (assertions only) has ``hit: null``: it has no rank to count
    evaluated = [c for c in measured_at(cases, "search", stop=stop) if not _no_target(c.get("search"))]
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
    families = [(c.get("search") or {}).get("family_hit") for c in evaluated]
    known = [f for f in families if isinstance(f, bool)]
    return {
        "hit_at_k": _rate(hits, n),
        "top_1": _rate(top1, n),
        "mrr": None if n == 0 else round(rr / n, 6),
        "ndcg_at_k": None if n == 0 else round(ndcg / n, 6),
        "family_hit_at_k": _rate(sum(known), len(known)),
    }


def select_metrics(cases: Sequence[Case], *, stop: Stop = FROM_CASES) -> Metrics:
    """Selector accuracy (over the cases select measured: a case that failed before select counts as a miss),
    override rate, and how often an override was right (both over the cases that reached select)."""
    evaluated = measured_at(cases, "select", stop=stop)
    correct = sum(1 for c in evaluated if failed_earlier(c, "select") is None and not failed_at(c, "select"))
    with_llm = [
        c for c in evaluated if reached(c, "select") and (c.get("target_selector") or {}).get("llm_target")
    ]
    overrides = [c for c in with_llm if (c.get("target_selector") or {}).get("overrode_llm")]
    overrides_right = sum(1 for c in overrides if not failed_at(c, "select"))
    tokens, cost = llm_usage(c for c in evaluated if reached(c, "select"))
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


def plan_metrics(cases: Sequence[Case], *, stop: Stop = FROM_CASES) -> Metrics:
    """Plan hit rate: a synthesized plan and no failure at the plan stage, over the cases plan measured (a case
    that failed before plan counts as a miss)."""
    evaluated = measured_at(cases, "plan", stop=stop)
    hits = sum(
        1
        for c in evaluated
        if (c.get("plan") or {}).get("status") == "synthesized" and not failed_at(c, "plan")
    )
    return {"plan_hit_rate": _rate(hits, len(evaluated))}


def _execute_ok(case: Case) -> bool:
    return case.get("status") == "passed"  # a passed case failed nowhere


def execute_metrics(cases: Sequence[Case], *, stop: Stop = FROM_CASES) -> Metrics:
    """Execute success over read-only cases (the "execute read success rate"), over all execute cases (both over
    the cases execute measured: a case that failed before execute counts as a failure), the share of the
    evaluated assertions that held, and the share of the auth readiness preflights that found the case ready."""
    evaluated = measured_at(cases, "execute", stop=stop)
    reads = [c for c in evaluated if _read_only(c)]
    assertions = [a for c in evaluated for a in c.get("assertions") or ()]
    # the auth readiness preflight of each case that reached it: ready (or no auth needed), or not ready
    preflights = [c["auth_readiness"] for c in evaluated if isinstance(c.get("auth_readiness"), Mapping)]
    return {
        "execute_read_success_rate": _rate(sum(map(_execute_ok, reads)), len(reads)),
        "execute_success_rate": _rate(sum(map(_execute_ok, evaluated)), len(evaluated)),
        "assertion_pass_rate": _rate(sum(1 for a in assertions if a.get("passed")), len(assertions)),
        "auth_ready_rate": _rate(
            sum(1 for p in preflights if p.get("status") != "not_ready"), len(preflights)
        ),
    }


def _read_only(case: Case) -> bool:
    return bool(case.get("mutation_safety", "read_only") == "read_only")


# a case-share metric: (its stage or None for the whole case, which of the stage's cases it is over)
_SHARES: dict[str, tuple[str | None, Any]] = {
    "hit_at_k": ("search", lambda c: not _no_target(c.get("search"))),
    "top_1": ("search", lambda c: not _no_target(c.get("search"))),
    "selector_accuracy": ("select", None),
    "plan_hit_rate": ("plan", None),
    "execute_success_rate": ("execute", None),
    "execute_read_success_rate": ("execute", _read_only),
    "pass_rate": (None, lambda c: c.get("status") in ("passed", "failed", "error")),
}


def _share_cases(metric: str, cases: Iterable[Case], stop: Stop) -> list[Case] | None:
    """The gating cases the case-share ``metric`` is over (its denominator), or None for other metrics."""
    if metric not in _SHARES:
        return None
    stage, keep = _SHARES[metric]
    listed = list(cases)
    where = stopped_at(listed) if isinstance(stop, _FromCases) else stop
    gated = [c for c in listed if gating(c)]
    over = measured_at(gated, stage, stop=where) if stage is not None else gated
    return over if keep is None else [c for c in over if keep(c)]


def denominator(metric: str, cases: Iterable[Case], *, stop: Stop = FROM_CASES) -> int | None:
    """How many of the gating ``cases`` the case-share ``metric`` is over; None for a metric that is not a
    share of cases (``Metric.counts_cases``)."""
    over = _share_cases(metric, cases, stop)
    return None if over is None else len(over)


def earlier_failures(metric: str, cases: Iterable[Case], *, stop: Stop = FROM_CASES) -> dict[str, int]:
    """The gating cases ``metric`` counts as failures because they failed at an earlier stage, by that stage."""
    info = METRICS.get(metric)
    stage = info.stage if info is not None else None
    out: dict[str, int] = {}
    if stage not in CASE_STAGES:
        return out
    listed = list(cases)
    where = stopped_at(listed) if isinstance(stop, _FromCases) else stop
    for case in measured_at([c for c in listed if gating(c)], str(stage), stop=where):
        earlier = failed_earlier(case, str(stage))
        if earlier is not None:
            out[earlier] = out.get(earlier, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: CASE_STAGES.index(kv[0])))


def structured(case: Case) -> bool:
    """Whether a failed case's failure is classified ("failures are classified instead of becoming 500s"): a known
    reason code, but not the catch-alls a 500 becomes: ``engine_error`` (the engine under test threw or replied
    nonsense) and ``http_error`` for an API that answered 5xx or an unexpected error while executing."""
    failure = case.get("failure") or {}
    reason = failure.get("reason")
    if reason not in REASONS or reason == "engine_error":
        return False
    if reason == "http_error":
        execute = case.get("execute")
        status = execute.get("http_status") if isinstance(execute, Mapping) else None
        if isinstance(status, int) and status >= 500:
            return False
        return not str(failure.get("message", "")).startswith("unexpected error")
    return True


# the run's acceptance metrics (``acceptance``) -> the metric each one is
ACCEPTANCE_OF: dict[str, str] = {
    "search_hit_at_k": "hit_at_k",
    "search_top_1": "top_1",
    "target_selector_accuracy": "selector_accuracy",
    "plan_hit_rate": "plan_hit_rate",
    "execute_read_success_rate": "execute_read_success_rate",
}
NOT_REACHED = "n/a (not reached)"  # how every output shows a figure whose stage its cases never reached


def stage_not_reached(
    stage: str, cases: Iterable[Case], *, keep: Any = None, stop: Stop = FROM_CASES
) -> bool:
    """True when gating cases whose mode goes through ``stage`` (and that ``keep`` accepts) exist and the stage
    measured none of them: a stopping gate, or their suite's gates, never took them there."""
    listed = list(cases)
    where = stopped_at(listed) if isinstance(stop, _FromCases) else stop
    would = [
        c
        for c in listed
        if gating(c) and stage in MODE_STAGES.get(str(c.get("mode")), ()) and (keep is None or keep(c))
    ]
    return bool(would) and not measured_at(would, stage, stop=where)


def not_reached(figures: Mapping[str, Any], cases: Iterable[Case], *, stop: Stop = FROM_CASES) -> list[str]:
    """The names in ``figures`` (metric names, or the acceptance metrics' names) whose value is None because their
    stage was not reached (``stage_not_reached``), in the order of ``figures``: shown ``n/a (not reached)``."""
    listed = list(cases)
    where = stopped_at(listed) if isinstance(stop, _FromCases) else stop
    out = []
    for name, value in figures.items():
        metric = METRICS.get(ACCEPTANCE_OF.get(name, name))
        if value is not None or metric is None or metric.stage not in CASE_STAGES:
            continue
        keep = _read_only if metric.name == "execute_read_success_rate" else None
        if stage_not_reached(str(metric.stage), listed, keep=keep, stop=where):
            out.append(name)
    return out


def structured_failure_rate(cases: Iterable[Case]) -> float | None:
    """Share of failed/error cases whose failure is classified (``structured``)."""
    failed = [c for c in cases if c.get("status") in ("failed", "error")]
    return _rate(sum(1 for c in failed if structured(c)), len(failed))


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


def case_metrics(cases: Sequence[Case], *, stop: Stop = FROM_CASES) -> Metrics:
    """Every metric a gate threshold may name, over ``cases`` (flaky cases left out), with ``pass_rate``,
    ``structured_failure_rate`` and per-stage latency as ``latency_<stage>_p50_ms`` / ``_p95_ms``. ``stop``: where
    the run stopped (``stopped_at``), found in ``cases`` unless given (a suite's cases with the run's stop)."""
    where = stopped_at(cases) if isinstance(stop, _FromCases) else stop
    gated = [c for c in cases if gating(c)]
    out: Metrics = {}
    out.update(search_metrics(gated, stop=where))
    out.update(select_metrics(gated, stop=where))
    out.update(plan_metrics(gated, stop=where))
    out.update(execute_metrics(gated, stop=where))
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
    where = stopped_at(cases)
    gated = [c for c in cases if gating(c)]
    search = search_metrics(gated, stop=where)
    return {
        "search_hit_at_k": search["hit_at_k"],
        "search_top_1": search["top_1"],
        "target_selector_accuracy": select_metrics(gated, stop=where)["selector_accuracy"],
        "plan_hit_rate": plan_metrics(gated, stop=where)["plan_hit_rate"],
        "execute_read_success_rate": execute_metrics(gated, stop=where)["execute_read_success_rate"],
        "structured_failure_rate": structured_failure_rate(gated),
        "latency_ms": latency(gated),
    }

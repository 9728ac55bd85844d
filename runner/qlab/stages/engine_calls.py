"""What the search, select and plan stages share: one engine call per case and stage, cached for later stages.

A plan-mode case goes search → select → plan even when its suite sits only in the plan gate: each stage asks
for the previous stage's answer with ``searched``/``selected``, which reuse the answer an earlier gate kept in
``ctx.answers`` or make the call once (recording its result object, latency and failure on the case). Answers
are kept per CaseResult, so each attempt of a repeated case calls the engine on its own. The plan stage leaves
each Plan in ``ctx.answers.plans[case_id]`` for the execute stage.

An engine that raises fails the case with ``engine_error`` (status ``error``) in the stage that called it; the
other cases go on. A dependency that did not answer (``qlab.contracts.errors.DependencyError``) fails it with that
error's reason code (``engine_unreachable``, ``llm_unreachable``), which makes the run ERROR, not BLOCK."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from qlab.adapters import fuzzy
from qlab.contracts import metrics
from qlab.contracts.errors import DependencyError
from qlab.contracts.results import CaseResult
from qlab.engine import wire
from qlab.engine.types import SearchResult, Selection
from qlab.project.model import Case
from qlab.stages import engine_checks
from qlab.stages.base import StopHit
from qlab.stages.context import RunContext

T = TypeVar("T")


def top_k(ctx: RunContext, case: Case) -> int:
    """The K of the case: ``expected_top_k``, else its suite's ``k``."""
    suite = ctx.config.suites.get(case.suite)
    return case.expected_top_k or (suite.k if suite is not None else 8)


def fetch_k(ctx: RunContext, case: Case) -> int:
    """How many rows to ask for: the case's K, or more when a ``top_k_contains`` assertion asks for more."""
    wanted = [top_k(ctx, case)]
    for assertion in case.assertions:
        k = assertion.args.get("k") if assertion.type == "top_k_contains" else None
        if isinstance(k, int) and k > 0:
            wanted.append(k)
    return max(wanted)


ENGINE_LATENCIES = ("search", "target_selection", "plan")  # the latency keys of the engine's calls


def spent_sec(result: CaseResult) -> float:
    """The time the case's engine calls took so far (its search, selection and plan), in seconds."""
    return sum(result.latency_ms.get(key, 0.0) for key in ENGINE_LATENCIES) / 1000


def call(
    result: CaseResult,
    stage: str,
    latency_key: str,
    ctx: RunContext,
    fn: Callable[[], T],
    *,
    timeout_sec: float | None = None,
) -> T | None:
    """Run one engine call, recording its latency; an exception fails the case with ``engine_error``.
    ``timeout_sec``: the case's one deadline for its whole run (``Case.timeout_sec``): once its engine calls
    together took longer, the case fails with ``timeout`` at this stage (an engine call cannot be cut short from
    here: the deadline is judged when it returns)."""
    started = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:  # the engine under test may fail in any way; the run goes on
        result.latency_ms[latency_key] = round((time.perf_counter() - started) * 1000, 3)
        name = getattr(ctx.engine, "name", "engine")
        # a dependency that did not answer (the engine service, its LLM endpoint) is no verdict on the product
        reason = exc.reason if isinstance(exc, DependencyError) else "engine_error"
        result.fail(stage, reason, f"{name}: {type(exc).__name__}: {exc}", status="error")
        return None
    result.latency_ms[latency_key] = round((time.perf_counter() - started) * 1000, 3)
    if timeout_sec is not None and spent_sec(result) > timeout_sec:
        result.fail(
            stage,
            "timeout",
            f"the case ran out of its timeout_sec ({timeout_sec:g} s) at {stage}: its engine calls took "
            f"{spent_sec(result):.3f} s",
        )
        return None
    return value


def searched(ctx: RunContext, case: Case, result: CaseResult) -> SearchResult | None:
    """The case's search (run once): writes ``result.search``, checks the target and the search assertions.

    None when the case failed at search (engine error, unknown or absent expected target, failed assertion).
    """
    cached = ctx.answers.searches.of(result)
    if cached is not None:
        return None if result.done else cached
    found = call(
        result,
        "search",
        "search",
        ctx,
        lambda: ctx.engine.search(case.query, k=fetch_k(ctx, case)),
        timeout_sec=case.timeout_sec,
    )
    if found is None:
        return None
    # only plan and execute cases go on to select; a search case's rows are in its result already
    if case.mode != "search":
        ctx.answers.searches.keep(result, found)
    k = top_k(ctx, case)
    rank = found.rank_of(case.expected_target) if case.expected_target else None
    hit = None if not case.expected_target else rank is not None and rank <= k
    search: dict[str, Any] = {
        "hit": hit,
        "hit_rank": rank if hit else None,
        "top_k": k,
        "rows": found.rows,
        "query_terms": list(found.query_terms),
    }
    family = family_hit(ctx, case, found, k=k, hit=hit)
    if family is not None:
        search["family_hit"] = family
    result.search = search
    if case.expected_target and ctx.collection.tool(case.expected_target) is None:
        hint = fuzzy.did_you_mean(case.expected_target, [t.id for t in ctx.collection.tools])
        result.fail(
            "search",
            "expected_target_unknown",
            f"{case.expected_target!r} is not a tool of the collection.{hint}",
        )
    elif hit is False:
        shown = ", ".join(f"{row.rank}. {row.tool_id}" for row in found.rows[:3]) or "no rows"
        where = f"at rank {rank}" if rank is not None else "not in the results"
        result.fail(
            "search", "expected_target_absent", f"{case.expected_target} is {where} (K={k}); top: {shown}"
        )
    engine_checks.check_search(case, result, found)
    return None if result.done else found


def family_hit(ctx: RunContext, case: Case, found: SearchResult, *, k: int, hit: bool | None) -> bool | None:
    """Whether a tool of the expected target's family is in the Top-K ("can search find the right target
    family?"): a hit is one; None when the expected target is unknown or has no family."""
    expected = ctx.collection.tool(case.expected_target) if case.expected_target else None
    if expected is None or not expected.family:
        return None
    if hit:
        return True
    for row in found.rows[:k]:
        tool = ctx.collection.tool(row.tool_id)
        if tool is not None and tool.family == expected.family:
            return True
    return False


def selected(ctx: RunContext, case: Case, result: CaseResult) -> Selection | None:
    """The case's selection (run once, after its search): writes ``result.target_selector`` and checks it.

    None when the case failed before or at select.
    """
    cached = ctx.answers.selections.of(result)
    if cached is not None:
        return None if result.done else cached
    found = searched(ctx, case, result)
    if found is None:
        return None
    entities = dict(case.provided_entities)
    selection = call(
        result,
        "select",
        "target_selection",
        ctx,
        lambda: ctx.engine.select(case.query, found, entities=entities, llm_target=case.llm_target),
        timeout_sec=case.timeout_sec,
    )
    if selection is None:
        return None
    ctx.answers.selections.keep(result, selection)
    result.target_selector = wire.selection_to_dict(selection)
    critical = result.critical or case.id in _critical(ctx, case)
    if selection.ambiguous and critical:
        tied = ", ".join(selection.candidates)
        result.fail(
            "select", "ambiguous_critical", f"critical case: the selector could not tell apart {tied}"
        )
    elif case.expected_target and selection.selected_target != case.expected_target:
        why = ", ".join(selection.reason_codes)
        result.fail(
            "select",
            "wrong_target_selected",
            f"selected {selection.selected_target}, expected {case.expected_target} ({why})",
        )
    engine_checks.check_select(case, result, selection)
    return None if result.done else selection


def _critical(ctx: RunContext, case: Case) -> tuple[str, ...]:
    suite = ctx.config.suites.get(case.suite)
    return suite.critical if suite is not None else ()


# --------------------------------------------------------------------------------------------- reporting


def suite_groups(cases: Sequence[Case], results: Mapping[str, CaseResult]) -> dict[str, list[dict[str, Any]]]:
    """The case dicts of ``cases`` by suite, in first-seen order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        groups.setdefault(case.suite, []).append(results[case.id].to_dict())
    return groups


Figures = dict[str, float | None]


def suite_and_gate_figures(
    groups: Mapping[str, Sequence[Mapping[str, Any]]],
    figures: Callable[[Sequence[Mapping[str, Any]]], Figures],
) -> tuple[dict[str, Figures], Figures]:
    """``figures`` of each suite's case dicts, and of all of them (the gate's). A gate with one suite has the
    same figures twice: they are computed once (one pass over 100,000 cases costs ~0.3 s)."""
    per_suite = {suite: figures(dicts) for suite, dicts in groups.items()}
    if len(per_suite) == 1:
        return per_suite, dict(next(iter(per_suite.values())))
    return per_suite, figures([d for dicts in groups.values() for d in dicts])


def latency_metrics(dicts: Sequence[Mapping[str, Any]], key: str) -> dict[str, float | None]:
    figures = metrics.latency(dicts).get(key, {"p50": None, "p95": None})
    return {f"latency_{key}_p50_ms": figures["p50"], f"latency_{key}_p95_ms": figures["p95"]}


def stops_for(
    condition: str,
    reasons: frozenset[str],
    cases: Sequence[Case],
    results: Mapping[str, CaseResult],
    stage: str,
) -> list[StopHit]:
    """A StopHit for ``condition`` over the cases that failed in ``stage`` with one of ``reasons``."""
    ids = [
        c.id
        for c in cases
        if (failure := results[c.id].failure) is not None
        and failure.stage == stage
        and failure.reason in reasons
    ]
    if not ids:
        return []
    shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
    return [StopHit(condition, tuple(ids), f"{len(ids)} case(s): {shown}")]

"""Stage 3, select: Top-K + optional LLM target → the ``target_selector`` block; stop if a critical case is
ambiguous.

Every plan (and execute) case of the gate's suites that is not done yet gets its search (reused, or run now)
and one ``engine.select`` call with its provided entities and recorded ``llm_target``. The case's
``target_selector`` object is the selector's block, with ``latency_ms["target_selection"]``. A case fails with
``ambiguous_critical`` when the selector could not tell the top candidates apart and the case is in its suite's
``critical`` list, ``wrong_target_selected`` when the selection differs from the expected target or a
``selected_target`` / ``not_overridden`` assertion fails, and ``engine_error`` when the engine raised.

Metrics: selector_accuracy, override_rate, override_correct_rate, override_precision, llm_tokens,
llm_cost_usd, latency_target_selection_p50_ms / _p95_ms. Stop condition seen: ambiguous_critical."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts import metrics
from qlab.contracts.results import CaseResult
from qlab.project.model import Case
from qlab.stages.base import StageReport
from qlab.stages.context import RunContext
from qlab.stages.engine_calls import (
    latency_metrics,
    selected,
    stops_for,
    suite_and_gate_figures,
    suite_groups,
)

STAGE = "select"


def _figures(dicts: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    out = metrics.select_metrics(dicts)
    out["override_precision"] = out["override_correct_rate"]
    usages = [(d.get("target_selector") or {}).get("llm_usage") or {} for d in dicts]
    out["llm_tokens"] = float(sum(int(u.get("total_tokens", 0)) for u in usages))
    out["llm_cost_usd"] = round(sum(float(u.get("cost_usd", 0.0)) for u in usages), 8)
    out.update(latency_metrics(dicts, "target_selection"))
    return out


def run(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """Select a target for the gate's plan and execute cases; see the module docstring."""
    started = time.perf_counter()
    handled = [c for c in cases if c.mode != "search" and not results[c.id].done]
    for case in handled:
        selected(ctx, case, results[case.id])
    report = StageReport(stage=STAGE)
    groups = suite_groups(handled, results)
    report.suite_metrics, report.metrics = suite_and_gate_figures(groups, _figures)
    report.stops = stops_for("ambiguous_critical", frozenset({"ambiguous_critical"}), handled, results, STAGE)
    ctx.log(f"select: {len(handled)} case(s), selector accuracy {report.metrics.get('selector_accuracy')}")
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report

"""Stage 2, search: query cases → Top-K rows and evidence; stop if the expected target is absent.

Every case of the gate's suites that is not done yet is searched once (``engine_calls.searched``): its
``search`` object is ``{hit, hit_rank, top_k, rows, query_terms}`` with each row's score, per-field scores,
matched terms and corrections, and ``latency_ms["search"]``. A case fails with ``expected_target_unknown``
when its expected target is not a tool of the collection, ``expected_target_absent`` when the target is not in
its Top-K (``expected_top_k`` or the suite's ``k``) or a ``top_k_contains``/``top_1_is`` assertion fails, and
``engine_error`` when the engine raised.

Metrics per suite and over the gate: hit_at_k, family_hit_at_k, top_1, mrr, ndcg_at_k (``qlab.contracts.metrics``, one
relevant target per case) and latency_search_p50_ms / _p95_ms. Stop condition seen: expected_target_absent.
"""

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
    searched,
    stops_for,
    suite_and_gate_figures,
    suite_groups,
)

STAGE = "search"
ABSENT = frozenset({"expected_target_absent", "expected_target_unknown"})


def _figures(dicts: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    out = metrics.search_metrics(dicts)
    out.update(latency_metrics(dicts, "search"))
    return out


def run(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """Search the gate's cases; see the module docstring."""
    started = time.perf_counter()
    handled = [c for c in cases if not results[c.id].done]
    for case in handled:
        searched(ctx, case, results[case.id])
    report = StageReport(stage=STAGE)
    groups = suite_groups(handled, results)
    report.suite_metrics, report.metrics = suite_and_gate_figures(groups, _figures)
    report.stops = stops_for("expected_target_absent", ABSENT, handled, results, STAGE)
    missed = len(report.stops[0].case_ids) if report.stops else 0
    ctx.log(f"search: {len(handled)} case(s), hit@K {report.metrics.get('hit_at_k')}, {missed} absent")
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report

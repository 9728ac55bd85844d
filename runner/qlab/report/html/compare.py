"""The sections of the HTML report that compare runs: the promotion diff (baseline → candidate, case by case,
with metric deltas) and the trends of every metric over a series of runs ("the Web UI visualizes its
trends")."""

from __future__ import annotations

from collections.abc import Sequence

from qlab.contracts.metrics import SCORECARD_DIMENSIONS
from qlab.report import derive
from qlab.report.derive import Artifact, as_mapping, number
from qlab.report.html.base import Markup, badge, capped, empty, section, show, table, tiles
from qlab.report.html.svg import esc, fmt, line_chart

MAX_DIFF_ROWS = 500
DIFF_LABELS = {
    "regressed": "regressed",
    "fixed": "fixed",
    "still_failing": "still failing",
    "new_failing": "new failing",
    "new_passing": "new passing",
    "unevaluated": "unevaluated",
    "removed": "removed",
    "passing": "passing in both",
}


def _run_label(result: Artifact, index: int) -> str:
    return str(result.get("run_id") or f"run {index + 1}")


def _delta(before: float | None, after: float | None) -> Markup:
    if before is None or after is None:
        return Markup('<span class="muted">—</span>')
    change = after - before
    klass = "pass-mark" if change > 0 else "fail-mark" if change < 0 else "muted"
    return Markup(f'<span class="{klass}">{"+" if change > 0 else ""}{esc(fmt(change))}</span>')


def promotion_diff(baseline: Artifact, candidate: Artifact) -> Markup:
    """Fixed, regressed, still failing and new cases side by side, then the metric deltas."""
    diff = derive.case_diff(baseline, candidate)
    counts = diff.counts
    summary = tiles(
        [
            ("regressed", counts["regressed"], "bad" if counts["regressed"] else ""),
            ("fixed", counts["fixed"], "ok" if counts["fixed"] else ""),
            ("still failing", counts["still_failing"], "warn" if counts["still_failing"] else ""),
            ("new failing", counts["new_failing"], "bad" if counts["new_failing"] else ""),
            ("new passing", counts["new_passing"], "info"),
            ("unevaluated", counts["unevaluated"], "warn" if counts["unevaluated"] else ""),
            ("removed", counts["removed"], "info"),
            ("passing in both", counts["passing"], ""),
        ]
    )
    rows = [
        (
            badge(c.kind),
            Markup(f'{esc(c.case_id)} <span class="badge bad">required</span>')
            if c.required and c.kind == "regressed"
            else c.case_id,
            c.suite,
            show(c.before, empty="absent"),
            Markup(f"<code>{esc(c.before_reason)}</code>") if c.before_reason else "",
            show(c.after, empty="absent"),
            Markup(f"<code>{esc(c.after_reason)}</code>") if c.after_reason else "",
        )
        for c in diff.changes
        if c.kind != "passing"
    ]
    shown, note = capped(rows, MAX_DIFF_ROWS)
    case_table = (
        table(
            ["change", "case", "suite", "baseline", "baseline reason", "candidate", "candidate reason"], shown
        )
        if rows
        else empty("No case changed outcome: every case passes in both runs, or none is shared.")
    )
    base_metrics, cand_metrics = as_mapping(baseline.get("metrics")), as_mapping(candidate.get("metrics"))
    base_card, cand_card = as_mapping(baseline.get("scorecard")), as_mapping(candidate.get("scorecard"))
    metric_rows = [
        (
            label,
            show(number(base_metrics.get(key)), empty="no data"),
            show(number(cand_metrics.get(key)), empty="no data"),
            _delta(number(base_metrics.get(key)), number(cand_metrics.get(key))),
        )
        for key, label in derive.ACCEPTANCE_METRICS
    ]
    metric_rows.extend(
        (
            f"scorecard: {dim}",
            show(number(base_card.get(dim)), empty="no data"),
            show(number(cand_card.get(dim)), empty="no data"),
            _delta(number(base_card.get(dim)), number(cand_card.get(dim))),
        )
        for dim in SCORECARD_DIMENSIONS
    )
    verdicts = [
        ("baseline", _run_label(baseline, 0), as_mapping(baseline.get("decision")).get("verdict")),
        ("candidate", _run_label(candidate, 1), as_mapping(candidate.get("decision")).get("verdict")),
    ]
    runs = table(
        ["", "run", "verdict"], [(name, run, badge(str(v or "unknown"))) for name, run, v in verdicts]
    )
    return section(
        "promotion",
        "Promotion diff",
        runs,
        summary,
        case_table,
        note,
        Markup("<h3>Metric deltas (candidate - baseline)</h3>"),
        table(["metric", "baseline", "candidate", "delta"], metric_rows),
        note="Case by case from the two result artifacts, like with like: fixed, regressed and still failing only "
        "for cases both runs judged; a case one run blocked, skipped or could not judge is unevaluated. The "
        "promotion verdict itself (tolerances, bootstrap, required cases) is `qlab promote`'s.",
    )


def trends(results: Sequence[Artifact]) -> Markup:
    """One small line chart per metric over the runs, in the order given."""
    series = derive.metric_trends(results)
    if not series:
        return section("trends", "Trends", empty("None of these runs has metrics to plot."))
    ticks = {float(i + 1): f"#{i + 1}" for i in range(len(results))}
    unreached = derive.trends_not_reached(results)
    figures = []
    for label, values in series.items():
        chart = line_chart(
            {label: [(float(i + 1), v) for i, v in enumerate(values)]},
            label=f"Trend of {label} over {len(results)} runs",
            x_label="run",
            x_tick_labels=ticks,
            y_max=1.0 if all(v is None or 0 <= v <= 1 for v in values) else None,
            width=400,
            height=190,
        )
        gaps = unreached.get(label, [False] * len(values))
        latest = derive.NOT_REACHED if values[-1] is None and gaps[-1] else fmt(values[-1])
        missed = [f"#{i + 1}" for i, gap in enumerate(gaps) if gap]
        said = f"; {derive.NOT_REACHED} in {', '.join(missed)}" if missed else ""
        figures.append(
            f"<figure>{chart}<figcaption>{esc(label)}: latest {esc(latest)}{esc(said)}</figcaption></figure>"
        )
    run_rows = [
        (
            f"#{i + 1}",
            _run_label(r, i),
            show(r.get("started_at")),
            badge(str(as_mapping(r.get("decision")).get("verdict", "unknown"))),
        )
        for i, r in enumerate(results)
    ]
    return section(
        "trends",
        f"Trends over {len(results)} runs",
        Markup(f'<div class="grid2">{"".join(figures)}</div>'),
        table(["#", "run", "started", "verdict"], run_rows),
        note="Each metric per run; a gap means the run has no data for it, or its cases never reached the metric's "
        "stage (n/a (not reached): a gate before it blocked); never drawn as zero.",
    )

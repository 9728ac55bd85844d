"""The chart sections of the HTML report for one run: per-stage latency (p50/p95), the hit@K curve, failure
classes with their hints, and the scorecard. Each takes the artifact dict and returns ``Markup``."""

from __future__ import annotations

from qlab.contracts.metrics import SCORECARD_DIMENSIONS
from qlab.report import derive
from qlab.report.derive import Artifact, as_mapping, number
from qlab.report.html.base import Markup, empty, kv, section, table
from qlab.report.html.svg import bar_chart, esc, line_chart


def latency(result: Artifact) -> Markup:
    data = derive.stage_latency(result)
    if not data:
        return section("latency", "Latency by stage", empty("No latency was recorded."))
    rows = [(stage, [p50, p95]) for stage, (p50, p95) in data.items()]
    chart = bar_chart(rows, series=["p50", "p95"], label="Latency by stage, p50 and p95 (ms)", unit=" ms")
    return section(
        "latency", "Latency by stage", Markup(chart), note="p50 and p95 per stage, in milliseconds."
    )


def hit_curve(result: Artifact) -> Markup:
    curve = derive.hit_at_k_curve(derive.cases_of(result))
    if not curve.ks:
        return section("hitk", "Search hit@K", empty("No case in this result has a search object."))
    series = {
        f"{name} (n={curve.sizes[name]})": [(float(k), v) for k, v in zip(curve.ks, values, strict=True)]
        for name, values in curve.series.items()
    }
    chart = line_chart(
        series,
        label="Search hit@K curve: share of cases whose expected target ranks at or above K",
        x_label="K",
        y_label="hit@K",
        marker_x=float(curve.configured_k) if curve.configured_k else None,
        marker_label=f"K={curve.configured_k}" if curve.configured_k else "",
    )
    overall = curve.series["all"]
    k_conf = curve.configured_k
    facts = [("hit@1 (Top-1)", overall[0]), ("cases with a search object", curve.sizes["all"])]
    if k_conf and k_conf <= len(overall):
        facts.insert(1, (f"hit@{k_conf} (configured K)", overall[k_conf - 1]))
    return section(
        "hitk",
        "Search hit@K",
        Markup(chart),
        kv(facts),
        note="Computed from each case's search.hit_rank; a missing target is a miss at every K.",
    )


NEVER_RAN = frozenset({"blocked_by_stage", "stopped_by_error", "budget_exceeded"})


def failures(result: Artifact) -> Markup:
    """The real failure classes (chart and table); the cases that never ran are counted apart, by the stage that
    stopped them: twenty cases blocked by one search failure are one cause, not the biggest class."""
    cases = derive.cases_of(result)
    ran = [c for c in cases if str(as_mapping(c.get("failure")).get("reason")) not in NEVER_RAN]
    classes = derive.failure_classes(ran)
    stopped: dict[str, int] = {}
    for case in cases:
        failure = as_mapping(case.get("failure"))
        if str(failure.get("reason")) in NEVER_RAN:
            key = f"{failure.get('reason')} at {failure.get('stage')}"
            stopped[key] = stopped.get(key, 0) + 1
    apart = (
        Markup(
            "<p><b>Never ran</b> (not a failure class): "
            + esc(", ".join(f"{n} case(s) {k.replace('_', ' ')}" for k, n in stopped.items()))
            + ".</p>"
        )
        if stopped
        else Markup("")
    )
    if not classes:
        return section("failures", "Failure classes", empty("No case failed."), apart)
    rows = [(f"{c.reason} ({c.stage})", [float(c.count)]) for c in classes[:20]]
    chart = bar_chart(rows, series=["cases"], label="Failing cases by reason code")
    table_rows = [
        (Markup(f"<code>{esc(c.reason)}</code>"), c.stage, c.count, c.meaning, c.hint, ", ".join(c.case_ids))
        for c in classes
    ]
    return section(
        "failures",
        "Failure classes",
        apart,
        Markup(chart),
        table(["reason", "stage", "cases", "meaning", "what to inspect", "example cases"], table_rows),
        note="Each failure is classified by the stage that broke it; hints come from qlab's reason table.",
    )


def scorecard(result: Artifact) -> Markup:
    card = as_mapping(result.get("scorecard"))
    rows = [(dim, [number(card.get(dim))]) for dim in SCORECARD_DIMENSIONS]
    unreached = derive.not_reached(result, "scorecard")
    chart = bar_chart(
        rows,
        series=["score"],
        label="Scorecard, ten dimensions in [0, 1]",
        max_value=1.0,
        missing={dim: derive.NOT_REACHED for dim in unreached},
    )
    missing = [dim for dim, (value,) in rows if value is None and dim not in unreached]
    note = "Ten dimensions of the scorecard, each in [0, 1]. "
    note += (
        f"No data for: {', '.join(missing)} (this run has nothing to compute them from). " if missing else ""
    )
    note += (
        f"Not reached: {', '.join(sorted(unreached))} (a gate stopped the run before it)."
        if unreached
        else ""
    )
    return section("scorecard", "Scorecard", Markup(chart), note=note.strip())

"""The detail sections of the HTML report for one run: suites, collection readiness and in-run guards. Each takes
the artifact dict and returns ``Markup``."""

from __future__ import annotations

from collections.abc import Mapping

from qlab.report import derive
from qlab.report.derive import Artifact, as_mapping, number
from qlab.report.html.base import Markup, badge, empty, kv, section, show, table, text
from qlab.report.html.svg import esc, fmt


def suites(result: Artifact) -> Markup:
    items = as_mapping(result.get("suites"))
    if not items:
        return section("suites", "Suites", empty("This result lists no suites."))
    rows = []
    for name, raw in items.items():
        s = as_mapping(raw)
        counts = as_mapping(s.get("counts"))
        metrics = as_mapping(s.get("metrics"))
        # metrics without data are many (a search suite has no plan metrics): name how many, list the rest; a
        # figure its cases never reached (a gate before it blocked) is named: n/a (not reached), never 0
        unreached = derive.not_reached(result, suite=str(name))
        measured = [(k, number(v)) for k, v in metrics.items() if number(v) is not None or k in unreached]
        unmeasured = len(metrics) - len(measured)
        metric_html = "<br>".join(
            f"{esc(k)} {esc(derive.NOT_REACHED if v is None else fmt(v))}" for k, v in measured
        )
        if unmeasured:
            metric_html += f'{"<br>" if measured else ""}<span class="muted">{unmeasured} without data</span>'
        rows.append(
            (
                name,
                s.get("mode", ""),
                s.get("category", ""),
                show(s.get("required")),
                show(s.get("cadence")),
                ", ".join(f"{k} {v}" for k, v in counts.items() if v or k == "total") or "—",
                Markup(metric_html) or "—",
            )
        )
    return section(
        "suites",
        "Suites",
        table(["suite", "mode", "category", "required", "cadence", "counts", "metrics"], rows),
    )


def guards(result: Artifact) -> Markup:
    items = result.get("guards")
    if not isinstance(items, list) or not items:
        return section("guards", "In-run guards", empty("No guard results were recorded."))
    rows = []
    for raw in items:
        g = as_mapping(raw)
        passed = g.get("passed")
        rows.append(
            (
                derive.check_name(g) if g.get("guard") else g.get("name", ""),
                g.get("stage", ""),
                g.get("mode", ""),
                badge("passed" if passed else "failed"),
                show(g.get("message")),
            )
        )
    return section("guards", "In-run guards", table(["guard", "stage", "mode", "result", "message"], rows))


def readiness(result: Artifact) -> Markup:
    data = as_mapping(result.get("readiness"))
    if not data:
        return Markup("")
    scalars = [(k, v) for k, v in data.items() if not isinstance(v, (Mapping, list))]
    nested = [k for k, v in data.items() if isinstance(v, (Mapping, list))]
    body: list[object] = [kv(scalars) if scalars else empty("no summary values")]
    if nested:
        body.append(text(f"Also in the artifact: {', '.join(nested)}."))
    return section("readiness", "Collection readiness", *body)

"""The table sections of the HTML report for one run: header, decision, gates and acceptance metrics. Each takes
the artifact dict and returns ``Markup``. The case table is in ``qlab.report.html.cases``, the chart sections in
``qlab.report.html.charts``, suites, readiness and guards in ``qlab.report.html.details``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.report import derive
from qlab.report.derive import Artifact, as_mapping, number
from qlab.report.html.base import Markup, badge, capped, empty, kv, section, show, table, text, tiles
from qlab.report.html.svg import esc, fmt

_COUNT_KEYS = ("total", "passed", "failed", "error", "blocked", "skipped")


def header(result: Artifact, *, title: str) -> Markup:
    decision = as_mapping(result.get("decision"))
    verdict = derive.verdict(decision)
    klass = verdict if verdict in derive.VERDICTS else ""
    facts = [
        ("project", result.get("project")),
        ("run id", result.get("run_id")),
        ("started", result.get("started_at")),
        ("ended", result.get("ended_at")),
        (
            "duration",
            f"{fmt(number(result.get('duration_ms')))} ms"
            if number(result.get("duration_ms")) is not None
            else None,
        ),
        ("qlab", result.get("qlab_version")),
        ("exit code", decision.get("exit_code")),
    ]
    shard = derive.shard_label(result)
    if shard:
        facts.append(("shard", shard))
    if decision.get("advisory"):
        facts.append(("mode", "advisory (--exit-zero): a block exits 0"))
    return Markup(
        f'<header class="top {esc(klass)}"><h1>{esc(title)}</h1>'
        f'<div class="verdict {esc(klass)}">{esc(verdict.upper())}</div>{kv(facts)}</header>'
    )


def overview(result: Artifact) -> Markup:
    counts = derive.status_counts(result)
    total = sum(counts.values())
    decision = as_mapping(result.get("decision"))
    reasons = decision.get("reasons")
    reason_items = reasons if isinstance(reasons, list) else ([reasons] if reasons else [])
    reason_html = (
        Markup("<ul>" + "".join(f"<li>{show(r)}</li>" for r in reason_items) + "</ul>")
        if reason_items
        else empty("none given")
    )
    fingerprint = as_mapping(result.get("fingerprint"))
    provenance = as_mapping(result.get("provenance"))
    return section(
        "overview",
        "Decision",
        tiles(
            [
                ("cases", total, ""),
                ("passed", counts["passed"], "ok"),
                ("failed", counts["failed"], "bad" if counts["failed"] else ""),
                ("errors", counts["error"], "bad" if counts["error"] else ""),
                ("blocked", counts["blocked"], "warn" if counts["blocked"] else ""),
                ("skipped", counts["skipped"], ""),
                (
                    "flaky",
                    sum(derive.unstable(c) for c in derive.cases_of(result) if c.get("status") == "passed"),
                    "warn",
                ),
            ]
        ),
        Markup("<h3>Reasons</h3>"),
        reason_html,
        _skipped_suites(result),
        Markup("<details><summary>Fingerprint and provenance</summary>"),
        Markup("<h3>Fingerprint</h3>"),
        kv(sorted(fingerprint.items())) if fingerprint else empty("no fingerprint recorded"),
        Markup("<h3>Provenance</h3>"),
        _provenance(provenance) if provenance else empty("no provenance recorded"),
        Markup("</details>"),
    )


def _skipped_suites(result: Artifact) -> Markup:
    """The suites the run left out and why (a ``cadence: manual`` suite nobody asked for)."""
    items = [as_mapping(s) for s in result.get("skipped_suites") or () if isinstance(s, Mapping)]
    if not items:
        return Markup("")
    rows = "".join(
        f"<li><code>{esc(str(s.get('suite')))}</code>: {show(s.get('reason'))}</li>" for s in items
    )
    return Markup(f"<h3>Skipped suites</h3><ul>{rows}</ul>")


def _provenance(provenance: Mapping[str, Any]) -> Markup:
    """The provenance of a quality claim: the dataset (case files), the model, the run configuration."""
    dataset = as_mapping(provenance.get("dataset"))
    files = [as_mapping(f) for f in dataset.get("files", []) or [] if isinstance(f, Mapping)]
    parts: list[object] = [
        kv([("dataset digest", dataset.get("digest")), ("model", provenance.get("model") or "no LLM used")])
    ]
    if files:
        rows = [
            (
                f.get("path", ""),
                f.get("cases", ""),
                Markup(f"<code>{esc(str(f.get('digest') or '')[:19])}</code>"),
            )
            for f in files
        ]
        shown, note = capped(rows, 50)
        parts += [table(["case file", "cases", "digest"], shown), note]
    config = as_mapping(provenance.get("run_configuration"))
    if config:
        parts += [Markup("<h3>Run configuration</h3>"), kv(sorted(config.items()))]
    rest = [
        (k, v) for k, v in sorted(provenance.items()) if k not in ("dataset", "model", "run_configuration")
    ]
    if rest:
        parts.append(kv(rest))
    return Markup("".join(str(text(p)) for p in parts))


def _thresholds(gate: Mapping[str, Any]) -> Markup:
    items = gate.get("thresholds")
    if not isinstance(items, list) or not items:
        return Markup('<span class="muted">—</span>')
    parts = []
    for item in items:
        t = as_mapping(item)
        mark = (
            '<span class="pass-mark">✓</span>'
            if t.get("passed") is True
            else '<span class="fail-mark">✗</span>'
            if t.get("passed") is False
            else ""
        )
        actual = fmt(number(t.get("actual"))) if not t.get("not_reached") else derive.NOT_REACHED
        suite = f" [{t['suite']}]" if t.get("suite") else ""
        gating = "" if t.get("gating", True) else ' <span class="muted">(not gating)</span>'
        parts.append(
            f"{mark} <code>{esc(t.get('metric', '?'))}{esc(suite)} {esc(t.get('op', ''))} "
            f"{esc(fmt(number(t.get('value'))))}</code> actual <b>{esc(actual)}</b>{gating}"
        )
    return Markup("<br>".join(parts))


def _list(value: Any) -> Markup:
    items = value if isinstance(value, list) else ([value] if value else [])
    if not items:
        return Markup('<span class="muted">—</span>')
    rendered = []
    for item in items:
        if isinstance(item, Mapping):
            name = item.get("condition") or item.get("code") or item.get("reason") or item.get("name")
            ids = item.get("case_ids")
            extra = (
                f" ({', '.join(map(str, ids[:5]))}{', …' if len(ids) > 5 else ''})"
                if isinstance(ids, list) and ids
                else ""
            )
            msg = item.get("message")
            if item.get("gating") is False:
                extra += " (not gating)"
            rendered.append(
                f"<code>{esc(name)}</code>{esc(extra)}" + (f": {esc(msg)}" if msg else "")
                if name
                else str(show(item))
            )
        else:
            # a bare reason code reads as code; a sentence (it has spaces) as text
            rendered.append(esc(item) if " " in str(item) else f"<code>{esc(item)}</code>")
    return Markup("<br>".join(rendered))


def gates(result: Artifact) -> Markup:
    items = [as_mapping(g) for g in result.get("gates", []) or [] if isinstance(g, Mapping)]
    if not items:
        return section("gates", "Gates", empty("This result has no gates."))
    rows = [
        (
            g.get("name", ""),
            g.get("stage", ""),
            badge(str(g.get("status", ""))),
            _thresholds(g),
            _list(g.get("stops")),
            _list(g.get("reasons")),
        )
        for g in items
    ]
    return section(
        "gates",
        "Gates",
        table(["gate", "stage", "status", "thresholds (metric op value → actual)", "stops", "reasons"], rows),
        note="In run order. A blocking gate stops the later stages; their cases are reported as blocked.",
    )


def acceptance_metrics(result: Artifact) -> Markup:
    metrics = as_mapping(result.get("metrics"))
    unreached = derive.not_reached(result)
    rows = [
        (
            label,
            show(number(metrics.get(key)), empty=derive.NOT_REACHED if key in unreached else "no data"),
            key,
        )
        for key, label in derive.ACCEPTANCE_METRICS
    ]
    categories = as_mapping(result.get("categories"))
    body: list[object] = [table(["metric", "value", "key"], rows)]
    if categories:
        body.append(Markup("<h3>By eval category</h3>"))
        cat_rows = []
        for name, raw in categories.items():
            info = as_mapping(raw)
            counts = as_mapping(info.get("counts"))
            cat_rows.append(
                (
                    name,
                    show(number(info.get("pass_rate")), empty="no data"),
                    *(counts.get(k, 0) for k in _COUNT_KEYS),
                )
            )
        body.append(table(["category", "pass rate", *_COUNT_KEYS], cat_rows))
    return section("metrics", "Acceptance metrics", *body, note="The acceptance metrics over the whole run.")

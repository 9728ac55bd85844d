"""Markdown for a promotion report: the verdict, the rule's checks, the metrics, and the cases side by side.

The promotion policy: "Keep the failing and fixed evidence side by side." Each regressed, fixed and still-failing case gets
a table with one row per stage object and one column per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.governance.promotion.changes import CaseChange
from qlab.governance.promotion.compare import PromotionReport
from qlab.governance.records import STAGE_KEYS

_TITLES = {
    "regressed": "Regressed (passed in the baseline, failing in the candidate)",
    "fixed": "Fixed (failing in the baseline, passing in the candidate)",
    "still_failing": "Still failing",
    "new_failing": "New and failing (only in the candidate)",
    "new_passing": "New and passing (only in the candidate)",
    "unevaluated": "Unevaluated (a run blocked, skipped or could not judge it: no evidence either way)",
    "removed": "Removed (only in the baseline)",
}
_MAX_CELL = 160
_MAX_WORSE = 20  # side-by-side tables of passing cases that got worse on a metric
_MAX_TABLES = 50  # side-by-side tables per kind: the JSON report has every case


def markdown(report: PromotionReport) -> str:
    verdict = {"promote": "PROMOTE", "block": "BLOCK", "refused": "REFUSED"}[report.verdict]
    out = [f"# Promotion: `{report.change_type}` — {verdict} (exit {report.exit_code})", ""]
    out += _runs(report)
    if report.verdict == "refused":
        out += ["## Why the runs cannot be compared", ""] + [f"- {r}" for r in report.reasons] + [""]
        return "\n".join(out)
    if report.reasons:
        out += ["## Why it is blocked", ""] + [f"- {r}" for r in report.reasons] + [""]
    out += ["## Required evidence", "", "| requirement | result |", "|---|---|"]
    for check in report.checks:
        out.append(
            f"| {check.name} | {'pass' if check.passed else 'FAIL: ' + _cell('; '.join(check.reasons))} |"
        )
    out += [
        "",
        "## Metrics",
        "",
        "| metric | source | baseline | candidate | delta | noise | worse / better cases | regressed |",
        "|---|---|---:|---:|---:|---|---:|---|",
    ]
    for m in report.metrics:
        noise = f"tolerance {m.tolerance}"
        if m.interval is not None:
            noise += f"; {m.interval.confidence:.0%} CI [{m.interval.low:+.4f}, {m.interval.high:+.4f}]"
        out.append(
            f"| {m.metric} | {m.source} | {_num(m.baseline)} | {_num(m.candidate)} | {_num(m.delta, sign=True)} "
            f"| {noise} | {len(m.worse)} / {len(m.better)} | {'yes' if m.regressed else 'no'} |"
        )
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts.items())
    out += ["", f"Cases in {', '.join(report.suites) or 'no suite'}: {counts}.", ""]
    for kind, title in _TITLES.items():
        changes = report.of_kind(kind)
        if not changes:
            continue
        out += [f"## {title}", ""]
        for change in changes[:_MAX_TABLES]:
            out += _side_by_side(change)
        if len(changes) > _MAX_TABLES:
            out += [f"… and {len(changes) - _MAX_TABLES} more (see the JSON report, `--json`).", ""]
    # cases that pass in both runs but score lower on a metric: the evidence behind a metric drop
    worse = {case_id for m in report.metrics for case_id in m.worse}
    passing = [c for c in report.of_kind("passing") if c.case_id in worse]
    if passing:
        out += ["## Passing in both runs, but worse on a metric", ""]
        for change in passing[:_MAX_WORSE]:
            out += _side_by_side(change)
        if len(passing) > _MAX_WORSE:
            out += [f"… and {len(passing) - _MAX_WORSE} more (see the JSON report).", ""]
    return "\n".join(out)


def _runs(report: PromotionReport) -> list[str]:
    rows = ["| | baseline | candidate |", "|---|---|---|"]
    for key in ("path", "run_id", "digest", "collection_digest", "engine", "model"):
        b, c = report.baseline.get(key), report.candidate.get(key)
        if b is None and c is None:
            continue
        rows.append(f"| {key} | {_cell(b)} | {_cell(c)} |")
    return [*rows, ""]


def _side_by_side(change: CaseChange) -> list[str]:
    flags = [f for f, on in (("required", change.required), ("flaky", change.flaky or change.unstable)) if on]
    head = f"### `{change.case_id}` ({change.suite}{', ' + ', '.join(flags) if flags else ''})"
    rows = [head, "", "| | baseline | candidate |", "|---|---|---|"]
    rows.append(f"| status | {change.baseline_status or '—'} | {change.candidate_status or '—'} |")
    if change.unstable:
        rows.append(
            f"| repeats passed | {_ratio(change.baseline_ratio)} | {_ratio(change.candidate_ratio)} |"
        )
    b, c = change.baseline or {}, change.candidate or {}
    for key in (*STAGE_KEYS, "failure", "assertions"):
        if key in b or key in c:
            rows.append(
                f"| {key} | {_cell(summarize(key, b.get(key)))} | {_cell(summarize(key, c.get(key)))} |"
            )
    return [*rows, ""]


def summarize(key: str, value: Any) -> str:
    """One line for a stage object, the part a reviewer compares first."""
    if value is None:
        return "—"
    if key == "search" and isinstance(value, Mapping):
        rows = value.get("rows") or []
        top = ", ".join(f"{r.rank}. {r.tool_id}" for r in rows[:3])
        hit = f"hit at rank {value.get('hit_rank')}" if value.get("hit") else "miss"
        return f"{hit} of top {value.get('top_k')}" + (f" ({top})" if top else "")
    if key == "target_selector" and isinstance(value, Mapping):
        codes = ", ".join(value.get("reason_codes") or ())
        llm = f"; llm {value.get('llm_target')}" if value.get("llm_target") else ""
        over = " (overrode llm)" if value.get("overrode_llm") else ""
        return f"selected {value.get('selected_target')}{llm}{over}" + (f" [{codes}]" if codes else "")
    if key == "plan" and isinstance(value, Mapping):
        tools = " → ".join(str(t) for t in value.get("tools") or ())
        slots = [
            f"{s.get('tool_id')}.{s.get('parameter')}"
            for s in value.get("user_input_slots") or ()
            if isinstance(s, Mapping)
        ]
        return f"{value.get('status')}: {tools or 'no steps'}" + (
            f"; needs {', '.join(slots)}" if slots else ""
        )
    if key == "execute" and isinstance(value, Mapping):
        return f"HTTP {value.get('http_status')} in {value.get('latency_ms')} ms"
    if key == "auth_readiness" and isinstance(value, Mapping):
        codes = ", ".join(value.get("reason_codes") or ())
        return f"{value.get('status')}" + (f" ({codes})" if codes else "")
    if key == "failure" and isinstance(value, Mapping):
        message = f": {value.get('message')}" if value.get("message") else ""
        return f"{value.get('stage')}/{value.get('reason')}{message}"
    if key == "assertions" and isinstance(value, Sequence):
        failed = [a for a in value if isinstance(a, Mapping) and not a.get("passed")]
        return f"{len(value) - len(failed)}/{len(value)} passed" + (
            f"; failed: {', '.join(str(a.get('type')) for a in failed)}" if failed else ""
        )
    return str(value)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _cell(value: Any) -> str:
    text = "—" if value is None else str(value)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"


def _num(value: float | None, *, sign: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.4f}" if sign else f"{value:.4f}"

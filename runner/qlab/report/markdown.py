"""The Markdown summary of a result (GitHub-flavoured; appended to ``$GITHUB_STEP_SUMMARY`` in Actions).

Sections, most important first: decision and gate table; failing cases with stage and reason; the
troubleshooting hint per failure class (via ``qlab.reasons``); non-gating findings; metrics;
guards; artifact links. GitHub refuses a step summary over 1 MiB, so the text is kept under ``MAX_BYTES``: the
lowest-priority sections are cut first, then the failing-case table is shortened, always with a notice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qlab.reasons import REASONS, hint
from qlab.report import derive

MAX_BYTES = 1_000_000  # GitHub's limit is 1 MiB per step summary; keep a margin for the notice
GATE_ICON = {"passed": "✅", "warned": "⚠️", "blocked": "❌", "skipped": "⏭️", "error": "⛔"}


def _cell(value: Any) -> str:
    """A table cell: pipes escaped, newlines flattened, long text cut."""
    text = str(value if value is not None else "—").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "…"


def _num(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _failing(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    suites = artifact.get("suites") or {}
    return [
        c
        for c in artifact.get("cases") or ()
        if c.get("status") in ("failed", "error")
        and not c.get("flaky")
        and c.get("lifecycle") != "draft"
        and (suites.get(c.get("suite")) or {}).get("required", True)
    ]


def _header(artifact: Mapping[str, Any]) -> list[str]:
    decision = artifact.get("decision") or {}
    verdict = derive.verdict(decision).upper()
    icon = {"PASS": "✅", "BLOCK": "❌", "ERROR": "⛔"}.get(verdict, "❔")
    shard = artifact.get("shard")
    where = f" · shard {shard.get('index')}/{shard.get('total')}" if shard and shard.get("index") else ""
    lines = [
        f"## {icon} qlab: {verdict} — {artifact.get('project', '')}",
        "",
        f"run `{artifact.get('run_id', '')}`{where} · exit code {decision.get('exit_code')}"
        + (" (advisory: --exit-zero)" if decision.get("advisory") else ""),
        "",
    ]
    lines += [f"- {_cell(r)}" for r in decision.get("reasons") or ()]
    lines += ["", "| gate | stage | status | numbers | reasons |", "|---|---|---|---|---|"]
    for gate in artifact.get("gates") or ():
        numbers = ", ".join(
            f"{t.get('metric')}{'[' + t['suite'] + ']' if t.get('suite') else ''} {_num(t.get('actual'))} {t.get('op')} {t.get('value')}"
            for t in gate.get("thresholds") or ()
        )
        status = str(gate.get("status"))
        lines.append(
            f"| {_cell(gate.get('name'))} | {gate.get('stage')} | {GATE_ICON.get(status, '')} {status} | "
            f"{_cell(numbers or '—')} | {_cell('; '.join(gate.get('reasons') or ()) or '—')} |"
        )
    return [*lines, ""]


def _case_rows(cases: Sequence[Mapping[str, Any]], *, max_bytes: int = MAX_BYTES) -> list[str]:
    """A table row per case, stopping once the rows add up to more than ``max_bytes``: no more of them could
    be shown (a run whose 100,000 cases fail built ~94,000 rows, ~150 MB at the peak, for a 1 MB summary)."""
    rows = []
    used = 0
    for case in cases:
        failure = case.get("failure") or {}
        where = f"`{case.get('file')}:{case.get('line', 0)}`" if case.get("file") else "—"
        rows.append(
            f"| `{_cell(case.get('case_id'))}` | {_cell(case.get('suite'))} | {_cell(failure.get('stage'))} | "
            f"`{_cell(failure.get('reason'))}` | {_cell(failure.get('message', ''))} | {where} |"
        )
        used += len(rows[-1]) + 1  # characters: never more than the UTF-8 bytes
        if used > max_bytes:
            break
    return rows


def _failures_head(count: int) -> list[str]:
    return [
        f"### Failing cases ({count})",
        "",
        "| case | suite | stage | reason | message | where |",
        "|---|---|---|---|---|---|",
    ]


def _hints(artifact: Mapping[str, Any]) -> list[str]:
    classes: dict[str, int] = {}
    for case in artifact.get("cases") or ():
        reason = (case.get("failure") or {}).get("reason")
        if case.get("status") in ("failed", "error") and reason:
            classes[str(reason)] = classes.get(str(reason), 0) + 1
    if not classes:
        return []
    lines = [
        "### Troubleshooting",
        "",
        "| failure class | cases | stage | what to inspect |",
        "|---|---|---|---|",
    ]
    for reason, n in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
        known = REASONS.get(reason)
        lines.append(
            f"| `{reason}` | {n} | {known.stage if known else '—'} | {_cell(hint(reason) or 'unclassified failure')} |"
        )
    return [*lines, ""]


def _non_gating(artifact: Mapping[str, Any], max_bytes: int = MAX_BYTES) -> list[str]:
    failing = {id(c) for c in _failing(artifact)}
    others = [
        c
        for c in artifact.get("cases") or ()
        if c.get("status") in ("failed", "error") and id(c) not in failing
    ]
    blocked = [c for c in artifact.get("cases") or () if c.get("status") == "blocked"]
    lines = []
    if others:
        lines += [f"### Non-gating failures ({len(others)}: flaky cases, required: false suites)", ""]
        lines += [
            "| case | suite | stage | reason | message | where |",
            "|---|---|---|---|---|---|",
            *_case_rows(others, max_bytes=max_bytes),  # more than max_bytes: the section is cut whole
            "",
        ]
    if blocked:
        by: dict[str, int] = {}
        for case in blocked:
            stage = str((case.get("failure") or {}).get("stage"))
            by[stage] = by.get(stage, 0) + 1
        lines += [
            f"**Blocked cases:** {', '.join(f'{n} by {s}' for s, n in by.items())} (they never ran).",
            "",
        ]
    cases = artifact.get("cases") or ()
    stopped = sum(1 for c in cases if (c.get("failure") or {}).get("reason") == "stopped_by_error")
    if stopped:
        lines += [f"**Not run:** {stopped} case(s): the run stopped at an infrastructure fault.", ""]
    shaky = [c for c in cases if c.get("status") == "passed" and derive.unstable(c)]
    if shaky:
        shown = ", ".join(
            f"`{_cell(c.get('case_id'))}` {c.get('passes')}/{c.get('attempts')}" for c in shaky[:20]
        )
        more = f" and {len(shaky) - 20} more" if len(shaky) > 20 else ""
        lines += [f"**Flaky, passed only some repeats ({len(shaky)}):** {shown}{more}.", ""]
    for skipped in artifact.get("skipped_suites") or ():
        lines += [f"**Skipped suite** `{_cell(skipped.get('suite'))}`: {_cell(skipped.get('reason'))}", ""]
    return lines


def _metrics(artifact: Mapping[str, Any]) -> list[str]:
    m = artifact.get("metrics") or {}
    lines = ["### Acceptance metrics", "", "| metric | value |", "|---|---|"]
    for key, value in m.items():
        if key != "latency_ms":
            lines.append(f"| {key} | {_num(value)} |")
    latency = m.get("latency_ms") or {}
    if latency:
        lines += ["", "| stage | p50 ms | p95 ms |", "|---|---|---|"]
        lines += [f"| {s} | {_num(v.get('p50'))} | {_num(v.get('p95'))} |" for s, v in latency.items()]
    card = artifact.get("scorecard") or {}
    if card:
        lines += [
            "",
            "| scorecard | value |",
            "|---|---|",
            *(f"| {k} | {_num(v)} |" for k, v in card.items()),
        ]
    return [*lines, ""]


def _categories(artifact: Mapping[str, Any]) -> list[str]:
    """The eval categories that had cases in this run: counts and pass rate per category."""
    rows = []
    for name, entry in (artifact.get("categories") or {}).items():
        counts = (entry or {}).get("counts") or {}
        if not counts.get("total"):
            continue
        rows.append(
            f"| {_cell(name)} | {_num(counts.get('total'))} | {_num(counts.get('passed'))} | "
            f"{_num(counts.get('failed'))} | {_num(counts.get('error'))} | {_num(counts.get('blocked'))} | "
            f"{_num(entry.get('pass_rate'))} |"
        )
    if not rows:
        return []
    head = [
        "### By eval category",
        "",
        "| category | cases | passed | failed | error | blocked | pass rate |",
    ]
    return [*head, "|---|---|---|---|---|---|---|", *rows, ""]


def _guards(artifact: Mapping[str, Any]) -> list[str]:
    failing = [g for g in artifact.get("guards") or () if not g.get("passed")]
    if not failing:
        return [f"All {len(artifact.get('guards') or ())} pre-run and in-run checks passed.", ""]
    lines = ["### Checks that failed", "", "| check | stage | mode | message |", "|---|---|---|---|"]
    lines += [
        f"| {g.get('guard')} | {g.get('stage')} | {g.get('mode')} | {_cell(g.get('message'))} |"
        for g in failing
    ]
    return [*lines, ""]


def _links(links: Mapping[str, str]) -> list[str]:
    if not links:
        return []
    return ["### Artifacts", "", *(f"- {name}: [`{path}`]({path})" for name, path in links.items()), ""]


def render(
    artifact: Mapping[str, Any], *, links: Mapping[str, str] | None = None, max_bytes: int = MAX_BYTES
) -> str:
    """The summary, at most ``max_bytes`` UTF-8 bytes."""
    failing = _failing(artifact)
    # (priority, lines): a higher number is cut first
    sections: list[tuple[int, Callable[[], list[str]]]] = [
        (0, lambda: _header(artifact)),
        (
            1,
            lambda: (
                [*_failures_head(len(failing)), *_case_rows(failing, max_bytes=max_bytes), ""]
                if failing
                else []
            ),
        ),
        (2, lambda: _hints(artifact)),
        (3, lambda: _links(links or {})),
        (4, lambda: _non_gating(artifact, max_bytes)),
        (5, lambda: _metrics(artifact)),
        (6, lambda: _categories(artifact)),
        (7, lambda: _guards(artifact)),
    ]
    built = {prio: "\n".join(fn()) for prio, fn in sections}
    order = [prio for prio, _ in sections]
    text = _join(built, order)
    if _size(text) <= max_bytes:
        return text
    notice = "\n> ⚠️ Summary truncated to fit GitHub's 1 MiB step-summary limit; the full result is in the artifacts.\n"
    dropped = []
    for prio in sorted(order, reverse=True):
        if prio <= 2 or _size(_join(built, order)) + len(notice) <= max_bytes:
            break
        dropped.append(prio)
        built[prio] = ""
    text = _join(built, order)
    if _size(text) + len(notice.encode()) > max_bytes and failing:
        built[1] = "\n".join(
            _fit_rows(failing, budget=max_bytes - _size(text) + _size(built[1]) - len(notice.encode()) - 200)
        )
        text = _join(built, order)
    if _size(text) + len(notice.encode()) > max_bytes:
        text = text.encode()[: max_bytes - len(notice.encode()) - 4].decode("utf-8", "ignore")
    return text + notice


def _fit_rows(failing: Sequence[Mapping[str, Any]], *, budget: int) -> list[str]:
    lines = _failures_head(len(failing))
    used = _size("\n".join(lines))
    rows = _case_rows(failing, max_bytes=budget)
    shown = 0
    for row in rows:
        if used + len(row.encode()) + 1 > budget - 120:
            break
        lines.append(row)
        used += len(row.encode()) + 1
        shown += 1
    lines += [
        "",
        f"_{len(failing) - shown} more failing case(s) not shown; see the JUnit report and result.json._",
        "",
    ]
    return lines


def _join(built: Mapping[int, str], order: Sequence[int]) -> str:
    return "\n".join(built[p] for p in order if built[p]) + "\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))

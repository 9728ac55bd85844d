"""The Markdown summary of a result (GitHub-flavoured; appended to ``$GITHUB_STEP_SUMMARY`` in Actions).

Sections, most important first: decision, case counts and gate table; failing cases with stage and reason;
hints per failure class; what changed since the last run; artifact links; non-gating findings; metrics; guards.
The text is kept under ``MAX_BYTES`` (GitHub refuses a larger step summary): the lowest-priority sections are cut
first, then the failing-case table is shortened, always with a notice.

Every text taken from the artifact is inert Markdown: anything that is not a plain name comes as a one-line code
span (``_code``, ``_cell``), so a response, a spec or a case file cannot put an image, a link, HTML, a heading or
a table row into the page. Only qlab's own words and the run's page are Markdown."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qlab.contracts.reasons import REASONS, hint
from qlab.report import derive

MAX_BYTES = 1_000_000  # under GitHub's step-summary limit, with a margin for the notice
GATE_ICON = {"passed": "✅", "warned": "⚠️", "blocked": "❌", "skipped": "⏭️", "error": "⛔"}


MAX_CELL = 300  # characters of outside text in one cell or span
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")
_BREAKS = re.compile(r"\r\n|[\r\n]")
_TICKS = re.compile(r"`+")


def _code(value: Any) -> str:
    """Outside text as an inline code span: on one line, cut to MAX_CELL characters, fenced by more backticks
    than it holds (so nothing in it can close the span), padded when it starts or ends with one. Inside a code
    span Markdown makes no link, image, HTML, emphasis or heading. None or empty text is ``—``."""
    text = _BREAKS.sub(" ", "" if value is None else str(value))
    if not text.strip():
        return "—"
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 1] + "…"
    fence = "`" * (max((len(run) for run in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(value: Any) -> str:
    """A table cell of outside text: ``_code`` with its pipes escaped (the table is split before the span is
    read, so an unescaped ``|`` would end the cell even inside a code span)."""
    return _code(value).replace("|", "\\|")


def _word(value: Any) -> str:
    """A name from the artifact (a gate, a stage, a suite, a status): as it is when it is a plain name, else as
    a code span (table-safe)."""
    text = "" if value is None else str(value)
    return text if _NAME.fullmatch(text) else _cell(value)


def _num(value: Any) -> str:
    """A number as the tables show it; anything else in its place (a tampered artifact) as a code span."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value) if isinstance(value, int) else _cell(value)


def _figure(value: Any, *, reached: bool) -> str:
    """``_num``, with a figure whose stage its cases never reached shown ``n/a (not reached)``, never 0."""
    return derive.NOT_REACHED if value is None and not reached else _num(value)


def _failing(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failing cases that gate (``derive.not_gating``)."""
    why_not = derive.not_gating(artifact)
    return [
        c for c in artifact.get("cases") or () if c.get("status") in ("failed", "error") and not why_not(c)
    ]


def _header(artifact: Mapping[str, Any]) -> list[str]:
    decision = artifact.get("decision") or {}
    verdict = derive.verdict(decision).upper()
    icon = {"PASS": "✅", "BLOCK": "❌", "ERROR": "⛔", "CANCELLED": "⏹️"}.get(verdict, "❔")
    shard = derive.shard_label(artifact)
    where = f" · {shard}" if shard else ""
    lines = [
        f"## {icon} qlab: {verdict} — {_word(artifact.get('project', ''))}",
        "",
        f"run {_code(artifact.get('run_id', ''))}{where} · exit code {_num(decision.get('exit_code'))}"
        + (" (advisory: --exit-zero)" if decision.get("advisory") else ""),
        "",
    ]
    lines += [f"- {_code(r)}" for r in decision.get("reasons") or ()]
    lines += ["", counts_line(artifact)]
    lines += ["", "| gate | stage | status | numbers | reasons |", "|---|---|---|---|---|"]
    for gate in artifact.get("gates") or ():
        numbers = ", ".join(_threshold(t) for t in gate.get("thresholds") or ())
        status = str(gate.get("status"))
        lines.append(
            f"| {_word(gate.get('name'))} | {_word(gate.get('stage'))} | {GATE_ICON.get(status, '')} "
            f"{_word(status)} | {numbers or '—'} | {_cell('; '.join(map(str, gate.get('reasons') or ())))} |"
        )
    return [*lines, ""]


_OPS = frozenset({">=", "<=", ">", "<", "==", "!="})


def _threshold(row: Mapping[str, Any]) -> str:
    """``metric[suite] actual op value``, each part as a name, a number or a code span."""
    suite = f"[{_word(row['suite'])}]" if row.get("suite") else ""
    op, value = row.get("op"), row.get("value")
    shown_op = op if op in _OPS else _cell(op)
    shown_value = str(value) if isinstance(value, (int, float)) else _cell(value)  # as qlab.yaml states it
    actual = (
        derive.NOT_REACHED
        if row.get("not_reached") and row.get("actual") is None
        else _num(row.get("actual"))
    )
    return f"{_word(row.get('metric'))}{suite} {actual} {shown_op} {shown_value}"


def counts_line(artifact: Mapping[str, Any]) -> str:
    """The cases by status, as every output counts them (result.json, JUnit, annotations, HTML)."""
    counts = derive.status_counts(artifact)
    total = sum(counts.values())
    failing = [c for c in artifact.get("cases") or () if c.get("status") in ("failed", "error")]
    not_gating = len(failing) - len(_failing(artifact))
    parts = " · ".join(f"{counts[s]} {s}" for s in derive.STATUSES)
    note = f" ({not_gating} of the failures do not gate)" if not_gating else ""
    return f"**Cases:** {total} — {parts}{note}"


def _named(case: Mapping[str, Any]) -> str:
    """The case's name after its id, when its file gives one."""
    return f" {_cell(case['name'])}" if case.get("name") else ""


def _case_rows(cases: Sequence[Mapping[str, Any]], *, max_bytes: int = MAX_BYTES) -> list[str]:
    """A table row per case, stopping once the rows add up to more than ``max_bytes``: no more of them could
    be shown (a run whose every case fails would otherwise build rows far beyond the summary's size)."""
    rows = []
    used = 0
    for case in cases:
        failure = case.get("failure") or {}
        where = _cell(f"{case.get('file')}:{case.get('line', 0)}") if case.get("file") else "—"
        rows.append(
            f"| {_cell(case.get('case_id'))}{_named(case)} | {_word(case.get('suite'))} | "
            f"{_word(failure.get('stage'))} | {_cell(failure.get('reason'))} | {_cell(failure.get('message', ''))} | "
            f"{where} |"
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
        # what the learn stage's shadow rank found for the case (results that improve in shadow only)
        found = ((case.get("learning") or {}).get("shadow") or {}).get("reason")
        if found:
            classes[str(found)] = classes.get(str(found), 0) + 1
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
            f"| {_cell(reason)} | {n} | {known.stage if known else '—'} | {hint(reason) or 'unclassified failure'} |"
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
        lines += [
            f"### Non-gating failures ({len(others)}: flaky and draft cases, required: false suites, failures "
            "their gate tolerated; they do not gate)",
            "",
        ]
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
            f"**Blocked cases:** {', '.join(f'{n} by {_word(s)}' for s, n in by.items())} (the block kept them "
            "from the stages after it).",
            "",
        ]
    cases = artifact.get("cases") or ()
    stopped = sum(1 for c in cases if (c.get("failure") or {}).get("reason") == "stopped_by_error")
    if stopped:
        lines += [f"**Not run:** {stopped} case(s): the run stopped at an infrastructure fault.", ""]
    shaky = [c for c in cases if c.get("status") == "passed" and derive.unstable(c)]
    if shaky:
        shown = ", ".join(
            f"{_code(c.get('case_id'))} {_num(c.get('passes'))}/{_num(c.get('attempts'))}" for c in shaky[:20]
        )
        more = f" and {len(shaky) - 20} more" if len(shaky) > 20 else ""
        lines += [f"**Flaky, passed only some repeats ({len(shaky)}):** {shown}{more}.", ""]
    for skipped in artifact.get("skipped_suites") or ():
        lines += [f"**Skipped suite** {_code(skipped.get('suite'))}: {_code(skipped.get('reason'))}", ""]
    return lines


def _metrics(artifact: Mapping[str, Any]) -> list[str]:
    m = artifact.get("metrics") or {}
    lines = ["### Acceptance metrics", "", "| metric | value |", "|---|---|"]
    unreached = derive.not_reached(artifact)
    for key, value in m.items():
        if key != "latency_ms":
            lines.append(f"| {_word(key)} | {_figure(value, reached=key not in unreached)} |")
    latency = m.get("latency_ms") or {}
    if latency:
        lines += ["", "| stage | p50 ms | p95 ms |", "|---|---|---|"]
        lines += [
            f"| {_word(s)} | {_num(v.get('p50'))} | {_num(v.get('p95'))} |"
            for s, v in latency.items()
            if isinstance(v, Mapping)
        ]
    card = artifact.get("scorecard") or {}
    if card:
        unreached = derive.not_reached(artifact, "scorecard")
        lines += [
            "",
            "| scorecard | value |",
            "|---|---|",
            *(f"| {_word(k)} | {_figure(v, reached=k not in unreached)} |" for k, v in card.items()),
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
            f"| {_word(name)} | {_num(counts.get('total'))} | {_num(counts.get('passed'))} | "
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
        f"| {_cell(derive.check_name(g))} | {_word(g.get('stage'))} | {_word(g.get('mode'))} | {_cell(g.get('message'))} |"
        for g in failing
    ]
    return [*lines, ""]


def _links(links: Mapping[str, str], run_url: str | None = None) -> list[str]:
    """The output files. Beside summary.md a relative link opens them; on a GitHub run page it would 404, so there
    they are named and the run's page (where uploaded artifacts are listed) is linked instead."""
    if not links:
        return []
    if run_url:
        named = [f"- {name}: {_code(path)}" for name, path in links.items()]
        return [
            "### Artifacts",
            "",
            *named,
            "",
            f"Uploaded artifacts are listed on [this run's page]({run_url}).",
            "",
        ]
    return [
        "### Artifacts",
        "",
        *(f"- {name}: [{_code(path)}]({path})" for name, path in links.items()),
        "",
    ]


MAX_CHANGES = 20  # cases listed per class in the "since the last run" block


def since_last_lines(change: derive.SinceLast) -> list[str]:
    """The "since the last run" block: newly failing and newly passing cases, and the metrics that moved."""
    before = f"{_code(change.previous_run)} ({change.previous_verdict.upper()})"
    if change.quiet:
        return ["### Since the last run", "", f"Nothing changed since run {before}.", ""]
    lines = [
        "### Since the last run",
        "",
        f"Compared with run {before}: **{len(change.newly_failing)} newly failing**, "
        f"**{len(change.newly_passing)} newly passing**.",
        "",
    ]
    for title, items in (("Newly failing", change.newly_failing), ("Newly passing", change.newly_passing)):
        if not items:
            continue
        shown = ", ".join(
            _code(c.case_id)
            + (f" ({_code(c.after_reason)})" if c.after_reason else "")
            + (" new" if c.kind == "new_failing" else "")
            for c in items[:MAX_CHANGES]
        )
        more = f" and {len(items) - MAX_CHANGES} more" if len(items) > MAX_CHANGES else ""
        lines += [f"- {title}: {shown}{more}"]
    if change.metrics:
        lines += ["", "| metric | last run | this run | change |", "|---|---|---|---|"]
        for label, a, b in change.metrics:
            delta = "—" if a is None or b is None else f"{b - a:+.3f}"
            lines.append(f"| {label} | {_num(a)} | {_num(b)} | {delta} |")
    return [*lines, ""]


def render(
    artifact: Mapping[str, Any],
    *,
    links: Mapping[str, str] | None = None,
    max_bytes: int = MAX_BYTES,
    run_url: str | None = None,
    previous: Mapping[str, Any] | None = None,
) -> str:
    """The summary, at most ``max_bytes`` UTF-8 bytes. ``run_url``: the GitHub run's page (the summary is shown
    there); ``previous``: the run before this one, for the "since the last run" block."""
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
        (3, lambda: since_last_lines(derive.since_last(previous, artifact)) if previous else []),
        (4, lambda: _links(links or {}, run_url)),
        (5, lambda: _non_gating(artifact, max_bytes)),
        (6, lambda: _metrics(artifact)),
        (7, lambda: _categories(artifact)),
        (8, lambda: _guards(artifact)),
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


def trend(runs: Sequence[Mapping[str, Any]]) -> str:
    """The runs of a series, oldest first, one row each: verdict, case counts and every acceptance metric (``qlab
    report --trend``). A metric a run has no data for is ``—``, one its cases never reached ``n/a (not reached)``,
    never 0."""
    keys = [(key, label) for key, label in derive.ACCEPTANCE_METRICS]
    head = ["run", "started", "verdict", "cases", "passed", "failed", *(label for _, label in keys)]
    lines = [
        f"## qlab trend — {len(runs)} run(s)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for run in runs:
        counts = derive.status_counts(run)
        metrics = derive.as_mapping(run.get("metrics"))
        unreached = derive.not_reached(run)
        cells = [
            _cell(run.get("run_id")),
            _cell(run.get("started_at")),
            derive.verdict(run.get("decision")).upper(),
            str(sum(counts.values())),
            str(counts["passed"]),
            str(counts["failed"] + counts["error"]),
            *(derive.figure(metrics.get(key), reached=key not in unreached) for key, _ in keys),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if len(runs) >= 2:
        lines += ["", *since_last_lines(derive.since_last(runs[-2], runs[-1]))]
    return "\n".join(lines).rstrip() + "\n"

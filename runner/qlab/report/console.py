"""The console view of a run: a live progress line per stage (only on a TTY, never in CI or with ``--quiet``),
then the final gate table and the decision. Colour only on a TTY and never when ``NO_COLOR`` is set
(https://no-color.org). The command hands in the stream; this module only formats.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol, TextIO

from qlab.report import derive

STATUS_COLOR = {
    "passed": "32",
    "warned": "33",
    "blocked": "31",
    "skipped": "90",
    "error": "35",
    "pass": "32",
    "block": "31",
}


class Event(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def gate(self) -> str: ...
    @property
    def stage(self) -> str: ...
    @property
    def cases(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def duration_ms(self) -> float: ...


def use_color(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return "NO_COLOR" not in env and _isatty(stream)


def live(stream: TextIO, *, quiet: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Progress lines are drawn on an interactive terminal only: not in CI, not with --quiet."""
    env = os.environ if environ is None else environ
    return not quiet and _isatty(stream) and not env.get("CI") and env.get("GITHUB_ACTIONS") != "true"


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def paint(text: str, status: str, *, color: bool) -> str:
    code = STATUS_COLOR.get(status)
    return f"\x1b[{code}m{text}\x1b[0m" if color and code else text


class Progress:
    """Draws ``▸ gate (stage) N cases …`` while a stage runs and replaces it with its outcome."""

    def __init__(self, stream: TextIO, *, enabled: bool, color: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.color = color

    def __call__(self, event: Event) -> None:
        if not self.enabled:
            return
        if event.kind == "stage_start":
            cases = f" {event.cases} case(s)" if event.cases else ""
            self.stream.write(f"\r\x1b[2K▸ {event.gate} ({event.stage}){cases} …")
        elif event.kind == "stage_end":
            status = paint(event.status, event.status, color=self.color)
            self.stream.write(
                f"\r\x1b[2K  {event.gate:<12} {event.stage:<8} {status} {event.duration_ms / 1000:.2f}s\n"
            )
        self.stream.flush()


def gate_table(artifact: Mapping[str, Any], *, color: bool = False) -> str:
    """The final gate table and the decision line."""
    rows = [("gate", "stage", "status", "numbers")]
    for gate in artifact.get("gates") or ():
        numbers = ", ".join(
            f"{t.get('metric')}{_where(t)}={derive.threshold_actual(t, empty='n/a')}{t.get('op')}{t.get('value')}"
            for t in gate.get("thresholds") or ()
        )
        rows.append((str(gate.get("name")), str(gate.get("stage")), str(gate.get("status")), numbers))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for index, (name, stage, status, numbers) in enumerate(rows):
        cell = status.ljust(widths[2])
        if index:
            cell = paint(cell, status, color=color)
        lines.append(f"{name.ljust(widths[0])}  {stage.ljust(widths[1])}  {cell}  {numbers}".rstrip())
    decision = artifact.get("decision") or {}
    verdict = derive.verdict(decision)
    counts: dict[str, int] = {}
    flaky = 0
    for case in artifact.get("cases") or ():
        counts[str(case.get("status"))] = counts.get(str(case.get("status")), 0) + 1
        flaky += case.get("status") == "passed" and derive.unstable(case)
    note = f" ({flaky} flaky: not every repeat passed)" if flaky else ""
    tally = (
        ", ".join(f"{n} {s}{note if s == 'passed' else ''}" for s, n in sorted(counts.items())) or "no cases"
    )
    lines.append("")
    for skipped in artifact.get("skipped_suites") or ():
        lines.append(f"skipped suite {skipped.get('suite')}: {skipped.get('reason')}")
    lines.append(
        f"{paint(verdict.upper(), verdict, color=color)}: {tally} (exit {decision.get('exit_code')})"
    )
    lines += [f"  - {r}" for r in (decision.get("reasons") or ())[:10]]
    return "\n".join(lines)


def _where(row: Mapping[str, Any]) -> str:
    return f"[{row['suite']}]" if row.get("suite") else ""


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def since_last(change: derive.SinceLast, *, shown: int = 10) -> str:
    """The "since the last run" lines: newly failing and newly passing cases, the acceptance metrics that moved."""
    head = f"since the last run ({change.previous_run}, {change.previous_verdict.upper()}):"
    if change.quiet:
        return f"{head} nothing changed"
    lines = [f"{head} {len(change.newly_failing)} newly failing, {len(change.newly_passing)} newly passing"]
    for label, items in (("newly failing", change.newly_failing), ("newly passing", change.newly_passing)):
        if items:
            names = ", ".join(c.case_id for c in items[:shown]) + (" …" if len(items) > shown else "")
            lines.append(f"  {label}: {names}")
    for metric, before, after in change.metrics:
        delta = "" if before is None or after is None else f" ({after - before:+.3f})"
        lines.append(f"  {metric}: {_num(before)} → {_num(after)}{delta}")
    return "\n".join(lines)

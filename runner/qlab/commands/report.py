"""``qlab report RESULT.json [MORE.json ...] [--html OUT] [--markdown OUT|-] [--junit OUT] [--format NAME[=OUT]]
[--baseline A.json] [--trend]``: render stored result artifacts; it never runs a stage.

With several results the series is ordered by ``started_at`` (when every result has one) and the latest is the
run reported in full: the HTML report adds the promotion diff against the run before it (or ``--baseline``) and
the trends of every metric. Markdown, JUnit and ``--format`` (any format of ``qlab.report``) describe the latest
run only. Without an output option the Markdown summary goes to stdout.
``--trend`` adds the runs ``qlab run`` kept in the ``history/`` folder beside each result (``output.history``):
the HTML trends plot them, the summary says what changed since the run before, and alone it prints the trend
table (one row per run: verdict, counts, acceptance metrics).

Exit codes: 0 written, 2 an unreadable or invalid artifact (the message says which file and where).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from qlab import report
from qlab.adapters.atomic import write_atomic
from qlab.commands.examples import with_examples
from qlab.contracts.errors import EXIT_PASS, InputError, UsageError
from qlab.report import junit as junit_report
from qlab.report import markdown as markdown_report
from qlab.report.html import render_html
from qlab.run import history
from qlab.run.artifact import read
from qlab.run.verify import verified

STDOUT = Path("-")


@dataclass(frozen=True, slots=True)
class Written:
    """What ``write_reports`` produced: ``(format, path)`` pairs; ``-`` is stdout."""

    files: tuple[tuple[str, Path], ...]
    runs: int


def order_runs(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Oldest first by ``started_at`` when every run has one (ISO-8601 UTC sorts as text); else as given."""
    stamps = [r.get("started_at") for r in results]
    if all(isinstance(s, str) and s for s in stamps):
        return [
            r for _, r in sorted(enumerate(results), key=lambda item: (str(item[1]["started_at"]), item[0]))
        ]
    return list(results)


def _emit(path: Path, text: str) -> None:
    if path == STDOUT:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise InputError(f"{path}: cannot be written: {exc.strerror or exc}") from None


def read_result(path: Path) -> dict[str, Any]:
    """A result as its cases give it (``qlab.run.verify``): one whose stored verdict or figures disagree with its
    case records is refused (exit 2)."""
    return verified(read(path), str(path))


def with_history(results: Sequence[Path]) -> list[dict[str, Any]]:
    """The results, and the runs kept in the history folder beside each (``qlab.run.history``), once per run id.
    A kept run whose record disagrees with its cases is passed over, as an unreadable one is."""
    runs: dict[str, dict[str, Any]] = {}
    for path in results:
        kept = []
        for run in history.runs(history.folder_of(path)):
            with contextlib.suppress(InputError):
                kept.append(verified(run, "history"))
        for run in [*kept, read_result(path)]:
            runs.setdefault(str(run.get("run_id") or f"#{len(runs)}"), run)
    return list(runs.values())


def write_reports(
    results: Sequence[Path],
    *,
    html: Path | None = None,
    markdown: Path | None = None,
    junit: Path | None = None,
    baseline: Path | None = None,
    title: str | None = None,
    trend: bool = False,
    formats: Sequence[tuple[str, Path]] = (),
) -> Written:
    """Load ``results`` (and ``baseline``), render the requested formats and write them atomically. ``trend``: the
    series also holds the runs kept in each result's history folder; without an output option its trend table
    goes to stdout. ``formats``: ``(name, path)`` pairs of registered report formats (``qlab.report``), each
    rendered from the latest run.

    Raises ``InputError`` (exit 2) for an unreadable or invalid artifact, before anything is written.
    """
    if not results:
        raise UsageError("give at least one result artifact (result.json)")
    runs = order_runs(with_history(results) if trend else [read_result(path) for path in results])
    base = read_result(baseline) if baseline is not None else None
    latest = runs[-1]
    written: list[tuple[str, Path]] = []
    renderers = [
        (name, report.format_for(name), path) for name, path in formats
    ]  # unknown names before reading
    if html is None and markdown is None and junit is None and not formats:
        if trend:
            _emit(STDOUT, markdown_report.trend([*([base] if base is not None else []), *runs]))
            return Written(files=(("trend", STDOUT),), runs=len(runs) + (1 if base is not None else 0))
        markdown = STDOUT
    if html is not None:
        _emit(html, render_html(runs, baseline=base, title=title))
        written.append(("html", html))
    if markdown is not None:
        previous = base if base is not None else runs[-2] if trend and len(runs) >= 2 else None
        _emit(markdown, markdown_report.render(latest, previous=previous))
        written.append(("markdown", markdown))
    if junit is not None:
        _emit(junit, junit_report.render(latest))
        written.append(("junit", junit))
    for name, render, path in renderers:
        _emit(path, render(latest))
        written.append((name, path))
    return Written(files=tuple(written), runs=len(runs) + (1 if base is not None else 0))


_OUT = click.Path(dir_okay=False, writable=True, path_type=Path)


def _formats(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[tuple[str, Path]]:
    """``NAME`` or ``NAME=OUT`` -> (name, path); ``-`` (or no ``=OUT``) is stdout. Unknown names are usage errors."""
    pairs = []
    for value in values:
        name, _, out = value.partition("=")
        try:
            report.format_for(name)
        except UsageError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
        pairs.append((name, Path(out) if out else STDOUT))
    return pairs


@click.command(
    "report", context_settings={"help_option_names": ["-h", "--help"]}, epilog=with_examples("report")
)
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--html", "html_out", type=_OUT, help="Write ONE self-contained HTML file (no network needed).")
@click.option(
    "--markdown",
    "markdown_out",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=Path),
    help="Write the Markdown summary of the latest run ('-' for stdout; the default without other outputs).",
)
@click.option("--junit", "junit_out", type=_OUT, help="Write the JUnit XML of the latest run.")
@click.option(
    "--format",
    "formats",
    multiple=True,
    metavar="NAME[=OUT]",
    callback=_formats,
    help="Render the latest run in report format NAME (junit, markdown, or one a plugin package adds) into OUT "
    "(default '-': stdout). Repeatable.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Compare the latest run with this result (the HTML promotion diff) and start the trend series with it.",
)
@click.option("--title", help="Title of the HTML page (default: 'qlab report: <project>').")
@click.option(
    "--trend",
    is_flag=True,
    help="Add the runs kept in the history folder beside each result (output.history): the HTML trends and the "
    "summary's 'since the last run' use them; alone, print the trend table.",
)
def command(
    results: tuple[Path, ...],
    html_out: Path | None,
    markdown_out: Path | None,
    junit_out: Path | None,
    baseline: Path | None,
    title: str | None,
    trend: bool,
    formats: list[tuple[str, Path]],
) -> int:
    """Render result artifacts as an HTML report, a Markdown summary or JUnit XML.

    With two or more results (oldest to newest by start time), the HTML report adds the promotion diff
    (fixed, regressed, still failing, new per case) and the trend of every metric.
    """
    done = write_reports(
        results,
        html=html_out,
        markdown=markdown_out,
        junit=junit_out,
        baseline=baseline,
        title=title,
        trend=trend,
        formats=formats,
    )
    for kind, path in done.files:
        if path != STDOUT:
            click.echo(f"{kind}: {path} ({done.runs} run{'s' if done.runs != 1 else ''})", err=True)
    return EXIT_PASS

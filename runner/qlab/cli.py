"""The command line: parse options, call the library, render, map to an exit code. Nothing else.

Subcommands live in ``qlab.commands.<name>`` and are imported only when invoked, so ``qlab --version`` stays
fast (no httpx, no jsonschema). Exit codes are decided in ``main`` from the error tree in ``qlab.contracts.errors``.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import re
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from qlab.adapters import scrub
from qlab.commands import _timings as timings
from qlab.contracts.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED, QlabError, Terminated
from qlab.version import __version__

# "file:line:col: message", the form of every located message (a file name without ":" and a 1-based position)
_LOCATED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$", re.S)

# name -> (module, one-line help). The module exposes ``command: click.Command``.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("qlab.commands.run", "Run the gates in order and decide PASS, BLOCK or ERROR."),
    "validate": ("qlab.commands.validate", "Validate qlab.yaml and every case file."),
    "init": ("qlab.commands.init", "Scaffold a project: the demo, or your OpenAPI spec with measured gates."),
    "schema": ("qlab.commands.schema", "Print one of qlab's JSON Schemas; without a name, list them."),
    "build": ("qlab.commands.build", "Build the collection and print its readiness report."),
    "search": ("qlab.commands.search", "Search the collection for one query, with the score breakdown."),
    "plan": ("qlab.commands.plan", "Select a target and synthesize a plan for one query."),
    "merge": ("qlab.commands.merge", "Merge shard results into one result, JUnit and summary."),
    "report": ("qlab.commands.report", "Render a result artifact (HTML, Markdown, JUnit)."),
    "promote": ("qlab.commands.promote", "Compare a baseline and a candidate run under a promotion rule."),
    "learn": ("qlab.commands.learn", "List, shadow-rank and accept learning suggestions."),
    "propose-case": ("qlab.commands.propose_case", "Turn a real failure into a regression case proposal."),
    "accept-case": ("qlab.commands.accept_case", "Move an approved proposal into the regression suite."),
    "release": ("qlab.commands.release", "Run a skill's five release gates."),
    "approve": ("qlab.commands.approve", "Record a human review approval bound to a result digest."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (module, _) in COMMANDS.items() if _available(module))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _available(entry[0]):
            return None
        command: click.Command = importlib.import_module(entry[0]).command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="qlab")
def cli() -> None:
    """qlab: decide whether an API collection, or a skill built on one, is fit to ship.

    Exit codes: 0 pass, 1 blocked by a gate, 2 usage or invalid input, 3 internal error, 130 interrupted,
    143 terminated (SIGTERM).
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point. Maps every outcome to the documented exit code; no traceback reaches the user, and no secret
    the command learnt reaches the console (``qlab.adapters.scrub.console``)."""
    timings.mark("cli")
    with _sigterm_as_interrupt() as terminated, scrub.console(), _rare_full_collections():
        code = _main(argv)
        if code == EXIT_INTERRUPTED and terminated:
            code = EXIT_TERMINATED
    timings.mark("exit_called")
    sys.exit(code)


@contextmanager
def _rare_full_collections() -> Iterator[None]:
    """The cyclic garbage collector's full collections a hundred times rarer while a command runs (younger objects
    are collected as usual): what a command loads, builds or reads lives until it ends, and each full collection
    would walk all of it again."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], thresholds[2] * 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _main(argv: list[str] | None) -> int:
    try:
        code: Any = cli.main(args=argv, prog_name="qlab", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:  # usage errors: exit 2
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except QlabError as exc:
        _report_error(exc)
        return exc.exit_code
    except Exception as exc:  # a bug: say so, and how to report it
        _report_internal(exc)
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0


@contextmanager
def _sigterm_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM raises ``Terminated`` (a KeyboardInterrupt) in the main thread, so it takes Ctrl-C's path (cleanup steps, dev servers
    stopped); the list it yields is non-empty once SIGTERM arrived. The previous handler is restored after."""
    terminated: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        terminated.append(signum)
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding caller): leave signals alone
        yield terminated
        return
    try:
        yield terminated
    finally:
        signal.signal(signal.SIGTERM, previous)


def _report_error(exc: QlabError) -> None:
    if exc.exit_code == EXIT_INTERNAL:
        _report_internal(exc)
        return
    click.echo(f"error: {exc}" if "\n" not in str(exc) else str(exc), err=True)
    _annotate(exc)


def _annotate(exc: QlabError) -> None:
    """In GitHub Actions: the error as ``::error file=…,line=…,col=…::`` annotations on the file and line it
    names (every problem of an invalid qlab.yaml or case file), so the pull request shows it where it is."""
    from qlab.report import github

    if not github.in_actions():
        return
    from pathlib import Path

    from qlab.commands.render import workspace
    from qlab.contracts.errors import ConfigError

    if isinstance(exc, ConfigError):
        items = [
            (d.file, d.line, d.col, d.severity, f"{d.json_path}: {d.message}" if d.json_path else d.message)
            for d in exc.diagnostics
        ]
    else:
        located = _LOCATED.match(str(exc))
        items = (
            [(located["file"], int(located["line"]), int(located["col"]), "error", located["rest"])]
            if located
            else [("", 0, 0, "error", str(exc))]
        )
    for line in github.config_annotations(items, workspace=workspace(), cwd=Path.cwd()):
        scrub.workflow_command(line)


def _report_internal(exc: BaseException) -> None:
    import traceback

    click.echo(
        f"internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in qlab. Please report it with the command you ran; set QLAB_DEBUG=1 to see the traceback.",
        err=True,
    )
    import os

    if os.environ.get("QLAB_DEBUG"):
        traceback.print_exc()

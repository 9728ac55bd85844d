"""``qlab run``: parse the options, call ``qlab.run.api.run_project``, render the outcome, return the exit code.

With no argument it runs the nearest ``qlab.yaml`` (searched upwards to the repository root): in this
repository, the demo project, starting the demo server itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from qlab.adapters.scrub import SecretSet, watch_console
from qlab.commands import _timings as timings
from qlab.commands.examples import with_examples
from qlab.commands.render import check_ci_files, render_outcome
from qlab.report import console
from qlab.run.api import run_project
from qlab.run.options import RunEvent
from qlab.run.selection import SelectionSpec
from qlab.run.shard import ShardSpec


@click.command(
    "run",
    help="Run the gates in order (build → search → select → plan → execute → learn) and decide PASS (0), BLOCK (1) or ERROR (2).",
    epilog=with_examples("run"),
)
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
@click.option("--suite", "suites", multiple=True, help="Only these suites (repeatable).")
@click.option("--stage", "stages", multiple=True, help="Only the gates of these stages and their suites.")
@click.option("--case", "cases", multiple=True, help="Only these case ids or fnmatch patterns.")
@click.option("--tag", "tags", multiple=True, help="Only cases with one of these tags.")
@click.option(
    "--cadence", "cadences", multiple=True, help="Only suites with this cadence (e.g. every_search_change)."
)
@click.option(
    "--last-failed",
    is_flag=True,
    help="Only the cases that did not pass in the last result in the output folder.",
)
@click.option(
    "--shard",
    "shard_spec",
    metavar="I/N",
    help="Run shard I of N (1-based); merge the results with qlab merge.",
)
@click.option(
    "--durations",
    "durations_path",
    type=click.Path(dir_okay=False),
    help="{case_id: seconds} JSON to balance --shard.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Output folder (default: output.dir of qlab.yaml).",
)
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Where to write the JUnit XML.")
@click.option("--exit-zero", is_flag=True, help="Advisory mode: exit 0 when blocked (still 2 on errors).")
@click.option(
    "--keep-must-pass",
    is_flag=True,
    help="Exit 2 when --suite, --stage, --case or --tag leaves out a must-pass suite (category regression or "
    "must_pass: true) a run would judge; the GitHub Action always passes it.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines; only the decision.")
@click.option("--no-server", is_flag=True, help="Do not start the environments' dev servers.")
@click.option(
    "--target-version",
    help="The version of what the run evaluates (e.g. member-delivery-skill@1.2.0); overrides target_version in qlab.yaml.",
)
def command(
    config_path: str | None,
    suites: tuple[str, ...],
    stages: tuple[str, ...],
    cases: tuple[str, ...],
    tags: tuple[str, ...],
    cadences: tuple[str, ...],
    last_failed: bool,
    shard_spec: str | None,
    durations_path: str | None,
    out_dir: str | None,
    junit_path: str | None,
    exit_zero: bool,
    quiet: bool,
    no_server: bool,
    target_version: str | None = None,
    keep_must_pass: bool = False,
) -> int:
    timings.mark("imports")
    shard = ShardSpec.parse(shard_spec) if shard_spec else None
    check_ci_files()  # $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY take the outcome: exit 2 now, not after the run
    secrets = SecretSet()  # every writer, the console included, scrubs with it
    watch_console(secrets)
    stderr = sys.stderr
    progress = console.Progress(
        stderr, enabled=console.live(stderr, quiet=quiet), color=console.use_color(stderr)
    )
    result = run_project(
        config_path,
        selection=SelectionSpec(
            suites, stages, cases, tags, cadences, last_failed, keep_must_pass=keep_must_pass
        ),
        shard=shard,
        durations=durations_path,
        out_dir=out_dir,
        junit=junit_path,
        target_version=target_version,
        exit_zero=exit_zero,
        start_servers=not no_server,
        secrets=secrets,
        on_event=_timed(progress) if timings.enabled() else progress,
    )
    render_outcome(
        result.artifact,
        result.paths,
        quiet=quiet,
        secrets=secrets,
        config_path=result.config,
        previous=result.previous,
    )
    timings.mark("outputs")
    return result.exit_code


# QLAB_TIMINGS: the phase each event ends
_PHASES = {"project_loaded": "load", "run_end": "artifact"}


def _timed(progress: Callable[[RunEvent], None]) -> Callable[[RunEvent], None]:
    """The console's progress, plus a timing mark at the end of each phase and gate (``QLAB_TIMINGS``)."""

    def on_event(event: RunEvent) -> None:
        if event.kind == "stage_end":
            timings.mark(f"gate:{event.stage}")
        elif event.kind in _PHASES:
            timings.mark(_PHASES[event.kind])
        progress(event)

    return on_event

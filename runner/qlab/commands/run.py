"""``qlab run``: parse the options, call ``qlab.run.runner.run``, write and render the outputs, return the exit code.

With no argument it runs the nearest ``qlab.yaml`` (searched upwards to the repository root): in this
repository, the demo project, starting the demo server itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from qlab.commands import _timings as timings
from qlab.commands.examples import with_examples
from qlab.commands.render import RunLog, check_ci_files, render_outcome
from qlab.errors import QlabError
from qlab.governance.learning.reviews import decisions as review_decisions
from qlab.project import load_project
from qlab.report import console
from qlab.run import artifact as artifact_io
from qlab.run import history
from qlab.run.heap import settle
from qlab.run.options import RunCancelled, RunEvent, RunOptions
from qlab.run.outputs import (
    RunningStatus,
    clean_artifact,
    output_paths,
    prepare,
    release,
    rescrub_logs,
    stage_outputs,
    write_outputs,
)
from qlab.run.runner import run
from qlab.run.selection import SelectionSpec
from qlab.run.shard import ShardSpec, load_durations
from qlab.scrub import SecretSet, watch_console

PREVIOUS_MAX_BYTES = 64 * 1024 * 1024  # a larger previous result is read only for --last-failed


def _learner(artifact: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The learning loop (``run_learning``), imported when a learn gate runs: most runs have none."""
    from qlab.governance.learning.suggest import run_learning

    return run_learning(artifact, **kwargs)


def _previous(path: Path, *, needed: bool, wanted: bool) -> dict[str, Any] | None:
    """The last result in the output folder: --last-failed needs it (read and checked whole); the learn gate
    (``wanted``) compares with it (the signals that need two runs) as ``history.for_learning`` reads it, line by
    line, or whole when it is in another layout and small enough to read at no real cost. An unreadable one is
    compared with nothing. A run with neither does not read it."""
    if not path.is_file() or not (needed or wanted):
        return None
    if needed:
        return artifact_io.read(path)
    try:
        try:
            data = history.for_learning(path)
            data["_lean"] = True  # cut to the comparison fields: a proposal reads its case again (by _path)
        except (ValueError, UnicodeDecodeError):
            if path.stat().st_size > PREVIOUS_MAX_BYTES:
                return None
            data = artifact_io.read(path)
    except (OSError, QlabError):
        return None  # not a result this qlab reads: the learn gate compares with nothing
    data["_path"] = str(path)  # a proposal reads its digest (and its case's whole record) from the file
    return data


class _Later:
    """The previous run, read for the learn gate when it starts (``RunOptions.read_previous``), once; ``read``:
    what was read (None before the call, or when nothing could be)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read: dict[str, Any] | None = None
        self.called = False

    def __call__(self) -> dict[str, Any] | None:
        if not self.called:
            self.called = True
            self.read = _previous(self.path, needed=False, wanted=True)
        return self.read


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
    durations = load_durations(durations_path) if durations_path else None
    project = load_project(config_path)
    settle()  # the loaded cases live until the command ends
    timings.mark("load")
    config = project.config
    paths = output_paths(config, out_dir=out_dir, junit_path=junit_path, shard=shard)
    prepare(paths)  # a bad --out/--junit or $GITHUB_OUTPUT is exit 2 before any case runs, not after
    # the eval run's status "running", on disk while it goes on (not for a shard: they share a folder)
    running = RunningStatus(paths.result.parent) if shard is None else None
    try:
        check_ci_files()
        # --last-failed needs the previous result; the learn gate's two-run signals compare with it
        learns = any(g.stage == "learn" for g in config.gates)
        last = output_paths(config, out_dir=out_dir).result
        # --last-failed selects from it before any case runs; the learn gate reads it when it starts
        previous = _previous(last, needed=True, wanted=learns) if last_failed else None
        later = _Later(last) if learns and previous is None else None
        secrets = SecretSet()  # every writer below, the console included, scrubs with it
        watch_console(secrets)
        stderr = sys.stderr
        progress = console.Progress(
            stderr, enabled=console.live(stderr, quiet=quiet), color=console.use_color(stderr)
        )
        log_path = paths.result.parent / "run.log"
        shown = _timed(progress) if timings.enabled() else progress
        with RunLog(log_path, secrets) as log:
            options = RunOptions(
                selection=SelectionSpec(
                    suites, stages, cases, tags, cadences, last_failed, keep_must_pass=keep_must_pass
                ),
                shard=shard,
                durations=durations,
                previous=previous,
                read_previous=later,
                target_version=target_version,
                exit_zero=exit_zero,
                start_servers=not no_server,
                log_dir=paths.result.parent,
                emit=lambda art: stage_outputs(art, paths, secrets=secrets),
                reviews=review_decisions(config),
                learner=_learner,
                on_event=shown if running is None else _both(shown, running),
                log=log,
                secrets=secrets,
            )
            try:
                outcome = run(project, options=options)
            except RunCancelled as cancelled:  # SIGINT/SIGTERM: the partial result is written like any other
                outcome = cancelled.outcome
            finally:
                # the logs were scrubbed line by line with the secrets known then: once more with all of them
                rescrub_logs([log_path, *paths.result.parent.glob("server-*.log")], secrets)
        timings.mark("artifact")
        artifact = clean_artifact(outcome.artifact, secrets)
        # the run history (not for a shard: its merge keeps the run's): the run before this one, then this one
        kept = history.folder_of(paths.result) if shard is None and config.output.history > 0 else None
        read = previous if later is None else later.read
        before = history.latest_brief(kept, read=read, like=artifact) if kept is not None else None
        write_outputs(artifact, paths, secrets=secrets, previous=before)
        if kept is not None:
            history.keep(paths.result, str(artifact.get("run_id")), kept, limit=config.output.history)
        _store_suggestions(project.config, artifact)  # none in a cancelled run: its learn gate never ran
        render_outcome(
            artifact, paths, quiet=quiet, secrets=secrets, config_path=config.path, previous=before
        )
        timings.mark("outputs")
        return outcome.exit_code
    finally:
        if running is not None:
            running.finish()  # the result, when there is one, says how the run ended
        release(paths)


def _both(*watchers: Callable[[RunEvent], None]) -> Callable[[RunEvent], None]:
    def on_event(event: RunEvent) -> None:
        for watch in watchers:
            watch(event)

    return on_event


def _timed(progress: Callable[[RunEvent], None]) -> Callable[[RunEvent], None]:
    """The console's progress, plus a timing mark at the end of each gate (``QLAB_TIMINGS``)."""

    def on_event(event: RunEvent) -> None:
        if event.kind == "stage_end":
            timings.mark(f"gate:{event.stage}")
        progress(event)

    return on_event


def _store_suggestions(config: Any, artifact: dict[str, Any]) -> None:
    """Merge the learn stage's suggestions into the suggestions file as ``pending_review`` (nothing is applied:
    ``qlab learn accept`` is the only way a suggestion reaches the reviewed aliases file)."""
    learned = artifact.get("stages", {}).get("learn", {}).get("details", {}).get("suggestions")
    if learned:
        from qlab.governance.learning import suggestions

        suggestions.save(suggestions.suggestions_path(config), learned)

"""``qlab run`` as one library call: :func:`run_project` runs a project's gates and writes everything the command
writes, then returns a :class:`RunResult` (the artifact, its verdict and exit code, the files written).

What it writes: the result, JUnit XML and Markdown summary as one set (``qlab.run.outputs``), ``run.log`` and
the dev servers' logs (scrubbed again at the end with every secret the run learnt), ``status.json`` while the run
goes on, the run history, and the learn gate's suggestions (``pending_review``) in the suggestions file. It
prints nothing and never exits: the CLI (``qlab.commands.run``) parses the options, calls it, renders the
outcome and exits with ``RunResult.exit_code``.

It sits above governance (ARCHITECTURE.md, row "api"): it hands the run the learning loop and the human
decisions on record, so the run itself never imports governance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qlab.adapters.scrub import SecretSet
from qlab.governance.learning import reviews, suggestions
from qlab.project import Project, load_project
from qlab.report import derive
from qlab.run import history
from qlab.run.log import RunLog
from qlab.run.options import RunCancelled, RunEvent, RunOptions
from qlab.run.outputs import (
    OutputPaths,
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


@dataclass(frozen=True, slots=True)
class RunResult:
    """What :func:`run_project` did."""

    artifact: dict[str, Any]  # the result artifact as written (scrubbed): schemas/result.schema.json
    exit_code: int  # 0 pass, 1 block, 2 error (could not decide), 130/143 cancelled by SIGINT/SIGTERM
    paths: OutputPaths  # the result, JUnit and summary files
    written: tuple[Path, ...]  # every file the run wrote or updated
    config: Path  # the qlab.yaml that ran
    previous: Mapping[str, Any] | None = None  # the run before this one, as the history keeps it

    @property
    def decision(self) -> str:
        """``pass``, ``block``, ``error`` or ``cancelled``: the word every report prints for the run."""
        return derive.verdict(self.artifact.get("decision"))


def run_project(
    config: str | Path | None = None,
    *,
    selection: SelectionSpec | None = None,
    shard: ShardSpec | None = None,
    durations: str | Path | None = None,
    out_dir: str | Path | None = None,
    junit: str | Path | None = None,
    target_version: str | None = None,
    exit_zero: bool = False,
    start_servers: bool = True,
    secrets: SecretSet | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
) -> RunResult:
    """Run the project of ``config`` (a qlab.yaml; None: searched upwards from the working directory) as ``qlab
    run`` does, and write its outputs.

    ``selection``: which suites, stages, cases, tags or cadences run (``--suite``, ``--last-failed``, ...).
    ``shard``: run shard I of N (``--shard``); ``durations``: a ``{case_id: seconds}`` JSON file balancing it.
    ``out_dir``/``junit``: where the outputs go (default: ``output`` in qlab.yaml). ``target_version``: what the
    run evaluates, instead of qlab.yaml's. ``exit_zero``: advisory, a blocked run exits 0. ``start_servers``:
    False leaves the environments' dev servers to someone else (``--no-server``). ``secrets``: the set the
    caller scrubs its own output with (the run adds every secret it learns); ``on_event``: progress
    (``RunEvent``).

    Raises ``InputError`` (``ConfigError``, ``UsageError``: ``exit_code`` 2) when the run cannot start: an
    invalid project, no case selected, an unwritable output folder. A run stopped by SIGINT or SIGTERM still
    writes its partial result and returns it (``decision`` ``cancelled``, exit code 130 or 143).
    """
    watch = on_event or (lambda _event: None)
    chosen = selection or SelectionSpec()
    durations_map = load_durations(durations) if durations is not None else None
    project = load_project(config)
    watch(RunEvent("project_loaded"))
    paths = output_paths(project.config, out_dir=out_dir, junit_path=junit, shard=shard)
    prepare(paths)  # a bad out_dir or junit path is exit 2 before any case runs, not after
    # the run's status "running", on disk while it goes on (not for a shard: shards share a folder)
    running = RunningStatus(paths.result.parent) if shard is None else None
    try:
        return _run(
            project,
            paths,
            secrets if secrets is not None else SecretSet(),
            out_dir=out_dir,
            on_event=watch if running is None else _both(watch, running),
            options=RunOptions(
                selection=chosen,
                shard=shard,
                durations=durations_map,
                target_version=target_version,
                exit_zero=exit_zero,
                start_servers=start_servers,
                log_dir=paths.result.parent,
                reviews=reviews.decisions(project.config),
                learner=_learner,
            ),
        )
    finally:
        if running is not None:
            running.finish()  # the result, when there is one, says how the run ended
        release(paths)


def _run(
    project: Project,
    paths: OutputPaths,
    secrets: SecretSet,
    *,
    out_dir: str | Path | None,
    on_event: Callable[[RunEvent], None],
    options: RunOptions,
) -> RunResult:
    config = project.config
    learns = any(g.stage == "learn" for g in config.gates)
    last = output_paths(config, out_dir=out_dir).result
    # --last-failed selects from the last result before any case runs; the learn gate reads it when it starts
    needed = options.selection.last_failed
    previous = history.previous_result(last, needed=True, wanted=learns) if needed else None
    later = history.LaterResult(last) if learns and previous is None else None
    folder = paths.result.parent
    logs = [folder / "run.log"]
    with RunLog(logs[0], secrets) as log:
        options = replace(
            options,
            previous=previous,
            read_previous=later,
            emit=lambda art: stage_outputs(art, paths, secrets=secrets),
            on_event=on_event,
            log=log,
            secrets=secrets,
        )
        try:
            outcome = run(project, options=options)
        except RunCancelled as cancelled:  # SIGINT/SIGTERM: the partial result is written like any other
            outcome = cancelled.outcome
        finally:
            # the logs were scrubbed line by line with the secrets known then: once more with all of them
            logs += folder.glob("server-*.log")
            rescrub_logs(logs, secrets)
    artifact = clean_artifact(outcome.artifact, secrets)
    run_id = str(artifact.get("run_id"))
    on_event(RunEvent("run_end", status=derive.verdict(artifact.get("decision")), run_id=run_id))
    # the run history (not for a shard: its merge keeps the run's): the run before this one, then this one
    kept = history.folder_of(paths.result) if options.shard is None and config.output.history > 0 else None
    read = previous if later is None else later.read
    before = history.latest_brief(kept, read=read, like=artifact) if kept is not None else None
    written: list[Path | None] = [*write_outputs(artifact, paths, secrets=secrets, previous=before), *logs]
    if kept is not None:
        written.append(history.keep(paths.result, run_id, kept, limit=config.output.history))
    written.append(suggestions.store_learned(config, artifact))  # none in a cancelled run: no learn gate ran
    return RunResult(
        artifact=artifact,
        exit_code=outcome.exit_code,
        paths=paths,
        written=tuple(dict.fromkeys(p for p in written if p is not None)),
        config=Path(config.path),
        previous=before,
    )


def _learner(artifact: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The learning loop (``run_learning``), imported when a learn gate runs: most runs have none."""
    from qlab.governance.learning.suggest import run_learning

    return run_learning(artifact, **kwargs)


def _both(*watchers: Callable[[RunEvent], None]) -> Callable[[RunEvent], None]:
    def on_event(event: RunEvent) -> None:
        for watch in watchers:
            watch(event)

    return on_event

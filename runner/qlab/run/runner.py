"""``qlab run`` as a library: pre-run checks, then the gates in order, then the result artifact.

    pre-run checks (config, sources) → build gate (collection) → engine → auth readiness
      → search → select → plan → execute → learn gates, each: run the stage on its suites' cases,
        in-run checks at the boundary (schema, policy, budget), judge thresholds and stop_if
      → artifact (metrics, gates, scorecard, decision)

A blocking gate stops the later case stages: their cases are reported ``blocked``, never as failures of their
own; a gate that could not decide stops them too, its cases ``skipped`` (``stopped_by_error``), the run ERROR.
The learn gate still observes a blocked run and never changes its verdict but by its scrub check. Nothing here
prints or exits; ``RunOptions.on_event`` reports progress, the caller writes outputs."""

from __future__ import annotations

import importlib
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from qlab.adapters.scrub import SecretSet
from qlab.collection.model import Collection
from qlab.contracts.errors import DependencyError, InputError, QlabError, Terminated
from qlab.engine.base import Engine
from qlab.execute.credentials import known_secrets
from qlab.project.model import Case, Config, Gate
from qlab.run import boundary, gates, prerun
from qlab.run.gates import GateSpec
from qlab.run.lanes import Lanes
from qlab.run.options import ProjectLike, RunCancelled, RunOptions, RunOutcome, Seams
from qlab.run.outputs import rescrub_logs, temp_paths, write_outputs
from qlab.run.provenance import checkout
from qlab.run.selection import is_empty_ok, select
from qlab.run.shard import partition, selection_fingerprint
from qlab.run.state import RunState
from qlab.stages.base import GuardResult, StageReport
from qlab.stages.context import RunContext, StageRun


def _real_build(config: Config, gate: Gate) -> tuple[Collection | None, StageReport]:
    module = importlib.import_module("qlab.stages.build")
    out: tuple[Collection | None, StageReport] = module.run_build(config, gate)
    return out


def _real_engine(config: Config, collection: Collection) -> Engine:
    """The engine under test, with the project's knowledge (``learning.knowledge_file``) applied."""
    module = importlib.import_module("qlab.engine.registry")
    base = Path(config.path).parent
    engine: Engine = module.make_engine(config.engine, collection, base_dir=base)
    knowledge = importlib.import_module("qlab.engine.knowledge")
    applied: Engine = knowledge.with_knowledge(
        engine, knowledge.load_knowledge(config.learning.knowledge_file, base_dir=base)
    )
    return applied


def stage_function(stage: str, seams: Seams) -> StageRun:
    """The stage module's ``run`` (or the seam's fake)."""
    if stage in seams.stages:
        return seams.stages[stage]
    fn: StageRun = importlib.import_module(f"qlab.stages.{stage}").run
    return fn


_DEFAULT_OPTIONS = RunOptions()


def run(project: ProjectLike, *, options: RunOptions = _DEFAULT_OPTIONS) -> RunOutcome:
    """Run the project's gates. Raises UsageError/InputError for a selection that cannot run (exit 2)."""
    state = _start(project, options=options)
    try:
        return _gates(state)
    except KeyboardInterrupt as stop:  # the stages ran their cleanup and the servers stopped on the way here
        raise RunCancelled(state.cancelled(terminated=isinstance(stop, Terminated))) from None


def _start(project: ProjectLike, *, options: RunOptions) -> RunState:
    """The run's state: the selected cases (or InputError when the selection is empty), their lanes, ids."""
    config = project.config
    started_wall = datetime.now(timezone.utc)
    started = time.monotonic()
    chosen = select(config, project.cases, options.selection, previous=options.previous)
    if not chosen.cases and not is_empty_ok(options.selection):
        left = "".join(f"; left out: suite {s['suite']} ({s['reason']})" for s in chosen.skipped)
        if chosen.archived:
            left += f"; {len(chosen.archived)} archived case(s) matched, and archived cases never run"
        raise InputError(
            f"no case selected by {options.selection.options()}; check them against the suites, case ids and tags in qlab.yaml and the case files{left}"
        )
    repo = checkout(config.path)
    # the shard digest: shards whose environments listen elsewhere (a port from the environment) are one matrix
    fingerprint = selection_fingerprint(
        [c.id for c in chosen.cases], config_digest=config.shard_digest or config.digest, commit=repo.commit
    )
    cases = list(chosen.cases)
    if options.shard is not None:
        cases = partition(cases, options.shard, key="id", durations=options.durations)
    state = RunState(
        config=config,
        project=project,
        cases=cases,
        lanes=Lanes(cases, config, root=repo.root),
        selected=chosen,
        repo=repo,
        selection_fingerprint=fingerprint,
        options=options,
        started_wall=started_wall,
        started=started,
        run_id=f"{started_wall:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}",
    )
    return state


def _gates(state: RunState) -> RunOutcome:
    """The pre-run checks, the build gate, the engine, then every other gate in order."""
    config, options, cases = state.config, state.options, state.cases
    state.prerun += [
        prerun.check_config(config, [w.render() for w in state.project.warnings]),
        prerun.check_sources(config),
    ]
    if state.prerun_failed():
        return _never_ran(state)
    build_gate = next((g for g in config.gates if g.stage == "build"), Gate(name="build", stage="build"))
    collection = _build(state, build_gate)
    if collection is None:
        return state.finish()
    try:
        engine = (options.seams.engine or _real_engine)(config, collection)
    except QlabError as exc:
        reason = exc.reason if isinstance(exc, DependencyError) else ""
        state.prerun.append(GuardResult("engine_reachable", prerun.PRE_RUN, False, "block", str(exc), reason))
        return _never_ran(state)
    reach = options.seams.reach or prerun.probe
    state.prerun.append(prerun.check_engine(config, engine.name, reach=reach))
    state.prerun += prerun.check_llm(config, cases, reach=reach)
    state.prerun += prerun.check_environments(config, cases, start_servers=options.start_servers, reach=reach)
    if state.prerun_failed():
        _close_engine(engine)
        return _never_ran(state)
    state.prerun += prerun.check_auth(config, cases)
    secrets = options.secrets if options.secrets is not None else SecretSet()
    secrets.update(known_secrets(config, os.environ))
    secrets.fields = config.sensitive_fields  # every writer redacts them by key
    state.prerun += prerun.check_skill_bindings(config, collection)
    state.prerun += prerun.check_skill_status(config, cases)
    # a release skill naming a tool the collection does not have: exit 2, as in validate and release
    if state.prerun_failed():
        _close_engine(engine)
        return _never_ran(state)
    ctx = RunContext(
        config=config,
        collection=collection,
        engine=engine,
        gate=build_gate,
        log=lambda message: options.log(secrets.text(message)),
        secrets=secrets,
        learner=options.learner,
        previous=options.previous,
        log_dir=options.log_dir or Path(config.path).parent / config.output.dir,
        start_servers=options.start_servers,
    )
    try:
        for gate in config.gates:
            if gate.stage == "build":
                continue
            try:
                _case_gate(state, ctx, gate)
                _trim(engine)  # what the engine memoized for this gate's cases only holds memory now
            finally:
                if gate.stage == "execute":
                    ctx.execute.close()  # the dev servers stop right after the execute gate, also on Ctrl-C
    finally:
        ctx.execute.close()
        _close_engine(engine)
    return state.finish()


def _never_ran(state: RunState) -> RunOutcome:
    """A pre-run check failed and no gate ran: every case is skipped (``stopped_by_error``), never reported as
    passed nor as blocked: the run is ERROR, nothing was judged."""
    failed = next(g for g in state.prerun if not g.passed and g.mode == "block")
    message = gates.never_ran_text({"guard": failed.guard, "message": failed.message})
    state.lanes.block([c.id for c in state.cases], stage="run", message=message, error=True)
    return state.finish()


def _build(state: RunState, gate: Gate) -> Collection | None:
    spec = GateSpec.from_config(gate, suites=())
    state.options.on_event(state.event("stage_start", gate.name, "build"))
    t0 = time.perf_counter()
    try:
        collection, report = (state.options.seams.build or _real_build)(state.config, gate)
    except InputError as exc:  # a spec URL that did not answer, a source that is no spec, a $ref refused
        reason = exc.reason if isinstance(exc, DependencyError) else "spec_invalid"
        _unbuilt(state, gate, reason, str(exc))
        return None
    report.duration_ms = report.duration_ms or (time.perf_counter() - t0) * 1000
    guards = list(report.guards)
    budget = boundary.budget_check(
        state.config, "build", [], started=state.started, gate=gate, judged=state.budget
    )
    guards += [budget] if budget else []
    state.record_stage("build", [report], guards, gate=gate.name)
    if collection is None:
        _unbuilt(state, gate, "spec_invalid", "the collection could not be built; see stages.build.details")
        return None
    record = state.judge(spec, cases=[], report=report, guards=guards)
    state.gates[gate.name] = record
    state.collection_digest = collection.digest
    state.options.on_event(
        state.event("stage_end", gate.name, "build", status=record["status"], duration_ms=report.duration_ms)
    )
    if record["status"] in ("blocked", "error"):
        state.block_after(gate, "build", error=record["status"] == "error")
        return None
    return collection


def _unbuilt(state: RunState, gate: Gate, reason: str, message: str) -> None:
    """The collection could not be built: nothing can be judged, so the run is ERROR whatever gates exist —
    the build gate errs, listed in qlab.yaml or not (``RunState.implicit_build``) — and no case runs."""
    state.gates[gate.name] = gates.errored(GateSpec.from_config(gate, suites=()), reason, message)
    state.options.on_event(state.event("stage_end", gate.name, "build", status="error"))
    state.block_after(gate, "build", error=True)


def _case_gate(state: RunState, ctx: RunContext, gate: Gate) -> None:
    spec = GateSpec.from_config(gate, suites=state.selected.gate_suites.get(gate.name, ()))
    # the learn gate observes every run that reached a decision, a blocked one too (its failing cases are what
    # the learning loop learns from); a run stopped by an error decided nothing: only its outputs are scanned
    observes = gate.stage == "learn" and not state.stopped_by_error
    if state.blocked_by is not None and not observes:
        state.skip(spec, state.stopped_reason(), stopped=True)
        if gate.stage == "learn":
            _scrub_only(state, ctx, gate)
        return
    if gate not in state.selected.gates:
        state.skip(spec, "not selected (--stage)")
        return
    members = set(spec.suites)
    gate_cases = [c for c in state.cases if c.suite in members]
    if gate.stage != "learn" and not gate_cases:
        state.skip(spec, "no selected case in its suites")
        return
    ctx.gate = gate
    state.options.on_event(state.event("stage_start", gate.name, gate.stage, cases=len(gate_cases)))
    t0 = time.perf_counter()
    if gate.stage == "learn":
        reports = [_learn(state, ctx, gate_cases)]
    else:
        limit = state.config.budget.max_duration_sec
        reports = state.lanes.run(
            stage_function(gate.stage, state.options.seams),
            ctx,
            gate_cases,
            over_budget=lambda: limit is not None and time.monotonic() - state.started > limit,
        )
    wall = (time.perf_counter() - t0) * 1000
    for report in reports:
        report.duration_ms = report.duration_ms or wall / max(1, len(reports))
    attempts = [r for c in gate_cases for r in state.lanes.attempts(c.id)]
    boundary.scrub_engine_text(attempts, ctx.secrets)  # before any check reads it or any byte is written
    boundary.scrub_provided_entities(gate_cases, state.lanes.attempts, state.config.sensitive_fields)
    guards = [g for r in reports for g in r.guards]
    guards += state.boundary_checks(gate, attempts, ctx.secrets)
    state.record_stage(gate.stage, reports, guards, gate=gate.name)
    merged = reports[0] if len(reports) == 1 else state.merge_reports(gate.stage, reports)
    record = state.judge(spec, cases=gate_cases, report=merged, guards=guards)
    state.gates[gate.name] = record
    state.options.on_event(
        state.event(
            "stage_end",
            gate.name,
            gate.stage,
            cases=len(gate_cases),
            status=record["status"],
            duration_ms=wall,
        )
    )
    if record["status"] in ("blocked", "error"):
        state.block_after(gate, gate.stage, error=record["status"] == "error")


def _learn(state: RunState, ctx: RunContext, gate_cases: Sequence[Case]) -> StageReport:
    """The learn gate scans the outputs as written (the provisional artifact: everything but this gate) for the
    run's secrets."""
    learn = state.options.seams.stages.get("learn")
    module = importlib.import_module("qlab.stages.learn")
    if ctx.previous is None and state.options.read_previous is not None:
        ctx.previous = state.options.read_previous()  # read now, after the case gates' memos were dropped
    provisional = state.artifact(final=False)
    state.provisional = provisional
    with tempfile.TemporaryDirectory(prefix="qlab-learn-") as tmp:
        paths: list[Path] = []
        # the scan looks for the secret values the run resolved; with none there is nothing it could find, so
        # the outputs are written once, at the end
        if ctx.secrets:
            emit = state.options.emit or (
                lambda art: write_outputs(art, temp_paths(Path(tmp)), secrets=ctx.secrets)
            )
            # a log line can hold a secret learnt after it was written (a server printing the cookie it sets):
            # the logs are scrubbed again with every secret known now, then scanned
            rescrub_logs(state.log_paths(), ctx.secrets)
            paths = [*emit(provisional), *state.log_paths()]
        if learn is not None:
            return learn(ctx, gate_cases, state.lanes.lanes[0])
        # learning reads every case of the run (the learn gate has no suites of its own)
        report: StageReport = module.run(
            ctx, state.cases, state.lanes.lanes[0], paths=paths, artifact=provisional
        )
        return report


def _scrub_only(state: RunState, ctx: RunContext, gate: Gate) -> None:
    """A run a gate could not decide (ERROR) skips the learn gate, but what it wrote may still hold a secret: the
    outputs are scanned all the same, and a leak is recorded as a failed ``scrub`` check of the learn stage. The
    decision stays the error that came first."""
    ctx.gate = gate
    module = importlib.import_module("qlab.stages.learn")
    if not ctx.secrets:  # nothing to look for: the check is recorded all the same, nothing is written to scan
        guard, stops, details = module.scrub(ctx, [])
        state.record_stage(
            "learn", [StageReport("learn", stops=stops, details={"scrub": details})], [guard], gate=gate.name
        )
        return
    with tempfile.TemporaryDirectory(prefix="qlab-learn-") as tmp:
        emit = state.options.emit or (
            lambda art: write_outputs(art, temp_paths(Path(tmp)), secrets=ctx.secrets)
        )
        rescrub_logs(state.log_paths(), ctx.secrets)
        paths = [*emit(state.artifact(final=False)), *state.log_paths()]
        guard, stops, details = module.scrub(ctx, paths)
    state.record_stage(
        "learn", [StageReport("learn", stops=stops, details={"scrub": details})], [guard], gate=gate.name
    )


def _trim(engine: Engine) -> None:
    """Let the engine drop what it memoized for speed (``Engine``'s optional ``trim``): the learn gate and the
    outputs cannot use those memo tables, and on a large run they weigh on the peak."""
    trim = getattr(engine, "trim", None)
    if callable(trim):
        trim()


def _close_engine(engine: Engine) -> None:
    close = getattr(engine, "close", None)  # the http engine holds a client
    if callable(close):
        close()

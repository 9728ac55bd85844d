"""Stage 5, execute: plan + adapter auth → runner events and assertions; stop if auth or mutation safety fails.

For each execute case not yet done: find its plan (``qlab.execute.plans``) and its suite's environment
(``environment_missing`` otherwise), start the environment's dev server if it declares one, and run the case
(``qlab.execute.case``) — on worker threads over the run's one sync HTTP client, as many as pay off up to
``Environment.concurrency`` (``qlab.execute.pool``). The client, the auth resolver and the dev servers live in
``ctx.execute`` (``qlab.stages.context.ExecuteState``) until its ``close()``.

Metrics: execute_success_rate, execute_read_success_rate (read_only cases), assertion_pass_rate,
auth_ready_rate, structured_failure_rate, latency_p50_ms, latency_p95_ms. Stop conditions seen:
auth_not_ready, mutation_unsafe, assertion_failed. Guards (in-run checks): mutation_safety,
host_allowlist.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.adapters import http
from qlab.adapters.scrub import neutralize_commands, scrub_text
from qlab.contracts.errors import QlabError
from qlab.contracts.metrics import structured
from qlab.contracts.reasons import AUTH_FAILURES
from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan
from qlab.execute import assertions
from qlab.execute.auth import AuthResolver
from qlab.execute.case import CaseRunner
from qlab.execute.client import make_run_client
from qlab.execute.credentials import display_url
from qlab.execute.plans import plan_for
from qlab.execute.pool import Pool
from qlab.project.model import Case, Environment
from qlab.stages.base import GuardResult, StageReport, StopHit
from qlab.stages.context import RunContext
from qlab.stages.plan import plan_case

STAGE = "execute"
SAFETY_REASONS = frozenset(
    {"mutation_not_allowed", "host_not_allowed", "cleanup_missing", "redirect_refused"}
)
ASSERTION_REASONS = frozenset({"assertion_failed", "schema_mismatch", "invalid_json"})
_Item = tuple[Case, Environment, CaseResult]
# the subject of this stage's mutation_safety and host_allowlist checks: what it refused before sending
# (``qlab.run.boundary`` checks the same guards on the requests sent)
BEFORE_SENDING = "before sending"


def run(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    """Execute the gate's execute cases; see the module docstring."""
    started = time.perf_counter()
    handled = [c for c in cases if c.mode == "execute" and not results[c.id].done]
    groups: dict[str, list[_Item]] = {}
    for case in handled:
        result = results[case.id]
        result.mutation_safety = case.mutation_safety
        env = _environment(ctx, case, result)
        if env is not None:
            groups.setdefault(env.name, []).append((case, env, result))
    if groups:
        width = max(items[0][1].concurrency for items in groups.values())
        runner = CaseRunner(
            client=run_client(ctx, max_connections=width),
            tools=ctx.collection.by_id(),
            resolver=_resolver(ctx),
            collection_profile=ctx.config.collection.auth_profile,
            add_secrets=ctx.secrets.update,
            cancel=threading.Event(),
            max_bytes=ctx.config.limits.response_bytes,
        )
        plans = ctx.answers.plans
        for name, items in groups.items():
            ctx.log(
                f"execute: {len(items)} case(s) against environment {name} ({display_url(items[0][1].base_url)})"
            )
            if _start_server(ctx, items[0][1], items):
                _run_group(ctx, runner, items, plans)
        _log_failures(ctx, handled, results)
    return _report(ctx, handled, results, duration_ms=(time.perf_counter() - started) * 1000)


def run_client(ctx: RunContext, *, max_connections: int = 8) -> http.Client:
    """The run's HTTP client (made on first use, until ``ctx.execute.close()``)."""
    state = ctx.execute
    if state.client is None:
        state.client = make_run_client(max_connections=max_connections)
    return state.client


def _resolver(ctx: RunContext) -> AuthResolver:
    """The run's auth resolver: kept across execute gates (what it resolved stays cached), but it fetches
    tokens with the client of the gate at hand, since each gate closes its own."""
    state = ctx.execute
    if state.resolver is None:
        state.resolver = AuthResolver(ctx.config.auth_profiles, max_bytes=ctx.config.limits.response_bytes)
    state.resolver.http = run_client(ctx)
    return state.resolver


def _environment(ctx: RunContext, case: Case, result: CaseResult) -> Environment | None:
    suite = ctx.config.suites.get(case.suite)
    name = suite.environment if suite is not None else None
    if not name:
        result.fail(
            STAGE,
            "environment_missing",
            f"suite {case.suite!r} names no environment (set suites.{case.suite}.environment)",
        )
        return None
    env = ctx.config.environments.get(name)
    if env is None:
        known = ", ".join(sorted(ctx.config.environments)) or "none"
        result.fail(
            STAGE,
            "environment_missing",
            f"suite {case.suite!r} names environment {name!r}, which is not defined (environments: {known})",
        )
    return env


def _start_server(ctx: RunContext, env: Environment, items: list[_Item]) -> bool:
    """Start the environment's dev server once per run; on failure every case of it fails as dev_server_failed
    (an infrastructure fault: the run is ERROR, not BLOCK)."""
    status = ctx.execute.server_status
    if env.server is None or env.name in status:
        return True
    if not ctx.start_servers:
        status[env.name] = {"status": "not_started"}
        return True
    # imported here: subprocess, ctypes, ... cost startup time and only an environment with a server needs them
    from qlab.execute.server import dev_server

    base = Path(ctx.config.path).parent
    log_path = (ctx.log_dir or base / ctx.config.output.dir) / f"server-{env.name}.log"
    try:
        # each line through the scrubber of the secrets known when it is written (the logs are scrubbed again
        # with all of them before the learn gate scans them), every workflow command in it made inert (a CI
        # step may print the log)
        secrets = ctx.secrets
        scrub = lambda line: neutralize_commands(secrets.text(line))  # noqa: E731
        servers = ctx.execute.servers
        state = servers.enter_context(dev_server(env.server, log_path=log_path, base_dir=base, scrub=scrub))
    except QlabError as exc:
        status[env.name] = {"status": "failed", "log": str(log_path)}
        for _case, _env, result in items:
            result.fail(STAGE, "dev_server_failed", f"environment {env.name}: {exc}", status="error")
        return False
    status[env.name] = {"status": state, "url": env.server.url, "log": str(log_path)}
    ctx.log(f"execute: dev server for {env.name} {state} ({env.server.url}); output in {log_path}")
    return True


def _run_group(ctx: RunContext, runner: CaseRunner, items: list[_Item], plans: dict[str, Plan]) -> None:
    ready: list[tuple[Case, Plan, Environment, CaseResult]] = []
    planned = ctx.execute.planned_here
    for case, env, result in items:
        if result.plan is None and (case.id not in plans or case.id in planned):
            # no plan gate planned it: the plan stage's own search → select → plan, checks included, so the case
            # keeps every stage object it went through (``plan.user_input_slots`` for a plan failure); each
            # attempt of a repeated case is planned on its own
            plan_case(ctx, case, result)
            planned.add(case.id)
        plan = None if result.done else plan_for(case, result, plans=plans)
        if plan is not None:
            plans.setdefault(case.id, plan)  # a later stage (learn) sees the plan that was executed
            ready.append((case, plan, env, result))
    width = items[0][1].concurrency
    workers = ctx.execute.workers
    if width <= 1 or len(ready) <= 1:
        workers[items[0][1].name] = 1
        for index, (case, plan, env, result) in enumerate(ready):
            try:  # in the main thread: Ctrl-C reaches the case, whose cleanup runs before it propagates
                _guarded(runner, case, plan, env, result)
            except KeyboardInterrupt:
                for _c, _p, _e, later in ready[index + 1 :]:
                    _skip(later)
                raise
        return
    pool = Pool(
        ready,
        lambda item: _guarded(runner, *item),
        width=width,
        cancel=runner.cancel,
        skip=lambda item: _skip(item[3]),
    )
    try:
        pool.run()
    finally:
        workers[items[0][1].name] = pool.workers


def _skip(result: CaseResult) -> None:
    result.fail(STAGE, "cancelled", "not run: the run was cancelled (SIGINT or SIGTERM)", status="skipped")
    result.execute = {"skipped": "not run: interrupted by Ctrl-C"}


def _guarded(runner: CaseRunner, case: Case, plan: Plan, env: Environment, result: CaseResult) -> None:
    try:
        runner.run(case, plan, env, result)
    except Exception as exc:  # runner.run records every failure itself; this is the last net
        result.fail(
            STAGE, "http_error", f"unexpected error while executing: {type(exc).__name__}", status="error"
        )


def _log_failures(ctx: RunContext, handled: Sequence[Case], results: Mapping[str, CaseResult]) -> None:
    secrets = set(ctx.secrets)
    for case in handled:
        failure = results[case.id].failure
        if failure is not None and failure.stage == STAGE:
            ctx.log(scrub_text(f"execute: {case.id}: {failure.reason}: {failure.message}", secrets))


# ---------------------------------------------------------------------------------------------- report


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 6) if total else None


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return round(ordered[rank], 3)


def metrics(case_results: Iterable[CaseResult]) -> dict[str, float | None]:
    """The execute metrics over ``case_results`` (None where there is no data)."""
    rows = list(case_results)
    execute_types = set(assertions.names(STAGE))
    checked = [a for r in rows for a in r.assertions if a.type in execute_types]
    reads = [r for r in rows if r.mutation_safety == "read_only"]
    preflights = [r.auth_readiness for r in rows if r.auth_readiness is not None]
    failed = [r for r in rows if r.status in ("failed", "error")]
    latencies = [r.latency_ms[STAGE] for r in rows if STAGE in r.latency_ms]
    return {
        "execute_success_rate": _rate(sum(r.status == "passed" for r in rows), len(rows)),
        "execute_read_success_rate": _rate(sum(r.status == "passed" for r in reads), len(reads)),
        "assertion_pass_rate": _rate(sum(a.passed for a in checked), len(checked)),
        "auth_ready_rate": _rate(sum(p.get("status") != "not_ready" for p in preflights), len(preflights)),
        "structured_failure_rate": _rate(sum(structured(r.to_dict()) for r in failed), len(failed)),
        "latency_p50_ms": _percentile(latencies, 0.5),
        "latency_p95_ms": _percentile(latencies, 0.95),
    }


def _report(
    ctx: RunContext, handled: Sequence[Case], results: Mapping[str, CaseResult], *, duration_ms: float
) -> StageReport:
    report = StageReport(STAGE, duration_ms=duration_ms)
    rows = [results[c.id] for c in handled]
    report.metrics = metrics(rows)
    for suite in dict.fromkeys(c.suite for c in handled):
        report.suite_metrics[suite] = metrics(results[c.id] for c in handled if c.suite == suite)
    reasons: dict[str, list[str]] = {}
    for case in handled:
        failure = results[case.id].failure
        if failure is not None and failure.stage == STAGE:
            reasons.setdefault(failure.reason, []).append(case.id)
    for condition, codes in (
        ("auth_not_ready", AUTH_FAILURES),
        ("mutation_unsafe", SAFETY_REASONS),
        ("assertion_failed", ASSERTION_REASONS),
    ):
        ids = tuple(i for code in sorted(codes) for i in reasons.get(code, ()))
        if ids:
            seen = ", ".join(sorted(c for c in codes if c in reasons))
            report.stops.append(StopHit(condition, ids, f"{len(ids)} case(s): {seen}"))
    modes: dict[str, str] = {g.name: g.mode for g in ctx.gate.guards}
    guards: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("mutation_safety", ("mutation_not_allowed", "cleanup_missing")),
        ("host_allowlist", ("host_not_allowed", "redirect_refused")),
    )
    for guard, guard_codes in guards:
        refused = sorted(i for code in guard_codes for i in reasons.get(code, ()))
        message = f"refused: {', '.join(refused)}" if refused else "no unsafe request was attempted"
        report.guards.append(
            GuardResult(guard, STAGE, not refused, modes.get(guard, "block"), message, subject=BEFORE_SENDING)
        )
    report.details = _details(ctx, rows, reasons)
    return report


def _details(ctx: RunContext, rows: list[CaseResult], reasons: Mapping[str, list[str]]) -> dict[str, Any]:
    return {
        "cases": len(rows),
        "passed": sum(r.status == "passed" for r in rows),
        "failure_reasons": {code: len(ids) for code, ids in sorted(reasons.items())},
        "servers": dict(ctx.execute.server_status),
        "workers": dict(ctx.execute.workers),  # threads each environment's cases used
    }

"""Stage 6, learn: scrubbed result → suggestions and shadow rank; stop if payload scrubbing fails.

The gate part is the scrub check ("Learn: stop if payload scrubbing fails"): every output the run
wrote — result JSON, JUnit, summary, dev-server logs — is scanned with ``qlab.adapters.scrub.find_leaks`` for every
secret value the run resolved, in every encoded form. A hit is ``scrub_failed``: the message names the file and
the secret's index, never its value. Suggestions and shadow rank come from the run's learner
(``qlab run`` gives it ``qlab.governance.learning.suggest.run_learning``); they are ``pending_review`` and
change nothing.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.adapters.scrub import find_leaks
from qlab.collection.model import Collection
from qlab.contracts.results import CaseResult
from qlab.engine.base import Engine
from qlab.project.model import Case
from qlab.stages.base import GuardResult, StageReport, StopHit
from qlab.stages.context import RunContext

STAGE = "learn"


# the subject of this stage's scrub check (the files the run wrote); the learn boundary's own scrub check reads
# the case objects
WRITTEN = "written outputs"


def _mode(ctx: RunContext) -> str:
    return next((g.mode for g in ctx.gate.guards if g.name == "scrub"), "block")


def scrub(ctx: RunContext, paths: Sequence[Path]) -> tuple[GuardResult, list[StopHit], dict[str, Any]]:
    """Scan ``paths`` for the run's secrets."""
    secrets = sorted(ctx.secrets)
    leaks = find_leaks(paths, secrets)
    files = sorted({leak.path.name for leak in leaks})
    details = {
        "files_scanned": len(paths),
        "secrets_checked": len(secrets),
        "leaks": len(leaks),
        "leaked_in": files,
    }
    if leaks:
        message = (
            f"{len(leaks)} secret value(s) found in {', '.join(files)} (secret #{leaks[0].secret_index + 1})"
        )
        stop = StopHit("scrub_failed", (), message)
        return GuardResult("scrub", STAGE, False, _mode(ctx), message, subject=WRITTEN), [stop], details
    if not secrets:
        message = "no secret value was resolved in this run: nothing to look for"
    else:
        message = f"{len(secrets)} secret(s) checked in {len(paths)} written output(s): none found"
    return GuardResult("scrub", STAGE, True, _mode(ctx), message, subject=WRITTEN), [], details


def suggestions(ctx: RunContext, cases: Sequence[Case], artifact: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's learner (``RunContext.learner``) on the provisional artifact; None when the run has none."""
    if ctx.learner is None:
        return None
    registry = importlib.import_module("qlab.engine.registry")  # the engine is built only when learning runs
    base = Path(ctx.config.path).parent

    knowledge = importlib.import_module("qlab.engine.knowledge")
    known = knowledge.load_knowledge(ctx.config.learning.knowledge_file, base_dir=base)

    def engine_factory(collection: Collection) -> Engine:
        engine: Engine = knowledge.with_knowledge(
            registry.make_engine(ctx.config.engine, collection, base_dir=base), known
        )
        return engine

    return ctx.learner(
        artifact,
        config=ctx.config,
        collection=ctx.collection,
        engine_factory=engine_factory,
        cases=list(cases) or None,
        secrets=sorted(ctx.secrets),
        previous=ctx.previous,
    )


def _per_case(found: Sequence[Mapping[str, Any]], results: Mapping[str, CaseResult]) -> None:
    """The per-case ``learning`` object: the suggestions whose evidence names the case."""
    for suggestion in found:
        brief = {key: suggestion[key] for key in ("id", "kind", "tool_id", "aliases", "text", "status")
                 if suggestion.get(key) is not None}  # fmt: skip
        for evidence in suggestion.get("evidence") or ():
            result = results.get(str(evidence.get("case_id")))
            if result is not None:
                _learning(result)["suggestions"].append(brief)


def _shadow_per_case(
    found: Sequence[Mapping[str, Any]], shadow: Mapping[str, Any], results: Mapping[str, CaseResult]
) -> None:
    """What shadow rank says of each case (``learning.shadow``): ``improves_in_shadow_only`` for a case that
    failed in the run and hits in shadow rank with the pending suggestions applied (they fix it, and nothing
    will until one is accepted), ``shadow_regressed`` for a case a suggestion measured alone ranks worse."""
    pending = [s for s in found if s.get("status", "pending_review") == "pending_review"]
    fixed = {str(r["case_id"]) for r in shadow.get("rows") or () if r.get("after_rank") is not None
             and r.get("before_rank") is None}  # fmt: skip
    for case_id in sorted(fixed):
        result = results.get(case_id)
        if result is None or result.status not in ("failed", "error"):
            continue
        ids = [str(s["id"]) for s in pending if case_id in ((s.get("shadow") or {}).get("improved") or ())]
        ids = ids or [
            str(s["id"]) for s in pending if any(e.get("case_id") == case_id for e in s.get("evidence") or ())
        ]
        _learning(result)["shadow"] = {"reason": "improves_in_shadow_only", "suggestions": ids}
    for suggestion in pending:
        for case_id in (suggestion.get("shadow") or {}).get("regressed") or ():
            result = results.get(str(case_id))
            if result is not None:
                entry = _learning(result).setdefault(
                    "shadow", {"reason": "shadow_regressed", "suggestions": []}
                )
                if entry["reason"] == "shadow_regressed":
                    entry["suggestions"].append(str(suggestion["id"]))


def _learning(result: CaseResult) -> dict[str, Any]:
    if result.learning is None:
        result.learning = {"suggestions": []}
    return result.learning


def run(
    ctx: RunContext,
    cases: Sequence[Case],
    results: Mapping[str, CaseResult],
    *,
    paths: Sequence[Path] = (),
    artifact: Mapping[str, Any] | None = None,
) -> StageReport:
    """The learn gate: the scrub check over ``paths`` (the outputs as written), then suggestions."""
    started = time.perf_counter()
    guard, stops, scan = scrub(ctx, paths)
    details: dict[str, Any] = {"scrub": scan}  # the shape a run the learn gate does not observe records too
    metrics: dict[str, float | None] = {"scrub_leaks": float(scan["leaks"])}
    guards = [guard]
    if artifact is not None and not stops:
        try:
            learned = suggestions(ctx, cases, artifact)
        except (
            Exception
        ) as exc:  # suggestions are advisory: a failure is shown, it does not take the run down
            learned = None
            guards.append(
                GuardResult(
                    "learning", STAGE, False, "warn", f"suggestions failed: {type(exc).__name__}: {exc}"
                )
            )
        if learned is not None:
            details["signals"] = learned.get("signals", [])
            details["suggestions"] = learned.get("suggestions", [])
            details["shadow"] = learned.get("shadow", {})
            metrics["suggestions"] = float(len(details["suggestions"]))
            metrics["signals"] = float(len(details["signals"]))
            _per_case(details["suggestions"], results)
            _shadow_per_case(details["suggestions"], details["shadow"], results)
            if not learned.get("scrub", {}).get("passed", True):
                stops.append(StopHit("scrub_failed", (), "a suggestion would have carried a secret value"))
    return StageReport(
        stage=STAGE,
        metrics=metrics,
        stops=stops,
        guards=guards,
        details=details,
        duration_ms=(time.perf_counter() - started) * 1000,
    )

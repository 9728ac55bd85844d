"""The state of one run while the gates execute, and its result artifact.

``qlab.run.runner`` drives the order; this module keeps what was seen (stage reports, guard results, gate records),
judges each gate from the aggregated case results, blocks the cases of later gates, and assembles the artifact.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from qlab.contracts import metrics
from qlab.contracts.errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from qlab.contracts.results import CaseResult
from qlab.execute.credentials import display_url
from qlab.project.model import Case, Config, Gate
from qlab.run import artifact, boundary, gates, postrun
from qlab.run.gates import GateSpec, SuiteRule
from qlab.run.guards import once
from qlab.run.lanes import Lanes
from qlab.run.options import ProjectLike, RunEvent, RunOptions, RunOutcome
from qlab.run.provenance import Checkout, fingerprint, provenance, relative
from qlab.run.selection import Selected
from qlab.run.shard import case_manifest
from qlab.stages.base import GuardResult, StageReport, StopHit
from qlab.version import __version__


def guard_dict(g: GuardResult, *, gate: str | None = None) -> dict[str, Any]:
    """A guard's record; ``gate`` names the gate whose boundary ran it (a pre-run check has none)."""
    out: dict[str, Any] = {
        "guard": g.guard,
        "stage": g.stage,
        "passed": g.passed,
        "mode": g.mode,
        "message": g.message,
    }
    if g.reason:
        out["reason"] = g.reason
    if gate:
        out["gate"] = gate
    if g.subject:
        out["subject"] = g.subject
    return out


def environment_addresses(config: Config) -> dict[str, dict[str, Any]]:
    """Where each environment listens in this run (a shard records it: ``qlab merge`` says which differed). URLs
    without userinfo, query or fragment: nothing a credential could hide in."""

    def address(url: str) -> str:
        parts = urlsplit(display_url(url))
        return urlunsplit(parts._replace(query="", fragment=""))

    out: dict[str, dict[str, Any]] = {}
    for name, env in config.environments.items():
        entry: dict[str, Any] = {"base_url": address(env.base_url), "allowed_hosts": list(env.allowed_hosts)}
        if env.server is not None:
            entry["server_url"] = address(env.server.url)
        out[name] = entry
    return out


def stop_dict(s: StopHit) -> dict[str, Any]:
    return {"condition": s.condition, "case_ids": list(s.case_ids), "message": s.message}


@dataclass(slots=True)
class RunState:
    config: Config
    project: ProjectLike
    cases: list[Case]
    lanes: Lanes
    selected: Selected
    repo: Checkout
    selection_fingerprint: str
    options: RunOptions
    started_wall: datetime
    started: float
    run_id: str
    prerun: list[GuardResult] = field(default_factory=list)
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    gates: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_metrics: dict[str, dict[str, float | None]] = field(default_factory=dict)
    schema: dict[str, boundary.SchemaTally] = field(default_factory=dict)
    collection_digest: str | None = None
    blocked_by: str | None = None  # the gate that stopped the run (blocked, or error when stopped_by_error)
    stopped_by_error: bool = False
    judged: list[GateSpec] = field(default_factory=list)  # the gates that judged, in order (decision rule 2)
    provisional: dict[str, Any] | None = None  # the learn gate's copy; finish() only concludes it again
    budget: dict[str, str] = field(default_factory=dict)  # budget limit exceeded → the gate that judged it
    cancelled_by: str | None = None  # SIGINT or SIGTERM, once a signal stopped the run

    # ------------------------------------------------------------------------------------------ judging

    def event(self, kind: str, gate: str, stage: str, **figures: Any) -> RunEvent:
        """A progress event of this run (``RunOptions.on_event``)."""
        return RunEvent(kind, gate, stage, run_id=self.run_id, **figures)

    def prerun_failed(self) -> bool:
        return any(not g.passed and g.mode == "block" for g in self.prerun)

    def case_dicts(self, cases: Iterable[Case]) -> list[dict[str, Any]]:
        return [self.lanes.aggregate(c.id).to_dict() for c in cases]

    def judge(
        self, spec: GateSpec, *, cases: Sequence[Case], report: StageReport, guards: Sequence[GuardResult]
    ) -> dict[str, Any]:
        """The gate's record, from the aggregated results of its cases and the stage's report."""
        dicts = self.case_dicts(cases)
        by_suite: dict[str, list[dict[str, Any]]] = {}
        for case in dicts:
            by_suite.setdefault(str(case["suite"]), []).append(case)
        suite_metrics = {}
        for suite, members in by_suite.items():
            figures = metrics.case_metrics(members)
            for metric, value in report.suite_metrics.get(suite, {}).items():
                figures.setdefault(metric, value)
                self.extra_metrics.setdefault(suite, {}).setdefault(metric, value)
            suite_metrics[suite] = figures
        stage_metrics = self._stage_rates(spec.stage, report.metrics, dicts, suite_metrics)
        record = gates.evaluate(
            spec,
            cases=dicts,
            suite_metrics=suite_metrics,
            stage_metrics=stage_metrics,
            rules=self.rules(),
            earlier=list(self.judged),
            reported_stops=[stop_dict(s) for s in report.stops],
            guards=once(guard_dict(g, gate=spec.name) for g in guards),  # once per check, however many lanes
            defer_thresholds=self.options.shard is not None and self.options.shard.total > 1,
        )
        self.judged.append(spec)
        return record

    def _stage_rates(
        self,
        stage: str,
        reported: dict[str, float | None],
        dicts: Sequence[dict[str, Any]],
        suite_metrics: dict[str, dict[str, float | None]],
    ) -> dict[str, float | None]:
        """The stage's figures with its own case rates counted as the suites' are (``qlab.contracts.metrics``: over
        every case of the gate it should have measured, earlier failures included), not only over the cases the stage
        still handled; the artifact's ``stages.<stage>.metrics`` say the same."""
        rates = [name for name, info in metrics.METRICS.items() if info.counts_cases and info.stage == stage]
        if not rates or not dicts:
            return reported
        whole = next(iter(suite_metrics.values())) if len(suite_metrics) == 1 else metrics.case_metrics(dicts)
        figures = {name: whole.get(name) for name in rates}
        self.stages.get(stage, {}).get("metrics", {}).update(figures)
        return {**reported, **figures}

    def rules(self) -> dict[str, SuiteRule]:
        """Each suite's part in the decision rule (required, must pass)."""
        return gates.suite_rules(_suite_info(self.config))

    def skip(self, spec: GateSpec, reason: str, *, stopped: bool = False) -> None:
        self.gates[spec.name] = gates.skipped(spec, reason, stopped=stopped)

    def stopped_reason(self) -> str:
        """Why later gates did not run."""
        return gates.stopped_gate_text(self.blocked_by, error=self.stopped_by_error)

    def block_after(self, gate: Gate, stage: str, *, error: bool = False) -> None:
        """Every case still pending in a later gate is reported blocked by this gate's stage (``skipped`` with
        ``stopped_by_error`` when the gate could not decide: nothing was judged, nothing is blocked)."""
        self.blocked_by = gate.name
        self.stopped_by_error = error
        order = [g.name for g in self.config.gates]
        later = order[order.index(gate.name) + 1 :] if gate.name in order else order
        suites = {s for name in later for s in self.selected.gate_suites.get(name, ())}
        if stage == "build":
            suites = {c.suite for c in self.cases}
        ids = [c.id for c in self.cases if c.suite in suites]

        def message(result: CaseResult) -> str:
            return gates.stopped_text(
                gate.name, error=error, mode=result.mode, holds=lambda key: getattr(result, key, None)
            )

        self.lanes.block(ids, stage=stage, message=message, error=error)

    def boundary_checks(
        self, gate: Gate, attempts: Sequence[CaseResult], secrets: set[str]
    ) -> list[GuardResult]:
        """The in-run checks at the end of ``gate``'s stage (see qlab.run.boundary)."""
        mode = next((g.mode for g in gate.guards if g.name == "output_schema"), "block")
        tally = self.schema.setdefault(gate.stage, boundary.SchemaTally())
        ok, message = boundary.schema_check(gate.stage, attempts, tally)
        out = [GuardResult("output_schema", gate.stage, ok, mode, message)]
        if gate.stage == "execute":
            by_id = {c.id: c for c in self.cases}
            out += boundary.policy_checks(self.config, gate, attempts, by_id)
            ids = dict.fromkeys(r.case_id for r in attempts)
            claimed = [self.lanes.aggregate(i) for i in ids if i in by_id and by_id[i].claims is not None]
            checks = boundary.claims_checks(self.config, gate, claimed)
            gating = {r.case_id for r in claimed if not r.flaky and r.lifecycle != "draft"}
            required = {s for s, suite in self.config.suites.items() if suite.required}
            boundary.fail_below(checks, [r for r in attempts if r.case_id in gating and r.suite in required])
            out += checks
        out.append(boundary.scrub_check(gate.stage, attempts, secrets, gate))
        budget = boundary.budget_check(
            self.config, gate.stage, self.lanes.results(), started=self.started, gate=gate, judged=self.budget
        )
        return out + ([budget] if budget else [])

    # ------------------------------------------------------------------------------------------ stages

    def merge_reports(self, stage: str, reports: Sequence[StageReport]) -> StageReport:
        """One report for the lanes of a repeated stage: lane 1's metrics, every stop and guard."""
        first = reports[0]
        return StageReport(
            stage=stage,
            suite_metrics=first.suite_metrics,
            metrics=first.metrics,
            stops=[s for r in reports for s in r.stops],
            guards=[g for r in reports for g in r.guards],
            details=first.details,
            duration_ms=sum(r.duration_ms for r in reports),
        )

    def record_stage(
        self, stage: str, reports: Sequence[StageReport], guards: Sequence[GuardResult], *, gate: str = ""
    ) -> None:
        """Add what ``gate`` found at ``stage`` to the stage's entry (each check once: ``qlab.run.guards``)."""
        entry = self.stages.setdefault(
            stage, {"metrics": {}, "duration_ms": 0.0, "guards": [], "stops": [], "details": {}}
        )
        for report in reports[:1]:
            entry["metrics"].update(report.metrics)
            entry["details"].update(_jsonable(report.details))
        entry["duration_ms"] = round(entry["duration_ms"] + sum(r.duration_ms for r in reports), 3)
        entry["guards"] = once([*entry["guards"], *(guard_dict(g, gate=gate) for g in guards)])
        entry["stops"] += [stop_dict(s) for r in reports for s in r.stops]
        tally = self.schema.get(stage)
        if tally is not None and tally.checked:
            entry["details"]["schema"] = {"checked": tally.checked, "valid": tally.valid}
            entry["metrics"]["schema_validity"] = round(tally.valid / tally.checked, 6)

    def log_paths(self) -> list[Path]:
        folder = self.options.log_dir or Path(self.config.path).parent / self.config.output.dir
        return sorted(Path(folder).glob("server-*.log"))

    # ------------------------------------------------------------------------------------------ artifact

    def artifact(self, *, final: bool = True) -> dict[str, Any]:
        """The result artifact of the run so far (``final=False``: the learn gate's provisional copy)."""
        ended = datetime.now(timezone.utc)
        suite_order = {name: i for i, name in enumerate(self.config.suites)}
        cases = sorted((r.to_dict() for r in self.lanes.results()), key=artifact.case_sort_key(suite_order))
        postrun.annotate(cases, {c.id: c.expected_plan_tools for c in self.cases if c.expected_plan_tools})
        stopped = (
            f"the run stopped before this gate: it was cancelled ({self.cancelled_by})"
            if self.cancelled_by
            else gates.stopped_gate_text(
                None if self.prerun_failed() else self.blocked_by, error=self.stopped_by_error
            )
        )
        records = [
            self.gates.get(g.name)
            or gates.skipped(
                GateSpec.from_config(g, suites=self.selected.gate_suites.get(g.name, ())),
                stopped if final else "pending: runs after this provisional artifact was written",
                stopped=final,
            )
            for g in self.config.gates
        ]
        records = self.implicit_build() + records
        in_run = {c.suite for c in self.selected.cases}
        counts: dict[str, int] = {}
        for case in cases:
            counts[str(case.get("file", ""))] = counts.get(str(case.get("file", "")), 0) + 1
        budget = asdict(self.config.budget)
        run_configuration = {
            "config": relative(self.config.path, self.repo.root),
            "selection": self.options.selection.to_dict(),
            "shard": None
            if self.options.shard is None
            else f"{self.options.shard.index}/{self.options.shard.total}",
            "exit_zero": self.options.exit_zero,
            "start_servers": self.options.start_servers,
            "engine": self.config.engine.type,
            "budget": budget,
            "gates": [g.name for g in self.config.gates],
        }
        build = self.stages.get("build", {}).get("details", {})
        out: dict[str, Any] = {
            "schema_version": artifact.SCHEMA_VERSION,
            "run_id": self.run_id,
            "target_version": self.options.target_version or self.config.target_version,
            "started_at": _iso(self.started_wall),
            "ended_at": _iso(ended),
            "duration_ms": round((time.monotonic() - self.started) * 1000, 3),
            "qlab_version": __version__,
            "project": self.config.project,
            "fingerprint": fingerprint(
                self.config,
                collection_digest=self.collection_digest,
                commit=self.repo.commit,
                selection_digest=self.selection_fingerprint,
            ),
            "provenance": provenance(
                self.config,
                case_files=self.project.case_files,
                case_counts=counts,
                root=self.repo.root,
                run_configuration=run_configuration,
            ),
            "shard": None
            if self.options.shard is None
            else {
                "index": self.options.shard.index,
                "total": self.options.shard.total,
                "selection_fingerprint": self.selection_fingerprint,
                "cases": case_manifest(c.id for c in self.cases),  # checked by qlab merge
                "config_digest": self.config.shard_digest or self.config.digest,
                "environments": environment_addresses(self.config),  # may differ per shard runner
            },
            "warnings": [w.render() for w in self.project.warnings] + list(self.selected.warnings),
            "cases": cases,
            "suites": {name: info for name, info in _suite_info(self.config).items() if name in in_run},
            "skipped_suites": [dict(s) for s in self.selected.skipped],
            "archived_cases": [self.archived_entry(c) for c in self.selected.archived],
            "stages": self.stages,
            "gates": records,
            "prerun": once(guard_dict(g) for g in self.prerun),
            "readiness": build.get("readiness", build),
        }
        return artifact.summarize(
            out,
            exit_zero=self.options.exit_zero,
            budget=self.config.budget,
            extra_suite_metrics=self.extra_metrics,
            with_scorecard=final,
            reviews=self.reviews() if final else (),
        )

    def implicit_build(self) -> list[dict[str, Any]]:
        """The build gate qlab.yaml does not list, when it stopped the run (its budget check or its sources):
        its record is the reason the later gates were skipped, and the decision must see it."""
        if any(g.stage == "build" for g in self.config.gates):
            return []
        record = self.gates.get("build")
        return [record] if record is not None and record["status"] in ("blocked", "error") else []

    def archived_entry(self, case: Case) -> dict[str, Any]:
        """An archived case as the artifact lists it (it did not run)."""
        file = relative(Path(self.config.path).parent / case.file, self.repo.root) if case.file else ""
        return {"case_id": case.id, "suite": case.suite, "file": file, "line": case.origin.line}

    def reviews(self) -> list[str]:
        """The human decisions on record outside the run (reviewed learning suggestions, release reviews),
        which the scorecard's ``human_acceptance`` counts with the run's own."""
        return list(self.options.reviews)

    def cancelled(self, *, terminated: bool) -> RunOutcome:
        """The partial result of a run SIGINT (or SIGTERM: ``terminated``) stopped: the cases that finished as
        they are, every other one ``skipped`` with ``cancelled`` at the stage it did not reach, the gates that
        judged, and the post-run checks and scorecard over the finished cases; status ``cancelled``, exit 130
        (143 for SIGTERM)."""
        self.cancelled_by = "SIGTERM" if terminated else "SIGINT"
        message = f"the run was cancelled ({self.cancelled_by}) before this case finished"

        def stop(result: CaseResult) -> None:
            if result.done:
                return
            missing = next((s for s, key in CHAIN[result.mode] if getattr(result, key) is None), None)
            if missing is not None:
                result.fail(missing, "cancelled", message, status="skipped")

        self.lanes.each(stop)
        result = self.artifact(final=True)
        finished = sum(1 for c in result["cases"] if (c.get("failure") or {}).get("reason") != "cancelled")
        judged = [g["name"] for g in result["gates"] if g["status"] != "skipped"]
        result["status"] = "cancelled"
        result["decision"] = {
            "verdict": "cancelled",
            "reasons": [
                f"interrupted: cancelled by {self.cancelled_by} after {finished} of {len(result['cases'])} "
                "case(s) finished; nothing was decided"
                + (f" (the gates that judged: {', '.join(judged)})" if judged else "")
            ],
            "exit_code": EXIT_TERMINATED if terminated else EXIT_INTERRUPTED,
            "advisory": self.options.exit_zero,
        }
        return RunOutcome(artifact=result, exit_code=int(result["decision"]["exit_code"]))

    def finish(self) -> RunOutcome:
        complete = all(g.name in self.gates for g in self.config.gates)
        if self.provisional is not None and complete and self.config.gates[-1].stage == "learn":
            # the learn gate changes no case but its learning object: reuse the case-derived sections of the
            # provisional artifact
            result = dict(self.provisional)
            # the one thing the learn gate adds to cases: their ``learning`` object
            learned = {r.case_id: r.learning for r in self.lanes.results() if r.learning is not None}
            if learned:
                result["cases"] = [
                    {**case, "learning": learned[case["case_id"]]} if case["case_id"] in learned else case
                    for case in result["cases"]
                ]
            result["ended_at"] = _iso(datetime.now(timezone.utc))
            result["duration_ms"] = round((time.monotonic() - self.started) * 1000, 3)
            result["stages"] = self.stages
            result["gates"] = self.implicit_build() + [
                self.gates[g.name] for g in self.config.gates if g.name in self.gates
            ]
            result["prerun"] = once(guard_dict(g) for g in self.prerun)
            result["metrics"] = dict(result["metrics"])
            result = artifact.conclude(
                result, exit_zero=self.options.exit_zero, budget=self.config.budget, reviews=self.reviews()
            )
        else:
            result = self.artifact(final=True)
        return RunOutcome(artifact=result, exit_code=int(result["decision"]["exit_code"]))


# the stages a case of each mode goes through, with the object each leaves on it
CHAIN: dict[str, tuple[tuple[str, str], ...]] = {
    "search": (("search", "search"),),
    "plan": (("search", "search"), ("select", "target_selector"), ("plan", "plan")),
    "execute": (
        ("search", "search"),
        ("select", "target_selector"),
        ("plan", "plan"),
        ("execute", "execute"),
    ),
}


def _suite_info(config: Config) -> dict[str, dict[str, Any]]:
    """Each suite as the artifact records it (``{mode, category, required, must_pass, cadence, target_type,
    target_ref, created_at}``)."""
    return {
        name: {
            "mode": s.mode,
            "category": s.category,
            "required": s.required,
            "must_pass": s.must_pass,
            "cadence": s.cadence,
            "target_type": s.target_type,
            "target_ref": s.target_ref,
            "created_at": s.created_at,
        }
        for name, s in config.suites.items()
    }


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    """Stage details as JSON data (dataclasses and tuples are common in reports). Plain values, dicts and lists
    are recognised by their exact type first: the learn gate's details of a run where search broke hold
    ~2 million of them."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): _jsonable(v) for k, v in value.items()}
    if kind is list:
        return [_jsonable(v) for v in value]
    if hasattr(value, "to_dict"):
        return _jsonable(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    return value

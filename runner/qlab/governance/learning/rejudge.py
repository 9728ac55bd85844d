"""A stored run judged again under another policy: the two sides of a policy proposal's sandbox eval.

A policy proposal changes no case, only how the run's evidence is judged, so nothing is replayed. For each
stored run, **before** is the decision it recorded (with the scorecard of its cases); **after** is its gates
judged again in order on the recorded evidence (cases, stage metrics, stops, in-run checks) under the changed
qlab.yaml, the budget checked at each gate. The first gate that blocks stops the later ones.

A gate the stored run never reached has no evidence: when the proposal lets the run past the gate that stopped
it and nothing else blocks, the after side is ``undecided`` (run ``qlab run`` with the change to know)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from qlab.contracts import metrics
from qlab.project.model import Config, Gate
from qlab.run import artifact as artifact_mod
from qlab.run import gates
from qlab.run.boundary import over_budget
from qlab.run.selection import gate_suites

UNDECIDED = "undecided"
NOT_BUILT = "the collection could not be built"  # a build gate's reason (``qlab.run.runner``)
STOPPED = ("blocked by gate", "stopped:", "the run stopped before this gate")
SELECT_ON = gates.STAGE_ORDER.index("select")  # the stage from which a run spends LLM cost


def sides(
    data: Mapping[str, Any], before: Config, after: Config, *, run_id: str
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(run id, before, after): one stored run (``data``) judged under the two configs."""
    a = rejudge(data, before, base=before, run_id=f"{run_id}/A")
    stored = data.get("decision")
    if isinstance(stored, Mapping) and stored.get("verdict") in gates.VERDICT_EXIT:
        a["decision"] = dict(stored)  # the run's real decision, whatever stopped it
    return run_id, a, rejudge(data, after, base=before, run_id=f"{run_id}/B")


def _mode(gate: Gate | None, guard: str) -> str | None:
    return next((g.mode for g in gate.guards if g.name == guard), None) if gate is not None else None


def _guards(
    record: Mapping[str, Any], gate: Gate, base: Gate | None, *, budget: tuple[bool, str] | None
) -> list[dict[str, Any]]:
    """The gate's recorded checks, each in the mode ``gate`` sets where it differs from ``base``'s, and the budget
    check made again (``budget``: passed, message) when the limits changed."""
    out = []
    for guard in record.get("guards") or ():
        copy = dict(guard)
        name = str(copy.get("guard"))
        mode, was = _mode(gate, name), _mode(base, name)
        if mode != was:
            copy["mode"] = mode or "block"  # an in-run check blocks unless the gate says otherwise
        if name == "budget" and budget is not None:
            copy["passed"], copy["message"] = budget
        out.append(copy)
    return out


def _seconds(data: Mapping[str, Any], config: Config, upto: int) -> float:
    """The run's time up to the end of gate ``upto``'s stage: the stages' recorded times added up in gate order
    (the whole run's time for the last gate)."""
    stages = data.get("stages") or {}
    total, seen = 0.0, set()
    for index, gate in enumerate(config.gates[: upto + 1]):
        if gate.stage not in seen:
            seen.add(gate.stage)
            total += float((stages.get(gate.stage) or {}).get("duration_ms") or 0.0)
        if index == len(config.gates) - 1:
            total = max(total, float(data.get("duration_ms") or 0.0))
    return total / 1000.0


def rejudge(data: Mapping[str, Any], config: Config, *, base: Config, run_id: str) -> dict[str, Any]:
    """The stored run's gates judged again, in order, under ``config`` (``base``: the config it was judged
    under). Returns an artifact with its cases, gates, decision and scorecard."""
    cases = [dict(c) for c in data.get("cases") or () if c.get("suite") in config.suites]
    suites = {name: {k: getattr(s, k, None) for k in artifact_mod.SUITE_KEYS} for name, s in config.suites.items()
              if any(c["suite"] == name for c in cases)}  # fmt: skip
    rules = gates.suite_rules(suites)
    recorded = {str(g.get("name")): g for g in data.get("gates") or ()}
    stages = data.get("stages") or {}
    limits_changed = asdict(config.budget) != asdict(base.budget)
    tokens, cost = metrics.llm_usage(cases)
    judged_budget: dict[str, str] = {}
    records: list[dict[str, Any]] = []
    specs: list[gates.GateSpec] = []
    stopped: str | None = None
    unreached: list[str] = []
    out_stages: dict[str, dict[str, Any]] = {}
    for index, gate in enumerate(config.gates):
        record = recorded.get(gate.name)
        suites_of = tuple(record.get("suites") or ()) if record else gate_suites(config, gate)
        spec = gates.GateSpec.from_config(gate, suites=suites_of)
        if stopped is not None:
            records.append(gates.skipped(spec, f"blocked by gate {stopped}"))
            continue
        if record is None or record.get("status") == "skipped":
            reasons = " ".join(str(r) for r in (record or {}).get("reasons") or ())
            if record is not None and reasons.startswith(STOPPED):
                unreached.append(gate.name)
            records.append(dict(record) if record else gates.skipped(spec, "not in the stored run"))
            continue
        budget = None
        if limits_changed and any(g.get("guard") == "budget" for g in record.get("guards") or ()):
            spent = gates.STAGE_ORDER.index(gate.stage) >= SELECT_ON
            budget = over_budget(
                config.budget,
                cost=cost if spent else 0.0,
                tokens=tokens if spent else 0,
                seconds=_seconds(data, config, index),
                where=gate.name,
                judged=judged_budget,
            )
        base_gate = next((g for g in base.gates if g.name == gate.name), None)
        guards = _guards(record, gate, base_gate, budget=budget)
        stage = stages.get(gate.stage) or {}
        members = [c for c in cases if c["suite"] in spec.suites]
        judged = gates.evaluate(
            spec,
            cases=members,
            suite_metrics={
                s: metrics.case_metrics([c for c in members if c["suite"] == s])
                for s in spec.suites
                if any(c["suite"] == s for c in members)
            },
            stage_metrics=dict(stage.get("metrics") or {}),
            rules=rules,
            earlier=specs,
            reported_stops=stage.get("stops") or (),
            guards=guards,
        )
        if gate.stage == "build" and (
            record.get("status") == "error" or any(NOT_BUILT in str(r) for r in record.get("reasons") or ())
        ):
            judged = dict(record)  # the collection was not built: no policy changes that
        records.append(judged)
        specs.append(spec)
        entry = out_stages.setdefault(gate.stage, {"guards": [], "metrics": dict(stage.get("metrics") or {})})
        entry["guards"] += guards
        if judged["status"] in ("blocked", "error"):
            stopped = gate.name
    out: dict[str, Any] = {
        "schema_version": artifact_mod.SCHEMA_VERSION,
        "run_id": run_id,
        "duration_ms": float(data.get("duration_ms") or 0.0),
        "provenance": dict(data.get("provenance") or {}),
        "cases": cases,
        "suites": suites,
        "stages": out_stages,
        "gates": records,
        "prerun": [dict(g) for g in data.get("prerun") or ()],
    }
    result = artifact_mod.summarize(out, budget=config.budget)
    # a run that never reached its gates judged no case there: "pass", or "error" for nothing judged at all
    nothing = result["decision"]["reasons"] == [gates.NOTHING_JUDGED]
    if unreached and stopped is None and (result["decision"]["verdict"] == "pass" or nothing):
        result["decision"] = {
            **result["decision"],
            "verdict": UNDECIDED,
            "reasons": [
                f"the stored run never reached gate(s) {', '.join(unreached)}: with the change it would, and "
                "there is no evidence of how they judge; run `qlab run` with the change to know"
            ],
        }
    return result

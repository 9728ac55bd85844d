"""What the shards of a matrix recorded besides their cases, combined for ``qlab merge`` (``qlab.run.merge``).

Checks once each (``qlab.run.guards``, their runs named by shard), stop conditions once each with every shard's
cases, stage figures computed again from the merged cases, the stages an unsharded run would have recorded, and
the environment values that differed between the shards.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts import metrics
from qlab.run import gates
from qlab.run.guards import combine


def _where(data: Mapping[str, Any]) -> str:
    shard = data.get("shard") or {}
    return f"shard {shard.get('index')}/{shard.get('total')}"


def guards(
    datas: Sequence[Mapping[str, Any]], lists: Sequence[Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """Each check once (``qlab.run.guards``: by gate, stage, guard and subject), its runs named by shard."""
    return combine((_where(d), g) for d, items in zip(datas, lists, strict=True) for g in items)


def stops(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each stop condition once, with the cases of every shard that fired it."""
    out: dict[str, dict[str, Any]] = {}
    for stop in items:
        entry = out.setdefault(str(stop.get("condition")), {**stop, "case_ids": []})
        entry["case_ids"] = sorted({*entry["case_ids"], *(str(i) for i in stop.get("case_ids") or ())})
        ids = entry["case_ids"]
        if ids:
            entry["message"] = f"{len(ids)} case(s): {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}"
    return list(out.values())


# stage figures that add up over the shards; everything else a case tells is computed again from the cases
_SUMMED = frozenset({"llm_tokens", "llm_cost_usd", "suggestions", "scrub_leaks"})
_SAME_AS = {
    "override_precision": "override_correct_rate",
    "latency_p50_ms": "latency_execute_p50_ms",
    "latency_p95_ms": "latency_execute_p95_ms",
}


def stage_metrics(
    per_shard: Sequence[Mapping[str, Any]],
    cases: Sequence[Mapping[str, Any]],
    *,
    stop: metrics.Stop = metrics.FROM_CASES,
) -> dict[str, float | None]:
    """A stage's figures on the merged run: what its cases tell (rates, latencies) computed again over them (with
    the run's ``stop``), totals summed, the rest (the build's figures, equal on every shard) as the first shard has
    it."""
    figures = metrics.case_metrics(cases, stop=stop) if cases else {}
    out: dict[str, float | None] = {}
    for key in dict.fromkeys(k for m in per_shard for k in m):
        source = _SAME_AS.get(key, key)
        values = [m[key] for m in per_shard if m.get(key) is not None]
        if source in figures:
            out[key] = figures[source]
        elif key in _SUMMED:
            out[key] = round(sum(float(v) for v in values), 8) if values else None
        else:
            out[key] = values[0] if values else None
    return out


def stages(datas: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every stage the shards ran, its evidence combined (checks and stops once each); metrics are set again from
    the merged cases once the gates are judged (``settle``)."""
    out: dict[str, dict[str, Any]] = {}
    guard_lists: dict[str, list[tuple[Mapping[str, Any], list[Mapping[str, Any]]]]] = {}
    for data in datas:
        for name, stage in (data.get("stages") or {}).items():
            fresh = name not in out
            entry = out.setdefault(
                name,
                {
                    "metrics": dict(stage.get("metrics") or {}),
                    "duration_ms": 0.0,
                    "guards": [],
                    "stops": [],
                    "details": copy.deepcopy(dict(stage.get("details") or {})),
                    "shard_metrics": [],
                },
            )
            entry["duration_ms"] = round(entry["duration_ms"] + float(stage.get("duration_ms") or 0.0), 3)
            entry["shard_metrics"].append(dict(stage.get("metrics") or {}))
            guard_lists.setdefault(name, []).append((data, list(stage.get("guards") or ())))
            entry["stops"] += stage.get("stops") or []
            if not fresh and "schema" in (stage.get("details") or {}):
                mine = entry["details"].setdefault("schema", {"checked": 0, "valid": 0})
                mine["checked"] = int(mine.get("checked", 0)) + int(
                    stage["details"]["schema"].get("checked", 0)
                )
                mine["valid"] = int(mine.get("valid", 0)) + int(stage["details"]["schema"].get("valid", 0))
    for name, entry in out.items():
        pairs = guard_lists[name]
        entry["guards"] = guards([d for d, _ in pairs], [g for _, g in pairs])
        entry["stops"] = stops(entry["stops"])
    return out


def settle(
    stages: dict[str, dict[str, Any]],
    records: Sequence[Mapping[str, Any]],
    specs: Sequence[gates.GateSpec],
    cases: Sequence[Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The stages as one unsharded run records them: only those of gates that judged (a shard that ran past the
    gate that blocked the merged run leaves no trace), their checks those of the gates that judged, their
    figures computed from the merged cases."""
    judged = {
        spec.name for spec, record in zip(specs, records, strict=True) if record.get("status") != "skipped"
    }
    by_stage: dict[str, list[gates.GateSpec]] = {}
    for spec, record in zip(specs, records, strict=True):
        if record.get("status") != "skipped":
            by_stage.setdefault(spec.stage, []).append(spec)
    out: dict[str, dict[str, Any]] = {}
    for name, entry in stages.items():
        per_shard = entry.pop("shard_metrics", [])
        specs_here = by_stage.get(name, [])
        if not specs_here:
            if name != "learn":
                continue
            # a run that stopped still scans what it wrote for secrets: the learn stage keeps that check only
            entry = {
                **entry,
                "metrics": {},
                "details": {},
                "guards": [
                    g for g in entry["guards"] if not g.get("gate") or g.get("subject") == "written outputs"
                ],
            }
            out[name] = entry
            continue
        suites = {s for spec in specs_here for s in spec.suites}
        members = [c for c in cases if c["suite"] in suites]
        figures = stage_metrics(per_shard, members, stop=metrics.stopped_at(cases))
        schema = entry["details"].get("schema")
        if schema and schema.get("checked"):
            figures["schema_validity"] = round(schema["valid"] / schema["checked"], 6)
        entry["metrics"] = figures
        entry["guards"] = [g for g in entry["guards"] if not g.get("gate") or g.get("gate") in judged]
        out[name] = entry
    return out


def differed(datas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The environment values (``shard.environments``) that were not the same on every shard, each with every
    shard's value in shard order: ports and hosts a runner reads from its environment may differ, and the merged
    result says which did."""
    tables = [(d.get("shard") or {}).get("environments") or {} for d in datas]
    out = []
    for env in dict.fromkeys(name for table in tables for name in table):
        for key in dict.fromkeys(k for table in tables for k in (table.get(env) or {})):
            values = [(table.get(env) or {}).get(key) for table in tables]
            if any(v != values[0] for v in values):
                out.append({"field": f"environments.{env}.{key}", "values": values})
    return out

"""Gate verdicts and the run decision: thresholds, ``stop_if`` conditions, guards, blocking.

Everything here works on artifact-level data (case dicts, metric dicts, guard and stop dicts), so a live run and
``qlab merge`` judge the same evidence with the same code. A gate is:

- **blocked** when a gating threshold is breached, a gating stop condition fired, or a ``block``-mode guard
  failed;
- **warned** when only non-gating findings remain: a ``required: false`` suite, a flaky case, a ``warn``-mode
  guard, or a threshold deferred to ``qlab merge`` (a shard judges thresholds on the merged set only);
- **skipped** when it did not run (an earlier gate blocked, or none of its cases was selected);
- **passed** otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.metrics import STAGE_OBJECTS, Case, gating
from qlab.project.model import Gate

OPS = {
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}
# stop condition -> the failure reasons (at the gate's stage) that fire it
STOP_REASONS: dict[str, frozenset[str]] = {
    "expected_target_absent": frozenset({"expected_target_absent", "expected_target_unknown"}),
    "ambiguous_critical": frozenset({"ambiguous_critical"}),
    "required_fields_unsatisfied": frozenset({"required_fields_unsatisfied"}),
    "auth_not_ready": frozenset(
        {"auth_context_required", "auth_profile_missing", "auth_header_resolution_failed"}
    ),
    "mutation_unsafe": frozenset(
        {"mutation_not_allowed", "host_not_allowed", "cleanup_missing", "redirect_refused"}
    ),
    "assertion_failed": frozenset({"assertion_failed", "schema_mismatch"}),
    "scrub_failed": frozenset({"scrub_failed"}),
}
# the latency key a stage writes, for rolling a case back to "blocked" in a merge
STAGE_LATENCY = {"search": "search", "select": "target_selection", "plan": "plan", "execute": "execute"}
STAGE_ORDER = ("build", "search", "select", "plan", "execute", "learn")


@dataclass(frozen=True, slots=True)
class GateSpec:
    """What a gate checks, independent of where it came from (qlab.yaml or a stored artifact)."""

    name: str
    stage: str
    suites: tuple[str, ...] = ()
    thresholds: tuple[tuple[str, str, float], ...] = ()  # (metric, op, value)
    stop_if: tuple[tuple[str, float | None], ...] = ()  # (condition, argument)

    @classmethod
    def from_config(cls, gate: Gate, *, suites: tuple[str, ...]) -> GateSpec:
        """``suites`` is the gate's effective suite list (see ``qlab.run.selection.gate_suites``)."""
        return cls(
            name=gate.name,
            stage=gate.stage,
            suites=suites,
            thresholds=tuple((t.metric, t.op, float(t.value)) for t in gate.thresholds),
            stop_if=tuple((s.name, s.value) for s in gate.stop_if),
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> GateSpec:
        """Rebuild the spec from a gate record of a result artifact (``to_record`` output)."""
        return cls(
            name=str(record["name"]),
            stage=str(record["stage"]),
            suites=tuple(record.get("suites", ())),
            # one row per (threshold, suite) in the record: keep each threshold once, in order
            thresholds=tuple(
                dict.fromkeys(
                    (str(t["metric"]), str(t["op"]), float(t["value"])) for t in record.get("thresholds", ())
                )
            ),
            stop_if=tuple((str(s["name"]), s.get("value")) for s in record.get("stop_if", ())),
        )


def _threshold_rows(
    spec: GateSpec,
    *,
    suite_metrics: Mapping[str, Mapping[str, float | None]],
    stage_metrics: Mapping[str, float | None],
    required: Mapping[str, bool],
    defer: bool,
) -> list[dict[str, Any]]:
    targets: list[tuple[str | None, Mapping[str, float | None], bool]]
    if spec.suites:
        targets = [(s, suite_metrics[s], required.get(s, True)) for s in spec.suites if s in suite_metrics]
    else:
        targets = [(None, stage_metrics, True)]
    rows = []
    for metric, op, value in spec.thresholds:
        for suite, figures, is_required in targets:
            actual = figures.get(metric)
            passed = None if actual is None else bool(OPS[op](actual, value))
            rows.append(
                {
                    "metric": metric,
                    "op": op,
                    "value": value,
                    "actual": actual,
                    "passed": passed,
                    "suite": suite,
                    "gating": is_required and not defer and passed is not None,
                }
            )
    return rows


def derive_stops(
    spec: GateSpec,
    *,
    cases: Sequence[Case],
    stage_metrics: Mapping[str, float | None],
    reported: Iterable[Mapping[str, Any]],
    required: Mapping[str, bool],
) -> list[dict[str, Any]]:
    """The gate's ``stop_if`` conditions that fired: from the failure reasons of its cases at its stage, from
    ``<metric>_below``/``_above`` arguments over the stage metrics, and from what the stage reported."""
    wanted = dict(spec.stop_if)
    found: dict[str, dict[str, Any]] = {}

    def add(condition: str, case_ids: Iterable[str], message: str) -> None:
        hit = found.setdefault(condition, {"condition": condition, "case_ids": set(), "message": message})
        hit["case_ids"].update(case_ids)
        if message and not hit["message"]:
            hit["message"] = message

    for stop in reported:
        if stop["condition"] in wanted:
            add(stop["condition"], stop.get("case_ids", ()), str(stop.get("message", "")))
    for condition, argument in wanted.items():
        if argument is not None and condition.endswith(("_below", "_above")) and condition not in found:
            metric = condition.rsplit("_", 1)[0]
            actual = stage_metrics.get(metric)
            if actual is not None and (
                actual < argument if condition.endswith("_below") else actual > argument
            ):
                add(condition, (), f"{metric} {actual:g} is {condition.rsplit('_', 1)[1]} {argument:g}")
    failed_here = [c for c in cases if _failed_at_stage(c, spec.stage)]
    for condition in wanted:
        if condition == "any_failure":
            ids = [str(c["case_id"]) for c in failed_here]
        elif condition == "ambiguous_critical":
            ids = [
                str(c["case_id"])
                for c in cases
                if (c.get("failure") or {}).get("reason") == "ambiguous_critical"
                or (c.get("critical") and (c.get("target_selector") or {}).get("ambiguous"))
            ]
        else:
            reasons = STOP_REASONS.get(condition, frozenset())
            ids = [str(c["case_id"]) for c in failed_here if c["failure"].get("reason") in reasons]
        if ids:
            add(
                condition,
                ids,
                f"{len(ids)} case(s): {', '.join(sorted(ids)[:5])}{' …' if len(ids) > 5 else ''}",
            )
    gating_ids = {str(c["case_id"]) for c in cases if gating(c) and required.get(str(c.get("suite")), True)}
    out = []
    for hit in found.values():
        ids = sorted(hit["case_ids"])
        out.append({**hit, "case_ids": ids, "gating": not ids or any(i in gating_ids for i in ids)})
    return sorted(out, key=lambda h: list(wanted).index(h["condition"]))


def _failed_at_stage(case: Case, stage: str) -> bool:
    failure = case.get("failure") or {}
    return failure.get("stage") == stage and case.get("status") in ("failed", "error")


def evaluate(
    spec: GateSpec,
    *,
    cases: Sequence[Case],
    suite_metrics: Mapping[str, Mapping[str, float | None]],
    stage_metrics: Mapping[str, float | None],
    required: Mapping[str, bool],
    reported_stops: Iterable[Mapping[str, Any]] = (),
    guards: Sequence[Mapping[str, Any]] = (),
    defer_thresholds: bool = False,
) -> dict[str, Any]:
    """Judge one gate that ran. Returns its artifact record (``gates[]`` of the result schema)."""
    thresholds = _threshold_rows(
        spec,
        suite_metrics=suite_metrics,
        stage_metrics=stage_metrics,
        required=required,
        defer=defer_thresholds,
    )
    stops = derive_stops(
        spec, cases=cases, stage_metrics=stage_metrics, reported=reported_stops, required=required
    )
    blocking: list[str] = []
    warnings: list[str] = []
    for row in thresholds:
        where = f" ({row['suite']})" if row["suite"] else ""
        if row["passed"] is False:
            text = f"{row['metric']} {row['actual']:g} breaches {row['op']} {row['value']:g}{where}"
            if row["gating"]:
                blocking.append(text)
            elif defer_thresholds:
                warnings.append(f"{text}; deferred: qlab merge judges thresholds on all shards")
            else:
                warnings.append(f"{text}; suite is required: false")
    for metric in dict.fromkeys(m for m, _, _ in spec.thresholds):
        if cases and all(r["actual"] is None for r in thresholds if r["metric"] == metric):
            warnings.append(f"{metric} could not be evaluated: no case produced it")
    for stop in stops:
        text = f"stop_if {stop['condition']}: {stop['message']}".rstrip(": ")
        (blocking if stop["gating"] else warnings).append(
            text if stop["gating"] else f"{text} (non-gating cases)"
        )
    for guard in guards:
        if not guard["passed"]:
            text = f"guard {guard['guard']} ({guard['mode']}): {guard['message']}"
            (blocking if guard["mode"] == "block" else warnings).append(text)
    flaky = [str(c["case_id"]) for c in cases if not gating(c) and _failed_at_stage(c, spec.stage)]
    if flaky:
        warnings.append(f"{len(flaky)} flaky case(s) failed and do not gate: {', '.join(flaky[:5])}")
    optional = [
        str(c["case_id"])
        for c in cases
        if gating(c) and not required.get(str(c.get("suite")), True) and _failed_at_stage(c, spec.stage)
    ]
    if optional:
        warnings.append(
            f"{len(optional)} case(s) of required: false suites failed: {', '.join(optional[:5])}"
        )
    status = "blocked" if blocking else "warned" if warnings else "passed"
    return {
        **_head(spec),
        "status": status,
        "thresholds": thresholds,
        "stops": stops,
        "guards": list(guards),
        "reasons": blocking + warnings,
        "warnings": warnings,
    }


def _head(spec: GateSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "stage": spec.stage,
        "suites": list(spec.suites),
        "stop_if": [{"name": n, "value": v} for n, v in spec.stop_if],
    }


def skipped(spec: GateSpec, reason: str) -> dict[str, Any]:
    """The record of a gate that did not run; its thresholds are listed with no actual value."""
    rows = [
        {"metric": m, "op": op, "value": v, "actual": None, "passed": None, "suite": None, "gating": False}
        for m, op, v in spec.thresholds
    ]
    return {
        **_head(spec),
        "status": "skipped",
        "thresholds": rows,
        "stops": [],
        "guards": [],
        "reasons": [reason],
        "warnings": [],
    }


def roll_back(case: dict[str, Any], *, blocking_stage: str, message: str) -> None:
    """Make a case that ran past a blocking gate look as it would have in one unsharded run: ``blocked`` by
    that stage, without the objects of the stages that would never have run."""
    later = STAGE_ORDER[STAGE_ORDER.index(blocking_stage) + 1 :] if blocking_stage in STAGE_ORDER else ()
    for stage in later:
        for key in STAGE_OBJECTS.get(stage, ()):
            case.pop(key, None)
        case.get("latency_ms", {}).pop(STAGE_LATENCY.get(stage, ""), None)
        if stage == "execute":
            case.pop("assertions", None)
    case["status"] = "blocked"
    case["failure"] = {"stage": blocking_stage, "reason": "blocked_by_stage", "message": message}


def decide(
    gates: Sequence[Mapping[str, Any]],
    *,
    prerun: Sequence[Mapping[str, Any]] = (),
    exit_zero: bool = False,
) -> dict[str, Any]:
    """The run decision. ``exit_code``: 2 when a pre-run check failed (the run could not be judged), else 1 for
    a block (0 with ``--exit-zero``, the advisory mode), else 0."""
    reasons = [
        f"pre-run check {g['guard']} failed: {g['message']}"
        for g in prerun
        if not g["passed"] and g["mode"] == "block"
    ]
    if reasons:
        return {"verdict": "block", "reasons": reasons, "exit_code": 2, "advisory": exit_zero}
    for gate in gates:
        if gate["status"] == "blocked":
            warned = set(gate.get("warnings", ()))
            reasons.extend(f"gate {gate['name']} blocked: {r}" for r in gate["reasons"] if r not in warned)
    verdict = "block" if reasons else "pass"
    code = 1 if verdict == "block" and not exit_zero else 0
    if verdict == "pass":
        reasons = [f"{sum(g['status'] in ('passed', 'warned') for g in gates)} gate(s) passed"] + [
            f"gate {g['name']} warned: {r}" for g in gates if g["status"] == "warned" for r in g["reasons"]
        ]
    return {"verdict": verdict, "reasons": reasons, "exit_code": code, "advisory": exit_zero}

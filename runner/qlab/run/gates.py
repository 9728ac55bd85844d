"""The decision rule: gate verdicts and the run decision, in one place (``docs/decision.md`` spells it out and
``tests/docs/test_decision.py`` renders its worked examples with this code).

A gate judges the cases of its suites: **error** when a gating case of a required suite failed with an
infrastructure reason (``outcome: error`` in ``qlab.contracts.reasons``); else **blocked** when a required suite's
failing cases charged to it (each to the first gate, in run order, at its stage or later) exceed what it tolerates
(none for ``regression`` / ``must_pass`` suites, else ``max_failures``, else its share-of-cases thresholds,
else none), or a threshold, a ``stop_if`` or a ``block`` guard fails; else **warned** on non-gating findings;
else **passed**; **skipped** when it did not run.

The run is ERROR (exit 2) when a pre-run check failed, a gate is error or no gating case was evaluated; else
BLOCK (1) when a gate blocked; else PASS (0). A run and ``qlab merge`` judge alike with this code."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.contracts.metrics import (
    MODE_STAGES,
    STAGE_OBJECTS,
    Case,
    denominator,
    draft,
    earlier_failures,
    gating,
    not_reached,
    unstable,
)
from qlab.contracts.reasons import REASONS, is_infrastructure
from qlab.project.model import Gate
from qlab.run.stops import derive_stops

OPS = {
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}
# the latency key a stage writes, for rolling a case back to "blocked" in a merge
STAGE_LATENCY = {"search": "search", "select": "target_selection", "plan": "plan", "execute": "execute"}
STAGE_ORDER = ("build", "search", "select", "plan", "execute", "learn")
VERDICT_EXIT = {"pass": 0, "block": 1, "error": 2}
_SHOWN = 5  # cases named in a reason before "…"
RECORDED = (
    50  # failing cases a gate record lists per suite (``failures[].cases``; ``failing`` counts them all)
)


@dataclass(frozen=True, slots=True)
class SuiteRule:
    """What the decision rule needs of a suite: does it gate (``required``), and may it fail at all."""

    required: bool = True
    must_pass: bool = False
    why: str = ""  # why it must pass: "category regression" or "must_pass: true"


def suite_rule(info: Mapping[str, Any]) -> SuiteRule:
    """The rule of a suite from its ``{category, required, must_pass}`` (the artifact's ``suites`` section)."""
    if info.get("category") == "regression":
        why = "category regression"
    elif info.get("must_pass"):
        why = "must_pass: true"
    else:
        why = ""
    return SuiteRule(required=bool(info.get("required", True)), must_pass=bool(why), why=why)


def suite_rules(section: Mapping[str, Mapping[str, Any]]) -> dict[str, SuiteRule]:
    return {name: suite_rule(info) for name, info in section.items()}


@dataclass(frozen=True, slots=True)
class GateSpec:
    """What a gate checks, independent of where it came from (qlab.yaml or a stored artifact)."""

    name: str
    stage: str
    suites: tuple[str, ...] = ()
    thresholds: tuple[tuple[str, str, float], ...] = ()  # (metric, op, value)
    stop_if: tuple[tuple[str, float | None], ...] = ()  # (condition, argument)
    max_failures: int | None = None

    @classmethod
    def from_config(cls, gate: Gate, *, suites: tuple[str, ...]) -> GateSpec:
        """``suites`` is the gate's effective suite list (see ``qlab.run.selection.gate_suites``)."""
        return cls(
            name=gate.name,
            stage=gate.stage,
            suites=suites,
            thresholds=tuple((t.metric, t.op, float(t.value)) for t in gate.thresholds),
            stop_if=tuple((s.name, s.value) for s in gate.stop_if),
            max_failures=gate.max_failures,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> GateSpec:
        """Rebuild the spec from a gate record of a result artifact (``to_record`` output)."""
        limit = record.get("max_failures")
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
            max_failures=int(limit) if isinstance(limit, int) else None,
        )


# --------------------------------------------------------------------------------------------- the rule


def _failing(case: Case) -> bool:
    return case.get("status") in ("failed", "error") and case.get("failure") is not None


def _stage_index(stage: Any) -> int:
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else -1


def charged(spec: GateSpec, cases: Iterable[Case], *, earlier: Sequence[GateSpec] = ()) -> list[Case]:
    """Rule 2: the failing cases this gate answers for. ``earlier``: the gates that judged before it in this run.

    A case is charged here when it belongs to one of the gate's suites, failed at this gate's stage or an earlier
    one, and no earlier gate judges its suite at a stage at or after the one it failed at."""
    here = _stage_index(spec.stage)
    out = []
    for case in cases:
        if not _failing(case) or case.get("suite") not in spec.suites:
            continue
        failed = _stage_index((case.get("failure") or {}).get("stage"))
        if failed > here:
            continue
        suite = case.get("suite")
        if any(suite in g.suites and _stage_index(g.stage) >= failed for g in earlier):
            continue
        out.append(case)
    return out


def allowed(n: int, op: str, value: float) -> int:
    """How many of ``n`` cases may fail while a success share still holds ``op value`` (rule 3)."""
    digits, scale = _decimal(value)  # exact decimals: 0.9 of 10 cases allows 1 failure, not 0.9999…
    # the whole failures the share leaves room for, and what is left over
    room, left = divmod(n * (scale - digits), scale)
    if op == ">" and left == 0:  # strictly above: one failure fewer when the room is a whole number
        room -= 1
    return max(0, room)  # a share above 1 leaves negative room: none tolerated


def _decimal(value: float) -> tuple[int, int]:
    """``value`` as the decimal it is written as (its shortest repr: 0.9 is 9/10, not the binary double's
    ratio), as integers (digits, scale) with value = digits / scale and scale a power of ten."""
    mantissa, _, exponent = repr(value).lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    shift = int(exponent or 0) - len(fraction)
    digits = int(whole + fraction)
    return (digits * 10**shift, 1) if shift >= 0 else (digits, 10**-shift)


def tolerance(spec: GateSpec, suite: str, cases: Sequence[Case], rule: SuiteRule) -> tuple[int, str, bool]:
    """Rule 3: how many failing cases ``suite`` may have at this gate, why, and whether that number comes from
    thresholds (which a shard cannot judge: its ``n`` is not the run's)."""
    if rule.must_pass:
        return 0, f"a must-pass suite ({rule.why}) tolerates none", False
    if spec.max_failures is not None:
        return spec.max_failures, f"max_failures: {spec.max_failures}", False
    members = [c for c in cases if c.get("suite") == suite]
    budgets: list[tuple[int, str]] = []
    for metric, op, value in spec.thresholds:
        n = denominator(metric, members)  # None for a metric that is not a share of cases
        if n and op in (">=", ">", "=="):
            budgets.append((allowed(n, op, value), f"{metric} {op} {value:g} over {n} case(s)"))
    if budgets:
        most, why = min(budgets)
        return most, why, True
    return 0, "no tolerance stated: no max_failures, no share-of-cases threshold measured on it", False


def _case_text(case: Case) -> str:
    failure = case.get("failure") or {}
    return f"{case.get('case_id')} at {failure.get('stage')} ({failure.get('reason')})"


def _listed(cases: Sequence[Case]) -> str:
    return ", ".join(_case_text(c) for c in cases[:_SHOWN]) + (" …" if len(cases) > _SHOWN else "")


def judge_failures(
    spec: GateSpec,
    cases: Sequence[Case],
    *,
    rules: Mapping[str, SuiteRule],
    earlier: Sequence[GateSpec] = (),
    defer: bool = False,
) -> dict[str, Any]:
    """Rules 1-3 over the gate's cases: ``{"failures": [...], "errors": [...], "blocking": [...],
    "warnings": [...]}`` — the per-suite tolerance records, the infrastructure faults by reason code, and the
    texts that block or warn."""
    mine = charged(spec, cases, earlier=earlier)
    judged = [c for c in mine if gating(c) and rules.get(str(c.get("suite")), SuiteRule()).required]
    infra = [c for c in judged if is_infrastructure((c.get("failure") or {}).get("reason"))]
    errors: dict[str, list[str]] = {}
    for case in infra:
        errors.setdefault(str(case["failure"]["reason"]), []).append(str(case["case_id"]))
    found = [{"reason": code, "case_ids": ids} for code, ids in errors.items()]
    infra_ids = {id(c) for c in infra}
    product = [c for c in judged if id(c) not in infra_ids]
    blocking: list[str] = []
    warnings: list[str] = []
    failures = []
    for suite in spec.suites:
        if not any(c.get("suite") == suite for c in cases):
            continue
        rule = rules.get(suite, SuiteRule())
        failing = [c for c in product if c.get("suite") == suite]
        most, why, from_thresholds = tolerance(spec, suite, cases, rule)
        blocks = rule.required and len(failing) > most
        failures.append(
            {
                "suite": suite,
                "must_pass": rule.must_pass,
                "failing": len(failing),
                "tolerated": most,
                "tolerance": why,
                # the first ones by name: every case carries its own failure (a 100,000-case record stays small)
                "cases": [
                    {
                        "case_id": c["case_id"],
                        "stage": c["failure"].get("stage"),
                        "reason": c["failure"].get("reason"),
                    }
                    for c in failing[:RECORDED]
                ],
                "blocks": blocks and not (defer and from_thresholds),
            }
        )
        if not blocks:
            continue
        text = f"{suite}: {len(failing)} failing case(s), tolerates {most} ({why}): {_listed(failing)}"
        if defer and from_thresholds:
            warnings.append(f"{text}; deferred: qlab merge counts the failing cases of all shards")
        else:
            blocking.append(text)
    flaky = [c for c in mine if not gating(c) and not draft(c)]
    if flaky:
        warnings.append(f"{len(flaky)} flaky case(s) failed and do not gate: {_listed(flaky)}")
    drafts = [c for c in mine if draft(c)]
    if drafts:
        warnings.append(f"{len(drafts)} draft case(s) failed and do not gate: {_listed(drafts)}")
    optional = [c for c in mine if gating(c) and not rules.get(str(c.get("suite")), SuiteRule()).required]
    if optional:
        warnings.append(f"{len(optional)} case(s) of required: false suites failed: {_listed(optional)}")
    shaky = [
        c for c in cases if c.get("suite") in spec.suites and c.get("status") == "passed" and unstable(c)
    ]
    if shaky:
        shown = ", ".join(f"{c['case_id']} ({c.get('passes')}/{c.get('attempts')})" for c in shaky[:_SHOWN])
        warnings.append(
            f"{len(shaky)} case(s) passed only some of their repeats (flaky): {shown}"
            + (" …" if len(shaky) > _SHOWN else "")
        )
    return {
        "failures": failures,
        "errors": found,
        "blocking": blocking,
        "warnings": warnings,
    }


def error_text(error: Mapping[str, Any]) -> str:
    """One line for an infrastructure fault of a gate: what could not be judged, and what to do."""
    code = str(error.get("reason"))
    ids = [str(i) for i in error.get("case_ids") or ()]
    what = (
        f"{len(ids)} case(s) could not be judged: {code} ({', '.join(ids[:_SHOWN])}{' …' if len(ids) > _SHOWN else ''})"
        if ids
        else f"{code}: {error.get('message', '')}"
    )
    hint = REASONS[code].hint if code in REASONS else ""
    return f"{what}; {hint}" if hint else what


# --------------------------------------------------------------------------------------------- gates


def _threshold_rows(
    spec: GateSpec,
    *,
    cases: Sequence[Case],
    suite_metrics: Mapping[str, Mapping[str, float | None]],
    stage_metrics: Mapping[str, float | None],
    rules: Mapping[str, SuiteRule],
    defer: bool,
) -> list[dict[str, Any]]:
    targets: list[tuple[str | None, Mapping[str, float | None], bool]]
    if spec.suites:
        targets = [
            (s, suite_metrics[s], rules.get(s, SuiteRule()).required)
            for s in spec.suites
            if s in suite_metrics
        ]
    else:
        targets = [(None, stage_metrics, True)]
    rows = []
    for metric, op, value in spec.thresholds:
        for suite, figures, is_required in targets:
            actual = figures.get(metric)
            passed = None if actual is None else bool(OPS[op](actual, value))
            row = {
                "metric": metric,
                "op": op,
                "value": value,
                "actual": actual,
                "passed": passed,
                "suite": suite,
                "gating": is_required and not defer and passed is not None,
            }
            members = [c for c in cases if c.get("suite") == suite] if suite else cases
            if actual is None and not_reached({metric: None}, members):
                row["not_reached"] = True  # its stage never took these cases: n/a, never a breach nor a 0
            earlier = earlier_failures(metric, members) if suite else {}
            if earlier:
                row["failed_earlier"] = (
                    earlier  # counted as failures of this rate, by the stage they failed at
                )
            rows.append(row)
    return rows


def evaluate(
    spec: GateSpec,
    *,
    cases: Sequence[Case],
    suite_metrics: Mapping[str, Mapping[str, float | None]],
    stage_metrics: Mapping[str, float | None],
    rules: Mapping[str, SuiteRule],
    earlier: Sequence[GateSpec] = (),
    reported_stops: Iterable[Mapping[str, Any]] = (),
    guards: Sequence[Mapping[str, Any]] = (),
    defer_thresholds: bool = False,
) -> dict[str, Any]:
    """Judge one gate that ran (see the module docstring). Returns its artifact record (``gates[]``)."""
    required = {name: rule.required for name, rule in rules.items()}
    thresholds = _threshold_rows(
        spec,
        cases=cases,
        suite_metrics=suite_metrics,
        stage_metrics=stage_metrics,
        rules=rules,
        defer=defer_thresholds,
    )
    stops = derive_stops(
        spec.stop_if,
        stage=spec.stage,
        cases=cases,
        stage_metrics=stage_metrics,
        reported=reported_stops,
        required=required,
    )
    verdict = judge_failures(spec, cases, rules=rules, earlier=earlier, defer=defer_thresholds)
    blocking: list[str] = []
    warnings: list[str] = []
    for row in thresholds:
        where = f" ({row['suite']})" if row["suite"] else ""
        if row["passed"] is False:
            text = f"{row['metric']} {row['actual']:g} breaches {row['op']} {row['value']:g}{where}"
            if row.get("failed_earlier"):
                text += (
                    " (counting "
                    + ", ".join(f"{n} failed at {stage}" for stage, n in row["failed_earlier"].items())
                    + ")"
                )
            if row["gating"]:
                blocking.append(text)
            elif defer_thresholds:
                warnings.append(f"{text}; deferred: qlab merge judges thresholds on all shards")
            else:
                warnings.append(f"{text}; suite is required: false")
    for metric in dict.fromkeys(m for m, _, _ in spec.thresholds):
        if cases and all(r["actual"] is None for r in thresholds if r["metric"] == metric):
            warnings.append(f"{metric} could not be evaluated: no case produced it")
    blocking += verdict["blocking"]
    for stop in stops:
        text = f"stop_if {stop['condition']}" + (f": {stop['message']}" if stop["message"] else "")
        (blocking if stop["gating"] else warnings).append(
            text if stop["gating"] else f"{text} (non-gating cases)"
        )
    for guard in guards:
        if not guard["passed"]:
            text = f"guard {guard['guard']} ({guard['mode']}): {guard['message']}"
            (blocking if guard["mode"] == "block" else warnings).append(text)
    warnings += verdict["warnings"]
    errors = [error_text(e) for e in verdict["errors"]]
    status = "error" if errors else "blocked" if blocking else "warned" if warnings else "passed"
    record = {
        **_head(spec),
        "status": status,
        "thresholds": thresholds,
        "stops": stops,
        "guards": list(guards),
        "failures": verdict["failures"],
        "reasons": errors + blocking + warnings,
        "warnings": warnings,
    }
    if errors:
        record["errors"] = verdict["errors"]
    return record


def _head(spec: GateSpec) -> dict[str, Any]:
    head: dict[str, Any] = {
        "name": spec.name,
        "stage": spec.stage,
        "suites": list(spec.suites),
        "stop_if": [{"name": n, "value": v} for n, v in spec.stop_if],
    }
    if spec.max_failures is not None:
        head["max_failures"] = spec.max_failures
    return head


def skipped(spec: GateSpec, reason: str, *, stopped: bool = False) -> dict[str, Any]:
    """The record of a gate that did not run; its thresholds are listed with no actual value — ``not_reached``
    when the run ``stopped`` before it (an earlier gate blocked or could not decide)."""
    rows = [
        {"metric": m, "op": op, "value": v, "actual": None, "passed": None, "suite": None, "gating": False}
        for m, op, v in spec.thresholds
    ]
    if stopped:
        for row in rows:
            row["not_reached"] = True
    return {
        **_head(spec),
        "status": "skipped",
        "thresholds": rows,
        "stops": [],
        "guards": [],
        "reasons": [reason],
        "warnings": [],
    }


def errored(spec: GateSpec, reason: str, message: str) -> dict[str, Any]:
    """The record of a gate that could not judge at all (its stage's dependency failed: a spec URL)."""
    error = {"reason": reason, "case_ids": [], "message": message}
    record = skipped(spec, error_text(error))
    record.update(status="error", errors=[error])
    return record


def stopped_gate_text(gate: str | None, *, error: bool) -> str:
    """Why a gate after the one that stopped the run did not run (its record's reason); ``gate`` None: a pre-run
    check stopped the run before any gate."""
    if gate is None:
        return "stopped: a pre-run check failed"
    if error:
        return f"stopped: gate {gate} could not decide (an infrastructure fault)"
    return f"blocked by gate {gate}"


def never_ran_text(check: Mapping[str, Any]) -> str:
    """What a case is told when a failed pre-run ``check`` (a guard record) kept the whole run from starting."""
    return f"pre-run check {check.get('guard')} failed; this case never ran: {check.get('message')}"


def stopped_text(gate: str, *, error: bool, mode: str, holds: Callable[[str], Any]) -> str:
    """What a case a stopping gate kept from running is told: the gate, and the first stage of its mode it did not
    reach (``holds(key)``: the case's stage object under ``key``, None when it has none). A case that went through
    select before the select gate blocked did run there: it never reached plan."""
    what = "could not decide" if error else "blocked the run"
    stages = MODE_STAGES.get(mode, ())
    went = [s for s in stages if any(holds(key) is not None for key in STAGE_OBJECTS.get(s, ()))]
    missing = next((s for s in stages if s not in went), None)
    index = stages.index(missing) if missing is not None else 0
    if index == 0:
        return f"the {gate} gate {what}; this case never ran"
    return f"the {gate} gate {what}; this case went through {stages[index - 1]} and never reached {missing}"


def roll_back(
    case: dict[str, Any],
    *,
    blocking_stage: str,
    gate: str,
    error: bool = False,
    keep: Collection[str] | None = None,
) -> None:
    """Make a case that ran past a stopping gate look as it would have in one unsharded run: ``blocked`` by
    that stage (``skipped``, ``stopped_by_error`` when the gate was an error), without the objects of the stages
    that would never have run: those after the blocking stage, or every stage not in ``keep`` (the stages the
    case went through in the gates that ran)."""
    later = STAGE_ORDER[STAGE_ORDER.index(blocking_stage) + 1 :] if blocking_stage in STAGE_ORDER else ()
    if keep is not None:
        later = tuple(s for s in STAGE_ORDER if s not in keep)
    if "passes" in case:  # no attempt of it counts: it never ran there
        case["passes"] = 0
    for stage in later:
        for key in STAGE_OBJECTS.get(stage, ()):
            case.pop(key, None)
        case.get("latency_ms", {}).pop(STAGE_LATENCY.get(stage, ""), None)
        if stage == "execute":
            case.pop("assertions", None)
    case["status"] = "skipped" if error else "blocked"
    reason = "stopped_by_error" if error else "blocked_by_stage"
    message = stopped_text(gate, error=error, mode=str(case.get("mode")), holds=case.get)
    case["failure"] = {"stage": blocking_stage, "reason": reason, "message": message}


# --------------------------------------------------------------------------------------------- the run


NOTHING_JUDGED = (
    "no gating case was evaluated, so nothing was judged: every selected case was skipped, blocked, a draft, "
    "flaky or in a required: false suite; check the selection (--suite, --stage, --case) and the case files"
)


def judged_any(cases: Iterable[Mapping[str, Any]], suites: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when at least one gating case (active, not flaky, of a required suite) ran to a verdict."""
    return any(
        case.get("status") in ("passed", "failed", "error")
        and gating(case)
        and (suites.get(str(case.get("suite"))) or {}).get("required", True)
        for case in cases
    )


def decide(
    gates: Sequence[Mapping[str, Any]],
    *,
    prerun: Sequence[Mapping[str, Any]] = (),
    exit_zero: bool = False,
    cases: Sequence[Mapping[str, Any]] | None = None,
    suites: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The run decision: ``error`` (exit 2) when a pre-run check failed or a gate is error — qlab could not
    decide, whatever else it found —; else ``block`` (exit 1, 0 with ``--exit-zero``, the advisory mode) when a
    gate blocked; else ``pass`` (exit 0), unless ``cases`` (the run's, with its ``suites``) hold no gating case
    that was evaluated: then ``error``, since nothing was judged."""
    errors = [
        f"pre-run check {g['guard']} failed: {g['message']}"
        + (f"; {REASONS[g['reason']].hint}" if g.get("reason") in REASONS else "")
        for g in prerun
        if not g["passed"] and g["mode"] == "block"
    ]
    for gate in gates:
        if gate["status"] == "error":
            errors.extend(
                f"gate {gate['name']} could not decide: {error_text(e)}" for e in gate.get("errors", ())
            )
    if errors:
        return {"verdict": "error", "reasons": errors, "exit_code": 2, "advisory": exit_zero}
    reasons: list[str] = []
    for gate in gates:
        if gate["status"] == "blocked":
            warned = set(gate.get("warnings", ()))
            reasons.extend(f"gate {gate['name']} blocked: {r}" for r in gate["reasons"] if r not in warned)
    verdict = "block" if reasons else "pass"
    if verdict == "pass" and cases is not None and not judged_any(cases, suites or {}):
        return {"verdict": "error", "reasons": [NOTHING_JUDGED], "exit_code": 2, "advisory": exit_zero}
    code = 1 if verdict == "block" and not exit_zero else 0
    if verdict == "pass":
        reasons = [f"{sum(g['status'] in ('passed', 'warned') for g in gates)} gate(s) passed"] + [
            f"gate {g['name']} warned: {r}" for g in gates if g["status"] == "warned" for r in g["reasons"]
        ]
    return {"verdict": verdict, "reasons": reasons, "exit_code": code, "advisory": exit_zero}

"""A gate's ``stop_if`` conditions: which fired, on which cases, and whether they gate.

Split from ``qlab.run.gates`` (which decides) because it only finds: the failure reasons behind each named
condition, the ``<metric>_below`` / ``_above`` bounds over the stage metrics, and what the stage reported itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qlab.contracts.metrics import Case, gating
from qlab.contracts.reasons import AUTH_FAILURES

# stop condition -> the failure reasons (at the gate's stage) that fire it
STOP_REASONS: dict[str, frozenset[str]] = {
    "expected_target_absent": frozenset({"expected_target_absent", "expected_target_unknown"}),
    "ambiguous_critical": frozenset({"ambiguous_critical"}),
    "required_fields_unsatisfied": frozenset({"required_fields_unsatisfied"}),
    "auth_not_ready": AUTH_FAILURES,  # preflight, and 401/403 at run time
    "mutation_unsafe": frozenset(
        {"mutation_not_allowed", "host_not_allowed", "cleanup_missing", "redirect_refused"}
    ),
    "assertion_failed": frozenset({"assertion_failed", "schema_mismatch"}),
    "scrub_failed": frozenset({"scrub_failed"}),
}


def failed_at_stage(case: Case, stage: str) -> bool:
    failure = case.get("failure") or {}
    return failure.get("stage") == stage and case.get("status") in ("failed", "error")


def _cases_message(ids: Sequence[str], cases: Sequence[Case]) -> str:
    """A stop's message from its cases alone (how many, the first few, their reasons): the same words whether one
    run or the merge of its shards found them, whatever each stage wrote."""
    wanted = set(ids)
    mine = [c for c in cases if str(c.get("case_id")) in wanted]
    reasons = sorted(
        {str((c.get("failure") or {}).get("reason")) for c in mine if (c.get("failure") or {}).get("reason")}
    )
    # the environment variables an auth profile could not read (names, never values): what a fork PR lacks
    unset = sorted({str(n) for c in mine for n in ((c.get("auth_readiness") or {}).get("missing_env") or ())})
    shown = f"{len(ids)} case(s): {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}"
    said = ", ".join(reasons) + (f"; not set: {', '.join(unset)}" if unset else "")
    return f"{shown} ({said})" if said else shown


def derive_stops(
    stop_if: Sequence[tuple[str, float | None]],
    *,
    stage: str,
    cases: Sequence[Case],
    stage_metrics: Mapping[str, float | None],
    reported: Iterable[Mapping[str, Any]],
    required: Mapping[str, bool],
) -> list[dict[str, Any]]:
    """The ``stop_if`` conditions that fired: from the failure reasons of the cases at ``stage``, from
    ``<metric>_below``/``_above`` arguments over the stage metrics, and from what the stage reported."""
    wanted = dict(stop_if)
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
    failed_here = [c for c in cases if failed_at_stage(c, stage)]
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
            add(condition, ids, "")  # a stop with cases is worded from them below (``_cases_message``)
    gating_ids = {str(c["case_id"]) for c in cases if gating(c) and required.get(str(c.get("suite")), True)}
    out = []
    for hit in found.values():
        ids = sorted(hit["case_ids"])
        message = _cases_message(ids, cases) if ids else hit["message"]
        out.append(
            {
                **hit,
                "case_ids": ids,
                "message": message,
                "gating": not ids or any(i in gating_ids for i in ids),
            }
        )
    return sorted(out, key=lambda h: list(wanted).index(h["condition"]))

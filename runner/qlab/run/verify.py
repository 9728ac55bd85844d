"""A stored result, judged again from its case records: what every command that reads a result artifact uses
(``qlab release``, ``promote``, ``approve``, ``learn``, ``propose-case``, ``report``), never the stored figures.

``verified`` judges the gates again from the cases with ``qlab.run.gates`` and the evidence the run recorded
beside them (as ``qlab merge`` judges shards), and computes the metrics again. It refuses the artifact
(``artifact_inconsistent``, exit 2) when a case record contradicts itself, a skipped gate holds cases that went
through its stage, or the stored decision, a gate's verdict, a case's status or (for a result of this qlab
version) a stored metric is not what the cases give (``problems``). A result of another version has its figures
replaced, not compared.

An edit that rewrites the cases, the gate records and the decision so that they agree is not caught: an
artifact is only as trustworthy as the storage it came from (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts import metrics
from qlab.contracts.errors import InputError
from qlab.run import artifact, evidence, gates, merge
from qlab.version import __version__

REASON = "artifact_inconsistent"
_SHOWN = 5  # disagreements named in the refusal


def rederive(data: Mapping[str, Any]) -> dict[str, Any]:
    """``{cases, gates, decision, metrics, suites}`` as the artifact's cases and recorded evidence give them."""
    cases = [
        dict(c) for c in data.get("cases") or ()
    ]  # judging rolls stopped cases back: the stored ones stay
    shard: Mapping[str, Any] = data["shard"] if isinstance(data.get("shard"), Mapping) else {}
    one_of_many = int(shard.get("total") or 1) > 1 and "merged_from" not in shard
    prerun = evidence.guards([data], [list(data.get("prerun") or ())])
    failed = next((g for g in prerun if not g.get("passed") and g.get("mode") == "block"), None)
    records = merge.judge([data], cases, evidence.stages([data]), prerun_failed=failed, defer=one_of_many)
    advisory = bool((data.get("decision") or {}).get("advisory"))
    suites = {
        name: {k: info.get(k) for k in artifact.SUITE_KEYS if k in info}
        for name, info in (data.get("suites") or {}).items()
        if isinstance(info, Mapping)
    }
    return {
        "cases": cases,
        "gates": records,
        "decision": gates.decide(records, prerun=prerun, exit_zero=advisory, cases=cases, suites=suites),
        "metrics": metrics.acceptance(cases),
        "suites": artifact.suite_section(suites, cases),
    }


def problems(data: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    """Where the stored artifact disagrees with ``found`` (``rederive``), most telling first."""
    out = _case_problems(data)
    stored = data.get("decision")
    if isinstance(stored, Mapping):
        mine = (stored.get("verdict"), stored.get("exit_code"))
        theirs = (found["decision"]["verdict"], found["decision"]["exit_code"])
        if mine != theirs:
            out.append(f"its decision says {_said(*mine)}, its cases give {_said(*theirs)}")
    recorded = [g for g in data.get("gates") or () if isinstance(g, Mapping)]
    for old, new in zip(recorded, found["gates"], strict=False):
        if old.get("status") != new.get("status"):
            out.append(
                f"gate {new.get('name')}: recorded {old.get('status')}, its cases give {new.get('status')}"
            )
    out += _skipped_problems(recorded, found["gates"], found["cases"])
    for old, new in zip(data.get("cases") or (), found["cases"], strict=False):
        if old.get("status") != new.get("status"):
            out.append(
                f"case {new.get('case_id')}: recorded {old.get('status')}, but "
                f"{(new.get('failure') or {}).get('message') or 'the gates give ' + str(new.get('status'))}"
            )
    if data.get("qlab_version") == __version__:
        out += _metric_problems(data, found)
    return out


def _said(verdict: Any, code: Any) -> str:
    return f"{str(verdict).upper()} (exit {code})"


def _case_problems(data: Mapping[str, Any]) -> list[str]:
    """Case records that contradict themselves or the gate records."""
    stoppers = {
        str(g.get("stage"))
        for g in data.get("gates") or ()
        if isinstance(g, Mapping) and g.get("status") in ("blocked", "error")
    }
    prerun_failed = any(not g.get("passed") and g.get("mode") == "block" for g in data.get("prerun") or ())
    out = []
    for case in data.get("cases") or ():
        status, failure = case.get("status"), case.get("failure")
        name = f"case {case.get('case_id')}"
        if status == "passed" and failure is not None:
            out.append(f"{name}: passed, yet it records a failure ({(failure or {}).get('reason')})")
        elif status in ("failed", "error") and not isinstance(failure, Mapping):
            out.append(f"{name}: {status}, yet it records no failure")
        elif status in ("blocked", "skipped") and isinstance(failure, Mapping):
            stage = str(failure.get("stage"))
            if (
                failure.get("reason") in metrics.STOPPED
                and stage not in stoppers
                and not (stage == "run" and prerun_failed)
            ):
                out.append(f"{name}: {status} by the {stage} stage, yet no gate there stopped the run")
    return out


def _skipped_problems(
    recorded: Sequence[Mapping[str, Any]],
    judged: Sequence[Mapping[str, Any]],
    cases: Sequence[Mapping[str, Any]],
) -> list[str]:
    """A gate recorded skipped whose cases went through its stage while no gate that judged took them there."""
    ran = [(str(g.get("stage")), set(g.get("suites") or ())) for g in judged if g.get("status") != "skipped"]
    out = []
    for gate in recorded:
        stage = str(gate.get("stage"))
        if gate.get("status") != "skipped" or stage not in metrics.CASE_STAGES:
            continue
        suites = set(gate.get("suites") or ())
        later = metrics.STAGE_ORDER.index(stage)
        went = [
            c
            for c in cases
            if c.get("suite") in suites
            and metrics.reached(c, stage)
            and not any(
                c.get("suite") in taken and metrics.STAGE_ORDER.index(s) >= later
                for s, taken in ran
                if s in metrics.STAGE_ORDER
            )
        ]
        if went:
            out.append(
                f"gate {gate.get('name')}: recorded skipped, yet {len(went)} of its cases went through "
                f"{stage} ({', '.join(str(c.get('case_id')) for c in went[:_SHOWN])})"
            )
    return out


def _metric_problems(data: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    out = []
    stored = data.get("metrics")
    if isinstance(stored, Mapping):
        out += [
            f"metrics.{key}: recorded {stored[key]!r}, its cases give {value!r}"
            for key, value in found["metrics"].items()
            if key in stored and stored[key] != value
        ]
    for name, info in (data.get("suites") or {}).items():
        mine = found["suites"].get(name) or {}
        if not isinstance(info, Mapping):
            continue
        for section in ("metrics", "counts"):
            recorded = info.get(section)
            if not isinstance(recorded, Mapping):
                continue
            out += [
                f"suites.{name}.{section}.{key}: recorded {recorded[key]!r}, its cases give {value!r}"
                for key, value in (mine.get(section) or {}).items()
                if key in recorded and recorded[key] != value
            ]
    return out


def verified(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``data`` with its decision, gates, metrics and suites as its cases give them; InputError
    (``artifact_inconsistent``) naming what disagrees when the stored ones do not (see the module docstring)."""
    try:
        found = rederive(data)
        wrong = problems(data, found)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a record of a shape no run writes
        raise InputError(
            f"{where}: refused ({REASON}): its records cannot be judged again from its cases "
            f"({type(exc).__name__}: {exc}); is it a result qlab wrote?"
        ) from None
    if wrong:
        shown = "; ".join(wrong[:_SHOWN]) + (
            f"; and {len(wrong) - _SHOWN} more" if len(wrong) > _SHOWN else ""
        )
        raise InputError(
            f"{where}: refused ({REASON}): the result's stored verdict or figures disagree with its own case "
            f"records: {shown}. Was it edited after the run? Take the result from the job that wrote it (an "
            "artifact is only as trustworthy as the storage it came from), or run qlab again."
        )
    out = dict(data)
    for key in ("decision", "gates", "metrics"):
        if key == "metrics" and isinstance(data.get("metrics"), Mapping):
            out[key] = {**data["metrics"], **found["metrics"]}  # schema_validity: from the stages' checks
        else:
            out[key] = found[key]
    stored_suites: Mapping[str, Any] = data["suites"] if isinstance(data.get("suites"), Mapping) else {}
    out["suites"] = {}
    for name, info in found["suites"].items():
        kept: Mapping[str, Any] = stored_suites[name] if isinstance(stored_suites.get(name), Mapping) else {}
        # figures an engine reported that qlab does not compute stay as recorded; every other one is the cases'
        out["suites"][name] = {**kept, **info, "metrics": {**(kept.get("metrics") or {}), **info["metrics"]}}
    return out

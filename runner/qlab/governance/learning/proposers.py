"""Proposals from signals, beyond the alias and selector notes of ``qlab.governance.learning.suggest``: a query
rewrite (memory), a policy change (budget, stop condition, guard mode) and a regression case (eval case).

Every proposal is ``pending_review`` and carries ``type``, ``kind``, ``signal``, the ``change`` it would make,
``text`` and ``evidence``; its id (``sg-`` + a digest of its kind and change) is stable, so the same proposal from
two runs is one proposal and a rejected one never comes back. Nothing here writes a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.collection.model import Collection, Tool
from qlab.contracts.results import to_json
from qlab.engine.text import Analyzer, split_words
from qlab.governance.learning.apply import KINDS
from qlab.governance.learning.proposals import propose
from qlab.governance.records import PENDING, Artifact, content_id, file_digest, sha256_digest
from qlab.project.model import Case, Config
from qlab.run import history

STOP_WORDS_MIN = 3  # a rewrite target word has at least this many letters
NAMED = 5  # tools a proposal's text names; the rest are counted


def proposal(
    kind: str, signal: str, change: Mapping[str, Any], text: str, evidence: Sequence[Any], run_id: Any
) -> dict[str, Any]:
    """A pending proposal of ``kind`` (its type follows from it)."""
    content = {"kind": kind, **change}
    return {
        "id": content_id("sg-", content),
        "status": PENDING,
        "type": KINDS[kind],
        "kind": kind,
        "signal": signal,
        "run_id": run_id,
        "change": dict(change),
        "text": text,
        "evidence": list(evidence),
    }


# ------------------------------------------------------------------------------------------- memory


def _name_words(tool: Tool) -> set[str]:
    """The words of a tool's id and summary, lowercase (``getMemberDeliveryList`` → get, member, delivery, list)."""
    return {w.lower() for w in split_words(f"{tool.id} {tool.summary}") if len(w) >= STOP_WORDS_MIN}


def query_rewrites(
    aliases: Sequence[Mapping[str, Any]], collection: Collection, run_id: Any
) -> list[dict[str, Any]]:
    """A missing word that kept two or more different tools out of the Top-K is a word users have for what the
    collection calls otherwise: propose rewriting it to the word those tools' names share (memory). ``aliases``
    are the alias proposals (their evidence holds each miss and its missing words)."""
    analyzer = Analyzer()
    # grouped by the word's term, so "consignment" and "consignments" are one word users have
    by_term: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    spelled: dict[str, list[str]] = {}
    for item in aliases:
        for evidence in item.get("evidence") or ():
            for word in evidence.get("missing_terms") or ():
                term = analyzer.term(str(word))
                if not term:
                    continue
                by_term.setdefault(term, {}).setdefault(str(item["tool_id"]), []).append(evidence)
                if str(word) not in spelled.setdefault(term, []):
                    spelled[term].append(str(word))
    out = []
    tools = collection.by_id()
    for term, per_tool in by_term.items():
        if len(per_tool) < 2 or not all(t in tools for t in per_tool):
            continue
        shared = set.intersection(*(_name_words(tools[t]) for t in per_tool)) - {"get", "list"}
        # a replacement must be a word the collection indexes and the query word is not
        options = sorted(w for w in shared if analyzer.term(w) and analyzer.term(w) != term)
        if not options:
            continue
        target = options[0]
        words = sorted(spelled[term])
        cases = list({id(e): e for found in per_tool.values() for e in found}.values())
        said = " / ".join(repr(w) for w in words)
        text = (
            f"Rewrite {said} to {target!r} in every query: {len(cases)} search case(s) of {len(per_tool)} tools "
            f"({_named(sorted(per_tool))}) missed because their queries say {said} where the tools say "
            f"{target!r}."
        )
        change = {"query_rewrites": dict.fromkeys(words, target)}
        out.append(proposal("query_rewrite", "search_miss", change, text, cases, run_id))
    return out


def _named(ids: Sequence[str]) -> str:
    """The first ``NAMED`` of ``ids`` and how many more: a proposal's text is read by a person, and it is copied
    into the ``learning`` object of every case it names (naming every tool of a regressed run would bloat each
    case; its evidence keeps every case and tool)."""
    shown = ", ".join(ids[:NAMED])
    return shown + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def entity_defaults(
    signals: Sequence[Mapping[str, Any]],
    *,
    previous: Mapping[str, Any] | None,
    cases: Sequence[Case] | None,
    run_id: Any,
) -> list[dict[str, Any]]:
    """A person corrected a case (``user_correction``) by giving it an entity its plan had asked the user for
    (``plan.user_input_slots`` of the failing run), and it passes now: propose that value as the entity's default
    (memory), so the queries that leave the entity out get it too. One proposal per entity and value."""
    corrected = [
        str(i) for s in signals if s.get("signal") == "user_correction" for i in s.get("case_ids") or ()
    ]
    if not previous or not corrected:
        return []
    wanted = set(corrected)
    before = {str(c.get("case_id")): c for c in _whole_cases(previous, signals).get("cases") or ()
              if str(c.get("case_id")) in wanted}  # fmt: skip
    by_id = {c.id: c for c in cases or ()}
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case_id in corrected:
        old, case = before.get(case_id), by_id.get(case_id)
        if old is None or case is None:
            continue
        plan = old.get("plan") if isinstance(old.get("plan"), Mapping) else {}
        slots = [s for s in plan.get("user_input_slots") or () if isinstance(s, Mapping)]
        asked = {str(slot.get("parameter")): str(slot.get("tool_id")) for slot in slots}
        for name in sorted(set(asked) & set(case.provided_entities)):
            value = case.provided_entities[name]
            if isinstance(value, (str, int, float, bool)):
                item = {"case_id": case_id, "entity": name, "value": value, "asked_by": asked[name]}
                found.setdefault((name, repr(value)), []).append(item)
    out = []
    for (name, _), evidence in found.items():
        value = evidence[0]["value"]
        ids = [str(e["case_id"]) for e in evidence]
        text = (
            f"Remember {name} = {value!r} as a default entity: {len(ids)} case(s) ({_named(ids)}) asked the user "
            f"for {name} and passed once a person gave it this value; a query that leaves it out would get it."
        )
        out.append(
            proposal(
                "entity_default",
                "user_correction",
                {"entity_defaults": {name: value}},
                text,
                evidence,
                run_id,
            )
        )
    return out


# ------------------------------------------------------------------------------------------- policy


def _round_up(value: float, step: float) -> float:
    return math.ceil(value / step) * step


def budget_raise(signal: Mapping[str, Any], run_id: Any) -> list[dict[str, Any]]:
    """The breached limits, raised to cover what the run used with a quarter to spare."""
    evidence = signal.get("evidence") or {}
    budget, used = evidence.get("budget") or {}, evidence.get("used") or {}
    change: dict[str, Any] = {}
    if (
        budget.get("max_duration_sec") is not None
        and used.get("duration_sec", 0) > budget["max_duration_sec"]
    ):
        change["max_duration_sec"] = int(_round_up(used["duration_sec"] * 1.25, 10))
    if (
        budget.get("max_llm_cost_usd") is not None
        and used.get("llm_cost_usd", 0) > budget["max_llm_cost_usd"]
    ):
        change["max_llm_cost_usd"] = round(_round_up(used["llm_cost_usd"] * 1.25, 0.01), 2)
    if budget.get("max_llm_tokens") is not None and used.get("llm_tokens", 0) > budget["max_llm_tokens"]:
        change["max_llm_tokens"] = int(_round_up(used["llm_tokens"] * 1.25, 1000))
    if not change:
        return []
    limits = ", ".join(f"{k} {budget.get(k)} → {v}" for k, v in change.items())
    text = (
        f"Raise the budget ({limits}): the run used {used}. Or make the run cheaper instead; the sandbox shows "
        "which stored runs the new limit lets through."
    )
    return [proposal("budget", "budget_breach", {"budget": change}, text, [evidence], run_id)]


def _gate_named(config: Config, stage: str) -> Any:
    return next((g for g in config.gates if g.stage == stage), None)


def drift_stops(
    signals: Sequence[Mapping[str, Any]], config: Config | None, run_id: Any
) -> list[dict[str, Any]]:
    """Stop on the drift next time, where the gate does not yet: ``auth_not_ready`` on the execute gate, and
    ``schema_coverage_below`` at the coverage the previous run had on the build gate."""
    if config is None:
        return []
    out = []
    for signal in signals:
        evidence = signal.get("evidence") or {}
        if evidence.get("kind") == "auth":
            gate = _gate_named(config, "execute")
            if gate is None or any(s.name == "auth_not_ready" for s in gate.stop_if):
                continue
            change = {"gate": gate.name, "add_stop_if": "auth_not_ready"}
            text = f"Stop the {gate.name} gate when auth is not ready (auth_not_ready): {signal.get('text')}."
        elif evidence.get("kind") == "readiness":
            gate = _gate_named(config, "build")
            floor = math.floor(float(evidence["schema_coverage_before"]) * 100) / 100
            current = (
                next((s.value for s in gate.stop_if if s.name == "schema_coverage_below"), None)
                if gate
                else None
            )
            if gate is None or (current is not None and current >= floor):
                continue
            change = {"gate": gate.name, "add_stop_if": {"schema_coverage_below": floor}}
            text = (
                f"Stop the {gate.name} gate below schema coverage {floor:.2f}, what the previous run had: "
                f"{signal.get('text')}."
            )
        else:
            continue
        out.append(proposal("stop_condition", "auth_readiness_drift", change, text, [evidence], run_id))
    return out


def guard_blocks(signal: Mapping[str, Any], config: Config | None, run_id: Any) -> list[dict[str, Any]]:
    """A guard that only warned although it found a problem: propose that it blocks."""
    out = []
    for guard in (signal.get("evidence") or {}).get("guards") or ():
        if guard.get("mode") != "warn":
            continue
        gate = _gate_named(config, str(guard.get("stage"))) if config is not None else None
        if gate is None:
            continue
        change = {"gate": gate.name, "guard": guard["guard"], "mode": "block"}
        text = (
            f"Make the {guard['guard']} check block the {gate.name} gate: it found a problem and only warned "
            f"({guard.get('message')})."
        )
        out.append(proposal("guard_mode", "guard_violation", change, text, [guard], run_id))
    return out


# ------------------------------------------------------------------------------------------- eval cases


def eval_cases(
    signals: Sequence[Mapping[str, Any]],
    *,
    artifact: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    cases: Sequence[Case] | None,
    config: Config | None,
) -> list[dict[str, Any]]:
    """A regression case for every case that failed in the previous run and passes now (its key difference
    from ``qlab.governance.learning.proposals``), unless it is already in a must-pass suite."""
    if not previous:
        return []
    by_id = {c.id: c for c in cases or ()}
    regression = config.learning.regression_suite if config is not None else None
    must_pass = {
        n for n, s in (config.suites.items() if config else ()) if s.category == "regression" or s.must_pass
    }
    runs: list[
        Artifact
    ] = []  # (before, now), made for the first proposal: this run's digest encodes it whole
    out = []
    for signal in signals:
        if signal.get("signal") not in ("failed_then_succeeded", "user_correction"):
            continue
        for case_id in signal.get("case_ids") or ():
            case = by_id.get(case_id)
            if case is None or case.suite in must_pass or case.suite == regression:
                continue
            if not runs:
                runs += (
                    Artifact(_whole_cases(previous, signals), str(previous.get("_path", "(the previous run)")),
                             _digest(previous)),
                    Artifact(artifact, "(this run)", _digest(artifact)),
                )  # fmt: skip
            made = propose(runs[0], case_id, case=case, corrected=runs[1])
            text = f"Keep {case_id} as a regression case: {made['key_difference']['summary']}."
            out.append({
                **proposal("eval_case", str(signal["signal"]), {"case_id": case_id, "proposal": made["id"]}, text,
                           [made["traceEvidence"]], artifact.get("run_id")),
                "proposal": made,
            })  # fmt: skip
    return out


def _whole_cases(previous: Mapping[str, Any], signals: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The previous run with the whole records of the cases the signals name, when it was read cut to the
    comparison fields (``qlab.run.history.for_learning``, which leaves ``_path``); as it is otherwise."""
    where = previous.get("_path")
    if not previous.get("_lean") or not isinstance(where, str):
        return previous
    ids = {str(i) for s in signals for i in s.get("case_ids") or ()}
    try:
        whole = history.cases_by_id(Path(where), ids)
    except (OSError, ValueError, UnicodeDecodeError):
        return previous  # the file changed under us: the proposal says what the cut record says
    cases = [whole.get(str(c.get("case_id")), c) for c in previous.get("cases") or ()]
    return {**previous, "cases": cases}


def _digest(artifact: Mapping[str, Any]) -> str:
    """The digest a stored result carries (``_digest``, set by whoever read its bytes), else the digest of the
    file it was read from (``_path``: hashed only when a proposal needs it, a large result is costly to hash),
    else the digest of the run's data as JSON (a run's own provisional artifact has no bytes yet)."""
    known = artifact.get("_digest")
    if isinstance(known, str) and known.startswith("sha256:"):
        return known
    where = artifact.get("_path")
    if isinstance(where, str):
        try:
            return file_digest(Path(where))
        except OSError:
            pass  # gone since it was read: the digest of what was read
    import json

    return sha256_digest(json.dumps(artifact, sort_keys=True, default=to_json).encode())

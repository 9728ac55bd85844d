"""The four proposal types, and each one applied in memory — never to the project's files.

| proposal ``type`` | what it changes | published by ``qlab learn accept`` into |
|---|---|---|
| ``collection_metadata`` | aliases of a tool | the reviewed aliases file |
| ``policy`` | qlab.yaml's gate policy (budget, stop, guard mode) | nothing: the edit is printed for a person |
| ``eval_case`` | a regression case | the regression suite (as ``qlab accept-case``) |
| ``memory`` | a query rewrite or an entity default | ``learning.knowledge_file`` |

``subject_with`` gives what the sandbox runs the proposal on: the config, the collection, the knowledge and the
extra cases, each a copy with the proposal applied (``dataclasses.replace``). ``describe`` says in a line what
would change."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Collection
from qlab.contracts.errors import InputError
from qlab.engine.knowledge import Knowledge
from qlab.governance.learning.shadow import apply_aliases
from qlab.project.model import NO_ORIGIN, Case, Config, Gate, Guard, StopCondition

TYPES: tuple[str, ...] = ("collection_metadata", "policy", "eval_case", "memory")
# the kinds of each type (``kind`` in the suggestions file); ``selector_policy`` is a note: nothing to apply
KINDS: dict[str, str] = {
    "alias": "collection_metadata",
    "budget": "policy",
    "stop_condition": "policy",
    "guard_mode": "policy",
    "selector_policy": "policy",
    "eval_case": "eval_case",
    "query_rewrite": "memory",
    "entity_default": "memory",
}
BUDGET_KEYS = ("max_llm_cost_usd", "max_llm_tokens", "max_duration_sec")


@dataclass(frozen=True, slots=True)
class Subject:
    """What one side of a sandbox comparison runs on."""

    config: Config
    collection: Collection
    knowledge: Knowledge
    extra_cases: tuple[Case, ...] = ()


def type_of(proposal: Mapping[str, Any]) -> str:
    """The proposal's type (older suggestion files carry only ``kind``)."""
    return str(proposal.get("type") or KINDS.get(str(proposal.get("kind")), "policy"))


def applicable(proposal: Mapping[str, Any]) -> bool:
    """False for a note a person acts on (nothing to apply, nothing to replay)."""
    return proposal.get("kind") != "selector_policy"


def subject_with(proposal: Mapping[str, Any], base: Subject, *, case_of: Any = None) -> Subject:
    """``base`` with the proposal applied, in memory. ``case_of(data)`` turns an eval case proposal's case data
    into a Case of its suite (the sandbox supplies it)."""
    kind = proposal.get("kind")
    if kind == "alias":
        additions = {str(proposal["tool_id"]): [str(a) for a in proposal.get("aliases") or ()]}
        return dataclasses.replace(base, collection=apply_aliases(base.collection, additions))
    if kind in ("query_rewrite", "entity_default"):
        return dataclasses.replace(base, knowledge=base.knowledge.merged(proposal.get("change") or {}))
    if kind in ("budget", "stop_condition", "guard_mode"):
        return dataclasses.replace(base, config=policy_config(base.config, proposal.get("change") or {}))
    if kind == "eval_case":
        if case_of is None:
            raise InputError("an eval case proposal needs its suite to be replayed")
        return dataclasses.replace(
            base, extra_cases=(*base.extra_cases, case_of(proposal["proposal"]["case"]))
        )
    return base  # a note: nothing to apply


# ------------------------------------------------------------------------------------------- policy


def policy_config(config: Config, change: Mapping[str, Any]) -> Config:
    """``config`` with one policy change: ``{budget: {key: value}}``, ``{gate, add_stop_if: name | {name:
    value}}`` or ``{gate, guard, mode}``."""
    if "budget" in change:
        values = {k: v for k, v in dict(change["budget"]).items() if k in BUDGET_KEYS}
        return dataclasses.replace(config, budget=dataclasses.replace(config.budget, **values))
    gate_name = change.get("gate")
    gates = list(config.gates)
    index = next((i for i, g in enumerate(gates) if g.name == gate_name), None)
    if index is None:
        raise InputError(f"the policy change names gate {gate_name!r}, which qlab.yaml does not have")
    gate = gates[index]
    if "add_stop_if" in change:
        gates[index] = dataclasses.replace(
            gate, stop_if=(*_without(gate, change), _stop(change["add_stop_if"]))
        )
    elif "guard" in change:
        kept = tuple(g for g in gate.guards if g.name != change["guard"])
        gates[index] = dataclasses.replace(
            gate, guards=(*kept, Guard(change["guard"], change.get("mode", "block")))
        )
    return dataclasses.replace(config, gates=tuple(gates))


def _stop(spec: Any) -> StopCondition:
    if isinstance(spec, Mapping):
        ((name, value),) = spec.items()
        return StopCondition(str(name), float(value), NO_ORIGIN)
    return StopCondition(str(spec), None, NO_ORIGIN)


def _without(gate: Gate, change: Mapping[str, Any]) -> tuple[StopCondition, ...]:
    """The gate's stops without the one the change sets again (a new bound replaces the old)."""
    name = _stop(change["add_stop_if"]).name
    return tuple(s for s in gate.stop_if if s.name != name)


def policy_edit(change: Mapping[str, Any]) -> str:
    """The qlab.yaml edit a person makes to publish a policy proposal."""
    if "budget" in change:
        lines = [f"  {k}: {v}" for k, v in dict(change["budget"]).items()]
        return "budget:\n" + "\n".join(lines)
    gate = change.get("gate")
    if "add_stop_if" in change:
        spec = change["add_stop_if"]
        item = next(iter(spec.items())) if isinstance(spec, Mapping) else None
        text = f"{item[0]}: {item[1]}" if item else str(spec)
        return f"gates: (the gate named {gate})\n  stop_if:\n    - {text}"
    if "guard" in change:
        return f"gates: (the gate named {gate})\n  guards:\n    - {{name: {change['guard']}, mode: {change.get('mode', 'block')}}}"
    return ""


# ------------------------------------------------------------------------------------------- text


def describe(proposal: Mapping[str, Any]) -> str:
    """One line: what accepting the proposal would change."""
    kind = proposal.get("kind")
    change = proposal.get("change") or {}
    if kind == "alias":
        return (
            f"aliases of {proposal.get('tool_id')} += {', '.join(map(repr, proposal.get('aliases') or ()))}"
        )
    if kind == "query_rewrite":
        pairs = ", ".join(f"{a!r} → {b!r}" for a, b in (change.get("query_rewrites") or {}).items())
        return f"knowledge: rewrite {pairs}"
    if kind == "entity_default":
        pairs = ", ".join(f"{a} = {b!r}" for a, b in (change.get("entity_defaults") or {}).items())
        return f"knowledge: entity default {pairs}"
    if kind in ("budget", "stop_condition", "guard_mode"):
        return "qlab.yaml: " + " ".join(policy_edit(change).split())
    if kind == "eval_case":
        case = (proposal.get("proposal") or {}).get("case") or {}
        return f"regression case {case.get('id')}: {case.get('query')!r}"
    return str(proposal.get("text", ""))

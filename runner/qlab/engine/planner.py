"""Plan synthesis: from a selected target and the provided entities to an ordered list of calls.

Every parameter of the target an entity names is filled with the entity's value (``qlab.engine.matching``).
A required input no entity fills is looked up in the collection's IO contracts: a read-only tool whose
response field can fill it becomes an earlier step, its output bound to the input (the first item of a list:
``first_item``). A producer is used only if its own required inputs can be filled the same way, down to
``MAX_DEPTH`` levels, never revisiting a tool on the chain; a plan never mutates to look something up
(``_Synthesizer._bind_producer``).

Statuses: ``needs_input`` when a required input nothing can fill becomes a ``user_input_slot`` (reason
``required_fields_unsatisfied``); ``failed`` for no target or an unknown one (``no_target`` /
``target_unknown``); else ``synthesized``. ``plan_id`` is a digest of the target and the steps, so the same
inputs always give the same id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qlab.adapters import fuzzy
from qlab.collection.model import Collection, IOContract, MutationClass, Tool
from qlab.engine.matching import match_entities
from qlab.engine.types import InputSlot, Plan, PlanStatus, PlanStep

MAX_DEPTH = 3  # producer levels added in front of the target (list -> detail is one)
_MATCH_ORDER = {"name": 0, "alias": 1, "schema": 2}

REASON_UNSATISFIED = "required_fields_unsatisfied"
REASON_NO_TARGET = "no_target"
REASON_TARGET_UNKNOWN = "target_unknown"
SLOT_NO_SOURCE = "no_entity_or_producer"
SLOT_TYPE_MISMATCH = "entity_type_mismatch"


def first_item(path: str) -> str:
    """A JSONPath that selects one value: every ``[*]`` becomes ``[0]`` (the first item of a list)."""
    return path.replace("[*]", "[0]")


@dataclass(slots=True)
class _Step:
    tool_id: str
    arguments: dict[str, Any] = field(default_factory=dict)
    bindings: dict[str, tuple[str, str]] = field(default_factory=dict)  # parameter -> (producer id, path)


@dataclass(slots=True)
class _Sub:
    """A tool's resolution: its steps in order (producers first, the tool last), slots and notes."""

    steps: list[_Step]
    slots: list[InputSlot]
    notes: list[str]
    used: set[str]  # entity names bound anywhere in the subtree


class _Synthesizer:
    def __init__(self, collection: Collection, entities: Mapping[str, Any]) -> None:
        self.collection = collection
        self.tools = collection.by_id()
        self.entities = entities

    def _producers(self, consumer: str, parameter: str) -> list[IOContract]:
        return sorted(
            self.collection.producers_of(consumer, parameter),
            key=lambda c: (-c.score, _MATCH_ORDER.get(c.match, 3), c.producer, c.field_path),
        )

    def resolve(self, tool: Tool, *, depth: int, chain: tuple[str, ...]) -> _Sub:
        bound, problems = match_entities(tool, self.entities)
        step = _Step(tool.id)
        sub = _Sub([], [], [], {m.entity for m in bound.values()})
        for parameter in tool.parameters:
            match = bound.get(parameter.name)
            if match is not None:
                step.arguments[parameter.name] = match.value
                how = match.kind if match.kind != "fuzzy" else f"fuzzy {match.similarity:.2f}"
                extra = f"; {match.note}" if match.note else ""
                sub.notes.append(f"{tool.id}.{parameter.name} <- entity {match.entity} ({how}{extra})")
        for problem in problems:
            sub.notes.append(
                f"entity {problem.entity} names {tool.id}.{problem.parameter} ({problem.kind}) but does not fit: "
                f"{problem.message}"
            )
        for parameter in tool.required_parameters:
            if parameter.name in step.arguments:
                continue
            if self._bind_producer(tool, parameter.name, step, sub, depth=depth, chain=chain):
                continue
            mismatch = any(p.parameter == parameter.name for p in problems)
            sub.slots.append(
                InputSlot(
                    tool_id=tool.id,
                    parameter=parameter.name,
                    location=parameter.location,
                    schema=dict(parameter.schema),
                    reason=SLOT_TYPE_MISMATCH if mismatch else SLOT_NO_SOURCE,
                )
            )
            sub.notes.append(f"{tool.id}.{parameter.name}: required, and no entity or producer can fill it")
        sub.steps.append(step)
        return sub

    def _bind_producer(
        self, tool: Tool, parameter: str, step: _Step, sub: _Sub, *, depth: int, chain: tuple[str, ...]
    ) -> bool:
        """Bind ``parameter`` to the best read-only producer whose own inputs can be filled: the best contract
        score, then the fewest added steps, then the match kind (name, alias, schema), then the tool id."""
        viable: list[tuple[tuple[float, int, int, str], IOContract, _Sub]] = []
        for contract in self._producers(tool.id, parameter):
            producer = self.tools.get(contract.producer)
            if producer is None or producer.id in chain:
                continue  # unknown, or a cycle back to a tool already on this chain
            if producer.mutation != MutationClass.READ_ONLY:
                sub.notes.append(
                    f"{producer.id} not used for {tool.id}.{parameter}: it is {producer.mutation.value}"
                )
                continue
            if depth >= MAX_DEPTH:
                sub.notes.append(f"{producer.id} not used for {tool.id}.{parameter}: depth limit {MAX_DEPTH}")
                break
            inner = self.resolve(producer, depth=depth + 1, chain=(*chain, producer.id))
            if inner.slots:
                missing = ", ".join(slot.parameter for slot in inner.slots)
                # keep why the producer's own inputs failed (a deeper producer rejected, the depth limit)
                sub.notes.extend(note for note in inner.notes if " not used for " in note)
                sub.notes.append(f"{producer.id} not used for {tool.id}.{parameter}: it needs {missing}")
                continue
            # best contract score first; among equals, the producer that adds the fewest steps
            key = (-contract.score, len(inner.steps), _MATCH_ORDER.get(contract.match, 3), producer.id)
            viable.append((key, contract, inner))
        if not viable:
            return False
        _, contract, inner = min(viable, key=lambda v: v[0])
        path = first_item(contract.field_path)
        sub.steps.extend(inner.steps)
        sub.notes.extend(inner.notes)
        sub.used |= inner.used
        step.bindings[parameter] = (contract.producer, path)
        sub.notes.append(
            f"{tool.id}.{parameter} <- {contract.producer} {path} (io contract, {contract.match} {contract.score:.2f})"
        )
        return True


def plan_id(target: str, steps: tuple[PlanStep, ...]) -> str:
    """A digest of the target and the steps: equal plans get equal ids."""
    body = {
        "target": target,
        "steps": [{"tool": s.tool_id, "arguments": s.arguments, "bindings": s.bindings} for s in steps],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return "plan-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def synthesize(target: str | None, entities: Mapping[str, Any], *, collection: Collection) -> Plan:
    """Build the plan that reaches ``target`` with ``entities`` (see the module docstring)."""
    if target is None:
        return Plan(
            plan_id("", ()), "failed", diagnostics=("no target was selected",), reason=REASON_NO_TARGET
        )
    tool = collection.tool(target)
    if tool is None:
        hint = fuzzy.did_you_mean(target, [t.id for t in collection.tools])
        message = f"{target!r} is not a tool of the collection.{hint}"
        return Plan(plan_id(target, ()), "failed", diagnostics=(message,), reason=REASON_TARGET_UNKNOWN)
    sub = _Synthesizer(collection, entities).resolve(tool, depth=0, chain=(tool.id,))
    # one step per tool, in first-needed order; bindings point at step indices
    index: dict[str, int] = {}
    ordered: list[_Step] = []
    for step in sub.steps:
        if step.tool_id not in index:
            index[step.tool_id] = len(ordered)
            ordered.append(step)
    steps = tuple(
        PlanStep(
            tool_id=step.tool_id,
            arguments=dict(step.arguments),
            bindings={
                name: {"step": index[producer], "path": path}
                for name, (producer, path) in step.bindings.items()
            },
        )
        for step in ordered
    )
    notes = list(dict.fromkeys(sub.notes))
    notes += [f"entity {name} fills no parameter of the plan" for name in entities if name not in sub.used]
    status: PlanStatus = "needs_input" if sub.slots else "synthesized"
    return Plan(
        plan_id=plan_id(target, steps),
        status=status,
        steps=steps,
        user_input_slots=tuple(sub.slots),
        diagnostics=tuple(notes),
        reason=REASON_UNSATISFIED if sub.slots else None,
    )

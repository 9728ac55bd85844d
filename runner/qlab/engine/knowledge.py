"""Project knowledge (``learning.knowledge_file``): what the team taught the engine about its users' words and
context, applied on every call of every run — the memory that a learning loop's memory write goes to.

The file (YAML or JSON)::

    query_rewrites:      # a word or phrase users write -> the words the collection uses (whole words, any case)
      parcel: delivery
    entity_defaults:     # a value select and plan may use when the case does not provide the entity
      locale: en-US

``KnowledgeEngine`` wraps the engine under test: each query is rewritten before ``search``, ``select`` and
``plan`` see it (longest phrase first), and the defaults fill the entities a case does not give (the case's own
values win). Nothing else changes: an empty file is the engine itself. ``qlab learn accept`` writes accepted
memory proposals into the file; the run's fingerprint records its digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab.collection import documents
from qlab.engine.base import Engine
from qlab.engine.types import Plan, SearchResult, Selection

SECTIONS = ("query_rewrites", "entity_defaults")


@dataclass(frozen=True, slots=True)
class Knowledge:
    query_rewrites: Mapping[str, str] = field(default_factory=dict)
    entity_defaults: Mapping[str, Any] = field(default_factory=dict)
    digest: str = ""  # sha256 of the file's bytes; "" for knowledge made in memory

    @property
    def empty(self) -> bool:
        return not self.query_rewrites and not self.entity_defaults

    def merged(self, other: Mapping[str, Mapping[str, Any]]) -> Knowledge:
        """This knowledge with ``other``'s entries added (a memory proposal applied in memory)."""
        rewrites = {**self.query_rewrites, **(other.get("query_rewrites") or {})}
        defaults = {**self.entity_defaults, **(other.get("entity_defaults") or {})}
        return Knowledge(rewrites, defaults, digest=f"in-memory-over:{self.digest}")

    def rewrite(self, query: str) -> str:
        """``query`` with every rewrite applied, longest phrase first, whole words, any case."""
        out = query
        for phrase in sorted(self.query_rewrites, key=len, reverse=True):
            pattern = re.compile(rf"(?<!\w){re.escape(phrase)}(?!\w)", re.IGNORECASE)
            replacement = self.query_rewrites[phrase]
            out = pattern.sub(lambda _match: replacement, out)  # noqa: B023 -- used at once, in this iteration
        return out

    def entities(self, given: Mapping[str, Any]) -> Mapping[str, Any]:
        if not self.entity_defaults:
            return given
        return {**self.entity_defaults, **given}


NONE = Knowledge()


def parse_knowledge(data: Any, *, where: str) -> tuple[Knowledge, list[tuple[tuple[str | int, ...], str]]]:
    """The Knowledge in ``data`` and the problems found (a JSON path and a message each)."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    if data is None:
        return NONE, problems
    if not isinstance(data, Mapping):
        return NONE, [((), f"{where}: a knowledge file maps query_rewrites and entity_defaults to entries")]
    for key in data:
        if key not in SECTIONS:
            problems.append(((str(key),), f"unknown section {key!r}; the sections are {', '.join(SECTIONS)}"))
    rewrites = data.get("query_rewrites") or {}
    defaults = data.get("entity_defaults") or {}
    if not isinstance(rewrites, Mapping) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) for k, v in rewrites.items()
    ):
        problems.append((("query_rewrites",), "query_rewrites maps a word or phrase to its replacement text"))
        rewrites = {}
    if not isinstance(defaults, Mapping):
        problems.append((("entity_defaults",), "entity_defaults maps an entity name to a value"))
        defaults = {}
    return Knowledge(dict(rewrites), dict(defaults)), problems


def load_knowledge(location: str | None, *, base_dir: Path) -> Knowledge:
    """The knowledge file qlab.yaml names (``NONE`` when it names none or the file does not exist yet);
    a bad file raises a located error."""
    if not location:
        return NONE
    path = Path(location)
    if not (path if path.is_absolute() else base_dir / path).exists():
        return NONE  # nothing learned yet: the first accepted memory proposal creates it
    doc = documents.load(location, base_dir=base_dir)
    knowledge, problems = parse_knowledge(doc.data, where=doc.display)
    if problems:
        where, message = problems[0]
        raise documents.error(doc, list(where), message)
    return Knowledge(knowledge.query_rewrites, knowledge.entity_defaults, digest=f"sha256:{doc.digest}")


class KnowledgeEngine:
    """The engine under test, with the project's knowledge applied to every call (see the module docstring)."""

    def __init__(self, inner: Engine, knowledge: Knowledge) -> None:
        self.inner = inner
        self.knowledge = knowledge
        self.name = inner.name

    def search(self, query: str, *, k: int) -> SearchResult:
        return self.inner.search(self.knowledge.rewrite(query), k=k)

    def select(
        self, query: str, result: SearchResult, *, entities: Mapping[str, Any], llm_target: str | None
    ) -> Selection:
        return self.inner.select(
            self.knowledge.rewrite(query),
            result,
            entities=self.knowledge.entities(entities),
            llm_target=llm_target,
        )

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        return self.inner.plan(
            self.knowledge.rewrite(query), target, entities=self.knowledge.entities(entities)
        )

    def rank_of(self, query: str, *, k: int, target: str) -> int | None:
        rewritten = self.knowledge.rewrite(query)
        inner = getattr(self.inner, "rank_of", None)
        if callable(inner):
            found: int | None = inner(rewritten, k=k, target=target)
            return found
        return self.inner.search(rewritten, k=k).rank_of(target)

    def trim(self) -> None:
        trim = getattr(self.inner, "trim", None)
        if callable(trim):
            trim()

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def with_knowledge(engine: Engine, knowledge: Knowledge) -> Engine:
    """``engine`` itself when there is nothing to apply, else wrapped."""
    return engine if knowledge.empty else KnowledgeEngine(engine, knowledge)

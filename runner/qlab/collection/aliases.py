"""The reviewed aliases file (``collection.aliases`` in qlab.yaml): YAML or JSON ``{tool_id: [alias, ...]}``.

Aliases are search vocabulary a human reviewed (learning suggestions become aliases once accepted). They are
added after a spec's own ``x-qlab-aliases``, duplicates dropped, order kept. Ids the collection does not have
are reported as readiness warnings (with a suggestion), not errors: the file may be shared across versions.

The key ``vocabulary``, when it holds a mapping (never a tool's alias list), extends the built-in search's API
vocabulary (``qlab/engine/vocabulary.json``) for this project::

    vocabulary:
      synonyms: [[droplet, server, vm]]   # words that mean the same here
      verbs: {archive: delete}            # a verb and the intent it asks for: read, create, update, delete
      framing: ["i am trying to"]         # request framing: words that never count as content
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection import documents
from qlab.collection.model import Tool


@dataclass(frozen=True, slots=True)
class Aliases:
    file: str  # as written in qlab.yaml
    digest: str
    by_tool: Mapping[str, tuple[str, ...]]
    vocabulary: Mapping[str, Any] = field(default_factory=dict)  # {synonyms, verbs, framing}; empty: none


def load_aliases(location: str | None, *, base_dir: Path) -> Aliases | None:
    """Read and check the aliases file; None when qlab.yaml names none. Shape errors are located."""
    if not location:
        return None
    doc = documents.load(location, base_dir=base_dir)
    data = doc.data
    if data is None:
        return Aliases(file=location, digest=doc.digest, by_tool={})
    if not isinstance(data, Mapping):
        raise documents.error(
            doc, (), "an aliases file maps tool ids to lists of aliases: {tool_id: [alias, ...]}"
        )
    by_tool: dict[str, tuple[str, ...]] = {}
    vocabulary: dict[str, Any] = {}
    for tool_id, value in data.items():
        if tool_id == VOCABULARY and isinstance(value, Mapping):
            vocabulary = _vocabulary(doc, value)
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise documents.error(doc, (tool_id,), "aliases must be a list of strings")
        by_tool[str(tool_id)] = tuple(dict.fromkeys(v.strip() for v in items if v.strip()))
    return Aliases(file=location, digest=doc.digest, by_tool=by_tool, vocabulary=vocabulary)


VOCABULARY = "vocabulary"
INTENTS = ("read", "create", "update", "delete")


def _vocabulary(doc: documents.Document, data: Mapping[str, Any]) -> dict[str, Any]:
    """The checked ``vocabulary`` section: lowercase words, located errors for any other shape."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        where = (VOCABULARY, key)
        if key == "synonyms":
            if not isinstance(value, list) or not all(
                isinstance(group, list)
                and len(group) >= 2
                and all(isinstance(w, str) and w.strip() for w in group)
                for group in value
            ):
                raise documents.error(
                    doc, where, "synonyms is a list of groups of two or more words: [[remove, delete]]"
                )
            out[key] = [[w.strip().lower() for w in group] for group in value]
        elif key == "verbs":
            if not isinstance(value, Mapping) or not all(
                isinstance(verb, str) and verb.strip() and intent in INTENTS for verb, intent in value.items()
            ):
                raise documents.error(
                    doc,
                    where,
                    f"verbs maps a verb to its intent, one of {', '.join(INTENTS)}: {{archive: delete}}",
                )
            out[key] = {str(verb).strip().lower(): intent for verb, intent in value.items()}
        elif key == "framing":
            if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
                raise documents.error(doc, where, "framing is a list of phrases: ['i am trying to']")
            out[key] = [p.strip().lower() for p in value]
        else:
            raise documents.error(
                doc, where, f"unknown key {key!r}: vocabulary takes synonyms, verbs and framing"
            )
    return out


def apply_aliases(tools: Sequence[Tool], aliases: Aliases | None) -> list[Tool]:
    """Tools with the file's aliases appended to their own."""
    if aliases is None or not aliases.by_tool:
        return list(tools)
    out = []
    for tool in tools:
        extra = aliases.by_tool.get(tool.id)
        if extra:
            tool = replace(tool, aliases=tuple(dict.fromkeys((*tool.aliases, *extra))))
        out.append(tool)
    return out


def unknown_ids(aliases: Aliases | None, tool_ids: Iterable[str]) -> list[str]:
    """Warnings for aliases of ids the collection does not have."""
    if aliases is None:
        return []
    known = list(tool_ids)
    known_set = set(known)
    return [
        f"{aliases.file}: aliases for unknown tool {tool_id!r}.{did_you_mean(tool_id, known)}"
        for tool_id in aliases.by_tool
        if tool_id not in known_set
    ]

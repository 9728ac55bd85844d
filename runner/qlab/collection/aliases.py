"""The reviewed aliases file (``collection.aliases`` in qlab.yaml): YAML or JSON ``{tool_id: [alias, ...]}``.

Aliases are search vocabulary a human reviewed (learning suggestions become aliases once accepted). They are
added after a spec's own ``x-qlab-aliases``, duplicates dropped, order kept. Ids the collection does not have
are reported as readiness warnings (with a suggestion), not errors: the file may be shared across versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from qlab.collection import documents
from qlab.collection.model import Tool
from qlab.fuzzy import did_you_mean


@dataclass(frozen=True, slots=True)
class Aliases:
    file: str  # as written in qlab.yaml
    digest: str
    by_tool: Mapping[str, tuple[str, ...]]


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
    for tool_id, value in data.items():
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise documents.error(doc, (tool_id,), "aliases must be a list of strings")
        by_tool[str(tool_id)] = tuple(dict.fromkeys(v.strip() for v in items if v.strip()))
    return Aliases(file=location, digest=doc.digest, by_tool=by_tool)


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

"""Tool-id collisions, within one source and between sources, resolved the same way on every run.

- Within a source (a spec that repeats an operationId): the first keeps the id, later ones get ``<id>_2``, …
- Between sources: the earlier source (qlab.yaml order) keeps the id; the later tool becomes
  ``<source>.<id>`` (then ``_2``… if even that is taken).
- Different ids whose normalized names are equal (``get_pet`` / ``getPet``) in different sources are kept and
  reported as ``similar_names``: search cannot tell them apart by name.

Every rename is recorded ({kind, id, renamed_to, sources}) for the readiness report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from qlab.collection.model import Tool
from qlab.collection.names import normalize, unique


def dedupe_within(tools: Sequence[Tool], *, source: str) -> tuple[list[Tool], list[dict[str, Any]]]:
    """Unique ids inside one source; later duplicates get a numeric suffix."""
    taken: set[str] = set()
    out: list[Tool] = []
    records: list[dict[str, Any]] = []
    for tool in tools:
        if tool.id in taken:
            new_id = unique(tool.id, taken)
            records.append(
                {"kind": "within_source", "id": tool.id, "renamed_to": new_id, "sources": [source]}
            )
            out.append(replace(tool, id=new_id))
        else:
            taken.add(tool.id)
            out.append(tool)
    return out, records


def merge_sources(
    per_source: Sequence[tuple[str, Sequence[Tool]]],
) -> tuple[list[Tool], list[dict[str, Any]]]:
    """All tools in source order with unique ids, and the collision records (renames and similar names)."""
    taken: dict[str, str] = {}  # id -> source that owns it
    by_norm: dict[str, tuple[str, str]] = {}  # normalized id -> (id, source) first seen
    out: list[Tool] = []
    records: list[dict[str, Any]] = []
    for source, tools in per_source:
        unique_tools, within = dedupe_within(tools, source=source)
        records.extend(within)
        for tool in unique_tools:
            tool_id = tool.id
            if tool_id in taken:
                owner = taken[tool_id]
                names = set(taken)
                new_id = unique(f"{source}.{tool_id}", names)
                records.append(
                    {
                        "kind": "between_sources",
                        "id": tool_id,
                        "renamed_to": new_id,
                        "sources": [owner, source],
                    }
                )
                tool = replace(tool, id=new_id)
            taken[tool.id] = source
            norm = normalize(tool_id)
            first = by_norm.get(norm)
            if first is None:
                by_norm[norm] = (tool_id, source)
            elif first[1] != source and first[0] != tool_id:
                records.append(
                    {
                        "kind": "similar_names",
                        "id": tool.id,
                        "renamed_to": None,
                        "sources": [first[1], source],
                        "similar_to": first[0],
                    }
                )
            out.append(tool)
    return out, records

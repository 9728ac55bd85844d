"""The values a tool's success response yields, as (name, JSONPath, type, entity nouns) — the producer side
of IO contracts.

A walk of each success-response schema (``allOf``/``anyOf``/``oneOf`` members merged, arrays entered with
``[*]``) records every scalar field (and array of scalars) down to ``MAX_STEPS`` property steps. Wrapper
properties (``data``, ``items``, ``results``, ``metadata``, …) do not count as steps, so ``$.data[*].deliveryId``
and ``$.items[*].metadata.name`` are both one step deep.

Each object carries the nouns of the entity it describes, from: its schema's ``$ref`` name (``Delivery``,
``io.k8s.api.core.v1.Pod`` → pod), the property that holds it (``albums.items[*]`` → album; a wrapper passes
on its parent's nouns), and for the top-level object the last static segment of the producer's path
(``/members/{memberNo}/deliveries`` → delivery). That is what lets ``id`` of a Delivery feed ``deliveryId``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from qlab.collection.model import Tool
from qlab.collection.names import json_path, normalize, schema_noun, singular, static_segments, tokens
from qlab.collection.refs import NamedSchema
from qlab.collection.schemas import object_properties, schema_type, success_schemas

MAX_STEPS = 3
MAX_FIELDS = 400  # per tool; a response schema is not a data dictionary
WRAPPERS = frozenset(
    {
        "data",
        "items",
        "results",
        "result",
        "content",
        "records",
        "value",
        "values",
        "entries",
        "list",
        "elements",
        "hits",
        "objects",
        "response",
        "body",
        "payload",
        "metadata",
        "meta",
        "page",
        "edges",
        "node",
        "nodes",
    }
)
_SCALARS = frozenset({"string", "integer", "number", "boolean"})


@dataclass(frozen=True, slots=True)
class Field:
    """One value a producer's response yields."""

    name: str  # the property name, as written
    path: str  # JSONPath into the response, e.g. $.data[*].deliveryId
    type: str | None  # JSON type of the value (of the items, for arrays of scalars)
    nouns: tuple[str, ...]  # normalized singular nouns of the entity that holds the field
    depth: int  # property steps that are not wrappers (1 = a field of the top entity)


def tool_nouns(tool: Tool) -> tuple[str, ...]:
    """The entity nouns a tool's path names last: ``/members/{memberNo}/deliveries`` → ``delivery``."""
    if tool.path:
        segments = static_segments(tool.path)
        if segments:
            return (normalize(singular(segments[-1])),)
    return ()


def ref_nouns(ref: str) -> tuple[str, ...]:
    """``Delivery`` → delivery; ``PodResourceClaim`` → podresourceclaim, claim (the head noun is the last word:
    a PodResourceClaim is a claim, not a pod)."""
    noun = schema_noun(ref)
    words = tokens(noun)
    out = [normalize(singular(noun))]
    if len(words) > 1:
        out.append(singular(words[-1]))
    return tuple(dict.fromkeys(n for n in out if n))


Walk = tuple[
    tuple[tuple[str, ...], str, "str | None", tuple[str, ...], int], ...
]  # (parts, name, type, nouns, depth)


class FieldFinder:
    """Finds response fields, remembering each (schema, nouns, depth) walk: the operations of a large API share
    their response schemas (Kubernetes' read/replace/patch of a Pod all return a Pod)."""

    def __init__(self, relevant: Callable[[str], bool] | None = None) -> None:
        """``relevant``: a filter on field names (the contract index keeps only names some input could match)."""
        self._relevant = relevant
        self._memo: dict[tuple[int, tuple[str, ...], int], Walk] = {}
        self._tools: dict[tuple[tuple[int, ...], tuple[str, ...]], list[Field]] = {}
        self._keep: list[Mapping[str, Any]] = []  # keeps memoized schemas alive, so their ids stay unique

    def fields(self, tool: Tool) -> list[Field]:
        """Every field of the tool's success responses (deduplicated by path, first response first)."""
        schemas = [s for _status, s in success_schemas(tool.responses) if isinstance(s, Mapping) and s]
        top = tool_nouns(tool)
        key = (tuple(id(s) for s in schemas), top)
        known = self._tools.get(key)
        if known is not None:
            return known
        out: dict[str, Field] = {}
        for schema in schemas:
            for parts, name, kind, nouns, depth in self._walk(schema, top, 0, frozenset()):
                path = _path(parts)
                if path not in out and len(out) < MAX_FIELDS:
                    out[path] = Field(name, path, kind, nouns, depth)
        found = list(out.values())
        self._tools[key] = found
        self._keep.extend(schemas)
        return found

    def _wanted(self, name: str) -> bool:
        return self._relevant is None or self._relevant(name)

    def _walk(
        self, schema: Mapping[str, Any], nouns: tuple[str, ...], steps: int, active: frozenset[int]
    ) -> Walk:
        key = (id(schema), nouns, steps)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if id(schema) in active:
            return ()
        active = active | {id(schema)}
        found: list[tuple[tuple[str, ...], str, str | None, tuple[str, ...], int]] = []
        kind = schema_type(schema)
        items = schema.get("items")
        if (kind == "array" or "properties" not in schema) and isinstance(items, Mapping):
            found.extend(
                ((("[*]", *p), n, k, ns, d) for p, n, k, ns, d in self._walk(items, nouns, steps, active))
            )
        else:
            own = (
                tuple(dict.fromkeys(nouns + ref_nouns(schema.ref)))
                if isinstance(schema, NamedSchema)
                else nouns
            )
            for name, prop in _properties(schema).items():
                wrapper = name.lower() in WRAPPERS
                depth = steps if wrapper else steps + 1
                prop_kind = schema_type(prop)
                if prop_kind in _SCALARS or (
                    prop_kind is None and not _properties(prop) and "items" not in prop
                ):
                    if self._wanted(name):
                        found.append(((name,), name, prop_kind, own, max(depth, 1)))
                    continue
                inner = prop.get("items")
                if prop_kind == "array" and isinstance(inner, Mapping) and schema_type(inner) in _SCALARS:
                    if self._wanted(name):
                        found.append(((name, "[*]"), name, schema_type(inner), own, max(depth, 1)))
                    continue
                if depth >= MAX_STEPS:
                    continue
                # a wrapper (data, items, metadata…) describes the same entity; any other property a new one
                child_nouns = own if wrapper else (normalize(singular(name)),)
                found.extend(
                    ((name, *p), n, k, ns, d)
                    for p, n, k, ns, d in self._walk(prop, child_nouns, depth, active)
                )
        result = tuple(found[: MAX_FIELDS * 2])
        self._memo[key] = result
        self._keep.append(schema)
        return result


@lru_cache(maxsize=65536)
def _path(parts: tuple[str, ...]) -> str:
    return json_path(parts)


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    props, _required = object_properties(schema)
    for combinator in ("anyOf", "oneOf"):
        for member in schema.get(combinator) or ():
            if isinstance(member, Mapping):
                more, _req = object_properties(member)
                for key, value in more.items():
                    props.setdefault(key, value)
    return props

"""Small readers of resolved JSON Schemas, shared by the sources, contracts and readiness.

They understand the three dialects qlab meets (OpenAPI 3.0 schema objects, 3.1 JSON Schema 2020-12, Swagger
2.0 schema objects) only as far as reading them: object properties (``allOf`` merged), a schema's type, whether
it is typed at all, and its example.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPE_OF_VALUE = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}
_TYPED_KEYS = ("type", "enum", "const", "properties", "items", "allOf", "anyOf", "oneOf", "format")

JSON_MEDIA = "application/json"


def object_properties(schema: Mapping[str, Any], *, _depth: int = 0) -> tuple[dict[str, Any], set[str]]:
    """Properties and required names of an object schema, with ``allOf`` members merged in order."""
    props: dict[str, Any] = {}
    required: set[str] = set()
    if _depth > 32:
        return props, required
    for member in schema.get("allOf") or ():
        if isinstance(member, Mapping):
            more, req = object_properties(member, _depth=_depth + 1)
            props.update(more)
            required |= req
    own = schema.get("properties")
    if isinstance(own, Mapping):
        props.update({str(k): v for k, v in own.items() if isinstance(v, Mapping)})
    req_list = schema.get("required")
    if isinstance(req_list, list):
        required |= {r for r in req_list if isinstance(r, str)}
    return props, required


def schema_type(schema: Mapping[str, Any]) -> str | None:
    """The JSON type a schema describes (``integer``, ``string``, ``object``…), or None when it does not say."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        kinds = [t for t in declared if isinstance(t, str) and t != "null"]
        return kinds[0] if len(kinds) == 1 else None
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    values = schema.get("enum")
    if isinstance(values, list) and values:
        value_kinds = {_TYPE_OF_VALUE.get(type(v)) for v in values if v is not None}
        return value_kinds.pop() if len(value_kinds) == 1 else None
    if "const" in schema:
        return _TYPE_OF_VALUE.get(type(schema["const"]))
    for combinator in ("allOf", "anyOf", "oneOf"):
        members = schema.get(combinator)
        if isinstance(members, list):
            member_kinds = {schema_type(m) for m in members if isinstance(m, Mapping)} - {None, "null"}
            if len(member_kinds) == 1:
                return member_kinds.pop()
    return None


def is_typed(schema: Mapping[str, Any] | None) -> bool:
    """True when the schema says something about the value's type or shape."""
    if not schema:
        return False
    return any(key in schema for key in _TYPED_KEYS)


def example_of(schema: Mapping[str, Any] | None) -> tuple[bool, Any]:
    """(found, value) from ``example`` or the first of ``examples`` (a list in JSON Schema)."""
    if not schema:
        return False, None
    if "example" in schema:
        return True, schema["example"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return True, examples[0]
    return False, None


def pick_media(content: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The media type to use from an OpenAPI ``content`` map: JSON first, then forms, then the first listed."""
    if not isinstance(content, Mapping) or not content:
        return None, {}
    names = [str(n) for n in content]
    ranked = sorted(names, key=lambda n: (_media_rank(n), names.index(n)))
    best = ranked[0]
    media = content[best]
    return best, media if isinstance(media, Mapping) else {}


def _media_rank(name: str) -> int:
    base = name.split(";", 1)[0].strip().lower()
    if base == JSON_MEDIA:
        return 0
    if base.endswith(("+json", "/json")):
        return 1
    if base == "application/x-www-form-urlencoded":
        return 2
    if base == "multipart/form-data":
        return 3
    if base == "*/*":
        return 4
    return 5


def is_success(status: str) -> bool:
    """2xx codes, ``2XX``, and ``result`` (the return value of an MCP tool or a Python callable)."""
    return status == "result" or (len(status) == 3 and status[0] == "2")


def success_schemas(responses: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    """(status, schema) of the success responses, in status order; ``default`` only when there is no 2xx."""
    found = [(s, responses[s]) for s in sorted(responses) if is_success(s)]
    if not found and "default" in responses:
        found = [("default", responses["default"])]
    return found

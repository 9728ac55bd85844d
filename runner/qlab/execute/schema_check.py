"""Response bodies against the tool's response schema: the one place ``qlab.execute`` imports jsonschema.

Tools carry OpenAPI schemas with ``$ref`` already resolved. OpenAPI 3.0's dialect differs from JSON Schema in
two ways that matter here, so schemas are normalized first: ``nullable: true`` becomes a ``"null"`` type, and
boolean ``exclusiveMinimum``/``exclusiveMaximum`` become the numeric form. Validators are built once per schema.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qlab.adapters.memo import ByIdentity
from qlab.collection.model import Tool

_LOCK = threading.Lock()
# response schema object -> its validator; bounded so that the collections of many runs in one
# process are not held
_VALIDATORS: ByIdentity[Any] = ByIdentity(1024)


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One place where the body breaks the schema: ``$.data.tier: 'gold' is not one of [...]``."""

    path: str
    message: str

    def render(self) -> str:
        return f"{self.path}: {self.message}"


def _documented(status: int) -> tuple[str, ...]:
    """Where a spec documents ``status``, most specific first: the exact code, then ``2XX``, then ``default``."""
    return (str(status), f"{status // 100}XX", f"{status // 100}xx", "default")


def response_schema_for(tool: Tool, status: int) -> Mapping[str, Any] | None:
    """The schema the tool documents for ``status`` (see ``_documented``), or None."""
    return next((tool.responses[key] for key in _documented(status) if key in tool.responses), None)


def response_media_for(tool: Tool, status: int) -> tuple[str, ...] | None:
    """The media types the tool documents for ``status``, () for no body; None when the collection does not
    say (a tool built by hand, an MCP or Python tool)."""
    return next((tool.response_media[key] for key in _documented(status) if key in tool.response_media), None)


def media_type(content_type: str) -> str:
    """``Application/XML; charset=utf-8`` → ``application/xml``."""
    return content_type.split(";", 1)[0].strip().lower()


def media_matches(media: str, documented: str) -> bool:
    """Whether a response's ``media`` type is one the spec ``documented`` (``*/*`` and ``text/*`` match)."""
    wanted = media_type(documented)
    return wanted in ("*/*", media) or (wanted.endswith("/*") and media.startswith(wanted[:-1]))


def validate(instance: Any, schema: Mapping[str, Any]) -> list[SchemaIssue]:
    """Every schema violation of ``instance``, in document order (empty when valid)."""
    validator = _validator(schema)
    issues = [
        SchemaIssue(_json_path(error.absolute_path), error.message)
        for error in validator.iter_errors(instance)
    ]
    return sorted(issues, key=lambda i: i.path)


def _validator(schema: Mapping[str, Any]) -> Any:
    cached = _VALIDATORS.find(schema)
    if cached is not None:
        return cached
    # imported on first use: jsonschema is a heavy import, and most runs never check a response schema
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    validator = Draft202012Validator(
        normalize_openapi(schema), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    with _LOCK:
        return _VALIDATORS.keep(schema, validator)


def normalize_openapi(schema: Any) -> Any:
    """A plain-dict JSON Schema 2020-12 copy of an OpenAPI 3.0/3.1 schema."""
    if isinstance(schema, Mapping):
        out = {
            str(k): normalize_openapi(v) for k, v in schema.items() if k not in ("nullable", "example", "xml")
        }
        if schema.get("nullable") is True:
            kind = out.get("type")
            if isinstance(kind, str):
                out["type"] = [kind, "null"]
            elif isinstance(kind, list) and "null" not in kind:
                out["type"] = [*kind, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if isinstance(out.get(flag), bool) and out.pop(flag) and bound in out:
                out[flag] = out.pop(bound)
        return out
    if isinstance(schema, (list, tuple)):
        return [normalize_openapi(item) for item in schema]
    return schema


def _json_path(parts: Any) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path

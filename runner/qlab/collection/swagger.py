"""Swagger 2.0 specifics: ``in: body`` and ``formData`` parameters, ``consumes``, parameter-level types,
``definitions`` (resolved by ``refs`` like any other target), ``securityDefinitions``, ``host``/``basePath``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from qlab.collection.model import Parameter, ParamLocation
from qlab.collection.operations import (
    ErrorAt,
    Parts,
    Where,
    flatten_body,
    merged_parameters,
    parameter,
    parameter_example,
    response_media,
    responses,
)

_LOCATIONS = ("path", "query", "header", "body", "formData")
# keywords a non-body Swagger parameter carries at its own level, which make up its schema
_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"


def operation_parts(
    op: Mapping[str, Any],
    shared: Any,
    *,
    where: Where,
    error_at: ErrorAt,
    consumes: Sequence[str],
    produces: Sequence[str] = (),
) -> Parts:
    """Parameters, body, responses and examples of one resolved 2.0 operation; ``consumes`` and ``produces``
    are the global lists (a response with a ``schema`` has the operation's ``produces``, else those)."""
    parts = Parts()
    own_consumes = op.get("consumes")
    media_types = [str(c) for c in own_consumes] if isinstance(own_consumes, list) else list(consumes)
    form: list[Parameter] = []
    for place, raw in merged_parameters(
        shared,
        op.get("parameters"),
        where_shared=(*where[:-1], "parameters"),
        where_own=(*where, "parameters"),
        error_at=error_at,
    ):
        name, location = str(raw["name"]), str(raw["in"])
        if location not in _LOCATIONS:
            raise error_at(
                place, f"parameter {name!r}: `in: {location}` is not one of {', '.join(_LOCATIONS)}"
            )
        if location == "body":
            schema = raw.get("schema")
            if not isinstance(schema, Mapping):
                raise error_at(place, f"body parameter {name!r} needs a `schema`")
            params, examples = flatten_body(
                schema,
                required=bool(raw.get("required", False)),
                description=str(raw.get("description") or ""),
            )
            parts.parameters.extend(params)
            for key, value in examples.items():
                parts.examples.setdefault(key, value)
            parts.request_body = schema
            parts.request_content_type = _json_first(media_types)
            continue
        schema = param_schema(raw)
        required = True if location == "path" else bool(raw.get("required", False))
        described = raw.get("description")
        if location == "formData":
            form.append(
                parameter(name, "body", required=required, schema=schema, description=described, raw=raw)
            )
        else:
            parts.parameters.append(
                parameter(
                    name,
                    cast(ParamLocation, location),
                    required=required,
                    schema=schema,
                    description=described,
                    raw=raw,
                )
            )
        found, value = parameter_example(raw, schema)
        if found:
            parts.examples[name] = value
    if form:
        parts.parameters.extend(form)
        parts.request_body = {
            "type": "object",
            "properties": {p.name: dict(p.schema) for p in form},
            **({"required": [p.name for p in form if p.required]} if any(p.required for p in form) else {}),
        }
        has_file = any(p.schema.get("format") == "binary" for p in form)
        parts.request_content_type = _MULTIPART if has_file or _MULTIPART in media_types else _FORM
    parts.responses = responses(
        op.get("responses"),
        where=(*where, "responses"),
        error_at=error_at,
        schema_of=lambda r: r.get("schema"),
    )
    own_produces = op.get("produces")
    produced = [str(p) for p in own_produces] if isinstance(own_produces, list) else list(produces)
    parts.response_media = response_media(op.get("responses"), lambda r: produced if "schema" in r else ())
    return parts


def param_schema(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a non-body parameter from its own keywords; ``type: file`` is a binary string."""
    schema = {key: raw[key] for key in _SCHEMA_KEYS if key in raw}
    if schema.get("type") == "file":
        schema["type"] = "string"
        schema["format"] = "binary"
    return schema


def security_schemes(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``securityDefinitions`` in OpenAPI 3 terms: ``basic`` is ``http``/``basic``; apiKey and oauth2 keep theirs."""
    out: dict[str, dict[str, Any]] = {}
    found = data.get("securityDefinitions")
    for name, scheme in (found if isinstance(found, Mapping) else {}).items():
        if not isinstance(scheme, Mapping):
            continue
        kind = str(scheme.get("type", ""))
        entry: dict[str, Any] = {"type": "http", "scheme": "basic"} if kind == "basic" else {"type": kind}
        for key in ("in", "name"):
            if isinstance(scheme.get(key), str):
                entry[key] = scheme[key]
        if isinstance(scheme.get("flow"), str):
            entry["flows"] = [scheme["flow"]]
        out[str(name)] = entry
    return out


def servers(data: Mapping[str, Any]) -> tuple[list[str], str]:
    """``schemes`` x ``host`` + ``basePath`` as server URLs, and the base path."""
    base = str(data.get("basePath") or "").rstrip("/")
    host = data.get("host")
    if not isinstance(host, str) or not host:
        return [], base
    schemes = [str(s) for s in data.get("schemes") or ["https"]]
    return [f"{s}://{host}{base}" for s in schemes], base


def consumes(data: Mapping[str, Any]) -> list[str]:
    value = data.get("consumes")
    return [str(c) for c in value] if isinstance(value, list) else []


def produces(data: Mapping[str, Any]) -> list[str]:
    value = data.get("produces")
    return [str(c) for c in value] if isinstance(value, list) else []


def _json_first(media_types: Sequence[str]) -> str:
    for media in media_types:
        if media.split(";")[0].strip().lower().endswith(("/json", "+json")):
            return media
    return media_types[0] if media_types else "application/json"

"""OpenAPI 3.0 / 3.1 specifics: ``requestBody`` and ``content`` maps, ``components.securitySchemes``, servers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlparse

from qlab.collection.model import ParamLocation
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
from qlab.collection.schemas import pick_media

_LOCATIONS = ("path", "query", "header", "cookie")


def operation_parts(op: Mapping[str, Any], shared: Any, *, where: Where, error_at: ErrorAt) -> Parts:
    """Parameters, request body, responses and examples of one resolved 3.x operation at ``where``."""
    parts = Parts()
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
        schema: Mapping[str, Any] = raw["schema"] if isinstance(raw.get("schema"), Mapping) else {}
        if not schema:
            _media, media = pick_media(raw.get("content") or {})
            schema = media["schema"] if isinstance(media.get("schema"), Mapping) else {}
        required = True if location == "path" else bool(raw.get("required", False))
        parts.parameters.append(
            parameter(
                name,
                cast(ParamLocation, location),  # checked against _LOCATIONS above
                required=required,
                schema=schema,
                description=raw.get("description"),
                raw=raw,
            )
        )
        found, value = parameter_example(raw, schema)
        if found:
            parts.examples[name] = value
    body = op.get("requestBody")
    if isinstance(body, Mapping):
        media_type, media = pick_media(body.get("content") or {})
        body_schema = media.get("schema")
        if isinstance(body_schema, Mapping):
            example = media.get("example")
            if example is None and isinstance(media.get("examples"), Mapping):
                first = next(iter(media["examples"].values()), None)
                example = first.get("value") if isinstance(first, Mapping) else None
            params, examples = flatten_body(
                body_schema,
                required=bool(body.get("required", False)),
                description=str(body.get("description") or ""),
                example=example,
            )
            parts.parameters.extend(params)
            for key, value in examples.items():
                parts.examples.setdefault(key, value)
            parts.request_body = body_schema
            parts.request_content_type = media_type
    parts.responses = responses(
        op.get("responses"), where=(*where, "responses"), error_at=error_at, schema_of=_response_schema
    )
    parts.response_media = response_media(op.get("responses"), lambda r: list(r.get("content") or ()))
    return parts


def _response_schema(response: Mapping[str, Any]) -> Any:
    """The schema of the response's chosen media type."""
    _media_type, media = pick_media(response.get("content") or {})
    return media.get("schema")


def security_schemes(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``components.securitySchemes`` reduced to what auth readiness compares: type, scheme, in, name, flows."""
    components = data.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, Mapping) else None
    out: dict[str, dict[str, Any]] = {}
    for name, scheme in (schemes if isinstance(schemes, Mapping) else {}).items():
        if not isinstance(scheme, Mapping):
            continue
        entry: dict[str, Any] = {"type": str(scheme.get("type", ""))}
        for key in ("scheme", "in", "name", "bearerFormat"):
            if isinstance(scheme.get(key), str):
                entry[key] = scheme[key].lower() if key == "scheme" else scheme[key]
        if isinstance(scheme.get("flows"), Mapping):
            entry["flows"] = sorted(str(f) for f in scheme["flows"])
        out[str(name)] = entry
    return out


def servers(data: Mapping[str, Any]) -> tuple[list[str], str]:
    """Server URLs and the base path of the first one (``https://api.x.com/v1`` → ``/v1``; ``/api/v3`` stays)."""
    urls = [
        str(s["url"])
        for s in data.get("servers") or ()
        if isinstance(s, Mapping) and isinstance(s.get("url"), str)
    ]
    base = urlparse(urls[0]).path.rstrip("/") if urls else ""
    return urls, base

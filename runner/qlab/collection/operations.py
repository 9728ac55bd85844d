"""What OpenAPI 3.x and Swagger 2.0 operations have in common once their ``$ref``s are resolved.

``openapi3`` and ``swagger`` each turn one resolved operation into ``Parts`` (parameters, body, responses,
examples); ``openapi`` wraps the parts into a Tool. The helpers here are the shared rules: parameter override
by (name, in), request-body flattening, security requirements, examples and the mutation class of a method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qlab.collection.model import MutationClass, Parameter, ParamLocation
from qlab.collection.refs import NamedParameter, NamedSchema
from qlab.collection.schemas import example_of, object_properties
from qlab.contracts.errors import SpecError

Where = tuple[str | int, ...]
ErrorAt = Callable[[Where, str], SpecError]  # builds a located SpecError for a place in the root document

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_MUTATION = {
    "GET": MutationClass.READ_ONLY,
    "HEAD": MutationClass.READ_ONLY,
    "OPTIONS": MutationClass.READ_ONLY,
    "TRACE": MutationClass.READ_ONLY,
    "POST": MutationClass.MUTATING,
    "PUT": MutationClass.MUTATING,
    "PATCH": MutationClass.MUTATING,
    "DELETE": MutationClass.DESTRUCTIVE,
}
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})  # RFC 9110 §9.2.2


@dataclass(slots=True)
class Parts:
    """A resolved operation, dialect differences removed."""

    parameters: list[Parameter] = field(default_factory=list)
    request_body: Mapping[str, Any] | None = None
    request_content_type: str | None = None
    responses: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    response_media: dict[str, tuple[str, ...]] = field(default_factory=dict)
    examples: dict[str, Any] = field(default_factory=dict)


def mutation_of(method: str) -> MutationClass:
    """GET/HEAD/OPTIONS/TRACE read_only; POST/PUT/PATCH mutating; DELETE destructive."""
    return _MUTATION.get(method.upper(), MutationClass.MUTATING)


def idempotent_of(method: str) -> bool:
    return method.upper() in _IDEMPOTENT


def merged_parameters(
    shared: Any, own: Any, *, where_shared: Where, where_own: Where, error_at: ErrorAt
) -> list[tuple[Where, Mapping[str, Any]]]:
    """Path-item parameters overridden by the operation's own, matched on (name, in); each with its place."""
    merged: dict[tuple[str, str], tuple[Where, Mapping[str, Any]]] = {}
    for base, items in ((where_shared, shared), (where_own, own)):
        if items is None:
            continue
        if not isinstance(items, list):
            raise error_at(base, "parameters must be a list")
        for i, param in enumerate(items):
            where = (*base, i)
            if not isinstance(param, Mapping):
                raise error_at(where, "a parameter must be an object")
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or not name:
                raise error_at(where, "a parameter needs a non-empty `name`")
            if not isinstance(location, str):
                raise error_at(where, f"parameter {name!r} needs `in`")
            merged[(name, location)] = (where, param)
    return list(merged.values())


def flatten_body(
    schema: Mapping[str, Any], *, required: bool, description: str = "", example: Any = None
) -> tuple[list[Parameter], dict[str, Any]]:
    """Each top-level property of an object body becomes a ``body`` Parameter (required from the schema).

    A body that is not an object (an array, a string, a file) is one ``body`` Parameter named ``body``.
    Returns the parameters and the examples found (property ``example``, or the body example's member).
    """
    props, names_required = object_properties(schema)
    examples: dict[str, Any] = {}
    if not props:
        found, value = example_of(schema)
        if example is not None:
            found, value = True, example
        if found:
            examples["body"] = value
        text = description or str(schema.get("description") or "")
        return [Parameter("body", "body", required, schema, text.strip())], examples
    params = []
    for name, prop in props.items():
        params.append(
            Parameter(name, "body", name in names_required, prop, str(prop.get("description") or "").strip())
        )
        found, value = example_of(prop)
        if found:
            examples[name] = value
        elif isinstance(example, Mapping) and name in example:
            examples[name] = example[name]
    return params, examples


def parameter(
    name: str,
    location: ParamLocation,
    *,
    required: bool,
    schema: Mapping[str, Any],
    description: Any,
    raw: Mapping[str, Any] | None = None,
) -> Parameter:
    """A Parameter; a NamedParameter when ``raw`` (the parameter object) came from a ``$ref``."""
    text = str(description or "").strip()
    if isinstance(raw, NamedSchema):
        return NamedParameter(name, location, bool(required), schema, text, ref=raw.ref)
    return Parameter(name, location, bool(required), schema, text)


def parameter_example(param: Mapping[str, Any], schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """From the parameter's ``example``, its first ``examples`` entry (``value``), ``x-example``, or its schema."""
    if "example" in param:
        return True, param["example"]
    examples = param.get("examples")
    if isinstance(examples, Mapping):
        for entry in examples.values():
            if isinstance(entry, Mapping) and "value" in entry:
                return True, entry["value"]
    if "x-example" in param:
        return True, param["x-example"]
    return example_of(schema)


def responses(
    value: Any, *, where: Where, error_at: ErrorAt, schema_of: Callable[[Mapping[str, Any]], Any]
) -> dict[str, Mapping[str, Any]]:
    """status → the response's schema, as ``schema_of`` finds it in one response object (``{}`` when there is
    none); ``x-`` extensions are skipped."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise error_at(where, "responses must be an object keyed by status code")
    out: dict[str, Mapping[str, Any]] = {}
    for status, response in value.items():
        if str(status).startswith("x-"):
            continue
        if not isinstance(response, Mapping):
            raise error_at((*where, str(status)), "a response must be an object")
        schema = schema_of(response)
        out[str(status)] = schema if isinstance(schema, Mapping) else {}
    return out


def response_media(
    value: Any, media_of: Callable[[Mapping[str, Any]], Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """status → the media types the response documents (none: it documents no body); read after
    :func:`responses` has checked the shape."""
    if not isinstance(value, Mapping):
        return {}
    return {
        str(status): tuple(str(m) for m in media_of(response))
        for status, response in value.items()
        if not str(status).startswith("x-") and isinstance(response, Mapping)
    }


def security(value: Any) -> tuple[Mapping[str, tuple[str, ...]], ...]:
    """Normalized security requirements: one mapping (scheme → scopes) per alternative; ``{}`` means optional."""
    if not isinstance(value, list):
        return ()
    return tuple(
        {str(k): tuple(str(s) for s in v) if isinstance(v, list) else () for k, v in req.items()}
        for req in value
        if isinstance(req, Mapping)
    )


def aliases(value: Any) -> tuple[str, ...]:
    """``x-qlab-aliases``: a list of strings (or one string)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(str(v).strip() for v in value if str(v).strip()))


def family_of(tags: Sequence[str], path: str) -> str:
    """The first tag, else the first static path segment, else ``root``."""
    if tags:
        return tags[0]
    for segment in path.split("/"):
        if segment and not segment.startswith("{"):
            return segment
    return "root"

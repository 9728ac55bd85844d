"""The collection model: what the build stage produces and every later stage reads.

A Collection is a frozen, ordered set of Tools (one per OpenAPI operation, MCP tool or Python callable), plus
the IO contracts that say which tool's output can feed which tool's required input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

ParamLocation = Literal["path", "query", "header", "cookie", "body", "argument"]
SourceKind = Literal["openapi", "swagger", "mcp", "python"]


class MutationClass(str, Enum):
    """How dangerous calling a tool is. Decides execute-stage mutation safety."""

    READ_ONLY = "read_only"
    MUTATING = "mutating"
    DESTRUCTIVE = "destructive"


@dataclass(frozen=True, slots=True)
class Parameter:
    """One input of a tool.

    For OpenAPI, ``location`` is the ``in`` of the parameter; each top-level property of a JSON request body is
    flattened into a ``body`` parameter (``required`` from the body schema). MCP and Python inputs are
    ``argument``.
    """

    name: str
    location: ParamLocation
    required: bool
    schema: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


def is_json_media(media: str) -> bool:
    """``application/json``, ``application/problem+json; charset=utf-8``, ``text/json``: a JSON media type."""
    return media.split(";", 1)[0].strip().lower().endswith(("/json", "+json"))


@dataclass(frozen=True, slots=True)
class Tool:
    """One callable target: an operation, an MCP tool or a Python callable."""

    id: str  # stable: operationId, MCP tool name, python qualname; else a derived id (see collection.ids)
    name: str  # human name (operationId / tool name / function name)
    family: str  # first tag, path prefix, MCP server name, or python module
    source: str  # name of the collection source it came from
    kind: SourceKind
    summary: str = ""
    description: str = ""
    method: str | None = None  # upper-case HTTP method for openapi/swagger
    path: str | None = None  # path template, e.g. /members/{memberNo}/deliveries
    parameters: tuple[Parameter, ...] = ()
    request_body: Mapping[str, Any] | None = None  # JSON schema of the body, refs resolved
    request_content_type: str | None = None  # e.g. application/json, application/x-www-form-urlencoded
    responses: Mapping[str, Mapping[str, Any]] = field(
        default_factory=dict
    )  # status ("200", "2XX", "default") -> schema
    # status -> the media types its response documents, () for none (a 204, a Swagger response without schema)
    response_media: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    security: tuple[Mapping[str, tuple[str, ...]], ...] = ()  # OpenAPI security requirement objects
    mutation: MutationClass = MutationClass.READ_ONLY
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    examples: Mapping[str, Any] = field(default_factory=dict)  # parameter name -> example value
    # safe to repeat? HTTP semantics (GET/PUT/DELETE... yes, POST/PATCH no) or MCP idempotentHint; None: unknown
    idempotent: bool | None = None

    @property
    def required_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.required)

    def parameter(self, name: str) -> Parameter | None:
        for p in self.parameters:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True, slots=True)
class IOContract:
    """``producer``'s response field ``field_path`` can fill ``consumer``'s required input ``parameter``.

    ``field_path`` is a JSONPath into the producer's success response, e.g. ``$.data[*].memberNo``.
    ``match`` says how the pair was found: ``name`` (same normalized name), ``alias`` or ``schema``
    (compatible type and an id-like name such as ``id`` → ``memberId``).
    """

    producer: str
    field_path: str
    consumer: str
    parameter: str
    match: Literal["name", "alias", "schema"]
    score: float = 1.0


@dataclass(frozen=True, slots=True)
class Collection:
    """The build stage's artifact. ``digest`` is a sha256 of the canonical JSON artifact (see collection.artifact)."""

    tools: tuple[Tool, ...]
    contracts: tuple[IOContract, ...] = ()
    digest: str = ""
    sources: tuple[Mapping[str, Any], ...] = ()  # {"name","kind","location","digest"} per source
    # the project's search vocabulary from the aliases file ({synonyms, verbs, framing}); empty: none
    vocabulary: Mapping[str, Any] = field(default_factory=dict)
    # id -> Tool, filled on the first tool() call: stages look a tool up per case, so the dict is built once.
    # Not an init field, so dataclasses.replace() starts a fresh index.
    _index: dict[str, Tool] = field(default_factory=dict, init=False, compare=False, repr=False)

    def tool(self, tool_id: str) -> Tool | None:
        if not self._index and self.tools:
            self._index.update((t.id, t) for t in self.tools)
        return self._index.get(tool_id)

    def by_id(self) -> dict[str, Tool]:
        return {t.id: t for t in self.tools}

    def producers_of(self, consumer: str, parameter: str) -> tuple[IOContract, ...]:
        return tuple(c for c in self.contracts if c.consumer == consumer and c.parameter == parameter)

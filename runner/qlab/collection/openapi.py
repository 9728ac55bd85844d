"""OpenAPI 3.0 / 3.1 and Swagger 2.0 documents → Tools (the ``openapi`` and ``swagger`` collection sources).

One Tool per operation, in document order (paths as written, methods as written in each path item):

- ``id``: the operationId, else ``<method>_<path slug>`` (``names.derived_id``), whose ``name`` is then
  ``"GET /path"`` so readiness can tell an explicit operationId from a derived one;
- ``family``: the first tag, else the first static path segment;
- parameters: path-item parameters overridden by the operation's (name, in); JSON request-body properties are
  flattened into ``body`` parameters; Swagger 2.0 ``formData`` parameters become ``body`` parameters too;
- responses: status → schema of the JSON (else first) media type; security: the operation's, else the global;
- mutation class from the method; aliases from ``x-qlab-aliases``.

``load_tools(path_or_url)`` is the public helper for one document (benchmarks, ``qlab init --from-openapi``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from qlab.collection import documents, openapi3, swagger
from qlab.collection.collisions import dedupe_within
from qlab.collection.documents import Document
from qlab.collection.model import Parameter, Tool
from qlab.collection.names import derived_id
from qlab.collection.operations import (
    HTTP_METHODS,
    Parts,
    Where,
    aliases,
    family_of,
    idempotent_of,
    mutation_of,
    security,
)
from qlab.collection.refs import Resolver
from qlab.collection.sources import Snapshot, SourceTools
from qlab.contracts.errors import SpecError
from qlab.project.model import Source

SUPPORTED = "OpenAPI 3.0, OpenAPI 3.1 and Swagger 2.0"
_VERSION_30 = re.compile(r"^3\.0\.\d+$")
_VERSION_31 = re.compile(r"^3\.1\.\d+$")


def detect(doc: Document) -> tuple[Literal["openapi", "swagger"], str, str]:
    """(kind, dialect, version) of a document: ``openapi-3.0``, ``openapi-3.1`` or ``swagger-2.0``."""
    data = doc.data
    if not isinstance(data, Mapping):
        raise documents.error(
            doc, (), f"a spec must be an object with `openapi` or `swagger`, not {_kind(data)}"
        )
    if "openapi" in data:
        version = str(data["openapi"]).strip()
        if _VERSION_30.match(version):
            return "openapi", "openapi-3.0", version
        if _VERSION_31.match(version):
            return "openapi", "openapi-3.1", version
        raise documents.error(doc, ("openapi",), f"unsupported version {version!r}: qlab reads {SUPPORTED}")
    if "swagger" in data:
        version = str(data["swagger"]).strip()
        if version == "2.0":
            return "swagger", "swagger-2.0", version
        raise documents.error(doc, ("swagger",), f"unsupported version {version!r}: qlab reads {SUPPORTED}")
    raise documents.error(doc, (), f"no `openapi` or `swagger` version field: qlab reads {SUPPORTED}")


def read_document(
    doc: Document, *, source_name: str, policy: documents.ReadPolicy | None = None
) -> SourceTools:
    """Every operation of ``doc`` as a Tool, plus the source info and the external files read (``policy``:
    which ``$ref``s may be followed; by default none outside ``doc``'s folder and none by URL)."""
    kind, dialect, version = detect(doc)
    data: Mapping[str, Any] = doc.data
    paths = data.get("paths")
    if paths is None:
        raise documents.error(doc, (), "the spec has no `paths`: there are no operations to build tools from")
    if not isinstance(paths, Mapping):
        raise documents.error(doc, ("paths",), f"`paths` must be an object, not {_kind(paths)}")
    resolver = Resolver(doc, source_name=source_name, policy=policy)

    def error_at(where: Where, message: str) -> SpecError:
        return documents.error(doc, where, message)

    is_swagger = kind == "swagger"
    consumes = swagger.consumes(data)
    produces = swagger.produces(data)
    root_security = security(data.get("security"))
    tools: list[Tool] = []
    for path, raw_item in paths.items():
        if path.startswith("x-"):
            continue
        if not path.startswith("/"):
            raise error_at(("paths", path), f"path {path!r} must start with '/'")
        item = resolver.resolve(raw_item, ("paths", path))
        if not isinstance(item, Mapping):
            raise error_at(("paths", path), f"a path item must be an object, not {_kind(item)}")
        for method, op in item.items():
            if method.lower() not in HTTP_METHODS:
                continue
            where: Where = ("paths", path, method)
            if not isinstance(op, Mapping):
                raise error_at(where, f"an operation must be an object, not {_kind(op)}")
            shared = item.get("parameters")
            if is_swagger:
                parts = swagger.operation_parts(
                    op, shared, where=where, error_at=error_at, consumes=consumes, produces=produces
                )
            else:
                parts = openapi3.operation_parts(op, shared, where=where, error_at=error_at)
            op_security = security(op["security"]) if "security" in op else root_security
            tools.append(
                _tool(
                    op,
                    parts,
                    kind=kind,
                    method=method.upper(),
                    path=path,
                    source=source_name,
                    security_=op_security,
                )
            )
    schemes = swagger.security_schemes(data) if is_swagger else openapi3.security_schemes(data)
    servers, base_path = swagger.servers(data) if is_swagger else openapi3.servers(data)
    info: Mapping[str, Any] = data["info"] if isinstance(data.get("info"), Mapping) else {}
    source_info = {
        "dialect": dialect,
        "version": version,
        "title": str(info.get("title") or ""),
        "api_version": str(info.get("version") or ""),
        "servers": servers,
        "base_path": base_path,
        "security_schemes": schemes,
    }
    # ids are made unique by the build (collisions.merge_sources), which also records the renames
    return SourceTools(tools=tuple(tools), info=source_info, dependencies=resolver.dependencies)


_TEMPLATE = re.compile(r"{([^{}/]+)}")


def _undeclared_path_parameters(path: str, parts: Parts) -> list[Parameter]:
    """``{name}`` segments the operation does not declare (an invalid spec, but common): still required inputs,
    untyped and undescribed, which readiness then reports."""
    declared = {p.name for p in parts.parameters if p.location == "path"}
    names = dict.fromkeys(m.group(1) for m in _TEMPLATE.finditer(path))
    return [Parameter(name, "path", True, {}, "") for name in names if name not in declared]


def _tool(
    op: Mapping[str, Any],
    parts: Parts,
    *,
    kind: Literal["openapi", "swagger"],
    method: str,
    path: str,
    source: str,
    security_: Any,
) -> Tool:
    operation_id = op.get("operationId")
    explicit = operation_id.strip() if isinstance(operation_id, str) else ""
    tool_id = explicit or derived_id(method, path)
    raw_tags = op.get("tags")  # a list of names; one name alone is taken as one tag, anything else as none
    raw_tags = [raw_tags] if isinstance(raw_tags, str) else raw_tags if isinstance(raw_tags, list) else ()
    tags = tuple(str(t) for t in raw_tags if isinstance(t, (str, int)))
    return Tool(
        id=tool_id,
        name=tool_id if explicit else f"{method} {path}",  # readiness tells derived ids by this name
        family=family_of(tags, path),
        source=source,
        kind=kind,
        summary=str(op.get("summary") or "").strip(),
        description=str(op.get("description") or "").strip(),
        method=method,
        path=path,
        parameters=(*parts.parameters, *_undeclared_path_parameters(path, parts)),
        request_body=parts.request_body,
        request_content_type=parts.request_content_type,
        responses=parts.responses,
        response_media=parts.response_media,
        security=security_,
        mutation=mutation_of(method),
        aliases=aliases(op.get("x-qlab-aliases")),
        tags=tags,
        examples=parts.examples,
        idempotent=idempotent_of(method),
    )


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)


def load_tools(path_or_url: str, *, source_name: str = "openapi") -> list[Tool]:
    """The Tools of one OpenAPI/Swagger document (a local path or an http(s) URL), ids unique within it.

    Raises SpecError (``file:line:col: $.json.path: message``) when the document cannot be read or is invalid.
    """
    doc = documents.load(path_or_url)
    tools, _renames = dedupe_within(read_document(doc, source_name=source_name).tools, source=source_name)
    return tools


class OpenAPISource:
    """The ``openapi`` / ``swagger`` source kind: ``location`` is a path (relative to qlab.yaml) or a URL."""

    def snapshot(self, source: Source, *, base_dir: Path) -> Snapshot:
        if not source.location:
            raise SpecError(f"source {source.name!r}: `{source.kind}` needs a path or an http(s) URL")
        policy = documents.ReadPolicy.of(source, base_dir=base_dir)
        uri, display, text, digest = documents.read(source.location, base_dir=base_dir, policy=policy)
        return Snapshot(source=source, digest=digest, payload=(uri, display, text, policy))

    def tools(self, snapshot: Snapshot) -> SourceTools:
        uri, display, text, policy = snapshot.payload
        data = documents.parse(text, display=display, uri=uri)
        doc = Document(uri=uri, display=display, text=text, data=data, digest=snapshot.digest)
        _declared_as_written(snapshot.source, doc)
        return read_document(doc, source_name=snapshot.source.name, policy=policy)


_DIALECT_NAMES = {
    "openapi": "an OpenAPI 3 document (`openapi: 3.x`)",
    "swagger": 'a Swagger 2.0 document (`swagger: "2.0"`)',
}


def _declared_as_written(source: Source, doc: Document) -> None:
    """The key used in qlab.yaml (``openapi:`` / ``swagger:``) names the document's own dialect: a Swagger 2.0
    file declared ``openapi:`` (or the reverse) is a mistake in qlab.yaml, said as one (exit 2), not a build that
    goes on with what it guessed."""
    kind, _dialect, _version = detect(doc)
    if kind == source.kind or source.kind not in _DIALECT_NAMES:
        return
    origin = source.origin
    where = f"{origin.file}:{origin.line}:{origin.col}: " if origin.line > 0 else ""
    raise SpecError(
        f"{where}source {source.name!r} is declared `{source.kind}:` but {doc.display} is {_DIALECT_NAMES[kind]}. "
        f"Did you mean `{kind}:`?"
    )


SOURCE = OpenAPISource()

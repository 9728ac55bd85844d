"""Pin an OpenAPI / Swagger document into a new project: what ``qlab init --from-openapi FILE|URL`` copies.

The spec is copied into the project (``specs/``) and qlab.yaml points at the copy, so the build is
reproducible and the collection digest changes only when someone commits a new copy. A URL is downloaded once
(through ``qlab.adapters.http``). Files a local spec ``$ref``s beside it are copied with it, keeping their layout; a
``$ref`` outside the spec's folder or to a URL leaves the spec unpinned, at its location
(``PinnedSpec.note`` says why).

The same parse also gives the starter project its facts: the tools, the server URLs (``servers_of``) and the
security schemes with what an auth profile needs (``schemes_of``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urljoin, urlparse
from urllib.request import url2pathname

from qlab.collection import documents
from qlab.collection.collisions import dedupe_within
from qlab.collection.model import Tool
from qlab.collection.openapi import detect, read_document
from qlab.project.starter.model import SecurityScheme

SPECS_DIR = "specs"
_SPEC_SUFFIXES = (".json", ".yaml", ".yml")
_VARIABLE = re.compile(r"{([^{}]+)}")


@dataclass(frozen=True, slots=True)
class PinnedSpec:
    """A spec read for a new project. ``files``: project-relative path → bytes to write (empty when not
    pinned); ``source``: what qlab.yaml's source says (the copy, or the original location)."""

    location: str  # as the user gave it: it may hold credentials, so it is never written anywhere
    kind: Literal["openapi", "swagger"]
    source: str
    files: Mapping[str, bytes]
    tools: tuple[Tool, ...]
    title: str = ""
    api_version: str = ""
    servers: tuple[str, ...] = ()  # absolute http(s) URLs, variables filled with their defaults
    schemes: tuple[SecurityScheme, ...] = ()
    note: str = ""  # why the spec was not pinned, when it was not
    dependencies: tuple[str, ...] = field(default_factory=tuple)

    @property
    def pinned(self) -> bool:
        return bool(self.files)

    @property
    def public(self) -> str:
        """The location as files may say it: a URL without its user info and query (credentials live there)."""
        return documents.safe_location(self.location)


def pin_spec(location: str, *, policy: documents.ReadPolicy | None = None) -> PinnedSpec:
    """Read ``location`` (a path or an http(s) URL) and decide what to copy; see the module docstring.
    ``policy``: the fetch's headers and caps, and which ``$ref``s may be followed (by default: files inside the
    spec's folder, nothing by URL).

    Raises SpecError (``file:line:col: message``) for a spec that cannot be read or is invalid."""
    raw, doc = _read(location, policy)
    kind, _dialect, _version = detect(doc)
    read = read_document(doc, source_name="api", policy=policy)
    tools, _renames = dedupe_within(read.tools, source="api")
    data: Mapping[str, Any] = doc.data
    raw_info = data.get("info")
    info: Mapping[str, Any] = raw_info if isinstance(raw_info, Mapping) else {}
    dependencies = tuple(documents.safe_location(d) for d in read.dependencies)
    files, note = _copies(location, doc.uri, raw, tuple(read.dependencies))
    name = next(iter(files), "") if files else ""
    public = documents.safe_location(location)
    return PinnedSpec(
        location=location,
        kind=kind,
        source=name or public,
        files=files,
        tools=tuple(tools),
        title=str(info.get("title") or "").strip(),
        api_version=str(info.get("version") or "").strip(),
        servers=tuple(servers_of(data, kind=kind, spec_uri=documents.safe_location(doc.uri))),
        schemes=tuple(schemes_of(data, kind=kind)),
        note=note,
        dependencies=dependencies,
    )


def _read(location: str, policy: documents.ReadPolicy | None) -> tuple[bytes, documents.Document]:
    if documents.is_url(location):
        doc = documents.load(location, policy=policy)
        return doc.text.encode("utf-8"), doc
    path = Path(location)
    doc = documents.load(str(path), policy=policy)
    return path.read_bytes(), doc


def _copies(
    location: str, uri: str, raw: bytes, dependencies: tuple[str, ...]
) -> tuple[dict[str, bytes], str]:
    """The files to write, main spec first, or ({}, why not)."""
    main = f"{SPECS_DIR}/{_file_name(location, raw)}"
    if not dependencies:
        return {main: raw}, ""
    if documents.is_url(location):
        return {}, f"its $refs read {len(dependencies)} more document(s) by URL, so qlab.yaml keeps the URL"
    folder = Path(url2pathname(urlparse(uri).path)).parent
    files = {main: raw}
    for dependency in dependencies:
        if not dependency.startswith("file://"):
            shown = documents.safe_location(dependency)
            return {}, f"its $refs read {shown}, so qlab.yaml points at the spec where it is"
        path = Path(url2pathname(urlparse(dependency).path))
        try:
            rel = path.relative_to(folder).as_posix()
        except ValueError:
            return (
                {},
                f"its $refs read {path}, outside its folder, so qlab.yaml points at the spec where it is",
            )
        files[f"{SPECS_DIR}/{rel}"] = path.read_bytes()
    return files, ""


def _file_name(location: str, raw: bytes) -> str:
    """The copy's name: the file's own name, or the URL's last segment when it looks like a spec file, else
    ``openapi.json`` / ``openapi.yaml`` after the content."""
    name = PurePosixPath(urlparse(location).path).name if documents.is_url(location) else Path(location).name
    if name.lower().endswith(_SPEC_SUFFIXES) and re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return name
    return "openapi.json" if raw.lstrip()[:1] in (b"{", b"[") else "openapi.yaml"


def servers_of(data: Mapping[str, Any], *, kind: str, spec_uri: str) -> list[str]:
    """Absolute server URLs: OpenAPI ``servers`` (variables → their defaults; a relative URL is resolved
    against the spec's own URL when it was downloaded), Swagger ``schemes`` x ``host`` + ``basePath`` (no
    ``host``: the spec URL's host)."""
    base = spec_uri if documents.is_url(spec_uri) else ""
    out: list[str] = []
    if kind == "swagger":
        path = str(data.get("basePath") or "").rstrip("/")
        host = data.get("host")
        schemes = [str(s) for s in data.get("schemes") or () if str(s) in ("http", "https")] or ["https"]
        if isinstance(host, str) and host:
            out = [f"{scheme}://{host}{path}" for scheme in schemes]
        elif base:
            out = [urljoin(base, path or "/").rstrip("/")]
        return out
    for server in data.get("servers") or ():
        if not isinstance(server, Mapping) or not isinstance(server.get("url"), str):
            continue
        given = server.get("variables")
        url = _filled(server["url"].strip(), given if isinstance(given, Mapping) else {})
        if not documents.is_url(url):
            if not base:
                continue
            url = urljoin(base, url)
        out.append(url.rstrip("/"))
    if not out and base and "servers" not in data:
        out.append(urljoin(base, "/").rstrip("/"))  # OpenAPI: no servers means "/" of where the spec is
    return out


def _filled(url: str, variables: Mapping[str, Any]) -> str:
    """``https://{region}.api.x.com`` with each variable's default (a variable without one stays as written)."""
    return _VARIABLE.sub(lambda match: _default(variables, match.group(1)), url)


def _default(variables: Mapping[str, Any], name: str) -> str:
    variable = variables.get(name)
    value = variable.get("default") if isinstance(variable, Mapping) else None
    return str(value) if value is not None else "{" + name + "}"


def schemes_of(data: Mapping[str, Any], *, kind: str) -> list[SecurityScheme]:
    """The spec's security schemes, in document order."""
    if kind == "swagger":
        raw = data.get("securityDefinitions")
    else:
        components = data.get("components")
        raw = components.get("securitySchemes") if isinstance(components, Mapping) else None
    if not isinstance(raw, Mapping):
        return []
    return [_scheme(str(name), value) for name, value in raw.items() if isinstance(value, Mapping)]


def _scheme(name: str, scheme: Mapping[str, Any]) -> SecurityScheme:
    kind = str(scheme.get("type", ""))
    if kind == "basic" or (kind == "http" and str(scheme.get("scheme", "")).lower() == "basic"):
        return SecurityScheme(name, "basic", "http basic")
    if kind == "http":
        http_scheme = str(scheme.get("scheme", "")).lower()
        if http_scheme == "bearer":
            return SecurityScheme(name, "bearer", "http bearer")
        return SecurityScheme(name, "unsupported", f"http {http_scheme}".strip())
    if kind == "apiKey":
        where, key = str(scheme.get("in", "header")), str(scheme.get("name", ""))
        if where not in ("header", "query", "cookie") or not key:
            return SecurityScheme(name, "unsupported", f"apiKey in {where} {key}".strip())
        return SecurityScheme(name, "api_key", f"apiKey in {where} {key}", where=where, key=key)
    if kind == "oauth2":
        flows = _flows(scheme)
        credentials = flows.get("clientCredentials") or flows.get("application")
        token_url = str((credentials or {}).get("tokenUrl") or "")
        detail = f"oauth2 ({', '.join(flows) or 'no flows'})"
        if credentials is not None and documents.is_url(token_url):
            scopes = credentials.get("scopes")
            names = tuple(str(s) for s in scopes) if isinstance(scopes, Mapping) else ()
            return SecurityScheme(name, "client_credentials", detail, token_url=token_url, scopes=names)
        return SecurityScheme(name, "bearer", detail)
    if kind == "openIdConnect":
        return SecurityScheme(name, "bearer", "openIdConnect")
    return SecurityScheme(name, "unsupported", kind or "no type")


def _flows(scheme: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """OpenAPI 3 ``flows`` by name; a Swagger 2.0 scheme's one ``flow`` with its ``tokenUrl`` and ``scopes``."""
    flows = scheme.get("flows")
    if isinstance(flows, Mapping):
        return {str(k): v for k, v in flows.items() if isinstance(v, Mapping)}
    flow = scheme.get("flow")
    return {str(flow): scheme} if isinstance(flow, str) else {}

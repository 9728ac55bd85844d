"""Source documents: read a spec (local path or http(s) URL), parse JSON or YAML, and locate errors in it.

A parse error says ``file:line:col: message``; any later error can name a JSON path in the document and
``locate`` turns that path into a line and column by composing the text again (only on the error path, so a
successful build never pays for positions).

YAML goes through the project layer's reader (``qlab.project.yamlio``, the one module that imports pyyaml):
dates stay strings and keys are strings, so every document is plain JSON data (the artifact must serialize it
the same way every time). JSON goes through ``json.loads`` (fast enough for Kubernetes' 4 MB).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse, urlsplit, urlunsplit

from qlab.collection.names import json_path
from qlab.errors import ConfigError, Diagnostic, InputError, SpecError, SpecFetchError


def _url2pathname(path: str) -> str:
    """``urllib.request.url2pathname``, imported when a file: URL is met (urllib.request costs ~12 ms to import:
    email, http.client, ssl; a run from local specs never needs it)."""
    from urllib.request import url2pathname

    return url2pathname(path)


URL_SCHEMES = ("http://", "https://")
FETCH_TIMEOUT_SEC = 15.0
YAML_MAX_DEPTH = 1000  # nesting of mappings and lists (libyaml's own limit); the reader builds from events
YAML_MAX_ALIAS_NODES = 500_000  # specs reuse anchors a lot more than config files do
JSON_LOCATE_MAX_DEPTH = 400  # the positioned JSON reader recurses


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed source document. ``uri`` is absolute (``file:///…`` or ``http(s)://…``) and is the base of
    its relative ``$ref``s; ``display`` is how messages name it (the path as the user wrote it)."""

    uri: str
    display: str
    text: str
    data: Any
    digest: str  # sha256 of the raw bytes, hex
    _positions: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def is_url(location: str) -> bool:
    return location.startswith(URL_SCHEMES)


def safe_location(location: str) -> str:
    """A URL without credentials or query string (either may hold a secret); anything else as it is."""
    if not is_url(location):
        return location
    parts = urlsplit(location)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(url: str, *, display: str | None = None) -> tuple[str, str]:
    """GET ``url`` through ``qlab.http``; return (text, sha256). Any failure is a SpecFetchError (a SpecError whose
    reason code is ``spec_fetch_failed``) saying what to check."""
    from qlab import http  # httpx only when a URL is actually read

    where = display or url
    try:
        text, _ctype = http.get_text(url, timeout=FETCH_TIMEOUT_SEC)
    except http.TimeoutException:
        raise SpecFetchError(f"{where}: no answer within {FETCH_TIMEOUT_SEC:g}s; is the server up?") from None
    except http.HTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        what = f"HTTP {status}" if status else f"{type(exc).__name__}: {exc}"
        raise SpecFetchError(
            f"{where}: could not fetch the spec ({what}); check the URL and that the server answers."
        ) from None
    return text, sha256(text.encode("utf-8"))


def read(
    location: str, *, base_dir: Path | None = None, display: str | None = None
) -> tuple[str, str, str, str]:
    """Read ``location`` (path relative to ``base_dir``, ``file://`` URI, or http(s) URL).

    Returns (uri, display, text, sha256). A missing or unreadable file is a SpecError.
    """
    if is_url(location):
        shown = display or safe_location(location)
        text, digest = fetch(location, display=shown)
        return location, shown, text, digest
    shown = display or location
    if location.startswith("file://"):
        path = Path(_url2pathname(urlparse(location).path))
    else:
        path = Path(location)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
            shown = display or _from_cwd(path)
    try:
        if path.exists() and not stat.S_ISREG(path.stat().st_mode) and not path.is_dir():
            raise SpecError(
                f"{shown}: not a regular file (a FIFO, a socket or a device); point at the spec file"
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        # where it looked helps when a relative path was resolved against qlab.yaml's folder
        looked = f" (looked at {path})" if str(path) != shown and not location.startswith("file://") else ""
        raise SpecError(f"{shown}: file not found{looked}; check the path.") from None
    except OSError as exc:
        raise SpecError(f"{shown}: cannot read the file: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        _refuse_binary(raw, shown)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{shown}: not UTF-8 text (byte {exc.start}); save the spec as UTF-8.") from None
    return path.resolve().as_uri(), shown, text, sha256(raw)


def _refuse_binary(raw: bytes, shown: str) -> None:
    """A NUL byte: a binary or UTF-16/32 file. The project layer's text reader words it, with line and column
    (only for this case: its other refusals, such as DEL, would reject text a JSON string may hold)."""
    from qlab.project.textio import decode_text

    try:
        decode_text(raw, display=shown)
    except ConfigError as exc:
        raise SpecError(str(exc)) from None


def _from_cwd(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (clickable in a terminal), else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def load(location: str, *, base_dir: Path | None = None, display: str | None = None) -> Document:
    """Read and parse one document."""
    uri, shown, text, digest = read(location, base_dir=base_dir, display=display)
    return Document(
        uri=uri, display=shown, text=text, data=parse(text, display=shown, uri=uri), digest=digest
    )


def parse(text: str, *, display: str, uri: str = "") -> Any:
    """JSON when it looks like JSON (or the name says .json), YAML otherwise; errors carry line and column."""
    looks_json = uri.endswith(".json") or display.endswith(".json") or text.lstrip()[:1] in ("{", "[")
    if looks_json:
        try:
            return json.loads(text)
        except RecursionError:
            pass  # nested deeper than the recursive C decoder allows: the YAML reader has a located depth limit
        except json.JSONDecodeError as exc:
            if uri.endswith(".json") or display.endswith(".json"):
                raise SpecError(f"{display}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
            # not strictly JSON: YAML is a superset of most of it, so give YAML a chance
    return _parse_yaml(text, display=display)


def _parse_yaml(text: str, *, display: str) -> Any:
    return _yaml_document(text, display=display).data


def _yaml_document(text: str, *, display: str) -> Any:
    """The project layer's YAML reader (pyyaml lives behind ``qlab.project.yamlio``): YAML 1.2 core scalars,
    string keys, dates left as strings, duplicate keys refused, positions for every value."""
    from qlab.project.yamlio import parse_yaml

    try:
        return parse_yaml(text, display, max_depth=YAML_MAX_DEPTH, max_alias_nodes=YAML_MAX_ALIAS_NODES)
    except ConfigError as exc:
        raise SpecError(str(exc)) from None


def resolve_uri(base_uri: str, reference: str) -> str:
    """The absolute URI of ``reference`` (a ``$ref`` without its fragment) relative to ``base_uri``."""
    return urljoin(base_uri, reference)


def display_for(root: Document, uri: str) -> str:
    """How to name a document that ``root`` refers to: a path next to the root's display path, or the URL."""
    if not uri.startswith("file://") or not root.uri.startswith("file://"):
        return safe_location(uri)
    target = _url2pathname(urlparse(uri).path)
    root_dir = os.path.dirname(_url2pathname(urlparse(root.uri).path))
    rel = os.path.relpath(target, root_dir)
    shown_dir = os.path.dirname(root.display)
    return os.path.normpath(os.path.join(shown_dir, rel)) if shown_dir else os.path.normpath(rel)


# ------------------------------------------------------------------------------------------ located errors


def locate(doc: Document, parts: Sequence[str | int]) -> tuple[int, int]:
    """1-based (line, col) of the node at ``parts``, or of its deepest existing ancestor; (0, 0) if unknown.

    Positions come from reading the text again with the project layer's position-keeping readers, only when
    an error needs them (they are slower than ``json.loads``).
    """
    if "doc" not in doc._positions:
        doc._positions["doc"] = _positioned(doc)
    positioned = doc._positions["doc"]
    if positioned is None:
        return 0, 0
    line, col = positioned.locate(tuple(parts))
    return int(line), int(col)


def _positioned(doc: Document) -> Any:
    from qlab.project.jsonio import parse_json

    if not doc.text:
        return None
    if doc.text.lstrip()[:1] in ("{", "["):
        try:
            return parse_json(doc.text, doc.display, max_depth=JSON_LOCATE_MAX_DEPTH)
        except InputError:
            pass  # nested deeper than the recursive JSON reader goes: YAML reads JSON too, from events
    try:
        return _yaml_document(doc.text, display=doc.display)
    except InputError:
        return None  # positions are a courtesy: the JSON path still says where


class LocatedSpecError(SpecError):
    """A SpecError about one node of a document; keeps the JSON path parts and the bare message."""

    def __init__(self, rendered: str, *, parts: Sequence[str | int], detail: str) -> None:
        super().__init__(rendered)
        self.parts = tuple(parts)
        self.detail = detail


def error(doc: Document, parts: Sequence[str | int], message: str) -> LocatedSpecError:
    """A SpecError rendered ``file:line:col: $.json.path: message`` for the node at ``parts`` of ``doc``."""
    line, col = locate(doc, parts)
    rendered = Diagnostic(doc.display, line, col, json_path(parts), message).render()
    return LocatedSpecError(rendered, parts=parts, detail=message)

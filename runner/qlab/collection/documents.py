"""Source documents: read a spec (local path or http(s) URL), parse JSON or YAML, and locate errors in it.

A parse error says ``file:line:col: message``; any later error can name a JSON path in the document and
``locate`` turns that path into a line and column by composing the text again (only on the error path, so a
successful build never pays for positions).

YAML is read with pyyaml's C loader where available. Dates stay strings and keys become strings, so every
document is plain JSON data (the artifact must serialize it byte-for-byte the same way every time).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse
from urllib.request import url2pathname

from qlab.collection.names import json_path
from qlab.errors import Diagnostic, SpecError

URL_SCHEMES = ("http://", "https://")
FETCH_TIMEOUT_SEC = 15.0


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


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(url: str, *, display: str | None = None) -> tuple[str, str]:
    """GET ``url`` through ``qlab.http``; return (text, sha256). Any failure is a SpecError saying what to check."""
    from qlab import http  # httpx only when a URL is actually read

    where = display or url
    try:
        text, _ctype = http.get_text(url, timeout=FETCH_TIMEOUT_SEC)
    except http.TimeoutException:
        raise SpecError(f"{where}: no answer within {FETCH_TIMEOUT_SEC:g}s; is the server up?") from None
    except http.HTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        what = f"HTTP {status}" if status else f"{type(exc).__name__}: {exc}"
        raise SpecError(
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
        text, digest = fetch(location, display=display)
        return location, display or location, text, digest
    if location.startswith("file://"):
        path = Path(url2pathname(urlparse(location).path))
    else:
        path = Path(location)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
    shown = display or location
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{shown}: file not found (looked at {path}); check the path.") from None
    except OSError as exc:
        raise SpecError(f"{shown}: cannot read the file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{shown}: not UTF-8 text (byte {exc.start}); save the spec as UTF-8.") from None
    return path.resolve().as_uri(), shown, text, sha256(raw)


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
        except json.JSONDecodeError as exc:
            if uri.endswith(".json") or display.endswith(".json"):
                raise SpecError(f"{display}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
            # not strictly JSON: YAML is a superset of most of it, so give YAML a chance
    return _parse_yaml(text, display=display)


def _parse_yaml(text: str, *, display: str) -> Any:
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{display}:{mark.line + 1}:{mark.column + 1}" if mark is not None else display
        problem = exc.problem or exc.context or "syntax error"
        raise SpecError(f"{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{display}: invalid YAML: {exc}") from None
    return _plain(data)


_LOADER: Any = None


def _loader() -> Any:
    """A safe (C when available) loader that keeps timestamps as the strings they were written as."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class _SpecLoader(base):  # type: ignore[misc, valid-type]
            pass

        def _timestamp(loader: Any, node: Any) -> str:
            return str(loader.construct_scalar(node))

        _SpecLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
        _LOADER = _SpecLoader
    return _LOADER


def _plain(node: Any) -> Any:
    """Keys as strings (YAML reads ``200:`` as an int), recursively; values are left as they are."""
    if isinstance(node, dict):
        return {k if isinstance(k, str) else _key(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def resolve_uri(base_uri: str, reference: str) -> str:
    """The absolute URI of ``reference`` (a ``$ref`` without its fragment) relative to ``base_uri``."""
    return urljoin(base_uri, reference)


def display_for(root: Document, uri: str) -> str:
    """How to name a document that ``root`` refers to: a path next to the root's display path, or the URL."""
    if not uri.startswith("file://") or not root.uri.startswith("file://"):
        return uri
    target = url2pathname(urlparse(uri).path)
    root_dir = os.path.dirname(url2pathname(urlparse(root.uri).path))
    rel = os.path.relpath(target, root_dir)
    shown_dir = os.path.dirname(root.display)
    return os.path.normpath(os.path.join(shown_dir, rel)) if shown_dir else os.path.normpath(rel)


# ------------------------------------------------------------------------------------------ located errors


def locate(doc: Document, parts: Sequence[str | int]) -> tuple[int, int]:
    """1-based (line, col) of the node at ``parts``, or of its deepest existing ancestor; (0, 0) if unknown."""
    root = doc._positions.get("root")
    if root is None and "root" not in doc._positions:
        root = _compose(doc.text)
        doc._positions["root"] = root
    if root is None:
        return 0, 0
    import yaml

    node = root
    for part in parts:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if str(key_node.value) == str(part):
                    child = value_node
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            child = node.value[part]
        if child is None:
            break
        node = child
    return node.start_mark.line + 1, node.start_mark.column + 1


def _compose(text: str) -> Any:
    import yaml

    try:
        return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return (
            None  # JSON that YAML cannot read (tabs as indentation): no positions, the path still says where
        )


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

"""Source documents: read a spec (local path or http(s) URL), parse JSON or YAML, and locate errors in it.

A parse error says ``file:line:col: message``; any later error can name a JSON path in the document and
``locate`` turns that path into a line and column by composing the text again (only on the error path, so a
successful build never pays for positions).

YAML goes through the project layer's reader (``qlab.project.yamlio``, the one module that imports pyyaml):
dates stay strings and keys are strings, so every document is plain JSON data (the artifact must serialize it
the same way every time). JSON is read strictly (``qlab.adapters.strictjson``): NaN, numbers beyond a double and lone
surrogates are refused by name, since no result file could hold them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlsplit, urlunsplit

from qlab.adapters.strictjson import NotStrictJSON, json_of
from qlab.collection.names import json_path
from qlab.contracts.errors import ConfigError, Diagnostic, InputError, SpecError, SpecFetchError
from qlab.project.model import Source


def _url2pathname(path: str) -> str:
    """``urllib.request.url2pathname``, imported when a file: URL is met (urllib.request pulls in email,
    http.client and ssl; a run from local specs never needs it)."""
    from urllib.request import url2pathname

    return url2pathname(path)


URL_SCHEMES = ("http://", "https://")
FETCH_TIMEOUT_SEC = 15.0
MiB = 1024 * 1024
YAML_MAX_DEPTH = 1000  # nesting of mappings and lists (libyaml's own limit); the reader builds from events
YAML_MAX_ALIAS_NODES = 500_000  # specs reuse anchors a lot more than config files do
YAML_MAX_ALIAS_CHARS = 64 * MiB  # text that aliases may expand to in a spec: limits.spec_mib's default
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


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """How the documents of one source are read: the caps, the headers of a fetch, and where ``$ref`` may go.

    - a spec read by URL never reads a local file; a local spec reads files only inside ``roots`` (real paths:
      the project folder and the spec's own), symbolic links resolved first;
    - another document by URL only with ``remote_refs`` (``collection.sources[].remote_refs: true``);
    - ``headers`` go with a fetch only to the origin of the spec's own URL, never to a redirect or a ``$ref``
      elsewhere; ``max_bytes`` caps each document, decoded; ``timeout_sec`` is each fetch's total deadline.
    """

    max_bytes: int = 64 * MiB
    timeout_sec: float = FETCH_TIMEOUT_SEC
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    remote_refs: bool = False
    roots: tuple[str, ...] = ()

    @classmethod
    def of(cls, source: Source, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> ReadPolicy:
        """The policy of a qlab.yaml source: its limits, ``remote_refs``, ``headers_env`` read from the
        environment (a variable that is not set is a SpecError naming it), the project folder as a root."""
        env = os.environ if environ is None else environ
        missing = [var for var in source.headers_env.values() if not env.get(var)]
        if missing:
            raise SpecError(
                f"source {source.name!r}: headers_env needs {', '.join(sorted(set(missing)))}, which is not set; "
                "set it to the header's value (qlab never writes it anywhere)"
            )
        return cls(
            max_bytes=source.limits.spec_bytes,
            timeout_sec=source.limits.spec_timeout_sec,
            headers={name: env[var] for name, var in source.headers_env.items()},
            remote_refs=source.remote_refs,
            roots=(os.path.realpath(base_dir),),
        )

    def for_root(self, root_uri: str) -> ReadPolicy:
        """This policy with the folder of a local root document added to its roots."""
        if not root_uri.startswith("file://"):
            return self
        folder = os.path.dirname(os.path.realpath(_url2pathname(urlparse(root_uri).path)))
        return self if folder in self.roots else replace(self, roots=(*self.roots, folder))

    def refusal(self, root_uri: str, uri: str) -> str | None:
        """Why a ``$ref`` of the spec at ``root_uri`` may not read the document at ``uri`` (None: it may)."""
        remote_root = is_url(root_uri)
        if uri.startswith("file:"):
            if remote_root:
                return "a spec fetched by URL never reads local files"
            if not root_uri.startswith("file:"):
                return "an embedded schema's $ref may point only inside itself (#/...)"
            path = os.path.realpath(_url2pathname(urlparse(uri).path))
            if not any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots):
                return (
                    "it reads a file outside the project folder; a local spec reads only files inside it "
                    "(and inside its own folder)"
                )
            return None
        if is_url(uri):
            if not root_uri.startswith(("file:", *URL_SCHEMES)):
                return "an embedded schema's $ref may point only inside itself (#/...)"
            if not self.remote_refs:
                return (
                    f"remote $ref to {safe_location(uri)}: not followed unless the source opts in with "
                    "`remote_refs: true` (for a spec you trust)"
                )
            return None
        return f"$ref to {uri.split(':', 1)[0]}: URIs is not supported; use a relative path or #/..."


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


def origin_of(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port


def fetch(
    url: str, *, display: str | None = None, policy: ReadPolicy | None = None, root: str | None = None
) -> tuple[str, str]:
    """GET ``url`` through ``qlab.adapters.http`` within the policy's cap and deadline; return (text, sha256). The
    policy's headers go only when ``url`` has the origin of ``root`` (the spec's own URL; default ``url``).
    Any failure is a SpecFetchError (reason ``spec_fetch_failed``: exit 2) saying what to check."""
    from qlab.adapters import http  # httpx only when a URL is actually read

    policy = policy or ReadPolicy()
    where = display or safe_location(url)
    own = origin_of(url) == origin_of(root or url)
    try:
        fetched = http.get(
            url,
            max_bytes=policy.max_bytes,
            timeout=policy.timeout_sec,
            headers=policy.headers if own else None,
        )
    except http.BodyTooLarge as exc:
        raise SpecFetchError(
            f"{where}: the spec is larger than {exc.limit / MiB:g} MiB (limits.spec_mib); raise the limit if the "
            "spec really is that large"
        ) from None
    except http.TimeoutException:
        raise SpecFetchError(
            f"{where}: not fetched within {policy.timeout_sec:g}s (limits.spec_timeout_sec); is the server up?"
        ) from None
    except http.HTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        what = f"HTTP {status}" if status else f"{type(exc).__name__}: {exc}"
        raise SpecFetchError(
            f"{where}: could not fetch the spec ({what}); check the URL and that the server answers."
        ) from None
    if _is_html(fetched.content_type, fetched.body):
        if fetched.redirected:
            raise SpecFetchError(
                f"{where}: the spec URL redirected to an HTML page ({safe_location(fetched.url)}) — a login? "
                "Give the fetch its credentials (init's --header/--header-env, a source's headers_env) or use "
                "the URL of the raw spec file."
            )
        raise SpecFetchError(
            f"{where}: the spec URL answered an HTML page, not a spec; use the URL of the raw spec file."
        )
    return _text(fetched.body, where, fetched.content_type), sha256(fetched.body)


def _is_html(content_type: str, body: bytes) -> bool:
    if content_type.split(";", 1)[0].strip().lower() in ("text/html", "application/xhtml+xml"):
        return True
    start = body[:512].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))


def _text(raw: bytes, shown: str, content_type: str = "") -> str:
    """The text of a spec's bytes: UTF-8 (a BOM allowed), else the charset its Content-Type names."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        charset = content_type.partition("charset=")[2].split(";", 1)[0].strip().strip('"')
        if charset:
            try:
                return raw.decode(charset)
            except (LookupError, UnicodeDecodeError):
                pass
        raise SpecError(f"{shown}: not UTF-8 text (byte {exc.start}); save the spec as UTF-8.") from None


def read(
    location: str,
    *,
    base_dir: Path | None = None,
    display: str | None = None,
    policy: ReadPolicy | None = None,
    root: str | None = None,
) -> tuple[str, str, str, str]:
    """Read ``location`` (path relative to ``base_dir``, ``file://`` URI, or http(s) URL) within ``policy``'s
    caps (``root``: the spec's own URL when ``location`` is a document it refers to).

    Returns (uri, display, text, sha256). A missing or unreadable file is a SpecError.
    """
    policy = policy or ReadPolicy()
    if is_url(location):
        shown = display or safe_location(location)
        text, digest = fetch(location, display=shown, policy=policy, root=root)
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
        if path.is_file() and path.stat().st_size > policy.max_bytes:
            raise SpecError(
                f"{shown}: the file is larger than {policy.max_bytes / MiB:g} MiB (limits.spec_mib); raise the "
                "limit if the spec really is that large"
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
    return path.resolve().as_uri(), shown, _text(raw, shown), sha256(raw)


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


def load(
    location: str,
    *,
    base_dir: Path | None = None,
    display: str | None = None,
    policy: ReadPolicy | None = None,
    root: str | None = None,
) -> Document:
    """Read and parse one document (see ``read``)."""
    uri, shown, text, digest = read(location, base_dir=base_dir, display=display, policy=policy, root=root)
    return Document(
        uri=uri, display=shown, text=text, data=parse(text, display=shown, uri=uri), digest=digest
    )


def parse(text: str, *, display: str, uri: str = "") -> Any:
    """JSON when it looks like JSON (or the name says .json), YAML otherwise; errors carry line and column."""
    looks_json = uri.endswith(".json") or display.endswith(".json") or text.lstrip()[:1] in ("{", "[")
    if looks_json:
        try:
            return json_of(text)
        except NotStrictJSON as exc:
            # NaN, 1e999999 or a lone surrogate: json reads them, but no result file could hold them
            raise SpecError(f"{display}: not strict JSON: {exc}; fix the spec") from None
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
        return parse_yaml(
            text,
            display,
            max_depth=YAML_MAX_DEPTH,
            max_alias_nodes=YAML_MAX_ALIAS_NODES,
            max_alias_chars=YAML_MAX_ALIAS_CHARS,
        )
    except ConfigError as exc:
        raise SpecError(str(exc)) from None


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

"""The collection-source extension point: a Protocol, and a literal registry keyed by ``Source.kind``.

A source turns one ``collection.sources[]`` entry of qlab.yaml into Tools, in two steps so the build cache can
skip the expensive one:

1. ``snapshot`` fetches the raw material (file bytes, an HTTP body, a live MCP server's ``tools/list``) and
   digests it. It must be cheap compared with step 2 and must not parse more than it needs to digest.
2. ``tools`` parses the snapshot into Tools. It runs only when the cache has no collection for the digests.

Both raise ``qlab.contracts.errors.SpecError`` for unusable input, saying where (``file:line:col``) and what to do.
Adding a kind: implement the Protocol in ``qlab/collection/<kind>.py``, add it to ``SOURCES`` and to the config
schema's ``source`` definition (a test holds the two together). It is not a plugin point: tools of your own come
from a ``python:`` source (callables) or an ``mcp:`` one (a server), which need no package.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection.model import Tool
from qlab.contracts.errors import SpecError
from qlab.project.model import Source


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The raw material of one source, digested. ``payload`` is whatever ``tools`` needs to avoid reading again."""

    source: Source
    digest: str  # sha256 hex of the raw material
    payload: Any = None


@dataclass(frozen=True, slots=True)
class SourceTools:
    """What one source contributed. ``info`` lands in the artifact's ``sources[]`` entry (dialect, title,
    base_path, security_schemes, server…); ``dependencies`` are other files read (absolute URI → sha256), which
    the build cache re-checks before reusing a collection."""

    tools: tuple[Tool, ...]
    info: Mapping[str, Any] = field(default_factory=dict)
    dependencies: Mapping[str, str] = field(default_factory=dict)


class CollectionSource(Protocol):
    """One kind of collection source (``openapi``, ``swagger``, ``mcp``, ``python``)."""

    def snapshot(self, source: Source, *, base_dir: Path) -> Snapshot:
        """Read the raw material of ``source`` (paths relative to ``base_dir``, the folder of qlab.yaml)."""
        ...

    def tools(self, snapshot: Snapshot) -> SourceTools:
        """Parse a snapshot into Tools, in the source's own order (which must be the same on every run)."""
        ...


# kind -> "module:attribute" of the implementation, imported on first use (the mcp SDK and user modules are
# heavy or optional). openapi and swagger share one reader: the document's own version decides the dialect.
SOURCES: dict[str, str | CollectionSource] = {
    "openapi": "qlab.collection.openapi:SOURCE",
    "swagger": "qlab.collection.openapi:SOURCE",
    "mcp": "qlab.collection.mcp:SOURCE",
    "python": "qlab.collection.python_source:SOURCE",
}


def get_source(kind: str) -> CollectionSource:
    """The implementation registered for ``kind``; an unknown kind is a SpecError with a suggestion."""
    entry = SOURCES.get(kind)
    if entry is None:
        known = ", ".join(sorted(SOURCES))
        raise SpecError(
            f"unknown collection source kind {kind!r} (known: {known}).{did_you_mean(kind, SOURCES)}"
        )
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        implementation: CollectionSource = getattr(importlib.import_module(module), attr)
        SOURCES[kind] = implementation
        return implementation
    return entry

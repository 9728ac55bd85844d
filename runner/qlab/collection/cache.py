"""The build cache: a finished collection artifact stored under the digests of everything it was built from.

The key is a sha256 over: the cache format, qlab's version, a digest of the collection package's own code (a
changed builder must not serve old artifacts), and each source's name, kind, location and snapshot digest,
plus the aliases file's digest. Files read while parsing (external ``$ref`` documents) are recorded next to
the artifact and re-hashed before a hit is trusted. A cache file that cannot be read is ignored (and rebuilt).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from qlab.collection import artifact, documents
from qlab.collection.model import Collection
from qlab.contracts.errors import InputError
from qlab.version import __version__

CACHE_FORMAT = 1


@lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 of the collection package's source files (read once per process)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_key(parts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for part in (f"format={CACHE_FORMAT}", f"qlab={__version__}", f"code={code_digest()}", *parts):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


class BuildCache:
    """Artifacts in ``folder`` as ``collection-<key>.json`` with a ``.deps.json`` beside each."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / f"collection-{key[:40]}.json"

    def load(self, key: str) -> tuple[Collection, Path] | None:
        """The cached collection for ``key`` if it exists, its dependencies are unchanged, and it reads back."""
        path = self.path(key)
        deps_path = path.with_suffix(".deps.json")
        try:
            deps = json.loads(deps_path.read_text(encoding="utf-8"))
            if deps.get("key") != key or not _unchanged(deps.get("dependencies") or {}):
                return None
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError, AttributeError):
            return None
        try:
            return artifact.from_json(text, verify=False, origin=str(path)), path
        except InputError:
            return None

    def store(self, key: str, text: str, dependencies: Mapping[str, str]) -> Path:
        """Write the artifact and its dependency record; returns the artifact's path."""
        path = artifact.write(text, self.path(key))
        artifact.write(
            json.dumps({"key": key, "dependencies": dict(sorted(dependencies.items()))}, indent=1),
            path.with_suffix(".deps.json"),
        )
        return path


def _unchanged(dependencies: Mapping[str, str]) -> bool:
    for uri, digest in dependencies.items():
        try:
            _uri, _display, _text, now = documents.read(uri)
        except InputError:
            return False
        if now != digest:
            return False
    return True

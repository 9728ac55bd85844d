"""``build_collection``: qlab.yaml's sources → one Collection, its artifact (cached) and its readiness report.

1. Every source is snapshotted (files read, URLs fetched, live MCP servers listed) and digested.
2. With the cache on, a collection stored under the same digests is reused: nothing is parsed again.
3. Otherwise each source's Tools are parsed, ids made unique (``collisions``), the reviewed aliases added,
   IO contracts found, and the canonical artifact written to the cache.
4. The readiness report is computed every time: it depends on qlab.yaml (auth profiles, the build gate's
   threshold) as well as on the collection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.collection import artifact
from qlab.collection.aliases import apply_aliases, load_aliases, unknown_ids
from qlab.collection.cache import BuildCache, cache_key
from qlab.collection.collisions import merge_sources
from qlab.collection.contracts import find_contracts
from qlab.collection.documents import safe_location
from qlab.collection.model import Collection
from qlab.collection.readiness import DEFAULT_THRESHOLD, Readiness, compute_readiness
from qlab.collection.refs import MAX_NESTING
from qlab.collection.sources import CollectionSource, Snapshot, get_source
from qlab.contracts.errors import SpecError
from qlab.project.model import Config, Source


@dataclass(frozen=True, slots=True)
class BuildOutput:
    """What a build produced. ``artifact_path`` is where the artifact was written: ``write_to`` when given,
    else the cache's copy (None with the cache off); ``cached`` says the collection came from the cache without
    parsing any source."""

    collection: Collection
    readiness: Readiness
    artifact_path: Path | None
    cached: bool


def build_collection(config: Config, *, use_cache: bool = True, write_to: Path | None = None) -> BuildOutput:
    """Build (or reuse) the collection of ``config`` and compute its readiness report.

    ``write_to``: also write the artifact there (``qlab build``), without serializing it a second time.
    Raises SpecError (exit 2) for a source that cannot be read, with ``file:line:col: $.json.path`` where known.
    """
    base_dir = Path(config.path).parent
    sources = config.collection.sources
    if not sources:
        raise SpecError(
            f"{config.path}: $.collection.sources: no sources; add an openapi, swagger, mcp or python source"
        )
    readers: list[tuple[CollectionSource, Snapshot]] = []
    for source in sources:
        reader = get_source(source.kind)
        readers.append((reader, reader.snapshot(source, base_dir=base_dir)))
    aliases = load_aliases(config.collection.aliases_file, base_dir=base_dir)
    key = cache_key(
        [
            f"{s.source.name}|{s.source.kind}|{s.source.location}|{s.digest}|remote_refs={s.source.remote_refs}"
            for _r, s in readers
        ]
        + [f"aliases|{aliases.digest if aliases else '-'}"]
    )
    cache = BuildCache(base_dir / config.collection.cache_dir) if use_cache else None
    artifact_path: Path | None
    hit = cache.load(key) if cache is not None else None
    if hit is not None:
        collection, artifact_path = hit
        cached = True
        if write_to is not None:
            artifact_path = artifact.copy(artifact_path, write_to)
    else:
        try:
            collection, text, dependencies = _build(readers, aliases)
        except RecursionError:  # the walks refuse deep nesting; this is the net for what they cannot see
            names = ", ".join(repr(s.source.name) for _r, s in readers)
            raise SpecError(
                f"source {names}: a schema is nested too deeply to store (keep it under {MAX_NESTING} "
                "levels); flatten it"
            ) from None
        artifact_path = cache.store(key, text, dependencies) if cache is not None else None
        cached = False
        if write_to is not None:
            artifact_path = artifact.write(text, write_to)
    warnings = unknown_ids(aliases, (t.id for t in collection.tools))
    readiness = compute_readiness(collection, config, threshold=coverage_threshold(config), warnings=warnings)
    return BuildOutput(collection=collection, readiness=readiness, artifact_path=artifact_path, cached=cached)


def coverage_threshold(config: Config) -> float:
    """The first build gate's ``schema_coverage_below`` value, else the readiness default."""
    for gate in config.gates:
        if gate.stage == "build":
            for stop in gate.stop_if:
                if stop.name == "schema_coverage_below" and stop.value is not None:
                    return float(stop.value)
    return DEFAULT_THRESHOLD


def _build(
    readers: list[tuple[CollectionSource, Snapshot]], aliases: Any
) -> tuple[Collection, str, dict[str, str]]:
    per_source = []
    entries: list[dict[str, Any]] = []
    dependencies: dict[str, str] = {}
    for reader, snapshot in readers:
        found = reader.tools(snapshot)
        per_source.append((snapshot.source.name, found.tools))
        entries.append(_entry(snapshot.source, snapshot.digest, found.info, len(found.tools)))
        dependencies.update(found.dependencies)
    tools, collisions = merge_sources(per_source)
    for record in collisions:  # each record goes with the source whose tool was renamed (or reported)
        owner = record["sources"][-1]
        next(e for e in entries if e["name"] == owner)["collisions"].append(record)
    tools = apply_aliases(tools, aliases)
    contracts = find_contracts(tools)
    vocabulary = aliases.vocabulary if aliases is not None else None
    collection, text = artifact.finalize(tuple(tools), contracts, tuple(entries), vocabulary)
    return collection, text, dependencies


def _entry(source: Source, digest: str, info: Mapping[str, Any], count: int) -> dict[str, Any]:
    """The artifact's record of one source. No env values and no URL credentials or query: secrets stay out."""
    entry: dict[str, Any] = {
        "name": source.name,
        "kind": source.kind,
        "location": None if source.location is None else safe_location(source.location),
        "digest": digest,
        "tools": count,
        "collisions": [],
    }
    if source.command:
        entry["command"] = source.command
    entry.update({k: v for k, v in info.items() if k not in entry})
    return entry

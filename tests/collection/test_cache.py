"""The build cache: a second build reuses the artifact without parsing; any input change rebuilds."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection import openapi
from qlab.collection.builder import build_collection
from qlab.collection.sources import SourceTools

from .helpers import config
from .helpers import openapi as openapi_source


def _spec(folder: Path, summary: str = "List pets") -> Path:
    (folder / "common").mkdir(parents=True, exist_ok=True)
    (folder / "common" / "pet.yaml").write_text(
        "Pet: {type: object, properties: {id: {type: integer}}}\n", encoding="utf-8"
    )
    path = folder / "api.yaml"
    path.write_text(
        f"""openapi: 3.0.3
info: {{title: t, version: '1'}}
paths:
  /pets:
    get:
      operationId: listPets
      summary: {summary}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {{$ref: 'common/pet.yaml#/Pet'}}
""",
        encoding="utf-8",
    )
    return path


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = openapi.read_document

    def counting(doc, *, source_name, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(source_name)
        out: SourceTools = real(doc, source_name=source_name, **kwargs)
        return out

    monkeypatch.setattr(openapi, "read_document", counting)
    return calls


def test_second_build_comes_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_parses(monkeypatch)
    cfg = config(tmp_path, [openapi_source("api", "api.yaml")])
    _spec(tmp_path)
    first = build_collection(cfg)
    second = build_collection(cfg)
    assert (first.cached, second.cached) == (False, True)
    assert calls == ["api"]  # parsed once
    assert second.collection == first.collection and second.collection.digest == first.collection.digest
    assert first.artifact_path is not None and first.artifact_path == second.artifact_path
    assert first.artifact_path.parent == tmp_path / ".qlab" / "cache"


def test_changed_sources_and_dependencies_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_parses(monkeypatch)
    cfg = config(tmp_path, [openapi_source("api", "api.yaml")])
    _spec(tmp_path)
    digest = build_collection(cfg).collection.digest
    _spec(tmp_path, summary="List all pets")  # the root document changed
    changed = build_collection(cfg)
    assert not changed.cached and changed.collection.digest != digest
    (tmp_path / "common" / "pet.yaml").write_text("Pet: {type: object, properties: {id: {type: string}}}\n")
    external = build_collection(cfg)  # only a file it refers to changed
    assert not external.cached
    assert external.collection.tools[0].responses["200"]["properties"]["id"] == {"type": "string"}
    assert len(calls) == 3


def test_no_cache_and_corrupt_cache(tmp_path: Path) -> None:
    cfg = config(tmp_path, [openapi_source("api", "api.yaml")])
    _spec(tmp_path)
    off = build_collection(cfg, use_cache=False)
    assert off.artifact_path is None and not (tmp_path / ".qlab" / "cache").exists()
    stored = build_collection(cfg).artifact_path
    assert stored is not None
    stored.write_text("{truncated", encoding="utf-8")
    rebuilt = build_collection(cfg)
    assert not rebuilt.cached and rebuilt.collection.digest == off.collection.digest


def test_cache_key_includes_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from qlab.collection import cache

    key = cache.cache_key(["a"])
    monkeypatch.setattr(cache, "code_digest", lambda: "other")
    assert cache.cache_key(["a"]) != key

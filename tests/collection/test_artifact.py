"""The collection artifact: canonical, deterministic, digested, valid against its schema, round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from qlab.collection import artifact
from qlab.collection.builder import build_collection
from qlab.collection.openapi import load_tools
from qlab.collection.refs import MergedSchema, NamedSchema
from qlab.contracts.errors import InputError

from .helpers import DEMO_SPEC, ROOT, config, openapi, swagger

SCHEMA = json.loads((ROOT / "schemas" / "collection.schema.json").read_text(encoding="utf-8"))


def _demo_text(tmp_path: Path) -> str:
    out = build_collection(config(tmp_path, [openapi("demo", DEMO_SPEC)]), use_cache=False)
    return artifact.to_json(out.collection)


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    assert _demo_text(tmp_path / "a") == _demo_text(tmp_path / "b")


def test_artifact_is_canonical_and_valid(tmp_path: Path) -> None:
    text = _demo_text(tmp_path)
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert list(jsonschema.Draft7Validator(SCHEMA).iter_errors(data)) == []
    assert data["schemas"]["demo:components.schemas.Delivery"]["required"] == [
        "deliveryId",
        "memberNo",
        "status",
    ]


def test_schema_has_a_description_on_every_property() -> None:
    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name, sub in (node.get("properties") or {}).items():
                assert "description" in sub or "$ref" in sub, f"{where}.{name} has no description"
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    walk(SCHEMA, "$")
    assert SCHEMA["$id"] == "https://qlab.dev/schemas/collection.schema.json"


def test_digest_covers_the_content(tmp_path: Path) -> None:
    text = _demo_text(tmp_path)
    data = json.loads(text)
    assert data["digest"].startswith("sha256:") and len(data["digest"]) == 71
    tampered = text.replace("Get member delivery detail", "Get member delivery details")
    with pytest.raises(InputError, match="digest does not match the content"):
        artifact.from_json(tampered)
    assert artifact.from_json(tampered, verify=False).tool("getMemberDeliveryDetail") is not None


def test_round_trip_restores_shared_schemas(tmp_path: Path) -> None:
    built = build_collection(config(tmp_path, [openapi("demo", DEMO_SPEC)]), use_cache=False).collection
    loaded = artifact.from_json(artifact.to_json(built))
    assert loaded == built
    detail = loaded.tool("getMemberDeliveryDetail")
    track = loaded.tool("trackDelivery")
    assert detail is not None and track is not None
    delivery_id = detail.parameter("deliveryId")
    assert delivery_id is not None and delivery_id.description == "Delivery identifier, e.g. D-5001"
    shared = detail.responses["404"]
    assert isinstance(shared, NamedSchema) and shared is track.responses["404"]
    assert artifact.to_json(loaded) == artifact.to_json(built)


def test_ref_siblings_are_stored_as_overrides(tmp_path: Path) -> None:
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/A", "description": "override"}}}}}}}},
        "components": {"schemas": {"A": {"type": "object", "description": "base"}}},
    }  # fmt: skip
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tools = tuple(load_tools(str(path)))
    _collection, text = artifact.finalize(tools, (), ())
    stored = json.loads(text)["tools"][0]["responses"]["200"]
    assert stored == {"$ref": "#/schemas/openapi:components.schemas.A", "description": "override"}
    back = artifact.from_json(text).tools[0].responses["200"]
    assert isinstance(back, MergedSchema) and back == {"type": "object", "description": "override"}


def test_not_an_artifact() -> None:
    with pytest.raises(InputError, match="not a collection artifact"):
        artifact.from_json("{nope", origin="x.json")
    with pytest.raises(InputError, match="not a qlab collection artifact of format 1"):
        artifact.from_json('{"format": 9}', origin="x.json")


def test_kubernetes_artifact_is_deterministic(shared_data: Path, tmp_path: Path) -> None:
    spec = shared_data / "openapi-specs" / "kubernetes" / "swagger.json"
    cfg = config(tmp_path, [swagger("k8s", spec)])
    first = build_collection(cfg, use_cache=False).collection
    second = build_collection(cfg, use_cache=False).collection
    assert first.digest == second.digest
    assert artifact.to_json(first) == artifact.to_json(second)

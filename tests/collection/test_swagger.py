"""Swagger 2.0 specifics: body and formData parameters, consumes, parameter-level types, definitions,
securityDefinitions, basePath; and the real Kubernetes spec (1,123 operations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qlab.collection import documents
from qlab.collection.model import MutationClass
from qlab.collection.openapi import load_tools, read_document

from .helpers import write_json


def _swagger(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": paths, **extra}


def test_kubernetes_has_1123_operations(shared_data: Path) -> None:
    tools = load_tools(str(shared_data / "openapi-specs" / "kubernetes" / "swagger.json"), source_name="k8s")
    assert len(tools) == 1123
    assert len({t.id for t in tools}) == 1123
    assert {t.kind for t in tools} == {"swagger"}
    by_id = {t.id: t for t in tools}
    read = by_id["readCoreV1NamespacedPod"]
    assert (read.method, read.path, read.family) == (
        "GET",
        "/api/v1/namespaces/{namespace}/pods/{name}",
        "core_v1",
    )
    assert {p.name for p in read.required_parameters} == {"name", "namespace"}
    assert read.responses["200"]["description"].startswith("Pod is a collection of containers")
    create = by_id["createCoreV1NamespacedPod"]
    assert {p.name for p in create.parameters if p.location == "body"} == {
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "status",
    }
    assert create.request_content_type is not None and create.request_body is not None
    assert by_id["deleteCoreV1NamespacedPod"].mutation is MutationClass.DESTRUCTIVE
    verbs = {t.id[: len(v)] for t in tools for v in ("list", "watch", "read") if t.id.startswith(v)}
    assert verbs == {"list", "watch", "read"}
    assert all(t.security == ({"BearerToken": ()},) for t in tools)


def test_body_form_data_consumes_and_parameter_types(tmp_path: Path) -> None:
    doc = _swagger(
        {
            "/pets": {
                "post": {
                    "operationId": "addPet",
                    "consumes": ["application/xml", "application/json"],
                    "parameters": [
                        {
                            "in": "body",
                            "name": "pet",
                            "required": True,
                            "schema": {"$ref": "#/definitions/Pet"},
                        }
                    ],
                    "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}},
                },
                "get": {
                    "operationId": "findPets",
                    "parameters": [
                        {
                            "in": "query",
                            "name": "tags",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "csv",
                            "description": "Tags",
                            "x-example": "a,b",
                        },
                        {"in": "query", "name": "limit", "type": "integer", "format": "int32", "default": 10},
                    ],
                    "responses": {"200": {"description": "ok"}},
                },
            },
            "/pets/{petId}/photo": {
                "post": {
                    "operationId": "uploadPhoto",
                    "parameters": [
                        {"in": "path", "name": "petId", "required": True, "type": "integer"},
                        {"in": "formData", "name": "file", "type": "file", "required": True},
                        {"in": "formData", "name": "caption", "type": "string"},
                    ],
                    "responses": {"201": {"description": "created"}},
                }
            },
        },
        definitions={
            "Pet": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "example": "Rex"}},
            }
        },
        securityDefinitions={
            "basic": {"type": "basic"},
            "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            "oauth": {"type": "oauth2", "flow": "application", "tokenUrl": "https://x/token", "scopes": {}},
        },
        host="api.example.com",
        basePath="/v2",
        schemes=["https"],
    )
    path = write_json(tmp_path / "swagger.json", doc)
    tools = {t.id: t for t in load_tools(str(path))}
    add = tools["addPet"]
    assert [(p.name, p.location, p.required) for p in add.parameters] == [("name", "body", True)]
    assert add.request_content_type == "application/json" and add.examples == {"name": "Rex"}
    assert add.responses["200"]["required"] == ["name"]
    find = tools["findPets"]
    assert find.parameter("tags") is not None and find.parameter("tags").schema == {  # type: ignore[union-attr]
        "type": "array",
        "items": {"type": "string"},
    }
    assert find.examples == {"tags": "a,b"}
    assert find.parameter("limit").schema["default"] == 10  # type: ignore[union-attr]
    upload = tools["uploadPhoto"]
    assert [(p.name, p.location, p.required) for p in upload.parameters] == [
        ("petId", "path", True),
        ("file", "body", True),
        ("caption", "body", False),
    ]
    assert upload.request_content_type == "multipart/form-data"
    assert upload.request_body == {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}, "caption": {"type": "string"}},
        "required": ["file"],
    }
    info = read_document(documents.load(str(path)), source_name="s").info
    assert info["dialect"] == "swagger-2.0" and info["base_path"] == "/v2"
    assert info["servers"] == ["https://api.example.com/v2"]
    assert info["security_schemes"] == {
        "basic": {"type": "http", "scheme": "basic"},
        "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        "oauth": {"type": "oauth2", "flows": ["application"]},
    }


def test_form_urlencoded_without_files(tmp_path: Path) -> None:
    doc = _swagger(
        {
            "/login": {
                "post": {
                    "parameters": [{"in": "formData", "name": "user", "type": "string", "required": True}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        }
    )
    (tool,) = load_tools(str(write_json(tmp_path / "s.json", doc)))
    assert tool.id == "post_login" and tool.request_content_type == "application/x-www-form-urlencoded"


def test_the_media_types_each_response_documents(tmp_path: Path) -> None:
    """Swagger 2.0: a response with a ``schema`` has the operation's ``produces`` (else the global one); one
    without documents no body."""
    spec = {
        "swagger": "2.0", "info": {"title": "t", "version": "1"}, "produces": ["application/json"],
        "paths": {"/pets": {
            "get": {"operationId": "list", "produces": ["application/xml", "application/json"],
                    "responses": {"200": {"description": "ok", "schema": {"type": "array"}},
                                  "404": {"description": "none"}}},
            "post": {"operationId": "add", "responses": {"201": {"description": "made", "schema": {}}}},
        }},
    }  # fmt: skip
    tools = {t.id: t for t in load_tools(str(write_json(tmp_path / "s.json", spec)))}
    assert tools["list"].response_media == {"200": ("application/xml", "application/json"), "404": ()}
    assert tools["add"].response_media == {"201": ("application/json",)}

"""OpenAPI 3.x documents → Tools, against real specs (demo, Petstore 3, Spotify, TMDB) and broken fixtures whose
messages are checked as exact text (``fixtures/broken/<name>.err``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.model import MutationClass
from qlab.collection.openapi import load_tools
from qlab.contracts.errors import SpecError

from .helpers import DEMO_SPEC, FIXTURES, get_op, spec, write_json

BROKEN = FIXTURES / "broken"


def _broken() -> list[Path]:
    return sorted(p for p in BROKEN.iterdir() if p.is_file() and p.suffix in (".yaml", ".json"))


def test_every_broken_fixture_has_its_expected_message() -> None:
    assert len(_broken()) >= 15
    assert all(p.with_suffix(".err").is_file() for p in _broken())


@pytest.mark.parametrize("path", _broken(), ids=lambda p: p.name)
def test_broken_spec_says_where_and_what(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    with pytest.raises(SpecError) as caught:
        load_tools(path.name)
    assert str(caught.value) == path.with_suffix(".err").read_text(encoding="utf-8").strip()
    assert caught.value.exit_code == 2


def test_url_that_does_not_answer_is_a_spec_error() -> None:
    from servers import free_port

    url = f"http://127.0.0.1:{free_port()}/openapi.json"  # nothing listens there
    with pytest.raises(SpecError, match=r"could not fetch the spec \(ConnectError"):
        load_tools(url)


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        load_tools(str(tmp_path / "nope.yaml"))


def test_demo_spec_tools() -> None:
    tools = {t.id: t for t in load_tools(str(DEMO_SPEC), source_name="demo")}
    assert len(tools) == 15
    detail = tools["getMemberDeliveryDetail"]
    assert (detail.method, detail.path, detail.family, detail.kind) == (
        "GET",
        "/members/{memberNo}/deliveries/{deliveryId}",
        "deliveries",
        "openapi",
    )
    assert [(p.name, p.location, p.required) for p in detail.parameters] == [
        ("memberNo", "path", True),
        ("deliveryId", "path", True),
    ]
    assert detail.parameters[1].description == "Delivery identifier, e.g. D-5001"
    assert detail.summary == "Get member delivery detail"
    assert set(detail.responses) == {"200", "404"}
    assert detail.responses["200"]["properties"]["data"]["allOf"][0]["required"] == [
        "deliveryId",
        "memberNo",
        "status",
    ]
    assert detail.security == () and detail.mutation is MutationClass.READ_ONLY and detail.idempotent is True


def test_request_body_properties_are_flattened_and_security_is_per_operation() -> None:
    tools = {t.id: t for t in load_tools(str(DEMO_SPEC))}
    create = tools["createOrder"]
    assert [(p.name, p.location, p.required) for p in create.parameters] == [
        ("memberNo", "body", True),
        ("items", "body", True),
        ("address", "body", False),
    ]
    assert create.request_content_type == "application/json"
    assert create.request_body is not None and create.request_body["required"] == ["memberNo", "items"]
    assert create.security == ({"bearerAuth": ()},)
    assert create.mutation is MutationClass.MUTATING and create.idempotent is False
    assert tools["cancelOrder"].mutation is MutationClass.DESTRUCTIVE
    assert tools["updateOrder"].mutation is MutationClass.MUTATING


def test_petstore3(shared_data: Path) -> None:
    tools = load_tools(str(shared_data / "openapi-specs" / "petstore3" / "openapi.yaml"))
    assert len(tools) == 19
    by_id = {t.id: t for t in tools}
    assert len(by_id) == 19 and all(t.summary and t.tags for t in tools)
    add = by_id["addPet"]
    assert add.method == "POST" and add.family == "pet"
    assert {p.name for p in add.parameters} >= {"name", "photoUrls", "id", "status"}
    assert {p.name for p in add.parameters if p.required} == {"name", "photoUrls"}
    assert add.examples["name"] == "doggie"  # from the Pet schema's property example
    assert add.security == ({"petstore_auth": ("write:pets", "read:pets")},)
    assert by_id["getInventory"].security == ({"api_key": ()},)
    upload = by_id["uploadFile"]
    assert upload.request_content_type == "application/octet-stream"
    assert [p.name for p in upload.parameters if p.location == "body"] == ["body"]
    assert by_id["deletePet"].mutation is MutationClass.DESTRUCTIVE


def test_restbench_specs(shared_data: Path) -> None:
    spotify = load_tools(str(shared_data / "restbench" / "specs" / "spotify_oas.json"))
    tmdb = load_tools(str(shared_data / "restbench" / "specs" / "tmdb_oas.json"))
    assert (len(spotify), len(tmdb)) == (40, 54)
    assert all(t.summary for t in spotify + tmdb)
    keywords = next(t for t in tmdb if t.id == "GET_movie-movie_id-keywords")
    assert keywords.family == "movie"  # no tags: the first path segment
    assert [p.name for p in keywords.parameters if p.location == "path"] == ["movie_id"]  # path-item level
    album = next(t for t in spotify if t.path == "/albums/{id}")
    assert album.id == "get-an-album" and album.family == "Albums"


def test_derived_ids_are_stable_and_named_after_the_operation(tmp_path: Path) -> None:
    doc = spec(
        {
            "/pets/{petId}": {
                "get": {"responses": {"200": {"description": "ok"}}},
                "delete": {"responses": {"204": {"description": "gone"}}},
            }
        }
    )
    path = write_json(tmp_path / "api.json", doc)
    first = load_tools(str(path))
    second = load_tools(str(path))
    assert [t.id for t in first] == [t.id for t in second] == ["get_pets_petId", "delete_pets_petId"]
    assert first[0].name == "GET /pets/{petId}"
    assert (
        first[0].parameters[0].name == "petId" and first[0].parameters[0].required
    )  # undeclared, still needed


def test_global_security_is_overridden_by_the_operation(tmp_path: Path) -> None:
    doc = spec(
        {
            "/a": {
                "get": get_op("a"),
                "post": get_op("b", security=[]),
                "put": get_op("c", security=[{}, {"k": []}]),
            }
        },
        security=[{"k": []}],
        components={"securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Key"}}},
    )
    tools = {t.id: t for t in load_tools(str(write_json(tmp_path / "api.json", doc)))}
    assert tools["a"].security == ({"k": ()},)
    assert tools["b"].security == ()
    assert tools["c"].security == ({}, {"k": ()})


def test_aliases_examples_and_parameter_override(tmp_path: Path) -> None:
    doc = spec(
        {
            "/items/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                ],
                "get": {
                    "operationId": "getItem",
                    "x-qlab-aliases": ["fetch item", "item lookup", "fetch item"],
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "description": "Item id",
                            "example": "I-1",
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "lang",
                            "in": "query",
                            "examples": {"fr": {"value": "fr"}},
                            "schema": {"type": "string"},
                        },
                        {"name": "page", "in": "query", "schema": {"type": "integer", "example": 2}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                },
            }
        }
    )
    (tool,) = load_tools(str(write_json(tmp_path / "api.json", doc)))
    assert [(p.name, p.description) for p in tool.parameters] == [
        ("id", "Item id"),
        ("verbose", ""),
        ("lang", ""),
        ("page", ""),
    ]
    assert tool.aliases == ("fetch item", "item lookup")
    assert dict(tool.examples) == {"id": "I-1", "lang": "fr", "page": 2}


def test_openapi_31_type_arrays_and_ref_siblings(tmp_path: Path) -> None:
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "webhooks": {"ping": {"post": {"responses": {"200": {"description": "ok"}}}}},
        "paths": {
            "/users": {
                "post": {
                    "operationId": "createUser",
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}
                    },
                    "responses": {
                        "201": {
                            "description": "created",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "$ref": "#/components/schemas/User",
                                        "description": "The new user",
                                    }
                                }
                            },
                        }
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "User": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "nick": {"type": ["string", "null"]}},
                }
            }
        },
    }
    (tool,) = load_tools(str(write_json(tmp_path / "api.json", doc)))
    assert [(p.name, p.required) for p in tool.parameters] == [("name", True), ("nick", False)]
    assert tool.responses["201"]["description"] == "The new user"
    assert tool.responses["201"]["required"] == ["name"]


def test_httpbin_live_swagger_spec(httpbin_url: str) -> None:
    tools = load_tools(f"{httpbin_url}/spec.json", source_name="httpbin")
    assert len(tools) >= 70 and {t.kind for t in tools} == {"swagger"}
    by_name = {t.name: t for t in tools}
    status = by_name["GET /status/{codes}"]
    assert status.id == "get_status_codes" and status.parameter("codes") is not None
    assert by_name["DELETE /delete"].mutation is MutationClass.DESTRUCTIVE
    assert len({t.id for t in tools}) == len(tools)

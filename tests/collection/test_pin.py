"""Pinning a spec into a new project: what is copied, and the servers and schemes read from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.pin import pin_spec, schemes_of, servers_of
from qlab.contracts.errors import SpecError

SPEC = """openapi: 3.0.3
info: {title: Pets, version: '2'}
servers:
  - url: https://{region}.pets.example/v1
    variables: {region: {default: eu}}
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: 'schemas/pet.yaml'}}}
"""


def test_a_spec_and_the_files_it_refs_beside_it_are_copied(tmp_path: Path) -> None:
    (tmp_path / "api" / "schemas").mkdir(parents=True)
    (tmp_path / "api" / "openapi.yaml").write_text(SPEC)
    (tmp_path / "api" / "schemas" / "pet.yaml").write_text("type: object\n")
    pinned = pin_spec(str(tmp_path / "api" / "openapi.yaml"))
    assert pinned.pinned and pinned.source == "specs/openapi.yaml" and pinned.kind == "openapi"
    assert set(pinned.files) == {"specs/openapi.yaml", "specs/schemas/pet.yaml"}
    assert pinned.files["specs/schemas/pet.yaml"] == b"type: object\n"
    assert pinned.servers == ("https://eu.pets.example/v1",)
    assert (pinned.title, pinned.api_version, [t.id for t in pinned.tools]) == ("Pets", "2", ["listPets"])


@pytest.mark.parametrize(
    ("data", "kind", "uri", "expected"),
    [
        ({"servers": [{"url": "/api/v3"}]}, "openapi", "http://127.0.0.1:9/spec.json", ["http://127.0.0.1:9/api/v3"]),
        ({"servers": [{"url": "/api/v3"}]}, "openapi", "file:///x/spec.json", []),
        ({}, "openapi", "http://127.0.0.1:9/docs/spec.json", ["http://127.0.0.1:9"]),
        ({"host": "httpbin.org", "basePath": "/", "schemes": ["https", "http"]}, "swagger", "file:///s.json",
         ["https://httpbin.org", "http://httpbin.org"]),
        ({"basePath": "/v2"}, "swagger", "http://127.0.0.1:9/spec.json", ["http://127.0.0.1:9/v2"]),
        ({"servers": [{"url": "https://{x}.a/{y}", "variables": {"x": {"default": "eu"}}}]}, "openapi", "",
         ["https://eu.a/{y}"]),
    ],
)  # fmt: skip
def test_servers(data: dict[str, object], kind: str, uri: str, expected: list[str]) -> None:
    assert servers_of(data, kind=kind, spec_uri=uri) == expected


def test_schemes_of_openapi_and_swagger() -> None:
    openapi = {
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "Bearer"},
                "cc": {
                    "type": "oauth2",
                    "flows": {"clientCredentials": {"tokenUrl": "https://a/t", "scopes": {"r": ""}}},
                },
                "implicit": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://a/a"}}},
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://a/.well-known"},
                "key": {"type": "apiKey", "in": "query", "name": "k"},
                "digest": {"type": "http", "scheme": "digest"},
            }
        }
    }
    found = {s.name: s for s in schemes_of(openapi, kind="openapi")}
    assert [found[n].kind for n in found] == [
        "bearer",
        "client_credentials",
        "bearer",
        "bearer",
        "api_key",
        "unsupported",
    ]
    assert (found["cc"].token_url, found["cc"].scopes) == ("https://a/t", ("r",))
    assert (found["key"].where, found["key"].key, found["digest"].detail) == ("query", "k", "http digest")
    swagger = {"securityDefinitions": {"b": {"type": "basic"}, "app": {"type": "oauth2", "flow": "application",
                                                                         "tokenUrl": "https://a/t"}}}  # fmt: skip
    assert [(s.name, s.kind) for s in schemes_of(swagger, kind="swagger")] == [
        ("b", "basic"),
        ("app", "client_credentials"),
    ]


def test_a_broken_spec_is_a_located_spec_error(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("openapi: 3.0.3\npaths: [\n")
    with pytest.raises(SpecError, match=r"bad.yaml:"):
        pin_spec(str(tmp_path / "bad.yaml"))

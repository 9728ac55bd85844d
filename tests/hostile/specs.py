"""Hostile specs: OpenAPI documents that try to make qlab read what it must not, or fetch without end.

``SPECS`` maps a name to a builder: given the hostile server's base URL, it returns the files of the spec
(``openapi.json`` first, then any file it refers to), each a JSON-able dict or raw bytes. The server serves
them under ``/spec/<name>/<file>``; ``write_local`` writes them into a folder for the local-file attacks.
Adding a spec is one function with ``@spec("name")``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Files = Mapping[str, Any]
SPECS: dict[str, Callable[[str], Files]] = {}


def spec(name: str) -> Callable[[Callable[[str], Files]], Callable[[str], Files]]:
    def register(builder: Callable[[str], Files]) -> Callable[[str], Files]:
        if name in SPECS:
            raise ValueError(f"spec {name!r} is already registered")
        SPECS[name] = builder
        return builder

    return register


def api(schema: Mapping[str, Any] | None = None, *, title: str = "hostile") -> dict[str, Any]:
    """A one-operation OpenAPI 3.0 document whose 200 answer has ``schema``."""
    return {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "paths": {
            "/items": {
                "get": {
                    "operationId": "listItems",
                    "summary": "List the items",
                    "responses": {
                        "200": {
                            "description": "the items",
                            "content": {"application/json": {"schema": dict(schema or {"type": "object"})}},
                        }
                    },
                }
            }
        },
    }


def ref(target: str) -> dict[str, Any]:
    return api({"$ref": target})


@spec("valid")
def _valid(base: str) -> Files:
    return {"openapi.json": api()}


@spec("file-ref")
def _file_ref(base: str) -> Files:
    """A remote spec that reads a local file."""
    return {"openapi.json": ref("file:///etc/passwd#/x")}


@spec("relative-ref")
def _relative_ref(base: str) -> Files:
    """A remote spec whose ``$ref`` reads a second document beside it (a remote ref)."""
    return {"openapi.json": ref("common.json#/Item"), "common.json": {"Item": {"type": "object"}}}


@spec("bomb-ref")
def _bomb_ref(base: str) -> Files:
    """A ``$ref`` to a gzip bomb."""
    return {"openapi.json": ref(f"{base}/gzip-bomb/2048#/x")}


@spec("hang-ref")
def _hang_ref(base: str) -> Files:
    """A ``$ref`` to a document that never comes."""
    return {"openapi.json": ref(f"{base}/hang/common.json#/x")}


def _refs_to(targets: list[str]) -> dict[str, Any]:
    return api(
        {"type": "object", "properties": {f"p{i}": {"$ref": target} for i, target in enumerate(targets)}}
    )


@spec("many-refs")
def _many_refs(base: str) -> Files:
    """Ten ``$ref``s to ten documents of 10 MiB each: every one within the spec's cap, 100 MiB together."""
    return {"openapi.json": _refs_to([f"{base}/schema-doc/10/0/{i}.json#/x" for i in range(10)])}


@spec("slow-refs")
def _slow_refs(base: str) -> Files:
    """Ten ``$ref``s to documents that each take 1.5 s to come: every one within the spec's deadline."""
    return {"openapi.json": _refs_to([f"{base}/schema-doc/0.001/1.5/{i}.json#/x" for i in range(10)])}


def write_local(folder: Path, files: Files) -> Path:
    """Write ``files`` into ``folder``; returns the path of ``openapi.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return folder / "openapi.json"


@spec("invalid")
def _invalid(base: str) -> Files:
    """Not a spec at all: YAML that is no OpenAPI document."""
    return {"openapi.json": b"paths: [1, 2\n"}

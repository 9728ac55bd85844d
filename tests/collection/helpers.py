"""Builders shared by the collection tests: a Config around some sources, tools, specs written to tmp_path."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.collection.model import MutationClass, Parameter, Tool
from qlab.project.model import (
    AuthProfile,
    CollectionConfig,
    Config,
    EngineConfig,
    Gate,
    Source,
    StopCondition,
)

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
FIXTURES = Path(__file__).parent / "fixtures"


def config(
    folder: Path,
    sources: Sequence[Source],
    *,
    aliases: str | None = None,
    auth: str | None = None,
    profiles: Mapping[str, AuthProfile] | None = None,
    gates: Sequence[Gate] = (),
    cache_dir: str = ".qlab/cache",
) -> Config:
    """A Config whose qlab.yaml would live in ``folder`` (nothing is written)."""
    return Config(
        version=1,
        project="test",
        path=str(folder / "qlab.yaml"),
        collection=CollectionConfig(
            sources=tuple(sources), aliases_file=aliases, auth_profile=auth, cache_dir=cache_dir
        ),
        engine=EngineConfig(),
        environments={},
        auth_profiles=dict(profiles or {}),
        suites={},
        gates=tuple(gates),
    )


def build_gate(threshold: float) -> Gate:
    return Gate(name="build", stage="build", stop_if=(StopCondition("schema_coverage_below", threshold),))


def openapi(name: str, location: str | Path) -> Source:
    return Source(name=name, kind="openapi", location=str(location))


def swagger(name: str, location: str | Path) -> Source:
    return Source(name=name, kind="swagger", location=str(location))


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def spec(paths: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal OpenAPI 3.0 document around ``paths``."""
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": dict(paths), **extra}


def get_op(op_id: str, schema: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok"}
    if schema is not None:
        response["content"] = {"application/json": {"schema": dict(schema)}}
    return {"operationId": op_id, "responses": {"200": response}, **extra}


def tool(
    tool_id: str,
    *,
    params: Sequence[Parameter] = (),
    responses: Mapping[str, Mapping[str, Any]] | None = None,
    path: str | None = None,
    method: str | None = "GET",
    family: str = "f",
    mutation: MutationClass = MutationClass.READ_ONLY,
    **extra: Any,
) -> Tool:
    return Tool(
        id=tool_id,
        name=tool_id,
        family=family,
        source="s",
        kind="openapi",
        method=method,
        path=path or f"/{tool_id}",
        parameters=tuple(params),
        responses=dict(responses or {}),
        mutation=mutation,
        **extra,
    )

"""The source kinds: literal, keyed by Source.kind, the same as the config schema's, unknown kinds explained."""

from __future__ import annotations

from pathlib import Path
from typing import get_args, get_type_hints

import pytest

from qlab.collection import sources
from qlab.collection.mcp import SOURCE as MCP
from qlab.collection.openapi import SOURCE as OPENAPI
from qlab.collection.python_source import SOURCE as PYTHON
from qlab.collection.sources import get_source
from qlab.contracts.errors import SpecError
from qlab.contracts.resources import load_schema
from qlab.project.model import Origin, Source


def test_every_kind_of_the_config_model_has_a_source() -> None:
    assert sources.get_source("openapi") is OPENAPI
    assert sources.get_source("swagger") is OPENAPI
    assert sources.get_source("mcp") is MCP
    assert sources.get_source("python") is PYTHON


def test_the_config_schema_and_model_name_exactly_these_kinds() -> None:
    source = load_schema("config")["definitions"]["source"]
    reading = {"name", "remote_refs", "headers_env"}  # how any source is named and read, not a kind
    assert [k for k in source["properties"] if k not in reading] == list(sources.SOURCES)
    assert [branch["required"] for branch in source["oneOf"]] == [[kind] for kind in sources.SOURCES]
    assert list(get_args(get_type_hints(Source)["kind"])) == list(sources.SOURCES)
    for definition in ("source", "tool"):
        kinds = load_schema("collection")["definitions"][definition]["properties"]["kind"]["enum"]
        assert kinds == list(sources.SOURCES), definition


def test_unknown_kind_suggests_a_known_one() -> None:
    with pytest.raises(
        SpecError, match=r"unknown collection source kind 'opnapi' .*Did you mean 'openapi'\?"
    ):
        sources.get_source("opnapi")


@pytest.mark.parametrize(("declared", "version", "meant"), [("openapi", 'swagger: "2.0"', "swagger"),
                                                             ("swagger", "openapi: 3.0.3", "openapi")])  # fmt: skip
def test_a_document_declared_with_the_other_key_is_an_input_error(
    tmp_path: Path, declared: str, version: str, meant: str
) -> None:
    """A Swagger 2.0 file declared ``openapi:`` built "0 tools" and exited 1; now it says which key it meant."""
    spec = tmp_path / "api.yaml"
    spec.write_text(
        f"{version}\ninfo: {{title: t, version: '1'}}\npaths:\n  /a:\n    get:\n      responses: {{}}\n"
    )
    source = Source(name="api", kind=declared, location=str(spec), origin=Origin("qlab.yaml", 5, 7))  # type: ignore[arg-type]
    reader = get_source(declared)
    with pytest.raises(SpecError) as caught:
        reader.tools(reader.snapshot(source, base_dir=tmp_path))
    assert str(caught.value).startswith(f"qlab.yaml:5:7: source 'api' is declared `{declared}:` but ")
    assert str(caught.value).endswith(f"Did you mean `{meant}:`?")
    assert isinstance(caught.value, SpecError) and caught.value.exit_code == 2

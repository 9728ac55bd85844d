"""$ref resolution: external files (relative to the referring file), recursion cut by a marker, 100-level
nesting without RecursionError, literals and property names left alone, shared targets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qlab.collection import documents
from qlab.collection.openapi import load_tools, read_document
from qlab.collection.refs import (
    DEPTH_LIMIT_REF,
    MAX_NESTING,
    MAX_REF_DEPTH,
    RECURSIVE_REF,
    NamedSchema,
    Resolver,
)
from qlab.contracts.errors import SpecError

from .helpers import get_op, spec, write_json


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _external_project(tmp_path: Path) -> Path:
    _write(
        tmp_path / "api" / "root.yaml",
        """openapi: 3.0.3
info: {title: ext, version: '1'}
paths:
  /nodes/{nodeId}:
    get:
      operationId: getNode
      parameters:
        - $ref: 'common/params.yaml#/NodeId'
      responses:
        '200':
          description: the node
          content:
            application/json:
              schema: {$ref: 'common/schemas.yaml#/Node'}
""",
    )
    _write(
        tmp_path / "api" / "common" / "params.yaml",
        "NodeId: {name: nodeId, in: path, required: true, description: Node id, schema: {type: string}}\n",
    )
    _write(
        tmp_path / "api" / "common" / "schemas.yaml",
        """Node:
  type: object
  properties:
    id: {type: string}
    children: {type: array, items: {$ref: '#/Node'}}
    meta: {$ref: 'more/meta.yaml#/Meta'}
""",
    )
    _write(
        tmp_path / "api" / "common" / "more" / "meta.yaml",
        "Meta:\n  type: object\n  properties:\n    owner: {$ref: '../schemas.yaml#/Node'}\n    tag: {type: string}\n",
    )
    return tmp_path / "api" / "root.yaml"


def test_external_refs_resolve_relative_to_the_referring_file(tmp_path: Path) -> None:
    root = _external_project(tmp_path)
    found = read_document(documents.load(str(root)), source_name="ext")
    (tool,) = found.tools
    assert tool.parameters[0].name == "nodeId" and tool.parameters[0].description == "Node id"
    node = tool.responses["200"]
    assert isinstance(node, NamedSchema) and node.ref == "ext:common_schemas.yaml:Node"
    assert node["properties"]["children"]["items"] == {RECURSIVE_REF: "ext:common_schemas.yaml:Node"}
    meta = node["properties"]["meta"]
    assert meta["properties"]["tag"] == {"type": "string"}
    assert meta["properties"]["owner"] == {RECURSIVE_REF: "ext:common_schemas.yaml:Node"}
    assert sorted(Path(u).name for u in found.dependencies) == ["meta.yaml", "params.yaml", "schemas.yaml"]


def test_recursive_schema_is_cut_by_a_marker_and_serializes(tmp_path: Path) -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "parent": {"$ref": "#/components/schemas/Tree"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}},
        },
    }
    doc = spec(
        {"/tree": {"get": get_op("getTree", {"$ref": "#/components/schemas/Tree"})}},
        components={"schemas": {"Tree": tree}},
    )
    (tool,) = load_tools(str(write_json(tmp_path / "api.json", doc)))
    schema = tool.responses["200"]
    assert schema["properties"]["parent"] == {RECURSIVE_REF: "openapi:components.schemas.Tree"}
    json.dumps(schema)  # finite: no cycle in the object graph


def _chain(levels: int) -> dict[str, Any]:
    schemas = {
        f"L{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/L{i + 1}"}}}
        for i in range(levels)
    }
    schemas[f"L{levels}"] = {"type": "string", "description": "the bottom"}
    return spec(
        {"/deep": {"get": get_op("deep", {"$ref": "#/components/schemas/L0"})}},
        components={"schemas": schemas},
    )


def test_a_chain_of_100_refs_resolves_completely(tmp_path: Path) -> None:
    (tool,) = load_tools(str(write_json(tmp_path / "deep.json", _chain(100))))
    node: Any = tool.responses["200"]
    for _ in range(100):
        node = node["properties"]["next"]
    assert node == {"type": "string", "description": "the bottom"}


def test_a_chain_deeper_than_the_limit_ends_in_a_marker(tmp_path: Path) -> None:
    (tool,) = load_tools(str(write_json(tmp_path / "deeper.json", _chain(MAX_REF_DEPTH + 5))))
    node: Any = tool.responses["200"]
    for _ in range(MAX_REF_DEPTH):
        node = node["properties"]["next"]
    assert node == {DEPTH_LIMIT_REF: f"openapi:components.schemas.L{MAX_REF_DEPTH}"}


def test_100_levels_of_inline_nesting_in_yaml(tmp_path: Path) -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(100):
        schema = {"type": "object", "properties": {"child": schema}}
    doc = spec({"/nested": {"get": get_op("nested", schema)}})
    path = tmp_path / "nested.yaml"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")  # JSON is YAML: read by the YAML reader
    (tool,) = load_tools(str(path))
    node: Any = tool.responses["200"]
    for _ in range(100):
        node = node["properties"]["child"]
    assert node == {"type": "integer"}


def test_literals_and_property_names_are_not_refs(tmp_path: Path) -> None:
    literal = {"$ref": "#/not/a/ref"}
    doc = spec(
        {
            "/odd": {
                "get": get_op(
                    "odd",
                    {
                        "type": "object",
                        "example": literal,
                        "x-vendor": {"$ref": "#/also/not"},
                        "properties": {
                            "$ref": {"type": "string"},
                            "default": {"$ref": "#/components/schemas/Thing"},
                            "enum": {"type": "string", "enum": [{"$ref": "#/x"}]},
                        },
                    },
                )
            }
        },
        components={"schemas": {"Thing": {"type": "integer"}}},
    )
    (tool,) = load_tools(str(write_json(tmp_path / "odd.json", doc)))
    schema = tool.responses["200"]
    assert schema["example"] == literal and schema["x-vendor"] == {"$ref": "#/also/not"}
    assert schema["properties"]["$ref"] == {"type": "string"}
    assert schema["properties"]["default"] == {"type": "integer"}
    assert schema["properties"]["enum"]["enum"] == [{"$ref": "#/x"}]


def test_a_target_is_resolved_once_and_shared(tmp_path: Path) -> None:
    pet = {"$ref": "#/components/schemas/Pet"}
    doc = spec(
        {"/a": {"get": get_op("a", pet)}, "/b": {"get": get_op("b", {"type": "array", "items": pet})}},
        components={"schemas": {"Pet": {"type": "object", "properties": {"id": {"type": "integer"}}}}},
    )
    a, b = load_tools(str(write_json(tmp_path / "api.json", doc)))
    assert a.responses["200"] is b.responses["200"]["items"]


def test_resolver_reports_a_dangling_ref_at_its_place(tmp_path: Path) -> None:
    path = write_json(tmp_path / "x.json", {"a": {"b": {"$ref": "#/missing"}}})
    doc = documents.load(str(path))
    with pytest.raises(SpecError) as caught:
        Resolver(doc, source_name="x").resolve(doc.data)
    assert str(caught.value).endswith(
        "$.a.b['$ref']: $ref '#/missing' points to nothing: /missing does not exist in "
        f"{path}; fix the reference or add the target"
    )
    assert str(caught.value).startswith(f"{path}:1:")


def _nested_text(levels: int, leaf: str) -> str:
    """``levels`` nested object schemas as JSON text, written without recursion (json.dumps would hit the limit)."""
    return '{"type": "object", "properties": {"c": ' * levels + leaf + "}}" * levels


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        (200, f"nesting is deeper than {MAX_NESTING} levels; flatten the schema"),  # the resolver's limit
        (1000, "nesting is deeper than 1000 levels"),  # the YAML reader's, before any resolution
    ],
)
def test_nesting_beyond_the_limit_is_a_located_spec_error(tmp_path: Path, levels: int, message: str) -> None:
    schema = _nested_text(levels, '{"type": "integer"}')
    path = tmp_path / "deep.yaml"  # read by the YAML reader, which builds from events (no recursion)
    path.write_text(
        '{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/n": {"get": {"operationId": "n", '
        '"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": '
        + schema
        + "}}}}}}}}",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as caught:
        load_tools(str(path))
    assert str(caught.value).startswith(f"{path}:1:") and str(caught.value).endswith(message)


def test_deep_mcp_input_schema_is_refused_too(tmp_path: Path) -> None:
    from qlab.collection.mcp import SOURCE as MCP
    from qlab.project.model import Source

    schema = _nested_text(400, '{"type": "string"}')
    (tmp_path / "tools.json").write_text('{"tools": [{"name": "deep", "inputSchema": ' + schema + "}]}")
    source = Source(name="m", kind="mcp", location="tools.json")
    with pytest.raises(
        SpecError, match=r"\$\.tools\[0\]\.inputSchema\.properties\.c.*nesting is deeper than"
    ):
        MCP.tools(MCP.snapshot(source, base_dir=tmp_path))


def test_a_spec_without_a_ref_never_imports_the_reference_library(tmp_path: Path) -> None:
    """Rule: the ``referencing`` registry is made at the first ``$ref``; a spec without one is built without it
    (its import is ~20 ms of every small run's start), one with a ``$ref`` resolves it."""
    from fresh import run_fresh

    plain = write_json(
        tmp_path / "plain.json", spec({"/a": {"get": {"operationId": "getA", "responses": {}}}})
    )
    refs = spec({"/b": {"get": {"operationId": "getB", "parameters": [{"$ref": "#/components/parameters/Id"}],
                                "responses": {}}}})  # fmt: skip
    refs["components"] = {"parameters": {"Id": {"name": "id", "in": "query", "schema": {"type": "string"}}}}
    with_ref = write_json(tmp_path / "refs.json", refs)
    code = (
        "import sys\nfrom qlab.collection.openapi import load_tools\n"
        "tools = load_tools({path!r}, source_name='s')\n"
        "print([p.name for t in tools for p in t.parameters], 'referencing' in sys.modules)"
    )
    assert run_fresh(code.format(path=str(plain))).split() == ["[]", "False"]
    assert run_fresh(code.format(path=str(with_ref))).split() == ["['id']", "True"]

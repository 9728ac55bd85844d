"""build_collection with several sources: order, collisions, aliases, source entries, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qlab.collection import build_collection
from qlab.contracts.errors import SpecError
from qlab.project.model import Source

from .helpers import DEMO_SPEC, FIXTURES, config, openapi, swagger, write_json


def test_sources_in_order_with_collisions_and_aliases(tmp_path: Path) -> None:
    shutil.copy(DEMO_SPEC, tmp_path / "demo.yaml")
    write_json(tmp_path / "tools.json", {"tools": [
        {"name": "getMember", "description": "Member over MCP", "inputSchema": {"type": "object"}},
        {"name": "get_health", "description": "Health", "inputSchema": {"type": "object"}},
    ]})  # fmt: skip
    (tmp_path / "aliases.yaml").write_text("getMemberDeliveryDetail: [delivery status]\nnoSuchTool: [x]\n")
    cfg = config(
        tmp_path,
        [
            openapi("demo", "demo.yaml"),
            Source(name="mcp", kind="mcp", location="tools.json"),
            Source(name="py", kind="python", location="sample_tools:Store"),
        ],
        aliases="aliases.yaml",
    )
    shutil.copy(FIXTURES / "python" / "sample_tools.py", tmp_path / "sample_tools.py")
    out = build_collection(cfg, use_cache=False)
    ids = [t.id for t in out.collection.tools]
    assert ids[:15] == [t for t in ids[:15] if not t.startswith("mcp.")] and len(ids) == 15 + 2 + 3
    assert ids[15:] == ["mcp.getMember", "get_health", "Store.find_item", "Store.ping", "Store.open_store"]
    detail = out.collection.tool("getMemberDeliveryDetail")
    assert detail is not None and detail.aliases == ("delivery status",)
    sources = out.collection.sources
    assert [(s["name"], s["kind"], s["tools"]) for s in sources] == [("demo", "openapi", 15), ("mcp", "mcp", 2),
                                                                    ("py", "python", 3)]  # fmt: skip
    assert sources[0]["dialect"] == "openapi-3.0" and sources[0]["location"] == "demo.yaml"
    assert [c["kind"] for c in sources[1]["collisions"]] == ["between_sources", "similar_names"]
    assert [c["kind"] for c in out.readiness.collisions] == ["between_sources", "similar_names"]
    assert "name_collisions" in out.readiness.reasons
    assert out.readiness.warnings == ("aliases.yaml: aliases for unknown tool 'noSuchTool'.",)


def test_url_locations_are_recorded_without_credentials_or_query(httpbin_url: str, tmp_path: Path) -> None:
    host = httpbin_url.removeprefix("http://")
    location = f"http://user:secret@{host}/spec.json?api_key=abc"
    out = build_collection(config(tmp_path, [swagger("httpbin", location)]), use_cache=False)
    assert out.collection.sources[0]["location"] == f"{httpbin_url}/spec.json"
    assert "secret" not in json.dumps(out.collection.sources) and "abc" not in json.dumps(
        out.collection.sources
    )


def test_no_sources_and_broken_source(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"\$\.collection\.sources: no sources"):
        build_collection(config(tmp_path, []))
    shutil.copy(FIXTURES / "broken" / "dangling-ref.yaml", tmp_path / "api.yaml")
    with pytest.raises(SpecError) as caught:
        build_collection(config(tmp_path, [openapi("api", "api.yaml")]))
    assert str(caught.value).startswith(
        f"{tmp_path / 'api.yaml'}:13:23: $.paths['/pets'].get.responses['200']"
    )


def test_write_to_puts_the_artifact_there_from_a_build_or_the_cache(tmp_path: Path) -> None:
    from qlab.collection import artifact

    cfg = config(tmp_path, [openapi("demo", DEMO_SPEC)])
    target = tmp_path / "out" / "collection.json"
    built = build_collection(cfg, write_to=target)
    assert built.artifact_path == target and not built.cached
    expected = artifact.to_json(built.collection) + "\n"
    assert target.read_text(encoding="utf-8") == expected
    target.unlink()
    again = build_collection(cfg, write_to=target)
    assert again.cached and target.read_text(encoding="utf-8") == expected
    off = build_collection(cfg, use_cache=False, write_to=tmp_path / "other.json")
    assert (tmp_path / "other.json").read_text(
        encoding="utf-8"
    ) == expected and off.artifact_path == tmp_path / "other.json"

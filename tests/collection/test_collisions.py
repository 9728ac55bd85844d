"""Tool-id collisions: within a source, between sources, similar names."""

from __future__ import annotations

from qlab.collection.collisions import dedupe_within, merge_sources

from .helpers import tool


def test_repeated_id_within_a_source_gets_a_suffix() -> None:
    tools, records = dedupe_within([tool("a"), tool("a"), tool("a")], source="s")
    assert [t.id for t in tools] == ["a", "a_2", "a_3"]
    assert [r["renamed_to"] for r in records] == ["a_2", "a_3"]


def test_later_source_is_renamed_and_similar_names_are_reported() -> None:
    tools, records = merge_sources(
        [
            ("first", [tool("getPet"), tool("list")]),
            ("second", [tool("getPet"), tool("get_pet"), tool("other")]),
        ]
    )
    assert [t.id for t in tools] == ["getPet", "list", "second.getPet", "get_pet", "other"]
    assert records == [
        {"kind": "between_sources", "id": "getPet", "renamed_to": "second.getPet", "sources": ["first", "second"]},
        {"kind": "similar_names", "id": "get_pet", "renamed_to": None, "sources": ["first", "second"],
         "similar_to": "getPet"},
    ]  # fmt: skip
    # the renamed getPet is reported once, as a rename; get_pet only reads like getPet

"""The reviewed aliases file."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.aliases import apply_aliases, load_aliases, unknown_ids
from qlab.errors import SpecError

from .helpers import tool


def test_aliases_are_appended_without_duplicates(tmp_path: Path) -> None:
    (tmp_path / "aliases.yaml").write_text("getPet: [fetch pet, 'pet by id']\nlistPets: all pets\n")
    aliases = load_aliases("aliases.yaml", base_dir=tmp_path)
    assert aliases is not None and aliases.by_tool == {
        "getPet": ("fetch pet", "pet by id"),
        "listPets": ("all pets",),
    }
    tools = apply_aliases([tool("getPet", aliases=("fetch pet", "find pet")), tool("other")], aliases)
    assert tools[0].aliases == ("fetch pet", "find pet", "pet by id") and tools[1].aliases == ()
    assert unknown_ids(aliases, ["getPet", "listPet"]) == [
        "aliases.yaml: aliases for unknown tool 'listPets'. Did you mean 'listPet'?"
    ]


def test_no_file_and_bad_shapes(tmp_path: Path) -> None:
    assert load_aliases(None, base_dir=tmp_path) is None
    (tmp_path / "bad.yaml").write_text("getPet:\n  nested: map\n")
    with pytest.raises(SpecError, match=r"bad\.yaml:2:3: \$\.getPet: aliases must be a list of strings"):
        load_aliases("bad.yaml", base_dir=tmp_path)
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.raises(SpecError, match="maps tool ids to lists of aliases"):
        load_aliases("list.yaml", base_dir=tmp_path)

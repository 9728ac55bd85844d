"""The reviewed aliases file."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.aliases import apply_aliases, load_aliases, unknown_ids
from qlab.contracts.errors import SpecError

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


def test_a_vocabulary_section_extends_the_search_vocabulary(tmp_path: Path) -> None:
    (tmp_path / "aliases.yaml").write_text(
        "getPet: [fetch pet]\n"
        "vocabulary:\n"
        "  synonyms: [[Droplet, server, vm]]\n"
        "  verbs: {Archive: delete}\n"
        "  framing: ['I am trying to']\n"
    )
    aliases = load_aliases("aliases.yaml", base_dir=tmp_path)
    assert aliases is not None and aliases.by_tool == {"getPet": ("fetch pet",)}
    assert aliases.vocabulary == {
        "synonyms": [["droplet", "server", "vm"]],
        "verbs": {"archive": "delete"},
        "framing": ["i am trying to"],
    }
    assert unknown_ids(aliases, ["getPet"]) == []  # "vocabulary" is no tool id


def test_a_vocabulary_section_keeps_through_the_artifact_and_only_then_changes_the_digest() -> None:
    from qlab.collection import artifact

    tools = (tool("getPet"),)
    plain, _ = artifact.finalize(tools, (), ())
    extended, text = artifact.finalize(tools, (), (), {"verbs": {"archive": "delete"}})
    assert plain.digest == artifact.finalize(tools, (), (), {})[0].digest  # no section: the digest of before
    assert extended.digest != plain.digest
    assert artifact.from_json(text).vocabulary == {"verbs": {"archive": "delete"}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "vocabulary:\n  synonyms: [[one]]\n",
            r"aliases\.yaml:2:13: \$\.vocabulary\.synonyms: synonyms is a list of groups",
        ),
        (
            "vocabulary:\n  verbs: {archive: destroy}\n",
            r"\$\.vocabulary\.verbs: verbs maps a verb to its intent, one of read",
        ),
        ("vocabulary:\n  framing: [1]\n", r"\$\.vocabulary\.framing: framing is a list of phrases"),
        ("vocabulary:\n  synonym: []\n", r"\$\.vocabulary\.synonym: unknown key 'synonym'"),
    ],
)
def test_a_bad_vocabulary_section_is_located(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "aliases.yaml").write_text(body)
    with pytest.raises(SpecError, match=message):
        load_aliases("aliases.yaml", base_dir=tmp_path)

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlab.contracts.errors import ConfigError
from qlab.project.files import (
    GlobError,
    display_path,
    expand_glob,
    parse_document,
    project_relative,
    read_document,
)


def test_display_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "gates" / "a.yaml") == str(Path("gates") / "a.yaml")
    assert display_path(Path("gates/../x.yaml")) == "x.yaml"
    assert display_path(Path("/elsewhere/x.yaml")) == "/elsewhere/x.yaml"


def test_project_relative(tmp_path: Path) -> None:
    assert project_relative(tmp_path / "gates" / "a.yaml", tmp_path) == "gates/a.yaml"
    assert project_relative(Path("/elsewhere/x.yaml"), tmp_path) == "/elsewhere/x.yaml"


def test_expand_glob(tmp_path: Path) -> None:
    for name in ("a/1.yaml", "a/2.json", "a/deep/3.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    (tmp_path / "a" / "folder.yaml").mkdir()
    assert [p.relative_to(tmp_path).as_posix() for p in expand_glob(tmp_path, "a/*.yaml")] == ["a/1.yaml"]
    assert [p.relative_to(tmp_path).as_posix() for p in expand_glob(tmp_path, "a/**/*.yaml")] == [
        "a/1.yaml", "a/deep/3.yaml",
    ]  # fmt: skip


def test_parse_document_by_suffix() -> None:
    assert parse_document('{"a": 1}', "f.json", ".json").data == {"a": 1}
    assert parse_document('{"a": 1}\n{"a": 2}\n', "f.jsonl", ".JSONL").data == [{"a": 1}, {"a": 2}]
    assert parse_document("a: 1\n", "f.yml", ".yml").data == {"a": 1}
    assert parse_document("a: 1\n", "f.txt", ".txt").data == {"a": 1}  # anything else is read as YAML
    with pytest.raises(ConfigError):
        parse_document("a: 1\n", "f.json", ".json")


def test_read_document(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('[{"id": "x"}]')
    raw, doc = read_document(tmp_path / "c.json", display="c.json")
    assert raw == b'[{"id": "x"}]' and doc.locate((0, "id")) == (1, 9)


def test_recursive_globs_never_follow_folder_links_and_are_bounded(tmp_path: Path) -> None:
    """``**`` through a link to ``/`` (or a link loop) would walk the machine, ``/proc`` included: links to
    folders are not followed, hidden names need a leading dot, special files never match, and a glob that
    would look at too many entries is refused."""
    for name in ("a/1.yaml", "a/deep/2.yaml", "a/.hidden/3.yaml", "a/.4.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    (tmp_path / "a" / "root").symlink_to("/")
    (tmp_path / "a" / "deep" / "loop").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "file-link.yaml").symlink_to(tmp_path / "a" / "1.yaml")
    os.mkfifo(tmp_path / "a" / "pipe.yaml")
    found = [p.relative_to(tmp_path).as_posix() for p in expand_glob(tmp_path, "a/**/*.yaml")]
    assert found == ["a/1.yaml", "a/deep/2.yaml", "a/file-link.yaml"]
    assert [p.name for p in expand_glob(tmp_path, "a/.*.yaml")] == [".4.yaml"]
    assert expand_glob(tmp_path, "a/pipe.yaml") == []
    with pytest.raises(GlobError, match="looks at more than 5 files and folders"):
        expand_glob(tmp_path, "a/**/*.yaml", limit=5)

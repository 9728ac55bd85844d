from __future__ import annotations

from pathlib import Path

import pytest

from qlab.errors import ConfigError
from qlab.project.files import display_path, expand_glob, parse_document, project_relative, read_document


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

"""The init scaffold ships as package data: it must stay a faithful copy of the repository's demo project."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.contracts.errors import InputError
from qlab.contracts.resources import demo_asset
from qlab.project import scaffold

ROOT = Path(__file__).resolve().parents[2]
SCAFFOLD = ROOT / "runner" / "qlab" / "project" / "scaffold"


def test_scaffold_gates_are_a_copy_of_the_repository_gates() -> None:
    repo = {
        p.relative_to(ROOT / "gates").as_posix(): p.read_bytes()
        for p in (ROOT / "gates").rglob("*")
        if p.is_file()
    }
    copy = {p.relative_to(SCAFFOLD / "gates").as_posix(): p.read_bytes() for p in (SCAFFOLD / "gates").rglob("*")
            if p.is_file()}  # fmt: skip
    assert copy == repo, "gates/ changed: copy it to runner/qlab/project/scaffold/gates/ (cp -r gates/. ...)"


def test_scaffold_config_is_the_dogfood_config_pointing_at_its_own_spec() -> None:
    expected = (ROOT / "qlab.yaml").read_text().splitlines()[2:]
    actual = (SCAFFOLD / "qlab.yaml").read_text().splitlines()[2:]
    assert [
        line.replace("openapi: openapi.yaml", "openapi: runner/qlab/demo/openapi.yaml") for line in actual
    ] == expected


def test_demo_files() -> None:
    files = scaffold.demo_files()
    assert files["openapi.yaml"] == demo_asset("openapi.yaml")
    assert {"qlab.yaml", "gates/aliases.yaml", "schemas/qlab.schema.json", "schemas/case.schema.json"} <= set(
        files
    )
    assert files["schemas/case.schema.json"] == (ROOT / "schemas" / "case.schema.json").read_bytes()


def test_write_files_refuses_to_overwrite(tmp_path: Path) -> None:
    scaffold.write_files(tmp_path, {"a/b.txt": b"1"}, force=False)
    with pytest.raises(InputError, match=r"would overwrite a/b.txt; pass --force"):
        scaffold.write_files(tmp_path, {"a/b.txt": b"2", "c.txt": b"3"}, force=False)
    assert not (tmp_path / "c.txt").exists()  # nothing is written when anything would be overwritten
    scaffold.write_files(tmp_path, {"a/b.txt": b"2"}, force=True)
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"2"

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.contracts import resources
from qlab.contracts.errors import QlabError

ROOT = Path(__file__).resolve().parents[2]


def test_schema_names() -> None:
    assert resources.schema_file_name("config") == "qlab.schema.json"
    assert resources.schema_file_name("case") == "case.schema.json"
    assert resources.schema_file_name("engine-search") == "engine-search.schema.json"
    assert resources.schema_file_name("x.json") == "x.json"


def test_schemas_are_found_in_the_checkout() -> None:
    assert resources.schema_path("config") == ROOT / "schemas" / "qlab.schema.json"
    assert resources.load_schema("case")["$id"] == "https://qlab.dev/schemas/case.schema.json"


def test_the_package_copy_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "x.schema.json").write_text('{"a": 1}')
    monkeypatch.setattr(resources, "schema_dirs", lambda: (tmp_path / "pkg", ROOT / "schemas"))
    assert resources.schema_path("x") == tmp_path / "pkg" / "x.schema.json"


def test_missing_and_broken_schemas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "schema_dirs", lambda: (tmp_path,))
    with pytest.raises(QlabError, match="schema 'nope' is not available"):
        resources.schema_path("nope")
    (tmp_path / "bad.schema.json").write_text("[1]")
    with pytest.raises(QlabError, match="is not a JSON object"):
        resources.load_schema.__wrapped__("bad")


def test_demo_assets() -> None:
    assert resources.demo_asset("openapi.yaml") == (ROOT / "runner/qlab/demo/openapi.yaml").read_bytes()
    with pytest.raises(QlabError, match=r"demo asset 'nope\.yaml' is not part of"):
        resources.demo_asset("nope.yaml")


def test_package_files() -> None:
    files = resources.package_files("qlab.project", "scaffold")
    assert "qlab.yaml" in files and "gates/search_core/members.yaml" in files
    assert not any(name.endswith(".py") for name in files)
    assert resources.package_files("qlab.project", "no-such-folder") == {}

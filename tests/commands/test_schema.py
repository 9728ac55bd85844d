from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.cli import main
from qlab.contracts import resources

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


@pytest.mark.parametrize(("name", "file"), [("config", "qlab.schema.json"), ("case", "case.schema.json")])
def test_prints_the_schema_file(name: str, file: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["schema", name], capsys)
    assert (code, err) == (0, "")
    assert out == (ROOT / "schemas" / file).read_text()
    assert json.loads(out)["$id"] == f"https://qlab.dev/schemas/{file}"


def test_a_missing_schema_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setattr(resources, "schema_dirs", lambda: (tmp_path / "a", tmp_path / "b"))
    resources.load_schema.cache_clear()  # as in a fresh process: the schema is looked for, not remembered
    resources.shipped_schema.cache_clear()
    code, out, err = run(["schema", "collection"], capsys)
    assert code == 3
    assert out == ""
    assert f"schema 'collection' is not available: {tmp_path / 'a' / 'collection.schema.json'} or " in err
    assert "Traceback" not in err


def test_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["schema", "cases"], capsys)
    assert code == 2
    assert "'cases' is not one of" in err


def test_without_a_name_it_lists_every_schema_it_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["schema"], capsys)
    assert (code, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()] == list(resources.SCHEMA_FILES)
    code, out, _ = run(["schema", "--help"], capsys)
    assert all(f"    {name} " in out for name in resources.SCHEMA_FILES), out

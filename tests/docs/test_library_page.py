"""docs/library.md's example runs as written, on the demo project `qlab init` writes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qlab.project import scaffold

PAGE = Path(__file__).resolve().parents[2] / "docs" / "library.md"


def test_the_example_runs_on_the_demo_and_prints_what_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", text, re.S)
    assert example is not None
    scaffold.write_files(tmp_path, scaffold.demo_files(), force=False)
    monkeypatch.chdir(tmp_path)
    exec(compile(example.group(1), str(PAGE), "exec"), {})
    first, second = capsys.readouterr().out.splitlines()
    assert first == "pass 0" and "prints `pass 0`" in text
    assert Path(second) == tmp_path / ".qlab" / "library-example" / "result.json" and Path(second).is_file()

"""A project folder around the demo spec for the ``qlab search`` / ``qlab plan`` tests, and an in-process run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"

QLAB_YAML = """version: 1
project: engine-commands
collection:
  sources:
    - name: api
      openapi: api.yaml
{engine}
suites:
  search: {{mode: search, cases: [cases/*.yaml]}}
gates:
  - name: search
    stage: search
    suites: [search]
output:
  dir: out
"""


def project(folder: Path, *, engine: str = "") -> Path:
    shutil.copy(DEMO_SPEC, folder / "api.yaml")
    (folder / "cases").mkdir()
    path = folder / "qlab.yaml"
    path.write_text(QLAB_YAML.format(engine=engine), encoding="utf-8")
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err

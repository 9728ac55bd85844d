"""``qlab build`` in-process: table, --json, --no-cache, the artifact in the output dir, exit codes 0/1/2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
BROKEN = ROOT / "tests" / "collection" / "fixtures" / "broken"

QLAB_YAML = """version: 1
project: build-test
collection:
  sources:
    - name: api
      openapi: api.yaml
  auth: bearer
auth_profiles:
  bearer: {{type: bearer, token_env: QLAB_BUILD_TEST_TOKEN}}
suites:
  search: {{mode: search, cases: [cases/*.yaml]}}
gates:
  - name: build
    stage: build
    stop_if:
      - schema_coverage_below: {threshold}
output:
  dir: out
"""


def _project(folder: Path, *, threshold: float = 0.8, spec: Path = DEMO_SPEC) -> Path:
    shutil.copy(spec, folder / "api.yaml")
    (folder / "cases").mkdir()
    (folder / "cases" / "search.yaml").write_text(
        "- id: s-1\n  query: member delivery detail\n  expected_target: getMemberDeliveryDetail\n",
        encoding="utf-8",
    )
    path = folder / "qlab.yaml"
    path.write_text(QLAB_YAML.format(threshold=threshold), encoding="utf-8")
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_table_and_artifact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["build", "--config", str(config)], capsys)
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "collection         15 tools from api (openapi-3.0, 15)"
    assert "schema coverage    93.3% (threshold 80%)" in lines
    assert "contract coverage  100.0% (11/11 reference inputs have a producer)" in lines
    assert "auth               ok (profile bearer)" in lines and "verdict            READY" in lines
    assert "tools pulling coverage down:" in lines and "artifact           out/collection.json" in lines
    assert "needs entity       2 required input(s) have no producer: rescheduleDelivery.date (value), " \
           "createOrder.items (value)" in lines  # fmt: skip
    artifact = tmp_path / "out" / "collection.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    assert len(data["tools"]) == 15 and f"digest             {data['digest']}" in lines
    code, out, _ = run(["build", "--config", str(config)], capsys)
    assert code == 0 and out.splitlines()[0].endswith("[cached]")


def test_json_report_and_no_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path)
    run(["build", "--config", str(config)], capsys)
    code, out, err = run(["build", "--config", str(config), "--json", "--no-cache"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["collection"]["cached"] is False and report["collection"]["tools"] == 15
    assert report["collection"]["artifact"] == str(tmp_path / "out" / "collection.json")
    assert report["metrics"] == {"schema_coverage": 0.9333, "contract_coverage": 1.0, "tools": 15.0}
    assert report["readiness"]["verdict"] == "ready" and report["stops"] == [] and report["exit_code"] == 0
    assert len(report["readiness"]["tools"]) == 15


def test_low_coverage_exits_1_and_names_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, threshold=0.99)
    code, out, err = run(["build", "--config", str(config)], capsys)
    assert code == 1, out + err
    assert "stop: schema_coverage_below: schema coverage 0.9333 is below 0.99 (10 of 15 tools under it); lowest: " \
           "cancelOrder 0.90 (examples: orderId)" in out  # fmt: skip
    assert (tmp_path / "out" / "collection.json").is_file()  # written all the same, for inspection
    code, out, _ = run(["build", "--config", str(config), "--json"], capsys)
    report = json.loads(out)
    assert (
        code == 1 and report["exit_code"] == 1 and report["stops"][0]["condition"] == "schema_coverage_below"
    )
    assert report["readiness"]["verdict"] == "needs_work"


def test_broken_spec_exits_2_saying_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, spec=BROKEN / "dangling-ref.yaml")
    code, out, err = run(["build", "--config", str(config)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(
        f"error: {tmp_path / 'api.yaml'}:13:23: $.paths['/pets'].get.responses['200'].content['application/json'].schema['$ref']: "
        "$ref '#/components/schemas/Pet' points to nothing"
    )


def test_invalid_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qlab.yaml").write_text("version: 1\nproject: x\n", encoding="utf-8")
    code, _out, err = run(["build", "--config", str(tmp_path / "qlab.yaml")], capsys)
    assert code == 2 and "qlab.yaml" in err

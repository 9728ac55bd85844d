"""End to end: the example plugin package of docs/extending.md (``examples/plugin``) installed beside qlab, and
``qlab validate``, ``qlab run``, ``qlab report --format`` and ``qlab schema`` each a real process using its
``content_type`` assertion type and ``tap`` report format against a server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugin_site import install, install_example
from servers import CountingServer

pytestmark = pytest.mark.slow

SPEC = """\
openapi: 3.0.3
info: {title: items, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      summary: Get an item by its id
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200": {description: the item}
"""

CONFIG = """\
version: 1
project: plugin-example
collection:
  sources:
    - name: items
      openapi: openapi.yaml
environments:
  local:
    base_url: {base}
    allowed_hosts: [127.0.0.1]
suites:
  reads:
    mode: execute
    cases: [cases.yaml]
    environment: local
gates:
  - name: build
    stage: build
  - name: execute
    stage: execute
    suites: [reads]
    thresholds:
      execute_success_rate: ">= 1.0"
output:
  dir: out
"""


def _case(media_type: str | None) -> str:
    argument = f", equals: {media_type}" if media_type is not None else ""
    return (
        "- id: read-item\n  query: get item 7\n  expected_target: getItem\n  provided_entities: {id: 7}\n"
        f"  assertions:\n    - {{type: http_status, in: [200]}}\n    - {{type: content_type{argument}}}\n"
    )


def _project(folder: Path, base: str, media_type: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openapi.yaml").write_text(SPEC, encoding="utf-8")
    (folder / "cases.yaml").write_text(_case(media_type), encoding="utf-8")
    (folder / "qlab.yaml").write_text(CONFIG.replace("{base}", base), encoding="utf-8")
    return folder


def _qlab(site: Path | None, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "qlab", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_example_plugin_is_validated_run_and_reported(tmp_path: Path) -> None:
    site = install_example(tmp_path / "site")
    with CountingServer() as server:
        project = _project(tmp_path / "ok", server.url, "application/json")
        without = _qlab(None, project, "validate")
        assert (
            without.returncode == 2
            and "unknown assertion type 'content_type'" in without.stdout + without.stderr
        )

        assert _qlab(site, project, "validate").returncode == 0
        done = _qlab(site, project, "run")
        assert done.returncode == 0, done.stdout + done.stderr
        result = json.loads((project / "out" / "result.json").read_text(encoding="utf-8"))
        checked = {a["type"]: a for a in result["cases"][0]["assertions"]}
        assert checked["content_type"]["passed"] and checked["content_type"]["actual"] == "application/json"

        wrong = _project(tmp_path / "wrong", server.url, "text/html")
        done = _qlab(site, wrong, "run")
        assert done.returncode == 1, done.stdout + done.stderr
        case = json.loads((wrong / "out" / "result.json").read_text(encoding="utf-8"))["cases"][0]
        assert case["failure"]["reason"] == "assertion_failed"
        assert case["failure"]["message"] == "content_type: expected 'text/html', actual 'application/json'"

    report = _qlab(
        site, tmp_path, "report", "wrong/out/result.json", "--format", "tap=out.tap", "--format", "tap"
    )
    assert report.returncode == 0, report.stderr
    tap = (tmp_path / "out.tap").read_text(encoding="utf-8")
    assert tap.startswith("TAP version 14\n1..1\nnot ok 1 - reads/read-item\n") and tap in report.stdout
    assert '  reason: "assertion_failed"' in tap

    schema = json.loads(_qlab(site, tmp_path, "schema", "case").stdout)
    assert schema["definitions"]["assertion_content_type"]["properties"]["equals"]["type"] == "string"


def test_a_plugin_types_arguments_are_checked_where_they_are_written(tmp_path: Path) -> None:
    site = install_example(tmp_path / "site")
    project = _project(tmp_path / "p", "http://127.0.0.1:9", None)
    done = _qlab(site, project, "validate")
    assert done.returncode == 2
    assert "cases.yaml:7:" in done.stdout + done.stderr and "'equals'" in done.stdout + done.stderr


def test_a_plugin_that_takes_a_built_in_name_stops_qlab_with_its_package_named(tmp_path: Path) -> None:
    source = (Path(__file__).parents[2] / "examples/plugin/qlab_example_plugin/content_type.py").read_text()
    site = install(
        tmp_path / "site",
        "clashing-plugin",
        {"qlab.assertions": {"http_status": "clash:ContentType"}},
        {"clash.py": source.replace('name = "content_type"', 'name = "http_status"')},
    )
    project = _project(tmp_path / "p", "http://127.0.0.1:9", "application/json")
    done = _qlab(site, project, "validate")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "plugin package 'clashing-plugin'" in done.stdout + done.stderr
    assert "assertion type 'http_status' is built into qlab" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr

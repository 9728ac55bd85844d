"""Identity values reach no output: a case's provided entity for an identity-like field (``userId``, ``email``, …,
sensitive by default) or a field an environment names in ``sensitive_fields`` — in a search, a plan and an
execute case, echoed by the API in a path, a body and a message — is in no file the run writes (result, history,
JUnit, summary, run.log, GitHub's step summary and outputs), not on the console, and not in the reports rendered
from the result; ``output.identity_fields: kept`` keeps the identity fields (and only them) as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qlab.cli import main
from servers import JSONHandler, serving

USER = "u-777"  # a userId: an identity field, sensitive by default
EMAIL = "hana.k@example.com"  # an email: the same
MEMBER = "M-90817"  # memberNo: sensitive because an environment names it
NUMBER = 90817263  # a numeric userId, under its key


class _Echo(JSONHandler):
    def do_GET(self) -> None:
        user = self.path.rsplit("/", 1)[-1]
        self.send_json(
            200, {"data": {"userId": user, "note": f"profile of {user} <{EMAIL}>", "tier": "gold"}}
        )


@pytest.fixture(scope="module")
def api() -> Iterator[int]:
    with serving(_Echo) as port:
        yield port


def _spec(port: int) -> dict[str, Any]:
    param = {"name": "userId", "in": "path", "required": True, "schema": {"type": "string"}}
    query = {"name": "memberNo", "in": "query", "required": False, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "profiles", "version": "1"},
        "servers": [{"url": f"http://127.0.0.1:{port}"}],
        "paths": {
            "/users/{userId}": {
                "get": {
                    "operationId": "getUserProfile",
                    "summary": "Show the profile of a user",
                    "parameters": [param, query],
                    "responses": {"200": {"description": "the profile"}},
                }
            }
        },
    }


def _project(root: Path, port: int, *, identity: str | None) -> Path:
    (root / "api.json").write_text(json.dumps(_spec(port)), encoding="utf-8")
    (root / "cases").mkdir()
    entities = {"userId": USER, "memberNo": MEMBER, "contact": {"email": EMAIL}}
    plan = [
        {"id": "plan-1", "query": f"Show the profile of user {USER}", "expected_target": "getUserProfile",
         "provided_entities": entities},
        {"id": "plan-2", "query": "Show the profile of a user", "expected_target": "getUserProfile",
         "provided_entities": {"userId": NUMBER}},
    ]  # fmt: skip
    execute = [
        {"id": "exec-1", "query": "Show the profile of a user", "expected_target": "getUserProfile",
         "provided_entities": entities,
         "assertions": [{"type": "json_path_equals", "path": "$.data.tier", "equals": "silver"}]},
    ]  # fmt: skip
    (root / "cases" / "plan.yaml").write_text(json.dumps(plan), encoding="utf-8")
    (root / "cases" / "execute.yaml").write_text(json.dumps(execute), encoding="utf-8")
    output = {"dir": "out", **({"identity_fields": identity} if identity else {})}
    config = {
        "version": 1,
        "project": "profiles",
        "collection": {"sources": [{"name": "api", "openapi": "api.json"}]},
        "environments": {
            "dev": {
                "base_url": f"http://127.0.0.1:{port}",
                "allowed_hosts": ["127.0.0.1"],
                "sensitive_fields": ["memberNo"],
            }
        },
        "suites": {
            "plans": {"mode": "plan", "cases": ["cases/plan.yaml"]},
            "reads": {"mode": "execute", "cases": ["cases/execute.yaml"], "environment": "dev"},
        },
        "gates": [
            {"name": "plan", "stage": "plan", "suites": ["plans"], "max_failures": 10},
            {"name": "execute", "stage": "execute", "suites": ["reads"]},
        ],
        "output": output,
    }
    path = root / "qlab.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _run(root: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    captured = capsys.readouterr()
    return int(stopped.value.code or 0), captured.out + captured.err


def _written(root: Path) -> str:
    """Every file the run and the reports wrote, as one text (the inputs left out)."""
    inputs = {root / "api.json", root / "qlab.yaml", *(root / "cases").iterdir()}
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p not in inputs
    )


@pytest.mark.parametrize("identity", [None, "kept"], ids=["default", "kept"])
def test_identity_and_sensitive_values_reach_no_output(
    identity: str | None,
    api: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _project(tmp_path, api, identity=identity)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "github-summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github-output.txt"))
    code, console = _run(tmp_path, ["run", "--config", str(config)], capsys)
    assert code == 1, (
        console
    )  # exec-1 fails its assertion on purpose: its excerpt and actual value are recorded
    out = tmp_path / "out"
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    cases = {c["case_id"]: c for c in result["cases"]}
    assert cases["exec-1"]["execute"]["steps"], cases["exec-1"]  # the request went out and was answered
    assert list((out / "history").iterdir())
    for flag, name in (("--html", "report.html"), ("--markdown", "report.md"), ("--junit", "report.xml")):
        assert _run(tmp_path, ["report", str(out / "result.json"), flag, str(out / name)], capsys)[0] == 0
    written = _written(tmp_path) + console
    assert MEMBER not in written  # named by the environment: scrubbed either way
    if identity is None:
        assert USER not in written and EMAIL not in written and str(NUMBER) not in written
        assert "[REDACTED]" in (out / "summary.md").read_text(encoding="utf-8") + json.dumps(result)
    else:
        assert (
            USER in json.dumps(result) and EMAIL in json.dumps(result) and str(NUMBER) in json.dumps(result)
        )

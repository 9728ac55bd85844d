"""Rule (docs/decision.md): a collection that cannot be built is ERROR whatever gates exist, and a run in which
no gating case was evaluated is never PASS (it is ERROR: nothing was judged). The console, result.json and the
GitHub output ``decision`` say the same word.

On 6b179e1, with no ``build`` gate, a spec URL answering 404, refusing or hanging gave ``PASS: 2 skipped``
(exit 0) and ``decision=pass``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hostile.project import github_output, run, spec_project
from hostile.server import HostileServer
from hostile.specs import api, write_local
from qlab.run import verify
from reliability.servers_faults import closed_port


def _decision(config: Path) -> str:
    return str(json.loads((config.parent / "out" / "result.json").read_text())["decision"]["verdict"])


@pytest.mark.parametrize("build_gate", [False, True], ids=["no-build-gate", "build-gate"])
@pytest.mark.parametrize(
    "spec", ["status/404", "hang", "closed-port", "spec/invalid/openapi.json", "spec/file-ref/openapi.json"]
)
def test_a_collection_that_cannot_be_built_is_an_error(
    tmp_path: Path, hostile: HostileServer, spec: str, build_gate: bool
) -> None:
    url = (
        f"http://127.0.0.1:{closed_port()}/openapi.json" if spec == "closed-port" else f"{hostile.url}/{spec}"
    )
    deadline = {"limits": {"spec_timeout_sec": 2}} if spec == "hang" else {}
    config = spec_project(tmp_path / "p", url, **deadline)
    if build_gate:
        data = yaml.safe_load(config.read_text())
        data["gates"].insert(0, {"name": "build", "stage": "build"})
        config.write_text(yaml.safe_dump(data))
    done = run(config)
    assert done.code == 2 and "ERROR" in done.console and "PASS" not in done.console, done.console
    assert github_output(config)["decision"] == "error"
    assert _decision(config) == "error"


def test_a_run_that_evaluated_no_gating_case_is_an_error(tmp_path: Path, hostile: HostileServer) -> None:
    spec = write_local(tmp_path / "spec", {"openapi.json": api()})
    config = spec_project(tmp_path / "p", str(spec))
    cases = yaml.safe_load((config.parent / "cases.yaml").read_text())
    (config.parent / "cases.yaml").write_text(yaml.safe_dump([{**c, "status": "draft"} for c in cases]))
    done = run(config)
    assert done.code == 2 and "no gating case was evaluated" in done.console, done.console
    assert github_output(config)["decision"] == "error" and _decision(config) == "error"
    stored = json.loads((config.parent / "out" / "result.json").read_text())
    assert verify.problems(stored, verify.rederive(stored)) == []  # a reader judges it the same way
    (config.parent / "cases.yaml").write_text(yaml.safe_dump(cases))
    assert run(config).code == 0  # the same case, active: judged, and it passes

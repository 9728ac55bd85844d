"""The engine under test is a downstream too: an ``http`` engine (a team's search/select/plan service) that
fails in each way the fault server can fail. ``qlab run`` never crashes: an engine that does not answer stops
the run at the ``engine_reachable`` pre-run check (exit 2, every case blocked, none "passed"); an engine that
answers badly fails each case as ``engine_error`` and the gate blocks (exit 1).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from qlab.cli import main
from qlab.project.scaffold import demo_files
from reliability.servers_faults import FaultServer, closed_port

CASES = [
    {"id": "member", "query": "look up member M-1001", "expected_target": "getMember"},
    {
        "id": "members",
        "query": "list the members of the delivery programme",
        "expected_target": "listMembers",
    },
]
# A redirect answers too: qlab follows none for an engine (its POSTs carry the engine's headers), so an engine
# that redirects, even in a loop, fails each case
ANSWERS_BADLY = ["status/500", "status/401", "status/404", "invalid-json", "deep/100000", "wrong-type", "ok",
                 "redirect-loop"]  # fmt: skip
DOES_NOT_ANSWER = ["reset", "slow/5", "closed-port"]


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def _project(root: Path, url: str) -> Path:
    root.mkdir()
    (root / "openapi.yaml").write_bytes(demo_files()["openapi.yaml"])
    (root / "cases").mkdir()
    (root / "cases" / "plans.yaml").write_text(yaml.safe_dump(CASES), encoding="utf-8")
    config = {
        "version": 1,
        "project": "engine-faults",
        "collection": {"sources": [{"name": "demo", "openapi": "openapi.yaml"}]},
        "engine": {"type": "http", "url": url, "timeout_sec": 1},
        "suites": {"plans": {"mode": "plan", "cases": ["cases/*.yaml"]}},
        "gates": [
            {"name": "build", "stage": "build"},
            {"name": "search", "stage": "search", "suites": ["plans"], "thresholds": {"hit_at_k": ">= 1.0"}},
            {"name": "plan", "stage": "plan", "suites": ["plans"]},
        ],
        "output": {"dir": "out"},
    }
    path = root / "qlab.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _run(config: Path) -> tuple[int, str, dict[str, tuple[str, str | None]]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        main(["run", "--config", str(config), "--quiet"])
    code = exit_.value.code
    result = json.loads((config.parent / "out" / "result.json").read_text(encoding="utf-8"))
    cases = {c["case_id"]: (c["status"], (c.get("failure") or {}).get("reason")) for c in result["cases"]}
    return (code if isinstance(code, int) else 0), out.getvalue() + err.getvalue(), cases


@pytest.mark.parametrize("fault", ANSWERS_BADLY)
def test_an_engine_that_answers_badly_fails_each_case_as_engine_error(
    tmp_path: Path, faults: FaultServer, fault: str
) -> None:
    code, console, cases = _run(_project(tmp_path / "p", f"{faults.url}/{fault}"))
    assert "internal error" not in console and "Traceback" not in console, console
    assert cases == {"member": ("error", "engine_error"), "members": ("error", "engine_error")}, console
    assert code == 1, console


@pytest.mark.parametrize("fault", DOES_NOT_ANSWER)
def test_an_engine_that_does_not_answer_stops_the_run_before_any_gate(
    tmp_path: Path, faults: FaultServer, fault: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}" if fault == "closed-port" else f"{faults.url}/{fault}"
    code, console, cases = _run(_project(tmp_path / "p", url))
    assert "internal error" not in console and "Traceback" not in console, console
    assert code == 2 and "ERROR (exit 2)" in console and "BLOCK" not in console, console
    # nothing ran, so nothing passed and nothing was blocked: every case says which check stopped it
    assert cases == {"member": ("skipped", "stopped_by_error"), "members": ("skipped", "stopped_by_error")}

"""``run_project``: ``qlab run`` as one call — the outcome returned, every file written, the previous run read,
a cancelled run's partial result written and returned like any other."""

from __future__ import annotations

import dataclasses
import gc
import json
from pathlib import Path
from typing import Any

import pytest

from qlab.project import scaffold
from qlab.run import api
from qlab.run.api import RunResult, run_project
from qlab.run.options import RunEvent
from qlab.run.runner import run as real_run
from qlab.run.selection import SelectionSpec

SEARCH = SelectionSpec(suites=("search_core",))


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scaffold.write_files(tmp_path, scaffold.demo_files(), force=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "qlab.yaml"


def test_the_outcome_and_every_file_written(demo: Path) -> None:
    events: list[RunEvent] = []
    result = run_project(
        selection=SEARCH, on_event=events.append
    )  # qlab.yaml found from the working directory
    assert (
        (result.decision, result.exit_code)
        == ("pass", 0)
        == (
            result.artifact["decision"]["verdict"],
            result.artifact["decision"]["exit_code"],
        )
    )
    assert result.config == demo and result.previous is None
    out = demo.parent / ".qlab" / "out"
    assert result.paths.result == out / "result.json"
    assert {result.paths.result, result.paths.junit, result.paths.summary, out / "run.log"} <= set(
        result.written
    )
    assert all(path.is_file() for path in result.written)
    assert json.loads(result.paths.result.read_text(encoding="utf-8"))["run_id"] == result.artifact["run_id"]
    kinds = [event.kind for event in events]
    assert kinds[0] == "project_loaded" and kinds[-1] == "run_end" and "stage_end" in kinds
    assert events[-1].status == "pass" and events[-1].run_id == result.artifact["run_id"]
    again = run_project(demo, selection=SEARCH)
    assert again.previous is not None and again.previous["run_id"] == result.artifact["run_id"]
    assert any(path.parent.name == "history" for path in again.written)


def test_a_finished_run_leaves_none_of_its_records_behind(demo: Path) -> None:
    """Rule: once the caller drops a run's result, nothing in the library keeps its artifact alive (the summary's
    "since the last run" included): a long-lived caller does not grow, and the process does not carry the run's
    records to its exit, where the interpreter's last collections would walk them all."""

    def records() -> list[dict[str, Any]]:
        return [o for o in gc.get_objects() if isinstance(o, dict) and isinstance(o.get("case_id"), str)]

    before = records()  # other tests' records, held here so that no new one takes an id of theirs
    known = {id(o) for o in before}
    run_project(demo, selection=SEARCH)
    run_project(demo, selection=SEARCH)  # compared with the run before; its result dropped at once
    gc.collect()
    assert [o["case_id"] for o in records() if id(o) not in known] == []


def test_the_result_lists_configuration_warnings_as_located_messages(demo: Path) -> None:
    """Rule: a warning about qlab.yaml reaches result.json as the located message ``qlab validate`` prints
    (``file:line:col: $.path: warning: ...``), not as a Python object's repr."""
    text = demo.read_text(encoding="utf-8")
    demo.write_text(
        text.replace("gates:\n", "gates:\n  - name: idle\n    stage: build\n", 1), encoding="utf-8"
    )
    warnings = run_project(demo, selection=SEARCH).artifact["warnings"]
    assert any(
        w.startswith("qlab.yaml:") and "$.gates[0]: warning: gate 'idle' can never block" in w
        for w in warnings
    )
    assert not any("Diagnostic(" in w for w in warnings), warnings


def test_a_cancelled_run_writes_and_returns_its_partial_result(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: Any) -> Any:
        raise KeyboardInterrupt

    def run(project: Any, *, options: Any) -> Any:
        seams = dataclasses.replace(options.seams, stages={"search": interrupted})
        return real_run(project, options=dataclasses.replace(options, seams=seams))

    monkeypatch.setattr(api, "run", run)
    result = run_project(demo, selection=SEARCH)
    assert isinstance(result, RunResult)
    assert (result.decision, result.exit_code) == ("cancelled", 130)
    written = json.loads(result.paths.result.read_text(encoding="utf-8"))
    assert written["status"] == "cancelled" and written["decision"]["exit_code"] == 130
    assert not (result.paths.result.parent / "status.json").exists()  # the run's "running" note is gone

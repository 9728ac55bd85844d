"""Run history: each run's result kept under the output folder (the written, scrubbed bytes), a bounded number."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlab.report.derive import since_last
from qlab.run import history
from qlab.run.artifact import write
from run import story


def _result(folder: Path, run_id: str) -> Path:
    return write(
        folder / f"{run_id.replace('/', '_')}-result.json", {**story.story("pass").whole, "run_id": run_id}
    )


def test_kept_results_are_the_written_files_oldest_first_and_bounded(tmp_path: Path) -> None:
    kept = tmp_path / "history"
    ids = [f"2026120{i}T100000Z-abcd000{i}" for i in range(1, 5)]
    for run_id in ids:
        source = _result(tmp_path, run_id)
        entry = history.keep(source, run_id, kept, limit=3)
        assert entry is not None and entry.read_bytes() == source.read_bytes()
        assert os.path.samefile(entry, source)  # a hard link: nothing copied, nothing scrubbed again
    assert [p.stem.split("-", 1)[1] for p in history.entries(kept)] == ids[
        1:
    ]  # the oldest beyond the limit went
    assert [r["run_id"] for r in history.runs(kept)] == ids[1:]
    latest = history.latest(kept)
    assert latest is not None and latest["run_id"] == ids[-1]


def test_an_unreadable_entry_is_passed_over_and_limit_0_keeps_none(tmp_path: Path) -> None:
    kept = tmp_path / "history"
    history.keep(_result(tmp_path, "20261201T000000Z-a"), "20261201T000000Z-a", kept)
    (kept / "000002-20261202T000000Z-broken.json").write_text("{", encoding="utf-8")
    latest = history.latest(kept)
    assert latest is not None and latest["run_id"] == "20261201T000000Z-a"
    assert history.keep(_result(tmp_path, "x"), "x", tmp_path / "none", limit=0) is None
    assert not (tmp_path / "none").exists()
    assert history.latest(tmp_path / "missing") is None


def test_a_run_id_cannot_name_a_file_elsewhere(tmp_path: Path) -> None:
    entry = history.keep(_result(tmp_path, "r"), "../../etc/passwd", tmp_path / "history")
    assert entry is not None and entry.parent == tmp_path / "history"


@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_the_brief_previous_run_says_what_the_whole_one_says(tmp_path: Path, scenario: str) -> None:
    """``latest_brief`` reads the previous run line by line and keeps each case's comparison fields: its cases
    are the whole file's cut to those fields, its other sections are the whole file's, and the "since the last
    run" block it gives is the one the whole file gives (pass, blocked and hostile text alike)."""
    current = {**story.story(scenario).whole, "run_id": "20261202T000000Z-b"}
    previous = {**story.story(scenario).whole, "run_id": "20261201T000000Z-a"}
    previous["cases"] = [dict(c) for c in previous["cases"]]
    if previous["cases"]:  # make the two runs differ: one case's status flipped
        first = previous["cases"][0]
        first["status"] = "failed" if first.get("status") == "passed" else "passed"
    kept = tmp_path / "history"
    history.keep(write(tmp_path / "prev.json", previous), previous["run_id"], kept)
    whole, brief = history.latest(kept), history.latest_brief(kept)
    assert whole is not None and brief is not None
    fields = ("case_id", "suite", "status", "failure", "critical", "flaky")
    assert brief["cases"] == [{k: c[k] for k in fields if k in c} for c in whole["cases"]]
    assert {k: v for k, v in brief.items() if k != "cases"} == {
        k: v for k, v in whole.items() if k != "cases"
    }
    assert since_last(brief, current) == since_last(whole, current)


def test_a_previous_run_in_another_layout_is_read_whole(tmp_path: Path) -> None:
    import json

    run = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    kept = tmp_path / "history"
    kept.mkdir()
    (kept / "000001-x.json").write_text(json.dumps(run, indent=2), encoding="utf-8")  # not qlab's layout
    brief = history.latest_brief(kept)
    assert brief is not None and brief["run_id"] == run["run_id"]
    assert [c["case_id"] for c in brief["cases"]] == [c["case_id"] for c in run["cases"]]

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
    if scenario == "error":  # a run that could not decide is no baseline for "since the last run"
        assert whole is not None and brief is None
        return
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


@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_the_previous_run_the_learn_gate_reads_gives_the_signals_the_whole_one_gives(
    tmp_path: Path, scenario: str
) -> None:
    """Rule: ``for_learning`` (the previous run read line by line for the learn gate) cuts every case to its
    status, failure and auth readiness and keeps the other sections whole; the two-run signals are the ones the
    whole file gives, and ``cases_by_id`` gives back the whole records of the cases they name."""
    from qlab.governance.learning import signals

    whole_run = {**story.story(scenario).whole, "run_id": "20261201T000000Z-a"}
    whole_run["cases"] = [dict(c) for c in whole_run["cases"]]
    current = {**story.story(scenario).whole, "run_id": "20261202T000000Z-b"}
    current["cases"] = [dict(c) for c in current["cases"]]
    for case in current["cases"]:  # now every case passes, and the auth readiness of the first is lost
        case["status"], case["failure"] = "passed", None
    if current["cases"]:
        whole_run["cases"][0]["auth_readiness"] = {"status": "ready"}
        current["cases"][0]["auth_readiness"] = {"status": "auth_context_required"}
    path = write(tmp_path / "prev.json", whole_run)
    whole, lean = history.artifact.read(path), history.for_learning(path)
    assert {k: v for k, v in lean.items() if k != "cases"} == {k: v for k, v in whole.items() if k != "cases"}
    assert len(lean["cases"]) == len(whole["cases"])
    for kept, full in zip(lean["cases"], whole["cases"], strict=True):
        assert kept == {k: full[k] for k in history._LEARN_KEYS if k in full}
    found = signals.detect(current, previous=lean)
    assert found == signals.detect(current, previous=whole)
    named = {str(i) for s in found for i in s.get("case_ids") or ()}
    if scenario == "blocked":
        assert any(s["signal"] == "failed_then_succeeded" for s in found) and named
    by_id = {str(c["case_id"]): c for c in whole["cases"]}
    assert history.cases_by_id(path, named) == {i: by_id[i] for i in named}
    assert history.cases_by_id(path, ()) == {}


def test_the_learn_gate_reads_a_passing_case_from_its_first_fields_when_it_has_no_auth_readiness(
    tmp_path: Path,
) -> None:
    """Rule: a passing case with no auth readiness costs three fields (a 100,000-case previous run stays small);
    one with auth readiness keeps it (the drift signal needs it)."""
    run = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    run["cases"] = [
        {"case_id": "s", "suite": "x", "mode": "search", "status": "passed", "search": {"hit": True, "rows": []}},
        {"case_id": "e", "suite": "x", "mode": "execute", "status": "passed", "auth_readiness": {"status": "ready"},
         "execute": {"http_status": 200}},
    ]  # fmt: skip
    lean = history.for_learning(write(tmp_path / "r.json", run))
    assert lean["cases"] == [
        {"case_id": "s", "suite": "x", "mode": "search", "status": "passed"},
        {
            "case_id": "e",
            "suite": "x",
            "mode": "execute",
            "status": "passed",
            "auth_readiness": {"status": "ready"},
        },
    ]


def test_a_passing_case_keeps_its_critical_and_flaky_flags_in_both_cuts(tmp_path: Path) -> None:
    """Rule: a cut never drops a key it keeps (a removed critical case is still a required one in the "since the
    last run" block); the brief of an execute case leaves out the auth readiness it does not keep."""
    run = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    run["cases"] = [
        {"case_id": "c", "suite": "x", "mode": "search", "status": "passed", "search": {"hit": True}, "critical": True},
        {"case_id": "f", "suite": "x", "mode": "search", "status": "passed", "attempts": 3, "passes": 2, "flaky": True},
        {"case_id": "e", "suite": "x", "mode": "execute", "status": "passed", "auth_readiness": {"status": "ready"}},
    ]  # fmt: skip
    path = write(tmp_path / "r.json", run)
    lean = history.for_learning(path)
    assert [c.get("critical") for c in lean["cases"]] == [True, None, None]
    assert [c.get("flaky") for c in lean["cases"]] == [None, True, None]
    kept = tmp_path / "history"
    history.keep(path, run["run_id"], kept)
    brief = history.latest_brief(kept)
    assert brief is not None and brief["cases"] == [
        {"case_id": "c", "suite": "x", "status": "passed", "critical": True},
        {"case_id": "f", "suite": "x", "status": "passed", "flaky": True},
        {"case_id": "e", "suite": "x", "status": "passed"},
    ]


@pytest.mark.parametrize(
    "case_id", ["plain-1", 'say "hi"', "back\\slash", "new\nline", "caf\u00e9 \u2603", "tab\there"]
)
def test_a_case_id_or_suite_with_any_characters_is_read_back_as_written(tmp_path: Path, case_id: str) -> None:
    """Rule: the line-by-line readers give the ids back as written (quotes, backslashes, control characters and
    non-ASCII text alike)."""
    run = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    run["cases"] = [{"case_id": case_id, "suite": case_id + "-s", "mode": "search", "status": "passed"}]
    path = write(tmp_path / "r.json", run)
    kept = tmp_path / "history"
    history.keep(path, run["run_id"], kept)
    brief = history.latest_brief(kept)
    assert brief is not None
    assert brief["cases"] == [{"case_id": case_id, "suite": case_id + "-s", "status": "passed"}]
    assert history.for_learning(path)["cases"] == [run["cases"][0]]
    assert history.cases_by_id(path, {case_id}) == {case_id: run["cases"][0]}


@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_the_brief_cut_from_the_run_already_read_is_the_brief_read_from_the_file(
    tmp_path: Path, scenario: str
) -> None:
    """Rule: when the newest history entry is the file the learn gate already read (the same file: a hard link),
    the "since the last run" brief is cut from that read, and it is the brief the file gives; another file is
    read."""
    previous = {**story.story(scenario).whole, "run_id": "20261201T000000Z-a"}
    previous["cases"] = [dict(c) for c in previous["cases"]]
    if previous["cases"]:
        previous["cases"][0]["status"] = (
            "failed" if previous["cases"][0].get("status") == "passed" else "passed"
        )
    result = write(tmp_path / "result.json", previous)
    kept = tmp_path / "history"
    history.keep(result, previous["run_id"], kept)
    from_file = history.latest_brief(kept)
    for read in (history.for_learning(result), history.artifact.read(result)):
        assert history.latest_brief(kept, read={**read, "_path": str(result), "_lean": True}) == from_file
    other = write(tmp_path / "other.json", {**previous, "run_id": "20261130T000000Z-z", "cases": []})
    assert history.latest_brief(kept, read={**history.for_learning(other), "_path": str(other)}) == from_file


def test_since_the_last_run_compares_with_the_last_decided_run_of_the_same_configuration(
    tmp_path: Path,
) -> None:
    """Rule (issue 36, 7): a regression is compared with the last run that decided (PASS or BLOCK) and ran the
    same qlab.yaml with the same selection, not with an ERROR run in between (which judged nothing and would
    show "0 newly failing"), nor with a run of other suites."""
    passed = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    other = {**passed, "run_id": "20261202T000000Z-b"}
    other["provenance"] = {
        **passed["provenance"],
        "run_configuration": {**passed["provenance"]["run_configuration"], "selection": {"suites": ["x"]}},
    }
    error = {**story.story("error").whole, "run_id": "20261203T000000Z-c"}
    current = {**story.story("blocked").whole, "run_id": "20261204T000000Z-d"}
    kept = tmp_path / "history"
    for run in (passed, other, error):
        history.keep(write(tmp_path / f"{run['run_id']}.json", run), run["run_id"], kept)
    found = history.latest_brief(kept, like=current)
    assert found is not None and found["run_id"] == passed["run_id"]
    change = since_last(found, current)
    assert change.previous_verdict == "pass"
    assert [c.case_id for c in change.newly_failing] == ["s04"]  # the real regression, not "0 newly failing"
    assert history.latest_brief(kept)["run_id"] == other["run_id"]  # type: ignore[index]  (no configuration given)

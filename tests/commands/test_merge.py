"""``qlab merge`` in process: three shards merge to the unsharded metrics; a missing or duplicate shard exits 2."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from qlab.cli import main
from qlab.run.artifact import write
from qlab.run.runner import run
from qlab.run.shard import ShardSpec, case_manifest
from run import fakes as f


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _cases() -> list[Any]:
    cases = [
        f.case(f"s{i:02d}", "search_core", "search", "second:x" if i % 3 == 0 else "t", line=i)
        for i in range(12)
    ]
    cases += [f.case(f"p{i:02d}", "plan_e2e", "plan", line=i) for i in range(6)]
    cases += [f.case(f"e{i:02d}", "execute_read", "execute", line=i) for i in range(4)]
    return cases


def _shards(tmp_path: Path, cases: list[Any], n: int = 3) -> tuple[dict[str, Any], list[Path]]:
    project = f.FakeProject(f.config(tmp_path), tuple(cases))
    whole = run(project, options=f.options(tmp_path)).artifact
    paths = []
    for i in range(1, n + 1):
        opts = dataclasses.replace(f.options(tmp_path), shard=ShardSpec(i, n))
        art = run(project, options=opts).artifact
        assert art["shard"]["index"] == i and art["shard"]["total"] == n
        paths.append(write(tmp_path / "shards" / f"qlab-shard-{i}-of-{n}.json", art))
    return whole, paths


def _same_metrics(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["metrics"] == b["metrics"]
    assert {k: v["metrics"] for k, v in a["suites"].items()} == {
        k: v["metrics"] for k, v in b["suites"].items()
    }
    assert [(c["case_id"], c["status"]) for c in a["cases"]] == [
        (c["case_id"], c["status"]) for c in b["cases"]
    ]
    assert [(g["name"], g["status"]) for g in a["gates"]] == [(g["name"], g["status"]) for g in b["gates"]]
    assert a["decision"]["verdict"] == b["decision"]["verdict"]


def test_three_shards_merge_to_the_unsharded_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole, _ = _shards(tmp_path, _cases())
    out = tmp_path / "merged"
    code, stdout, stderr = _cli(["merge", str(tmp_path / "shards"), "--out", str(out)], capsys)
    assert code == 0, stdout + stderr
    merged = json.loads((out / "result.json").read_text(encoding="utf-8"))
    _same_metrics(merged, whole)
    assert merged["shard"]["total"] == 1 and len(merged["shard"]["merged_from"]) == 3
    assert (out / "junit.xml").is_file() and (out / "summary.md").is_file()
    durations = json.loads((out / "durations.json").read_text(encoding="utf-8"))
    assert list(durations) == sorted(durations) and len(durations) == len(_cases())


def test_a_blocking_gate_is_judged_on_the_merged_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _cases()
    cases[4] = f.case(
        "s04", "search_core", "search", "absent:x", line=4
    )  # blocks search: later cases blocked
    whole, _ = _shards(tmp_path, cases)
    assert whole["decision"]["exit_code"] == 1
    code, stdout, stderr = _cli(
        ["merge", str(tmp_path / "shards" / "qlab-shard-*.json"), "--out", str(tmp_path / "m")], capsys
    )
    assert code == 1, stdout + stderr
    merged = json.loads((tmp_path / "m" / "result.json").read_text(encoding="utf-8"))
    _same_metrics(merged, whole)
    assert {c["failure"]["reason"] for c in merged["cases"] if c["suite"] != "search_core"} == {
        "blocked_by_stage"
    }


def test_a_shard_that_could_not_decide_makes_the_merged_run_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _cases()
    cases[-1] = f.case("e03", "execute_read", "execute", "down:x", line=3)
    whole, _ = _shards(tmp_path, cases)
    assert (whole["decision"]["verdict"], whole["decision"]["exit_code"]) == ("error", 2)
    code, stdout, stderr = _cli(["merge", str(tmp_path / "shards"), "--out", str(tmp_path / "m")], capsys)
    assert code == 2, stdout + stderr
    merged = json.loads((tmp_path / "m" / "result.json").read_text(encoding="utf-8"))
    _same_metrics(merged, whole)
    assert merged["decision"]["verdict"] == "error" and "BLOCK" not in stdout


def test_a_regression_case_failing_in_one_shard_blocks_the_merged_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The merged artifact keeps each suite's must_pass: the merge judges a regression suite as the run did."""
    cases = _cases()
    config = f.config(tmp_path)
    suites = {
        **config.suites,
        "plan_e2e": dataclasses.replace(config.suites["plan_e2e"], category="regression"),
    }
    config = dataclasses.replace(config, suites=suites)
    cases[13] = f.case("p01", "plan_e2e", "plan", "unsat:x", line=1)
    project = f.FakeProject(config, tuple(cases))
    for i in (1, 2, 3):
        opts = dataclasses.replace(f.options(tmp_path), shard=ShardSpec(i, 3))
        write(tmp_path / "shards" / f"qlab-shard-{i}-of-3.json", run(project, options=opts).artifact)
    code, stdout, stderr = _cli(["merge", str(tmp_path / "shards"), "--out", str(tmp_path / "m")], capsys)
    assert code == 1, stdout + stderr
    merged = json.loads((tmp_path / "m" / "result.json").read_text(encoding="utf-8"))
    plan = next(g for g in merged["gates"] if g["name"] == "plan")
    assert any("a must-pass suite (category regression) tolerates none" in r for r in plan["reasons"])
    assert merged["suites"]["plan_e2e"]["must_pass"] is True


def test_a_missing_shard_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    code, _, stderr = _cli(["merge", str(paths[0]), str(paths[2])], capsys)
    assert code == 2, stderr
    assert (
        "error: incomplete shard set: missing shard(s) 2/3; merge needs every shard 1..3 exactly once"
        in stderr
    )


def test_a_shard_out_of_range_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    data["shard"]["index"] = 5
    paths[0].write_text(json.dumps(data), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2, stderr
    assert (
        "error: incomplete shard set: missing shard(s) 1/3; out of range: 5/3; "
        "merge needs every shard 1..3 exactly once"
    ) in stderr


def test_an_output_folder_that_is_a_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    code, _, stderr = _cli(["merge", "--out", str(blocker / "merged"), *map(str, paths)], capsys)
    assert code == 2, stderr
    assert f"error: {blocker / 'merged'}: cannot create the output folder: " in stderr


def test_a_duplicate_shard_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    copy = tmp_path / "copy.json"
    copy.write_bytes(paths[1].read_bytes())
    code, _, stderr = _cli(["merge", *map(str, paths), str(copy)], capsys)
    assert code == 2 and "shard 2/3 given more than once" in stderr


def test_shards_of_different_runs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    data["shard"]["selection_fingerprint"] = "sha256:other"
    paths[0].write_text(json.dumps(data), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2 and "selection fingerprint" in stderr


def test_a_case_in_two_shards_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, paths = _shards(tmp_path, _cases())
    one = json.loads(paths[0].read_text(encoding="utf-8"))
    two = json.loads(paths[1].read_text(encoding="utf-8"))
    two["cases"].append(one["cases"][0])
    paths[1].write_text(json.dumps(two), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2 and "is in two shards" in stderr


def test_unsharded_results_and_bad_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole, _ = _shards(tmp_path, _cases(), n=1)
    plain = write(tmp_path / "plain.json", whole | {"shard": None})
    code, _, stderr = _cli(["merge", str(plain)], capsys)
    assert code == 2 and "not a shard result" in stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    code, _, stderr = _cli(["merge", str(broken)], capsys)
    assert code == 2 and "broken.json:1:2: $: invalid JSON" in stderr
    code, _, stderr = _cli(["merge", str(tmp_path / "nothing-here")], capsys)
    assert code == 2 and "no such file" in stderr


def test_a_shard_whose_cases_were_removed_by_hand_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard records the cases it ran (count and digest). Removing a failing case from the file no longer
    merges to PASS: refused as is, refused with its manifest edited to match, refused without a manifest."""
    _, paths = _shards(tmp_path, _cases())
    original = paths[0].read_text(encoding="utf-8")
    data = json.loads(original)
    assert data["shard"]["cases"]["count"] == len(data["cases"])
    data["cases"] = data["cases"][1:]
    paths[0].write_text(json.dumps(data), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2 and "its cases do not match the ones it ran" in stderr, stderr

    # the manifest rewritten to match: the shards together are still not the selection they were run from
    data["shard"]["cases"] = case_manifest(c["case_id"] for c in data["cases"])
    paths[0].write_text(json.dumps(data), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2 and "are not the selection they were run from" in stderr, stderr

    data = json.loads(original)
    del data["shard"]["cases"]
    paths[0].write_text(json.dumps(data), encoding="utf-8")
    code, _, stderr = _cli(["merge", *map(str, paths)], capsys)
    assert code == 2 and "$.shard.cases: no record of the cases this shard ran" in stderr, stderr


def test_the_merged_outputs_are_named_like_a_run_s_absolute_and_its_summary_says_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule (issue 36, 3): ``qlab merge shards/`` from the working directory names its outputs as ``qlab run``
    does — absolute paths, on the console and in $GITHUB_OUTPUT — and its summary says it merged two shards
    (not "shard 1/1")."""
    _shards(tmp_path, _cases(), n=2)
    github_output = tmp_path / "github-output"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, stdout, stderr = _cli(["merge", "shards"], capsys)
    assert code == 0, stdout + stderr
    written = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
    for name in ("result", "junit", "summary"):
        assert Path(written[name]).is_absolute() and Path(written[name]).is_file(), written[name]
    assert f"result: {tmp_path / 'shards' / 'result.json'}" in stdout
    summary = (tmp_path / "shards" / "summary.md").read_text(encoding="utf-8")
    assert " · merged from 2 shards" in summary and "shard 1/1" not in summary

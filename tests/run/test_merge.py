"""``qlab merge`` as a library (``qlab.run.merge``): the rules that keep a merge from passing on partial or foreign
data, each pinned at its edge, and the merged artifact agreeing with one unsharded run of the same selection.

The command-level tests (exit codes, files written) are in tests/commands/test_merge.py."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from qlab.contracts.errors import InputError
from qlab.run import merge as m
from qlab.run.runner import run
from qlab.run.shard import ShardSpec, case_manifest, selection_fingerprint
from run import fakes as f

Shards = list[tuple[Path, dict[str, Any]]]


def _cases() -> list[Any]:
    cases = [
        f.case(f"s{i:02d}", "search_core", "search", "second:x" if i % 3 == 0 else "t", line=i)
        for i in range(9)
    ]
    cases += [f.case(f"p{i:02d}", "plan_e2e", "plan", line=i) for i in range(4)]
    cases += [f.case(f"e{i:02d}", "execute_read", "execute", line=i) for i in range(3)]
    return cases


def _runs(
    tmp: Path, cases: list[Any], n: int = 3, *, config: Any = None, **options: Any
) -> tuple[dict[str, Any], Shards]:
    """The unsharded artifact and the ``n`` shard artifacts of one selection (as JSON round-trips them);
    ``options``: for ``fakes.options`` (other stages)."""
    project = f.FakeProject(config or f.config(tmp), tuple(cases))
    whole = json.loads(json.dumps(run(project, options=f.options(tmp, **options)).artifact))
    shards = []
    for i in range(1, n + 1):
        opts = dataclasses.replace(f.options(tmp, **options), shard=ShardSpec(i, n))
        shards.append(
            (tmp / f"qlab-shard-{i}-of-{n}.json", json.loads(json.dumps(run(project, options=opts).artifact)))
        )
    return whole, shards


def _shard(
    index: int, total: int, ids: list[str], *, commit: str | None = None, **fp: str
) -> tuple[Path, dict[str, Any]]:
    """A minimal shard artifact with the given cases, as far as the set checks read it."""
    fingerprint = {"config_digest": "sha256:c", "collection_digest": "sha256:k", "git_commit": commit, **fp}
    return Path(f"s{index}.json"), {
        "shard": {
            "index": index,
            "total": total,
            "selection_fingerprint": "sha256:set",
            "cases": case_manifest(ids),
        },
        "fingerprint": fingerprint,
        "cases": [{"case_id": i} for i in ids],
    }


def _set(parts: list[list[str]], *, total: int | None = None, commit: str | None = None) -> Shards:
    """A consistent set: shard i holds ``parts[i-1]``, the selection fingerprint is the union's."""
    total = total or len(parts)
    shards = [_shard(i, total, ids, commit=commit) for i, ids in enumerate(parts, start=1)]
    union = selection_fingerprint([i for ids in parts for i in ids], config_digest="sha256:c", commit=commit)
    for _, data in shards:
        data["shard"]["selection_fingerprint"] = union
    return shards


def _refused(shards: Shards) -> str:
    with pytest.raises(InputError) as caught:
        m.check_set(shards)
    return str(caught.value)


# ----------------------------------------------------------------------------------- the set: every shard once


def test_a_complete_set_gives_its_n() -> None:
    assert m.check_set(_set([["a"], ["b", "c"], ["d"]])) == 3


def test_a_set_of_one_shard_merges() -> None:
    """``--shard 1/1`` is a complete set (the first shard is the only one)."""
    assert m.check_set(_set([["a", "b"]])) == 1


def test_the_missing_last_shard_is_refused() -> None:
    """Rule: every shard 1..N — the last one included — must be there; N-1 shards never merge to a verdict."""
    shards = _set([["a"], ["b"], ["c"]])[:2]
    assert _refused(shards) == (
        "incomplete shard set: missing shard(s) 3/3; merge needs every shard 1..3 exactly once"
    )


def test_the_missing_first_shard_is_refused() -> None:
    assert _refused(_set([["a"], ["b"], ["c"]])[1:]) == (
        "incomplete shard set: missing shard(s) 1/3; merge needs every shard 1..3 exactly once"
    )


@pytest.mark.parametrize("index", [0, 3, -1])
def test_a_shard_out_of_range_is_refused_even_when_none_is_missing(index: int) -> None:
    """Rule: an index outside 1..N is refused on its own, also when 1..N are all present."""
    shards = _set([["a"], ["b"]])
    shards.append(_shard(index, 2, ["z"]))
    assert _refused(shards) == (
        f"incomplete shard set: out of range: {index}/2; merge needs every shard 1..2 exactly once"
    )


def test_missing_and_out_of_range_are_both_named() -> None:
    shards = _set([["a"], ["b"], ["c"]])
    shards[2][1]["shard"]["index"] = 5
    shards[1][1]["shard"]["index"] = 4
    assert _refused(shards) == (
        "incomplete shard set: missing shard(s) 2/3, 3/3; out of range: 4/3, 5/3; "
        "merge needs every shard 1..3 exactly once"
    )


@pytest.mark.parametrize(
    "shard", [None, "1/2", {"index": 1}, {"total": 2}, {"index": "1", "total": 2}, {"index": 1, "total": "2"}]
)
def test_a_result_that_is_not_a_shard_is_refused(shard: Any) -> None:
    """Both numbers must be there as integers: a shard with a total but no index (or the reverse) is not one."""
    shards = _set([["a"], ["b"]])
    shards[0][1]["shard"] = shard
    assert _refused(shards) == "s1.json: $.shard: not a shard result (run it with qlab run --shard i/N)"


def test_shards_that_disagree_on_n_are_refused() -> None:
    shards = _set([["a"], ["b"]])
    shards[1][1]["shard"]["total"] = 3
    assert _refused(shards) == "the shards disagree on the number of shards: s1.json: N=2, s2.json: N=3"


def test_a_shard_given_twice_is_refused_with_both_files() -> None:
    shards = _set([["a"], ["b"]])
    shards.append((Path("again.json"), copy.deepcopy(shards[1][1])))
    assert _refused(shards) == "shard 2/2 given more than once: s2.json, again.json"


@pytest.mark.parametrize(
    ("where", "key", "label"),
    [
        ("shard", "selection_fingerprint", "selection fingerprint (selected cases, config, commit)"),
        ("fingerprint", "config_digest", "config digest"),
        ("fingerprint", "collection_digest", "collection digest"),
    ],
)
def test_shards_of_different_runs_are_refused(where: str, key: str, label: str) -> None:
    shards = _set([["a"], ["b"]])
    shards[1][1][where][key] = "sha256:other"
    assert _refused(shards) == (
        f"the shards come from different runs: their {label} differs; re-run the whole matrix"
    )


def test_a_case_in_two_shards_is_refused() -> None:
    assert _refused(_set([["a", "b"], ["b"]])) == "case 'b' is in two shards: s1.json and s2.json"


def test_a_shard_without_its_manifest_is_refused() -> None:
    shards = _set([["a"], ["b"]])
    del shards[1][1]["shard"]["cases"]
    assert _refused(shards) == (
        "s2.json: $.shard.cases: no record of the cases this shard ran (a result of an older qlab?); "
        "re-run the shard with this qlab"
    )


@pytest.mark.parametrize("manifest", [{"count": 1}, {"digest": "sha256:x"}, ["count", "digest"]])
def test_a_shard_with_half_a_manifest_is_refused(manifest: Any) -> None:
    shards = _set([["a"], ["b"]])
    shards[0][1]["shard"]["cases"] = manifest
    assert "s1.json: $.shard.cases: no record of the cases this shard ran" in _refused(shards)


def test_a_shard_whose_cases_differ_from_its_manifest_is_refused() -> None:
    shards = _set([["a", "b"], ["c"]])
    shards[0][1]["cases"].pop()
    assert _refused(shards) == (
        "s1.json: its cases do not match the ones it ran ($.shard.cases: 2 case(s); the file holds 1, other ids): "
        "cases were removed or added after the run; re-run the shard"
    )


def test_a_case_swapped_for_another_with_the_same_count_is_refused() -> None:
    shards = _set([["a", "b"], ["c"]])
    shards[0][1]["cases"][1] = {"case_id": "x"}
    assert "s1.json: its cases do not match the ones it ran" in _refused(shards)


def test_cases_removed_with_their_manifest_rewritten_are_refused() -> None:
    """The shards together must be the selection the fingerprint was made from (its commit included)."""
    shards = _set([["a", "b"], ["c"]], commit="abc123")
    assert m.check_set(shards) == 2  # the commit counts in the fingerprint: the intact set merges
    shards[0][1]["cases"] = [{"case_id": "a"}]
    shards[0][1]["shard"]["cases"] = case_manifest(["a"])
    assert _refused(shards) == (
        "the shards' cases together (2) are not the selection they were run from (its fingerprint differs): a "
        "case was removed from or added to a shard file; re-run the whole matrix"
    )


def test_the_fingerprint_is_checked_against_the_recorded_commit() -> None:
    """A set fingerprinted at one commit does not merge when the shards say they ran at another."""
    shards = _set([["a"], ["b"]], commit="abc123")
    for _, data in shards:
        data["fingerprint"]["git_commit"] = "def456"
    assert "are not the selection they were run from" in _refused(shards)


# ----------------------------------------------------------------------------------- finding the files


def test_collect_reads_files_folders_and_globs_once_each(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    (folder / "deep").mkdir(parents=True)
    names = ["qlab-shard-2-of-2.json", "qlab-shard-1-of-2.json", "other.json"]
    for name in names:
        (folder / name).write_text("{}", encoding="utf-8")
    (folder / "deep" / "qlab-shard-9-of-9.json").write_text("{}", encoding="utf-8")
    one, two = folder / "qlab-shard-1-of-2.json", folder / "qlab-shard-2-of-2.json"
    # a folder gives its shard files (sorted, nothing else), a file is taken as is, duplicates once
    assert m.collect([str(folder), str(folder / "other.json"), str(one)]) == [one, two, folder / "other.json"]
    # a glob is expanded (recursively with **), in sorted order
    assert m.collect([str(folder / "**" / "qlab-shard-*.json")]) == [
        folder / "deep" / "qlab-shard-9-of-9.json",
        one,
        two,
    ]
    assert m.collect([str(folder / "qlab-shard-?-of-2.json")]) == [one, two]


def test_collect_says_what_it_found_nothing_in(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError) as caught:
        m.collect([str(empty), str(tmp_path / "*.nothing")])
    message = str(caught.value)
    assert message.startswith("no shard results found in") and f"{empty}, {tmp_path / '*.nothing'}" in message
    assert "qlab-shard-*-of-*.json" in message
    with pytest.raises(InputError) as caught:
        m.collect([str(tmp_path / "gone.json")])
    assert str(caught.value) == f"{tmp_path / 'gone.json'}: no such file or folder"


# ----------------------------------------------------------------------------------- the merged artifact


def _comparable_case(case: dict[str, Any]) -> dict[str, Any]:
    return case


def test_the_merged_cases_and_decision_are_the_unsharded_run(tmp_path: Path) -> None:
    whole, shards = _runs(tmp_path, _cases())
    merged = m.merge(shards)
    assert merged["cases"] == whole["cases"]
    assert merged["decision"] == whole["decision"]
    assert merged["metrics"] == whole["metrics"]
    assert [(g["name"], g["status"], g["thresholds"], g["failures"]) for g in merged["gates"]] == [
        (g["name"], g["status"], g["thresholds"], g["failures"]) for g in whole["gates"]
    ]


def test_a_blocked_merge_rolls_later_cases_back_as_the_unsharded_run_does(tmp_path: Path) -> None:
    """A gate that blocks on the merged cases stops the later gates; their cases are ``blocked`` there, exactly
    as one unsharded run reports them (never left ``passed`` from the shard that ran on)."""
    cases = _cases()
    cases[1] = f.case("s01", "search_core", "search", "absent:x", line=1)
    whole, shards = _runs(tmp_path, cases)
    assert whole["decision"]["verdict"] == "block"
    merged = m.merge(shards)
    assert merged["cases"] == whole["cases"]
    assert merged["decision"] == whole["decision"]
    statuses = {g["name"]: g["status"] for g in merged["gates"]}
    assert statuses == {
        "build": "passed",
        "search": "blocked",
        "select": "skipped",
        "plan": "skipped",
        "execute": "skipped",
        "learn": "passed",  # it observes the blocked run
    }
    later = next(g for g in merged["gates"] if g["name"] == "plan")
    assert later["reasons"] == ["blocked by gate search"]
    plan_case = next(c for c in merged["cases"] if c["case_id"] == "p00")
    assert (plan_case["status"], plan_case["failure"]) == (
        "blocked",
        {
            "stage": "search",
            "reason": "blocked_by_stage",
            "message": "the search gate blocked the run; this case never ran",
        },
    )


def test_a_gate_that_could_not_decide_stops_the_merge_as_an_error(tmp_path: Path) -> None:
    cases = _cases()
    cases[-1] = f.case("e02", "execute_read", "execute", "down:x", line=2)
    cases[5] = f.case("s05", "search_core", "search", "t", line=5)
    whole, shards = _runs(tmp_path, cases)
    merged = m.merge(shards)
    assert merged["decision"] == whole["decision"]
    assert merged["decision"]["verdict"] == "error"
    assert merged["cases"] == whole["cases"]
    learn = next(g for g in merged["gates"] if g["name"] == "learn")
    assert (learn["status"], learn["reasons"]) == (
        "skipped",
        ["stopped: gate execute could not decide (an infrastructure fault)"],
    )


def test_an_error_gate_rolls_later_cases_back_as_skipped(tmp_path: Path) -> None:
    """Cases of a gate after one that could not decide never ran there: ``skipped`` (``stopped_by_error``)."""
    gates = [
        *f.DEFAULT_GATES[:4],
        f.DEFAULT_GATES[4],
        dataclasses.replace(f.DEFAULT_GATES[4], name="late", suites=("late_read",)),
    ]
    suites = {**f.config(tmp_path).suites}
    suites["late_read"] = dataclasses.replace(suites["execute_read"], name="late_read")
    config = dataclasses.replace(f.config(tmp_path), gates=tuple(gates), suites=suites)
    cases = [
        *_cases(),
        f.case("l00", "late_read", "execute", line=1),
        f.case("l01", "late_read", "execute", line=2),
    ]
    cases[-3] = f.case("e02", "execute_read", "execute", "down:x", line=2)
    whole, shards = _runs(tmp_path, cases, config=config)
    merged = m.merge(shards)
    assert merged["decision"] == whole["decision"]
    late = [c for c in merged["cases"] if c["suite"] == "late_read"]
    assert {(c["status"], c["failure"]["reason"], c["failure"]["stage"]) for c in late} == {
        ("skipped", "stopped_by_error", "execute")
    }
    assert late[0]["failure"]["message"] == "the execute gate could not decide; this case never ran"


def test_a_case_that_failed_in_its_own_gate_before_the_block_keeps_its_failure(tmp_path: Path) -> None:
    """Only the cases of the gates after the blocking one are rolled back; a plan case that failed at its own
    plan gate before the execute gate blocked keeps its own failure."""
    cases = _cases()
    cases[9] = f.case("p00", "plan_e2e", "plan", "unsat:x", line=0)
    cases[-1] = f.case("e02", "execute_read", "execute", "assert:x", line=2)
    gates = [
        *f.DEFAULT_GATES[:3],
        dataclasses.replace(f.DEFAULT_GATES[3], max_failures=1),
        *f.DEFAULT_GATES[4:],
    ]
    config = dataclasses.replace(f.config(tmp_path), gates=tuple(gates))
    whole, shards = _runs(tmp_path, cases, config=config)
    merged = m.merge(shards)
    assert merged["cases"] == whole["cases"]
    p00 = next(c for c in merged["cases"] if c["case_id"] == "p00")
    assert (p00["status"], p00["failure"]["reason"]) == ("failed", "required_fields_unsatisfied")


def test_a_build_blocked_in_any_shard_blocks_the_merge(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases())
    build = shards[1][1]["gates"][0]
    build.update(
        status="blocked",
        reasons=["schema_coverage 0.5 breaches >= 0.9", "schema_coverage 0.5 breaches >= 0.9"],
    )
    merged = m.merge(shards)
    record = merged["gates"][0]
    assert (record["status"], record["reasons"]) == ("blocked", ["schema_coverage 0.5 breaches >= 0.9"])
    assert merged["decision"]["verdict"] == "block"
    assert {c["status"] for c in merged["cases"]} == {"blocked"}
    assert {c["failure"]["stage"] for c in merged["cases"]} == {"build"}


def test_a_gate_skipped_in_every_shard_stays_skipped_with_its_reason(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases())
    for _, data in shards:
        data["gates"][2].update(status="skipped", reasons=["no case selected"])
    merged = m.merge(shards)
    assert merged["gates"][2]["status"] == "skipped" and merged["gates"][2]["reasons"] == ["no case selected"]
    # the gates after it still judge: a skipped gate blocks nothing
    assert [g["status"] for g in merged["gates"][3:]] == ["passed", "passed", "passed"]


def test_the_merged_run_says_where_it_came_from(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases())
    stamps = [("2026-01-01T10:00:05Z", "2026-01-01T10:00:09Z"), ("2026-01-01T10:00:00Z", "2026-01-01T10:00:02Z"),
              ("2026-01-01T10:00:03Z", "2026-01-01T10:00:10.5Z")]  # fmt: skip
    for (_, data), (start, end), w in zip(shards, stamps, (["w1", "w2"], ["w2"], ["w3"]), strict=True):
        data.update(started_at=start, ended_at=end, warnings=w)
        data["provenance"]["dataset"]["files"] = [
            {"path": "b.yaml", "cases": 2, "sha256": "x"},
            {"path": "a.yaml", "cases": 1, "sha256": "y"},
        ]
        data["prerun"] = [
            *data["prerun"],
            {"guard": "extra", "stage": "pre-run", "passed": True, "mode": "warn", "message": "m"},
        ]
    reordered = [shards[2], shards[0], shards[1]]
    merged = m.merge(reordered)
    assert merged["started_at"] == "2026-01-01T10:00:00Z" and merged["ended_at"] == "2026-01-01T10:00:10.5Z"
    assert merged["duration_ms"] == 10500.0
    assert merged["shard"] == {
        "index": 1,
        "total": 1,
        "selection_fingerprint": shards[0][1]["shard"]["selection_fingerprint"],
        "merged_from": [str(p) for p, _ in shards],  # in shard order, whatever the order given
    } | ({"differed": merged["shard"]["differed"]} if "differed" in merged["shard"] else {})
    assert merged["run_id"].endswith("-merged-3")
    assert merged["warnings"] == ["w1", "w2", "w3"]
    assert merged["provenance"]["dataset"]["files"] == [
        {"path": "a.yaml", "cases": 3, "sha256": "y"},
        {"path": "b.yaml", "cases": 6, "sha256": "x"},
    ]
    assert merged["provenance"]["run_configuration"]["shard"] == "merged 1..3"
    assert merged["provenance"]["run_configuration"]["engine"] == "builtin"
    assert [g["guard"] for g in merged["prerun"]].count("extra") == 1
    assert merged["fingerprint"] == shards[0][1]["fingerprint"] and merged["project"] == "fake"
    assert merged["qlab_version"] == shards[0][1]["qlab_version"]
    assert merged["suites"]["search_core"]["cadence"] == "every_search_change"


def test_the_merged_duration_falls_back_to_the_longest_shard(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases())
    for (_, data), ms in zip(shards, (12.5, 30.25, None), strict=True):
        data.update(started_at="", ended_at="", duration_ms=ms)
    assert m.merge(shards)["duration_ms"] == 30.25


def test_stage_evidence_adds_up_over_the_shards(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases())
    for (_, data), ms in zip(shards, (1.25, 2.5, 0.0005), strict=True):
        data["stages"]["search"]["duration_ms"] = ms
    shards[2][1]["stages"]["search"]["duration_ms"] = None
    shards[1][1]["stages"]["search"]["details"]["schema"] = {"checked": 3, "valid": 1}
    merged = m.merge(shards)
    search = merged["stages"]["search"]
    assert search["duration_ms"] == 3.75
    checked = sum(d["stages"]["search"]["details"]["schema"]["checked"] for _, d in shards)
    valid = sum(d["stages"]["search"]["details"]["schema"]["valid"] for _, d in shards)
    assert search["details"]["schema"] == {"checked": checked, "valid": valid}
    assert search["metrics"]["schema_validity"] == round(valid / checked, 6)
    assert (
        shards[0][1]["stages"]["search"]["details"]["schema"]["checked"] < checked
    )  # the shard is untouched


def test_a_stage_figure_stop_is_judged_on_all_cases_not_the_first_shard(tmp_path: Path) -> None:
    """Rule: a ``<metric>_below`` stop is judged on the merged run's figure. Shard 1 alone has top_1 1.0, the
    whole selection 0.33: the unsharded run blocks, so the merge must too (it passed, exit 0)."""
    gates = list(f.DEFAULT_GATES)
    gates[1] = dataclasses.replace(gates[1], thresholds=(), stop_if=(f.StopCondition("top_1_below", 0.5),))
    config = dataclasses.replace(f.config(tmp_path), gates=tuple(gates))
    cases = [
        f.case(f"s{i:02d}", "search_core", "search", "second:x" if i % 3 else "t", line=i) for i in range(12)
    ]
    whole, shards = _runs(tmp_path, cases, config=config)
    assert whole["decision"]["verdict"] == "block"
    assert shards[0][1]["stages"]["search"]["metrics"]["top_1"] == 1.0  # the scenario: shard 1 looks perfect
    merged = m.merge(shards)
    assert merged["stages"]["search"]["metrics"]["top_1"] == whole["stages"]["search"]["metrics"]["top_1"]
    assert merged["decision"]["verdict"] == "block"


def test_collect_keeps_what_came_before_a_folder_or_a_glob(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    folder.mkdir()
    first, second = tmp_path / "first.json", folder / "qlab-shard-1-of-1.json"
    for path in (first, second):
        path.write_text("{}", encoding="utf-8")
    assert m.collect([str(first), str(folder)]) == [first, second]
    assert m.collect([str(first), str(folder / "qlab-shard-*.json")]) == [first, second]
    # only * ? [ make a pattern: any other missing name is a missing file
    with pytest.raises(InputError) as caught:
        m.collect([str(tmp_path / "X-gone.json")])
    assert str(caught.value) == f"{tmp_path / 'X-gone.json'}: no such file or folder"


def test_shards_that_record_their_own_config_digest_merge_whatever_their_full_config() -> None:
    """Rule: when every shard records ``shard.config_digest`` (the config with the environments' addresses left
    out), that digest is compared and the selection fingerprint is checked with it: runners whose environments
    listen elsewhere (their full config digests differ) still merge."""
    shards = _set([["a"], ["b"]])
    for (_, data), full in zip(shards, ("sha256:dev-a", "sha256:dev-b"), strict=True):
        data["shard"]["config_digest"] = "sha256:c"
        data["fingerprint"]["config_digest"] = full
    assert m.check_set(shards) == 2
    shards[1][1]["shard"]["config_digest"] = "sha256:other"
    assert _refused(shards) == (
        "the shards come from different runs: their config digest differs; re-run the whole matrix"
    )


def test_merged_shards_come_in_index_order_whatever_their_file_names(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases(), n=2)
    renamed = [(tmp_path / "z.json", shards[0][1]), (tmp_path / "a.json", shards[1][1])]
    merged = m.merge(renamed)
    assert merged["shard"]["merged_from"] == [str(tmp_path / "z.json"), str(tmp_path / "a.json")]


def test_a_merge_with_exit_zero_is_advisory(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases(), n=2)
    assert m.merge(shards, exit_zero=True)["decision"]["advisory"] is True
    assert m.merge(shards)["decision"]["advisory"] is False


def test_the_merged_run_keeps_the_run_level_sections_of_its_shards(tmp_path: Path) -> None:
    """The sections every shard of one run shares are the merged run's, as written (the schema version is this
    qlab's); a dataset file without a case count counts none; the dataset's other fields are kept."""
    _, shards = _runs(tmp_path, _cases(), n=2)
    for _, data in shards:
        data.update(
            skipped_suites=["nightly"],
            archived_cases=[{"case_id": "old", "suite": "search_core"}],
            target_version="v2",
            readiness={"verdict": "ready", "schema_coverage": 0.9},
        )
        data["provenance"]["dataset"]["root"] = "cases/"
        data["provenance"]["dataset"]["files"] = [{"path": "c.yaml", "sha256": "z"}]
    merged = m.merge(shards)
    assert merged["schema_version"] == m.artifact.SCHEMA_VERSION
    assert (merged["skipped_suites"], merged["archived_cases"], merged["target_version"], merged["readiness"]) == (
        ["nightly"], [{"case_id": "old", "suite": "search_core"}], "v2", {"verdict": "ready", "schema_coverage": 0.9}
    )  # fmt: skip
    assert merged["provenance"]["dataset"]["root"] == "cases/"
    assert merged["provenance"]["dataset"]["files"] == [{"path": "c.yaml", "sha256": "z", "cases": 0}]


@pytest.mark.parametrize(
    ("stamps", "durations", "expected"),
    [
        ((("2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"),) * 2, (5.0, 5.0), 0.0),  # same instant: no time
        ((("2026-01-01T10:00:00Z", "2026-01-01T10:00:01.234567Z"),) * 2, (5.0, 5.0), 1234.567),
        ((("", ""), ("", "")), (0.12345, None), 0.123),  # no times: the longest shard, a missing one as 0
        # a shard that recorded no times leaves the span unknown: the longest shard
        (((None, None), ("2026-01-01T10:00:00Z", "2026-01-01T10:00:01Z")), (0.25, 0.5), 0.5),
    ],
)
def test_the_merged_duration_spans_the_shards_to_the_microsecond(
    tmp_path: Path, stamps: Any, durations: Any, expected: float
) -> None:
    _, shards = _runs(tmp_path, _cases(), n=2)
    for (_, data), (start, end), ms in zip(shards, stamps, durations, strict=True):
        data.update(started_at=start, ended_at=end, duration_ms=ms)
        if start is None:
            del data["started_at"], data["ended_at"]
    merged = m.merge(shards)
    assert merged["duration_ms"] == expected
    assert merged["started_at"] == min(s or "" for s, _ in stamps)
    assert merged["ended_at"] == max(e or "" for _, e in stamps)


def test_a_case_that_failed_at_the_blocking_gate_keeps_its_failure_though_later_gates_judge_its_suite(
    tmp_path: Path,
) -> None:
    """Rule: a case is rolled back only where it never ran. A plan case whose suite the search gate judges too
    failed at search; the search gate blocks: the case keeps its own search failure (as the unsharded run reports
    it), though the select and plan gates after the block also judge its suite."""
    cases = _cases()
    cases[9] = f.case("p00", "plan_e2e", "plan", "absent:x", line=0)
    gates = list(f.DEFAULT_GATES)
    gates[1] = dataclasses.replace(gates[1], suites=("search_core", "plan_e2e"))
    config = dataclasses.replace(f.config(tmp_path), gates=tuple(gates))
    whole, shards = _runs(tmp_path, cases, config=config)
    assert whole["decision"]["verdict"] == "block"
    merged = m.merge(shards)
    assert merged["cases"] == whole["cases"]
    p00 = next(c for c in merged["cases"] if c["case_id"] == "p00")
    assert (p00["status"], p00["failure"]["stage"], p00["failure"]["reason"]) == (
        "failed", "search", "expected_target_absent"
    )  # fmt: skip
    assert [c["status"] for c in merged["cases"] if c["suite"] == "plan_e2e"] == ["failed", *["blocked"] * 3]


def _plan_case_failing_at_select(tmp_path: Path) -> tuple[list[Any], Any]:
    """The cases with p00 a plan case whose selection goes wrong, and a config whose select gate tolerates one
    failure and whose plan gate has no thresholds."""
    cases = _cases()
    cases[9] = f.case("p00", "plan_e2e", "plan", "wrong:x", line=0)
    gates = list(f.DEFAULT_GATES)
    gates[2] = dataclasses.replace(gates[2], thresholds=(), max_failures=1)
    gates[3] = dataclasses.replace(gates[3], thresholds=())
    return cases, dataclasses.replace(f.config(tmp_path), gates=tuple(gates))


def test_a_case_charged_to_an_earlier_gate_is_not_charged_again_in_the_merge(tmp_path: Path) -> None:
    """Rule 2 in a merge: a plan case that failed at select is the select gate's (which tolerates one); the plan
    gate, judging the same suite later, does not answer for it again, as in the unsharded run."""
    cases, config = _plan_case_failing_at_select(tmp_path)
    whole, shards = _runs(tmp_path, cases, config=config)
    merged = m.merge(shards)
    assert [(g["name"], g["status"]) for g in merged["gates"]] == [
        (g["name"], g["status"]) for g in whole["gates"]
    ]
    assert whole["decision"]["verdict"] == merged["decision"]["verdict"] == "pass"


def _execute_reporting_a_stop(ctx: Any, cases: Any, results: Any) -> Any:
    """The fake execute, reporting a stop no case's failure shows (the stage's own finding)."""
    report = f.FakeExecute()(ctx, cases, results)
    report.stops.append(f.StopHit("auth_not_ready", (), "the token endpoint refused every request"))
    return report


def test_a_stop_a_stage_reported_without_cases_blocks_the_merge_too(tmp_path: Path) -> None:
    whole, shards = _runs(tmp_path, _cases(), stages={"execute": _execute_reporting_a_stop})
    merged = m.merge(shards)
    execute = next(g for g in merged["gates"] if g["name"] == "execute")
    assert execute["reasons"] == ["stop_if auth_not_ready: the token endpoint refused every request"]
    assert merged["decision"] == whole["decision"] and whole["decision"]["verdict"] == "block"


def test_a_one_shard_set_keeps_a_gate_it_skipped(tmp_path: Path) -> None:
    _, shards = _runs(tmp_path, _cases(), n=1)
    shards[0][1]["gates"][2].update(status="skipped", reasons=["no case selected"])
    merged = m.merge(shards)
    assert (merged["gates"][2]["status"], merged["gates"][2]["reasons"]) == ("skipped", ["no case selected"])


def test_the_merged_artifact_has_the_unsharded_sections_in_their_order(tmp_path: Path) -> None:
    whole, shards = _runs(tmp_path, _cases(), n=2)
    assert list(m.merge(shards)) == list(whole)


def test_a_gate_skipped_in_every_shard_answers_for_no_case(tmp_path: Path) -> None:
    """Rule 2 in a merge: a gate that did not run judges nothing, so a case that failed at its stage is charged to
    the next gate of its suite (here the plan gate, which tolerates none)."""
    cases, config = _plan_case_failing_at_select(tmp_path)
    _, shards = _runs(tmp_path, cases, config=config)
    for _, data in shards:
        data["gates"][2].update(status="skipped", reasons=["no case selected"])
    plan = m.merge(shards)["gates"][3]
    assert (plan["status"], [c["case_id"] for f_ in plan["failures"] for c in f_["cases"]]) == (
        "blocked",
        ["p00"],
    )


def test_a_case_that_failed_at_build_keeps_its_failure_when_a_later_gate_blocks(tmp_path: Path) -> None:
    cases = _cases()
    cases[1] = f.case("s01", "search_core", "search", "absent:x", line=1)
    _, shards = _runs(tmp_path, cases)
    built = {"stage": "build", "reason": "tool_not_found", "message": "no such tool"}
    for _, data in shards:
        for case in data["cases"]:
            if case["case_id"] == "p01":
                case.update(status="failed", failure=built)
    merged = m.merge(shards)
    assert merged["decision"]["verdict"] == "block"
    p01 = next(c for c in merged["cases"] if c["case_id"] == "p01")
    assert (p01["status"], p01["failure"]) == ("failed", built)


def test_a_case_a_shard_rolled_back_at_a_later_stage_is_rolled_back_where_the_merged_run_stopped(
    tmp_path: Path,
) -> None:
    """A shard blocked at plan (max_failures is judged by every shard) rolled its execute cases back to plan; the
    merged run stops earlier, at search (a threshold judged on all cases): those cases are rolled back to search,
    as the unsharded run reports them."""
    cases = _cases()
    cases[1] = f.case("s01", "search_core", "search", "absent:x", line=1)
    cases[9] = f.case("p00", "plan_e2e", "plan", "unsat:x", line=0)
    gates = list(f.DEFAULT_GATES)
    gates[1] = dataclasses.replace(gates[1], stop_if=())
    gates[3] = dataclasses.replace(gates[3], thresholds=(), max_failures=0)
    config = dataclasses.replace(f.config(tmp_path), gates=tuple(gates))
    whole, shards = _runs(tmp_path, cases, config=config)
    assert any(g["status"] == "blocked" and g["name"] == "plan" for _, d in shards for g in d["gates"])
    merged = m.merge(shards)
    assert [g["status"] for g in merged["gates"]][:2] == ["passed", "blocked"]
    assert merged["cases"] == whole["cases"]
    assert {c["failure"]["stage"] for c in merged["cases"] if c["suite"] == "execute_read"} == {"search"}

"""``qlab promote`` in process: exit 0 promote / 1 block / 2 not comparable, Markdown and JSON reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, make_project, search_case, write
from qlab.cli import main


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


# a required suite whose one case passes in both runs: a run of required: false suites only judges nothing, and
# is an ERROR (docs/decision.md), which these hand-made PASS artifacts must not claim to be
KEPT = {"kept": {"mode": "search", "category": "flow", "required": True, "metrics": {}, "counts": {}}}


def _kept() -> dict[str, Any]:
    return search_case("k-1", suite="kept", rank=1)


def _pair(tmp_path: Path, *, required: bool = True) -> tuple[Path, Path]:
    suites = {
        "search_core": {
            "mode": "search",
            "category": "flow",
            "required": required,
            "metrics": {},
            "counts": {},
        },
        **({} if required else KEPT),
    }
    kept = [] if required else [_kept()]
    base = artifact(
        [search_case("s-1", rank=None), search_case("s-2", rank=1), *kept],
        suites=suites,
        collection="sha256:a",
    )
    cand = artifact(
        [search_case("s-1", rank=1), search_case("s-2", rank=None), *kept],
        suites=suites,
        collection="sha256:b",
    )
    return write(tmp_path / "base.json", base), write(tmp_path / "cand.json", cand)


def _args(base: Path, cand: Path, *extra: str) -> list[str]:
    return ["promote", "--baseline", str(base), "--candidate", str(cand), *extra]


@pytest.fixture(autouse=True)
def _no_config_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no qlab.yaml upwards: the seed defaults apply


def test_block_on_a_required_regression_with_both_sides_in_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = _pair(tmp_path)
    code, out, err = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 1, out + err
    assert "# Promotion: `alias_or_semantic_metadata` — BLOCK (exit 1)" in out
    assert "## Regressed" in out and "## Fixed" in out
    assert "required case s-2 (search_core) regressed" in out


def test_promote_when_the_swap_is_in_a_non_required_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = _pair(tmp_path, required=False)
    code, out, err = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata", "--json"), capsys)
    assert code == 0, out + err
    report = json.loads(out)
    assert report["verdict"] == "promote"
    assert [c["case_id"] for c in report["cases"]["fixed"]] == ["s-1"]
    assert report["cases"]["regressed"][0]["baseline"]["evidence"]["search"]["hit"] is True


def test_json_to_a_file_and_markdown_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _pair(tmp_path)
    code, out, err = _cli(
        _args(base, cand, "--change", "alias_or_semantic_metadata", "--json-out", "report.json"), capsys
    )
    assert (code, err) == (1, "")
    assert json.loads((tmp_path / "report.json").read_text())["exit_code"] == 1
    assert out.startswith("# Promotion")


def test_json_is_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _pair(tmp_path)
    code, out, err = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata", "--json"), capsys)
    assert code == 1 and json.loads(out)["exit_code"] == 1, err
    # a file after --json is a usage error (exit 2): --json-out FILE writes one
    code, _, err = _cli(
        _args(base, cand, "--change", "alias_or_semantic_metadata", "--json", "old.json"), capsys
    )
    assert code == 2 and "unexpected extra argument (old.json)" in err
    assert not (tmp_path / "old.json").exists()


def test_incomparable_runs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rule = "promotion:\n  alias_or_semantic_metadata:\n    same: [case_set]\n"
    config = make_project(tmp_path / "p", extra=rule)
    base, _ = _pair(tmp_path)
    other = write(tmp_path / "other.json", artifact([search_case("s-9")]))
    args = _args(base, other, "--change", "alias_or_semantic_metadata", "--config", str(config))
    code, out, err = _cli(args, capsys)
    assert code == 2
    assert "REFUSED" in out
    assert "error: the runs cannot be compared: same: case_set: only the baseline has s-1, s-2" in err


def test_by_default_removed_required_cases_block_and_a_new_one_is_judged_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = _pair(tmp_path)
    other = write(tmp_path / "other.json", artifact([search_case("s-9")]))
    code, out, _ = _cli(_args(base, other, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 1, out
    assert "required case s-1 (search_core) no longer runs in the candidate" in out
    assert "New and passing (only in the candidate)" in out


def test_the_qlab_yaml_rule_replaces_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rule = "promotion:\n  alias_or_semantic_metadata:\n    same: [cases, collection]\n"
    config = make_project(tmp_path / "p", extra=rule)
    base, cand = _pair(tmp_path)
    code, out, _ = _cli(
        _args(base, cand, "--change", "alias_or_semantic_metadata", "--config", str(config)), capsys
    )
    assert code == 2
    assert "fingerprint.collection_digest differs" in out


def test_learning_promotion_reads_the_accepted_suggestions_of_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_project(tmp_path / "p")
    base, cand = _pair(tmp_path, required=False)
    args = _args(base, cand, "--change", "learning_suggestion_promotion", "--config", str(config))
    code, out, _ = _cli(args, capsys)
    assert code == 1, out
    assert "no suggestion accepted from the baseline run (run-1)" in out
    store = tmp_path / "p" / ".qlab" / "suggestions.json"
    store.parent.mkdir(parents=True)
    shadow = {"cases": 1, "delta": {"hit_at_k": 1.0}, "improved": ["s-1"], "regressed": []}
    accepted = {"id": "sg-1", "status": "accepted", "run_id": "run-1", "kind": "alias", "shadow": shadow}
    store.write_text(json.dumps({"version": 1, "suggestions": [accepted]}), encoding="utf-8")
    code, out, _ = _cli(args, capsys)
    # the scrub check is the only evidence left missing: the hand-made artifacts ran none
    assert "shadow_improves | pass" in out, out
    store.write_text("{", encoding="utf-8")
    code, _, err = _cli(args, capsys)
    assert code == 2 and "suggestions file is not valid JSON" in err


def test_unknown_change_type_and_broken_artifact_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = _pair(tmp_path)
    code, _, err = _cli(_args(base, cand, "--change", "selector_overide_policy"), capsys)
    assert code == 2 and "Did you mean 'selector_override_policy'?" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"cases": [\n  {"case_id": 1}', encoding="utf-8")
    code, _, err = _cli(_args(broken, cand, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 2 and f"{broken}:2:" in err and "not valid JSON" in err
    wrong: dict[str, Any] = {"cases": [{"case_id": "x"}]}
    code, _, err = _cli(
        _args(write(tmp_path / "w.json", wrong), cand, "--change", "alias_or_semantic_metadata"), capsys
    )
    assert code == 2 and "$.cases[0].status: missing or not a string" in err


def test_the_step_summary_gets_the_report_capped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    suites = {
        "s": {"mode": "search", "category": "flow", "required": False, "metrics": {}, "counts": {}},
        **KEPT,
    }
    long = "x" * 150
    misses = [search_case(f"c-{i}-{long}", suite="s", rank=None) for i in range(3000)]
    hits = [search_case(f"c-{i}-{long}", suite="s", rank=1) for i in range(3000)]
    base = artifact([*misses, _kept()], suites=suites)
    cand = artifact([*hits, _kept()], suites=suites)
    args = _args(
        write(tmp_path / "a.json", base),
        write(tmp_path / "b.json", cand),
        "--change",
        "alias_or_semantic_metadata",
    )
    code, out, _ = _cli(args, capsys)
    assert code == 0
    assert "… and 2950 more (see the JSON report, `--json`)." in out
    assert summary.read_text(encoding="utf-8").startswith("# Promotion")


def test_a_report_over_1_mib_is_cut_with_a_notice() -> None:
    from qlab.commands.promote import _capped

    text = "# Promotion\n" + "é" * (1024 * 1024)
    capped = _capped(text)
    assert len(capped.encode("utf-8")) <= 1024 * 1024
    assert capped.startswith("# Promotion\n") and capped.endswith("the JSON report has everything.\n")
    assert _capped("short") == "short"


def test_the_json_report_is_made_only_when_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two 100,000-case runs: the JSON report took 2.4 s of a Markdown-only promotion's 22."""
    import qlab.commands.promote as promote

    base, cand = _pair(tmp_path)
    made: list[int] = []
    dumps = json.dumps

    def counted(value: Any, **kwargs: Any) -> str:
        made.append(1)
        return dumps(value, **kwargs)

    monkeypatch.setattr(promote.json, "dumps", counted)
    code, out, _ = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 1 and out.startswith("# Promotion:") and made == []
    code, out, _ = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata", "--json"), capsys)
    assert code == 1 and json.loads(out)["verdict"] == "block" and made == [1]


def test_a_forged_candidate_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rule (issue 35, 8): promote re-derives the decision and metrics from the case records: a candidate whose
    failing case was edited to passed, or whose stored metrics were raised, is refused (exit 2,
    artifact_inconsistent), whatever the comparison would say."""
    base, cand = _pair(tmp_path, required=False)
    data = json.loads(cand.read_text())
    data["cases"][1]["status"] = "passed"  # s-2 missed its target; its failure record stays
    cand.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 2, out + err
    assert (
        "cand.json: refused (artifact_inconsistent)" in err
        and "case s-2: passed, yet it records a failure" in err
    )
    data = json.loads(cand.read_text())
    data["cases"][1]["status"] = "failed"
    data["decision"] = {"verdict": "block", "reasons": ["gate search blocked"], "exit_code": 1}
    cand.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = _cli(_args(base, cand, "--change", "alias_or_semantic_metadata"), capsys)
    assert code == 2 and "its decision says BLOCK (exit 1), its cases give PASS (exit 0)" in err, out + err

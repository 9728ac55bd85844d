"""``qlab propose-case`` and ``qlab accept-case`` in process: failure → proposal → regression suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.builders import artifact, make_project, search_case, write
from qlab.cli import main
from qlab.project import load_project


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_propose_then_accept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = make_project(tmp_path, aliases="{}\n")
    failing = write(
        tmp_path / "r1.json", artifact([search_case("s-parcel", rank=None)], collection="sha256:a")
    )
    fixed = write(tmp_path / "r2.json", artifact([search_case("s-parcel", rank=2)], collection="sha256:b"))
    code, out, err = _cli(
        [
            "propose-case",
            "--result",
            str(failing),
            "--case",
            "s-parcel",
            "--corrected",
            str(fixed),
            "--config",
            str(config),
        ],
        capsys,
    )
    assert code == 0, err
    proposals = list((tmp_path / "gates" / "proposals").glob("prop-*.json"))
    assert len(proposals) == 1
    assert "key difference: failed at search/expected_target_absent" in out
    assert json.loads(proposals[0].read_text())["status"] == "pending_review"

    # the quality gate: the case does not pass on the project as it is, so it cannot gate yet
    code, out, err = _cli(
        ["accept-case", str(proposals[0]), "--by", "alice", "--config", str(config)], capsys
    )
    assert code == 2 and "case reg-s-parcel cannot gate yet: the sandbox replay fails at search" in err, err
    assert [c.id for c in load_project(config).cases_for("regression")] == ["r-health"]  # only the seed case
    # a draft runs and is reported, never gates
    code, out, err = _cli(
        ["accept-case", str(proposals[0]), "--by", "alice", "--status", "draft", "--config", str(config)],
        capsys,
    )
    assert code == 0, err
    assert "case reg-s-parcel joins suite 'regression' as a draft" in out
    cases = {c.id: c for c in load_project(config).cases_for("regression")}
    assert list(cases) == ["reg-s-parcel", "r-health"]
    case = cases["reg-s-parcel"]
    assert (case.status, case.trace["case_id"]) == ("draft", "s-parcel")
    # the fix (a reviewed alias) lands; the draft becomes active once its replay passes
    (tmp_path / "gates" / "aliases.yaml").write_text(
        "trackDelivery: [where is my parcel]\n", encoding="utf-8"
    )
    code, out, err = _cli(
        [
            "accept-case",
            "--case",
            "reg-s-parcel",
            "--status",
            "active",
            "--by",
            "bob",
            "--config",
            str(config),
        ],
        capsys,
    )
    assert code == 0, err
    assert "case reg-s-parcel: draft → active" in out
    case = {c.id: c for c in load_project(config).cases_for("regression")}["reg-s-parcel"]
    assert case.status == "active"
    assert "active since" in (tmp_path / "gates" / "regression" / "reg-s-parcel.yaml").read_text()


def test_proposing_a_passing_case_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = make_project(tmp_path)
    passing = write(tmp_path / "r.json", artifact([search_case("s-parcel", rank=1)]))
    code, _, err = _cli(
        ["propose-case", "--result", str(passing), "--case", "s-parcel", "--config", str(config)], capsys
    )
    assert code == 2 and "only a real failure becomes a regression proposal" in err
    assert not (tmp_path / "gates" / "proposals").exists()


def test_the_result_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = make_project(tmp_path)
    failing = write(tmp_path / "r1.json", artifact([search_case("s-parcel", rank=None)]))
    code, _, err = _cli(["propose-case", "--case", "s-parcel", "--config", str(config)], capsys)
    assert code == 2 and "Missing option '--result'" in err
    code, _, err = _cli(  # the spelling of an earlier draft is gone: one option per concept
        ["propose-case", "--from", str(failing), "--case", "s-parcel", "--config", str(config)], capsys
    )
    assert code == 2 and "No such option '--from'" in err
    assert not (tmp_path / "gates" / "proposals").exists()


def test_a_reviewer_rejects_a_proposal_and_archives_a_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_project(tmp_path)
    failing = write(tmp_path / "r1.json", artifact([search_case("s-parcel", rank=None)]))
    code, _, err = _cli(
        ["propose-case", "--result", str(failing), "--case", "s-parcel", "--config", str(config)], capsys
    )
    assert code == 0, err
    (proposal,) = (tmp_path / "gates" / "proposals").glob("prop-*.json")
    code, out, err = _cli(
        [
            "accept-case",
            str(proposal),
            "--reject",
            "--reason",
            "noise",
            "--by",
            "carol",
            "--config",
            str(config),
        ],
        capsys,
    )
    assert code == 0 and "rejected proposal prop-" in out, err
    stored = json.loads(proposal.read_text())
    assert (stored["status"], stored["rejected_by"], stored["reject_reason"]) == (
        "rejected",
        "carol",
        "noise",
    )
    assert [c.id for c in load_project(config).cases_for("regression")] == ["r-health"]  # only the seed case
    from qlab.governance.learning.reviews import decisions as review_decisions

    assert review_decisions(load_project(config).config) == ["rejected"]  # human_acceptance counts it
    # archiving: the case stays in its file, marked, and no run runs it
    code, out, err = _cli(
        ["accept-case", "--case", "s-parcel", "--status", "archived", "--by", "dan", "--config", str(config)],
        capsys,
    )
    assert code == 0 and "case s-parcel: active → archived" in out, err
    (case,) = load_project(config).cases_for("search_core")
    assert case.status == "archived"
    code, _, err = _cli(
        ["accept-case", "--case", "s-parcl", "--status", "draft", "--by", "dan", "--config", str(config)],
        capsys,
    )
    assert code == 2 and "Did you mean 's-parcel'?" in err

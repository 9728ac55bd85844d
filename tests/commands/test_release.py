"""``qlab approve`` and ``qlab release`` in process, on the demo API with the built-in engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, make_project, plan_case, write
from qlab.cli import main
from qlab.governance.env import collection_and_engines
from qlab.project import load_project

REPO = Path(__file__).resolve().parents[2]
RELEASE = """\
release:
  member-delivery-skill:
    trigger_cases: release/trigger-cases.json
    golden_cases: release/golden-cases.json
    permissions: [members, deliveries]
    max_tool_calls: 3
    max_latency_ms: 2000
"""


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _setup(tmp_path: Path, release: str = RELEASE) -> tuple[Path, str]:
    """The demo's trigger and golden cases, one regression case; returns qlab.yaml and the collection digest."""
    (tmp_path / "release").mkdir()
    for name in ("trigger-cases.json", "golden-cases.json"):
        shutil.copy(REPO / "gates" / "release" / name, tmp_path / "release" / name)
    config = make_project(tmp_path, extra=release, regression_seed=False)
    (tmp_path / "gates" / "regression" / "r.yaml").write_text(
        "id: reg-1\nquery: track delivery D-5001\nexpected_target: trackDelivery\n", encoding="utf-8"
    )
    collection, _ = collection_and_engines(load_project(config).config)
    return config, collection.digest


def _result(tmp_path: Path, digest: str, name: str, *, passed: bool = True) -> Path:
    """A result judged under the project's qlab.yaml as it is (the policy in force)."""
    case: dict[str, Any] = plan_case("reg-1", suite="regression", selected="trackDelivery", correct=passed)
    data = artifact([case], collection=digest)
    data["fingerprint"]["config_digest"] = load_project(tmp_path / "qlab.yaml").config.digest
    return write(tmp_path / name, data)


def test_approve_then_release_publishes_and_a_new_result_needs_a_new_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, digest = _setup(tmp_path)
    first = _result(tmp_path, digest, "r1.json")
    base = ["--config", str(config)]

    code, out, err = _cli(["release", "member-delivery-skill", "--result", str(first), *base], capsys)
    assert code == 1, out + err
    assert "FAIL  human_review: no review of this result" in out

    code, out, err = _cli(
        ["approve", "member-delivery-skill", "--result", str(first), "--reviewer", "alice", *base], capsys
    )
    assert code == 0, err
    assert out.startswith("approved member-delivery-skill for result sha256:")

    code, out, err = _cli(
        ["release", "member-delivery-skill", "--result", str(first), "--json", *base], capsys
    )
    assert code == 0, out + err
    outcome = json.loads(out)
    assert outcome["status"] == "published"
    assert [g["status"] for g in outcome["gates"]] == ["passed"] * 5

    # a new run (other bytes): alice's approval of the old result does not count
    second = _result(tmp_path, digest, "r2.json")
    data = json.loads(second.read_text())
    data["run_id"] = "run-2"
    second.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _cli(["release", "member-delivery-skill", "--result", str(second), *base], capsys)
    assert code == 1
    assert "reviews of other results do not count" in out
    record = json.loads((tmp_path / ".qlab" / "releases.json").read_text())["skills"]["member-delivery-skill"]
    assert record["status"] == "draft"
    assert record["published"]["digest"] != record["history"][-1]["result"]["digest"]
    assert [h["status"] for h in record["history"]] == ["draft", "published", "draft"]


def test_a_failing_regression_case_keeps_the_skill_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, digest = _setup(tmp_path)
    failing = _result(tmp_path, digest, "r.json", passed=False)
    _cli(
        [
            "approve",
            "member-delivery-skill",
            "--result",
            str(failing),
            "--by",
            "alice",
            "--config",
            str(config),
        ],
        capsys,
    )
    code, out, _ = _cli(
        ["release", "member-delivery-skill", "--result", str(failing), "--config", str(config)], capsys
    )
    assert code == 1
    assert "FAIL  regression_eval: reg-1: failed at select/wrong_target_selected" in out
    assert "skip  human_review" in out


def test_unknown_skill_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, _ = _setup(tmp_path)
    code, _, err = _cli(["release", "member-delivery", "--config", str(config)], capsys)
    assert code == 2 and "Did you mean 'member-delivery-skill'?" in err


def test_a_permission_the_collection_does_not_declare_stops_the_release_before_its_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo binds nothing: it is an ERROR with "Did you mean" before any gate, not a misleading recall."""
    config, digest = _setup(tmp_path, RELEASE.replace("[members, deliveries]", "[members, deliveriez]"))
    result = _result(tmp_path, digest, "r.json")
    code, out, err = _cli(
        ["release", "member-delivery-skill", "--result", str(result), "--config", str(config)], capsys
    )
    assert code == 2, out + err
    assert "pre-run check skill_bindings failed (skill_binding_unknown)" in err
    assert (
        "qlab.yaml:" in err
        and "$.release['member-delivery-skill'].permissions[1]: permission 'deliveriez'" in err
    )
    assert "Did you mean 'deliveries'?" in err and "trigger_eval" not in out + err
    assert not (tmp_path / ".qlab" / "releases.json").exists()  # nothing judged, nothing recorded
    code, out, err = _cli(["validate", "--config", str(config)], capsys)
    assert code == 2 and "permission 'deliveriez'" in err


def test_a_golden_case_tool_the_collection_lacks_is_a_binding_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, _digest = _setup(tmp_path)
    golden = tmp_path / "release" / "golden-cases.json"
    golden.write_text(golden.read_text().replace('"trackDelivery"]', '"trackDelivry"]'), encoding="utf-8")
    code, _, err = _cli(["release", "member-delivery-skill", "--config", str(config)], capsys)
    assert (
        code == 2 and "golden-cases.json:" in err and "'trackDelivry' is not a tool of the collection" in err
    )
    assert "Did you mean 'trackDelivery'?" in err


def test_a_result_judged_under_another_policy_or_a_missing_regression_suite_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, digest = _setup(tmp_path)
    result = _result(tmp_path, digest, "r.json")
    with config.open("a", encoding="utf-8") as handle:  # the policy changes after the run
        handle.write("budget:\n  max_duration_sec: 60\n")
    code, _, err = _cli(
        ["release", "member-delivery-skill", "--result", str(result), "--config", str(config)], capsys
    )
    assert code == 2 and "pre-run check policy_published failed (policy_unpublished)" in err
    assert "was judged under another version of qlab.yaml" in err
    text = config.read_text().replace(
        "  regression_suite: regression\n", "  proposals_dir: gates/proposals\n"
    )
    config.write_text(text, encoding="utf-8")
    code, _, err = _cli(["release", "member-delivery-skill", "--config", str(config)], capsys)
    assert code == 2 and "pre-run check policy_exists failed" in err and "names no regression suite" in err


def test_a_reviewer_who_asks_for_a_new_run_keeps_the_skill_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, digest = _setup(tmp_path)
    result = _result(tmp_path, digest, "r.json")
    base = ["--result", str(result), "--by", "bo", "--config", str(config)]
    code, out, err = _cli(["approve", "member-delivery-skill", *base, "--regenerate"], capsys)
    assert code == 0 and out.startswith("regenerate member-delivery-skill for result sha256:"), err
    code, out, _ = _cli(
        ["release", "member-delivery-skill", "--result", str(result), "--config", str(config)], capsys
    )
    assert code == 1 and "FAIL  human_review: bo asked for a new run of this result" in out
    code, _, err = _cli(["approve", "member-delivery-skill", *base, "--regenerate", "--reject"], capsys)
    assert code == 2 and "two different decisions" in err


# ------------------------------------------------------------------------ a release judges a result that PASSed


def _run(tmp_path: Path, config: Path, name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Path]:
    """``qlab run`` on the project, its result kept as ``name``."""
    out = tmp_path / f"out-{name}"
    code, stdout, err = _cli(["run", "--config", str(config), "--out", str(out), "--quiet"], capsys)
    assert code in (0, 1), stdout + err
    kept = tmp_path / name
    kept.write_bytes((out / "result.json").read_bytes())
    return code, kept


def _search_that_passes(tmp_path: Path) -> None:
    (tmp_path / "gates" / "search_core" / "cases.yaml").write_text(
        "- id: s-track\n  query: track delivery D-5003\n  expected_target: trackDelivery\n", encoding="utf-8"
    )


def _blocked_beside_the_regression_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, Path]:
    """A run that BLOCKs because a case of a required suite beside the regression suite (in the same plan gate)
    misses its target; the regression suite passes."""
    config, _ = _setup(tmp_path)
    text = config.read_text()
    text = text.replace(
        "  regression:\n",
        "  plan_core:\n    mode: plan\n    cases: [gates/plan_core/*.yaml]\n  regression:\n",
        1,
    )
    config.write_text(
        text.replace("suites: [regression]", "suites: [plan_core, regression]"), encoding="utf-8"
    )
    _search_that_passes(tmp_path)
    (tmp_path / "gates" / "plan_core").mkdir()
    (tmp_path / "gates" / "plan_core" / "miss.yaml").write_text(
        "id: s-miss\nquery: where is my parcel\nexpected_target: createOrder\n", encoding="utf-8"
    )
    code, result = _run(tmp_path, config, "blocked.json", capsys)
    data = json.loads(result.read_text())
    assert code == 1 and data["decision"]["verdict"] == "block", data["decision"]
    assert {c["case_id"]: c["status"] for c in data["cases"]}["reg-1"] == "passed"
    return config, result


def test_a_blocked_run_is_never_released_even_when_approved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule (issue 36, 1): the run BLOCKED because a required suite failed while the regression suite passed; a
    reviewer approved it. The release stops at its pre-run checks (ERROR, run_not_passed); the skill stays draft."""
    config, result = _blocked_beside_the_regression_suite(tmp_path, capsys)
    base = ["--result", str(result), "--config", str(config)]
    code, _, err = _cli(["approve", "member-delivery-skill", *base, "--by", "alice"], capsys)
    assert code == 0, err
    code, out, err = _cli(["release", "member-delivery-skill", *base], capsys)
    assert code == 2, out + err
    assert "pre-run check result_passed failed (run_not_passed)" in err
    assert "ended BLOCK (exit 1)" in err and "s-miss" in err and "keeps its status" in err
    assert "trigger_eval" not in out + err  # no gate ran
    assert not (tmp_path / ".qlab" / "releases.json").exists()  # nothing recorded: the skill stays draft


def test_an_edited_case_status_in_a_stored_result_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule (issue 35, 8): release re-derives the decision from the case records. A result whose failing case
    was edited to passed — its decision still BLOCK, or edited to PASS too — is refused (artifact_inconsistent)."""
    config, result = _blocked_beside_the_regression_suite(tmp_path, capsys)
    data = json.loads(result.read_text())
    case = next(c for c in data["cases"] if c["case_id"] == "s-miss")
    case["status"] = "passed"
    result.write_text(json.dumps(data), encoding="utf-8")
    base = ["--result", str(result), "--config", str(config)]
    code, out, err = _cli(["release", "member-delivery-skill", *base], capsys)
    assert code == 2 and "refused (artifact_inconsistent)" in err, out + err
    assert "case s-miss: passed, yet it records a failure (expected_target_absent)" in err
    del case["failure"]
    case["search"] = {**case["search"], "hit": True, "hit_rank": 1}
    data["decision"] = {"verdict": "pass", "reasons": ["2 gate(s) passed"], "exit_code": 0, "advisory": False}
    result.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = _cli(["release", "member-delivery-skill", *base], capsys)
    assert code == 2 and "refused (artifact_inconsistent)" in err, out + err
    assert "gate plan: recorded blocked, its cases give passed" in err
    assert not (tmp_path / ".qlab" / "releases.json").exists()


def test_the_latest_review_is_the_last_one_recorded_whatever_its_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule (issue 36, 8): two reviews in the same second — approved, then rejected — the rejection counts."""
    config, digest = _setup(tmp_path)
    result = _result(tmp_path, digest, "r.json")
    base = ["--result", str(result), "--config", str(config)]
    assert _cli(["approve", "member-delivery-skill", *base, "--by", "alice"], capsys)[0] == 0
    assert _cli(["approve", "member-delivery-skill", *base, "--by", "bo", "--reject"], capsys)[0] == 0
    approvals = tmp_path / ".qlab" / "approvals.json"
    data = json.loads(approvals.read_text())
    for item in data["approvals"]:
        item["at"] = "2026-12-01T10:00:00Z"  # recorded in the same second
    approvals.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _cli(["release", "member-delivery-skill", *base], capsys)
    assert code == 1 and "FAIL  human_review: bo rejected this result" in out, out


def test_a_result_of_another_value_of_a_variable_names_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule (issue 36, 8): only an environment variable qlab.yaml reads (a port) differed between the run and the
    release: the refusal names it, not only "another version of qlab.yaml"."""
    config, _ = _setup(tmp_path)
    text = config.read_text()
    config.write_text(
        text.replace("project: gov-test", "project: gov-${QLAB_TEST_PORT:-x}"), encoding="utf-8"
    )
    _search_that_passes(tmp_path)
    monkeypatch.setenv("QLAB_TEST_PORT", "8101")
    code, result = _run(tmp_path, config, "r.json", capsys)
    assert code == 0, json.loads(result.read_text())["decision"]
    monkeypatch.setenv("QLAB_TEST_PORT", "8102")
    code, _, err = _cli(
        ["release", "member-delivery-skill", "--result", str(result), "--config", str(config)], capsys
    )
    assert code == 2 and "pre-run check policy_published failed (policy_unpublished)" in err
    assert "had other values in that run: ${QLAB_TEST_PORT}" in err, err

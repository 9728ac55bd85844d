"""End to end: ``qlab run`` on the repository's own qlab.yaml (the demo project, real stages, the demo server
started by qlab itself), in process through ``qlab.cli.main``; the exit code is asserted with the output as
the failure message."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from qlab.cli import main
from qlab.contracts import metrics
from qlab.contracts.resources import load_schema

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import servers

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "tests" / "data" / "ci"  # the JUnit XSDs the tests carry
CANARY = "canary-e2e-token-7f3a9c"
pytestmark = pytest.mark.slow


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out + out.err


@pytest.fixture
def demo_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A free port for the demo server, and a canary token (the server and the auth profile both read it)."""
    monkeypatch.setenv("QLAB_DEMO_PORT", str(servers.free_port()))
    monkeypatch.setenv("QLAB_DEMO_TOKEN", CANARY)


def _result(out: Path, name: str = "result.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / name).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(load_schema("result")).validate(data)
    return data


def test_qlab_run_on_the_demo_passes(
    demo_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, text = _cli(["run", "--config", str(ROOT / "qlab.yaml"), "--out", str(out)], capsys)
    assert code == 0, text
    assert "PASS: 68 passed (exit 0)" in text and "skipped suite execute_mutation: cadence: manual" in text
    result = _result(out)
    assert result["decision"]["verdict"] == "pass"
    assert [s["suite"] for s in result["skipped_suites"]] == ["execute_mutation"]
    assert [g["name"] for g in result["gates"]] == ["build", "search", "select", "plan", "execute", "learn"]
    assert all(g["status"] in ("passed", "warned") for g in result["gates"]), result["gates"]
    assert {c["status"] for c in result["cases"]} <= {"passed", "failed"}  # flaky/required:false may fail
    assert result["metrics"]["execute_read_success_rate"] == 1.0
    # every case keeps the object of every stage it went through, whatever its mode (no plan gate lists the
    # execute suites: their plan comes from the same search, select and plan calls)
    executed = [c for c in result["cases"] if c["mode"] == "execute"]
    assert executed and all({"search", "target_selector", "plan", "execute"} <= set(c) for c in executed)
    assert result["fingerprint"]["collection_digest"] and result["provenance"]["dataset"]["files"]
    # the secret never reaches an output (the learn gate checked the same files)
    for path in out.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(encoding="utf-8", errors="replace"), path
    assert CANARY not in text
    import xmlschema

    for xsd in ("jenkins-xunit-junit-10.xsd", "windyroad-JUnit.xsd"):
        xmlschema.XMLSchema(str(CI / xsd)).validate(str(out / "junit.xml"))


def test_the_manual_mutation_suite_runs_when_asked_for(
    demo_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain run leaves the demo's ``cadence: manual`` suite out and says so; ``--cadence manual`` runs it."""
    out = tmp_path / "out"
    code, text = _cli(
        ["run", "--config", str(ROOT / "qlab.yaml"), "--out", str(out), "--cadence", "manual"], capsys
    )
    assert code == 0, text
    result = _result(out)
    assert {c["suite"] for c in result["cases"]} == {"execute_mutation"}
    assert [c["status"] for c in result["cases"]] == ["passed"] * 3 and result["skipped_suites"] == []


def _untimed(figures: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in figures.items() if not k.startswith("latency")}


def _copy_demo(tmp_path: Path) -> Path:
    """The demo project in a temporary folder (same qlab.yaml, same case files), to change it safely."""
    for name in ("qlab.yaml",):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "gates", tmp_path / "gates")
    (tmp_path / "runner" / "qlab" / "demo").mkdir(parents=True)
    shutil.copy(
        ROOT / "runner" / "qlab" / "demo" / "openapi.yaml",
        tmp_path / "runner" / "qlab" / "demo" / "openapi.yaml",
    )
    return tmp_path / "qlab.yaml"


def test_a_failing_search_gate_blocks_the_later_stages(
    demo_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _copy_demo(tmp_path)
    (tmp_path / "gates" / "search_core" / "zz-broken.yaml").write_text(
        "- id: search-broken-001\n  query: quantum flux capacitor calibration\n  expected_target: getHealth\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    # the demo server is never started: the run blocks before the execute gate would start it
    code, text = _cli(["run", "--config", str(config), "--out", str(out)], capsys)
    assert code == 1, text
    result = _result(out)
    gates = {g["name"]: g["status"] for g in result["gates"]}
    assert gates["search"] == "blocked" and gates["select"] == gates["plan"] == gates["execute"] == "skipped"
    broken = next(c for c in result["cases"] if c["case_id"] == "search-broken-001")
    assert broken["failure"]["reason"] == "expected_target_absent"
    later = [c for c in result["cases"] if c["suite"] != "search_core"]
    assert later and all(c["status"] == "blocked" for c in later)
    assert {(c["failure"]["stage"], c["failure"]["reason"]) for c in later} == {
        ("search", "blocked_by_stage")
    }


def test_three_merged_shards_equal_the_unsharded_run(
    demo_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [
        "--config",
        str(ROOT / "qlab.yaml"),
        "--suite",
        "search_core",
        "--suite",
        "plan_e2e",
        "--suite",
        "regression",
    ]
    whole = tmp_path / "whole"
    code, text = _cli(["run", *base, "--out", str(whole), "-q"], capsys)
    assert code == 0, text
    shards = tmp_path / "shards"
    for i in (1, 2, 3):
        code, text = _cli(["run", *base, "--shard", f"{i}/3", "--out", str(shards), "-q"], capsys)
        assert code == 0, text
    code, text = _cli(["merge", str(shards), "--out", str(tmp_path / "merged"), "-q"], capsys)
    assert code == 0, text
    a, b = _result(whole), _result(tmp_path / "merged")
    # every metric but wall-clock latency (two runs never take the same milliseconds) is equal ...
    assert _untimed(b["metrics"]) == _untimed(a["metrics"])
    assert {k: _untimed(v["metrics"]) for k, v in b["suites"].items()} == {
        k: _untimed(v["metrics"]) for k, v in a["suites"].items()
    }
    # ... and the merged latency is recomputed from the merged cases, not taken from a shard
    assert b["metrics"]["latency_ms"] == metrics.acceptance(b["cases"])["latency_ms"]
    assert [(c["case_id"], c["status"]) for c in b["cases"]] == [
        (c["case_id"], c["status"]) for c in a["cases"]
    ]
    code, text = _cli(
        ["merge", str(shards / "qlab-shard-1-of-3.json"), str(shards / "qlab-shard-3-of-3.json")], capsys
    )
    assert code == 2 and "missing shard(s) 2/3" in text


def test_run_stores_learn_suggestions_pending_review_and_changes_nothing_else(
    demo_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _copy_demo(tmp_path)
    aliases_before = (tmp_path / "gates" / "aliases.yaml").read_bytes()
    code, text = _cli(
        [
            "run",
            "--config",
            str(config),
            "--suite",
            "plan_e2e",
            "--out",
            str(tmp_path / "out"),
            "--no-server",
        ],
        capsys,
    )
    assert code == 0, text
    stored = json.loads((tmp_path / ".qlab" / "suggestions.json").read_text(encoding="utf-8"))
    items = stored["suggestions"] if isinstance(stored, dict) else stored
    assert items and {s["status"] for s in items} == {"pending_review"}
    assert {s["kind"] for s in items} >= {"selector_policy"}
    # learning never takes effect automatically: the reviewed aliases file is untouched
    assert (tmp_path / "gates" / "aliases.yaml").read_bytes() == aliases_before
    # each case its evidence names carries seed 000's per-case learning object in the result artifact
    result = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
    named = {e["case_id"] for s in items for e in s.get("evidence") or ()}
    learned = {c["case_id"]: c["learning"] for c in result["cases"] if "learning" in c}
    assert named and set(learned) == named
    assert all(
        s["status"] == "pending_review" and s["id"] for v in learned.values() for s in v["suggestions"]
    )

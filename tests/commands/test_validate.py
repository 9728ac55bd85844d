"""``qlab validate`` in-process: every invalid fixture gives exit 2 and exactly its expected message; warning
fixtures pass with their warnings; the dogfood config is valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qlab.cli import main
from qlab.project.yamlio import HAVE_LIBYAML

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def _inputs(folder: Path) -> list[Path]:
    """The input file beside each ``<name>.err`` (``.yaml``, ``.json``, ``.jsonl`` or ``.bin``)."""
    out = []
    for expected in sorted(folder.glob("*.err")):
        twins = [
            p for p in folder.iterdir() if p.is_file() and p.stem == expected.stem and p.suffix != ".err"
        ]
        assert len(twins) == 1, f"{expected.name}: expected exactly one input file beside it, found {twins}"
        out.append(twins[0])
    return out


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def _args(path: Path) -> list[str]:
    # case fixtures are checked inside the fixture project, which says which suite each name belongs to
    if path.name.startswith("case-"):
        return ["validate", "--config", "_project.yaml", path.name]
    return ["validate", "--config", path.name]


@pytest.fixture(autouse=True)
def _no_fixture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("QLAB_FIXTURE_HOST", "QLAB_FIXTURE_PORT", "QLAB_FIXTURE_BUILD"):
        monkeypatch.delenv(name, raising=False)


def test_there_are_at_least_40_invalid_fixtures() -> None:
    assert len(_inputs(FIXTURES / "invalid")) >= 40


@pytest.mark.parametrize("path", _inputs(FIXTURES / "invalid"), ids=lambda p: p.name)
def test_invalid_fixture(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if path.name.startswith("yaml-syntax-") and not HAVE_LIBYAML:
        pytest.skip("syntax messages are libyaml's wording")
    monkeypatch.chdir(path.parent)
    code, out, err = run(_args(path), capsys)
    expected = path.with_suffix(".err").read_text(encoding="utf-8")
    assert "Traceback" not in out + err
    assert code == 2, err
    assert err == expected
    assert out == ""


@pytest.mark.parametrize("path", _inputs(FIXTURES / "warnings"), ids=lambda p: p.name)
def test_warning_fixture(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(path.parent)
    code, out, err = run(_args(path), capsys)
    assert code == 0, err
    assert err == path.with_suffix(".err").read_text(encoding="utf-8")
    assert out.startswith("valid: ")
    assert "warning" in out


def test_every_error_line_is_located(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``file:line:col:`` on every diagnostic of every invalid fixture (the summary line aside)."""
    for path in _inputs(FIXTURES / "invalid"):
        for line in path.with_suffix(".err").read_text(encoding="utf-8").splitlines()[:-1]:
            file, line_no, col, _ = line.split(":", 3)
            assert file and line_no.isdigit() and col.isdigit() and int(line_no) > 0, f"{path.name}: {line}"


def test_dogfood_config_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", "--config", str(ROOT / "qlab.yaml")], capsys)
    assert code == 0, err
    assert err == ""
    assert out == "valid: 71 cases in 10 files, 6 suites, 6 gates\n"


def test_config_is_found_upwards(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT / "gates" / "search_core")
    code, out, _ = run(["validate"], capsys)
    assert code == 0
    assert out.startswith("valid: 71 cases")


def test_json_report_of_a_valid_project(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", "--config", str(ROOT / "qlab.yaml"), "--json"], capsys)
    report = json.loads(out)
    assert (code, err) == (0, "")
    assert report["valid"] is True
    assert report["suites"] == {"search_core": 30, "business_manual_20": 20, "plan_e2e": 10, "execute_read": 6,
                                "execute_mutation": 3, "regression": 2}  # fmt: skip
    assert report["cases"] == 71
    assert {f["path"] for f in report["case_files"]} >= {"gates/plan_e2e/member-plan-001.yaml"}
    assert len(report["digest"]) == 64


def test_json_report_of_an_invalid_project(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    code, out, err = run(["validate", "--config", "unknown-metric.yaml", "--json"], capsys)
    report = json.loads(out)
    assert (code, err) == (2, "")
    assert report["valid"] is False
    assert report["errors"] == 3
    first = report["diagnostics"][0]
    assert first == {
        "file": "unknown-metric.yaml",
        "line": 14,
        "col": 7,
        "json_path": "$.gates[0].thresholds.hit_at_kk",
        "message": "unknown metric 'hit_at_kk'. Did you mean 'hit_at_k'?",
        "severity": "error",
    }


def test_missing_config_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["validate", "--config", "nope.yaml"], capsys)
    assert code == 2
    assert err == "nope.yaml: file not found\ninvalid: 1 error, 0 warnings\n"


def test_no_config_anywhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()  # the search stops at the repository root
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    code, _, err = run(["validate"], capsys)
    assert code == 2
    assert err.startswith("error: no qlab.yaml found in ")
    assert "run `qlab init`" in err


def test_a_case_file_outside_every_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    stray = tmp_path / "stray.yaml"
    stray.write_text("id: stray-001\nquery: look up member M-1001\nexpected_target: getMember\n")
    code, out, err = run(["validate", "--config", str(ROOT / "qlab.yaml"), "stray.yaml"], capsys)
    assert code == 0
    assert err.startswith("stray.yaml: warning:") and str(ROOT / "qlab.yaml") in err
    assert "case schema only" in err
    assert out.startswith("valid: 1 case in 1 file")


def _project(folder: Path, source: str, case: str) -> Path:
    (folder / "gates").mkdir(parents=True, exist_ok=True)
    (folder / "gates" / "cases.yaml").write_text(case)
    (folder / "qlab.yaml").write_text(
        f"version: 1\nproject: p\ncollection:\n  sources:\n    - {source}\n"
        "suites:\n  s: {mode: search, cases: [gates/*.yaml]}\ngates:\n  - {stage: search, suites: [s]}\n"
    )
    return folder / "qlab.yaml"


def test_unknown_tool_names_fail_validation_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    config = _project(
        tmp_path, f"openapi: {spec}", "- {id: a, query: where, expected_target: trackDelivry}\n"
    )
    code, out, err = run(["validate", "--config", str(config)], capsys)
    assert code == 2 and out == ""
    assert err.endswith(
        "gates/cases.yaml:1:42: $[0].expected_target: 'trackDelivry' is not a tool of the collection. "
        "Did you mean 'trackDelivery'?\ninvalid: 1 error, 0 warnings\n"
    )
    code, out, _ = run(["validate", "--config", str(config), "--json"], capsys)
    report = json.loads(out)
    assert (code, report["valid"], report["tool_names"]["unknown"]) == (2, False, ["trackDelivry"])
    (tmp_path / "gates" / "cases.yaml").write_text(
        "- {id: a, query: where, expected_target: trackDelivery}\n"
    )
    code, out, err = run(["validate", "--config", str(config), "--json"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out)["tool_names"] == {"checked": True, "tools": 15, "names": 1, "unknown": []}


def test_validate_says_when_it_could_not_check_tool_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _project(
        tmp_path, "openapi: http://127.0.0.1:9/openapi.json", "- {id: a, query: q, expected_target: x}\n"
    )
    code, out, err = run(["validate", "--config", str(config)], capsys)
    assert (code, out) == (0, "valid: 1 case in 1 file, 1 suite, 1 gate\n")
    assert (
        err.startswith("note: the tool names of the cases were not checked:") and "'openapi' is a URL" in err
    )


def test_a_command_runs_with_full_collections_a_hundred_times_rarer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a command loads lives until it ends: the cyclic GC's full collections would walk it again and again
    (``qlab.cli``); the thresholds are the process's own again when the command returns."""
    import gc

    import qlab.project as project

    thresholds: list[tuple[int, int, int]] = []
    load = project.load_project

    def watching(*args: Any, **kwargs: Any) -> Any:
        thresholds.append(gc.get_threshold())
        return load(*args, **kwargs)

    monkeypatch.setattr(project, "load_project", watching)
    before = gc.get_threshold()
    code, _, err = run(["validate", "--config", str(ROOT / "qlab.yaml")], capsys)
    assert code == 0, err
    assert thresholds == [(before[0], before[1], before[2] * 100)]
    assert gc.get_threshold() == before

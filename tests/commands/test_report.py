"""``qlab report``, in process through ``qlab.cli.main`` (the real exit-code mapping)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import artifact_samples as samples
from qlab import __version__
from qlab.cli import main
from qlab.commands.report import order_runs, write_reports


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _store(tmp_path: Path, name: str, artifact: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(samples.as_written(artifact)), encoding="utf-8")
    return path


def test_html_report_of_one_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _store(tmp_path, "result.json", samples.result())
    out = tmp_path / "out" / "report.html"
    code, stdout, stderr = _run(["report", str(result), "--html", str(out)], capsys)
    assert code == 0, stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'id="gates"' in page and 'id="promotion"' not in page
    assert f"html: {out} (1 run)" in stderr
    assert stdout == ""


def test_series_is_ordered_by_start_time_and_the_latest_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = _store(tmp_path, "b.json", samples.result("run-old", started_at="2026-12-01T10:00:00Z"))
    newer = _store(tmp_path, "a.json", samples.fixed_result("run-new", started_at="2026-12-02T10:00:00Z"))
    out = tmp_path / "trend.html"
    code, _, stderr = _run(["report", str(newer), str(older), "--html", str(out)], capsys)
    assert code == 0, stderr
    page = out.read_text(encoding="utf-8")
    assert "Trends over 2 runs" in page
    assert "run-new" in page.split('<section id="gates">', 1)[0]  # the newer run is the one reported in full
    diff = page.split('<section id="promotion">', 1)[1]
    assert diff.index("run-old") < diff.index("run-new")


def test_baseline_option_adds_the_promotion_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _store(tmp_path, "main.json", samples.result())
    cand = _store(tmp_path, "pr.json", samples.fixed_result())
    out = tmp_path / "promotion.html"
    code, _, stderr = _run(["report", str(cand), "--baseline", str(base), "--html", str(out)], capsys)
    assert code == 0, stderr
    assert "(2 runs)" in stderr
    page = out.read_text(encoding="utf-8")
    assert 'id="promotion"' in page and ">regressed</span>" in page


def test_markdown_goes_to_stdout_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _store(tmp_path, "result.json", samples.result())
    code, stdout, stderr = _run(["report", str(result)], capsys)
    assert code == 0, stderr
    assert "required_fields_unsatisfied" in stdout
    assert "member-plan-002" in stdout


def test_markdown_and_junit_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _store(tmp_path, "result.json", samples.result())
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    code, _, stderr = _run(["report", str(result), "--markdown", str(md), "--junit", str(xml)], capsys)
    assert code == 0, stderr
    assert "member-plan-002" in md.read_text(encoding="utf-8")
    root = ET.fromstring(xml.read_text(encoding="utf-8"))
    assert root.tag == "testsuites"
    failed = {case.get("name") for case in root.iter("testcase") if case.find("failure") is not None}
    assert "member-plan-002" in failed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "a result artifact is a JSON object"),
        ('{"schema_version": 1}', "$.cases"),
    ],
)
def test_an_invalid_artifact_exits_2_with_a_located_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    out = tmp_path / "report.html"
    code, _, stderr = _run(["report", str(bad), "--html", str(out)], capsys)
    assert code == 2
    assert str(bad) in stderr and message in stderr
    assert "Traceback" not in stderr
    assert not out.exists()


def test_a_missing_artifact_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = _run(["report", str(tmp_path / "nope.json")], capsys)
    assert code == 2
    assert "not found" in stderr


def test_an_unwritable_output_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _store(tmp_path, "result.json", samples.result())
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, stderr = _run(["report", str(result), "--html", str(blocker / "report.html")], capsys)
    assert code == 2, stderr
    assert "cannot be written" in stderr


def test_no_result_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = _run(["report", "--html", "x.html"], capsys)
    assert code == 2
    assert "RESULTS" in stderr


def test_order_runs_keeps_the_given_order_without_start_times() -> None:
    a, b = {"run_id": "a"}, {"run_id": "b", "started_at": "2026-01-01T00:00:00Z"}
    assert order_runs([a, b]) == [a, b]
    c = {"run_id": "c", "started_at": "2025-01-01T00:00:00Z"}
    assert order_runs([b, c]) == [c, b]


def test_write_reports_counts_runs(tmp_path: Path) -> None:
    first = _store(tmp_path, "1.json", samples.result())
    done = write_reports([first], html=tmp_path / "r.html", baseline=first)
    assert done.runs == 2
    assert done.files == (("html", tmp_path / "r.html"),)


def test_format_renders_any_registered_format_to_a_file_or_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _store(tmp_path, "result.json", samples.result())
    out = tmp_path / "junit.xml"
    code, stdout, stderr = _run(
        ["report", str(result), "--format", f"junit={out}", "--format", "markdown"], capsys
    )
    assert code == 0, stderr
    assert ET.parse(out).getroot().tag == "testsuites"
    assert stdout.startswith("## ❌ qlab: BLOCK")  # only the format asked for: no second summary
    assert stdout.count("## ❌ qlab: BLOCK") == 1
    assert f"junit: {out} (1 run)" in stderr


def test_an_unknown_format_is_a_usage_error_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = _run(["report", str(tmp_path / "missing.json"), "--format", "junt=x.xml"], capsys)
    assert code == 2
    assert "unknown report format 'junt' (known: junit, markdown). Did you mean 'junit'?" in stderr


def test_a_result_whose_stored_figures_disagree_with_its_cases_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule (issue 35, 8): every command that reads a result re-derives its decision and figures from the case
    records; ``qlab report`` refuses one whose stored metric was raised or whose failing case was made to pass."""
    path = _store(tmp_path, "result.json", samples.result())
    data = json.loads(path.read_text())
    data["metrics"]["search_hit_at_k"] = 1.0
    data["qlab_version"] = (
        __version__  # a figure is checked on a result of this qlab (how it is made may change)
    )
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _run(["report", str(path)], capsys)
    assert code == 2 and "refused (artifact_inconsistent)" in err
    assert "metrics.search_hit_at_k: recorded 1.0, its cases give 0.857143" in err
    path = _store(tmp_path, "result.json", samples.result())
    data = json.loads(path.read_text())
    case = next(c for c in data["cases"] if c["case_id"] == "member-plan-002")
    case["status"] = "passed"
    del case["failure"]
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _run(["report", str(path), "--html", str(tmp_path / "r.html")], capsys)
    assert code == 2 and "its decision says BLOCK (exit 1), its cases give PASS (exit 0)" in err, err
    assert not (tmp_path / "r.html").exists()

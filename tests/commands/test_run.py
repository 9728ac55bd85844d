"""``qlab run`` in process through ``qlab.cli.main``: the real loader and exit-code mapping, fake stages (the
stage modules have their own tests; tests/e2e runs the real ones on the demo)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from qlab.cli import main
from qlab.run import api as run_api
from qlab.run.runner import run as real_run
from run import fakes as f

CONFIG = """\
version: 1
project: cli-test
collection:
  sources:
    - name: api
      openapi: api.yaml
suites:
  search_core:
    mode: search
    cases: [cases/*.yaml]
gates:
  - name: build
    stage: build
  - name: search
    stage: search
    suites: [search_core]
    thresholds:
      hit_at_k: ">= 0.9"
    stop_if: [expected_target_absent]
output:
  dir: out
"""


def _project(tmp_path: Path, targets: list[str]) -> Path:
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n", encoding="utf-8"
    )
    (tmp_path / "cases").mkdir()
    lines = [
        f"- id: case-{i}\n  query: find thing {i}\n  expected_target: {t}\n  tags: [t{i % 2}]\n"
        for i, t in enumerate(targets)
    ]
    (tmp_path / "cases" / "search.yaml").write_text("".join(lines), encoding="utf-8")
    config = tmp_path / "qlab.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    return config


@pytest.fixture(autouse=True)
def _fake_stages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def run(project: Any, *, options: Any) -> Any:
        fakes = f.options(tmp_path)
        return real_run(project, options=dataclasses.replace(options, seams=fakes.seams))

    monkeypatch.setattr(run_api, "run", run)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_pass_writes_result_junit_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["getThing", "getThing"])
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 0, out + err
    result = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
    assert result["decision"]["verdict"] == "pass" and len(result["cases"]) == 2
    assert result["cases"][0]["file"].endswith("cases/search.yaml") and result["cases"][0]["line"] == 1
    assert result["provenance"]["dataset"]["files"][0]["cases"] == 2
    ET.parse(tmp_path / "out" / "junit.xml")
    assert (tmp_path / "out" / "summary.md").read_text(encoding="utf-8").startswith("## ✅ qlab: PASS")
    assert "PASS: 2 passed (exit 0)" in out
    assert "\x1b[" not in out  # not a TTY: no colour


def test_blocked_exits_1_and_feeds_github(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, ["getThing", "absent:x"])
    summary, outputs = tmp_path / "summary-gh.md", tmp_path / "outputs-gh.txt"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    for name, value in (("SERVER_URL", "https://github.com"), ("REPOSITORY", "acme/api"), ("RUN_ID", "42")):
        monkeypatch.setenv(f"GITHUB_{name}", value)
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 1, out + err
    assert (
        "::error file=cases/search.yaml,line=5,title=qlab search_core/case-1::case-1: search: expected_target_absent"
        in out
    )
    assert "::stop-commands::" in out
    step_summary = summary.read_text(encoding="utf-8")
    assert step_summary.startswith("## ❌ qlab: BLOCK")
    # on the run page a relative link 404s: the files are named, the run's page linked
    assert "[this run's page](https://github.com/acme/api/actions/runs/42)" in step_summary
    assert "](result.json)" not in step_summary
    assert "](result.json)" in (tmp_path / "out" / "summary.md").read_text(
        encoding="utf-8"
    )  # beside the files
    written = outputs.read_text(encoding="utf-8")
    assert (
        "decision=block\n" in written
        and written.count("\nexit-code=") + written.startswith("exit-code=") == 1
    )


def test_exit_zero_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["absent:x"])
    code, out, err = _cli(["run", "--config", str(config), "--exit-zero", "--quiet"], capsys)
    assert code == 0, out + err
    assert out == "BLOCK (exit 0)\n"


def test_selection_and_last_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["getThing", "second:x", "getThing"])
    code, out, err = _cli(["run", "--config", str(config), "--tag", "t1", "-q"], capsys)
    assert code == 0, out + err
    assert [c["case_id"] for c in json.loads((tmp_path / "out" / "result.json").read_text())["cases"]] == [
        "case-1"
    ]
    result = tmp_path / "out" / "result.json"
    data = json.loads(result.read_text())
    data["cases"][0]["status"] = "failed"
    result.write_text(json.dumps(data))
    code, out, err = _cli(["run", "--config", str(config), "--last-failed", "-q"], capsys)
    assert code == 0, out + err
    assert [c["case_id"] for c in json.loads(result.read_text())["cases"]] == ["case-1"]


def test_shard_outputs_are_named_by_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["getThing"] * 5)
    for i in (1, 2):
        code, out, err = _cli(["run", "--config", str(config), "--shard", f"{i}/2", "-q"], capsys)
        assert code == 0, out + err
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert {
        "qlab-shard-1-of-2.json",
        "qlab-shard-2-of-2.json",
        "junit-shard-1-of-2.xml",
        "summary-shard-2-of-2.md",
    } <= set(names)
    code, out, err = _cli(["merge", str(tmp_path / "out"), "-q"], capsys)
    assert code == 0, out + err
    assert len(json.loads((tmp_path / "out" / "result.json").read_text())["cases"]) == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shard", "3/2"], "--shard '3/2': the index must be between 1 and 2"),
        (["--suite", "serch_core"], "unknown suite 'serch_core'. Did you mean 'search_core'?"),
        (["--tag", "none"], "no case selected by --tag none;"),
        (["--durations", "missing.json", "--shard", "1/2"], "durations file not found"),
    ],
)
def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    config = _project(tmp_path, ["getThing"])
    code, out, err = _cli(["run", "--config", str(config), *argv], capsys)
    assert code == 2, out + err
    assert message in err
    assert "Traceback" not in err


def test_invalid_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["getThing"])
    config.write_text(CONFIG.replace("mode: search", "mode: serch"), encoding="utf-8")
    code, _out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 2 and "qlab.yaml:" in err and not (tmp_path / "out" / "result.json").exists()


def test_an_unwritable_output_path_exits_2_before_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _project(tmp_path, ["getThing"])
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    code, out, err = _cli(["run", "--config", str(config), "--junit", str(blocker / "junit.xml")], capsys)
    assert code == 2, out + err
    assert f"error: {blocker}: cannot create the output folder: " in err and "check --out, --junit" in err
    assert not (tmp_path / "out" / "result.json").exists()  # refused before the run, not after it


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_github_file_that_is_a_folder_exits_2_before_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    config = _project(tmp_path, ["getThing"])
    monkeypatch.setenv(variable, str(tmp_path))
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 2, out + err
    assert f"error: ${variable} ({tmp_path}): cannot be written: Is a directory" in err
    assert "internal error" not in err
    assert not (tmp_path / "out" / "result.json").exists()


def test_human_decisions_on_record_count_in_the_next_runs_scorecard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _project(tmp_path, ["getThing"])

    def acceptance() -> Any:
        code, out, err = _cli(["run", "--config", str(config)], capsys)
        assert code == 0, out + err
        result = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
        return result["scorecard"]["human_acceptance"]

    before = acceptance()
    (tmp_path / ".qlab").mkdir()
    reviewed = [
        {"id": "sg-000000000001", "status": "accepted"},
        {"id": "sg-000000000002", "status": "pending_review"},
    ]
    suggestions = tmp_path / ".qlab" / "suggestions.json"
    suggestions.write_text(json.dumps({"version": 1, "suggestions": reviewed}), encoding="utf-8")
    after = acceptance()
    assert (before, after) == (None, 1.0)
    reviewed[1]["status"] = "rejected"
    suggestions.write_text(json.dumps({"version": 1, "suggestions": reviewed}), encoding="utf-8")
    assert acceptance() == 0.5


def test_timing_marks_split_the_run_into_phases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from qlab.commands import _timings

    marks = tmp_path / "marks.jsonl"
    monkeypatch.setattr(_timings, "_FILE", str(marks))
    monkeypatch.setattr(_timings, "_T0", None)
    config = _project(tmp_path, ["getThing"])
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 0, out + err
    rows = [json.loads(line) for line in marks.read_text(encoding="utf-8").splitlines()]
    phases = [row["phase"] for row in rows]
    assert phases == [
        "cli",
        "imports",
        "load",
        "gate:build",
        "gate:search",
        "artifact",
        "outputs",
        "exit_called",
    ]
    times = [row["t"] for row in rows]
    assert times == sorted(times) and times[0] == 0.0


def test_without_the_variable_no_timing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from qlab.commands import _timings

    monkeypatch.setattr(_timings, "_FILE", None)
    monkeypatch.chdir(tmp_path)
    config = _project(tmp_path, ["getThing"])
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 0, out + err
    assert not _timings.enabled() and sorted(p.name for p in tmp_path.iterdir()) == [
        "api.yaml",
        "cases",
        "out",
        "qlab.yaml",
    ]


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("git", "qa/cases/search.yaml"),  # the workspace is the repository; qlab.yaml in a subfolder
        ("no-git", "qa/cases/search.yaml"),  # git gave no root (not installed, a refused repository)
        ("checkout-path", "repo/qa/cases/search.yaml"),  # actions/checkout with `path: repo`
    ],
)
def test_annotations_land_on_the_case_file_when_qlab_yaml_is_in_a_subfolder(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    layout: str,
    expected: str,
) -> None:
    """GitHub attaches an annotation to the pull request's file when ``file=`` is relative to
    ``$GITHUB_WORKSPACE``, wherever qlab.yaml sits."""
    repo = tmp_path / "repo"
    (repo / "qa").mkdir(parents=True)
    config = _project(repo / "qa", ["getThing", "absent:x"])
    if layout != "no-git":
        subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True, timeout=30)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path if layout == "checkout-path" else repo))
    monkeypatch.chdir(repo / "qa")
    code, out, err = _cli(["run", "--config", str(config)], capsys)
    assert code == 1, out + err
    assert f"::error file={expected},line=5,title=qlab search_core/case-1::case-1: search:" in out, out


def test_config_errors_are_annotated_at_their_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "qa").mkdir(parents=True)
    config = _project(repo / "qa", ["getThing"])
    config.write_text(CONFIG.replace("mode: search", "mode: serch"), encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.chdir(repo)
    code, out, err = _cli(["run", "--config", "qa/qlab.yaml"], capsys)
    assert code == 2, out + err
    where = err.removeprefix("error: ").split(": ", 1)[0]  # qa/qlab.yaml:LINE:COL, as the message says
    file, line, col = where.rsplit(":", 2)
    assert file == "qa/qlab.yaml" and int(line) > 0
    annotations = [a for a in out.splitlines() if a.startswith("::error ")]
    assert annotations and annotations[0].startswith(
        f"::error file=qa/qlab.yaml,line={line},col={col},title=qlab configuration::$.suites.search_core.mode"
    ), out
    # outside Actions: no workflow command
    monkeypatch.delenv("GITHUB_ACTIONS")
    code, out, _ = _cli(["run", "--config", "qa/qlab.yaml"], capsys)
    assert code == 2 and "::error" not in out


def test_each_run_is_kept_in_the_history_and_the_next_says_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _project(tmp_path, ["getThing", "getThing", "getThing"])
    config.write_text(CONFIG.replace("  dir: out\n", "  dir: out\n  history: 2\n"), encoding="utf-8")
    out = tmp_path / "out"
    code, first, _ = _cli(["run", "--config", str(config)], capsys)
    assert code == 0 and "since the last run" not in first  # nothing to compare with yet
    kept = sorted((out / "history").iterdir())
    # the very bytes of the output set (scrubbed as they were written), not a copy made later
    assert len(kept) == 1 and kept[0].samefile(out / "result.json")
    cases = tmp_path / "cases" / "search.yaml"
    cases.write_text(cases.read_text(encoding="utf-8").replace("getThing", "absent:x", 1), encoding="utf-8")
    code, second, _ = _cli(["run", "--config", str(config)], capsys)
    assert code == 1
    assert "since the last run (" in second and "PASS): 1 newly failing, 0 newly passing" in second
    assert "  newly failing: case-0" in second
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert (
        "### Since the last run" in summary
        and "- Newly failing: `case-0` (`expected_target_absent`)" in summary
    )
    assert "| search hit@K | 1.000 | 0.667 | -0.333 |" in summary
    _cli(["run", "--config", str(config)], capsys)
    kept = sorted((out / "history").iterdir())
    assert len(kept) == 2 and kept[-1].samefile(out / "result.json")  # output.history: 2
    sets = [p for p in (out / ".qlab-sets").iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(sets) == 1  # the output sets are switched as before; the history keeps the earlier results
    code, trend, _ = _cli(["report", str(out / "result.json"), "--trend"], capsys)
    assert code == 0 and "## qlab trend — 2 run(s)" in trend and trend.count("| BLOCK |") == 2
    html_out = tmp_path / "trend.html"
    code, _, _ = _cli(["report", str(out / "result.json"), "--trend", "--html", str(html_out)], capsys)
    assert code == 0 and "Trends over 2 runs" in html_out.read_text(encoding="utf-8")


def test_a_shard_keeps_no_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, ["getThing", "getThing"])
    code, _, _ = _cli(["run", "--config", str(config), "--shard", "1/2"], capsys)
    assert code == 0 and not (tmp_path / "out" / "history").exists()


def test_the_previous_run_is_read_lean_for_the_learn_gate_and_whole_for_last_failed(tmp_path: Path) -> None:
    """Rule: the learn gate compares with the previous run read line by line (each case without its stage
    objects; the file's digest and path recorded for the proposals' evidence); --last-failed reads it whole."""
    import hashlib

    from qlab.run.artifact import write
    from qlab.run.history import previous_result as _previous
    from run import story

    previous = {**story.story("pass").whole, "run_id": "20261201T000000Z-a"}
    previous["cases"] = [dict(c) for c in previous["cases"]]
    path = write(tmp_path / "result.json", previous)
    lean = _previous(path, needed=False, wanted=True)
    whole = _previous(path, needed=True, wanted=True)
    assert lean is not None and whole is not None
    from qlab.governance.learning.proposers import _digest

    assert "_digest" not in lean and lean["_path"] == str(path)  # hashed only when a proposal needs it
    assert _digest(lean) == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    passed = [c for c in whole["cases"] if c["status"] == "passed"]
    assert passed and any("search" in c for c in passed)
    assert not any("search" in c for c in lean["cases"])  # every case cut to its comparison fields
    assert lean["_lean"] is True and "_lean" not in whole
    assert _previous(path, needed=False, wanted=False) is None
    assert _previous(tmp_path / "none.json", needed=False, wanted=True) is None
    (tmp_path / "bad.json").write_text("{\n not json\n", encoding="utf-8")
    assert _previous(tmp_path / "bad.json", needed=False, wanted=True) is None


def test_the_run_command_imports_no_learning_or_release_machinery_it_may_not_need() -> None:
    """Every `qlab run` pays its imports (the whole process is what a CI job waits for): the learning loop is
    imported when a learn gate runs, the release gates when the project has release skills."""
    from fresh import modules_after

    loaded = modules_after("import qlab.commands.run")
    lazy = {"qlab.governance.learning.suggest", "qlab.governance.learning.publish", "qlab.governance.learning.apply",
            "qlab.governance.release.skill", "qlab.governance.env"}  # fmt: skip
    assert not loaded & lazy, loaded & lazy


def test_a_whole_run_loads_neither_fractions_nor_elementtree(tmp_path: Path) -> None:
    """Every `qlab run` pays its imports: the gates count a share threshold's tolerance in integers, and JUnit is
    written without ElementTree (~4 MiB and ~4 ms of every run). A real run in a new interpreter, real stages,
    a share threshold judged (it tolerates one failure of the two cases) and a JUnit file written."""
    from fresh import run_fresh

    config = _project(tmp_path, ["getThing", "getThing"])
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n"
        "paths:\n  /things/{id}:\n    get: {operationId: getThing, summary: Find a thing,"
        " parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'200': {description: ok}}}\n",
        encoding="utf-8",
    )
    code = (
        "import json, sys\nfrom qlab.cli import main\n"
        f"try:\n    main(['run', '--config', {str(config)!r}, '--quiet'])\nexcept SystemExit as exit:\n"
        "    print(json.dumps([exit.code, sorted(sys.modules)]))\n"
    )
    exit_code, loaded = json.loads(run_fresh(code).splitlines()[-1])
    assert exit_code == 0
    assert ET.parse(tmp_path / "out" / "junit.xml").getroot().tag == "testsuites"
    result = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
    tolerances = [f["tolerance"] for g in result["gates"] for f in g.get("failures", ())]
    assert any("hit_at_k >= 0.9 over 2 case(s)" in t for t in tolerances), result["gates"]
    assert not set(loaded) & {"fractions", "decimal", "xml.etree.ElementTree", "pyexpat"}

"""GitHub workflow commands: toolkit escaping, caps per level, stop-commands, $GITHUB_OUTPUT heredocs."""

from __future__ import annotations

import copy
from pathlib import Path

import artifact_samples as samples
from qlab.report import github


def test_escaping_matches_the_toolkit() -> None:
    assert github.escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = github.command("error", "bad: x\ny", file="gates/a,b.yaml", line=3, title="t:1")
    assert line == "::error file=gates/a%2Cb.yaml,line=3,title=t%3A1::bad: x%0Ay"


def test_annotations_point_at_the_case_line() -> None:
    lines = github.annotation_lines(samples.result())
    case_line = next(x for x in lines if "member-search-004" in x)
    assert case_line.startswith(
        "::error file=gates/search_core/member-search-004.yaml,line=1,title=qlab search_core/member-search-004::"
    )
    assert "%0Ahint: " in case_line
    assert lines[0].startswith("::error title=qlab gate::gate plan blocked")


def test_at_most_ten_per_level_and_a_notice_for_the_rest() -> None:
    art = samples.result()
    template = art["cases"][3]
    art["cases"] = [{**copy.deepcopy(template), "case_id": f"c{i}"} for i in range(25)]
    art["cases"] += [{**copy.deepcopy(template), "case_id": f"f{i}", "flaky": True} for i in range(12)]
    lines = github.annotation_lines(art)
    assert sum(x.startswith("::error") for x in lines) == 10
    assert sum(x.startswith("::warning") for x in lines) == 10
    assert lines[-1].startswith(
        "::notice title=qlab::18 more qlab finding(s) not annotated"
    )  # 16 errors + 2 warnings


def test_stop_commands_fence_raw_text() -> None:
    assert github.stop_commands(token="tok123") == ("::stop-commands::tok123", "::tok123::")
    assert github.stop_commands() != github.stop_commands()  # a fresh random token each time


def test_outputs_and_summary_files(tmp_path: Path) -> None:
    out, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    art = samples.result()
    art["decision"]["reasons"].append("gate search warned: x")
    values = github.outputs(art, {"junit": "out/junit.xml"})
    assert values["decision"] == "block" and values["failed"] == "2" and values["blocked"] == "1"
    github.write_outputs(values, env)
    github.append_summary("# hi", env)
    github.append_summary("# again\n", env)
    text = out.read_text(encoding="utf-8")
    assert "decision=block\n" in text and "junit=out/junit.xml\n" in text
    assert not {"error", "result-path", "junit-path", "summary-path"} & set(values)  # no old names
    head, _, rest = text.partition("reasons<<")  # multi-line values use the heredoc form
    delimiter = rest.split("\n", 1)[0]
    assert head and delimiter.startswith("ghadelimiter_")
    assert (
        f"reasons<<{delimiter}\ngate plan blocked: plan_hit_rate 0.5 < 0.9\ngate search warned: x\n{delimiter}\n"
        in text
    )
    assert summary.read_text(encoding="utf-8") == "# hi\n# again\n"
    assert github.write_outputs(values, {}) is None and github.append_summary("x", {}) is None


def test_in_actions_only_when_true() -> None:
    assert github.in_actions({"GITHUB_ACTIONS": "true"}) and not github.in_actions({"GITHUB_ACTIONS": "1"})


def test_case_files_are_annotated_relative_to_the_workspace() -> None:
    lines = github.annotation_lines(samples.result(), root="services/api")
    assert any(
        x.startswith("::error file=services/api/gates/search_core/member-search-004.yaml,line=1,")
        for x in lines
    )


def test_config_problems_are_annotated_at_their_location(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    lines = github.config_annotations(
        [
            ("qa/qlab.yaml", 9, 11, "error", "$.suites.s.mode: 'serch' is not a known mode"),
            ("qa/cases/a.yaml", 2, 3, "warning", "unused"),
            (str(tmp_path / "elsewhere.yaml"), 1, 1, "error", "outside the workspace"),
            ("", 0, 0, "error", "no case selected"),
        ],
        workspace=workspace,
        cwd=workspace,
    )
    assert lines == [
        "::error file=qa/qlab.yaml,line=9,col=11,title=qlab configuration::$.suites.s.mode: 'serch' is not a known mode",
        "::error title=qlab configuration::outside the workspace",
        "::error title=qlab configuration::no case selected",
        "::warning file=qa/cases/a.yaml,line=2,col=3,title=qlab configuration::unused",
    ]


def test_the_run_page_url() -> None:
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/api", "GITHUB_RUN_ID": "42"}
    assert github.run_url(env) == "https://github.com/acme/api/actions/runs/42"
    assert github.run_url({}) is None


def test_a_failure_its_gate_tolerates_is_a_warning_that_does_not_gate(tmp_path: Path) -> None:
    """Rule (issue 36, 6): a green run whose search gate tolerates one miss (``hit_at_k >= 0.9`` over 10 cases)
    annotates that miss as a ``::warning`` saying "does not gate", never an ``::error``; the summary and JUnit
    say the same."""
    import dataclasses
    import xml.etree.ElementTree as ET

    from qlab.report import junit, markdown
    from qlab.run.runner import run
    from run import fakes as f

    config = f.config(tmp_path)
    gates = tuple(dataclasses.replace(g, stop_if=()) if g.name == "search" else g for g in config.gates)
    cases = tuple(
        f.case(f"s{i}", "search_core", "search", "absent:x" if i == 3 else "t", line=i) for i in range(10)
    )
    art = run(
        f.FakeProject(dataclasses.replace(config, gates=gates), cases), options=f.options(tmp_path)
    ).artifact
    assert art["decision"]["verdict"] == "pass"
    lines = github.annotation_lines(art)
    miss = [line for line in lines if "s3: search" in line]
    assert len(miss) == 1 and miss[0].startswith("::warning ")
    assert "does not gate (tolerated by gate search: hit_at_k >= 0.9 over 10 case(s))" in miss[0]
    assert not any(line.startswith("::error") for line in lines)
    summary = markdown.render(art)
    assert "(1 of the failures do not gate)" in summary and "### Failing cases" not in summary
    root = ET.fromstring(junit.render(art, hostname="h"))
    case = next(t for t in root.iter("testcase") if t.get("name") == "s3")
    assert case[0].get("message", "").startswith("does not gate (tolerated by gate search")

"""Semantic checks through load_project on small projects (the fixtures under tests/fixtures cover the
wording of each; these pin the behaviour)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlab.contracts.errors import ConfigError
from qlab.project import load_project
from qlab.project.semantic_config import MODE_REACH

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"


def messages(tmp_path: Path, config: str, files: dict[str, str]) -> list[str]:
    (tmp_path / "qlab.yaml").write_text(
        f"version: 1\nproject: t\ncollection:\n  sources:\n    - openapi: {DEMO}\n{config}"
    )
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    try:
        project = load_project(tmp_path / "qlab.yaml", environ={})
    except ConfigError as exc:
        return [f"{d.severity}: {d.json_path}: {d.message}" for d in exc.diagnostics]
    return [f"{d.severity}: {d.json_path}: {d.message}" for d in project.warnings]


def test_mode_reach() -> None:
    assert "execute" not in MODE_REACH["plan"] and "select" in MODE_REACH["plan"]
    assert MODE_REACH["search"] == ("build", "search", "learn")


def test_gates_may_repeat_a_stage_but_not_go_back(tmp_path: Path) -> None:
    config = """suites:\n  s: {mode: search, cases: [c.yaml]}
gates:\n  - {stage: search, suites: [s]}\n  - {stage: search, name: again, suites: [s]}\n  - {stage: build, stop_if: [schema_coverage_below: 0.8]}\n"""
    assert messages(tmp_path, config, {"c.yaml": "{id: a, query: q, expected_target: t}\n"}) == [
        "error: $.gates[2].stage: gate 'build' (stage build) comes after gate 'again' (stage search); gates run in "
        "stage order: build, search, select, plan, execute, learn"
    ]


def test_cross_file_duplicate_ids_name_the_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = "suites:\n  s: {mode: search, cases: ['*.yaml']}\ngates: [{stage: search, suites: [s]}]\n"
    found = messages(tmp_path, config, {"a.yaml": "{id: x, query: q, expected_target: t}\n",
                                        "b.yaml": "- {id: x, query: q2, expected_target: t}\n"})  # fmt: skip
    assert found == ["error: $[0].id: duplicate case id 'x': also used at a.yaml:1:6"]


def test_a_duplicate_id_names_a_first_use_that_failed_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = "suites:\n  s: {mode: search, cases: ['*.yaml']}\ngates: [{stage: search, suites: [s]}]\n"
    found = messages(tmp_path, config, {"a.yaml": "- {id: y, query: q, expected_target: t}\n- id: x\n  qurey: q\n",
                                        "b.yaml": "# b\n- {id: x, query: q2, expected_target: t}\n"})  # fmt: skip
    assert "error: $[0].id: duplicate case id 'x': also used at a.yaml:2:7" in found


def test_a_file_that_is_not_valid_yaml_gives_its_syntax_problem_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: a case file is read item by item, but one with a YAML problem after valid items contributes that
    problem alone: not the schema problems of its items, and not its ids (a later file may use them)."""
    monkeypatch.chdir(tmp_path)
    config = "suites:\n  s: {mode: search, cases: ['*.yaml']}\ngates: [{stage: search, suites: [s]}]\n"
    found = messages(tmp_path, config, {"a.yaml": "- {id: x, query: q, expected_target: t}\n- {id: y, qurey: q}\n"
                                                  "- {id: z\n",
                                        "b.yaml": "- {id: x, query: q2, expected_target: t}\n"})  # fmt: skip
    assert len(found) == 1 and found[0].startswith("error: : invalid YAML: "), found


def test_mutating_case_safety_is_a_warning_here(tmp_path: Path) -> None:
    config = """environments:\n  dev: {base_url: 'http://127.0.0.1:1', allowed_hosts: [127.0.0.1]}
suites:\n  e: {mode: execute, cases: [c.yaml], environment: dev}\ngates: [{stage: execute, suites: [e]}]\n"""
    case = "{id: m, query: q, expected_target: createOrder, mutation_safety: allow_mutation}\n"
    assert messages(tmp_path, config, {"c.yaml": case}) == [
        "warning: $.mutation_safety: a mutating case without cleanup steps or assertions is refused at run time "
        "(cleanup_missing): add cleanup steps that undo it, and assertions"
    ]


def test_tool_ids_are_not_checked_here(tmp_path: Path) -> None:
    """expected_target and assertion tools are the build stage's to check: the collection is not built yet."""
    config = "suites:\n  s: {mode: search, cases: [c.yaml]}\ngates: [{stage: search, suites: [s]}]\n"
    case = "{id: a, query: q, expected_target: noSuchTool, assertions: [{type: top_1_is, tool: nope}]}\n"
    assert messages(tmp_path, config, {"c.yaml": case}) == []


@pytest.mark.parametrize("glob", ["c.yaml", "[c].yaml"])
def test_a_named_file_that_is_missing_and_a_glob_that_matches_nothing_are_errors(
    tmp_path: Path, glob: str
) -> None:
    """A glob that matches nothing would leave its suite without cases and its gate "skipped": a run would pass."""
    config = f"suites:\n  s: {{mode: search, cases: ['{glob}']}}\ngates: [{{stage: search, suites: [s]}}]\n"
    (found,) = messages(tmp_path, config, {})
    assert found.startswith("error: ")
    assert ("does not exist" if glob == "c.yaml" else "matches no case file") in found


def test_case_paths_outside_the_project_are_refused_and_never_read(tmp_path: Path) -> None:
    """``../../etc/passwd``, an absolute path, a glob that climbs out, a symbolic link out of the project: each an
    error at the pattern, and nothing of the file is echoed (it is never read)."""
    project = tmp_path / "project"
    secret = tmp_path / "outside" / "secret.yaml"
    secret.parent.mkdir(parents=True)
    secret.write_text("password: hunter2-CANARY\n")
    (project / "cases").mkdir(parents=True)
    (project / "cases" / "link.yaml").symlink_to(secret)
    (project / "cases" / "ok.yaml").write_text("{id: a, query: q, expected_target: getHealth}\n")
    patterns = ["../outside/secret.yaml", str(secret), "../outside/*.yaml", "cases/*.yaml"]
    config = f"suites:\n  s: {{mode: search, cases: {patterns}}}\ngates: [{{stage: search, suites: [s]}}]\n"
    found = messages(project, config, {})
    assert len(found) == 4 and all(f.startswith("error: $.suites.s.cases[") for f in found), found
    assert sum("points outside the project" in f for f in found) == 3
    assert "cases/link.yaml is a link to a file outside the project" in found[3]
    assert not any("hunter2" in f for f in found)


def test_a_fifo_where_a_case_file_belongs_is_an_error_and_never_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    config = "suites:\n  s: {mode: search, cases: [pipe.yaml]}\ngates: [{stage: search, suites: [s]}]\n"
    (found,) = messages(tmp_path, config, {})
    assert "case file pipe.yaml is not a regular file (a FIFO" in found

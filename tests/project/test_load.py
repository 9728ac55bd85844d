"""load_project: the public API, the model it builds, and error aggregation across files."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from qlab.contracts.errors import ConfigError, InputError
from qlab.project import CaseFile, Project, find_config, load_project, resolve
from qlab.project.model import Guard, StopCondition, Threshold

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"


@pytest.fixture(scope="module")
def project() -> Project:
    return load_project(ROOT / "qlab.yaml", environ={})


def test_the_dogfood_project(project: Project) -> None:
    config = project.config
    assert (config.version, config.project, config.path) == (
        1,
        "member-delivery-demo",
        str(ROOT / "qlab.yaml"),
    )
    assert [g.name for g in config.gates] == ["build", "search", "select", "plan", "execute", "learn"]
    assert {name: len(project.cases_for(name)) for name in config.suites} == {
        "search_core": 30, "business_manual_20": 20, "plan_e2e": 10, "execute_read": 6, "execute_mutation": 3,
        "regression": 2,
    }  # fmt: skip
    assert project.warnings == ()
    assert len(project.case_files) == 10
    assert all(isinstance(f, CaseFile) and len(f.digest) == 64 for f in project.case_files)
    assert sum(f.count for f in project.case_files) == len(project.cases) == 71


def test_config_mapping(project: Project) -> None:
    config = project.config
    (source,) = config.collection.sources
    assert (source.name, source.kind, source.location) == ("demo", "openapi", "runner/qlab/demo/openapi.yaml")
    assert (config.collection.aliases_file, config.collection.auth_profile) == (
        "gates/aliases.yaml",
        "demo_bearer",
    )
    assert config.auth_profiles["demo_bearer"].token_command == 'echo "${QLAB_DEMO_TOKEN:-demo-token}"'
    dev = config.environments["dev"]
    assert dev.base_url == "http://127.0.0.1:8765"  # ${QLAB_DEMO_PORT:-8765}
    assert dev.allowed_hosts == ("127.0.0.1", "localhost")
    assert dev.server is not None and dev.server.reuse_existing is False and dev.server.timeout_sec == 20
    suite = config.suites["search_core"]
    assert (suite.mode, suite.cases, suite.category, suite.cadence, suite.k) == (
        "search", ("gates/search_core/*.yaml",), "flow", "every_search_change", 5,
    )  # fmt: skip
    assert config.suites["plan_e2e"].critical == ("member-plan-001",)
    build, search = config.gates[0], config.gates[1]
    assert build.stop_if == (StopCondition("schema_coverage_below", 0.8, build.stop_if[0].origin),)
    assert [(t.metric, t.op, t.value) for t in search.thresholds] == [
        ("hit_at_k", ">=", 0.95),
        ("top_1", ">=", 0.8),
    ]
    lines = (ROOT / "qlab.yaml").read_text().splitlines()
    assert lines[search.thresholds[0].origin.line - 1].strip() == 'hit_at_k: ">= 0.95"'
    assert search.thresholds[0].origin.file == "qlab.yaml"
    assert config.promotion["alias_or_semantic_metadata"].metrics == ("hit_at_k", "top_1", "mrr")
    assert config.release["member-delivery-skill"].max_tool_calls == 3
    assert config.learning.regression_suite == "regression"
    assert config.budget.max_duration_sec == 300
    assert config.output.dir == ".qlab/out"


def test_case_mapping(project: Project) -> None:
    cases = {c.id: c for c in project.cases}
    plan = cases["member-plan-001"]
    assert (plan.mode, plan.suite, plan.file) == ("plan", "plan_e2e", "gates/plan_e2e/member-plan-001.yaml")
    assert plan.expected_plan_tools == ("getMemberDeliveryList", "getMemberDeliveryDetail")
    assert plan.provided_entities == {"memberNo": "M-1001"}
    assert (plan.origin.file, plan.origin.line) == ("gates/plan_e2e/member-plan-001.yaml", 5)
    search = cases["search-core-002"]
    assert search.mode == "search"  # the suite's mode when the case says none
    mutation = cases["execute-mutation-001"]
    assert mutation.mutation_safety == "allow_mutation"
    assert [(c.name, c.path) for c in mutation.captures] == [("orderId", "$.data.orderId")]
    (cleanup,) = mutation.cleanup
    assert (cleanup.tool, dict(cleanup.arguments), cleanup.expect_status) == (
        "cancelOrder", {"orderId": "${captures.orderId}"}, (204, 404),
    )  # fmt: skip
    assert mutation.assertions[0].type == "http_status" and mutation.assertions[0].args == {"in": [201]}
    assert mutation.assertions[0].origin.line > mutation.origin.line


def test_assertion_synonyms_are_normalised(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        "execute",
        """
- id: e-1
  query: q
  expected_target: getMember
  assertions:
    - {type: json_path_equals, path: $.a, value: 1}
    - {type: header_equals, name: X, value: y}
    - {type: json_path_matches, path: $.a, pattern: "^a"}
""",
    )
    case = load_project(tmp_path / "qlab.yaml", environ={}).cases[0]
    assert [dict(a.args) for a in case.assertions] == [
        {"path": "$.a", "equals": 1}, {"name": "X", "equals": "y"}, {"path": "$.a", "regex": "^a"},
    ]  # fmt: skip
    assert case.raw["assertions"][0]["value"] == 1  # as written


def test_cases_share_what_many_of_them_repeat(tmp_path: Path) -> None:
    """Rule: 100,000 cases hold one string per expected target (in ``raw`` too) and one empty trace, not one
    each; the values are those written."""
    write_project(tmp_path, "search", "- {id: s-1, query: q, expected_target: getMember}\n")
    (tmp_path / "cases" / "b.json").write_text(
        '[{"id": "s-2", "query": "q2", "expected_target": "getMember"}]'
    )
    (tmp_path / "qlab.yaml").write_text(
        (tmp_path / "qlab.yaml").read_text().replace("cases/*.yaml", "cases/*")
    )
    one, two = load_project(tmp_path / "qlab.yaml", environ={}).cases
    assert one.expected_target == "getMember" and one.expected_target is two.expected_target
    assert one.raw["expected_target"] is two.raw["expected_target"] is two.expected_target
    assert one.trace == {} and one.trace is two.trace


def write_project(folder: Path, mode: str, cases: str, extra: str = "") -> Path:
    env = "    environment: dev\n" if mode == "execute" else ""
    (folder / "qlab.yaml").write_text(
        f"version: 1\nproject: t\ncollection:\n  sources:\n    - openapi: {DEMO}\n"
        "environments:\n  dev: {base_url: 'http://127.0.0.1:1', allowed_hosts: [127.0.0.1]}\n"
        f"suites:\n  s:\n    mode: {mode}\n    cases: [cases/*.yaml]\n{env}"
        f"gates:\n  - stage: {mode}\n    suites: [s]\n{extra}"
    )
    (folder / "cases").mkdir(exist_ok=True)
    (folder / "cases" / "a.yaml").write_text(cases)
    return folder / "qlab.yaml"


def test_threshold_stop_if_and_guard_forms(tmp_path: Path) -> None:
    path = write_project(
        tmp_path,
        "search",
        "- {id: s-1, query: q, expected_target: x}\n",
        """  - stage: search
    name: list-form
    suites: [s]
    thresholds:
      - {metric: mrr, op: ">", value: 0.5}
    stop_if: [any_failure, {top_1_below: 0.5}]
    guards: [{name: budget}, {name: scrub, mode: warn}]
  - stage: search
    name: object-form
    thresholds: {ndcg_at_k: {op: "<=", value: 1}, pass_rate: " == 1 "}
""",
    )
    gates = load_project(path, environ={}).config.gates
    assert [(t.metric, t.op, t.value) for t in gates[1].thresholds] == [("mrr", ">", 0.5)]
    assert [(s.name, s.value) for s in gates[1].stop_if] == [("any_failure", None), ("top_1_below", 0.5)]
    assert gates[1].guards == (Guard("budget", "block"), Guard("scrub", "warn"))
    assert [(t.metric, t.op, t.value) for t in gates[2].thresholds] == [
        ("ndcg_at_k", "<=", 1.0),
        ("pass_rate", "==", 1.0),
    ]
    assert isinstance(gates[2].thresholds[0], Threshold)


def test_source_forms(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text("{}")
    path = write_project(tmp_path, "search", "- {id: s-1, query: q, expected_target: x}\n")
    text = path.read_text().replace(
        f"    - openapi: {DEMO}\n",
        f"    - openapi: {DEMO}\n    - mcp: tools.json\n    - mcp: {{command: srv, args: [--stdio], env: {{A: b}}}}\n"
        "    - {name: py, python: 'pkg.tools:TOOLS'}\n    - openapi: https://example.com/openapi.json\n",
    )
    path.write_text(text)
    sources = load_project(path, environ={}).config.collection.sources
    assert [(s.name, s.kind, s.location) for s in sources] == [
        ("openapi-1", "openapi", str(DEMO)), ("mcp-2", "mcp", "tools.json"), ("mcp-3", "mcp", None),
        ("py", "python", "pkg.tools:TOOLS"), ("openapi-5", "openapi", "https://example.com/openapi.json"),
    ]  # fmt: skip
    assert (sources[2].command, sources[2].args, dict(sources[2].env)) == ("srv", ("--stdio",), {"A": "b"})


def test_digest_covers_the_interpolated_bytes() -> None:
    raw = (ROOT / "qlab.yaml").read_text()
    default = load_project(ROOT / "qlab.yaml", environ={}).config.digest
    other = load_project(ROOT / "qlab.yaml", environ={"QLAB_DEMO_PORT": "9999"}).config.digest
    assert (
        default
        == hashlib.sha256(
            raw.replace("${QLAB_DEMO_PORT:-8765}", "8765")
            .replace("${QLAB_TARGET_VERSION:-dev}", "dev")
            .replace("$${", "${")
            .encode()
        ).hexdigest()
    )
    assert other != default


def test_the_shard_digest_leaves_out_where_environments_listen(tmp_path: Path) -> None:
    """Shards of one matrix may run their environments on other ports (a port from the environment): their
    shard digest is the same; any other difference, a literal address included, changes it."""
    raw = (ROOT / "qlab.yaml").read_text(encoding="utf-8")
    config = tmp_path / "qlab.yaml"
    shutil.copytree(ROOT / "gates", tmp_path / "gates")
    (tmp_path / "runner/qlab/demo").mkdir(parents=True)
    shutil.copyfile(ROOT / "runner/qlab/demo/openapi.yaml", tmp_path / "runner/qlab/demo/openapi.yaml")

    def digests(text: str, environ: dict[str, str]) -> tuple[str, str]:
        config.write_text(text, encoding="utf-8")
        loaded = load_project(config, environ=environ).config
        return loaded.digest, loaded.shard_digest

    one, two = digests(raw, {"QLAB_DEMO_PORT": "8101"}), digests(raw, {"QLAB_DEMO_PORT": "8102"})
    assert one[0] != two[0] and one[1] == two[1]
    literal = raw.replace("http://127.0.0.1:${QLAB_DEMO_PORT:-8765}", "http://127.0.0.1:9000", 1)
    assert digests(literal, {"QLAB_DEMO_PORT": "8101"})[1] != one[1]
    stricter = raw.replace('hit_at_k: ">= 0.95"', 'hit_at_k: ">= 0.96"')
    assert digests(stricter, {"QLAB_DEMO_PORT": "8101"})[1] != one[1]


def test_environ_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QLAB_DEMO_PORT", "8123")
    assert load_project(ROOT / "qlab.yaml").config.environments["dev"].base_url == "http://127.0.0.1:8123"


def test_errors_of_every_file_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config that fails the schema still has its well-formed suites' case files checked; paths are shown
    relative to the working directory."""
    monkeypatch.chdir(tmp_path)
    path = write_project(tmp_path, "search", "- {id: s-1, qurey: q}\n", "engine: {type: bultin}\n")
    with pytest.raises(ConfigError) as caught:
        load_project(path, environ={})
    assert [d.render() for d in caught.value.diagnostics] == [
        "cases/a.yaml:1:3: $[0]: missing required key 'query'",
        "cases/a.yaml:1:13: $[0].qurey: unknown key 'qurey'. Did you mean 'query'?",
        "qlab.yaml:15:16: $.engine.type: 'bultin' is not a known engine type. Did you mean 'builtin'?",
    ]
    assert str(caught.value).count("\n") == 2  # the message lists them all, sorted by file and line


def test_warnings_travel_with_the_project(tmp_path: Path) -> None:
    path = write_project(tmp_path, "search", "- {id: s-1, query: q}\n")
    project = load_project(path, environ={})
    assert [(w.severity, w.message) for w in project.warnings] == [
        ("warning", "the case checks nothing: add expected_target or assertions")
    ]


def test_only_the_named_case_files(tmp_path: Path) -> None:
    path = write_project(tmp_path, "search", "- {id: s-1, query: q, expected_target: x}\n")
    (tmp_path / "cases" / "b.yaml").write_text("- {id: s-2, qurey: q}\n")
    project = load_project(path, environ={}, case_files=[tmp_path / "cases" / "a.yaml"])
    assert [c.id for c in project.cases] == ["s-1"]


def test_find_config_searches_upwards_to_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "qlab.yaml").write_text("version: 1\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / "qlab.yaml"
    (tmp_path / "a" / ".git").mkdir()  # a repository inside: the search stops at its root
    with pytest.raises(InputError, match=r"no qlab.yaml found in .* run `qlab init`"):
        find_config(deep)


def test_resolve(project: Project) -> None:
    assert resolve(project.config, "gates/aliases.yaml") == ROOT / "gates" / "aliases.yaml"
    assert resolve(project.config.path, "/abs/x.yaml") == Path("/abs/x.yaml")


def test_identity_fields_are_sensitive_unless_kept(tmp_path: Path) -> None:
    """Identity-like fields are sensitive in every output by default, with each environment's own fields, in every
    environment; ``output.identity_fields: kept`` leaves the identity fields out (and nothing else)."""
    from qlab.adapters.scrub import IDENTITY_FIELDS

    shutil.copy(DEMO, tmp_path / "api.yaml")
    base = (
        "version: 1\nproject: p\ncollection: {sources: [{name: a, openapi: api.yaml}]}\n"
        "environments:\n  dev: {base_url: 'http://127.0.0.1:1', sensitive_fields: [memberNo]}\n"
        "  prod: {base_url: 'http://127.0.0.1:2'}\n"
        "suites: {s: {mode: search, cases: [c.yaml]}}\ngates: [{name: search, stage: search, suites: [s]}]\n"
    )
    (tmp_path / "c.yaml").write_text("- {id: c1, query: q, expected_target: getMember}\n", encoding="utf-8")
    (tmp_path / "qlab.yaml").write_text(base, encoding="utf-8")
    config = load_project(tmp_path / "qlab.yaml", environ={}).config
    assert config.sensitive_fields == (*IDENTITY_FIELDS, "memberNo")
    assert {"userId", "email", "phone"} <= set(IDENTITY_FIELDS)
    assert config.environments["prod"].sensitive_fields == config.sensitive_fields  # every environment
    (tmp_path / "qlab.yaml").write_text(base + "output: {identity_fields: kept}\n", encoding="utf-8")
    config = load_project(tmp_path / "qlab.yaml", environ={}).config
    assert config.sensitive_fields == ("memberNo",) == config.environments["dev"].sensitive_fields
    (tmp_path / "qlab.yaml").write_text(base + "output: {identity_fields: off}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_project(tmp_path / "qlab.yaml", environ={})
    assert "$.output.identity_fields" in str(refused.value) and "kept" in str(refused.value)


def test_the_config_reference_lists_every_identity_field() -> None:
    from qlab.adapters.scrub import IDENTITY_FIELDS
    from qlab.project.schemas import load_schema

    described = load_schema("config")["properties"]["output"]["properties"]["identity_fields"]["description"]
    assert all(f"{field}," in described or f"{field}." in described for field in IDENTITY_FIELDS)
    assert all(
        field in (ROOT / "docs" / "config.md").read_text(encoding="utf-8") for field in IDENTITY_FIELDS
    )

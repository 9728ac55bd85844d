"""The gate runner with fake stages: order, blocking, required/flaky, repeats, guards, budget, pre-run checks."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import servers
from qlab.collection.model import Collection, Tool
from qlab.contracts.errors import InputError
from qlab.contracts.resources import load_schema
from qlab.engine.types import Plan, PlanStep, SearchResult, SearchRow, Selection
from qlab.project.model import Budget, Environment, Gate, Guard, ServerConfig, StopCondition, Suite, Threshold
from qlab.run.options import RunOptions, Seams
from qlab.run.runner import run
from qlab.run.selection import SelectionSpec
from qlab.stages.base import StageReport
from run import fakes as f


def _run(tmp_path: Path, cases: Any = None, **kw: Any) -> dict[str, Any]:
    config = kw.pop("config", None) or f.config(tmp_path)
    project = f.FakeProject(config, tuple(cases if cases is not None else f.demo_cases()))
    outcome = run(project, options=f.options(tmp_path, **kw))
    assert outcome.exit_code == outcome.artifact["decision"]["exit_code"]
    jsonschema.Draft7Validator(load_schema("result")).validate(outcome.artifact)
    return outcome.artifact


def _gate(artifact: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in artifact["gates"] if g["name"] == name)


def _case(artifact: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in artifact["cases"] if c["case_id"] == case_id)


def test_all_gates_pass_in_order(tmp_path: Path) -> None:
    artifact = _run(tmp_path)
    assert [g["name"] for g in artifact["gates"]] == ["build", "search", "select", "plan", "execute", "learn"]
    assert {g["status"] for g in artifact["gates"]} == {"passed"}
    assert artifact["decision"] == {
        "verdict": "pass",
        "reasons": ["6 gate(s) passed"],
        "exit_code": 0,
        "advisory": False,
    }
    assert [c["case_id"] for c in artifact["cases"]] == ["s1", "s2", "p1", "p2", "e1"]
    assert artifact["metrics"]["search_top_1"] == 0.5
    assert _gate(artifact, "search")["thresholds"][0] == {
        "metric": "hit_at_k", "op": ">=", "value": 0.9, "actual": 1.0, "passed": True, "suite": "search_core", "gating": True
    }  # fmt: skip
    # pre-run checks come first, then every stage boundary's checks
    assert [g["guard"] for g in artifact["guards"][:5]] == [
        "config_valid",
        "sources_resolvable",
        "engine_reachable",
        "environment_reachable",
        "auth_readiness",
    ]
    assert {(g["guard"], g["stage"]) for g in artifact["guards"]} >= {
        ("output_schema", "search"),
        ("scrub", "learn"),
    }


def test_a_blocking_search_gate_blocks_the_later_stages(tmp_path: Path) -> None:
    cases = [*f.demo_cases(), f.case("s3", "search_core", "search", "absent:x", line=9)]
    artifact = _run(tmp_path, cases)
    assert artifact["decision"]["verdict"] == "block" and artifact["decision"]["exit_code"] == 1
    search = _gate(artifact, "search")
    assert search["status"] == "blocked"
    assert search["stops"][0]["condition"] == "expected_target_absent" and search["stops"][0]["case_ids"] == [
        "s3"
    ]
    assert [_gate(artifact, n)["status"] for n in ("select", "plan", "execute")] == ["skipped"] * 3
    for case_id in ("p1", "p2", "e1"):
        case = _case(artifact, case_id)
        assert case["status"] == "blocked"
        assert case["failure"]["stage"] == "search" and case["failure"]["reason"] == "blocked_by_stage"
    assert _case(artifact, "s3")["failure"]["reason"] == "expected_target_absent"
    assert _case(artifact, "s1")["status"] == "passed"


def test_the_learn_gate_observes_a_blocked_run_and_leaves_its_verdict_alone(tmp_path: Path) -> None:
    """Rule: the learn stage observes every run that reached a decision: a run blocked at search records the
    miss as a signal (the run that most needs a proposal), and the decision is the search gate's block alone."""
    cases = [*f.demo_cases(), f.case("s3", "search_core", "search", "absent:x", line=9)]
    artifact = _run(tmp_path, cases)
    learn = _gate(artifact, "learn")
    assert learn["status"] == "passed", learn
    signals = artifact["stages"]["learn"]["details"]["signals"]
    assert [(s["signal"], s["case_ids"]) for s in signals] == [("search_miss", ["s3"])]
    assert artifact["decision"]["verdict"] == "block"
    assert all(r.startswith("gate search blocked") for r in artifact["decision"]["reasons"])


def test_a_run_stopped_by_an_error_is_not_observed_by_the_learn_gate(tmp_path: Path) -> None:
    """ERROR decided nothing: no learning from it (its failures are infrastructure faults), only the scrub scan."""
    cases = [*f.demo_cases()[:4], f.case("e1", "execute_read", "execute", "down:x")]
    artifact = _run(tmp_path, cases)
    assert artifact["decision"]["verdict"] == "error"
    assert _gate(artifact, "learn")["status"] == "skipped"
    assert "signals" not in artifact["stages"]["learn"]["details"]


def test_threshold_breach_blocks_with_the_numbers(tmp_path: Path) -> None:
    cases = [
        f.case("s1", "search_core", "search"),
        f.case("p1", "plan_e2e", "plan", "wrong:x"),
        f.case("p2", "plan_e2e", "plan"),
    ]
    artifact = _run(tmp_path, cases)
    select = _gate(artifact, "select")
    assert select["status"] == "blocked"
    assert select["thresholds"][0]["actual"] == 0.5 and select["thresholds"][0]["passed"] is False
    assert "selector_accuracy 0.5 breaches >= 0.9 (plan_e2e)" in select["reasons"][0]
    assert _case(artifact, "p2")["failure"]["stage"] == "select"  # passed select, never planned


def test_required_false_suite_is_reported_but_does_not_gate(tmp_path: Path) -> None:
    base = f.config(tmp_path)
    suites = dict(base.suites)
    suites["search_core"] = dataclasses.replace(suites["search_core"], required=False)
    config = dataclasses.replace(base, suites=suites)
    cases = [f.case("s1", "search_core", "search", "absent:x"), *f.demo_cases()[2:]]
    artifact = _run(tmp_path, cases, config=config)
    assert _gate(artifact, "search")["status"] == "warned"
    assert artifact["decision"]["exit_code"] == 0
    assert _case(artifact, "p1")["status"] == "passed"


def test_a_flaky_case_is_reported_but_does_not_gate(tmp_path: Path) -> None:
    cases = [*f.demo_cases()[:4], f.case("e1", "execute_read", "execute", "assert:x", flaky=True)]
    artifact = _run(tmp_path, cases)
    assert _case(artifact, "e1")["status"] == "failed" and _case(artifact, "e1")["flaky"] is True
    assert _gate(artifact, "execute")["status"] == "warned"
    assert artifact["decision"]["verdict"] == "pass"
    assert artifact["suites"]["execute_read"]["counts"]["flaky_failed"] == 1


@pytest.mark.parametrize(("min_pass", "status", "exit_code"), [(1, "passed", 0), (2, "failed", 1)])
def test_repeats_need_min_pass(tmp_path: Path, min_pass: int, status: str, exit_code: int) -> None:
    base = f.config(tmp_path)
    suites = dict(base.suites)
    suites["execute_read"] = dataclasses.replace(suites["execute_read"], repeat=2, min_pass=min_pass)
    cases = [f.case("e1", "execute_read", "execute", "flip:x")]
    execute = f.FakeExecute()
    artifact = _run(tmp_path, cases, config=dataclasses.replace(base, suites=suites), execute=execute)
    assert execute.calls == [1, 1]  # one call per attempt lane
    case = _case(artifact, "e1")
    assert (case["status"], case["attempts"], case["passes"]) == (status, 2, 1)
    assert artifact["decision"]["exit_code"] == exit_code


def test_exit_zero_is_advisory(tmp_path: Path) -> None:
    cases = [f.case("s1", "search_core", "search", "absent:x")]
    artifact = _run(tmp_path, cases, exit_zero=True)
    assert artifact["decision"]["verdict"] == "block"
    assert artifact["decision"]["exit_code"] == 0 and artifact["decision"]["advisory"] is True


def test_a_failed_pre_run_check_runs_no_case_and_exits_2(tmp_path: Path) -> None:
    from qlab.project.model import CollectionConfig, Source

    config = dataclasses.replace(
        f.config(tmp_path), collection=CollectionConfig(sources=(Source("api", "openapi", "missing.yaml"),))
    )
    stages_ran: list[str] = []

    def build(config: Any, gate: Gate) -> Any:
        stages_ran.append("build")
        return f.fake_build(config, gate)

    artifact = _run(tmp_path, config=config, build=build)
    assert stages_ran == []
    assert artifact["decision"]["exit_code"] == 2
    assert (
        "sources_resolvable" in artifact["decision"]["reasons"][0]
        and "missing.yaml" in artifact["decision"]["reasons"][0]
    )
    assert all(g["status"] == "skipped" for g in artifact["gates"])


def test_an_unreachable_engine_exits_2(tmp_path: Path) -> None:
    def broken(config: Any, collection: Any) -> Any:
        raise InputError("engine http://127.0.0.1:9: connection refused")

    project = f.FakeProject(f.config(tmp_path), f.demo_cases())
    opts = f.options(tmp_path)
    opts = dataclasses.replace(opts, seams=dataclasses.replace(opts.seams, engine=broken))
    outcome = run(project, options=opts)
    assert outcome.exit_code == 2
    assert any(g["guard"] == "engine_reachable" and not g["passed"] for g in outcome.artifact["guards"])


def test_a_failed_build_is_an_error_and_no_case_runs(tmp_path: Path) -> None:
    """Rule: a collection that cannot be built is ERROR (was: BLOCK, exit 1): nothing was judged."""
    artifact = _run(
        tmp_path, build=lambda c, g: (None, StageReport("build", details={"error": "spec_invalid"}))
    )
    assert _gate(artifact, "build")["status"] == "error"
    assert {(c["status"], c["failure"]["reason"]) for c in artifact["cases"]} == {
        ("skipped", "stopped_by_error")
    }
    assert {c["failure"]["stage"] for c in artifact["cases"]} == {"build"}
    assert (artifact["decision"]["verdict"], artifact["decision"]["exit_code"]) == ("error", 2)


def test_schema_coverage_stop_uses_its_argument(tmp_path: Path) -> None:
    gates = (
        Gate("build", "build", stop_if=(StopCondition("schema_coverage_below", 0.95),)),
        *f.DEFAULT_GATES[1:],
    )
    artifact = _run(tmp_path, config=f.config(tmp_path, gates=gates))
    build = _gate(artifact, "build")
    assert build["status"] == "blocked"
    assert build["stops"][0]["message"] == "schema_coverage 0.9 is below 0.95"


def _bad_search(ctx: Any, cases: Any, results: Any) -> StageReport:
    report = f.fake_search(ctx, cases, results)
    results[cases[0].id].search["top_k"] = "five"  # not an integer: breaks the result schema
    return report


@pytest.mark.parametrize(("mode", "status", "code"), [("block", "blocked", 1), ("warn", "warned", 0)])
def test_output_schema_guard_mode(tmp_path: Path, mode: str, status: str, code: int) -> None:
    gates = list(f.DEFAULT_GATES)
    gates[1] = dataclasses.replace(gates[1], guards=(Guard("output_schema", mode),))  # type: ignore[arg-type]
    project = f.FakeProject(f.config(tmp_path, gates=gates), f.demo_cases())
    outcome = run(project, options=f.options(tmp_path, stages={"search": _bad_search}))
    search = _gate(outcome.artifact, "search")
    assert search["status"] == status and outcome.exit_code == code
    guard = next(g for g in search["guards"] if g["guard"] == "output_schema")
    assert guard["passed"] is False and "s1: $.search.top_k: expected integer, got string" in guard["message"]
    assert outcome.artifact["stages"]["search"]["metrics"]["schema_validity"] == 0.5
    if mode == "warn":  # the run goes on to learn (which reads no input of a case it cannot help)
        assert _gate(outcome.artifact, "learn")["status"] == "passed"


def test_a_learning_loop_that_fails_is_shown_as_a_warning_and_does_not_gate(tmp_path: Path) -> None:
    """Rule: suggestions are advisory: a learner that raises leaves a ``learning`` guard in warn mode with its
    error, the learn gate warned, and the verdict as the gates before it decided."""

    def broken(artifact: Any, **kw: Any) -> dict[str, Any]:
        raise ValueError("invalid literal for int() with base 10: 'five'")

    artifact = _run(tmp_path, learner=broken)
    learn = _gate(artifact, "learn")
    failed = [g for g in learn["guards"] if not g["passed"]]
    assert learn["status"] == "warned" and [(g["guard"], g["mode"]) for g in failed] == [("learning", "warn")]
    assert "suggestions failed: ValueError: invalid literal" in failed[0]["message"]
    assert artifact["decision"]["exit_code"] == 0


def test_budget_exceeded_blocks(tmp_path: Path) -> None:
    artifact = _run(tmp_path, config=f.config(tmp_path, budget=Budget(max_duration_sec=0.0)))
    assert _gate(artifact, "build")["status"] == "blocked"
    assert "budget_exceeded: run time" in _gate(artifact, "build")["reasons"][0]


def test_a_budget_overrun_is_judged_once_by_the_gate_that_found_it(tmp_path: Path) -> None:
    """Rule: the budget is the run's, so the gate whose boundary finds an overrun judges it, in its own mode: with
    the build gate's budget check set to warn, the later gates record that the run is still over budget and do
    not block on the same overrun (they used to, each in its own default ``block`` mode)."""
    gates = list(f.DEFAULT_GATES)
    gates[0] = dataclasses.replace(gates[0], guards=(Guard("budget", "warn"),))  # type: ignore[arg-type]
    config = f.config(tmp_path, gates=gates, budget=Budget(max_duration_sec=0.0))
    artifact = _run(tmp_path, config=config)
    budget = [g for g in artifact["guards"] if g["guard"] == "budget"]
    assert [(g["gate"], g["passed"], g["mode"]) for g in budget][:2] == [
        ("build", False, "warn"),
        ("search", True, "block"),
    ]
    assert "judged at gate build" in budget[1]["message"]
    assert _gate(artifact, "build")["status"] == "warned"
    assert artifact["decision"]["verdict"] == "pass", artifact["decision"]


def test_a_build_gate_qlab_yaml_does_not_list_that_stops_the_run_is_in_the_decision(tmp_path: Path) -> None:
    """The build stage runs whether qlab.yaml lists a build gate or not; when it stops the run (here its budget
    check), its record must reach the artifact: the later gates were skipped because of it, and the run used to
    say PASS with every gate skipped."""
    gates = [g for g in f.DEFAULT_GATES if g.stage != "build"]
    artifact = _run(tmp_path, config=f.config(tmp_path, gates=gates, budget=Budget(max_duration_sec=0.0)))
    assert artifact["decision"]["verdict"] == "block"
    assert [(g["name"], g["status"]) for g in artifact["gates"]][:2] == [
        ("build", "blocked"),
        ("search", "skipped"),
    ]


def test_a_cases_name_reaches_the_result_the_summary_and_junit(tmp_path: Path) -> None:
    """EvalCase.name was read from the case file and written nowhere."""
    from qlab.report import junit, markdown

    named = f.case("s3", "search_core", "search", "absent:x", line=9, name="an operator's word for a parcel")
    artifact = _run(tmp_path, [*f.demo_cases(), named])
    case = _case(artifact, "s3")
    assert case["name"] == "an operator's word for a parcel" and "name" not in _case(artifact, "s1")
    assert "| `s3` `an operator's word for a parcel` | search_core |" in markdown.render(artifact)
    assert "name: an operator's word for a parcel\nhint: " in junit.render(artifact)


def test_a_secret_in_a_stage_object_fails_the_scrub_guard(tmp_path: Path) -> None:
    execute = f.FakeExecute(secrets=("canary-s3cr3t-value",), leak=True)
    artifact = _run(tmp_path, execute=execute)
    guard = next(g for g in _gate(artifact, "execute")["guards"] if g["guard"] == "scrub")
    assert guard["passed"] is False and "canary" not in guard["message"]
    assert _gate(artifact, "execute")["status"] == "blocked"


def test_learn_gate_scans_the_written_outputs(tmp_path: Path) -> None:
    secret = "canary-learn-0042"
    written: list[Path] = []

    def emit(art: dict[str, Any]) -> list[Path]:
        path = tmp_path / "out" / "result.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"leaked {secret}", encoding="utf-8")
        written.append(path)
        return [path]

    artifact = _run(tmp_path, execute=f.FakeExecute(secrets=(secret,)), emit=emit)
    learn = _gate(artifact, "learn")
    assert written and learn["status"] == "blocked"
    assert learn["stops"][0]["condition"] == "scrub_failed" and "result.json" in learn["stops"][0]["message"]
    assert secret not in str(artifact)


def test_a_blocked_run_still_scans_its_outputs_for_secrets(tmp_path: Path) -> None:
    """A blocked run is the likely one to have leaked: the learn gate that observes it scans the written outputs
    and a leak is a failed scrub check; the decision stays a block."""
    secret = "canary-blocked-0077"

    def emit(art: dict[str, Any]) -> list[Path]:
        path = tmp_path / "out" / "server-dev.log"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"starting env TOKEN={secret}", encoding="utf-8")
        return [path]

    execute = f.FakeExecute(secrets=(secret,), leak=True)  # blocks the execute gate
    artifact = _run(tmp_path, execute=execute, emit=emit)
    assert (
        _gate(artifact, "execute")["status"] == "blocked" and _gate(artifact, "learn")["status"] == "blocked"
    )
    scrub = [g for g in artifact["guards"] if g["guard"] == "scrub" and g.get("subject") == "written outputs"]
    assert len(scrub) == 1 and scrub[0]["passed"] is False and "server-dev.log" in scrub[0]["message"]
    assert artifact["stages"]["learn"]["stops"][0]["condition"] == "scrub_failed"
    assert artifact["decision"]["exit_code"] == 1 and secret not in scrub[0]["message"]


def test_ambiguous_critical_case_stops_select(tmp_path: Path) -> None:
    def ambiguous(ctx: Any, cases: Any, results: Any) -> StageReport:
        report = f.fake_select(ctx, cases, results)
        results["p1"].target_selector["ambiguous"] = True
        return report

    artifact = _run(tmp_path, stages={"select": ambiguous})
    select = _gate(artifact, "select")
    assert select["status"] == "blocked" and select["stops"][0]["case_ids"] == ["p1"]


def test_zero_selected_cases_is_an_input_error(tmp_path: Path) -> None:
    project = f.FakeProject(f.config(tmp_path), f.demo_cases())
    with pytest.raises(InputError, match="no case selected"):
        run(
            project,
            options=dataclasses.replace(f.options(tmp_path), selection=SelectionSpec(tags=("nothing",))),
        )


def test_stage_selection_skips_other_gates(tmp_path: Path) -> None:
    project = f.FakeProject(f.config(tmp_path), f.demo_cases())
    outcome = run(
        project, options=dataclasses.replace(f.options(tmp_path), selection=SelectionSpec(stages=("search",)))
    )
    statuses = {g["name"]: g["status"] for g in outcome.artifact["gates"]}
    assert statuses == {
        "build": "passed",
        "search": "passed",
        "select": "skipped",
        "plan": "skipped",
        "execute": "skipped",
        "learn": "skipped",
    }
    assert [c["case_id"] for c in outcome.artifact["cases"]] == ["s1", "s2"]


def test_events_report_each_stage(tmp_path: Path) -> None:
    events: list[Any] = []
    project = f.FakeProject(f.config(tmp_path), f.demo_cases())
    run(project, options=dataclasses.replace(f.options(tmp_path), on_event=events.append))
    assert [(e.kind, e.stage) for e in events][:4] == [
        ("stage_start", "build"),
        ("stage_end", "build"),
        ("stage_start", "search"),
        ("stage_end", "search"),
    ]
    assert events[3].cases == 2 and events[3].status == "passed"


def test_thresholds_of_a_suite_less_gate_read_stage_metrics(tmp_path: Path) -> None:
    gates = (
        Gate("build", "build", thresholds=(Threshold("schema_coverage", ">=", 0.95),)),
        *f.DEFAULT_GATES[1:],
    )
    artifact = _run(tmp_path, config=f.config(tmp_path, gates=gates))
    row = _gate(artifact, "build")["thresholds"][0]
    assert (row["actual"], row["passed"], row["suite"]) == (0.9, False, None)


def test_options_default_is_usable() -> None:
    assert RunOptions().selection == SelectionSpec() and Suite("x", "search", ("*",)).repeat == 1


def test_an_http_engine_that_does_not_listen_fails_pre_run(tmp_path: Path) -> None:
    import servers
    from qlab.project.model import EngineConfig

    url = f"http://127.0.0.1:{servers.free_port()}/engine"
    config = dataclasses.replace(f.config(tmp_path), engine=EngineConfig(type="http", url=url, timeout_sec=2))
    execute = f.FakeExecute()
    artifact = _run(tmp_path, config=config, execute=execute)
    assert artifact["decision"]["exit_code"] == 2 and execute.calls == []
    guard = next(g for g in artifact["guards"] if g["guard"] == "engine_reachable")
    assert guard["passed"] is False and url in guard["message"] and "ConnectError" in guard["message"]


def test_an_http_engine_that_listens_passes_pre_run(tmp_path: Path, httpbin_url: str) -> None:
    from qlab.project.model import EngineConfig

    config = dataclasses.replace(
        f.config(tmp_path), engine=EngineConfig(type="http", url=f"{httpbin_url}/post")
    )
    artifact = _run(tmp_path, config=config)
    guard = next(g for g in artifact["guards"] if g["guard"] == "engine_reachable")
    assert guard["passed"] is True and "(HTTP 405)" in guard["message"]
    assert artifact["decision"]["exit_code"] == 0


def test_human_decisions_given_to_the_run_count_in_its_scorecard(tmp_path: Path) -> None:
    assert _run(tmp_path)["scorecard"]["human_acceptance"] is None
    assert _run(tmp_path, reviews=["accepted"])["scorecard"]["human_acceptance"] == 1.0
    assert _run(tmp_path, reviews=["accepted", "rejected"])["scorecard"]["human_acceptance"] == 0.5


def test_without_a_secret_the_learn_gate_writes_no_provisional_outputs(tmp_path: Path) -> None:
    written: list[dict[str, Any]] = []

    def emit(art: dict[str, Any]) -> list[Path]:
        written.append(art)
        return []

    artifact = _run(tmp_path, emit=emit)
    learn = _gate(artifact, "learn")
    assert written == [] and learn["status"] == "passed"
    scrub = next(g for g in learn["guards"] if g["guard"] == "scrub")
    assert (
        scrub["passed"]
        and scrub["message"] == "no secret value was resolved in this run: nothing to look for"
    )
    _run(tmp_path, execute=f.FakeExecute(secrets=("canary-9",)), emit=emit)
    assert len(written) == 1


# --------------------------------------------------------------------------------------------- the decision rule:
# the reproductions of the issue "the verdict users can trust", each with the decision a release manager expects


def _console(artifact: dict[str, Any]) -> str:
    from qlab.report import console

    return console.gate_table(artifact)


def _gates_with(execute: Gate, *extra: Gate) -> tuple[Gate, ...]:
    return (
        Gate("build", "build"),
        *extra,
        execute,
        Gate("learn", "learn", (), (), (StopCondition("scrub_failed"),)),
    )


def test_a_gate_without_thresholds_or_stops_blocks_a_failing_required_case(tmp_path: Path) -> None:
    """Was: ``PASS: 1 failed, 19 passed (exit 0)`` with ``execute_read_success_rate 0.000`` beside "✅ PASS"."""
    search = Gate("search", "search", ("search_core",), (Threshold("hit_at_k", ">=", 0.9),))
    config = dataclasses.replace(
        f.config(tmp_path), gates=_gates_with(Gate("execute", "execute", ("execute_read",)), search)
    )
    cases = [f.case(f"s{i}", "search_core", "search", line=i) for i in range(19)]
    cases.append(f.case("e1", "execute_read", "execute", "auth:x"))
    artifact = _run(tmp_path, cases, config=config)
    assert (artifact["decision"]["verdict"], artifact["decision"]["exit_code"]) == ("block", 1)
    text = _console(artifact)
    assert "BLOCK: 1 failed, 19 passed (exit 1)" in text and "PASS" not in text
    assert "e1 at execute (auth_context_required)" in _gate(artifact, "execute")["reasons"][0]
    from qlab.report import markdown

    summary = markdown.render(artifact)
    assert "❌ qlab: BLOCK" in summary and "✅ PASS" not in summary


def test_a_failing_case_of_the_regression_suite_blocks_the_run(tmp_path: Path) -> None:
    """Was: an accepted regression case failing again gave "PASS: 1 failed, 50 passed"; every run must pass it."""
    base = f.config(tmp_path)
    suites = {**base.suites, "regression": Suite("regression", "plan", ("r/*.yaml",), category="regression")}
    gates = tuple(
        dataclasses.replace(
            g, suites=(*g.suites, "regression"), thresholds=(Threshold("selector_accuracy", ">=", 0.5),)
        )
        if g.name == "select"
        else dataclasses.replace(g, suites=(*g.suites, "regression"))
        if g.name == "plan"
        else g
        for g in base.gates
    )
    cases = [
        *f.demo_cases(),
        f.case("r1", "regression", "plan", "wrong:x"),
        f.case("r2", "regression", "plan"),
    ]
    artifact = _run(tmp_path, cases, config=dataclasses.replace(base, suites=suites, gates=gates))
    assert (artifact["decision"]["verdict"], artifact["decision"]["exit_code"]) == ("block", 1)
    select = _gate(artifact, "select")
    assert select["status"] == "blocked"
    assert [r for r in select["reasons"] if r.startswith("regression:")] == [
        "regression: 1 failing case(s), tolerates 0 (a must-pass suite (category regression) tolerates none): "
        "r1 at select (wrong_target_selected)"
    ]
    assert artifact["suites"]["regression"]["must_pass"] is True


def test_a_case_failing_at_an_earlier_stage_counts_against_its_own_suites_gate(tmp_path: Path) -> None:
    """Was: an execute case that failed at plan counted nowhere (6 cases, 1 failed at plan, rate 1.000)."""
    cases = [f.case(f"e{i}", "execute_read", "execute", line=i) for i in range(5)]
    cases.append(f.case("e5", "execute_read", "execute", "planfail:x", line=9))
    artifact = _run(tmp_path, cases)
    execute = _gate(artifact, "execute")
    row = execute["thresholds"][0]
    assert (
        row["actual"] == round(5 / 6, 6) and row["failed_earlier"] == {"plan": 1} and row["passed"] is False
    )
    assert execute["status"] == "blocked" and artifact["decision"]["exit_code"] == 1
    assert any("e5 at plan (required_fields_unsatisfied)" in r for r in execute["reasons"])
    assert artifact["metrics"]["execute_read_success_rate"] == round(5 / 6, 6)
    assert artifact["stages"]["execute"]["metrics"]["execute_read_success_rate"] == round(5 / 6, 6)


def test_an_llm_endpoint_that_is_down_is_an_error_never_a_block(tmp_path: Path) -> None:
    """Was: an LLM endpoint that is down gave 11 case errors and exit 1 "blocked"."""
    from qlab.contracts.errors import DependencyError
    from qlab.stages.engine_calls import call

    def select(ctx: Any, cases: Any, results: Any) -> StageReport:
        outage = DependencyError(
            "LLM endpoint http://127.0.0.1:9/chat/completions: ConnectError", reason="llm_unreachable"
        )
        for c in cases:
            call(results[c.id], "select", "target_selection", ctx, lambda: (_ for _ in ()).throw(outage))
        return StageReport("select")

    cases = [*f.demo_cases()[:2], *(f.case(f"p{i}", "plan_e2e", "plan", line=i) for i in range(11))]
    cases.append(f.case("e1", "execute_read", "execute"))
    artifact = _run(tmp_path, cases, stages={"select": select})
    decision = artifact["decision"]
    assert (decision["verdict"], decision["exit_code"]) == ("error", 2)
    assert _gate(artifact, "select")["status"] == "error"
    assert decision["reasons"][0].startswith(
        "gate select could not decide: 11 case(s) could not be judged: llm_unreachable"
    )
    assert (
        _case(artifact, "e1")["status"] == "skipped"
        and _case(artifact, "e1")["failure"]["reason"] == "stopped_by_error"
    )
    assert all(c["status"] != "blocked" for c in artifact["cases"])
    text = _console(artifact)
    assert "ERROR: " in text and "(exit 2)" in text and "BLOCK" not in text.upper().replace("BLOCKED", "")
    # --exit-zero never hides an ERROR
    assert _run(tmp_path, cases, stages={"select": select}, exit_zero=True)["decision"]["exit_code"] == 2


@pytest.mark.parametrize("fault", ["environment", "spec"])
def test_a_dependency_down_before_the_run_is_an_error_and_no_case_runs(tmp_path: Path, fault: str) -> None:
    from qlab.contracts.errors import SpecFetchError

    execute = f.FakeExecute()
    kw: dict[str, Any] = {"execute": execute}
    if fault == "environment":
        kw["reach"] = lambda url, timeout: (False, "ConnectError: [Errno 111] Connection refused")
    else:

        def build(config: Any, gate: Gate) -> Any:
            raise SpecFetchError("https://specs.example/api.yaml: could not fetch the spec (ConnectError)")

        kw["build"] = build
    artifact = _run(tmp_path, **kw)
    assert (artifact["decision"]["verdict"], artifact["decision"]["exit_code"]) == ("error", 2)
    assert execute.calls == []
    assert {(c["status"], c["failure"]["reason"]) for c in artifact["cases"]} == {
        ("skipped", "stopped_by_error")
    }
    reason = "environment_unreachable" if fault == "environment" else "spec_fetch_failed"
    assert reason in str(artifact["prerun"]) + str(artifact["gates"])
    text = _console(artifact)
    assert "ERROR: 5 skipped (exit 2)" in text and "BLOCK" not in text


def test_a_manual_suite_is_skipped_on_a_plain_run_and_the_run_says_so(tmp_path: Path) -> None:
    """Was: ``cadence: manual`` (execute_mutation) ran on every plain ``qlab run``."""
    base = f.config(tmp_path)
    suites = {
        **base.suites,
        "execute_mutation": Suite(
            "execute_mutation", "execute", ("m/*.yaml",), environment="dev", cadence="manual"
        ),
    }
    gates = tuple(
        dataclasses.replace(g, suites=(*g.suites, "execute_mutation")) if g.stage == "execute" else g
        for g in base.gates
    )
    config = dataclasses.replace(base, suites=suites, gates=gates)
    cases = [*f.demo_cases(), f.case("m1", "execute_mutation", "execute", mutation_safety="allow_mutation")]
    execute = f.FakeExecute()
    artifact = _run(tmp_path, cases, config=config, execute=execute)
    assert "m1" not in [c["case_id"] for c in artifact["cases"]] and execute.calls == [1]
    assert [s["suite"] for s in artifact["skipped_suites"]] == ["execute_mutation"]
    assert "skipped suite execute_mutation: cadence: manual" in _console(artifact)
    asked = _run(tmp_path, cases, config=config, selection=SelectionSpec(cadences=("manual",)))
    assert [c["case_id"] for c in asked["cases"]] == ["m1"] and asked["skipped_suites"] == []


def test_a_case_that_passes_two_of_three_repeats_is_reported_flaky(tmp_path: Path) -> None:
    """Was: a flaky case (2 of 3 repeats pass) counted as plainly passed."""
    base = f.config(tmp_path)
    suites = dict(base.suites)
    suites["execute_read"] = dataclasses.replace(suites["execute_read"], repeat=3, min_pass=2)
    cases = [f.case("e1", "execute_read", "execute", "flip:x")]  # passes on attempts 1 and 3
    artifact = _run(tmp_path, cases, config=dataclasses.replace(base, suites=suites))
    case = _case(artifact, "e1")
    assert (case["status"], case["attempts"], case["passes"]) == ("passed", 3, 2)
    assert _gate(artifact, "execute")["status"] == "warned"
    assert artifact["suites"]["execute_read"]["counts"]["flaky_passed"] == 1
    assert artifact["decision"]["verdict"] == "pass"
    assert "1 passed (1 flaky: not every repeat passed)" in _console(artifact)


def test_a_draft_case_runs_and_is_reported_but_never_gates_and_an_archived_case_never_runs(
    tmp_path: Path,
) -> None:
    cases = [
        *f.demo_cases()[:4],
        f.case("e1", "execute_read", "execute", "assert:x", status="draft"),  # fails: reported, not gating
        f.case("e2", "execute_read", "execute", status="archived"),
    ]
    artifact = _run(tmp_path, cases)
    assert _case(artifact, "e1")["status"] == "failed" and _case(artifact, "e1")["lifecycle"] == "draft"
    assert all(c["case_id"] != "e2" for c in artifact["cases"])
    assert [a["case_id"] for a in artifact["archived_cases"]] == ["e2"]
    gate = _gate(artifact, "execute")
    assert gate["status"] == "warned"
    assert any(w.startswith("1 draft case(s) failed and do not gate: e1") for w in gate["warnings"])
    assert artifact["decision"]["verdict"] == "pass" and artifact["status"] == "completed"
    assert artifact["suites"]["execute_read"]["counts"]["draft_failed"] == 1
    jsonschema.Draft7Validator(load_schema("result")).validate(artifact)


def test_every_case_carries_its_duration_what_it_produced_and_its_metrics(tmp_path: Path) -> None:
    artifact = _run(tmp_path, target_version="skill@1.2.0")
    assert artifact["target_version"] == "skill@1.2.0"
    case = _case(artifact, "p1")
    assert case["duration_ms"] == round(sum(case["latency_ms"].values()), 3)
    assert case["actual_output"]["selected_target"] == case["target_selector"]["selected_target"]
    assert case["metrics"]["correctness"] == 1.0 and case["metrics"]["tool_selection_accuracy"] == 1.0


def test_a_run_that_could_not_decide_is_a_failed_eval_run() -> None:
    from qlab.run.artifact import conclude

    error = {"reason": "llm_unreachable", "case_ids": ["p1"]}
    done = conclude(
        {"metrics": {}, "gates": [{"name": "g", "status": "error", "errors": [error]}], "stages": {}}
    )
    assert done["status"] == "failed" and done["decision"]["verdict"] == "error"
    assert conclude({"metrics": {}, "gates": [], "stages": {}}, with_scorecard=False)["status"] == "running"


def test_the_engine_drops_its_memo_tables_after_each_gate(tmp_path: Path) -> None:
    """Rule: after each gate the run asks the engine to ``trim`` what it memoized (an optional method), so a large
    run's later gates and outputs reuse that memory."""
    from qlab.engine.builtin import BuiltinEngine

    trims: list[int] = []

    class Engine(BuiltinEngine):
        def trim(self) -> None:
            trims.append(1)
            super().trim()

    project = f.FakeProject(f.config(tmp_path), f.demo_cases())
    opts = f.options(tmp_path)
    opts = dataclasses.replace(opts, seams=dataclasses.replace(opts.seams, engine=lambda c, col: Engine(col)))
    run(project, options=opts)
    gates = [g for g in f.config(tmp_path).gates if g.stage != "build"]
    assert len(trims) == len(gates)


def test_the_previous_run_is_read_when_the_learn_gate_starts_and_reaches_the_learner(tmp_path: Path) -> None:
    """Rule: ``read_previous`` is called once, after the case gates (a large run's search gate does not hold the
    previous run beside its memo tables), and what it read is what the learning loop compares with."""
    order: list[str] = []
    earlier = {"run_id": "20261201T000000Z-a", "cases": [{"case_id": "s1", "suite": "search_core", "status": "failed"}]}  # fmt: skip
    seen: list[Any] = []

    def read_previous() -> dict[str, Any]:
        order.append("read")
        return earlier

    def search(ctx: Any, cases: Any, results: Any) -> StageReport:
        order.append("search")
        assert ctx.previous is None
        return f.fake_search(ctx, cases, results)

    def learner(artifact: Any, **kw: Any) -> dict[str, Any]:
        seen.append(kw["previous"])
        return {"suggestions": [], "signals": []}

    _run(tmp_path, read_previous=read_previous, learner=learner, stages={"search": search})
    assert order == ["search", "read"] and seen == [earlier]
    order.clear()
    # given up front (--last-failed read it to select), it is not read again
    _run(tmp_path, previous=earlier, read_previous=read_previous, learner=learner)
    assert order == [] and seen == [earlier, earlier]


class _OneTool(f.FakeEngine):
    """An engine whose every answer is the fake collection's one tool: each case plans ``GET /things``."""

    def search(self, query: str, *, k: int) -> SearchResult:
        return SearchResult(rows=(SearchRow("getThing", 1, 1.0),))

    def select(self, query: str, result: SearchResult, **kw: Any) -> Selection:
        return Selection(None, "getThing", False, ())

    def plan(self, query: str, target: str, **kw: Any) -> Plan:
        return Plan("p", "synthesized", (PlanStep("getThing"),))


def test_no_server_holds_for_every_execute_gate(tmp_path: Path) -> None:
    """``--no-server``: the environment's dev server is started by no execute gate, the second one included
    (each gate closes what the first kept)."""
    marker = tmp_path / "started"
    with servers.CountingServer() as api:
        server = ServerConfig(
            f"{sys.executable} -c \"open(r'{marker}', 'w')\"", api.url, 5, reuse_existing=False
        )
        dev = Environment("dev", api.url, allowed_hosts=("127.0.0.1",), server=server)
        suites = {name: Suite(name, "execute", (f"{name}/*.yaml",), environment="dev") for name in ("a", "b")}
        gates = (Gate("build", "build"), Gate("run-a", "execute", ("a",)), Gate("run-b", "execute", ("b",)))
        config = dataclasses.replace(
            f.config(tmp_path, suites=suites, gates=gates), environments={"dev": dev}
        )
        tool = Tool("getThing", "getThing", "things", "fake", "openapi", method="GET", path="/things")
        options = dataclasses.replace(
            f.options(tmp_path, start_servers=False),
            seams=Seams(
                build=lambda _c, _g: (Collection((tool,)), StageReport("build")),
                engine=lambda _c, _coll: _OneTool(),
                reach=lambda _url, _timeout: (True, "HTTP 200"),
            ),
        )
        cases = (f.case("a1", "a", "execute"), f.case("b1", "b", "execute"))
        outcome = run(f.FakeProject(config, cases), options=options)
    assert [c["status"] for c in outcome.artifact["cases"]] == ["passed", "passed"], outcome.artifact["cases"]
    assert api.count == 2 and not marker.exists()
    assert outcome.artifact["stages"]["execute"]["details"]["servers"] == {"dev": {"status": "not_started"}}

"""A gate's ``stop_if`` conditions (``qlab.run.stops``): which fired, on which cases, and whether they gate."""

from __future__ import annotations

from typing import Any

import pytest

from qlab.run.stops import derive_stops, failed_at_stage


def _c(case_id: str, status: str = "failed", stage: str = "search", reason: str = "expected_target_absent",
       **kw: Any) -> dict[str, Any]:  # fmt: skip
    return {
        "case_id": case_id,
        "suite": "s",
        "status": status,
        "failure": {"stage": stage, "reason": reason},
        **kw,
    }


def _stops(
    stop_if: list[tuple[str, float | None]], cases: list[dict[str, Any]] = (), **kw: Any
) -> list[dict[str, Any]]:  # type: ignore[assignment]
    return derive_stops(
        stop_if,
        stage=kw.pop("stage", "search"),
        cases=list(cases),
        stage_metrics=kw.pop("stage_metrics", {}),
        reported=kw.pop("reported", ()),
        required=kw.pop("required", {}),
    )


@pytest.mark.parametrize(
    ("condition", "actual", "fires"),
    [
        ("top_1_below", 0.79, True), ("top_1_below", 0.8, False), ("top_1_below", 0.81, False),
        ("latency_p95_ms_above", 250.5, True), ("latency_p95_ms_above", 250.0, False),
        ("latency_p95_ms_above", 249.5, False),
    ],
)  # fmt: skip
def test_a_bound_fires_strictly_past_its_argument(condition: str, actual: float, fires: bool) -> None:
    """Rule: ``<metric>_below: X`` fires when the stage figure is < X, ``_above: X`` when > X; equal holds."""
    argument = 0.8 if condition.endswith("_below") else 250.0
    metric = condition.rsplit("_", 1)[0]
    found = _stops([(condition, argument)], stage_metrics={metric: actual})
    if fires:
        word = condition.rsplit("_", 1)[1]
        assert found == [
            {"condition": condition, "case_ids": [], "message": f"{metric} {actual:g} is {word} {argument:g}",
             "gating": True}
        ]  # fmt: skip
    else:
        assert found == []


def test_a_bound_without_data_or_argument_does_not_fire() -> None:
    assert _stops([("top_1_below", 0.8)], stage_metrics={"top_1": None}) == []
    assert _stops([("top_1_below", 0.8)]) == []
    assert _stops([("top_1_below", None)], stage_metrics={"top_1": 0.1}) == []
    # a named condition is never read as a bound, whatever its argument
    assert _stops([("expected_target_absent", 0.5)], stage_metrics={"expected_target": 0.1}) == []


def test_a_reported_stop_counts_once_with_its_cases_and_message() -> None:
    reported = [
        {"condition": "schema_coverage_below", "case_ids": [], "message": "coverage 0.4: tools a, b"},
        {"condition": "not_asked_for", "case_ids": ["x"], "message": "ignored"},
        {"condition": "expected_target_absent", "message": ""},
    ]
    found = _stops([("schema_coverage_below", 0.8), ("expected_target_absent", None)], reported=reported,
                   stage_metrics={"schema_coverage": 0.4})  # fmt: skip
    # the stage's own message wins over the bound derived again from the figure
    assert found[0] == {"condition": "schema_coverage_below", "case_ids": [], "message": "coverage 0.4: tools a, b",
                        "gating": True}  # fmt: skip
    # a reported stop without a message gets the one derived from the cases
    miss = _c("m1")
    found = _stops([("expected_target_absent", None)], [miss], reported=reported)
    assert found == [{"condition": "expected_target_absent", "case_ids": ["m1"], "message": "1 case(s): m1 (expected_target_absent)",
                      "gating": True}]  # fmt: skip


def test_reported_case_ids_are_merged_with_the_ones_found_and_the_message_comes_from_the_cases() -> None:
    # the same words whether the stop was reported by one shard or found over the merged cases
    reported = [{"condition": "expected_target_absent", "case_ids": ["r1"], "message": "r1 missing"}]
    found = _stops([("expected_target_absent", None)], [_c("m1")], reported=reported)
    assert found == [{"condition": "expected_target_absent", "case_ids": ["m1", "r1"],
                      "message": "2 case(s): m1, r1 (expected_target_absent)", "gating": True}]  # fmt: skip


def test_any_failure_fires_on_every_failure_at_the_stage_and_only_there() -> None:
    cases = [_c("a"), _c("b", status="error", reason="engine_unreachable"), _c("c", stage="plan"),
             _c("d", status="blocked"), {"case_id": "e", "suite": "s", "status": "passed"}]  # fmt: skip
    assert _stops([("any_failure", None)], cases) == [
        {
            "condition": "any_failure",
            "case_ids": ["a", "b"],
            "message": "2 case(s): a, b (engine_unreachable, expected_target_absent)",
            "gating": True,
        }
    ]


def test_ambiguous_critical_fires_on_the_reason_or_an_ambiguous_critical_case() -> None:
    cases = [
        _c("r", stage="select", reason="ambiguous_critical"),
        {
            "case_id": "k",
            "suite": "s",
            "status": "passed",
            "critical": True,
            "target_selector": {"ambiguous": True},
        },
        {
            "case_id": "n",
            "suite": "s",
            "status": "passed",
            "critical": False,
            "target_selector": {"ambiguous": True},
        },
        {
            "case_id": "q",
            "suite": "s",
            "status": "passed",
            "critical": True,
            "target_selector": {"ambiguous": False},
        },
    ]
    assert _stops([("ambiguous_critical", None)], cases, stage="select")[0]["case_ids"] == ["k", "r"]


@pytest.mark.parametrize(
    ("condition", "reason", "fires"),
    [("auth_not_ready", "auth_profile_missing", True), ("auth_not_ready", "assertion_failed", False),
     ("mutation_unsafe", "redirect_refused", True), ("assertion_failed", "schema_mismatch", True),
     ("made_up_condition", "made_up_condition", False)],
)  # fmt: skip
def test_named_conditions_fire_on_their_reason_codes(condition: str, reason: str, fires: bool) -> None:
    found = _stops([(condition, None)], [_c("x", stage="execute", reason=reason)], stage="execute")
    assert [s["case_ids"] for s in found] == ([["x"]] if fires else [])


def test_the_message_names_five_cases_then_an_ellipsis() -> None:
    five = [_c(f"m{i}") for i in (4, 2, 0, 3, 1)]
    assert (
        _stops([("any_failure", None)], five)[0]["message"]
        == "5 case(s): m0, m1, m2, m3, m4 (expected_target_absent)"
    )
    six = [*five, _c("m5")]
    assert (
        _stops([("any_failure", None)], six)[0]["message"]
        == "6 case(s): m0, m1, m2, m3, m4 … (expected_target_absent)"
    )


def test_a_stop_gates_unless_all_its_cases_are_flaky_or_optional() -> None:
    """Rule: a stop fired only by flaky cases or cases of ``required: false`` suites warns; one gating case (of a
    required suite, or of a suite the gate has no rule for) makes it block; a stop with no case (a bound) gates."""
    flaky = _c("f", flaky=True)
    optional = {**_c("o"), "suite": "opt"}
    unknown = {**_c("u"), "suite": "elsewhere"}
    required = {"s": True, "opt": False}
    assert _stops([("any_failure", None)], [flaky, optional], required=required)[0]["gating"] is False
    assert _stops([("any_failure", None)], [flaky, unknown], required=required)[0]["gating"] is True
    assert _stops([("any_failure", None)], [_c("g")], required=required)[0]["gating"] is True


def test_stops_come_in_the_order_the_gate_lists_them() -> None:
    stop_if = [("any_failure", None), ("top_1_below", 0.9), ("expected_target_absent", None)]
    found = _stops(stop_if, [_c("a")], stage_metrics={"top_1": 0.5})
    assert [s["condition"] for s in found] == ["any_failure", "top_1_below", "expected_target_absent"]
    found = _stops(list(reversed(stop_if)), [_c("a")], stage_metrics={"top_1": 0.5})
    assert [s["condition"] for s in found] == ["expected_target_absent", "top_1_below", "any_failure"]


def test_failed_at_stage() -> None:
    assert failed_at_stage(_c("a"), "search") and failed_at_stage(_c("a", status="error"), "search")
    assert not failed_at_stage(_c("a", status="blocked"), "search")
    assert not failed_at_stage(_c("a", status="skipped", stage="execute"), "execute")
    assert not failed_at_stage(_c("a", stage="plan"), "search")
    assert not failed_at_stage({"case_id": "p", "status": "failed"}, "search")


def test_a_condition_reported_several_times_keeps_the_first_message_given() -> None:
    """Rule: reports of one condition without cases are worded by the first that says something; a report without a
    message adds none (never the word "None")."""
    reported = [
        {"condition": "custom"},
        {"condition": "custom", "message": "first words"},
        {"condition": "custom", "message": "later words"},
    ]
    assert _stops([("custom", None)], reported=reported) == [
        {"condition": "custom", "case_ids": [], "message": "first words", "gating": True}
    ]
    assert _stops([("custom", None)], reported=reported[:1])[0]["message"] == ""


def test_the_message_names_only_the_reasons_of_the_stops_own_cases() -> None:
    other = _c("o", reason="engine_unreachable")  # failed at the stage, but not what this stop is about
    found = _stops([("expected_target_absent", None)], [_c("m"), other])
    assert found[0]["message"] == "1 case(s): m (expected_target_absent)"
    ambiguous = {"case_id": "k", "suite": "s", "status": "passed", "critical": True,
                 "target_selector": {"ambiguous": True}}  # fmt: skip
    # a case that fired it without failing has no reason to show: no empty brackets
    assert _stops([("ambiguous_critical", None)], [ambiguous])[0]["message"] == "1 case(s): k"


def test_401_and_403_at_run_time_fire_the_auth_stop() -> None:
    """Rule: requests the API rejected (401/403, ``auth_failed``) are run-time auth failures for
    ``auth_not_ready``, as the preflight codes are: a gate that tolerates failures no longer passes with every
    request rejected."""
    rejected = [_c(f"e{i}", stage="execute", reason="auth_failed") for i in range(3)]
    (hit,) = _stops([("auth_not_ready", None)], rejected, stage="execute")
    assert hit["case_ids"] == ["e0", "e1", "e2"] and hit["gating"] and "auth_failed" in hit["message"]


def test_an_execute_gate_that_tolerates_failures_blocks_when_every_request_is_rejected() -> None:
    from qlab.run.gates import GateSpec, SuiteRule, evaluate

    spec = GateSpec("execute", "execute", ("s",), stop_if=(("auth_not_ready", None),), max_failures=5)
    cases = [_c(f"e{i}", stage="execute", reason="auth_failed", mode="execute") for i in range(3)]
    record = evaluate(spec, cases=cases, suite_metrics={"s": {}}, stage_metrics={}, rules={"s": SuiteRule()})
    assert record["status"] == "blocked" and record["stops"][0]["condition"] == "auth_not_ready"


def test_an_auth_stop_names_the_variables_its_cases_could_not_read() -> None:
    """Rule (issue 36, 5): the stop that blocks the execute gate says which environment variable was unset, so the
    gate's reasons (console, summary, the gate's annotation) name it."""
    ready = {"status": "not_ready", "reason_codes": ["auth_context_required"], "missing_env": ["API_TOKEN"]}
    cases = [
        _c("e1", stage="execute", reason="auth_context_required", auth_readiness=ready),
        _c("e2", stage="execute", reason="auth_header_resolution_failed",
           auth_readiness={**ready, "missing_env": ["OTHER", "API_TOKEN"]}),
    ]  # fmt: skip
    (stop,) = _stops([("auth_not_ready", None)], cases, stage="execute")
    assert stop["message"] == (
        "2 case(s): e1, e2 (auth_context_required, auth_header_resolution_failed; not set: API_TOKEN, OTHER)"
    )

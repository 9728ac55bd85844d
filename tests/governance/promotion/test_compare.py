"""Promotion: case-by-case comparison, noise-aware metrics, refusal of incomparable runs, evidence checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from governance.builders import artifact, plan_case, search_case
from qlab.contracts.errors import UsageError
from qlab.governance.promotion.compare import compare
from qlab.governance.promotion.report import markdown
from qlab.governance.promotion.rules import DEFAULT_RULES, rule_for
from qlab.governance.records import Artifact
from qlab.project.model import PromotionRule


def _art(data: dict[str, Any], name: str) -> Artifact:
    return Artifact(data=data, path=f"{name}.json", digest=f"sha256:{name}")


def _alias_pair(required: bool = True) -> tuple[Artifact, Artifact]:
    """An alias fixes s-1 (a miss becomes a hit) and breaks s-2 (a hit becomes a miss)."""
    suites = {
        "search_core": {
            "mode": "search",
            "category": "flow",
            "required": required,
            "metrics": {},
            "counts": {},
        }
    }
    base = artifact(
        [
            search_case("s-1", rank=None, top=["getOrderList", "getMemberList"]),
            search_case("s-2", rank=1, top=["getMemberDeliveryList"]),
            search_case("s-3", rank=2, top=["getMemberList", "getMemberDetail"]),
        ],
        suites=suites,
        collection="sha256:before-alias",
    )
    cand = artifact(
        [
            search_case("s-1", rank=1, top=["getMemberDeliveryDetail"]),
            search_case("s-2", rank=None, top=["getMemberDeliveryDetail", "getOrderList"]),
            search_case("s-3", rank=2, top=["getMemberList", "getMemberDetail"]),
        ],
        run_id="run-2",
        suites=suites,
        collection="sha256:after-alias",
    )
    return _art(base, "baseline"), _art(cand, "candidate")


def test_alias_that_fixes_one_case_and_breaks_a_required_one_blocks() -> None:
    base, cand = _alias_pair(required=True)
    rule = DEFAULT_RULES["alias_or_semantic_metadata"]
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)

    assert report.verdict == "block" and report.exit_code == 1
    assert [c.case_id for c in report.of_kind("fixed")] == ["s-1"]
    assert [c.case_id for c in report.of_kind("regressed")] == ["s-2"]
    assert report.counts["passing"] == 1
    # hit@k is 2/3 on both sides: the metric alone would not block; the required case does
    hit = next(m for m in report.metrics if m.metric == "hit_at_k")
    assert (hit.baseline, hit.candidate, hit.regressed) == (pytest.approx(2 / 3), pytest.approx(2 / 3), False)
    assert any("required case s-2 (search_core) regressed" in r for r in report.reasons)

    # failing and fixed evidence side by side: both runs' stage objects, for both cases
    regressed = report.of_kind("regressed")[0]
    assert regressed.baseline is not None and regressed.baseline["search"]["hit_rank"] == 1
    assert (
        regressed.candidate is not None
        and regressed.candidate["failure"]["reason"] == "expected_target_absent"
    )
    text = markdown(report)
    assert "BLOCK (exit 1)" in text
    assert "| search | hit at rank 1 of top 5 (1. getMemberDeliveryList) | miss of top 5" in text
    assert "| search | miss of top 5 (1. getOrderList, 2. getMemberList) | hit at rank 1 of top 5" in text
    data = report.to_dict()
    assert data["cases"]["fixed"][0]["baseline"]["evidence"]["search"]["hit"] is False
    assert data["cases"]["fixed"][0]["candidate"]["evidence"]["search"]["hit"] is True


def test_same_swap_in_a_non_required_suite_promotes_when_metrics_hold() -> None:
    base, cand = _alias_pair(required=False)
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.verdict == "promote", report.reasons
    assert report.exit_code == 0
    # the regression is still reported, it just does not gate
    assert [c.case_id for c in report.of_kind("regressed")] == ["s-2"]


def test_no_regression_requirement_blocks_any_regressed_case() -> None:
    base, cand = _alias_pair(required=False)
    rule = PromotionRule("alias_or_semantic_metadata", require=("no_regression",))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert report.verdict == "block"
    assert report.reasons == (
        "case s-2 (search_core) regressed: passed in the baseline, failed at search/expected_target_absent in the candidate",
    )


def test_flaky_regression_is_reported_but_never_blocks() -> None:
    base, cand = _alias_pair(required=True)
    cand.data["cases"][1]["flaky"] = True
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.verdict == "promote", report.reasons
    assert report.of_kind("regressed")[0].flaky


def test_a_draft_case_that_regresses_is_not_required() -> None:
    base, cand = _alias_pair(required=True)
    cand.data["cases"][1]["lifecycle"] = "draft"
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.verdict == "promote", report.reasons
    assert not report.of_kind("regressed")[0].required


def _many(n: int, misses: int, *, run_id: str) -> dict[str, Any]:
    cases = [search_case(f"q-{i:02d}", suite="manual", rank=None if i < misses else 1) for i in range(n)]
    suites = {
        "manual": {"mode": "search", "category": "flow", "required": False, "metrics": {}, "counts": {}}
    }
    return artifact(cases, suites=suites, run_id=run_id)


def test_metric_drop_counts_only_beyond_tolerance() -> None:
    base = _art(_many(20, 0, run_id="a"), "a")
    cand = _art(_many(20, 1, run_id="b"), "b")  # hit@k 1.00 -> 0.95
    strict = PromotionRule("alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",))
    lenient = PromotionRule(
        "alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",), tolerance=0.05
    )
    assert compare(base, cand, change_type="alias_or_semantic_metadata", rule=strict).verdict == "block"
    assert compare(base, cand, change_type="alias_or_semantic_metadata", rule=lenient).verdict == "promote"
    worse = _art(_many(20, 2, run_id="c"), "c")  # 0.90: beyond 0.05
    report = compare(base, worse, change_type="alias_or_semantic_metadata", rule=lenient)
    assert report.verdict == "block"
    assert report.reasons == (
        "hit_at_k (cases) dropped 1.0000 -> 0.9000 (tolerance 0.05); worse on q-00, q-01",
    )


def test_bootstrap_keeps_a_drop_inside_the_noise_and_blocks_a_real_one() -> None:
    rule = PromotionRule(
        "alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",), bootstrap=True
    )
    base = _art(_many(20, 0, run_id="a"), "a")
    # one miss in 20 paired cases: the interval reaches 0, so it is noise
    noisy = compare(
        base, _art(_many(20, 1, run_id="b"), "b"), change_type="alias_or_semantic_metadata", rule=rule
    )
    hit = noisy.metrics[0]
    assert hit.interval is not None and hit.interval.high == 0.0 and hit.interval.low < 0.0
    assert noisy.verdict == "promote", noisy.reasons
    # eight misses: the whole interval is below zero
    real = compare(
        base, _art(_many(20, 8, run_id="c"), "c"), change_type="alias_or_semantic_metadata", rule=rule
    )
    assert real.metrics[0].interval is not None and real.metrics[0].interval.high < 0
    assert real.verdict == "block"
    # deterministic: the same inputs give the same interval, byte for byte
    again = compare(
        base, _art(_many(20, 8, run_id="c"), "c"), change_type="alias_or_semantic_metadata", rule=rule
    )
    assert again.to_dict()["metrics"] == real.to_dict()["metrics"]


def test_an_added_case_is_judged_on_its_own_and_same_case_set_refuses_it() -> None:
    """The most common pull request — add a case and the alias that makes it pass — is compared by default:
    the new case is "new passing"; only the strict ``same: [case_set]`` refuses a different set of cases."""
    base, cand = _alias_pair(required=False)
    cand.data["cases"].append(search_case("s-4"))
    default = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert default.verdict != "refused" and default.exit_code != 2
    assert [c.case_id for c in default.of_kind("new_passing")] == ["s-4"]
    strict = PromotionRule("alias_or_semantic_metadata", require=("metric_not_worse",), same=("case_set",))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=strict)
    assert report.verdict == "refused" and report.exit_code == 2
    assert report.reasons == ("same: case_set: only the candidate has s-4",)
    assert "Why the runs cannot be compared" in markdown(report)


def test_without_same_cases_new_and_removed_cases_are_reported() -> None:
    base, cand = _alias_pair(required=False)
    cand.data["cases"].append(search_case("s-4", rank=None))
    del cand.data["cases"][2]
    rule = PromotionRule(
        "alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",), same=()
    )
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert [c.case_id for c in report.of_kind("new_failing")] == ["s-4"]
    assert [c.case_id for c in report.of_kind("removed")] == ["s-3"]


def test_changed_case_file_with_the_same_cases_is_refused() -> None:
    base, cand = _alias_pair()
    base.data["provenance"]["dataset"]["files"] = [
        {"path": "gates/search_core/s-1.yaml", "digest": "sha256:1", "cases": 1}
    ]
    cand.data["provenance"]["dataset"]["files"] = [
        {"path": "gates/search_core/s-1.yaml", "digest": "sha256:2", "cases": 1}
    ]
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.exit_code == 2
    assert "case file gates/search_core/s-1.yaml changed" in report.reasons[0]


@pytest.mark.parametrize(
    ("same", "field", "value", "message"),
    [
        (
            ("collection",),
            "collection_digest",
            "sha256:other",
            "same: collection: fingerprint.collection_digest differs",
        ),
        (("model",), "model", "gpt-other", "same: model: fingerprint.model differs"),
        (("engine",), "engine", "http", "same: engine: fingerprint.engine differs"),
    ],
)
def test_fingerprint_mismatch_is_refused_where_the_rule_needs_equality(
    same: tuple[str, ...], field: str, value: str, message: str
) -> None:
    base = _art(artifact([search_case("s-1")], model="gpt-a"), "a")
    cand_data = copy.deepcopy(dict(base.data))
    cand_data["fingerprint"][field] = value
    cand = _art(cand_data, "b")
    rule = PromotionRule("alias_or_semantic_metadata", same=("cases", *same))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert report.exit_code == 2
    assert report.reasons[0].startswith(message)
    # the same pair is comparable when the rule does not need that field equal
    ok = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=PromotionRule("alias_or_semantic_metadata")
    )
    assert ok.exit_code == 0


def test_a_shard_is_refused() -> None:
    base, cand = _alias_pair()
    cand.data["shard"] = {"index": 1, "total": 3}
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.exit_code == 2
    assert "shard 1/3" in report.reasons[0]


def test_rule_suite_missing_from_both_runs_is_refused() -> None:
    base, cand = _alias_pair()
    rule = PromotionRule("alias_or_semantic_metadata", suites=("serach_core",))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert report.exit_code == 2
    assert "suite 'serach_core' of the rule is in neither run" in report.reasons


def test_selector_policy_needs_every_plan_case_on_the_right_target() -> None:
    base = _art(
        artifact([plan_case("p-1", correct=False, selected="getMemberDeliveryList"), plan_case("p-2")]), "a"
    )
    good = _art(artifact([plan_case("p-1", llm="getMemberDeliveryList"), plan_case("p-2")], run_id="b"), "b")
    bad = _art(artifact([plan_case("p-1"), plan_case("p-2", correct=False, selected="x")], run_id="c"), "c")
    rule = rule_for("selector_override_policy", None)
    assert compare(base, good, change_type="selector_override_policy", rule=rule).verdict == "promote"
    report = compare(base, bad, change_type="selector_override_policy", rule=rule)
    assert report.verdict == "block"
    check = next(c for c in report.checks if c.name == "plan_target_correct")
    assert check.reasons == ("p-2: final target 'x' is not the expected one (select/wrong_target_selected)",)


def test_contract_extraction_needs_readiness_to_improve() -> None:
    cases = [search_case("s-1")]
    base = _art(artifact(cases, readiness={"schema_coverage": 0.8, "contract_coverage": 0.5}), "a")
    better = _art(
        artifact(cases, run_id="b", readiness={"schema_coverage": 0.8, "contract_coverage": 0.7}), "b"
    )
    same = _art(
        artifact(cases, run_id="c", readiness={"schema_coverage": 0.8, "contract_coverage": 0.5}), "c"
    )
    worse = _art(
        artifact(cases, run_id="d", readiness={"schema_coverage": 0.7, "contract_coverage": 0.9}), "d"
    )
    missing = _art(artifact(cases, run_id="e"), "e")
    rule = rule_for("contract_extraction_change", None)
    kind = "contract_extraction_change"
    assert compare(base, better, change_type=kind, rule=rule).verdict == "promote"
    assert compare(base, same, change_type=kind, rule=rule).reasons == (
        "neither readiness.schema_coverage nor readiness.contract_coverage improved",
    )
    assert compare(base, worse, change_type=kind, rule=rule).reasons == (
        "readiness.schema_coverage dropped 0.8000 -> 0.7000",
    )
    assert compare(base, missing, change_type=kind, rule=rule).verdict == "block"


def _learned(shadow: dict[str, Any] | None, scrub_passed: bool | None) -> dict[str, Any]:
    data = artifact([search_case("s-1")])
    if shadow is not None:
        data["stages"]["learn"] = {"metrics": {}, "details": {"shadow": shadow}}
    if scrub_passed is not None:
        data["guards"] = [
            {"guard": "scrub", "stage": "learn", "passed": scrub_passed, "mode": "block", "message": ""}
        ]
    return data


def test_learning_promotion_needs_shadow_improvement_and_a_passing_scrub_check() -> None:
    improved = {"cases": 3, "delta": {"hit_at_k": 0.33, "top_1": 0.0, "mrr": 0.2}, "regressed": []}
    flat = {"cases": 3, "delta": {"hit_at_k": 0.0, "top_1": 0.0, "mrr": 0.0}, "regressed": []}
    mixed = {"cases": 3, "delta": {"hit_at_k": 0.33, "top_1": -0.33, "mrr": 0.0}, "regressed": ["s-9"]}
    rule = rule_for("learning_suggestion_promotion", None)
    kind = "learning_suggestion_promotion"

    def verdict(base: dict[str, Any], cand: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        report = compare(_art(base, "a"), _art(cand, "b"), change_type=kind, rule=rule)
        return report.verdict, report.reasons

    assert verdict(_learned(improved, True), _learned(None, True)) == ("promote", ())
    assert verdict(_learned(flat, True), _learned(None, True))[1] == (
        "the shadow result does not improve any search metric",
    )
    assert verdict(_learned(mixed, True), _learned(None, True))[1] == (
        "shadow top_1 dropped by 0.3300",
        "shadow: case s-9 ranks worse with the suggestions applied",
    )
    assert verdict(_learned(improved, True), _learned(None, False))[1] == (
        "the scrub check failed in the candidate",
    )
    assert verdict(_learned(improved, None), _learned(None, True))[1] == (
        "no scrub check ran in the baseline (no scrub guard, no learn gate)",
    )
    assert verdict(_learned(None, True), _learned(None, True))[0] == "block"


def test_learning_promotion_falls_back_on_the_suggestions_accepted_from_the_baseline_run() -> None:
    # the learn gate is skipped when the search gate blocks on the miss the suggestion fixes: the shadow
    # result then lives with the suggestion (`qlab learn shadow`), not in the artifact
    rule = rule_for("learning_suggestion_promotion", None)
    kind = "learning_suggestion_promotion"
    base, cand = _art(_learned(None, True), "a"), _art(_learned(None, True), "b")
    improved = {"cases": 2, "delta": {"hit_at_k": 0.5}, "improved": ["s-1"], "regressed": []}
    worse = {"cases": 2, "delta": {"hit_at_k": 0.5, "top_1": -0.5}, "regressed": ["s-2"]}

    def suggestion(sid: str, shadow: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"id": sid, "status": "accepted", "run_id": "run-1", "shadow": shadow, **extra}

    def reasons(*reviewed: dict[str, Any]) -> tuple[str, ...]:
        return compare(base, cand, change_type=kind, rule=rule, reviewed=reviewed).reasons

    assert reasons(suggestion("sg-1", improved)) == ()
    report = compare(base, cand, change_type=kind, rule=rule, reviewed=[suggestion("sg-1", improved)])
    shadow_check = next(c for c in report.checks if c.name == "shadow_improves")
    assert shadow_check.details == {"suggestions": {"sg-1": {"hit_at_k": 0.5}}}
    assert reasons(suggestion("sg-1", improved), suggestion("sg-2", worse)) == (
        "shadow of sg-2: top_1 dropped by 0.5000",
        "shadow of sg-2: case s-2 ranks worse with the suggestions applied",
    )
    # only accepted suggestions of the baseline run count: pending, rejected or another run's do not
    for ignored in (
        suggestion("sg-1", improved, status="pending_review"),
        suggestion("sg-1", improved, status="rejected"),
        suggestion("sg-1", improved, run_id="run-0"),
        suggestion("sg-1", {"cases": 0, "delta": {}}),
    ):
        assert reasons(ignored)[0].startswith(
            "no shadow-rank result in either run, and no suggestion accepted"
        )
    # a shadow result in the artifact wins over the stored one
    flat = {"cases": 3, "delta": {"hit_at_k": 0.0}, "regressed": []}
    in_run = _art(_learned(flat, True), "c")
    assert compare(
        in_run, cand, change_type=kind, rule=rule, reviewed=[suggestion("sg-1", improved)]
    ).reasons == ("the shadow result does not improve any search metric",)


def _exec_case(
    case_id: str, *, status: str = "passed", readiness: str = "ready", **extra: Any
) -> dict[str, Any]:
    case: dict[str, Any] = {
        "case_id": case_id,
        "suite": "execute_read",
        "mode": "execute",
        "status": status,
        "auth_readiness": {
            "status": readiness,
            "profile": "demo",
            "headers": ["Authorization"],
            "reason_codes": [],
        },
        "execute": {"http_status": 200, "latency_ms": 12.0, "method": "GET"},
        "assertions": [{"type": "http_status", "passed": status == "passed"}],
    }
    if readiness == "not_ready":
        case["auth_readiness"]["reason_codes"] = ["auth_context_required"]
        case["failure"] = {"stage": "execute", "reason": "auth_context_required", "message": ""}
    case.update(extra)
    return case


def test_execute_enablement_needs_auth_readiness_and_passing_read_assertions() -> None:
    rule = rule_for("execute_enablement", None)
    kind = "execute_enablement"
    base = _art(artifact([_exec_case("e-1", status="failed", readiness="not_ready"), _exec_case("e-2")]), "a")
    good = _art(artifact([_exec_case("e-1"), _exec_case("e-2")], run_id="b"), "b")
    assert compare(base, good, change_type=kind, rule=rule).verdict == "promote"
    not_ready = compare(base, base, change_type=kind, rule=rule)
    assert not_ready.verdict == "block"
    assert "e-1: auth_context_required" in not_ready.reasons
    assert "e-1: failed: http_status" in not_ready.reasons


def test_unknown_change_type_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UsageError, match="Did you mean 'execute_enablement'"):
        rule_for("execute_enablment", None)


def test_a_metric_drop_shows_the_passing_cases_behind_it_side_by_side() -> None:
    base = _art(artifact([search_case("s-1", rank=1, top=["a", "b"]), search_case("s-2")]), "a")
    cand = _art(artifact([search_case("s-1", rank=2, top=["b", "a"]), search_case("s-2")], run_id="b"), "b")
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.verdict == "block"
    top_1 = next(m for m in report.metrics if m.metric == "top_1")
    assert (top_1.worse, top_1.better) == (("s-1",), ())
    assert "top_1 (cases) dropped 1.0000 -> 0.5000 (tolerance 0.0); worse on s-1" in report.reasons
    text = markdown(report)
    assert "## Passing in both runs, but worse on a metric" in text
    assert "| search | hit at rank 1 of top 5 (1. a, 2. b) | hit at rank 2 of top 5 (1. b, 2. a) |" in text


# --------------------------------------------------------------------------------------------- like with like


def _blocked(case: dict[str, Any]) -> dict[str, Any]:
    """The case as a run blocked at search reports it: no stage object, status blocked."""
    out = {k: v for k, v in case.items() if k not in ("search", "target_selector", "plan")}
    out.update(status="blocked", failure={"stage": "search", "reason": "blocked_by_stage", "message": "m"})
    return out


def _blocked_run_pair() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One search case and 20 plan cases; in the "bad" run the search case misses and the plan cases are
    blocked by the search gate."""
    good = [search_case("s-1"), *(plan_case(f"p-{i:02d}") for i in range(20))]
    bad = [search_case("s-1", rank=None), *(_blocked(plan_case(f"p-{i:02d}")) for i in range(20))]
    return good, bad


@pytest.mark.parametrize("direction", ["fix", "regression"])
def test_cases_a_run_never_judged_are_no_evidence(direction: str) -> None:
    """Was: a blocked baseline → passing candidate showed 21 "fixed" for 1 real fix, and a run blocked at search
    showed 20 "regressed" for 1 real regression."""
    good, bad = _blocked_run_pair()
    before, after = (bad, good) if direction == "fix" else (good, bad)
    rule = PromotionRule(
        "alias_or_semantic_metadata", suites=("search_core", "plan_e2e"), require=("no_required_regression",)
    )
    report = compare(
        _art(artifact(copy.deepcopy(before)), "baseline"),
        _art(artifact(copy.deepcopy(after), run_id="run-2"), "candidate"),
        change_type="alias_or_semantic_metadata",
        rule=rule,
    )
    real = "fixed" if direction == "fix" else "regressed"
    assert report.counts[real] == 1 and report.counts["unevaluated"] == 20
    assert report.counts["fixed" if direction == "regression" else "regressed"] == 0
    assert report.verdict == ("promote" if direction == "fix" else "block")
    if direction == "regression":
        assert [r for r in report.reasons if "regressed" in r] == [
            "required case s-1 (search_core) regressed: passed in the baseline, failed at search/expected_target_absent "
            "in the candidate"
        ]
    assert "Unevaluated (a run blocked, skipped or could not judge it" in markdown(report)


def test_an_infrastructure_failure_is_unevaluated_and_a_new_required_failure_blocks() -> None:
    base = artifact([search_case("s-1"), search_case("s-2")])
    down = search_case("s-2", rank=None)
    down.update(status="error", failure={"stage": "search", "reason": "engine_unreachable", "message": "m"})
    cand = artifact([search_case("s-1"), down, search_case("s-3", rank=None)], run_id="run-2")
    report = compare(
        _art(base, "baseline"),
        _art(cand, "candidate"),
        change_type="alias_or_semantic_metadata",
        rule=DEFAULT_RULES["alias_or_semantic_metadata"],
    )
    assert [c.case_id for c in report.of_kind("unevaluated")] == ["s-2"]
    assert [c.case_id for c in report.of_kind("new_failing")] == ["s-3"]
    assert report.verdict == "block"
    assert any(
        r.startswith("new required case s-3 (search_core) fails in the candidate") for r in report.reasons
    )
    # the unevaluated case is not a pair of the metric: hit@k compares s-1 only
    assert next(m for m in report.metrics if m.metric == "hit_at_k").n == 1


def test_a_flaky_case_counts_with_its_pass_ratio() -> None:
    """Was: a case passing 2 of 3 repeats counted as plainly passed, its ratio unused. Now the noise-aware
    comparison sees 1.0 → 0.667 for it, and the report says it is flaky."""
    base = artifact([search_case(f"s-{i}") for i in range(4)])
    flaky = search_case("s-0", attempts=3, passes=2)
    cand = artifact([flaky, *(search_case(f"s-{i}") for i in range(1, 4))], run_id="run-2")
    rule = PromotionRule(
        "alias_or_semantic_metadata",
        require=("metric_not_worse",),
        metrics=("pass_rate",),
        tolerance=0.05,
        same=(),
    )
    report = compare(
        _art(base, "baseline"), _art(cand, "candidate"), change_type="alias_or_semantic_metadata", rule=rule
    )
    pass_rate = report.metrics[0]
    assert pass_rate.candidate == pytest.approx((0.666667 + 3) / 4)
    assert pass_rate.regressed and pass_rate.worse == ("s-0",)  # a drop of 0.083 beyond the 0.05 tolerance
    change = next(c for c in report.changes if c.case_id == "s-0")
    assert change.kind == "passing" and change.unstable and change.candidate_ratio == pytest.approx(0.666667)
    assert change.to_dict()["flaky"] is True
    # with the paired bootstrap, one flaky case of four is within the noise: the interval reaches zero
    noisy = PromotionRule(
        "alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("pass_rate",), tolerance=0.05,
        bootstrap=True, same=(),
    )  # fmt: skip
    report = compare(
        _art(base, "baseline"), _art(cand, "candidate"), change_type="alias_or_semantic_metadata", rule=noisy
    )
    assert report.metrics[0].interval is not None and not report.metrics[0].regressed


# ----------------------------------------------------------------------------------- who is required, who is flaky


def test_a_critical_case_of_an_optional_suite_is_required() -> None:
    """Rule: a case is required when its suite is, *or* when the case is critical (in either run): a critical case
    that regresses blocks even in a ``required: false`` suite."""
    base, cand = _alias_pair(required=False)
    rule = PromotionRule("alias_or_semantic_metadata", require=(), metrics=())
    assert compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule).verdict == "promote"
    for side in (base, cand):  # critical in the baseline only, or in the candidate only
        b, c = _alias_pair(required=False)
        (b if side is base else c).data["cases"][1]["critical"] = True
        report = compare(b, c, change_type="alias_or_semantic_metadata", rule=rule)
        assert report.verdict == "block"
        assert report.reasons[0].startswith("required case s-2 (search_core) regressed")
        assert report.of_kind("regressed")[0].required


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_a_case_flaky_in_either_run_is_flaky(side: str) -> None:
    base, cand = _alias_pair(required=True)
    (base if side == "baseline" else cand).data["cases"][1]["flaky"] = True
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=DEFAULT_RULES["alias_or_semantic_metadata"]
    )
    assert report.of_kind("regressed")[0].flaky and report.verdict == "promote"


def test_a_required_case_removed_from_the_candidate_blocks() -> None:
    """Rule: a required case the candidate no longer runs blocks the promotion (removing a failing case is not a
    fix); an optional one is listed as removed."""
    base, cand = _alias_pair(required=True)
    del cand.data["cases"][2]
    rule = PromotionRule("alias_or_semantic_metadata", require=(), metrics=(), same=())
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert "required case s-3 (search_core) no longer runs in the candidate" in report.reasons
    assert report.verdict == "block"
    base, cand = _alias_pair(required=False)
    del cand.data["cases"][2]
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert [c.case_id for c in report.of_kind("removed")] == ["s-3"] and report.verdict == "promote"


def test_a_change_type_compares_the_suites_of_its_mode() -> None:
    """An alias change is judged on the search suites: a plan case that regressed is not its evidence (a rule
    that names suites decides for itself)."""
    base = artifact([search_case("s-1"), plan_case("p-1")])
    cand = artifact([search_case("s-1"), plan_case("p-1", correct=False)], run_id="run-2")
    rule = PromotionRule("alias_or_semantic_metadata", require=())
    report = compare(_art(base, "b"), _art(cand, "c"), change_type="alias_or_semantic_metadata", rule=rule)
    assert (report.suites, report.verdict) == (("search_core",), "promote")
    everything = compare(
        _art(base, "b"), _art(cand, "c"), change_type="contract_extraction_change", rule=rule
    )
    assert everything.suites == ("search_core", "plan_e2e") and everything.verdict == "block"


def test_a_suite_is_read_from_the_candidate_else_the_baseline_and_required_by_default() -> None:
    """Rule: the candidate's qlab.yaml says whether a suite is required; a suite only the baseline still has is
    read there; a suite that does not say is required."""
    optional = {"mode": "search", "category": "flow", "required": False}
    base = artifact([search_case("s-1"), search_case("s-2")], suites={"search_core": {"mode": "search"}})
    cand = artifact([search_case("s-1"), search_case("s-2", rank=None)], run_id="run-2",
                    suites={"search_core": optional})  # fmt: skip
    rule = PromotionRule("alias_or_semantic_metadata", require=(), metrics=(), same=())
    report = compare(_art(base, "b"), _art(cand, "c"), change_type="alias_or_semantic_metadata", rule=rule)
    assert not report.of_kind("regressed")[0].required and report.verdict == "promote"
    # required unless it says otherwise: the baseline's suite says nothing, the candidate dropped the suite
    gone = artifact([], run_id="run-2", suites={})
    rule_all = PromotionRule(
        "alias_or_semantic_metadata", require=(), metrics=(), same=(), suites=("search_core",)
    )
    report = compare(
        _art(base, "b"), _art(gone, "c"), change_type="alias_or_semantic_metadata", rule=rule_all
    )
    assert [(c.case_id, c.required) for c in report.of_kind("removed")] == [("s-1", True), ("s-2", True)]
    base_optional = artifact([search_case("s-1")], suites={"search_core": optional})
    report = compare(
        _art(base_optional, "b"), _art(gone, "c"), change_type="alias_or_semantic_metadata", rule=rule_all
    )
    assert [(c.case_id, c.required) for c in report.of_kind("removed")] == [("s-1", False)]


def test_the_report_as_recorded() -> None:
    base, cand = _alias_pair(required=True)
    rule = PromotionRule("alias_or_semantic_metadata", require=("no_regression",), metrics=("hit_at_k",), tolerance=0.01,
                         bootstrap=False, same=("config",))  # fmt: skip
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    data = report.to_dict()
    assert {k: v for k, v in data.items() if k not in ("metrics", "requirements", "cases")} == {
        "change_type": "alias_or_semantic_metadata",
        "verdict": "block",
        "exit_code": 1,
        "reasons": list(report.reasons),
        "rule": {
            "suites": [],
            "require": ["no_regression"],
            "metrics": ["hit_at_k"],
            "tolerance": 0.01,
            "bootstrap": False,
            "same": ["config"],
        },
        "compared_suites": ["search_core"],
        "baseline": {
            "path": "baseline.json",
            "digest": "sha256:baseline",
            "run_id": "run-1",
            "collection_digest": "sha256:before-alias",
            "config_digest": "sha256:config",
            "engine": "builtin",
            "model": None,
        },
        "candidate": {
            "path": "candidate.json",
            "digest": "sha256:candidate",
            "run_id": "run-2",
            "collection_digest": "sha256:after-alias",
            "config_digest": "sha256:config",
            "engine": "builtin",
            "model": None,
        },
        "counts": {
            "regressed": 1,
            "fixed": 1,
            "still_failing": 0,
            "new_failing": 0,
            "new_passing": 0,
            "unevaluated": 0,
            "removed": 0,
            "passing": 1,
        },
    }
    assert data["requirements"] == [c.to_dict() for c in report.checks]
    assert [c["name"] for c in data["requirements"]] == ["no_regression", "no_required_regression"]
    assert data["metrics"] == [m.to_dict() for m in report.metrics]
    assert list(data["cases"]) == ["regressed", "fixed", "still_failing", "new_failing", "new_passing",
                                   "unevaluated", "removed"]  # fmt: skip
    regressed = data["cases"]["regressed"][0]
    assert {k: v for k, v in regressed.items() if k not in ("baseline", "candidate")} == {
        "case_id": "s-2", "suite": "search_core", "change": "regressed", "required": True, "flaky": False,
    }  # fmt: skip
    assert (regressed["baseline"]["status"], regressed["baseline"]["pass_ratio"]) == ("passed", 1.0)
    assert (regressed["candidate"]["status"], regressed["candidate"]["pass_ratio"]) == ("failed", 0.0)
    assert regressed["baseline"]["evidence"]["search"]["hit_rank"] == 1


def test_a_refused_comparison_keeps_its_change_type_and_suites() -> None:
    base, cand = _alias_pair()
    cand.data["fingerprint"]["config_digest"] = "sha256:other"
    rule = PromotionRule("alias_or_semantic_metadata", require=(), same=("config",))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert (report.verdict, report.change_type, report.suites) == (
        "refused",
        "alias_or_semantic_metadata",
        ("search_core",),
    )


def test_the_bootstrap_draws_from_the_seed_it_is_given() -> None:
    rule = PromotionRule(
        "alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",), bootstrap=True
    )
    base, cand = _art(_many(20, 0, run_id="a"), "a"), _art(_many(20, 3, run_id="b"), "b")
    runs = [compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule, seed=s, resamples=200).metrics[0]
            for s in (1, 1, 2)]  # fmt: skip
    assert runs[0].interval == runs[1].interval and runs[0].interval != runs[2].interval
    assert runs[0].interval is not None and runs[0].interval.resamples == 200 and runs[0].interval.seed == 1


def test_the_report_names_the_model_each_run_used() -> None:
    base = _art(artifact([search_case("s-1")], model="model-a"), "baseline")
    cand = _art(artifact([search_case("s-1")], run_id="run-2", model="model-b"), "candidate")
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=PromotionRule("alias_or_semantic_metadata")
    )
    assert (report.baseline["model"], report.candidate["model"]) == ("model-a", "model-b")


def test_a_metric_only_suites_report_is_compared_suite_by_suite() -> None:
    """A suite-level metric (nDCG@K has no per-case value) is read from each run's suites section."""

    def run(ndcg: float, run_id: str) -> Artifact:
        suites = {"search_core": {"mode": "search", "category": "flow", "required": True,
                                  "metrics": {"ndcg_at_k": ndcg}, "counts": {}}}  # fmt: skip
        return _art(artifact([search_case("s-1")], run_id=run_id, suites=suites), run_id)

    rule = PromotionRule("alias_or_semantic_metadata", metrics=("ndcg_at_k",), require=("metric_not_worse",))
    report = compare(run(0.9, "base"), run(0.7, "cand"), change_type="alias_or_semantic_metadata", rule=rule)
    assert report.reasons == ("ndcg_at_k (suite:search_core) dropped 0.9000 -> 0.7000 (tolerance 0.0)",)


def test_a_case_of_a_suite_neither_run_describes_is_required() -> None:
    base = _art(artifact([search_case("s-1")], suites={}), "baseline")
    cand = _art(artifact([search_case("s-1", rank=None)], run_id="run-2", suites={}), "candidate")
    report = compare(
        base, cand, change_type="alias_or_semantic_metadata", rule=PromotionRule("alias_or_semantic_metadata")
    )
    assert [(c.case_id, c.kind, c.required) for c in report.changes] == [("s-1", "regressed", True)]
    assert report.verdict == "block"


@pytest.mark.parametrize("missing", ["baseline", "candidate", "both"])
def test_same_collection_refuses_runs_that_record_no_collection_digest(missing: str) -> None:
    """Rule (issue 36, 8): ``same: [collection]`` cannot be checked without a digest on both sides: refused (exit
    2), never taken as "the same"."""
    base = _art(artifact([search_case("s-1")]), "a")
    cand = _art(copy.deepcopy(dict(base.data)), "b")
    for side in {"baseline": (base,), "candidate": (cand,), "both": (base, cand)}[missing]:
        side.data["fingerprint"]["collection_digest"] = None
    rule = PromotionRule("alias_or_semantic_metadata", same=("cases", "collection"))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert report.exit_code == 2
    assert "same: collection: a run records no fingerprint.collection_digest" in report.reasons[0]

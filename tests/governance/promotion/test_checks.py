"""The evidence a promotion rule can require (``qlab.governance.promotion.checks``), each check at its edges:
missing evidence fails, a flaky case never gates, a removed or new required case is judged on its own."""

from __future__ import annotations

from typing import Any

import pytest

from qlab.governance.promotion import checks
from qlab.governance.promotion.bootstrap import Interval
from qlab.governance.promotion.changes import CaseChange
from qlab.governance.promotion.checks import Check
from qlab.governance.promotion.metrics import MetricCheck
from qlab.governance.records import Artifact

FAIL = {"stage": "search", "reason": "expected_target_absent", "message": "m"}


def _art(run_id: str = "base", cases: list[dict[str, Any]] | None = None, **data: Any) -> Artifact:
    return Artifact(
        data={"run_id": run_id, "cases": cases or [], **data}, path=f"{run_id}.json", digest="sha256:x"
    )


def _run(name: str, *, changes: list[CaseChange] = (), metrics: list[MetricCheck] = (),  # type: ignore[assignment]
         baseline: Artifact | None = None, candidate: Artifact | None = None,
         cand_cases: dict[str, dict[str, Any]] | None = None, tolerance: float = 0.0,
         reviewed: list[dict[str, Any]] = ()) -> Check:  # type: ignore[assignment]  # fmt: skip
    return checks.run(
        name,
        changes=changes,
        metrics=metrics,
        baseline=baseline or _art("base"),
        candidate=candidate or _art("cand"),
        cand_cases=cand_cases or {},
        tolerance=tolerance,
        reviewed=reviewed,
    )


def _change(case_id: str, kind: str, *, required: bool = True, flaky: bool = False, failure: dict[str, Any] | None = None,
            status: str | None = "failed") -> CaseChange:  # fmt: skip
    candidate = {"failure": failure} if failure else ({} if status else None)
    return CaseChange(case_id, "s", kind, required, flaky, {}, candidate, "passed", status)


# ----------------------------------------------------------------------------------- regressions


def test_a_regressed_case_blocks_and_says_where_it_failed() -> None:
    found = _run(
        "no_regression",
        changes=[_change("c1", "regressed", failure=FAIL), _change("c2", "regressed", required=False)],
    )
    assert found == Check(
        "no_regression",
        False,
        (
            "required case c1 (s) regressed: passed in the baseline, failed at search/expected_target_absent in "
            "the candidate",
            "case c2 (s) regressed: passed in the baseline, failed in the candidate",
        ),
    )


def test_no_required_regression_leaves_optional_cases_to_the_rule() -> None:
    changes = [_change("opt", "regressed", required=False), _change("req", "regressed")]
    found = _run("no_required_regression", changes=changes)
    assert found.name == "no_required_regression"
    assert found.reasons == (
        "required case req (s) regressed: passed in the baseline, failed in the candidate",
    )


def test_a_flaky_case_is_reported_never_gating_and_the_next_one_still_counts() -> None:
    changes = [_change("f", "regressed", flaky=True), _change("r", "regressed")]
    assert [r.split(" (")[0] for r in _run("no_regression", changes=changes).reasons] == ["required case r"]


def test_a_removed_required_case_blocks_a_removed_optional_one_does_not() -> None:
    """Rule: dropping a required case from the candidate is not a way to make it pass."""
    removed = CaseChange("gone", "s", "removed", True, False, {}, None, "passed", None)
    optional = CaseChange("opt", "s", "removed", False, False, {}, None, "passed", None)
    found = _run("no_required_regression", changes=[optional, removed])
    assert found == Check(
        "no_required_regression", False, ("required case gone (s) no longer runs in the candidate",)
    )
    assert _run("no_regression", changes=[optional]).passed


def test_a_new_required_case_must_pass_on_its_own() -> None:
    new = _change("n1", "new_failing", failure={"stage": "plan", "reason": "plan_failed"})
    assert _run("no_regression", changes=[new]).reasons == (
        "new required case n1 (s) fails in the candidate: failed at plan/plan_failed",
    )
    bare = _change("n2", "new_failing")
    assert _run("no_regression", changes=[bare]).reasons == (
        "new required case n2 (s) fails in the candidate: failed",
    )
    assert _run("no_regression", changes=[_change("n3", "new_failing", required=False)]).passed
    quiet = [_change("a", k) for k in ("fixed", "still_failing", "unevaluated", "new_passing", "passing")]
    assert _run("no_regression", changes=quiet) == Check("no_regression", True)


# ----------------------------------------------------------------------------------- metrics


def _metric(baseline: float | None, candidate: float | None, **kw: Any) -> MetricCheck:
    return MetricCheck(
        "hit_at_k", kw.pop("source", "cases"), baseline, candidate, 10, kw.pop("tolerance", 0.0), **kw
    )


def test_a_metric_without_data_on_either_side_fails() -> None:
    found = _run("metric_not_worse", metrics=[_metric(None, 0.5), _metric(0.5, None), _metric(None, None)])
    assert found == Check(
        "metric_not_worse",
        False,
        (
            "hit_at_k: no data in the baseline",
            "hit_at_k: no data in the candidate",
            "hit_at_k: no data in the baseline",
        ),
    )


def test_a_metric_drop_names_its_interval_and_at_most_five_cases() -> None:
    worse = tuple(f"c{i}" for i in range(7))
    found = _run(
        "metric_not_worse",
        metrics=[
            _metric(
                0.9, 0.7, tolerance=0.01, interval=Interval(-0.2, -0.3, -0.1, 0.95, 1000, 7, 10), worse=worse
            )
        ],
    )
    assert found.reasons == (
        "hit_at_k (cases) dropped 0.9000 -> 0.7000 (tolerance 0.01, interval [-0.3000, -0.1000]); "
        "worse on c0, c1, c2, c3, c4 and 2 more",
    )
    five = _run("metric_not_worse", metrics=[_metric(0.9, 0.7, worse=worse[:5])])
    assert five.reasons == (
        "hit_at_k (cases) dropped 0.9000 -> 0.7000 (tolerance 0.0); worse on c0, c1, c2, c3, c4",
    )
    bare = _run("metric_not_worse", metrics=[_metric(0.9, 0.7, source="suite:s")])
    assert bare.reasons == ("hit_at_k (suite:s) dropped 0.9000 -> 0.7000 (tolerance 0.0)",)
    assert _run("metric_not_worse", metrics=[_metric(0.9, 0.9), _metric(0.5, 0.9)]) == Check(
        "metric_not_worse", True
    )


# ----------------------------------------------------------------------------------- plan target


def test_plan_target_correct_judges_plan_and_execute_cases_only() -> None:
    cases = {
        "s1": {"mode": "search"},
        "p1": {"mode": "plan", "target_selector": {"selected_target": "getA"}},
        "p2": {"mode": "plan", "status": "failed", "target_selector": {"selected_target": "getB"},
               "failure": {"stage": "select", "reason": "wrong_target_selected"}},
        "e1": {"mode": "execute", "target_selector": {"selected_target": None}},
        "p3": {"mode": "plan", "target_selector": {"selected_target": "getC", "correct": True}},
    }  # fmt: skip
    found = _run("plan_target_correct", cand_cases=cases)
    assert found == Check(
        "plan_target_correct",
        False,
        ("p2: final target 'getB' is not the expected one (select/wrong_target_selected)",
         "e1: final target None is not the expected one"),
        {"plan_cases": 4},
    )  # fmt: skip
    assert _run("plan_target_correct", cand_cases={"s": {"mode": "search"}}) == Check(
        "plan_target_correct",
        False,
        ("the compared suites hold no plan case in the candidate",),
        {"plan_cases": 0},
    )


# ----------------------------------------------------------------------------------- readiness


def _ready(schema: Any, contract: Any) -> dict[str, Any]:
    return {"readiness": {"schema_coverage": schema, "contract_coverage": contract}}


@pytest.mark.parametrize(
    ("base", "cand", "tolerance", "reasons"),
    [
        ((0.8, 0.5), (0.9, 0.5), 0.0, ()),
        ((0.8, 0.5), (0.8, 0.6), 0.0, ()),
        (
            (0.8, 0.5),
            (0.8, 0.5),
            0.0,
            ("neither readiness.schema_coverage nor readiness.contract_coverage improved",),
        ),
        ((0.8, 0.5), (0.79, 0.9), 0.0, ("readiness.schema_coverage dropped 0.8000 -> 0.7900",)),
        ((0.8, 0.5), (0.79, 0.9), 0.01, ()),  # within the rule's tolerance
        ((0.8, 0.5), (0.78, 0.9), 0.01, ("readiness.schema_coverage dropped 0.8000 -> 0.7800",)),
        ((0.8, None), (0.9, 0.5), 0.0, ("readiness.contract_coverage is missing in a run",)),
        ((0.8, 0.5), (0.9, "x"), 0.0, ("readiness.contract_coverage is missing in a run",)),
    ],
)
def test_readiness_must_improve_and_never_drop(base: tuple[Any, Any], cand: tuple[Any, Any], tolerance: float,
                                               reasons: tuple[str, ...]) -> None:  # fmt: skip
    found = _run("readiness_improves", baseline=_art("b", **_ready(*base)), candidate=_art("c", **_ready(*cand)),
                 tolerance=tolerance)  # fmt: skip
    assert (found.name, found.passed, found.reasons) == ("readiness_improves", not reasons, reasons)
    if all(isinstance(v, float) for v in (*base, *cand)):
        assert found.details == {
            "schema_coverage": {"baseline": base[0], "candidate": cand[0]},
            "contract_coverage": {"baseline": base[1], "candidate": cand[1]},
        }


def test_readiness_needs_a_report_in_both_runs() -> None:
    for base, cand in (
        (_art("b"), _art("c", **_ready(0.9, 0.9))),
        (_art("b", **_ready(0.5, 0.5)), _art("c", readiness=[])),
    ):
        assert _run("readiness_improves", baseline=base, candidate=cand).reasons == (
            "a run has no readiness report; run the build stage in both",
        )


# ----------------------------------------------------------------------------------- shadow rank


def _learn(shadow: Any) -> dict[str, Any]:
    return {"stages": {"learn": {"details": {"shadow": shadow}}}}


def test_a_shadow_result_in_a_run_must_improve_a_metric_and_regress_no_case() -> None:
    good = {"cases": 3, "delta": {"hit_at_k": 0.1, "mrr": 0.0}}
    assert _run("shadow_improves", baseline=_art("b", **_learn(good))) == Check(
        "shadow_improves", True, (), {"delta": {"hit_at_k": 0.1, "mrr": 0.0}}
    )
    flat = {"cases": 3, "delta": {"hit_at_k": 0.0, "mrr": "n/a"}}
    assert _run("shadow_improves", candidate=_art("c", **_learn(flat))).reasons == (
        "the shadow result does not improve any search metric",
    )
    mixed = {"cases": 3, "delta": {"hit_at_k": 0.2, "mrr": -0.05}, "regressed": ["s-2"]}
    assert _run("shadow_improves", baseline=_art("b", **_learn(mixed))).reasons == (
        "shadow mrr dropped by 0.0500",
        "shadow: case s-2 ranks worse with the suggestions applied",
    )


def test_a_shadow_result_without_cases_is_no_result() -> None:
    empty = {"cases": 0, "delta": {"hit_at_k": 0.5}}
    for artifact in (_art("b", **_learn(empty)), _art("b", **_learn("x")), _art("b", stages={"learn": "x"}),
                     _art("b", stages={"learn": {"details": []}})):  # fmt: skip
        assert checks.shadow_of(artifact) is None
    assert not _run("shadow_improves", baseline=_art("b", **_learn(empty))).passed


def test_the_accepted_suggestions_of_the_baseline_run_carry_the_shadow() -> None:
    reviewed = [
        {"id": "sug-1", "status": "accepted", "run_id": "base", "shadow": {"cases": 2, "delta": {"hit_at_k": 0.1}}},
        {"id": "sug-2", "status": "accepted", "run_id": "base", "shadow": {"cases": 2, "delta": {"top_1": -0.2},
                                                                       "regressed": ["q"]}},
        {"id": "sug-3", "status": "rejected", "run_id": "base", "shadow": {"cases": 2, "delta": {"mrr": 0.9}}},
        {"id": "sug-4", "status": "accepted", "run_id": "other", "shadow": {"cases": 2, "delta": {"mrr": 0.9}}},
        {"id": "sug-5", "status": "accepted", "run_id": "base", "shadow": {"cases": 0, "delta": {"mrr": 0.9}}},
        {"id": "sug-6", "status": "accepted", "run_id": "base"},
    ]  # fmt: skip
    assert [sid for sid, _ in checks.accepted_shadows(reviewed, run_id="base")] == ["sug-1", "sug-2"]
    assert checks.accepted_shadows(reviewed, run_id=None) == []
    found = _run("shadow_improves", reviewed=reviewed)
    assert found == Check(
        "shadow_improves",
        False,
        (
            "shadow of sug-2: top_1 dropped by 0.2000",
            "shadow of sug-2: case q ranks worse with the suggestions applied",
        ),
        {"suggestions": {"sug-1": {"hit_at_k": 0.1}, "sug-2": {"top_1": -0.2}}},
    )
    assert _run("shadow_improves", reviewed=reviewed[:1]).passed
    flat = [
        {"id": "s", "status": "accepted", "run_id": "base", "shadow": {"cases": 1, "delta": {"mrr": 0.0}}}
    ]
    assert _run("shadow_improves", reviewed=flat).reasons == (
        "the shadow result of the accepted suggestions does not improve any search metric",
    )


def test_no_shadow_anywhere_fails_and_says_how_to_get_one() -> None:
    assert _run("shadow_improves").reasons == (
        "no shadow-rank result in either run, and no suggestion accepted from the baseline run (base) carries "
        "one; run `qlab learn shadow --result BASELINE`, then `qlab learn accept ID --by NAME`",
    )


# ----------------------------------------------------------------------------------- scrubbing


def _scrub(passed: bool | None, *, leak: bool = False) -> dict[str, Any]:
    cases = [{"case_id": "c", "failure": {"reason": "scrub_failed"} if leak else None}]
    guards = (
        [] if passed is None else [{"guard": "budget", "passed": False}, {"guard": "scrub", "passed": passed}]
    )
    return {"guards": guards, "cases": cases}


def test_scrub_passes_needs_a_passing_scrub_check_in_both_runs() -> None:
    ok = _art("b", **_scrub(True))
    assert _run("scrub_passes", baseline=ok, candidate=_art("c", **_scrub(True))) == Check(
        "scrub_passes", True
    )
    assert _run("scrub_passes", baseline=ok, candidate=_art("c", **_scrub(False))).reasons == (
        "the scrub check failed in the candidate",
    )
    assert _run("scrub_passes", baseline=_art("b", **_scrub(True, leak=True)), candidate=ok).reasons == (
        "the scrub check failed in the baseline",
    )
    # a guard saying "passed": "yes" is not a pass
    odd = _art("c", guards=[{"guard": "scrub", "passed": "yes"}], cases=[])
    assert not _run("scrub_passes", baseline=ok, candidate=odd).passed


def test_without_a_scrub_guard_the_learn_gate_stands_in() -> None:
    ok = _art("b", **_scrub(True))
    learn = {
        "gates": [{"stage": "search", "status": "blocked"}, {"stage": "learn", "status": "passed"}],
        "cases": [],
    }
    assert _run("scrub_passes", baseline=ok, candidate=_art("c", **learn)).passed
    bad = {"gates": [{"stage": "learn", "status": "warned"}], "cases": []}
    assert _run("scrub_passes", baseline=ok, candidate=_art("c", **bad)).reasons == (
        "the learn gate (scrub check) did not pass in the candidate",
    )
    leaked = {**learn, "cases": [{"case_id": "x", "failure": {"reason": "scrub_failed"}}]}
    assert not _run("scrub_passes", baseline=ok, candidate=_art("c", **leaked)).passed
    nothing = _art("c", guards=["scrub"], gates=["learn"], cases=[])
    assert _run("scrub_passes", baseline=_art("b"), candidate=nothing).reasons == (
        "no scrub check ran in the baseline (no scrub guard, no learn gate)",
        "no scrub check ran in the candidate (no scrub guard, no learn gate)",
    )


# ----------------------------------------------------------------------------------- execute evidence


def test_auth_ready_reads_every_execute_case() -> None:
    cases = {
        "s": {"mode": "search"},
        "e1": {"mode": "execute", "auth_readiness": {"status": "ready"}},
        "e2": {"mode": "execute", "auth_readiness": {"status": "not_required"}},
        "e3": {"mode": "execute", "auth_readiness": {"status": "x", "ready": True}},
        "e4": {"mode": "execute", "failure": {"reason": "auth_failed"}, "auth_readiness": {"status": "ready"}},
        "e5": {"mode": "execute"},
        "e6": {"mode": "execute", "auth_readiness": {"status": "not_ready", "reason_codes": ["auth_context_required", "x"]}},
        "e7": {"mode": "execute", "auth_readiness": {"status": "not_ready", "ready": False}},
    }  # fmt: skip
    assert _run("auth_ready", cand_cases=cases) == Check(
        "auth_ready",
        False,
        ("e4: auth_failed", "e5: no auth_readiness recorded (did the execute stage run?)",
         "e6: auth not ready (auth_context_required, x)", "e7: auth not ready (not_ready)"),
    )  # fmt: skip
    assert _run("auth_ready", cand_cases={"s": {"mode": "plan"}}).reasons == (
        "the compared suites hold no execute case in the candidate",
    )
    assert _run("auth_ready", cand_cases={"e1": cases["e1"]}) == Check("auth_ready", True)


def test_read_assertions_pass_reads_the_read_only_execute_cases() -> None:
    cases = {
        "ok": {"mode": "execute", "status": "passed", "assertions": [{"type": "http_status", "passed": True}]},
        "bad": {"mode": "execute", "status": "failed", "assertions": [
            {"type": "http_status", "passed": False, "message": "got 500"}, {"type": "json_path_exists", "passed": False},
            "not-an-assertion"]},
        "down": {"mode": "execute", "status": "error", "failure": {"reason": "environment_unreachable"}},
        "post": {"mode": "execute", "status": "failed", "execute": {"method": "post"}},
        "allowed": {"mode": "execute", "status": "failed", "mutation_safety": "allow_mutation"},
        "mut": {"mode": "execute", "status": "failed", "execute": {"mutation": "destructive"}},
        "mut2": {"mode": "execute", "status": "failed", "execute": {"mutation": "mutating"}},
        "head": {"mode": "execute", "status": "passed", "execute": {"method": "HEAD"}},
    }  # fmt: skip
    found = _run("read_assertions_pass", cand_cases=cases)
    assert found == Check(
        "read_assertions_pass",
        False,
        ("bad: failed: got 500; json_path_exists", "down: error: environment_unreachable"),
        {"read_only_cases": 4},
    )
    assert _run("read_assertions_pass", cand_cases={"p": cases["post"]}) == Check(
        "read_assertions_pass",
        False,
        ("the compared suites hold no read-only execute case in the candidate",),
        {"read_only_cases": 0},
    )


def test_a_check_as_recorded() -> None:
    assert Check("n", False, ("r",), {"k": 1}).to_dict() == {
        "name": "n",
        "passed": False,
        "reasons": ["r"],
        "details": {"k": 1},
    }
    assert Check("n", True).to_dict() == {"name": "n", "passed": True, "reasons": []}


# ----------------------------------------------------------------------------------- edges pinned by mutation testing


def test_six_worse_cases_are_five_named_and_one_more() -> None:
    worse = tuple(f"c{i}" for i in range(6))
    assert _run("metric_not_worse", metrics=[_metric(0.9, 0.7, worse=worse)]).reasons == (
        "hit_at_k (cases) dropped 0.9000 -> 0.7000 (tolerance 0.0); worse on c0, c1, c2, c3, c4 and 1 more",
    )


def test_readiness_reads_every_figure_even_after_a_missing_one() -> None:
    found = _run(
        "readiness_improves", baseline=_art("b", **_ready(None, 0.5)), candidate=_art("c", **_ready(0.9, 0.3))
    )
    assert found.reasons == (
        "readiness.schema_coverage is missing in a run",
        "readiness.contract_coverage dropped 0.5000 -> 0.3000",
    )  # fmt: skip


def test_readiness_without_a_report_is_a_named_failed_check() -> None:
    assert _run("readiness_improves") == Check(
        "readiness_improves", False, ("a run has no readiness report; run the build stage in both",)
    )


def test_float_noise_is_neither_a_drop_nor_a_gain() -> None:
    """Rule: a difference of at most 1e-9 (float noise in a mean) is no change: readiness neither dropped nor
    improved, a shadow delta neither dropped nor improved a metric."""
    eps = checks._EPS
    base, cand = _art("b", **_ready(0.5, 0.5)), _art("c", **_ready(0.5 - eps, 0.5 + eps))
    assert _run("readiness_improves", baseline=base, candidate=cand).reasons == (
        "neither readiness.schema_coverage nor readiness.contract_coverage improved",
    )
    noise = {"cases": 3, "delta": {"hit_at_k": -eps, "mrr": eps}}
    assert _run("shadow_improves", baseline=_art("b", **_learn(noise))).reasons == (
        "the shadow result does not improve any search metric",
    )


def test_every_accepted_suggestion_that_fails_is_named() -> None:
    reviewed = [
        {"id": f"sug-{i}", "status": "accepted", "run_id": "base", "shadow": {"cases": 2, "delta": {"top_1": -0.1}}}
        for i in (1, 2)
    ]  # fmt: skip
    assert _run("shadow_improves", reviewed=reviewed).reasons == (
        "shadow of sug-1: top_1 dropped by 0.1000",
        "shadow of sug-2: top_1 dropped by 0.1000",
    )


def test_no_shadow_anywhere_is_a_named_failed_check() -> None:
    found = _run("shadow_improves")
    assert (found.name, found.passed) == ("shadow_improves", False)

"""The promotion's metric pairs: like with like, the run's definitions, pass ratios."""

from __future__ import annotations

import pytest

from governance.builders import artifact, plan_case, search_case
from qlab.governance.promotion.metrics import metric_checks
from qlab.governance.promotion.rules import case_metric
from qlab.governance.records import Artifact
from qlab.project.model import PromotionRule


def _art(cases: list[dict[str, object]], name: str) -> Artifact:
    return Artifact(data=artifact(cases), path=f"{name}.json", digest=f"sha256:{name}")


def test_a_value_measured_on_one_side_only_is_no_pair() -> None:
    """Was: a case with data on one side only scored 0 on the other, a made-up regression (or fix)."""
    blocked = {k: v for k, v in plan_case("p-1").items() if k not in ("search", "target_selector", "plan")}
    blocked.update(
        status="blocked", failure={"stage": "search", "reason": "blocked_by_stage", "message": "m"}
    )
    base = {"p-1": plan_case("p-1"), "p-2": plan_case("p-2")}
    cand = {"p-1": blocked, "p-2": plan_case("p-2")}
    rule = PromotionRule("selector_override_policy", metrics=("selector_accuracy",))
    [check] = metric_checks(
        rule, base, cand, _art(list(base.values()), "b"), _art(list(cand.values()), "c"), []
    )
    assert (check.n, check.baseline, check.candidate, check.regressed) == (1, 1.0, 1.0, False)


def test_per_case_values_follow_the_runs_definitions() -> None:
    miss = search_case("s-1", rank=None)
    failed_before_select = {**plan_case("p-1", correct=False), "target_selector": None, "plan": None}
    failed_before_select["failure"] = {"stage": "search", "reason": "expected_target_absent", "message": "m"}
    assert case_metric("hit_at_k")(miss) == 0.0  # type: ignore[misc]
    assert case_metric("selector_accuracy")(failed_before_select) == 0.0  # type: ignore[misc]  # a miss of select
    assert case_metric("plan_hit_rate")(failed_before_select) == 0.0  # type: ignore[misc]
    assert case_metric("selector_accuracy")(miss) is None  # type: ignore[misc]  # a search case never reaches it
    assert case_metric("pass_rate")({**search_case("s-2"), "attempts": 3, "passes": 2}) == pytest.approx(
        0.666667
    )  # type: ignore[misc]

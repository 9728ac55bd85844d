"""Results per eval category (a suite's ``category``)."""

from __future__ import annotations

from governance.builders import artifact, plan_case, search_case
from qlab.project.model import CATEGORIES
from qlab.run.categories import by_category, markdown


def test_cases_count_under_their_suites_category_and_every_category_is_listed() -> None:
    suites = {
        "search_core": {"mode": "search", "category": "flow", "required": True},
        "regression": {"mode": "plan", "category": "regression", "required": True},
        "mutation": {"mode": "execute", "category": "policy", "required": False},
    }
    cases = [
        search_case("s-1"),
        search_case("s-2", rank=None),
        plan_case("r-1", suite="regression"),
        plan_case("r-2", suite="regression", status="blocked"),
        search_case("x-1", suite="not_in_suites"),
    ]
    out = by_category(artifact(cases, suites=suites))
    assert list(out)[: len(CATEGORIES)] == list(CATEGORIES)
    flow = out["flow"]
    assert (flow["counts"]["total"], flow["counts"]["passed"], flow["pass_rate"]) == (2, 1, 0.5)
    assert out["regression"]["counts"]["blocked"] == 1 and out["regression"]["pass_rate"] == 1.0
    policy = out["policy"]
    assert (policy["suites"], policy["required"], policy["counts"]["total"], policy["pass_rate"]) == (
        ["mutation"],
        False,
        0,
        None,
    )
    assert out["skill"]["suites"] == [] and out["skill"]["pass_rate"] is None
    assert out["uncategorized"]["counts"]["total"] == 1
    table = markdown(out)
    assert "| regression | regression | 2 | 1 | 0 | 0 | 1 | 100.0% |" in table


def test_the_shape_matches_the_result_schema() -> None:
    from qlab.project.schemas import validate

    data = artifact([search_case("s-1")])
    data["categories"] = by_category(data)
    assert [i for i in validate(data, "result") if i.path[:1] == ("categories",)] == []

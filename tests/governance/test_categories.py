"""Results per eval category (a suite's ``category``)."""

from __future__ import annotations

from governance.builders import artifact, plan_case, search_case
from qlab.categories import by_category, markdown
from qlab.project.model import CATEGORIES


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
    assert out["flow"]["cases"] == 2 and out["flow"]["passed"] == 1 and out["flow"]["pass_rate"] == 0.5
    assert out["regression"]["blocked"] == 1 and out["regression"]["pass_rate"] == 1.0
    assert out["policy"] == {
        **out["policy"],
        "suites": ["mutation"],
        "required": False,
        "cases": 0,
        "pass_rate": None,
    }
    assert out["skill"]["suites"] == [] and out["skill"]["pass_rate"] is None
    assert out["uncategorized"]["cases"] == 1
    table = markdown(out)
    assert "| regression | regression | 2 | 1 | 0 | 0 | 1 | 100.0% |" in table

"""Rule: a rate is over the cases that reached its stage. When the select gate blocks, the plan cases that passed
select count in the select figures (the run does not say 0 beside a gate table that says 1.0), and the plan
figures are "not reached": ``null`` in result.json, ``n/a (not reached)`` in the summary, the console, the HTML
report, the scorecard, the trend charts and the JUnit properties — never 0."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from typing import Any

from qlab.report import console, junit, markdown
from qlab.report.html import render_html
from run import story

NA = "n/a (not reached)"


def _select_blocked() -> dict[str, Any]:
    art = story.story("select").whole
    assert art["decision"]["verdict"] == "block"
    assert next(g for g in art["gates"] if g["name"] == "select")["status"] == "blocked"
    return art


def _properties(art: dict[str, Any], suite: str) -> dict[str, str]:
    root = ET.fromstring(junit.render(art, hostname="h"))
    found = next(s for s in root.iter("testsuite") if s.get("name") == suite)
    return {p.get("name", ""): p.get("value", "") for p in found.iter("property")}


def test_the_select_figures_count_the_cases_that_passed_select_before_the_block() -> None:
    art = _select_blocked()
    select = next(g for g in art["gates"] if g["name"] == "select")
    judged = {t["suite"]: t["actual"] for t in select["thresholds"]}
    # the gate table and the suites' metrics say the same figure, after the block as when the gate judged
    assert judged == {s: art["suites"][s]["metrics"]["selector_accuracy"] for s in judged}
    assert judged == {"plan_e2e": 1.0, "regression": 0.666667}
    assert art["metrics"]["target_selector_accuracy"] == 0.875  # 7 of the 8 cases select judged, not 0
    assert art["scorecard"]["tool_selection_accuracy"] == 0.875  # not 0 of 8
    went = [c for c in art["cases"] if c["status"] == "blocked" and "target_selector" in c]
    assert went and {c["failure"]["message"] for c in went} == {
        "the select gate blocked the run; this case went through select and never reached plan"
    }


def test_a_stage_the_block_kept_every_case_from_is_not_reached_in_every_output() -> None:
    art = _select_blocked()
    assert (
        art["metrics"]["plan_hit_rate"] is None
        and art["suites"]["plan_e2e"]["metrics"]["plan_hit_rate"] is None
    )
    assert art["not_reached"]["metrics"] == ["plan_hit_rate", "execute_read_success_rate"]
    assert "plan_hit_rate" in art["not_reached"]["suites"]["plan_e2e"]
    plan = next(g for g in art["gates"] if g["name"] == "plan")
    assert plan["thresholds"][0]["not_reached"] is True

    summary = markdown.render(art)
    assert f"| plan_hit_rate | {NA} |" in summary and "| target_selector_accuracy | 0.875 |" in summary
    assert f"plan_hit_rate {NA} >= 0.9" in summary and "| plan_hit_rate | 0.000 |" not in summary
    assert f"plan_hit_rate={NA}>=0.9" in console.gate_table(art)

    page = html.unescape(render_html([art]))
    assert f"plan hit rate</td><td>{NA}" in page.replace('<span class="muted">', "").replace("</span>", "")
    assert f"plan_hit_rate {NA}" in page  # the suite's metrics

    run = _properties(art, "qlab")
    assert run["metric.plan_hit_rate"] == NA and run["metric.target_selector_accuracy"] == "0.875"
    assert run["scorecard.tool_selection_accuracy"] == "0.875"
    assert _properties(art, "suite.plan_e2e")["metric.plan_hit_rate"] == NA
    assert _properties(art, "gate.plan")["threshold.plan_hit_rate"] == NA


def test_a_scorecard_dimension_whose_stage_was_not_reached_says_so() -> None:
    art = story.story("blocked").whole  # the search gate blocks: no case reached select
    assert art["scorecard"]["tool_selection_accuracy"] is None
    assert art["not_reached"]["scorecard"] == ["tool_selection_accuracy"]
    assert f"| tool_selection_accuracy | {NA} |" in markdown.render(art)
    assert _properties(art, "qlab")["scorecard.tool_selection_accuracy"] == NA
    assert "Not reached: tool_selection_accuracy" in html.unescape(render_html([art]))


def test_the_trend_charts_show_a_not_reached_figure_as_a_gap_named_so() -> None:
    passed, blocked = story.story("pass").whole, _select_blocked()
    page = html.unescape(render_html([passed, blocked]))
    assert f"plan hit rate: latest {NA}; {NA} in #2" in page
    trend = markdown.trend([passed, blocked])
    last = trend.splitlines()[5]  # the second run's row
    assert NA in last and "| 0.000 |" not in last

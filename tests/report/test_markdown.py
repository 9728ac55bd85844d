"""The Markdown summary: gate table, failing cases, hints, links, and the 1 MiB cap."""

from __future__ import annotations

import copy

import artifact_samples as samples
from qlab.report import markdown


def test_sections() -> None:
    text = markdown.render(samples.result(), links={"result": "result.json", "junit": "junit.xml"})
    assert text.startswith("## ❌ qlab: BLOCK — member-delivery-demo")
    assert "| plan | plan | ❌ blocked | plan_hit_rate 0.500 >= 0.9 |" in text
    assert "| `member-plan-002` | plan_e2e | plan | `required_fields_unsatisfied` |" in text
    assert "`gates/plan_e2e/member-plan-002.yaml:1`" in text
    assert (
        "| `required_fields_unsatisfied` | 1 | plan | Search passes but plan fails" in text
    )  # seed 000's hint
    assert "- junit: [`junit.xml`](junit.xml)" in text
    assert "**Blocked cases:** 1 by plan (they never ran)." in text


def test_pipes_and_newlines_in_cells_are_escaped() -> None:
    art = samples.result()
    art["cases"][3]["failure"]["message"] = "a|b\nc"
    assert "a\\|b c" in markdown.render(art)


def test_truncated_under_the_limit_with_a_notice() -> None:
    art = samples.result()
    template = art["cases"][3]
    art["cases"] = [{**copy.deepcopy(template), "case_id": f"case-{i:05d}"} for i in range(20_000)]
    text = markdown.render(art, max_bytes=200_000)
    assert len(text.encode("utf-8")) <= 200_000
    assert "Summary truncated" in text
    assert "more failing case(s) not shown" in text
    assert text.startswith("## ❌ qlab: BLOCK")  # the decision and the gate table survive
    assert "### Acceptance metrics" not in text  # lower-priority sections go first


def test_small_summary_is_not_truncated() -> None:
    text = markdown.render(samples.result())
    assert "truncated" not in text and len(text.encode()) < markdown.MAX_BYTES


def test_the_eval_categories_that_had_cases_get_a_table() -> None:
    text = markdown.render(samples.full(samples.result()))
    assert "### By eval category" in text
    assert "| flow | 6 | 4 | 2 | 0 | 0 | 0.667 |" in text
    assert "| step | 1 | 0 | 0 | 0 | 1 | — |" in text
    assert "| policy |" not in text  # no cases: no row
    assert "### By eval category" not in markdown.render(samples.result())  # an artifact without categories

"""The Markdown summary: gate table, failing cases, hints, links, and the 1 MiB cap."""

from __future__ import annotations

import copy
from typing import Any

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


def test_rows_that_could_not_be_shown_are_not_built_and_the_summary_is_the_same(monkeypatch: Any) -> None:
    art = samples.result()
    template = art["cases"][3]
    art["cases"] = [
        {**copy.deepcopy(template), "case_id": f"case-{i:05d}", "flaky": i % 3 == 0} for i in range(6_000)
    ]
    built: list[int] = []
    capped = markdown._case_rows

    def counting(cases: Any, *, max_bytes: int = markdown.MAX_BYTES) -> list[str]:
        rows = capped(cases, max_bytes=max_bytes)
        built.append(len(rows))
        return rows

    for max_bytes in (30_000, 2_000_000):
        monkeypatch.setattr(markdown, "_case_rows", counting)
        text = markdown.render(art, max_bytes=max_bytes)
        monkeypatch.setattr(markdown, "_case_rows", lambda cases, **_: capped(cases, max_bytes=10**12))
        assert text == markdown.render(art, max_bytes=max_bytes)  # every row built: the same summary
    assert built[0] < 1_000 and built[-1] == 2_000  # a small summary built only the rows it could show

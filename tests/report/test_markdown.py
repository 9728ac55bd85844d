"""The Markdown summary: gate table, failing cases, hints, links, and the 1 MiB cap."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import artifact_samples as samples
import gfm
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
    assert "**Blocked cases:** 1 by plan (the block kept them from the stages after it)." in text


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


def test_on_the_run_page_the_files_are_named_and_the_run_is_linked() -> None:
    """A relative link 404s on a GitHub run page: there the summary names the files and links the run's page."""
    url = "https://github.com/acme/api/actions/runs/42"
    text = markdown.render(samples.result(), links={"result": "result.json"}, run_url=url)
    assert "- result: `result.json`" in text and "](result.json)" not in text
    assert f"[this run's page]({url})" in text
    links = [part.split(")", 1)[0] for part in text.split("](")[1:]]
    assert links and all(link.startswith("https://") for link in links)


def test_the_case_counts_line_says_what_every_output_counts() -> None:
    art = samples.result()
    text = markdown.render(art)
    assert "**Cases:** 7 — 4 passed · 2 failed · 0 error · 1 blocked · 0 skipped" in text


def test_since_the_last_run() -> None:
    before = samples.result()
    after = copy.deepcopy(before)
    fixed = next(c for c in after["cases"] if c["status"] == "failed")
    fixed["status"] = "passed"
    fixed.pop("failure")
    broken = next(c for c in after["cases"] if c["status"] == "passed")
    broken.update(
        status="failed", failure={"stage": "search", "reason": "expected_target_absent", "message": "m"}
    )
    after["metrics"]["search_hit_at_k"] = 0.5
    text = markdown.render(after, previous=before)
    block = text.split("### Since the last run", 1)[1].split("###", 1)[0]
    assert "**1 newly failing**, **1 newly passing**" in block
    assert f"- Newly failing: `{broken['case_id']}` (`expected_target_absent`)" in block
    assert f"- Newly passing: `{fixed['case_id']}`" in block
    assert "| search hit@K | 0.857 | 0.500 | -0.357 |" in block
    assert "Nothing changed since run" in markdown.render(before, previous=before)
    assert "Since the last run" not in markdown.render(before)


# outside text as an attacker writes it for a job summary: images, links, HTML, headings, table breakers, fences
HOSTILE = [
    "![FORGED](http://127.0.0.1:9/pixel.png)",
    "[FORGED](http://127.0.0.1:9/phish)",
    "<img src=x onerror=alert(1)>FORGED",
    "<details><summary>FORGED</summary>",
    "FORGED http://127.0.0.1:9/autolink www.example.com FORGED@example.com",
    "FORGED | injected | cell |",
    "FORGED\n# fake heading\n\n| a | b |\n|---|---|\n| c | d |",
    "FORGED ``` fence ` tick `` ",
    "`x` ![FORGED](http://127.0.0.1:9/i.png) `y`",
    " FORGED\r\n***\n<script>alert(1)</script>",
]


def _hostile(text: str) -> dict[str, Any]:
    """An artifact with ``text`` in every field the summary shows that could come from outside."""
    art = samples.full(samples.result())
    previous = copy.deepcopy(art)
    art["project"] = art["run_id"] = text
    art["shard"] = {"index": text, "total": text}
    art["decision"]["reasons"] = [text, text]
    for gate in art["gates"]:
        gate.update(name=text, stage=text, status=text, reasons=[text])
        gate["thresholds"] = [{"metric": text, "op": text, "value": text, "actual": text, "suite": text}]
    for case in art["cases"]:
        case.update(case_id=text, suite=text, file=text, line=text, passes=text, attempts=text)
        if case.get("failure"):
            case["failure"] = {"stage": text, "reason": text, "message": text}
    art["cases"][0].update(status="passed", passes=1, attempts=2)  # a flaky pass
    art["cases"].append({"case_id": text, "suite": text, "status": "blocked", "failure": {"stage": text}})
    art["cases"].append({**art["cases"][3], "flaky": True})  # a non-gating failure
    art["skipped_suites"] = [{"suite": text, "reason": text}]
    art["metrics"] = {text: text, "latency_ms": {text: {"p50": text, "p95": text}}}
    art["scorecard"] = {text: text}
    art["categories"] = {text: {"counts": {"total": 1, "passed": text}, "pass_rate": text}}
    art["guards"] = [
        {"guard": text, "stage": text, "mode": text, "passed": False, "message": text, "subject": text}
    ]
    previous["run_id"] = text
    return {"art": art, "previous": previous}


@pytest.mark.parametrize("text", HOSTILE)
def test_outside_text_is_inert_as_github_renders_the_summary(text: str) -> None:
    """Images, links, HTML, headings and table breakers from a response, a spec or a case file reach the summary as
    text in code spans: nothing of them is live on GitHub's page (cmark-gfm, the renderer GitHub uses)."""
    made = _hostile(text)
    url = "https://github.com/acme/api/actions/runs/42"
    summary = markdown.render(
        made["art"], links={"result": "result.json"}, run_url=url, previous=made["previous"]
    )
    assert "FORGED" in summary
    assert gfm.live(summary, "FORGED", own_links=(url,)) == []
    headings = gfm.read(summary, "FORGED").headings
    assert headings[0].startswith("❌ qlab: BLOCK") and all(h.startswith(("❌", "Failing", "Trouble", "Since",
           "Artifacts", "Non-gating", "Acceptance", "By eval", "Checks")) for h in headings)  # fmt: skip
    trend = markdown.trend([made["previous"], made["art"]])
    assert gfm.live(trend, "FORGED") == []


def test_the_check_sees_live_markdown() -> None:
    """The test's own premise: each hostile text is live when written into Markdown as it is."""
    for text in HOSTILE:
        assert gfm.live(f"| a |\n|---|\n| {text} |\n\n- {text}\n", "FORGED"), text

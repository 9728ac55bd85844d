from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import struct
import subprocess
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

import artifact_samples as samples
from qlab.contracts.reasons import REASONS
from qlab.contracts.resources import load_schema
from qlab.report.html.page import render_html

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_EMPTY_OK = {"rect", "line", "circle", "polyline", "path"}
FIXED_TIME = datetime(2026, 12, 2, tzinfo=timezone.utc)


class _Balance(HTMLParser):
    """Checks that every non-void element is closed in order (the page is hand-built markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.sections: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.sections.append(dict(attrs).get("id") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID and tag not in SVG_EMPTY_OK:
            self.errors.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def _parse(page: str) -> _Balance:
    checker = _Balance()
    checker.feed(page)
    checker.close()
    assert checker.errors == [], checker.errors[:5]
    assert checker.stack == [], checker.stack
    return checker


def test_single_result_has_every_run_section_and_balanced_markup() -> None:
    page = render_html([samples.result()], generated_at=FIXED_TIME)
    parsed = _parse(page)
    assert parsed.sections == [
        "overview", "cases", "gates", "metrics", "latency", "hitk", "failures", "scorecard", "suites", "readiness", "guards"
    ]  # fmt: skip
    assert "promotion" not in parsed.sections and "trends" not in parsed.sections
    assert ">BLOCK<" in page
    assert "plan_hit_rate &gt;= 0.9" in page  # the gate's threshold with its actual value
    assert REASONS["required_fields_unsatisfied"].hint in page.replace("&#x27;", "'")


def test_the_page_is_self_contained() -> None:
    page = render_html([samples.result(), samples.fixed_result()], generated_at=FIXED_TIME)
    # one inline script, the case filter, allowed by its hash in the CSP (no other script could run)
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    assert [attrs for attrs, _ in scripts] == [""] and page.lower().count("<script") == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0][1].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html.unescape(page)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page
    # the only URL is the SVG namespace, which is an identifier, not a fetch
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in html.unescape(page)  # a CSP that forbids every fetch


def _case_rows(page: str) -> list[dict[str, str]]:
    table = page.split('<table id="case-table">', 1)[1].split("</table>", 1)[0]
    return [
        {**dict(re.findall(r'data-(\w+)="([^"]*)"', attrs)), "case": html.unescape(case)}
        for attrs, case in re.findall(r"<tr( data-[^>]*)><td>([^<]*)</td>", table)
    ]


def test_cases_that_did_not_pass_come_right_after_the_decision_failures_first() -> None:
    result = samples.result()
    result["cases"].insert(0, {**result["cases"][6]})  # a blocked case first in configuration order
    result["cases"][0]["case_id"] = "blocked-first"
    page = render_html([result], generated_at=FIXED_TIME)
    assert page.index('<section id="cases">') < page.index('<section id="gates">')
    rows = _case_rows(page)
    assert [r["status"] for r in rows] == ["failed", "failed", "blocked", "blocked"]
    assert rows[0] == {
        "status": "failed",
        "stage": "search",
        "suite": "search_core",
        "reason": "expected_target_absent",
        "case": "member-search-004",
    }
    cases = page.split('<section id="cases">', 1)[1].split("</section>", 1)[0]
    assert "what to inspect: " + html.escape(REASONS["expected_target_absent"].hint) in cases  # the cause
    assert "never ran:" in cases and "<details" not in cases  # not collapsed


def test_the_filter_works_without_a_server_and_the_page_without_scripts() -> None:
    page = render_html([samples.result()], generated_at=FIXED_TIME)
    # scripts off: the filter form stays hidden and every row is shown
    assert '<form id="case-filter" class="filter" hidden>' in page
    table = page.split('<table id="case-table">', 1)[1].split("</table>", 1)[0]
    assert " hidden" not in table
    for name in ("status", "stage", "suite", "reason"):
        assert f'<select name="{name}">' in page
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the filter script itself is not run")
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    assert script is not None
    rows = _case_rows(page)
    # the script against a small stand-in for the DOM: the form, the rows' data-* attributes, the counter
    harness = (
        "const rows=" + json.dumps(rows) + ".map(d=>({dataset:d,hidden:false}));"
        "const selects=['status','stage','suite','reason'].map(n=>({name:n,value:''}));"
        "let onchange=null;const form={hidden:true,querySelectorAll:()=>selects,"
        "addEventListener:(e,f)=>{onchange=f}};const counter={textContent:''};"
        "globalThis.document={getElementById:i=>({'case-filter':form,'case-shown':counter})[i],"
        "querySelectorAll:()=>rows};"
        + script.group(1)
        + "selects[0].value='failed';onchange();const a=rows.map(r=>r.hidden);const ta=counter.textContent;"
        "selects[0].value='';selects[2].value='plan_e2e';onchange();"
        "console.log(JSON.stringify({form:form.hidden,a,ta,b:rows.map(r=>r.hidden),tb:counter.textContent}))"
    )
    done = subprocess.run([node, "-e", harness], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["form"] is False  # the script shows the filter
    assert seen["a"] == [r["status"] != "failed" for r in rows] and seen["ta"] == f"2 of {len(rows)} shown"
    assert seen["b"] == [r["suite"] != "plan_e2e" for r in rows]


def test_blocked_cases_are_no_failure_class() -> None:
    result = samples.result()
    template = result["cases"][6]
    result["cases"] += [{**template, "case_id": f"b{i}"} for i in range(20)]
    page = render_html([result], generated_at=FIXED_TIME)
    failures = page.split('<section id="failures">', 1)[1].split("</section>", 1)[0]
    assert "blocked_by_stage" not in failures.split("<p><b>Never ran</b>", 1)[1].split("</p>", 1)[1]
    assert "21 case(s) blocked by stage at plan" in failures


def test_scorecard_shows_null_dimensions_as_no_data() -> None:
    page = render_html([samples.result()], generated_at=FIXED_TIME)
    scorecard = page.split('<section id="scorecard">', 1)[1].split("</section>", 1)[0]
    assert scorecard.count(">no data<") == 4
    assert "citation_quality, cost_efficiency, retry_recovery, human_acceptance" in scorecard


def test_two_results_add_the_promotion_diff_and_trends() -> None:
    page = render_html([samples.result(), samples.fixed_result()], generated_at=FIXED_TIME)
    sections = _parse(page).sections
    assert "promotion" in sections and "trends" in sections
    diff = page.split('<section id="promotion">', 1)[1].split("</section>", 1)[0]
    for kind in ("regressed", "fixed", "still failing", "new passing", "removed"):
        assert f">{kind}</span>" in diff
    assert "member-search-002" in diff  # the regression, with its reason
    assert "+0.5" in diff  # plan hit rate 0.5 -> 1.0


def test_baseline_option_compares_against_it_and_starts_the_series() -> None:
    page = render_html([samples.fixed_result()], baseline=samples.result(), generated_at=FIXED_TIME)
    assert "Trends over 2 runs" in page
    runs = page.split('<section id="promotion">', 1)[1].split("</table>", 1)[0]
    assert runs.index("run-1") < runs.index("run-2")


def test_a_series_plots_one_chart_per_metric() -> None:
    series = [samples.result(f"run-{i}") for i in range(5)]
    page = render_html(series, generated_at=FIXED_TIME)
    trends = page.split('<section id="trends">', 1)[1].split("</section>", 1)[0]
    assert "Trends over 5 runs" in page
    assert trends.count("<figure>") == 12  # 5 metrics with data + pass rate + 6 scorecard dims with data


def test_every_artifact_string_is_escaped() -> None:
    evil = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>"
    result = samples.result()
    result["project"] = evil
    result["cases"][3]["case_id"] = evil
    result["cases"][3]["failure"]["message"] = evil
    result["cases"][3]["failure"]["reason"] = evil
    result["gates"][0]["name"] = evil
    result["suites"][evil] = {"mode": evil}
    result["decision"]["reasons"] = [evil]
    result["fingerprint"][evil] = evil
    page = render_html([result, samples.fixed_result()], generated_at=FIXED_TIME)
    assert page.count("<script") == 1 and "<script>alert" not in page  # only the filter's own
    assert "<img" not in page
    assert "&lt;script&gt;" in page
    _parse(page)


def test_a_minimal_or_partial_artifact_still_renders() -> None:
    page = render_html([{}], generated_at=FIXED_TIME)
    _parse(page)
    assert "UNKNOWN" in page
    assert "No case in this result has a search object." in page
    page = render_html(
        [{"cases": "oops", "gates": [1, None], "metrics": [], "scorecard": "x"}], generated_at=FIXED_TIME
    )
    _parse(page)


def test_render_html_needs_a_result() -> None:
    with pytest.raises(ValueError, match="at least one result"):
        render_html([])


def test_long_case_lists_are_capped_with_a_note() -> None:
    result = samples.result()
    template = result["cases"][3]
    result["cases"] = [{**template, "case_id": f"c{i}"} for i in range(1200)]
    page = render_html([result], generated_at=FIXED_TIME)
    assert "700 more rows are not shown" in page


# --------------------------------------------------------------------------------------------- real browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _chromium_args(tmp_path: Path) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]


@pytest.mark.slow
def test_a_real_headless_chromium_renders_the_report(tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    page = tmp_path / "report.html"
    page.write_text(render_html([samples.result(), samples.fixed_result()], generated_at=FIXED_TIME), "utf-8")
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [
            browser,
            *_chromium_args(tmp_path),
            f"--screenshot={shot}",
            "--window-size=1280,2000",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.exists(), done.stderr.decode(errors="replace")[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2000)
    assert len(data) > 50_000, "a page full of tables and charts compresses to far more than a blank one"

    # the browser's own DOM: every chart became an SVG element and no section was lost
    dom = subprocess.run(
        [browser, *_chromium_args(tmp_path), "--dump-dom", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    ).stdout.decode(errors="replace")
    assert (
        dom.count("<svg") == page.read_text(encoding="utf-8").count("<svg") == 4 + 12
    )  # 4 run charts + 12 trends
    for anchor in ("gates", "hitk", "scorecard", "promotion", "trends"):
        assert f'id="{anchor}"' in dom


def test_the_hand_written_artifacts_follow_the_result_schema() -> None:
    """The samples these tests render are real-shaped: they validate against schemas/result.schema.json."""
    validator = jsonschema.Draft7Validator(load_schema("result"))
    for artifact in (samples.full(samples.result()), samples.full(samples.fixed_result())):
        assert [e.message for e in validator.iter_errors(artifact)] == []


def test_merged_shard_advisory_and_provenance_are_shown() -> None:
    result = samples.full(samples.result())
    result["shard"] = {"index": 1, "total": 3, "selection_fingerprint": "x", "merged_from": ["a", "b", "c"]}
    result["decision"]["advisory"] = True
    result["gates"][1]["thresholds"][0]["gating"] = False
    page = render_html([result], generated_at=FIXED_TIME)
    assert "merged from 3 shards" in page
    assert "advisory (--exit-zero)" in page
    assert "(not gating)" in page
    assert "gates/search_core/cases.yaml" in page  # the dataset behind the claim
    metrics = page.split('<section id="metrics">', 1)[1].split("</section>", 1)[0]
    assert "<td>flow</td><td>0.667</td><td>6</td><td>4</td><td>2</td>" in metrics

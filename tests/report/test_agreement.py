"""Every output tells the same story: for one scenario run unsharded and as 1, 2 and 3 merged shards (pass,
blocked, hostile text), result.json, JUnit (both XSDs and junitparser), the summary, the annotations and the
HTML report count the same cases the same way."""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path
from typing import Any

import junitparser
import pytest
import xmlschema

from qlab.report import derive, github, junit, markdown
from qlab.report.html import render_html
from run import story

CI = Path(__file__).resolve().parents[1] / "data" / "ci"  # the JUnit XSDs the tests carry
WAYS = ("unsharded", *story.SHARDS)


@pytest.fixture(scope="module")
def schemas() -> list[xmlschema.XMLSchema]:
    names = ("jenkins-xunit-junit-10.xsd", "windyroad-JUnit.xsd")
    return [xmlschema.XMLSchema(str(CI / n)) for n in names]


def _artifact(scenario: str, way: str | int) -> dict[str, Any]:
    told = story.story(scenario)
    return told.whole if way == "unsharded" else told.merged[int(way)]


def _expected(artifact: dict[str, Any]) -> dict[str, int]:
    counts = derive.status_counts(artifact)
    suites = artifact["suites"]
    failing = [c for c in artifact["cases"] if c["status"] in ("failed", "error")]
    gating = [c for c in failing if not c.get("flaky") and suites[c["suite"]]["required"]]
    return {**counts, "gating": len(gating), "not_gating": len(failing) - len(gating)}


def _junit(artifact: dict[str, Any], schemas: list[xmlschema.XMLSchema], tmp_path: Path) -> dict[str, int]:
    xml = junit.render(artifact, hostname="ci")
    for schema in schemas:
        schema.validate(xml)
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")
    seen: Counter[str] = Counter()
    not_gating = 0
    for suite in junitparser.JUnitXml.fromfile(str(path)):
        if not suite.name.startswith("suite."):
            continue
        props = {p.name: p.value for p in suite.properties()}
        names = [n for n in (props.get("qlab.non_gating") or "").split(", ") if n]
        not_gating += len(names)
        for case in suite:
            kinds = [type(r).__name__ for r in case.result]
            seen[kinds[0] if kinds else "Passed"] += 1
            if names and case.name in names:
                assert case.result[0].message.startswith("does not gate (")
    return {
        "passed": seen["Passed"],
        "failed": seen["Failure"],
        "error": seen["Error"],
        "never_ran": seen["Skipped"],
        "not_gating": not_gating,
    }


def _summary(artifact: dict[str, Any]) -> dict[str, int]:
    text = markdown.render(artifact)
    found = re.search(r"\*\*Cases:\*\* (\d+) — (.+?)(?: \((\d+) of the failures do not gate\))?$", text, re.M)
    assert found is not None, text[:500]
    counts = {status: int(n) for n, status in re.findall(r"(\d+) (\w+)", found.group(2))}
    failing = re.search(r"### Failing cases \((\d+)\)", text)
    return {
        **counts,
        "total": int(found.group(1)),
        "gating": int(failing.group(1)) if failing else 0,
        "not_gating": int(found.group(3) or 0),
    }


def _annotations(artifact: dict[str, Any]) -> dict[str, int]:
    lines = github.annotation_lines(artifact, limit=10_000)
    for line in lines:  # one workflow command per line, whatever the text held
        assert "\n" not in line and "\r" not in line and re.match(r"^::(error|warning|notice) ", line), line
    cases = [line for line in lines if ",title=qlab " in line or "title=qlab " in line.split("::", 2)[1]]
    per_case = [line for line in cases if "title=qlab gate" not in line and "title=qlab check" not in line]
    return {
        "gating": sum(line.startswith("::error ") for line in per_case),
        "not_gating": sum(line.startswith("::warning ") for line in per_case),
    }


def _html(artifact: dict[str, Any]) -> dict[str, int]:
    page = render_html([artifact])
    tiles = dict(
        (label, int(n)) for n, label in re.findall(r'<div class="num">(\d+)</div><div>([a-z]+)</div>', page)
    )
    table = (
        page.split('<table id="case-table">', 1)[1].split("</table>", 1)[0] if "case-table" in page else ""
    )
    rows = Counter(re.findall(r'<tr data-status="(\w+)"', table))
    assert "<script>alert" not in page and page.count("<script") == 1
    return {
        **tiles,
        "rows_failed": rows["failed"],
        "rows_error": rows["error"],
        "rows_blocked": rows["blocked"],
    }


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_every_output_counts_the_same_cases(
    scenario: str, way: str | int, schemas: list[xmlschema.XMLSchema], tmp_path: Path
) -> None:
    artifact = _artifact(scenario, way)
    want = _expected(artifact)
    assert sum(want[s] for s in derive.STATUSES) == len(artifact["cases"]) > 0

    assert _junit(artifact, schemas, tmp_path) == {
        "passed": want["passed"],
        "failed": want["failed"],
        "error": want["error"],
        "never_ran": want["blocked"] + want["skipped"],
        "not_gating": want["not_gating"],
    }
    summary = _summary(artifact)
    assert {s: summary[s] for s in derive.STATUSES} == {s: want[s] for s in derive.STATUSES}
    assert (summary["total"], summary["gating"], summary["not_gating"]) == (
        len(artifact["cases"]),
        want["gating"],
        want["not_gating"],
    )
    assert _annotations(artifact) == {"gating": want["gating"], "not_gating": want["not_gating"]}
    page = _html(artifact)
    assert (
        page["cases"],
        page["passed"],
        page["failed"],
        page["errors"],
        page["blocked"],
        page["skipped"],
    ) == (
        len(artifact["cases"]),
        want["passed"],
        want["failed"],
        want["error"],
        want["blocked"],
        want["skipped"],
    )
    assert (page["rows_failed"], page["rows_error"], page["rows_blocked"]) == (
        want["failed"],
        want["error"],
        want["blocked"],
    )


def test_the_scenarios_cover_what_they_say() -> None:
    """pass has a non-gating failure and no block; blocked and hostile block at search; hostile text survives
    into every output escaped, never as markup or as a workflow command."""
    passed = story.story("pass").whole
    assert passed["decision"]["verdict"] == "pass" and _expected(passed)["not_gating"] >= 2
    for name in ("blocked", "hostile"):
        whole = story.story(name).whole
        assert whole["decision"]["verdict"] == "block" and _expected(whole)["blocked"] > 0
    hostile = story.story("hostile").merged[3]
    message = next(c for c in hostile["cases"] if c["case_id"] == "s04")["failure"]["message"]
    assert "<script>" in message and "::error" in message
    assert html.escape("<script>alert") in render_html([hostile]).replace("&#x27;", "'")
    assert "%0A::warning::y" in "\n".join(github.annotation_lines(hostile))

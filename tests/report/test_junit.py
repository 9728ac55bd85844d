"""JUnit XML: valid against both XSDs in ../shared/ci, parsed by junitparser, escaping, caps, uniqueness."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import junitparser
import pytest
import xmlschema

import artifact_samples as samples
from qlab.report import junit

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT.parent / "shared" / "ci"
GOLDEN = Path(__file__).parent / "golden" / "junit.xml"
XSDS = ("jenkins-xunit-junit-10.xsd", "windyroad-JUnit.xsd")


@pytest.fixture(scope="module", params=XSDS)
def schema(request: pytest.FixtureRequest) -> xmlschema.XMLSchema:
    path = CI / request.param
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared CI schemas sit beside the repository)")
    return xmlschema.XMLSchema(str(path))


def _artifact() -> dict[str, Any]:
    art = samples.result()
    art["prerun"] = [
        {"guard": "config_valid", "stage": "pre-run", "passed": True, "mode": "block", "message": "ok"}
    ]
    art["cases"][3]["failure"]["message"] = "\x1b[31mred\x1b[0m and a NUL \x00 and bell \x07 — ünïcode"
    art["cases"].append({**copy.deepcopy(art["cases"][0]), "case_id": "flaky-1", "status": "failed", "flaky": True,
                         "failure": {"stage": "search", "reason": "expected_target_absent", "message": "x"}})  # fmt: skip
    return art


def test_validates_against_both_xsds(schema: xmlschema.XMLSchema, tmp_path: Path) -> None:
    xml = junit.render(_artifact(), hostname="ci-host")
    schema.validate(xml)
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")
    parsed = junitparser.JUnitXml.fromfile(str(path))
    outcomes = {}
    for suite in parsed:
        for case in suite:
            outcomes[(case.classname, case.name)] = [type(r).__name__ for r in case.result]
    assert outcomes[("qlab.search_core", "member-search-004")] == ["Failure"]
    assert outcomes[("qlab.execute_read", "member-exec-001")] == ["Skipped"]  # blocked
    # a failure that does not gate is still a failure (hidden as skipped it would vanish from every dashboard);
    # its message says so and its suite's qlab.non_gating property names it
    assert outcomes[("qlab.search_core", "flaky-1")] == ["Failure"]
    suite = next(s for s in parsed if s.name == "suite.search_core")
    props = {p.name: p.value for p in suite.properties()}
    assert props["qlab.non_gating"] == "flaky-1"
    flaky = next(c for c in suite if c.name == "flaky-1")
    assert flaky.result[0].message.startswith("does not gate (flaky case): search: expected_target_absent")
    # no property says "null": a value with no data is left out
    assert all(p.value != "null" for s in parsed for p in s.properties())
    assert outcomes[("qlab", "decision")] == ["Failure"]
    assert outcomes[("qlab.gate.plan", "verdict")] == ["Failure"]
    assert outcomes[("qlab.gate.search", "verdict")] == []


def test_golden(schema: xmlschema.XMLSchema) -> None:
    """A fixed artifact (golden/result.json) renders byte for byte to golden/junit.xml, valid against both XSDs."""
    artifact = json.loads((GOLDEN.parent / "result.json").read_text(encoding="utf-8"))
    xml = junit.render(artifact, hostname="ci-host")
    assert xml == GOLDEN.read_text(encoding="utf-8")
    schema.validate(xml)


def test_illegal_characters_stay_visible() -> None:
    assert junit.xml_text("a\x1b[31mred\x1b[0m\x00b\x07\ud800c") == "ared#x00b#x07#xD800c"
    xml = junit.render(_artifact(), hostname="h")
    ET.fromstring(xml)  # well-formed
    assert "red and a NUL #x00 and bell #x07 — ünïcode" in xml


def test_message_in_attribute_and_text_times_three_decimals() -> None:
    root = ET.fromstring(junit.render(_artifact(), hostname="h"))
    failure = root.find(".//testcase[@name='member-search-004']/failure")
    assert failure is not None and failure.get("type") == "expected_target_absent"
    assert failure.get("message", "").startswith("search: expected_target_absent:")
    assert (failure.text or "").startswith(failure.get("message", ""))
    assert "hint: Check the tool's summary" in (failure.text or "")
    for element in root.iter():
        if "time" in element.attrib:
            whole, _, frac = element.get("time", "").partition(".")
            assert whole.isdigit() and len(frac) == 3


def test_names_unique_and_never_empty() -> None:
    empty = {"decision": {"verdict": "pass", "reasons": [], "exit_code": 0}, "cases": [], "gates": []}
    root = ET.fromstring(junit.render(empty, hostname="h"))
    assert [c.get("name") for c in root.iter("testcase")] == ["decision"]
    art = _artifact()
    art["gates"][0]["guards"] = [
        {"guard": "scrub", "stage": "search", "passed": True, "mode": "block", "message": ""}
    ] * 2
    names = list(junit.names(junit.render(art, hostname="h")))
    assert len(names) == len(set(names))
    assert ("qlab.gate.search", "scrub [search] #2") in names


def test_case_text_is_capped_head_and_tail() -> None:
    art = _artifact()
    art["cases"][3]["failure"]["message"] = "A" * 50_000 + "B" * 50_000
    xml = junit.render(art, hostname="h")
    text = ET.fromstring(xml).find(".//testcase[@name='member-search-004']/failure").text or ""  # type: ignore[union-attr]
    assert len(text) < junit.MAX_CASE_TEXT + 200
    assert text.startswith("search: expected_target_absent: AAA")
    assert "[truncated " in text and "B" * 100 in text
    assert junit.cap("x" * 10, 4) == "xx\n[truncated 6 chars]\nxx"


@pytest.mark.parametrize(
    "name",
    [
        "plain-1",
        'a&b<c>d"e',
        "tab\there",
        "cr\r\nlf",
        "é ü 名前",
        "\x1b[31mred\x1b[0m",
        "nul\x00bell\x07",
        "a'b",
    ],
)
def test_a_passed_testcase_is_written_as_elementtree_writes_it(name: str) -> None:
    """Passed testcases are formatted directly (see _Suite); the text is what ElementTree gives."""
    report = junit._Report({}, "host")
    suite = report.suite("s", {})
    suite.case(f"qlab.{name}", name, ms=1.5)
    attrs = {"name": junit.xml_text(name), "classname": junit.xml_text(f"qlab.{name}"), "time": "0.002"}
    assert list(suite.texts()) == [ET.tostring(ET.Element("testcase", attrs), encoding="unicode")]


def _elementtree_case(name: str, outcome: str, kind: str, message: str, text: str) -> str:
    """A testcase with an outcome child as ElementTree writes it (the oracle of the direct formatting)."""
    element = ET.Element(
        "testcase",
        {"name": junit.xml_text(name), "classname": junit.xml_text(f"qlab.{name}"), "time": "0.002"},
    )
    attrs = {"message": junit.xml_text(message)}
    if outcome != "skipped":
        attrs["type"] = junit.xml_text(kind or outcome)
    child = ET.SubElement(element, outcome, attrs)
    child.text = junit.xml_text(junit.cap(f"{message}\n{text}".strip() if text else message))
    ET.indent(element, space=" ", level=junit.CASE_LEVEL)
    return ET.tostring(element, encoding="unicode")


@pytest.mark.parametrize("outcome", ["failure", "error", "skipped"])
@pytest.mark.parametrize(
    ("message", "text"),
    [
        ("search: expected_target_absent: x is at rank 7", 'search: {"rows": [1, 2]}'),
        ('a&b<c>d"e\ttab\r\nline', "more & <text> ]]> here"),
        ("", ""),
        ("", "only text"),
        ("  padded  ", "\n"),
        ("\x1b[31mred\x1b[0m nul\x00 é 名前", "x" * (junit.MAX_CASE_TEXT + 10)),
    ],
)
def test_a_testcase_with_an_outcome_is_written_as_elementtree_writes_it(
    outcome: str, message: str, text: str
) -> None:
    suite = junit._Report({}, "host").suite("s", {})
    suite.case(
        "qlab.c&<1>",
        "c&<1>",
        ms=1.5,
        outcome=outcome,
        kind="" if text == "\n" else "k<&>",
        message=message,
        text=text,
    )
    kind = "" if text == "\n" else "k<&>"
    assert list(suite.texts()) == [_elementtree_case("c&<1>", outcome, kind, message, text)]


def test_a_stage_objects_json_text_members_are_written_as_kept() -> None:
    from qlab.results import EncodedJSON

    rows = [{"tool_id": "b", "rank": 1, "score": 2.5}]
    obj = {"top_k": 5, "rows": EncodedJSON.of(rows), "hit": False, "query_terms": ["x"]}
    text = junit._object_text(obj)
    assert (
        text
        == '{"hit": false, "query_terms": ["x"], "rows": [{"tool_id":"b","rank":1,"score":2.5}], "top_k": 5}'
    )
    assert json.loads(text) == {**obj, "rows": rows}
    tricky = {**obj, "note": junit._HOLE}  # the placeholder in a value: written plainly
    assert json.loads(junit._object_text(tricky)) == {**tricky, "rows": rows}


@pytest.mark.parametrize(
    "text",
    ["plain", "two\nlines\ttab", "é ü 名前\n", "\x1b[31mred\x1b[0m\n", "nul\x00\n", "\ufffe\n", "a\r\nb"],
)
def test_xml_text_is_the_two_substitutions(text: str) -> None:
    assert junit.xml_text(text) == junit._ILLEGAL.sub(
        lambda m: f"#x{ord(m.group()):02X}", junit._ANSI.sub("", text)
    )

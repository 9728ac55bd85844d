"""JUnit XML: valid against both XSDs in tests/data/ci, parsed by junitparser, escaping, caps, uniqueness."""

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
from qlab.engine.types import SearchRow
from qlab.report import junit

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "tests" / "data" / "ci"  # the JUnit XSDs the tests carry (SOURCE.md there)
GOLDEN = Path(__file__).parent / "golden" / "junit.xml"
XSDS = ("jenkins-xunit-junit-10.xsd", "windyroad-JUnit.xsd")


@pytest.fixture(scope="module", params=XSDS)
def schema(request: pytest.FixtureRequest) -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(CI / request.param))


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
    root = ET.fromstring(junit.render(art, hostname="h"))
    names = [(c.get("classname", ""), c.get("name", "")) for c in root.iter("testcase")]
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
    """The writer's escaping is ElementTree's: the same bytes for the same testcase; a second testcase of the same
    name and class is renamed."""
    suite = junit._Report({}).suite("s", {})
    suite.case(f"qlab.{name}", name, ms=1.5)
    suite.case(f"qlab.{name}", name, ms=1.5)
    attrs = {"name": junit.xml_text(name), "classname": junit.xml_text(f"qlab.{name}"), "time": "0.002"}
    expected = ET.tostring(ET.Element("testcase", attrs), encoding="unicode")
    again = ET.tostring(
        ET.Element("testcase", {**attrs, "name": junit.xml_text(name) + " #2"}), encoding="unicode"
    )
    assert [case.xml() for case in suite.testcases] == [expected, again]


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
        ("  padded  ", ""),  # no text: the message as it is, never stripped
        ("\x1b[31mred\x1b[0m nul\x00 é 名前", "x" * (junit.MAX_CASE_TEXT + 10)),
    ],
)
def test_a_testcase_with_an_outcome_is_written_as_elementtree_writes_it(
    outcome: str, message: str, text: str
) -> None:
    suite = junit._Report({}).suite("s", {})
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
    assert [case.xml() for case in suite.testcases] == [
        _elementtree_case("c&<1>", outcome, kind, message, text)
    ]


def test_a_stage_object_s_search_rows_are_written_as_sorted_json_objects() -> None:
    row = SearchRow("b", 1, 2.5)
    obj = {"top_k": 5, "rows": (row,), "hit": False, "query_terms": ["x"]}
    text = junit._object_text(obj)
    assert text == (
        '{"hit": false, "query_terms": ["x"], "rows": [{"corrections": {}, "field_scores": {}, "matched_terms": [], '
        '"rank": 1, "score": 2.5, "tool_id": "b"}], "top_k": 5}'
    )
    assert json.loads(text) == {**obj, "rows": [row.to_dict()]}


@pytest.mark.parametrize(
    "text",
    ["plain", "two\nlines\ttab", "é ü 名前\n", "\x1b[31mred\x1b[0m\n", "nul\x00\n", "\ufffe\n", "a\r\nb"],
)
def test_xml_text_is_the_two_substitutions(text: str) -> None:
    assert junit.xml_text(text) == junit._ILLEGAL.sub(
        lambda m: f"#x{ord(m.group()):02X}", junit._ANSI.sub("", text)
    )


# ----------------------------------------------------------------------------------- escaping and texts at their edges

NASTY = "a \"quoted\" <tag> & 'apos'\r\n\ttab \x1b[1mbold\x1b[0m \x00 \ud800 é 日本"


def _one_case(**case: Any) -> dict[str, Any]:
    base = {
        "case_id": "c1",
        "suite": "s",
        "mode": "search",
        "status": "failed",
        "latency_ms": {"search": 1234.5678},
    }
    return {"run_id": "r", "started_at": "2026-12-01T10:00:00.123Z", "cases": [{**base, **case}],
            "suites": {"s": {"mode": "search"}}, "decision": {"verdict": "block"}}  # fmt: skip


def _testcase(xml: str, name: str = "c1") -> ET.Element:
    found = ET.fromstring(xml).find(f".//testcase[@name='{name}']")
    assert found is not None
    return found


def test_any_text_survives_attribute_and_element_escaping() -> None:
    """Rule: whatever a message holds, the XML is well formed and a reader gets the text back — quotes, &, <, >,
    CR/LF/TAB in attributes kept, colour codes dropped, characters XML forbids shown as #xNN."""
    failure = {"stage": "search", "reason": "expected_target_absent", "message": NASTY}
    child = _testcase(junit.render(_one_case(failure=failure), hostname="h")).find("failure")
    assert child is not None
    shown = "a \"quoted\" <tag> & 'apos'\r\n\ttab bold #x00 #xD800 é 日本"
    assert child.get("message") == f"search: expected_target_absent: {shown}"
    assert (child.text or "").startswith(f"search: expected_target_absent: {shown}".replace("\r\n", "\n"))


@pytest.mark.parametrize(
    ("text", "shown"),
    [("plain", "plain"), ("line\nbreak", "line\nbreak"), ("\x1b[31mred\x1b[0m\nnext", "red\nnext"),
     ("\x1b]0;title\x07x", "x"), ("tab\there", "tab\there"), ("bell\x07", "bell#x07"), ("é\x0c", "é#x0C")],
)  # fmt: skip
def test_xml_text(text: str, shown: str) -> None:
    assert junit.xml_text(text) == shown


def test_cap_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    assert junit.cap("x" * 10, 10) == "x" * 10  # at the limit: nothing cut
    assert junit.cap("abcdefghijk", 10) == "abcde\n[truncated 1 chars]\nghijk"
    assert junit.cap("abcdefghijkl", 11) == "abcde\n[truncated 2 chars]\nhijkl"


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (1234.5678, "1.235"),
        (None, "0.000"),
        (-5, "0.000"),
        ("12", "0.012"),
        ("abc", "0.000"),
        (object(), "0.000"),
    ],
)
def test_seconds(ms: Any, text: str) -> None:
    assert junit.seconds(ms) == text


def test_case_text_says_how_to_fix_where_and_what_the_stage_saw() -> None:
    failure = {"stage": "select", "reason": "wrong_target_selected", "message": "picked getB"}
    case = _one_case(
        status="failed", failure=failure, file="gates/s.yaml", line=7,
        assertions=[{"type": "http_status", "passed": True}, {"type": "json_path_exists", "passed": False, "message": "no $.id"},
                    {"type": "latency_ms_below", "passed": False}],
        target_selector={"selected_target": "getB", "llm_target": None, "reason_codes": ["selected_top_rank"]},
    )  # fmt: skip
    text = _testcase(junit.render(case, hostname="h")).find("failure").text  # type: ignore[union-attr]
    from qlab.contracts.reasons import hint

    assert text == "\n".join([
        "select: wrong_target_selected: picked getB",
        f"hint: {hint('wrong_target_selected')}",
        "assertion json_path_exists: no $.id",
        "assertion latency_ms_below: ",
        "at gates/s.yaml:7",
        'target_selector: {"llm_target": null, "reason_codes": ["selected_top_rank"], "selected_target": "getB"}',
    ])  # fmt: skip
    no_line = _one_case(
        failure={"stage": "search", "reason": "made_up"}, file="f.yaml", search={"b": 1, "a": 2}
    )
    assert _testcase(junit.render(no_line, hostname="h")).find("failure").text == (  # type: ignore[union-attr]
        'search: made_up\nat f.yaml:0\nsearch: {"a": 2, "b": 1}'
    )


def test_a_failed_search_case_s_text_holds_its_rows() -> None:
    search = {"hit": False, "rows": (SearchRow("t", 1, 1.0),), "top_k": 5}
    case = _one_case(failure={"stage": "search", "reason": "expected_target_absent"}, search=search)
    text = _testcase(junit.render(case, hostname="h")).find("failure").text  # type: ignore[union-attr]
    assert text.endswith(
        'search: {"hit": false, "rows": [{"corrections": {}, "field_scores": {}, "matched_terms": [], "rank": 1, '
        '"score": 1.0, "tool_id": "t"}], "top_k": 5}'
    )


def test_suite_attributes_properties_and_time() -> None:
    case = _one_case(status="passed")
    case["cases"].append({"case_id": "r1", "suite": "s", "status": "passed", "attempts": 3, "passes": 2})
    case["suites"]["s"]["metrics"] = {"hit_at_k": 0.123456789, "n": {"deep": [2, 1]}, "map": {"b": 1, "a": 2}}
    root = ET.fromstring(junit.render(case, hostname="ci-1"))
    suite = root.find("testsuite[@name='suite.s']")
    assert suite is not None
    assert (suite.get("hostname"), suite.get("timestamp"), suite.get("time")) == (
        "ci-1",
        "2026-12-01T10:00:00",
        "1.235",
    )
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["metric.hit_at_k"] == "0.123457" and props["metric.n.deep"] == "[2, 1]"
    assert (props["metric.map.a"], props["metric.map.b"]) == ("2", "1")
    assert props["suite.flaky_passed"] == "r1 2/3"
    assert [(e.tag, e.text) for e in suite if e.tag.startswith("system")] == [
        ("system-out", None),
        ("system-err", None),
    ]
    assert junit.render(case, hostname="h").count("<system-out />") == len(root)


def test_the_hostname_falls_back_to_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert {s.get("hostname") for s in ET.fromstring(junit.render(_one_case(status="passed")))} == {
        "localhost"
    }

    def refuse() -> str:
        raise OSError("no name")

    monkeypatch.setattr(socket, "gethostname", refuse)
    assert {s.get("hostname") for s in ET.fromstring(junit.render(_one_case(status="passed")))} == {
        "localhost"
    }
    monkeypatch.setattr(socket, "gethostname", lambda: "runner-7")
    assert {s.get("hostname") for s in ET.fromstring(junit.render(_one_case(status="passed")))} == {
        "runner-7"
    }


def test_a_suite_that_does_not_say_required_gates() -> None:
    """A failing case of a suite without ``required`` is a failure of the run, not a note."""
    xml = junit.render(
        _one_case(failure={"stage": "search", "reason": "expected_target_absent", "message": "m"}),
        hostname="h",
    )
    child = _testcase(xml).find("failure")
    assert child is not None and not child.get("message", "").startswith("does not gate")


@pytest.mark.parametrize(
    ("iso", "stamp"),
    [
        ("2026-12-01T10:00:00Z", "2026-12-01T10:00:00"),
        ("2026-12-01T10:00:00.5+00:00", "2026-12-01T10:00:00"),
        ("", "1970-01-01T00:00:00"),
        ("yesterday", "1970-01-01T00:00:00"),
    ],
)
def test_timestamps(iso: str, stamp: str) -> None:
    root = ET.fromstring(junit.render({**_one_case(status="passed"), "started_at": iso}, hostname="h"))
    assert {s.get("timestamp") for s in root} == {stamp}


# --------------------------------------------------------------------------- every branch, byte for byte

EVERY_BRANCH = GOLDEN.parent / "every-branch.json"


def test_every_branch_golden(schema: xmlschema.XMLSchema) -> None:
    """Rule: every outcome a report can hold renders byte for byte as golden/every-branch.xml, valid against
    both XSDs — the run's properties (fingerprint, shard, nested and list metrics, scorecard; no null), a failed
    pre-run check as an error and a warn-mode one as a non-gating failure, an ERROR decision with its reasons;
    a blocked gate with each threshold kind (gating, required: false, not gating, passed, no data), a gating and
    a non-gating stop, passed/failed/warn guards; an error gate, a shard's deferred threshold, skipped gates with
    and without reasons; cases passed, flaky-passed, blocked, skipped, errored, flaky, draft, in a suite that is
    not required, in a suite with no cases, and in a suite the artifact does not list."""
    artifact = json.loads(EVERY_BRANCH.read_text(encoding="utf-8"))
    xml = junit.render(artifact, hostname="ci-host")
    assert xml == EVERY_BRANCH.with_suffix(".xml").read_text(encoding="utf-8")
    schema.validate(xml)


def test_a_passing_decision_takes_the_runs_duration() -> None:
    artifact = json.loads(EVERY_BRANCH.read_text(encoding="utf-8"))
    artifact["decision"] = {"verdict": "pass", "reasons": [], "exit_code": 0}
    decision = ET.fromstring(junit.render(artifact, hostname="h")).find(".//testcase[@name='decision']")
    assert decision is not None and decision.attrib == {
        "name": "decision",
        "classname": "qlab",
        "time": "1.234",
    }
    assert list(decision) == []


def test_the_case_suites_follow_a_case_list_that_grew() -> None:
    """Rule: each render reads the cases as they are then (a run renders twice over one list; a case appended in
    between is in the second report)."""
    artifact = json.loads(EVERY_BRANCH.read_text(encoding="utf-8"))
    first = junit.render(artifact, hostname="h")
    artifact["cases"].append({"case_id": "c-late", "suite": "optional", "status": "passed"})
    second = junit.render(artifact, hostname="h")
    assert (
        "c-late" not in first
        and '<testcase name="c-late" classname="qlab.optional" time="0.000" />' in second
    )


def test_a_stage_object_with_values_json_cannot_hold() -> None:
    """Rule: a stage object member JSON has no type for (a path, a date) is written as its text, beside search
    rows too — never a crash while writing the report."""
    from datetime import date
    from pathlib import PurePosixPath

    obj = {"where": PurePosixPath("/tmp/x"), "on": date(2026, 1, 2)}
    assert junit._object_text(obj) == '{"on": "2026-01-02", "where": "/tmp/x"}'
    rows = {**obj, "rows": [SearchRow("t", 1, 1.0)]}
    assert json.loads(junit._object_text(rows)) == {
        "on": "2026-01-02",
        "where": "/tmp/x",
        "rows": [SearchRow("t", 1, 1.0).to_dict()],
    }


def _as_elementtree_writes_it(xml: str) -> str:
    """The oracle: ``xml`` parsed and written back by ElementTree, indented by one space."""
    root = ET.fromstring(xml)
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def test_the_report_around_the_testcases_is_written_as_elementtree_writes_it() -> None:
    """The testsuites, their properties and system-out/err are what ElementTree writes for the same tree: a suite
    with properties, one without (``<properties />``), one with no testcases, one with escaped names, and a report
    with no suite at all."""
    artifact = json.loads(EVERY_BRANCH.read_text(encoding="utf-8"))
    full = junit.render(artifact, hostname='ci "host" & <co>')
    assert full == _as_elementtree_writes_it(full)
    report = junit._Report(_one_case(status="passed"))
    report.suite("bare\nsuite", {})
    report.suite("with <props>", {"qlab.a": 1.5, "qlab.b": None, 'q<&"\n': "x\ty"})
    report.suite("one case", {}).case("k", "c1")
    xml = "".join(report.xml("h"))
    assert "<properties />" in xml
    assert xml == _as_elementtree_writes_it(xml)
    assert "".join(junit._Report(_one_case(status="passed")).xml("h")) == _as_elementtree_writes_it(
        "<testsuites />"
    )
